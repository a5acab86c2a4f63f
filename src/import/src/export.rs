//! A validated scene as MuJoCo's MJCF, so that a mechanism can be cross-checked in MuJoCo
//! (`scene export SCENE --mjcf OUT.xml`).
//!
//! Every scene body is an MJCF body whose frame is the scene's body frame (the centre of mass),
//! nested along a spanning tree of the joints ([`tree`]) with an `<inertial>` of its mass and
//! principal moments (`inertiafromgeom="false"`: the drawn geoms have no mass, and no contact).
//! Tree joints: hinge → `hinge`, prismatic → `slide`, ball → `ball`, fixed → none (welded),
//! slot → `slide` then `hinge` in one body; bodies not joined to the ground get a `freejoint`.
//! Joints that close loops become `equality` rows: ball → `connect`, fixed → `weld`, hinge →
//! two `connect`s on its axis; a prismatic or slot loop has no MJCF row and is left open with
//! a warning. Springs become spatial tendons between two sites (`stiffness`, `damping`,
//! `springlength`). What MJCF (or this exporter) cannot hold gives one warning each: force
//! elements, wind, contact, rigid groups, spring fracture, initial velocities of bodies that
//! are not free. Angles are radians (`<compiler angle="radian">`); numbers are written in
//! Rust's shortest round-trip form.

mod tree;

use std::fmt::Write as _;

use ar_dynamics::model::body::Body;
use ar_dynamics::model::joint::{Joint, JointKind};
use ar_dynamics::model::shape::Shape;
use ar_dynamics::scene::Scene;
use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

pub use tree::{spanning_tree, SpanningTree};

/// Distance (m) of a hinge loop's second `connect` from its anchor along the axis.
const HINGE_LOOP_SPAN_M: f64 = 0.1;

/// The MJCF text of a scene and what it could not express.
#[derive(Clone, Debug)]
pub struct Exported {
    /// The MJCF document.
    pub text: String,
    /// One line each, for stderr.
    pub warnings: Vec<String>,
}

/// The scene as MJCF (see the module docs).
pub fn mjcf(scene: &Scene) -> Exported {
    let tree = spanning_tree(scene);
    let mut x = Writer {
        scene,
        out: String::new(),
        warnings: Vec::new(),
    };
    let name = scene
        .path
        .file_stem()
        .map_or("scene".into(), |s| s.to_string_lossy().into_owned());
    let dt = scene.params.dt_secs;
    let g = scene.gravity_in_world;
    let _ = writeln!(
        x.out,
        "<!-- Exported by ar-multibody from {}: body frames at the centres of mass. -->",
        escape(&scene.path.display().to_string())
    );
    let _ = writeln!(x.out, "<mujoco model=\"{}\">", escape(&name));
    x.out
        .push_str("  <compiler angle=\"radian\" inertiafromgeom=\"false\" autolimits=\"true\"/>\n");
    let _ = writeln!(
        x.out,
        "  <option timestep=\"{dt:?}\" gravity=\"{}\" integrator=\"RK4\"/>",
        v3(&g)
    );
    x.out.push_str("  <worldbody>\n");
    x.sites(0, 2);
    for &c in &tree.children[0] {
        x.body(&tree, c, 2);
    }
    for &r in &tree.free_roots {
        x.body(&tree, r, 2);
    }
    x.out.push_str("  </worldbody>\n");
    x.loops(&tree);
    x.tendons();
    x.keyframe(&tree);
    x.out.push_str("</mujoco>\n");
    x.unsupported();
    Exported {
        text: x.out,
        warnings: x.warnings,
    }
}

struct Writer<'s> {
    scene: &'s Scene,
    out: String,
    warnings: Vec<String>,
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn v3(v: &Vector3<f64>) -> String {
    format!("{:?} {:?} {:?}", v.x, v.y, v.z)
}

fn quat(q: &UnitQuaternion<f64>) -> String {
    format!("{:?} {:?} {:?} {:?}", q.w, q.i, q.j, q.k)
}

fn world_from_body(b: &Body) -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::from(b.position_in_world),
        b.world_from_body_rotation,
    )
}

