//! How the compositor draws a simulation's neutral view ([`crate::scene_view`]): bodies as lit
//! shapes in palette colours chosen here (the simulation never chooses colours), supports as
//! lit shapes and lines in one steel grey, reactions as force arrows.

use super::overlay::{
    ForceArrow, ForceKind, Overlay, OverlayLine, Rgb, Shading, ShapeInstance, VisualShape,
};
use crate::scene_view::{BodyView, ReactionView, Shape, Support, SupportShape};
use ar_dynamics::model::visual::VisualGeometry;
use nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};

/// Body colours, cycled by body index (the solver library's ground is index 0 and has no
/// shape, so a scene's first body gets the second colour).
pub const BODY_PALETTE: [Rgb; 6] = [
    [0.90, 0.35, 0.20],
    [0.95, 0.75, 0.20],
    [0.30, 0.70, 0.95],
    [0.55, 0.85, 0.35],
    [0.80, 0.45, 0.85],
    [0.95, 0.55, 0.60],
];

/// The colour of supports (stands, posts, threads): a steel grey, apart from every body colour.
pub const SUPPORT_COLOR: Rgb = [0.62, 0.64, 0.68];

/// The colour of body `body`.
pub fn body_color(body: usize) -> Rgb {
    BODY_PALETTE[body % BODY_PALETTE.len()]
}

/// The compositor's geometry for a body shape (a convex as its hull's mesh, built once per
/// shape: [`super::convex_hull`]).
pub fn visual_shape(shape: &Shape) -> VisualShape {
    match *shape {
        Shape::Box { size_m } => VisualShape::Box {
            size_m: Vector3::from(size_m),
        },
        Shape::Sphere { radius_m } => VisualShape::Sphere { radius_m },
        Shape::Cylinder { radius_m, length_m } => VisualShape::Cylinder { radius_m, length_m },
        Shape::Capsule { radius_m, length_m } => VisualShape::Capsule { radius_m, length_m },
        // Points that span no volume never pass the scene loader; the box stands in if they do.
        Shape::Convex { ref points_m } => super::convex_hull::hull_mesh(points_m).map_or_else(
            || VisualShape::Box {
                size_m: Vector3::from(shape.centred_box_m()),
            },
            VisualShape::Mesh,
        ),
    }
}

/// Whether a pose can be drawn: the renderer works in f32, where a diverged simulation's
/// poses (huge or not finite) would poison the scene graph.
fn drawable(pose: &Isometry3<f64>) -> bool {
    let t = pose.translation.vector;
    let q = pose.rotation.coords;
    t.iter().chain(q.iter()).all(|&x| (x as f32).is_finite())
}

impl Overlay {
    /// Adds the bodies as lit shapes in their palette colours, or their visuals when they have
    /// any: primitives and meshes at body pose ∘ visual pose, in the visual's colour or the
    /// palette's (a mesh's parts in their materials' colours where the file gives them). A body
    /// whose pose cannot be drawn (not finite in f32) is left out. A body with a mesh visual
    /// whose mesh was not loaded ([`BodyView::meshes`]) is drawn as its shape in its place.
    pub fn push_bodies(&mut self, bodies: &[BodyView]) {
        for b in bodies.iter().filter(|b| drawable(&b.world_from_body)) {
            let palette = body_color(b.body);
            let color = |rgba: Option<[f64; 4]>| {
                rgba.map_or(palette, |c| [c[0] as f32, c[1] as f32, c[2] as f32])
            };
            let mesh_missing = b.visuals.iter().enumerate().any(|(k, v)| {
                matches!(v.geometry, VisualGeometry::Mesh { .. })
                    && !matches!(b.meshes.get(k), Some(Some(_)))
            });
            if b.visuals.is_empty() || mesh_missing {
                self.shapes.push(ShapeInstance {
                    shape: visual_shape(&b.shape),
                    world_from_shape: b.world_from_body,
                    color: palette,
                    shading: Shading::Lit,
                });
            }
            for (k, v) in b.visuals.iter().enumerate() {
                let shape = match (&v.geometry, b.meshes.get(k)) {
                    (VisualGeometry::Shape(shape), _) => visual_shape(shape),
                    (VisualGeometry::Mesh { .. }, Some(Some(mesh))) => {
                        VisualShape::Mesh(mesh.clone())
                    }
                    (VisualGeometry::Mesh { .. }, _) => continue,
                };
                self.shapes.push(ShapeInstance {
                    shape,
                    world_from_shape: b.world_from_body * v.body_from_visual,
                    color: color(v.rgba),
                    shading: Shading::Lit,
                });
            }
        }
    }

