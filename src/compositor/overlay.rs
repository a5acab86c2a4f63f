//! What the compositor draws over the video, as plain data: shapes at world poses, thin
//! lines, the stylus tip, the spring, force arrows and highlighted points. The solver, the interaction and the
//! tests fill it in; the compositor never looks at solver internals.

use super::mesh::SharedMesh;
use nalgebra::{Isometry3, Point3, Vector3};

/// An RGB colour, each channel in [0, 1] (sRGB, as displayed).
pub type Rgb = [f32; 3];

/// The geometry of one visual shape, in its own frame (metres). Not `Copy`: a mesh is shared
/// data, and two meshes are equal only when they are the same shared mesh.
#[derive(Debug, Clone, PartialEq)]
pub enum VisualShape {
    /// A box with these full extents along the shape frame's x, y, z.
    Box {
        /// Full extents, metres.
        size_m: Vector3<f64>,
    },
    /// A sphere centred on the shape frame's origin.
    Sphere {
        /// Radius, metres.
        radius_m: f64,
    },
    /// A cylinder centred on the origin, its axis along the shape frame's z.
    Cylinder {
        /// Radius, metres.
        radius_m: f64,
        /// Length along z, metres.
        length_m: f64,
    },
    /// A capsule centred on the origin, its axis along z; `length_m` excludes the caps.
    Capsule {
        /// Radius, metres.
        radius_m: f64,
        /// Length of the cylindrical part along z, metres.
        length_m: f64,
    },
    /// A triangle mesh (a mesh visual), in its file's frame after the visual's scale; its
    /// parts are drawn in their materials' colours, the rest in the instance's colour.
    Mesh(SharedMesh),
}

/// How a shape is shaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shading {
    /// Lit by the overlay's lights, like a solid object on the desk.
    Lit,
    /// Flat, unlit colour: markers and highlights that must keep an exact colour.
    Flat,
    /// Not drawn, but hides the shapes behind it ("phantom" geometry, depth only): something
    /// real that the video shows, such as the digitizer arm, in front of the virtual scene.
    Phantom,
}

/// One shape to draw this frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeInstance {
    /// The geometry.
    pub shape: VisualShape,
    /// Where the shape frame is.
    pub world_from_shape: Isometry3<f64>,
    /// Its colour.
    pub color: Rgb,
    /// How it is shaded.
    pub shading: Shading,
}

impl ShapeInstance {
    /// The corners of the shape's bounding box, world frame: points whose convex hull holds
    /// the shape (what a view must keep in frame to show it whole).
    pub fn hull_points(&self) -> [Point3<f64>; 8] {
        let (centre, half) = match &self.shape {
            VisualShape::Mesh(mesh) => (
                nalgebra::center(&mesh.min_m, &mesh.max_m),
                0.5 * (mesh.max_m - mesh.min_m),
            ),
            shape => (Point3::origin(), primitive_half_extents(shape)),
        };
        let mut corners = [Point3::origin(); 8];
        for (i, c) in corners.iter_mut().enumerate() {
            let s = |bit: usize| if i & bit == 0 { -1.0 } else { 1.0 };
            let corner = centre + Vector3::new(s(1) * half.x, s(2) * half.y, s(4) * half.z);
            *c = self.world_from_shape * corner;
        }
        corners
    }
}

/// Half the extents of a primitive's bounding box about its centre (zero for a mesh, whose
/// box [`ShapeInstance::hull_points`] takes from the mesh).
fn primitive_half_extents(shape: &VisualShape) -> Vector3<f64> {
    match *shape {
        VisualShape::Box { size_m } => 0.5 * size_m,
        VisualShape::Sphere { radius_m } => Vector3::repeat(radius_m),
        VisualShape::Cylinder { radius_m, length_m } => {
            Vector3::new(radius_m, radius_m, 0.5 * length_m)
        }
        VisualShape::Capsule { radius_m, length_m } => {
            Vector3::new(radius_m, radius_m, 0.5 * length_m + radius_m)
        }
        VisualShape::Mesh(_) => Vector3::zeros(),
    }
}

/// A force drawn as an arrow starting at a point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForceArrow {
    /// Where the force acts.
    pub origin_in_world: Point3<f64>,
    /// The force, newtons.
    pub force_n: Vector3<f64>,
    /// What the force is (drawn in its own colour).
    pub kind: ForceKind,
}

/// What a force arrow shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForceKind {
    /// A joint's reaction on its second body.
    JointReaction,
    /// A contact's normal force on its second shape.
    Contact,
}

/// A thin line between two world points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OverlayLine {
    /// One end.
    pub from_in_world: Point3<f64>,
    /// The other end.
    pub to_in_world: Point3<f64>,
    /// Its colour.
    pub color: Rgb,
}

/// Everything drawn over one video frame, in world (marker) coordinates.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Overlay {
    /// Bodies and other solid shapes.
    pub shapes: Vec<ShapeInstance>,
    /// The stylus tip, when the arm reports it.
    pub stylus_tip_in_world: Option<Point3<f64>>,
    /// The spring while clipped: from the stylus tip to the grabbed point on the body.
    pub spring_in_world: Option<(Point3<f64>, Point3<f64>)>,
    /// Thin lines (threads, ceiling lines), world frame, drawn a few pixels wide.
    pub lines: Vec<OverlayLine>,
    /// Reaction-force arrows (drawn when non-empty).
    pub arrows: Vec<ForceArrow>,
    /// Arrow length per newton, metres (e.g. 0.01 draws 1 N as 1 cm).
    pub arrow_m_per_n: f64,
}

impl Overlay {
    /// Points whose convex hull holds everything drawn in the world (shapes, lines, the
    /// stylus tip, the spring; not the arrows, whose length depends on the forces).
    pub fn hull_points(&self) -> Vec<Point3<f64>> {
        let mut points: Vec<Point3<f64>> = self
            .shapes
            .iter()
            .flat_map(ShapeInstance::hull_points)
            .collect();
        points.extend(
            self.lines
                .iter()
                .flat_map(|l| [l.from_in_world, l.to_in_world]),
        );
        points.extend(self.stylus_tip_in_world);
        points.extend(self.spring_in_world.iter().flat_map(|(a, b)| [*a, *b]));
        points
    }

    /// Adds a flat-coloured sphere, e.g. to mark a grab point.
    pub fn push_marker(&mut self, p_in_world: Point3<f64>, radius_m: f64, color: Rgb) {
        self.shapes.push(ShapeInstance {
            shape: VisualShape::Sphere { radius_m },
            world_from_shape: Isometry3::translation(p_in_world.x, p_in_world.y, p_in_world.z),
            color,
            shading: Shading::Flat,
        });
    }
}
