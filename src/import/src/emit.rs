//! A [`Model`] as the text of an ar-multibody scene: the world frame at the initial pose,
//! every body at its centre of mass with its link's orientation, principal moments and axes,
//! joints with world anchors and axes, limits from the initial position.
//!
//! Forward kinematics at the initial positions (the file's, overridden by `--joint`), then the
//! base pose and the scale. Links joined by `fixed` joints are merged into their parent's body
//! by the parallel-axis theorem; their names stay as `[[grab]]` points at their frames'
//! origins. Every visual becomes a `[[body.visual]]` table in the body frame. With
//! `--collisions` the links' collision geoms become the bodies' shapes (the colliders, see
//! [`collisions`]) and the scene gets a `[contact]` table and the desk plane z = 0. What the
//! scene format cannot express yet (joint friction, springs, mimic couplings, ellipsoid visuals) is
//! never dropped silently: each gives a warning with the file and line. Numbers are written with Rust's shortest round-trip form (`{:?}`),
//! so that the text parses back to the same bits: importing to a file and simulating it is
//! the same as simulating the model directly.

mod bodies;
mod collisions;
mod inertia;
mod text;
mod tree;
mod velocity;
mod visuals;

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

use crate::error::{ImportError, Location};
use crate::model::{Geom, GeomShape, JointKind, LoopKind, Model, WORLD};
use crate::options::ImportOptions;
use bodies::{Held, Place};
use text::Writer;

/// The scene text of an import and what it could not express.
#[derive(Clone, Debug)]
pub struct Emitted {
    /// The scene (TOML).
    pub text: String,
    /// One line each (with file:line where there is one), for stderr.
    pub warnings: Vec<String>,
}

/// The scene of `model` under `options` (see the module docs).
pub fn scene_toml(model: &Model, options: &ImportOptions) -> Result<Emitted, ImportError> {
    let file_error = |message: String| ImportError::Invalid {
        at: Location {
            file: model.source.clone(),
            line: 0,
        },
        element: "robot".into(),
        message,
    };
    if !(options.scale > 0.0 && options.scale.is_finite()) {
        return Err(file_error(format!(
            "--scale {}: must be a positive number",
            options.scale
        )));
    }
    let finite = |v: &[f64; 3]| v.iter().all(|x| x.is_finite());
    if !finite(&options.base_at_m) || !finite(&options.base_rotation_rad) {
        return Err(file_error(
            "--base-at and --base-rotation must be finite".into(),
        ));
    }
    for l in &model.links {
        inertia::check_link(l)?;
    }
    let tree = tree::build(model, options)?;
    let grouped = bodies::group(model, &tree, options)?;
    let place = World {
        base: Isometry3::from_parts(
            Translation3::from(Vector3::from(options.base_at_m)),
            UnitQuaternion::from_scaled_axis(Vector3::from(options.base_rotation_rad)),
        ),
        scale: options.scale,
    };
    let mut warnings = ignored_warnings(model);
    warnings.extend(tree.warnings.iter().cloned());
    let mut w = Writer::new();
    w.header(model);
    let velocities = velocity::link_velocities(model, &tree)?;
    for b in &grouped.bodies {
        let collision = if options.collisions {
            let c = collisions::of_body(model, &tree, b, place.scale)?;
            warnings.extend(c.warnings.iter().cloned());
            Some(c)
        } else {
            None
        };
        body(&mut w, model, &tree, &place, b, collision.as_ref());
        if let Some(v) = &velocities {
            body_velocity(&mut w, &tree, &place, b, v);
        }
        warnings.extend(visuals::write(&mut w, model, &tree, b, place.scale));
    }
    joints(
        &mut w,
        model,
        &tree,
        &grouped,
        &place,
        options,
        &mut warnings,
    )?;
    loops(&mut w, model, &tree, &grouped, &place, &mut warnings);
    grabs(&mut w, model, &tree, &grouped, &place);
    contact(&mut w, model, &grouped, options, &mut warnings);
    Ok(Emitted {
        text: w.finish(),
        warnings,
    })
}