impl Writer<'_> {
    fn indent(&mut self, depth: usize) {
        self.out.push_str(&"  ".repeat(depth));
    }

    /// Body `b` and its subtree, at `depth`.
    fn body(&mut self, tree: &SpanningTree, b: usize, depth: usize) {
        let scene = self.scene;
        let body = &scene.bodies[b];
        let parent_pose = match tree.parent[b] {
            Some((p, _)) => world_from_body(&scene.bodies[p]),
            None => Isometry3::identity(),
        };
        let local = parent_pose.inverse() * world_from_body(body);
        self.indent(depth);
        let _ = writeln!(
            self.out,
            "<body name=\"{}\" pos=\"{}\" quat=\"{}\">",
            escape(&body.name),
            v3(&local.translation.vector),
            quat(&local.rotation)
        );
        self.indent(depth + 1);
        let _ = writeln!(
            self.out,
            "<inertial pos=\"0 0 0\" quat=\"{}\" mass=\"{:?}\" diaginertia=\"{}\"/>",
            quat(&body.body_from_principal),
            body.mass_kg,
            v3(&body.principal_inertia_kg_m2)
        );
        match tree.parent[b] {
            Some((_, j)) => self.tree_joint(j, b, depth + 1),
            None => {
                self.indent(depth + 1);
                let _ = writeln!(
                    self.out,
                    "<freejoint name=\"{}_free\"/>",
                    escape(&body.name)
                );
            }
        }
        if let Some(shape) = &body.shape {
            self.indent(depth + 1);
            let _ = writeln!(self.out, "{}", geom(shape));
        }
        self.sites(b, depth + 1);
        for &c in &tree.children[b] {
            self.body(tree, c, depth + 1);
        }
        self.indent(depth);
        self.out.push_str("</body>\n");
    }

    /// The joint `j` of the tree, written in its child body `child`.
    fn tree_joint(&mut self, j: usize, child: usize, depth: usize) {
        let joint = &self.scene.joints[j];
        let child_body = &self.scene.bodies[child];
        let anchor = if joint.body2 == child {
            joint.anchor2_in_body2
        } else {
            joint.anchor1_in_body1
        };
        // Axes are fixed in body 1; in the child's frame through the initial relative pose.
        let body1 = &self.scene.bodies[joint.body1];
        let to_child =
            child_body.world_from_body_rotation.inverse() * body1.world_from_body_rotation;
        // The scene's angle and travel are of body 2 relative to body 1: reversed in a tree
        // that hangs body 1 from body 2.
        let sign = if joint.body2 == child { 1.0 } else { -1.0 };
        let range = |r: Option<[f64; 2]>| {
            r.map(|[lo, hi]| {
                let (a, b) = if sign > 0.0 { (lo, hi) } else { (-hi, -lo) };
                format!(" range=\"{a:?} {b:?}\"")
            })
            .unwrap_or_default()
        };
        let name = escape(&joint.name);
        let pos = v3(&anchor);
        let damping = if joint.damping > 0.0 {
            format!(" damping=\"{:?}\"", joint.damping)
        } else {
            String::new()
        };
        let mut line = |s: String| {
            self.indent(depth);
            self.out.push_str(&s);
            self.out.push('\n');
        };
        match joint.kind {
            JointKind::Fixed => {}
            JointKind::Ball => line(format!(
                "<joint name=\"{name}\" type=\"ball\" pos=\"{pos}\"/>"
            )),
            JointKind::Hinge => line(format!(
                "<joint name=\"{name}\" type=\"hinge\" pos=\"{pos}\" axis=\"{}\"{}{damping}/>",
                v3(&(to_child * joint.hinge_axis_in_body1())),
                range(joint.limits.angle_rad)
            )),
            JointKind::Prismatic => line(format!(
                "<joint name=\"{name}\" type=\"slide\" pos=\"{pos}\" axis=\"{}\"{}{damping}/>",
                v3(&(to_child * joint.slide_axis_in_body1())),
                range(joint.limits.travel_m)
            )),
            JointKind::Slot => {
                line(format!(
                    "<joint name=\"{name}_slide\" type=\"slide\" pos=\"{pos}\" axis=\"{}\"{}/>",
                    v3(&(to_child * joint.slide_axis_in_body1())),
                    range(joint.limits.travel_m)
                ));
                line(format!(
                    "<joint name=\"{name}_hinge\" type=\"hinge\" pos=\"{pos}\" axis=\"{}\"{}/>",
                    v3(&(to_child * joint.hinge_axis_in_body1())),
                    range(joint.limits.angle_rad)
                ));
            }
        }
    }

    /// The sites of body `b`: its grab points and its springs' ends.
    fn sites(&mut self, b: usize, depth: usize) {
        let scene = self.scene;
        for g in scene.grab_points.iter().filter(|g| g.body == b) {
            self.indent(depth);
            let _ = writeln!(
                self.out,
                "<site name=\"grab_{}\" pos=\"{}\"/>",
                escape(&g.name),
                v3(&g.point_in_body)
            );
        }
        for s in &scene.springs {
            for (end, body, point) in [
                (1, s.body1, &s.point1_in_body1),
                (2, s.body2, &s.point2_in_body2),
            ] {
                if body == b {
                    self.indent(depth);
                    let _ = writeln!(
                        self.out,
                        "<site name=\"{}_{end}\" pos=\"{}\"/>",
                        escape(&s.name),
                        v3(point)
                    );
                }
            }
        }
    }

    /// The loop joints as equality rows, as stiff as MuJoCo allows at the step.
    fn loops(&mut self, tree: &SpanningTree) {
        if tree.loops.is_empty() {
            return;
        }
        let scene = self.scene;
        let soft = format!(
            "solref=\"{:?} 1\" solimp=\"0.9999 0.9999 0.001 0.5 2\"",
            2.0 * scene.params.dt_secs
        );
        self.out.push_str("  <equality>\n");
        for &j in &tree.loops {
            let joint = &scene.joints[j];
            let (b1, b2) = (
                escape(&scene.bodies[joint.body1].name),
                escape(&scene.bodies[joint.body2].name),
            );
            let name = escape(&joint.name);
            let connect = |out: &mut String, suffix: &str, anchor: &Vector3<f64>| {
                let _ = writeln!(
                    out,
                    "    <connect name=\"{name}{suffix}\" body1=\"{b1}\" body2=\"{b2}\" anchor=\"{}\" {soft}/>",
                    v3(anchor)
                );
            };
            match joint.kind {
                JointKind::Ball => connect(&mut self.out, "", &joint.anchor1_in_body1),
                JointKind::Hinge => {
                    let a = joint.anchor1_in_body1;
                    connect(&mut self.out, "", &a);
                    let far = a + joint.hinge_axis_in_body1() * HINGE_LOOP_SPAN_M;
                    connect(&mut self.out, "_axis", &far);
                }
                JointKind::Fixed => {
                    let _ = writeln!(
                        self.out,
                        "    <weld name=\"{name}\" body1=\"{b1}\" body2=\"{b2}\" {soft}/>"
                    );
                }
                JointKind::Prismatic | JointKind::Slot => self.warn_joint(joint),
            }
            if joint.limits.any() || joint.damping > 0.0 {
                self.warnings.push(format!(
                    "joint \"{}\": closes a loop (an equality row): its limits and damping are \
                     not exported",
                    joint.name
                ));
            }
        }
        self.out.push_str("  </equality>\n");
    }

    fn warn_joint(&mut self, joint: &Joint) {
        self.warnings.push(format!(
            "joint \"{}\": a {} joint that closes a loop has no MJCF equality row: the loop \
             is left open",
            joint.name,
            joint.kind.name()
        ));
    }

    /// The springs as spatial tendons between their two sites.
    fn tendons(&mut self) {
        let scene = self.scene;
        if scene.springs.is_empty() {
            return;
        }
        self.out.push_str("  <tendon>\n");
        for s in &scene.springs {
            let name = escape(&s.name);
            let _ = writeln!(
                self.out,
                "    <spatial name=\"{name}\" stiffness=\"{:?}\" damping=\"{:?}\" springlength=\"{:?}\">\n      <site site=\"{name}_1\"/>\n      <site site=\"{name}_2\"/>\n    </spatial>",
                s.stiffness_n_per_m, s.damping_n_s_per_m, s.rest_length_m
            );
            if s.fracture_extension_m.is_some() {
                self.warnings.push(format!(
                    "spring \"{}\": fracture is not exported (MuJoCo's tendons do not break)",
                    s.name
                ));
            }
        }
        self.out.push_str("  </tendon>\n");
    }

    /// The free bodies' initial velocities as the keyframe `initial` (MuJoCo starts at rest;
    /// load it with `mj_resetDataKeyframe`).
    fn keyframe(&mut self, tree: &SpanningTree) {
        let scene = self.scene;
        let moving = |b: &Body| {
            b.linear_velocity_in_world != Vector3::zeros()
                || b.angular_velocity_in_world != Vector3::zeros()
        };
        for (i, b) in scene.bodies.iter().enumerate() {
            if moving(b) && !tree.free_roots.contains(&i) {
                self.warnings.push(format!(
                    "body \"{}\": its initial velocity is not exported (only free bodies' are)",
                    b.name
                ));
            }
        }
        if !tree.free_roots.iter().any(|&r| moving(&scene.bodies[r])) {
            return;
        }
        // qvel in MuJoCo's order: the bodies depth first, ground's subtree before the free
        // roots, each body's joints in order.
        let mut qvel = Vec::new();
        let mut stack: Vec<usize> = tree.free_roots.iter().rev().copied().collect();
        stack.extend(tree.children[0].iter().rev());
        while let Some(b) = stack.pop() {
            let body = &scene.bodies[b];
            match tree.parent[b] {
                None => {
                    let w_local =
                        body.world_from_body_rotation.inverse() * body.angular_velocity_in_world;
                    qvel.extend(body.linear_velocity_in_world.iter());
                    qvel.extend(w_local.iter());
                }
                Some((_, j)) => qvel.extend(std::iter::repeat_n(
                    0.0,
                    match scene.joints[j].kind {
                        JointKind::Fixed => 0,
                        JointKind::Hinge | JointKind::Prismatic => 1,
                        JointKind::Slot => 2,
                        JointKind::Ball => 3,
                    },
                )),
            }
            stack.extend(tree.children[b].iter().rev());
        }
        let text: Vec<String> = qvel.iter().map(|v| format!("{v:?}")).collect();
        let _ = writeln!(
            self.out,
            "  <keyframe>\n    <key name=\"initial\" qvel=\"{}\"/>\n  </keyframe>",
            text.join(" ")
        );
    }

    /// One warning for each kind of scene content MJCF does not get.
    fn unsupported(&mut self) {
        let scene = self.scene;
        for f in &scene.forces {
            self.warnings.push(format!(
                "force \"{}\": force elements are not exported",
                f.name
            ));
        }
        let mut say = |yes: bool, what: &str| {
            if yes {
                self.warnings.push(format!("{what} not exported"));
            }
        };
        say(scene.wind.is_some(), "[wind]:");
        say(
            scene.contact.is_some(),
            "contact ([contact], [[plane]], [[static]]):",
        );
        say(!scene.rigid_groups.is_empty(), "rigid groups:");
        say(!scene.supports.is_empty(), "[[support]] (drawn only):");
    }
}

/// A body's shape as a massless geom that does not collide (MJCF sizes are halves).
fn geom(shape: &Shape) -> String {
    let half_box = |size_m: [f64; 3]| {
        let [x, y, z] = size_m.map(|s| s / 2.0);
        ("box", format!("{x:?} {y:?} {z:?}"))
    };
    let (kind, size) = match *shape {
        // Drawn only (no contact in the export): the box that holds the hull stands in for it
        // (an MJCF mesh asset of its points would draw it exactly).
        Shape::Convex { .. } => half_box(shape.centred_box_m()),
        Shape::Box { size_m } => half_box(size_m),
        Shape::Cylinder { radius_m, length_m } => {
            ("cylinder", format!("{radius_m:?} {:?}", length_m / 2.0))
        }
        Shape::Capsule { radius_m, length_m } => {
            ("capsule", format!("{radius_m:?} {:?}", length_m / 2.0))
        }
        Shape::Sphere { radius_m } => ("sphere", format!("{radius_m:?}")),
    };
    format!("<geom type=\"{kind}\" size=\"{size}\" contype=\"0\" conaffinity=\"0\"/>")
}
