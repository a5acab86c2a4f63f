//! Checks of values after parsing; every error names the file, the line and column of the
//! value (from its `toml::Spanned` byte range) and the field.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use nalgebra::{UnitQuaternion, Vector3};
use toml::Spanned;

use crate::error::SceneError;
use crate::model::body::{Body, BodyId};

pub(super) struct Checker<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
    /// Body names to ids, for the bodies seen at the last [`Checker::body`] call (bodies are
    /// only ever appended, so a longer list has new bodies to add), so that a scene's elements
    /// find their bodies in constant time and a large scene loads in linear time.
    pub(super) body_ids: RefCell<(usize, HashMap<String, BodyId>)>,
}

/// What is wrong with `name` as the name of a `kind` (body, joint, force, bar, fish), apart
/// from being used twice: empty, `reserved`, a control character, or leading or trailing
/// spaces (the output CSVs carry names in fields that a reader trims).
pub(crate) fn name_problem(name: &str, kind: &str, reserved: &[&str]) -> Option<String> {
    if name.is_empty() {
        Some(format!("a {kind} needs a name"))
    } else if reserved.contains(&name) {
        Some(format!("`{name}` is reserved"))
    } else if name.chars().any(char::is_control) {
        Some(format!("{kind} name {name:?} contains a control character"))
    } else if name.trim() != name {
        Some(format!(
            "{kind} name `{name}` starts or ends with a space (CSV readers trim fields, so it would not match the name read back)"
        ))
    } else {
        None
    }
}

impl Checker<'_> {
    /// Checks the name of a `kind` (body, joint, force) by [`name_problem`], and that it is not
    /// in `seen`, to which it is added.
    pub(super) fn name<'n>(
        &self,
        name: &'n Spanned<String>,
        field: String,
        kind: &str,
        reserved: &[&str],
        seen: &mut std::collections::HashSet<&'n str>,
    ) -> Result<(), SceneError> {
        let n = name.get_ref().as_str();
        let problem = name_problem(n, kind, reserved)
            .or_else(|| (!seen.insert(n)).then(|| format!("{kind} name `{n}` is used twice")));
        match problem {
            Some(p) => Err(self.err(name.span(), field, p)),
            None => Ok(()),
        }
    }

    pub(super) fn err(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> SceneError {
        let start = span.start.min(self.text.len());
        let before = &self.text[..start];
        let line = before.matches('\n').count() + 1;
        let column = before.chars().rev().take_while(|&c| c != '\n').count() + 1;
        SceneError::Invalid {
            path: self.path.to_owned(),
            line,
            column,
            field: field.into(),
            message: message.into(),
        }
    }

    pub(super) fn finite3(
        &self,
        v: &Spanned<[f64; 3]>,
        field: &str,
    ) -> Result<Vector3<f64>, SceneError> {
        let a = *v.get_ref();
        if a.iter().all(|x| x.is_finite()) {
            Ok(Vector3::from(a))
        } else {
            Err(self.err(v.span(), field, "every component must be a finite number"))
        }
    }

    /// A direction (an axis, a normal) as a unit vector. Its components are scaled by the
    /// largest first, so that any finite direction is normalised without its norm
    /// overflowing (`[0, 0, 1e300]`) or underflowing; the zero vector is refused.
    pub(super) fn unit3(
        &self,
        v: &Spanned<[f64; 3]>,
        field: &str,
    ) -> Result<Vector3<f64>, SceneError> {
        let a = self.finite3(v, field)?;
        unit_direction(a)
            .ok_or_else(|| self.err(v.span(), field, "a direction must not be the zero vector"))
    }

    /// A rotation vector (axis × angle, rad): finite and at most [`MAX_ROTATION_RAD`] long,
    /// beyond which the angle's rounding alone is more than a micro-radian and sin and cos
    /// of it are noise (a static shape turned by 1e300 rad vanished from collision).
    pub(super) fn rotation3(
        &self,
        v: &Spanned<[f64; 3]>,
        field: &str,
    ) -> Result<Vector3<f64>, SceneError> {
        let r = self.finite3(v, field)?;
        let angle = r.iter().map(|x| x.abs()).fold(0.0, f64::max);
        if angle > MAX_ROTATION_RAD {
            return Err(self.err(
                v.span(),
                field,
                format!(
                    "a component of {angle:e} rad is over the limit of {MAX_ROTATION_RAD:e} rad \
                     (give the angle modulo 2π)"
                ),
            ));
        }
        Ok(r)
    }

    /// A count read from the file, at most `limit` (the limit documented in the manual's
    /// `scene_files` page); `what` says what is counted.
    pub(super) fn count(
        &self,
        span: Range<usize>,
        field: impl Into<String>,
        count: usize,
        limit: usize,
        what: &str,
    ) -> Result<usize, SceneError> {
        if count > limit {
            return Err(self.err(
                span,
                field,
                format!("{count} {what}, over the limit of {limit}"),
            ));
        }
        Ok(count)
    }

    pub(super) fn positive(&self, v: &Spanned<f64>, field: &str) -> Result<f64, SceneError> {
        let x = *v.get_ref();
        if x > 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(self.err(v.span(), field, format!("must be positive, got {x}")))
        }
    }

    pub(super) fn non_negative(&self, v: &Spanned<f64>, field: &str) -> Result<f64, SceneError> {
        let x = *v.get_ref();
        if x >= 0.0 && x.is_finite() {
            Ok(x)
        } else {
            Err(self.err(
                v.span(),
                field,
                format!("must be zero or positive, got {x}"),
            ))
        }
    }

    pub(super) fn body(
        &self,
        bodies: &[Body],
        name: &Spanned<String>,
        field: &str,
    ) -> Result<BodyId, SceneError> {
        let mut index = self.body_ids.borrow_mut();
        if index.0 > bodies.len() {
            *index = Default::default();
        }
        // Bodies are only appended: index the new ones (a scene of many small deformables
        // looks bodies up between appends, and rebuilding the map each time was quadratic).
        let known = index.0;
        for (id, b) in bodies.iter().enumerate().skip(known) {
            index.1.insert(b.name.clone(), id);
        }
        index.0 = bodies.len();
        index.1.get(name.get_ref()).copied().ok_or_else(|| {
            self.err(
                name.span(),
                field,
                format!(
                    "unknown body `{}` (use `ground` for the fixed frame)",
                    name.get_ref()
                ),
            )
        })
    }
}

/// The longest rotation vector a scene may give (rad): about 160,000 turns; the rounding of
/// such an angle is below 1e-10 rad.
pub const MAX_ROTATION_RAD: f64 = 1.0e6;

/// `v` as a unit vector, scaled by its largest component first so that no finite `v`
/// overflows or underflows its norm; `None` for the zero vector or a non-finite one.
pub(crate) fn unit_direction(v: Vector3<f64>) -> Option<Vector3<f64>> {
    let scale = v.iter().map(|x| x.abs()).fold(0.0, f64::max);
    if !(scale > 0.0 && scale.is_finite()) {
        return None;
    }
    let norm = v.norm();
    // Where the norm is exact enough, the plain quotient (the same bits as before the
    // scaling existed); otherwise the scaled one.
    if norm.is_finite() && norm > 1.0e-150 {
        return Some(v / norm);
    }
    let scaled = v / scale;
    Some(scaled / scaled.norm())
}

pub(super) fn rotation(v: Option<[f64; 3]>) -> UnitQuaternion<f64> {
    v.map_or_else(UnitQuaternion::identity, |r| {
        UnitQuaternion::from_scaled_axis(Vector3::from(r))
    })
}