/// With `--collisions`, the `[contact]` table and the desk plane z = 0, and a warning for the
/// collisions of links merged into the ground (the desk stands for them); without, a warning
/// that the collisions are not used, naming the option.
fn contact(
    w: &mut Writer,
    model: &Model,
    g: &bodies::Bodies,
    options: &ImportOptions,
    warnings: &mut Vec<String>,
) {
    let source = model.source.display();
    let excludes = model.contact_excludes.len();
    if !options.collisions {
        let n: usize = model.links.iter().map(|l| l.collisions.len()).sum();
        if n > 0 {
            warnings.push(format!(
                "{source}: {n} collision shapes not used (the imported scene has no contact; \
                 --collisions makes them the bodies' colliders)"
            ));
        }
        if excludes > 0 {
            warnings.push(format!(
                "{source}: {excludes} contact exclusions not used (the imported scene has no \
                 contact)"
            ));
        }
        return;
    }
    let on_ground: usize = (0..model.links.len())
        .filter(|&l| g.place[l] == Place::Ground)
        .map(|l| model.links[l].collisions.len())
        .sum();
    if on_ground > 0 {
        warnings.push(format!(
            "{source}: {on_ground} collision shapes of links fixed to the ground are not used \
             (the desk plane z = 0 is the ground's collider)"
        ));
    }
    if excludes > 0 {
        warnings.push(format!(
            "{source}: {excludes} contact exclusions not used (in a scene only bodies joined \
             by a joint never collide)"
        ));
    }
    w.table_once("contact");
    w.table("plane");
    w.string("name", "desk");
    w.vector("normal", &Vector3::z());
    w.vector("point_in_world_m", &Vector3::zeros());
}

/// The file's frame and units into the world's: p_world = base · (scale · p_file).
struct World {
    base: Isometry3<f64>,
    scale: f64,
}

impl World {
    fn point(&self, p: &Vector3<f64>) -> Vector3<f64> {
        self.base.transform_point(&(p * self.scale).into()).coords
    }
    fn rotation(&self, pose: &Isometry3<f64>) -> UnitQuaternion<f64> {
        self.base.rotation * pose.rotation
    }
}

fn ignored_warnings(model: &Model) -> Vec<String> {
    model
        .ignored
        .iter()
        .map(|i| {
            let times = if i.count > 1 {
                format!(" ({} times)", i.count)
            } else {
                String::new()
            };
            format!("{}: {} ignored{times}", i.at, i.what)
        })
        .collect()
}

fn body(
    w: &mut Writer,
    model: &Model,
    tree: &tree::Tree,
    place: &World,
    b: &bodies::Body,
    collision: Option<&collisions::Collision>,
) {
    let top = &model.links[b.top];
    let world_from_top = &tree.world_from_link[b.top];
    let s = place.scale;
    let inertia = b.props.inertia * (s * s);
    let (moments, axes) = inertia::principal(&inertia);
    let com_world = place.point(&(world_from_top * nalgebra::Point3::from(b.props.com)).coords);
    let shape = match collision.and_then(|c| c.shape.clone()) {
        Some(collider) => collider,
        None => shape_of(model, b, s, b.props.mass_kg, &moments),
    };
    w.table("body");
    w.string("name", &top.name);
    w.number("mass_kg", b.props.mass_kg);
    w.vector("inertia_kg_m2", &moments);
    w.vector("inertia_rotation_rad", &axes.scaled_axis());
    w.vector("position_m", &com_world);
    w.vector(
        "rotation_rad",
        &place.rotation(world_from_top).scaled_axis(),
    );
    w.raw("shape", &shape);
    if collision.is_some_and(|c| c.shape.is_none()) {
        w.raw("collide", "false");
    }
}

/// A body's initial velocity (of its centre of mass) and angular velocity, world axes.
fn body_velocity(
    w: &mut Writer,
    tree: &tree::Tree,
    place: &World,
    b: &bodies::Body,
    v: &velocity::LinkVelocities,
) {
    let (v_origin, omega) = v[b.top];
    let world_from_top = &tree.world_from_link[b.top];
    let com = world_from_top * nalgebra::Point3::from(b.props.com);
    let v_com = v_origin + omega.cross(&(com.coords - world_from_top.translation.vector));
    w.vector(
        "velocity_m_per_s",
        &(place.base.rotation * v_com * place.scale),
    );
    w.vector("angular_velocity_rad_per_s", &(place.base.rotation * omega));
}