    /// Adds the supports: rods as cylinders, boxes as boxes (both lit), lines as lines.
    pub fn push_supports(&mut self, supports: &[Support]) {
        for s in supports {
            match s.shape {
                SupportShape::Rod {
                    from_in_world,
                    to_in_world,
                    radius_m,
                } => self.push_rod(&from_in_world, &to_in_world, radius_m, SUPPORT_COLOR),
                SupportShape::Box {
                    center_in_world,
                    size_m,
                } => self.shapes.push(ShapeInstance {
                    shape: VisualShape::Box { size_m },
                    world_from_shape: Isometry3::translation(
                        center_in_world.x,
                        center_in_world.y,
                        center_in_world.z,
                    ),
                    color: SUPPORT_COLOR,
                    shading: Shading::Lit,
                }),
                SupportShape::Line {
                    from_in_world,
                    to_in_world,
                } => self.lines.push(OverlayLine {
                    from_in_world,
                    to_in_world,
                    color: SUPPORT_COLOR,
                }),
            }
        }
    }

    /// Adds a lit cylinder of `radius_m` from `a` to `b` (nothing when they coincide).
    pub fn push_rod(&mut self, a: &Point3<f64>, b: &Point3<f64>, radius_m: f64, color: Rgb) {
        let along = b - a;
        let length_m = along.norm();
        if length_m < 1e-9 || !length_m.is_finite() {
            return;
        }
        // A rod along −z has no shortest rotation from +z: turn it half a turn about x.
        let rotation =
            UnitQuaternion::rotation_between(&Vector3::z(), &along).unwrap_or_else(|| {
                UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI)
            });
        let mid = nalgebra::center(a, b);
        self.shapes.push(ShapeInstance {
            shape: VisualShape::Cylinder { radius_m, length_m },
            world_from_shape: Isometry3::from_parts(Translation3::from(mid.coords), rotation),
            color,
            shading: Shading::Lit,
        });
    }

    /// Adds the joint reactions as force arrows (drawn at [`Overlay::arrow_m_per_n`]);
    /// non-finite ones are left out.
    pub fn push_reactions(&mut self, reactions: &[ReactionView]) {
        self.push_forces(reactions, ForceKind::JointReaction);
    }

    /// Adds the contacts' normal forces as force arrows, like [`Self::push_reactions`].
    pub fn push_contacts(&mut self, contacts: &[ReactionView]) {
        self.push_forces(contacts, ForceKind::Contact);
    }

    fn push_forces(&mut self, reactions: &[ReactionView], kind: ForceKind) {
        self.arrows.extend(
            reactions
                .iter()
                .filter(|r| {
                    r.point_in_world.iter().all(|x| x.is_finite())
                        && r.force_in_world.iter().all(|x| x.is_finite())
                })
                .map(|r| ForceArrow {
                    origin_in_world: r.point_in_world,
                    force_n: r.force_in_world,
                    kind,
                }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compositor::mesh::{MeshGeometry, SharedMesh};
    use nalgebra::{Point3, Translation3, UnitQuaternion};
    use std::sync::Arc;

    fn body(index: usize, x: f64) -> BodyView {
        BodyView {
            body: index,
            name: Arc::from(format!("b{index}")),
            shape: Shape::Capsule {
                radius_m: 0.004,
                length_m: 0.042,
            },
            world_from_body: Isometry3::from_parts(
                Translation3::new(x, 0.0, 0.5),
                UnitQuaternion::identity(),
            ),
            visuals: Arc::new([]),
            meshes: Arc::new([]),
        }
    }

    /// The colours are the ones the rig used before the compositor chose them (body index
    /// modulo the palette), so the demo's frames look as before.
    #[test]
    fn bodies_are_lit_in_the_palette_colour_of_their_index_and_diverged_ones_are_skipped() {
        let mut o = Overlay::default();
        o.push_bodies(&[
            body(1, 0.0),
            body(7, 0.1),
            body(2, f64::NAN),
            body(3, 1e300),
        ]);
        assert_eq!(o.shapes.len(), 2);
        assert_eq!(o.shapes[0].color, [0.95, 0.75, 0.20]);
        assert_eq!(o.shapes[1].color, [0.95, 0.75, 0.20]);
        assert!(o.shapes.iter().all(|s| s.shading == Shading::Lit));
        assert_eq!(
            o.shapes[0].shape,
            VisualShape::Capsule {
                radius_m: 0.004,
                length_m: 0.042
            }
        );
        assert_eq!(o.shapes[1].world_from_shape, body(7, 0.1).world_from_body);

        o.push_reactions(&[
            ReactionView {
                point_in_world: Point3::new(0.0, 0.0, 0.6),
                force_in_world: Vector3::new(0.0, 0.0, 9.81),
            },
            ReactionView {
                point_in_world: Point3::origin(),
                force_in_world: Vector3::new(f64::INFINITY, 0.0, 0.0),
            },
        ]);
        assert_eq!(o.arrows.len(), 1);
        assert_eq!(o.arrows[0].force_n, Vector3::new(0.0, 0.0, 9.81));
    }

    /// A body with visuals shows them, each at body pose ∘ visual pose, in its own colour or the
    /// palette's; a mesh visual whose mesh is not loaded leaves the body's shape in its place,
    /// a loaded one is drawn as the mesh.
    #[test]
    fn visuals_are_drawn_instead_of_the_shape() {
        use ar_dynamics::model::visual::Visual;
        let offset = Isometry3::translation(0.0, 0.0, 0.1);
        let sphere = Visual {
            geometry: VisualGeometry::Shape(Shape::Sphere { radius_m: 0.02 }),
            body_from_visual: offset,
            rgba: Some([0.25, 0.5, 0.75, 1.0]),
        };
        let plain_box = Visual {
            geometry: VisualGeometry::Shape(Shape::Box {
                size_m: [0.1, 0.2, 0.3],
            }),
            body_from_visual: Isometry3::identity(),
            rgba: None,
        };
        let mut b = body(1, 0.2);
        b.visuals = Arc::from(vec![sphere.clone(), plain_box]);
        let mut o = Overlay::default();
        o.push_bodies(std::slice::from_ref(&b));
        assert_eq!(o.shapes.len(), 2);
        assert_eq!(o.shapes[0].shape, VisualShape::Sphere { radius_m: 0.02 });
        assert_eq!(o.shapes[0].color, [0.25, 0.5, 0.75]);
        assert_eq!(o.shapes[0].world_from_shape, b.world_from_body * offset);
        assert_eq!(o.shapes[1].color, body_color(1));

        let mesh = Visual {
            geometry: VisualGeometry::Mesh {
                path: "link.stl".into(),
                scale: [1.0; 3],
            },
            body_from_visual: Isometry3::identity(),
            rgba: None,
        };
        b.visuals = Arc::from(vec![mesh, sphere]);
        let mut o = Overlay::default();
        o.push_bodies(std::slice::from_ref(&b));
        assert_eq!(o.shapes.len(), 2);
        assert!(matches!(o.shapes[0].shape, VisualShape::Capsule { .. }));
        assert_eq!(o.shapes[1].shape, VisualShape::Sphere { radius_m: 0.02 });

        let loaded = SharedMesh::new(MeshGeometry::default());
        b.meshes = Arc::from(vec![Some(loaded.clone()), None]);
        let mut o = Overlay::default();
        o.push_bodies(&[b]);
        assert_eq!(o.shapes.len(), 2, "the mesh, then the sphere; no capsule");
        assert_eq!(o.shapes[0].shape, VisualShape::Mesh(loaded));
        assert_eq!(o.shapes[0].color, body_color(1));
        assert_eq!(o.shapes[1].shape, VisualShape::Sphere { radius_m: 0.02 });
    }
}
