//! The `[[force]]` tables: force elements ([`ForceElement`]) in file order.
//!
//! A table gives exactly one of `force_n` (a force, N) and `torque_n_m` (a torque, N·m), so
//! the unit is in the field name and the kind needs no field of its own; `axes` ("world",
//! the default, or "body"), `frequency_hz` (default 0: constant), `phase_rad` (only with a
//! frequency) and, for a force, `point_in_body_m` (default the centre of mass).

use nalgebra::Vector3;

use super::checker::Checker;
use super::file::{AxesDef, ForceDef};
use crate::error::SceneError;
use crate::model::body::{Body, GROUND};
use crate::model::force::{ForceAxes, ForceElement, ForceKind};

/// The `[[force]]` tables.
pub(super) fn force_elements(
    ck: &Checker,
    defs: &[ForceDef],
    bodies: &[Body],
) -> Result<Vec<ForceElement>, SceneError> {
    let mut elements: Vec<ForceElement> = Vec::with_capacity(defs.len());
    let mut names = std::collections::HashSet::new();
    for (i, d) in defs.iter().enumerate() {
        let f = |name: &str| format!("force[{i}].{name}");
        let name = d.name.get_ref();
        ck.name(&d.name, f("name"), "force", &[], &mut names)?;
        let body = ck.body(bodies, &d.body, &f("body"))?;
        if body == GROUND {
            return Err(ck.err(
                d.body.span(),
                f("body"),
                "the ground does not move: a force on it does nothing",
            ));
        }
        let (vector, kind) = vector_and_kind(ck, d, &f)?;
        let (frequency_hz, phase_rad) = time_law(ck, d, &f)?;
        let axes = match d.axes {
            AxesDef::World => ForceAxes::World,
            AxesDef::Body => ForceAxes::Body,
        };
        elements.push(ForceElement {
            name: name.clone(),
            body,
            kind,
            axes,
            vector,
            frequency_hz,
            phase_rad,
        });
    }
    Ok(elements)
}

/// The table's vector and whether it is a force (at a point, the centre of mass by default)
/// or a torque (no point): exactly one of `force_n` and `torque_n_m`.
fn vector_and_kind(
    ck: &Checker,
    d: &ForceDef,
    f: &dyn Fn(&str) -> String,
) -> Result<(Vector3<f64>, ForceKind), SceneError> {
    let (vector, is_force) = match (&d.force_n, &d.torque_n_m) {
        (Some(v), None) => (ck.finite3(v, &f("force_n"))?, true),
        (None, Some(v)) => (ck.finite3(v, &f("torque_n_m"))?, false),
        (Some(_), Some(v)) => {
            return Err(ck.err(
                v.span(),
                f("torque_n_m"),
                "give either `force_n` or `torque_n_m`, not both",
            ))
        }
        (None, None) => {
            return Err(ck.err(
                d.name.span(),
                f("force_n"),
                "give `force_n` (a force, N) or `torque_n_m` (a torque, N·m)",
            ))
        }
    };
    let kind = match (&d.point_in_body_m, is_force) {
        (Some(p), true) => ForceKind::Force {
            point_in_body: ck.finite3(p, &f("point_in_body_m"))?,
        },
        (None, true) => ForceKind::Force {
            point_in_body: Vector3::zeros(),
        },
        (Some(p), false) => {
            return Err(ck.err(
                p.span(),
                f("point_in_body_m"),
                "a torque has no point of application",
            ))
        }
        (None, false) => ForceKind::Torque,
    };
    Ok((vector, kind))
}

/// The table's frequency (Hz, 0: constant) and phase (rad, only with a frequency).
fn time_law(
    ck: &Checker,
    d: &ForceDef,
    f: &dyn Fn(&str) -> String,
) -> Result<(f64, f64), SceneError> {
    let frequency_hz = match &d.frequency_hz {
        Some(v) => ck.non_negative(v, &f("frequency_hz"))?,
        None => 0.0,
    };
    let phase_rad = match &d.phase_rad {
        Some(v) if frequency_hz == 0.0 => {
            // With s(t) = 1 for a constant element a phase would be silently ignored;
            // sin(phase) as a constant factor would be a second way to scale `vector`.
            return Err(ck.err(
                v.span(),
                f("phase_rad"),
                "a phase needs `frequency_hz` > 0 (a constant element has none)",
            ));
        }
        Some(v) if !v.get_ref().is_finite() => {
            return Err(ck.err(
                v.span(),
                f("phase_rad"),
                format!("must be a finite number, got {}", v.get_ref()),
            ));
        }
        Some(v) => *v.get_ref(),
        None => 0.0,
    };
    Ok((frequency_hz, phase_rad))
}
