//! The bodies of a scene: the ground, the `[[body]]` tables in file order, then the parts of
//! a `[mobile]`.
//!
//! A `[[body]]` may start moving (`velocity_m_per_s`, `angular_velocity_rad_per_s`, world
//! axes): the velocities are set on the [`Body`], and [`Simulation::new`] counts their
//! kinetic energy as initial energy of the balance.
//!
//! [`Simulation::new`]: crate::Simulation::new

use nalgebra::{Isometry3, Translation3, UnitQuaternion};

use super::checker::{rotation, Checker};
use super::file::BodyDef;
use super::mobile::{MobileDef, MobileLink};
use crate::error::SceneError;
use crate::model::body::Body;

/// The ground and the `[[body]]` tables.
pub(super) fn bodies(ck: &Checker, defs: &[BodyDef]) -> Result<Vec<Body>, SceneError> {
    let mut bodies = vec![Body::ground()];
    let mut names = std::collections::HashSet::new();
    for (i, b) in defs.iter().enumerate() {
        let f = |name: &str| format!("body[{i}].{name}");
        let name = b.name.get_ref();
        ck.name(&b.name, f("name"), "body", &["ground"], &mut names)?;
        let mass = ck.positive(&b.mass_kg, &f("mass_kg"))?;
        let inertia = ck.finite3(&b.inertia_kg_m2, &f("inertia_kg_m2"))?;
        if inertia.iter().any(|&x| x <= 0.0) {
            return Err(ck.err(
                b.inertia_kg_m2.span(),
                f("inertia_kg_m2"),
                "every principal moment of inertia must be positive",
            ));
        }
        // A rigid body's principal moments obey the triangle inequality (each is an integral
        // of a sum of two squared coordinates); a thin rod or plate reaches equality, so
        // allow rounding.
        for k in 0..3 {
            let (a, b2, c) = (inertia[k], inertia[(k + 1) % 3], inertia[(k + 2) % 3]);
            if a > (b2 + c) * (1.0 + 1e-6) {
                return Err(ck.err(
                    b.inertia_kg_m2.span(),
                    f("inertia_kg_m2"),
                    format!(
                        "no rigid body has these principal moments: {a} > {b2} + {c} \
                         (each moment must be at most the sum of the other two)"
                    ),
                ));
            }
        }
        if let Some((field, message)) = b.shape.get_ref().problem() {
            return Err(ck.err(b.shape.span(), f(&format!("shape.{field}")), message));
        }
        let position = ck.finite3(&b.position_m, &f("position_m"))?;
        let rotation_rad = b
            .rotation_rad
            .as_ref()
            .map(|r| ck.rotation3(r, &f("rotation_rad")))
            .transpose()?;
        let inertia_rotation_rad = b
            .inertia_rotation_rad
            .as_ref()
            .map(|r| ck.rotation3(r, &f("inertia_rotation_rad")))
            .transpose()?;
        let pose = Isometry3::from_parts(
            Translation3::from(position),
            rotation(rotation_rad.map(Into::into)),
        );
        let mut body = Body::new(
            name.clone(),
            mass,
            inertia,
            rotation(inertia_rotation_rad.map(Into::into)),
            pose,
            Some(b.shape.get_ref().clone()),
        );
        body.visuals = super::visuals::visuals(ck, i, &b.visuals, b.name.span())?;
        if let Some(v) = &b.velocity_m_per_s {
            body.linear_velocity_in_world = ck.finite3(v, &f("velocity_m_per_s"))?;
        }
        if let Some(w) = &b.angular_velocity_rad_per_s {
            body.angular_velocity_in_world = ck.finite3(w, &f("angular_velocity_rad_per_s"))?;
        }
        bodies.push(body);
    }
    Ok(bodies)
}

/// Adds the parts of a mobile to `bodies`; returns its ball joints, to be made once all
/// bodies exist.
pub(super) fn add_mobile(
    ck: &Checker,
    mobile: Option<&MobileDef>,
    bodies: &mut Vec<Body>,
) -> Result<Vec<MobileLink>, SceneError> {
    let Some(m) = mobile else {
        return Ok(Vec::new());
    };
    let built = m.build().map_err(|e| ck.err(e.span, e.field, e.message))?;
    // A set of the names, not a search per part: a mobile may have tens of thousands.
    let mut taken: std::collections::HashSet<String> =
        bodies.iter().map(|b| b.name.clone()).collect();
    for part in built.parts {
        if !taken.insert(part.name.clone()) {
            return Err(ck.err(
                0..0,
                "mobile",
                format!("body name `{}` is used twice", part.name),
            ));
        }
        let pose = Isometry3::translation(
            part.position_in_world_m.x,
            part.position_in_world_m.y,
            part.position_in_world_m.z,
        );
        bodies.push(Body::new(
            part.name,
            part.mass_kg,
            part.inertia_kg_m2,
            UnitQuaternion::identity(),
            pose,
            Some(part.shape),
        ));
    }
    Ok(built.links)
}