/// The body's shape (what the wind sees, and what is drawn in place of its mesh visuals): its
/// links' first primitive visual, else the box of its inertia. Its visuals are all drawn (see
/// [`visuals`]).
fn shape_of(
    model: &Model,
    b: &bodies::Body,
    s: f64,
    mass_kg: f64,
    moments: &Vector3<f64>,
) -> String {
    let visuals: Vec<&Geom> = b
        .links
        .iter()
        .flat_map(|&l| model.links[l].visuals.iter())
        .collect();
    let primitive = visuals.iter().find_map(|g| match g.shape {
        GeomShape::Box { size } => Some(format!(
            "{{ kind = \"box\", size_m = {} }}",
            text::array(&(size * s))
        )),
        GeomShape::Cylinder { radius, length } => Some(format!(
            "{{ kind = \"cylinder\", radius_m = {:?}, length_m = {:?} }}",
            radius * s,
            length * s
        )),
        GeomShape::Capsule { radius, length } => Some(format!(
            "{{ kind = \"capsule\", radius_m = {:?}, length_m = {:?} }}",
            radius * s,
            length * s
        )),
        GeomShape::Sphere { radius } => Some(format!(
            "{{ kind = \"sphere\", radius_m = {:?} }}",
            radius * s
        )),
        _ => None,
    });
    primitive.unwrap_or_else(|| {
        format!(
            "{{ kind = \"box\", size_m = {} }}",
            text::array(&inertia::equivalent_box(mass_kg, moments))
        )
    })
}

/// The name of the body a link went into (`ground` for the world and a massless base).
fn body_name<'m>(model: &'m Model, tree: &tree::Tree, g: &bodies::Bodies, link: &str) -> &'m str {
    match tree.index.get(link) {
        Some(&l) => match g.place[l] {
            Place::Body(b) => &model.links[g.bodies[b].top].name,
            Place::Ground => "ground",
        },
        None => "ground",
    }
}

fn joints(
    w: &mut Writer,
    model: &Model,
    tree: &tree::Tree,
    g: &bodies::Bodies,
    place: &World,
    options: &ImportOptions,
    warnings: &mut Vec<String>,
) -> Result<(), ImportError> {
    // Fixed bases with mass first (they have no joint of the file), then the file's joints.
    for b in &g.bodies {
        if b.held == Held::Ground(None) {
            let top = &model.links[b.top];
            w.table("joint");
            w.string("name", &format!("{}_to_ground", top.name));
            w.string("kind", "fixed");
            w.string("body1", "ground");
            w.string("body2", &top.name);
            let origin = tree.world_from_link[b.top].translation.vector;
            w.vector("anchor_in_world_m", &place.point(&origin));
        }
    }
    for (k, j) in model.joints.iter().enumerate() {
        let child = tree.index[&j.child];
        let kind = match j.kind {
            JointKind::Revolute => "hinge",
            JointKind::Prismatic => "prismatic",
            JointKind::Ball => "ball",
            JointKind::Fixed => {
                if g.place[child] == Place::Ground || tree.index.contains_key(&j.parent) {
                    continue; // merged into the parent's body or the ground
                }
                "fixed"
            }
            JointKind::Free | JointKind::Planar => continue,
        };
        let world_from_child = &tree.world_from_link[child];
        w.table("joint");
        w.string("name", &j.name);
        w.string("kind", kind);
        w.string("body1", body_name(model, tree, g, &j.parent));
        w.string("body2", body_name(model, tree, g, &j.child));
        let anchor = world_from_child * nalgebra::Point3::from(j.anchor_in_child);
        w.vector("anchor_in_world_m", &place.point(&anchor.coords));
        if matches!(j.kind, JointKind::Revolute | JointKind::Prismatic) {
            let axis = place.rotation(world_from_child) * j.axis_in_child.into_inner();
            w.vector("axis_in_world", &axis);
        }
        if !options.ignore_limits {
            limits(w, j, tree.q0[k], place.scale, warnings)?;
        }
        // Viscous damping: the scene's on hinges and prismatic joints. A length scale s
        // keeps the masses, so a hinge's N·m·s/rad scales as the inertia, by s².
        if j.damping != 0.0 && !options.ignore_damping {
            match j.kind {
                JointKind::Revolute => {
                    w.number("damping_n_m_s_per_rad", j.damping * place.scale.powi(2))
                }
                JointKind::Prismatic => w.number("damping_n_s_per_m", j.damping),
                _ => {}
            }
        }
        joint_warnings(j, options.ignore_damping, warnings);
    }
    Ok(())
}

