//! MJCF frames: the `<compiler>` settings that change how numbers read (`angle`, `eulerseq`),
//! and a frame's orientation from any one of its forms (`quat`, `axisangle`, `euler`,
//! `xyaxes`, `zaxis`), as MuJoCo's compiler turns them into a quaternion.

use nalgebra::{Isometry3, Quaternion, Translation3, Unit, UnitQuaternion, Vector3};

use super::xml::Attrs;
use crate::error::ImportError;

/// The `<compiler>` attributes the reader takes.
#[derive(Clone, Debug)]
pub struct Compiler {
    /// Radians per angle unit of the file: MuJoCo's default is degrees (`angle="degree"`).
    pub rad_per_unit: f64,
    /// The Euler sequence: lower case turns about the moving axes, upper case about the fixed
    /// ones (`eulerseq`, default `xyz`).
    pub euler_seq: [u8; 3],
    /// A joint with a `range` and `limited="auto"` is limited (`autolimits`, default true).
    pub auto_limits: bool,
    /// Where mesh files are looked up (`meshdir`, else `assetdir`, relative to the model).
    pub mesh_dir: Option<String>,
    /// `inertiafromgeom`: `Some(true)` always from the geoms, `Some(false)` never, `None` when a
    /// body has no `<inertial>` (MuJoCo's `auto`).
    pub inertia_from_geom: Option<bool>,
}

impl Default for Compiler {
    fn default() -> Self {
        Compiler {
            rad_per_unit: std::f64::consts::PI / 180.0,
            euler_seq: *b"xyz",
            auto_limits: true,
            mesh_dir: None,
            inertia_from_geom: None,
        }
    }
}

/// The orientation attributes of a frame; at most one may be given.
const ORIENTATIONS: [&str; 5] = ["quat", "axisangle", "euler", "xyaxes", "zaxis"];

/// The frame of an element with `pos` and an orientation (body, geom, inertial, site), in its
/// parent's frame; `pos` defaults to zero and the orientation to the identity.
pub fn frame(attrs: &Attrs, compiler: &Compiler) -> Result<Isometry3<f64>, ImportError> {
    let pos = attrs.fixed::<3>("pos")?.unwrap_or([0.0; 3]);
    let rotation = orientation(attrs, compiler)?.unwrap_or_else(UnitQuaternion::identity);
    Ok(Isometry3::from_parts(
        Translation3::new(pos[0], pos[1], pos[2]),
        rotation,
    ))
}

/// The orientation an element gives, if any.
pub fn orientation(
    attrs: &Attrs,
    compiler: &Compiler,
) -> Result<Option<UnitQuaternion<f64>>, ImportError> {
    let given: Vec<&str> = ORIENTATIONS
        .iter()
        .copied()
        .filter(|n| attrs.has(n))
        .collect();
    if given.len() > 1 {
        return Err(attrs.bad(
            given[1],
            format!(
                "the orientation is given twice (`{}` and `{}`): keep one",
                given[0], given[1]
            ),
        ));
    }
    let Some(&which) = given.first() else {
        return Ok(None);
    };
    let q = match which {
        "quat" => {
            let [w, x, y, z] = attrs.fixed::<4>("quat")?.unwrap_or_default();
            let q = Quaternion::new(w, x, y, z);
            if q.norm() < 1e-12 {
                return Err(attrs.bad("quat", "a zero quaternion has no orientation"));
            }
            UnitQuaternion::from_quaternion(q)
        }
        "axisangle" => {
            let [x, y, z, a] = attrs.fixed::<4>("axisangle")?.unwrap_or_default();
            let axis = nonzero(attrs, "axisangle", Vector3::new(x, y, z))?;
            UnitQuaternion::from_axis_angle(&axis, a * compiler.rad_per_unit)
        }
        "euler" => {
            let angles = attrs.fixed::<3>("euler")?.unwrap_or_default();
            euler(
                angles.map(|a| a * compiler.rad_per_unit),
                compiler.euler_seq,
            )
        }
        "xyaxes" => {
            let v = attrs.fixed::<6>("xyaxes")?.unwrap_or_default();
            xy_axes(
                attrs,
                Vector3::new(v[0], v[1], v[2]),
                Vector3::new(v[3], v[4], v[5]),
            )?
        }
        _ => {
            let z = attrs.fixed::<3>("zaxis")?.unwrap_or_default();
            let z = nonzero(attrs, "zaxis", Vector3::from(z))?;
            z_axis(&z)
        }
    };
    Ok(Some(q))
}

/// MuJoCo's Euler angles: for each axis of the sequence in turn, a lower-case letter turns
/// about the moving (already turned) axis, q ← q·r, an upper-case one about the fixed axis,
/// q ← r·q.
pub fn euler(angles_rad: [f64; 3], seq: [u8; 3]) -> UnitQuaternion<f64> {
    let mut q = UnitQuaternion::identity();
    for (angle, letter) in angles_rad.into_iter().zip(seq) {
        let axis = match letter.to_ascii_lowercase() {
            b'x' => Vector3::x_axis(),
            b'y' => Vector3::y_axis(),
            _ => Vector3::z_axis(),
        };
        let r = UnitQuaternion::from_axis_angle(&axis, angle);
        q = if letter.is_ascii_lowercase() {
            q * r
        } else {
            r * q
        };
    }
    q
}

/// The frame whose x axis is `x` and whose y axis is `y` made orthogonal to it (Gram–Schmidt),
/// z = x × y.
fn xy_axes(
    attrs: &Attrs,
    x: Vector3<f64>,
    y: Vector3<f64>,
) -> Result<UnitQuaternion<f64>, ImportError> {
    let x = nonzero(attrs, "xyaxes", x)?;
    let y = y - x.into_inner() * x.dot(&y);
    let y = nonzero(attrs, "xyaxes", y)
        .map_err(|_| attrs.bad("xyaxes", "the y axis is parallel to the x axis (or zero)"))?;
    let z = x.cross(&y);
    let m = nalgebra::Matrix3::from_columns(&[x.into_inner(), y.into_inner(), z]);
    Ok(UnitQuaternion::from_rotation_matrix(
        &nalgebra::Rotation3::from_matrix_unchecked(m),
    ))
}

/// The smallest rotation that takes +z to `z` (MuJoCo's `zaxis`).
pub fn z_axis(z: &Unit<Vector3<f64>>) -> UnitQuaternion<f64> {
    UnitQuaternion::rotation_between(&Vector3::z(), z).unwrap_or_else(|| {
        // Opposite to +z: half a turn about x, as MuJoCo does.
        UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI)
    })
}

/// `v` made unit, or an error naming the attribute.
pub fn nonzero(
    attrs: &Attrs,
    name: &str,
    v: Vector3<f64>,
) -> Result<Unit<Vector3<f64>>, ImportError> {
    Unit::try_new(v, 1e-12).ok_or_else(|| attrs.bad(name, "a zero vector has no direction"))
}
