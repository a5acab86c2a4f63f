//! Soft shadows of the virtual shapes on the desk (the marker plane, z = 0, world frame): a
//! shadow tells the eye that an object stands on a surface.
//!
//! **Method: planar projected footprints with an analytic soft edge.** Each lit shape's
//! silhouette (a box's corners; the circles that bound a sphere, a capsule or a cylinder; a
//! mesh's convex hull's vertices) is projected onto z = 0 along the overlay's light
//! ([`super::renderer`]'s light, the one that shades the shapes), and the convex hull of the
//! projected points is the shape's footprint (exact for the convex primitives, up to the
//! circles' sampling; a mesh's concavities are filled in). The footprint is drawn as a
//! quad on the desk whose fragment shader (`overlay.wgsl`, `fs_shadow`) computes the signed
//! distance to the polygon (the largest distance outside its edges' lines,
//! [`Footprint::edge_lines`]) and fades the darkening over a penumbra that widens with the
//! shape's height, as under a light of finite size.
//!
//! Why this and not the alternatives: kiss3d's shadow maps cost a full extra render per light
//! (on lavapipe, the software rasteriser of machines without a GPU, they dominated the frame)
//! and need a desk model to fall on; jittered flattened meshes need several passes per shape
//! and a stencil buffer to keep overlapping triangles from darkening twice, and kiss3d 0.47's
//! depth buffer has no stencil. A footprint is one quad per shape and 16 multiply-adds per
//! covered pixel, and it is soft by construction.
//!
//! Overlaps: footprints write `1 − darkening` into the image's alpha with `min` blending (two
//! shadows on one spot darken as much as the darker one, not twice), then one pass over the
//! footprints' area multiplies the colour by that alpha and resets it to 1
//! ([`MaterialKind::Darken`]), before the shapes are drawn. Phantoms (the real arm) are drawn before the footprints, so the arm
//! in front of a shadow is not darkened.

use super::camera::to_pose3;
use super::material::{MaterialKind, OverlayMaterial};
use super::overlay::{Overlay, Shading, ShapeInstance, VisualShape};
use kiss3d::glamx::{Vec2, Vec3};
use kiss3d::procedural::{IndexBuffer, RenderMesh};
use kiss3d::scene::SceneNode3d;
use nalgebra::{Isometry3, Point2, Point3, Vector3};

/// Most vertices of a footprint polygon (the shader's loop length).
pub const MAX_FOOTPRINT_VERTICES: usize = 16;
/// How much a shadow darkens the desk where it is full (a shape on the desk), in [0, 1].
pub const SHADOW_DARKENING: f32 = 0.65;
/// Height over which a shadow's darkening halves, metres: a shape high above the desk
/// casts a fainter shadow, as under a room's diffuse light.
pub const DARKENING_HALF_HEIGHT_M: f64 = 1.5;
/// Penumbra width of a shape on the desk, metres (keeps the edge from aliasing).
pub const PENUMBRA_MIN_M: f64 = 0.002;
/// Penumbra width per metre of height: a lamp about 2° across (a wider one would wash out
/// the shadows of the thin pendulums).
pub const PENUMBRA_PER_HEIGHT: f64 = 0.03;
/// Points sampled on each silhouette circle.
const CIRCLE_SAMPLES: usize = 12;

/// One shape's shadow on the desk: what the shader needs (see [`super::material`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Footprint {
    /// Convex polygon on the desk (world x, y, metres), counter-clockwise; a polygon with
    /// fewer vertices repeats its last one.
    pub vertices_in_desk: [[f32; 2]; MAX_FOOTPRINT_VERTICES],
    /// Darkening where the footprint is full, in [0, 1].
    pub darkening: f32,
    /// Width of the soft edge, metres.
    pub penumbra_m: f32,
    /// Lower corner of the area the footprint and its soft edge cover (world x, y).
    pub min_in_desk: Point2<f64>,
    /// Upper corner of that area.
    pub max_in_desk: Point2<f64>,
}