/// `limits_rad` / `limits_m` from the initial position; an angle range reaching past ±π from
/// it is cut there (the scene measures angles within (−π, π)), with a warning.
fn limits(
    w: &mut Writer,
    j: &crate::model::Joint,
    q0: f64,
    scale: f64,
    warnings: &mut Vec<String>,
) -> Result<(), ImportError> {
    let Some([lo, hi]) = j.limits else {
        return Ok(());
    };
    if !(lo <= q0 && q0 <= hi) {
        return Err(tree::joint_error(
            j,
            format!(
                "the initial position {q0} is outside its limits [{lo}, {hi}] (set it with \
                 --joint {}=VALUE)",
                j.name
            ),
        ));
    }
    match j.kind {
        JointKind::Revolute => {
            let edge = std::f64::consts::PI * (1.0 - 1e-9);
            let (a, b) = (lo - q0, hi - q0);
            let (ca, cb) = (a.max(-edge), b.min(edge));
            if (ca, cb) != (a, b) {
                warnings.push(format!(
                    "{}: joint \"{}\": limits [{lo}, {hi}] rad reach more than π from the \
                     initial position {q0}: cut to [{ca}, {cb}] from it (the scene measures \
                     angles within (−π, π))",
                    j.at, j.name
                ));
            }
            w.array("limits_rad", &[ca, cb]);
        }
        JointKind::Prismatic => w.array("limits_m", &[(lo - q0) * scale, (hi - q0) * scale]),
        _ => warnings.push(format!(
            "{}: joint \"{}\": limits of a {:?} joint not simulated",
            j.at, j.name, j.kind
        )),
    }
    Ok(())
}

/// A warning for each property of a joint the scene format cannot express yet (damping and
/// friction not when the user left them out).
fn joint_warnings(j: &crate::model::Joint, no_damping: bool, warnings: &mut Vec<String>) {
    let mut say = |what: String| {
        warnings.push(format!(
            "{}: joint \"{}\": {what} not simulated yet (the scene format has no such joint \
             property)",
            j.at, j.name
        ));
    };
    if j.damping != 0.0
        && !no_damping
        && !matches!(j.kind, JointKind::Revolute | JointKind::Prismatic)
    {
        say(format!("damping {}", j.damping));
    }
    if j.friction != 0.0 && !no_damping {
        say(format!("friction {}", j.friction));
    }
    if j.armature != 0.0 {
        say(format!("armature {}", j.armature));
    }
    if j.stiffness != 0.0 {
        say(format!("stiffness {} (rest {})", j.stiffness, j.spring_ref));
    }
    if let Some(m) = &j.mimic {
        say(format!(
            "mimic of \"{}\" (multiplier {}, offset {})",
            m.joint, m.multiplier, m.offset
        ));
    }
}

fn loops(
    w: &mut Writer,
    model: &Model,
    tree: &tree::Tree,
    g: &bodies::Bodies,
    place: &World,
    warnings: &mut Vec<String>,
) {
    for c in &model.loops {
        let (b1, b2) = (
            body_name(model, tree, g, &c.link1),
            body_name(model, tree, g, &c.link2),
        );
        if b1 == b2 {
            warnings.push(format!(
                "{}: equality \"{}\": both links are in one rigid body \"{b1}\": nothing to close",
                c.at, c.name
            ));
            continue;
        }
        let world_from_link1 = match tree.index.get(&c.link1) {
            Some(&l) => tree.world_from_link[l],
            None => Isometry3::identity(),
        };
        let anchor = world_from_link1 * nalgebra::Point3::from(c.anchor_in_link1);
        w.table("joint");
        w.string("name", &c.name);
        w.string(
            "kind",
            match c.kind {
                LoopKind::Connect => "ball",
                LoopKind::Weld => "fixed",
            },
        );
        w.string("body1", b1);
        w.string("body2", b2);
        w.vector("anchor_in_world_m", &place.point(&anchor.coords));
    }
    debug_assert!(model
        .loops
        .iter()
        .all(|c| c.link1 != WORLD || c.link2 != WORLD));
}

/// The merged links' frames as grab points on their bodies.
fn grabs(w: &mut Writer, model: &Model, tree: &tree::Tree, g: &bodies::Bodies, place: &World) {
    for b in &g.bodies {
        for &l in &b.links[1..] {
            let origin = tree.world_from_link[l].translation.vector;
            w.table("grab");
            w.string("name", &model.links[l].name);
            w.string("body", &model.links[b.top].name);
            w.vector("point_in_world_m", &place.point(&origin));
        }
    }
}

#[cfg(test)]
mod tests;
