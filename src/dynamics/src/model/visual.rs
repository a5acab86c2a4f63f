//! What a body looks like when it is more than its one `shape`: a list of visuals, each a
//! primitive shape or a mesh file, placed in the body frame with its own colour (a robot's
//! link imported from URDF or MJCF, a CAD part). The solver never reads them: the body's
//! `shape` stays what collides and what the wind sees; the compositor draws the visuals
//! instead of the shape when a body has any.

use std::path::PathBuf;

use nalgebra::Isometry3;

use super::shape::Shape;

/// One visual of a body.
#[derive(Clone, Debug, PartialEq)]
pub struct Visual {
    /// What is drawn.
    pub geometry: VisualGeometry,
    /// The visual's frame in the body frame (the body frame's origin is the centre of mass).
    pub body_from_visual: Isometry3<f64>,
    /// Colour (linear RGBA, 0..1); `None` draws it in the body's palette colour, or a mesh in
    /// its file's own colours.
    pub rgba: Option<[f64; 4]>,
}

/// A visual's geometry.
#[derive(Clone, Debug, PartialEq)]
pub enum VisualGeometry {
    /// A primitive, as a body's `shape` (elongated shapes along the visual frame's z).
    Shape(Shape),
    /// A mesh file (STL, OBJ or COLLADA), drawn in the visual frame after scaling each axis.
    Mesh {
        /// The file, resolved against the scene file's folder when the scene gave it relative.
        path: PathBuf,
        /// Scale per axis (a mesh in millimetres: 0.001).
        scale: [f64; 3],
    },
}