impl Footprint {
    /// The polygon's edges as outward lines `(nx, ny, c)`: a desk point p is `nx·x + ny·y − c`
    /// outside the edge's line (negative inside). The shader's signed distance is the largest
    /// of these: exact inside and along the edges, mitred (a little short) round the corners,
    /// at three operations per edge. Repeated vertices give lines that never count.
    pub fn edge_lines(&self) -> [[f32; 3]; MAX_FOOTPRINT_VERTICES] {
        let n = MAX_FOOTPRINT_VERTICES;
        std::array::from_fn(|i| {
            let [ax, ay] = self.vertices_in_desk[i];
            let [bx, by] = self.vertices_in_desk[(i + 1) % n];
            let (ex, ey) = (bx - ax, by - ay);
            let len = (ex * ex + ey * ey).sqrt();
            if len < 1e-7 {
                return [0.0, 0.0, NEVER_OUTSIDE];
            }
            // Counter-clockwise: the outward normal is the edge turned clockwise.
            let (nx, ny) = (ey / len, -ex / len);
            [nx, ny, nx * ax + ny * ay]
        })
    }
}

/// The `c` of an edge line that never counts (0·x + 0·y − c is far inside).
const NEVER_OUTSIDE: f32 = 1e9;

/// Points on `shape`'s surface whose projection along `light` bounds its shadow.
fn silhouette_points(shape: &ShapeInstance, light: &Vector3<f64>) -> Vec<Point3<f64>> {
    let pose = &shape.world_from_shape;
    // A circle of `radius` about `centre` (world) in the plane normal to `axis` (world).
    let circle = |centre: Point3<f64>, axis: Vector3<f64>, radius: f64| {
        let u = axis.cross(&Vector3::x()).try_normalize(1e-9);
        let u = u.unwrap_or_else(|| axis.cross(&Vector3::y()).normalize());
        let v = axis.normalize().cross(&u);
        (0..CIRCLE_SAMPLES).map(move |k| {
            let a = std::f64::consts::TAU * k as f64 / CIRCLE_SAMPLES as f64;
            centre + radius * (a.cos() * u + a.sin() * v)
        })
    };
    let along_z = |half: f64| {
        [
            pose * Point3::new(0.0, 0.0, -half),
            pose * Point3::new(0.0, 0.0, half),
        ]
    };
    match &shape.shape {
        &VisualShape::Box { size_m } => {
            let h = 0.5 * size_m;
            (0..8)
                .map(|i| {
                    let s = |bit: usize| if i & bit == 0 { -1.0 } else { 1.0 };
                    pose * Point3::new(s(1) * h.x, s(2) * h.y, s(4) * h.z)
                })
                .collect()
        }
        // A sphere's outline seen along the light is its great circle normal to the light.
        &VisualShape::Sphere { radius_m } => {
            circle(pose * Point3::origin(), *light, radius_m).collect()
        }
        &VisualShape::Capsule { radius_m, length_m } => along_z(0.5 * length_m)
            .into_iter()
            .flat_map(|c| circle(c, *light, radius_m))
            .collect(),
        &VisualShape::Cylinder { radius_m, length_m } => {
            let axis = pose.rotation * Vector3::z();
            along_z(0.5 * length_m)
                .into_iter()
                .flat_map(|c| circle(c, axis, radius_m))
                .collect()
        }
        // A mesh's shadow is its convex hull's: the hull's vertices, computed at load.
        VisualShape::Mesh(mesh) => mesh.hull_points_m.iter().map(|p| pose * p).collect(),
    }
}

/// The convex hull of `points`, counter-clockwise (Andrew's monotone chain).
fn convex_hull(mut points: Vec<Point2<f64>>) -> Vec<Point2<f64>> {
    points.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    points.dedup();
    if points.len() < 3 {
        return points;
    }
    let cross = |o: &Point2<f64>, a: &Point2<f64>, b: &Point2<f64>| {
        (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
    };
    let mut hull: Vec<Point2<f64>> = Vec::with_capacity(2 * points.len());
    for pass in 0..2 {
        let start = hull.len();
        let ordered: Box<dyn Iterator<Item = &Point2<f64>>> = if pass == 0 {
            Box::new(points.iter())
        } else {
            Box::new(points.iter().rev())
        };
        for p in ordered {
            while hull.len() >= start + 2
                && cross(&hull[hull.len() - 2], &hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(*p);
        }
        hull.pop();
    }
    hull
}

/// Drops the vertices that matter least (smallest triangle with their neighbours) until at
/// most `max` remain: the polygon stays convex and shrinks by a sliver.
fn simplify(mut polygon: Vec<Point2<f64>>, max: usize) -> Vec<Point2<f64>> {
    while polygon.len() > max {
        let n = polygon.len();
        let area = |i: usize| {
            let (a, b, c) = (polygon[(i + n - 1) % n], polygon[i], polygon[(i + 1) % n]);
            ((b - a).perp(&(c - a))).abs()
        };
        let least = (0..n)
            .min_by(|&i, &j| area(i).total_cmp(&area(j)))
            .unwrap_or(0);
        polygon.remove(least);
    }
    polygon
}

/// The shadow of `shape` on the desk under a light travelling along `light_travel_in_world`
/// (pointing down); `None` for a shape that casts none (flat markers and phantoms, a shape
/// wholly under the desk, a light that does not come from above, a degenerate outline).
pub fn footprint(shape: &ShapeInstance, light_travel_in_world: &Vector3<f64>) -> Option<Footprint> {
    let light = light_travel_in_world.try_normalize(1e-12)?;
    if shape.shading != Shading::Lit || light.z > -1e-3 {
        return None;
    }
    let points = silhouette_points(shape, &light);
    if points.iter().all(|p| p.z <= 0.0)
        || points
            .iter()
            .any(|p| !p.coords.iter().all(|x| x.is_finite()))
    {
        return None;
    }
    // Along the light down to z = 0; a part under the desk stays where it is.
    let on_desk = points
        .iter()
        .map(|p| {
            let q = p - light * (p.z.max(0.0) / light.z);
            Point2::new(q.x, q.y)
        })
        .collect();
    let polygon = simplify(convex_hull(on_desk), MAX_FOOTPRINT_VERTICES);
    if polygon.len() < 3 {
        return None;
    }
    let height_m = shape.world_from_shape.translation.vector.z.max(0.0);
    let penumbra_m = PENUMBRA_MIN_M + PENUMBRA_PER_HEIGHT * height_m;
    let darkening = f64::from(SHADOW_DARKENING) / (1.0 + height_m / DARKENING_HALF_HEIGHT_M);
    let mut vertices_in_desk = [[0.0f32; 2]; MAX_FOOTPRINT_VERTICES];
    for (i, v) in vertices_in_desk.iter_mut().enumerate() {
        let p = polygon[i.min(polygon.len() - 1)];
        *v = [p.x as f32, p.y as f32];
    }
    let margin = Vector3::repeat(penumbra_m).xy();
    let lo = polygon.iter().fold(polygon[0], |m, p| m.inf(p));
    let hi = polygon.iter().fold(polygon[0], |m, p| m.sup(p));
    Some(Footprint {
        vertices_in_desk,
        darkening: darkening as f32,
        penumbra_m: penumbra_m as f32,
        min_in_desk: lo - margin,
        max_in_desk: hi + margin,
    })
}

/// The footprints of an overlay's lit shapes.
pub fn footprints(overlay: &Overlay, light_travel_in_world: &Vector3<f64>) -> Vec<Footprint> {
    overlay
        .shapes
        .iter()
        .filter_map(|s| footprint(s, light_travel_in_world))
        .collect()
}

/// A unit square in the plane z = 0 (x, y in [0, 1]), facing up.
fn unit_square() -> RenderMesh {
    RenderMesh::new(
        vec![
            Vec3::new(0.0, 0.0, 0.0),
            Vec3::new(1.0, 0.0, 0.0),
            Vec3::new(1.0, 1.0, 0.0),
            Vec3::new(0.0, 1.0, 0.0),
        ],
        Some(vec![Vec3::Z; 4]),
        Some(vec![
            Vec2::new(0.0, 0.0),
            Vec2::new(1.0, 0.0),
            Vec2::new(1.0, 1.0),
            Vec2::new(0.0, 1.0),
        ]),
        Some(IndexBuffer::Unified(vec![[0, 1, 2], [0, 2, 3]])),
    )
}

/// Stretches a [`unit_square`] node over the desk rectangle from `lo` to `hi`.
fn place_on_desk(node: &mut SceneNode3d, lo: Point2<f64>, hi: Point2<f64>) {
    let size = hi - lo;
    node.set_pose(to_pose3(&Isometry3::translation(lo.x, lo.y, 0.0)));
    node.set_local_scale(size.x as f32, size.y as f32, 1.0);
}

/// The shadows' scene nodes: one desk quad per footprint, then the darkening pass.
pub struct ShadowLayer {
    root: SceneNode3d,
    quads: Vec<SceneNode3d>,
    darken: SceneNode3d,
    light_travel_in_world: Vector3<f64>,
    enabled: bool,
}

impl ShadowLayer {
    /// Adds the layer's nodes to `parent` (after the phantoms, before the shapes: the scene
    /// graph's order is the drawing order). Must run on the thread that owns the kiss3d context.
    pub fn new(
        parent: &mut SceneNode3d,
        light_travel_in_world: [f32; 3],
        ambient: f32,
        enabled: bool,
    ) -> Self {
        let root = parent.add_group();
        // On the desk over the footprints' areas: the pixels it covers are the only ones whose
        // alpha a footprint can have lowered (it ignores the depth buffer).
        let mut darken = parent.add_render_mesh(unit_square(), Vec3::ONE);
        darken.set_material(OverlayMaterial::shared_kind(
            light_travel_in_world,
            ambient,
            MaterialKind::Darken,
        ));
        darken.enable_backface_culling(false);
        darken.set_casts_shadows(false);
        darken.set_visible(false);
        let [x, y, z] = light_travel_in_world.map(f64::from);
        Self {
            root,
            quads: Vec::new(),
            darken,
            light_travel_in_world: Vector3::new(x, y, z),
            enabled,
        }
    }

    /// Whether shadows are drawn.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Turns the shadows on or off from the next frame.
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    /// Makes the desk quads match `overlay`'s lit shapes (none when disabled).
    pub fn sync(&mut self, overlay: &Overlay) {
        let shadows = if self.enabled {
            footprints(overlay, &self.light_travel_in_world)
        } else {
            Vec::new()
        };
        while self.quads.len() < shadows.len() {
            let mut node = self.root.add_render_mesh(unit_square(), Vec3::ONE);
            node.set_material(OverlayMaterial::shared_kind(
                [0.0, 0.0, -1.0],
                0.0,
                MaterialKind::Shadow,
            ));
            node.enable_backface_culling(false);
            node.set_casts_shadows(false);
            self.quads.push(node);
        }
        for (node, f) in self.quads.iter_mut().zip(&shadows) {
            node.set_visible(true);
            place_on_desk(node, f.min_in_desk, f.max_in_desk);
            if let Some(object) = node.data_mut().object_mut() {
                object.set_user_data(Box::new(*f));
            }
        }
        for extra in self.quads.iter_mut().skip(shadows.len()) {
            extra.set_visible(false);
        }
        self.darken.set_visible(!shadows.is_empty());
        if let Some(first) = shadows.first() {
            let (lo, hi) = shadows
                .iter()
                .fold((first.min_in_desk, first.max_in_desk), |(lo, hi), f| {
                    (lo.inf(&f.min_in_desk), hi.sup(&f.max_in_desk))
                });
            place_on_desk(&mut self.darken, lo, hi);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion};

    fn lit(shape: VisualShape, pose: Isometry3<f64>) -> ShapeInstance {
        ShapeInstance {
            shape,
            world_from_shape: pose,
            color: [1.0, 0.0, 0.0],
            shading: Shading::Lit,
        }
    }

    fn inside(f: &Footprint, p: Point2<f64>) -> bool {
        let n = MAX_FOOTPRINT_VERTICES;
        (0..n).all(|i| {
            let a = f.vertices_in_desk[i].map(f64::from);
            let b = f.vertices_in_desk[(i + 1) % n].map(f64::from);
            (b[0] - a[0]) * (p.y - a[1]) - (b[1] - a[1]) * (p.x - a[0]) >= 0.0
        })
    }

    /// A sphere's shadow straight down is a disc under it; slanted, it slides along the light
    /// by height · tan, as a point's does.
    #[test]
    fn a_sphere_casts_a_disc_at_its_projection_along_the_light() {
        let sphere = lit(
            VisualShape::Sphere { radius_m: 0.05 },
            Isometry3::translation(0.1, 0.2, 0.3),
        );
        let down = footprint(&sphere, &Vector3::new(0.0, 0.0, -1.0)).unwrap();
        assert!(inside(&down, Point2::new(0.1, 0.2)));
        assert!(inside(&down, Point2::new(0.1 + 0.048, 0.2)));
        assert!(!inside(&down, Point2::new(0.1 + 0.052, 0.2)));
        let light = Vector3::new(0.3, 0.4, -1.0);
        let slanted = footprint(&sphere, &light).unwrap();
        let centre = Point2::new(0.1 + 0.3 * 0.3, 0.2 + 0.4 * 0.3);
        assert!(inside(&slanted, centre));
        assert!(!inside(&slanted, Point2::new(0.1, 0.2)));
        assert!(slanted.min_in_desk.x < centre.x && slanted.max_in_desk.y > centre.y);
        assert!((f64::from(slanted.penumbra_m) - (0.002 + 0.03 * 0.3)).abs() < 1e-6);
        assert!(slanted.darkening < SHADOW_DARKENING);
    }

    #[test]
    fn a_tilted_box_a_capsule_and_a_cylinder_have_convex_footprints_of_at_most_16_vertices() {
        let light = Vector3::new(0.3, 0.4, -1.0);
        let tilt = Isometry3::from_parts(
            Translation3::new(0.0, 0.0, 0.2),
            UnitQuaternion::from_euler_angles(0.4, 0.3, 0.2),
        );
        for shape in [
            VisualShape::Box {
                size_m: Vector3::new(0.1, 0.05, 0.02),
            },
            VisualShape::Capsule {
                radius_m: 0.01,
                length_m: 0.1,
            },
            VisualShape::Cylinder {
                radius_m: 0.03,
                length_m: 0.1,
            },
        ] {
            let f = footprint(&lit(shape.clone(), tilt), &light).unwrap();
            // The shape's centre projects inside its footprint.
            assert!(inside(&f, Point2::new(0.3 * 0.2, 0.4 * 0.2)), "{shape:?}");
        }
    }

    #[test]
    fn markers_shapes_under_the_desk_and_lights_from_below_cast_no_shadow() {
        let light = Vector3::new(0.0, 0.0, -1.0);
        let mut s = lit(
            VisualShape::Sphere { radius_m: 0.01 },
            Isometry3::translation(0.0, 0.0, 0.1),
        );
        assert!(footprint(&s, &Vector3::new(0.0, 0.0, 1.0)).is_none());
        s.shading = Shading::Flat;
        assert!(footprint(&s, &light).is_none());
        s.shading = Shading::Phantom;
        assert!(footprint(&s, &light).is_none());
        let under = lit(
            VisualShape::Sphere { radius_m: 0.01 },
            Isometry3::translation(0.0, 0.0, -0.1),
        );
        assert!(footprint(&under, &light).is_none());
    }

    #[test]
    fn edge_lines_measure_the_distance_outside_and_ignore_repeated_vertices() {
        let sphere = lit(
            VisualShape::Box {
                size_m: Vector3::new(0.2, 0.1, 0.02),
            },
            Isometry3::translation(0.0, 0.0, 0.01),
        );
        let f = footprint(&sphere, &Vector3::new(0.0, 0.0, -1.0)).unwrap();
        let distance = |x: f32, y: f32| {
            f.edge_lines()
                .iter()
                .map(|[nx, ny, c]| nx * x + ny * y - c)
                .fold(f32::NEG_INFINITY, f32::max)
        };
        assert!((distance(0.0, 0.0) + 0.05).abs() < 1e-6);
        assert!((distance(0.13, 0.0) - 0.03).abs() < 1e-6);
        assert!((distance(0.0, -0.07) - 0.02).abs() < 1e-6);
        // Mitred round a corner: the larger of the two edges' distances.
        assert!((distance(0.13, 0.07) - 0.03).abs() < 1e-6);
    }

    #[test]
    fn the_hull_drops_inner_points_and_simplify_keeps_the_corners() {
        let square = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0), (0.5, 0.5)]
            .map(|(x, y)| Point2::new(x, y))
            .to_vec();
        let hull = convex_hull(square);
        assert_eq!(hull.len(), 4);
        let mut near = hull.clone();
        near.insert(1, Point2::new(0.5, -0.001));
        assert_eq!(simplify(near, 4), hull);
    }
}
