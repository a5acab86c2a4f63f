//! URDF (ROS's Unified Robot Description Format) into a [`Model`].
//!
//! Read with `roxmltree` rather than the `urdf-rs` crate the issue names: `urdf-rs`
//! deserialises through serde and keeps no positions, and every error here must name the
//! file's line (a joint whose child link is missing, a non-positive-definite inertia, a mesh
//! that is not there), as must the list of ignored elements. The subset is small enough to
//! read by hand: `<link>` with `<inertial>` (`<origin xyz rpy>`, `<mass>`, `<inertia>`),
//! `<visual>` and `<collision>` (`box`, `cylinder`, `sphere`, `mesh`, with `<material>`
//! colours, also by name from the robot's top-level `<material>`s); `<joint>` of type
//! `revolute`, `continuous`, `prismatic`, `fixed` and `floating` with `<origin>`, `<axis>`
//! (default 1 0 0), `<limit lower upper>` (revolute and prismatic), `<dynamics damping
//! friction>` and `<mimic>`. `planar` joints are refused with their line (the scene format has
//! no planar joint). Everything else (`<transmission>`, `<gazebo>`, `<calibration>`, ...) is
//! listed once per element name in [`Model::ignored`].
//!
//! URDF's `rpy` is fixed-axis roll, pitch, yaw: R = Rz(yaw) · Ry(pitch) · Rx(roll), which is
//! `nalgebra`'s `from_euler_angles(roll, pitch, yaw)`.

mod geometry;
mod values;

use std::collections::HashMap;
use std::path::Path;

use nalgebra::{Matrix3, Unit, Vector3};
use roxmltree::Node;

use crate::error::ImportError;
use crate::model::{Ignored, Joint, JointKind, Link, Mimic, Model};
use crate::options::ImportOptions;
use values::Ctx;

/// Reads and parses a URDF file.
pub fn read(path: &Path, options: &ImportOptions) -> Result<Model, ImportError> {
    let text = crate::xml_file::read_text(path)?;
    parse(&text, path, options)
}

/// Parses URDF text; `path` names the file in messages and anchors relative mesh paths.
pub fn parse(text: &str, path: &Path, options: &ImportOptions) -> Result<Model, ImportError> {
    let doc = crate::xml_file::parse(text, path)?;
    let cx = Ctx {
        doc: &doc,
        path,
        ignored: Default::default(),
    };
    let robot = doc.root_element();
    if robot.tag_name().name() != "robot" {
        return Err(cx.invalid(
            robot,
            format!("<{}>", robot.tag_name().name()),
            "a URDF file's root element is <robot>",
        ));
    }
    let materials = geometry::materials(&cx, robot)?;
    let mut links = Vec::new();
    let mut joints = Vec::new();
    for node in robot.children().filter(Node::is_element) {
        match node.tag_name().name() {
            "link" => links.push(link(&cx, node, &materials, options)?),
            "joint" => joints.push(joint(&cx, node)?),
            "material" => {}
            other => cx.ignore(node, format!("<{other}>")),
        }
    }
    check_links(&cx, robot, &links, &joints)?;
    let ignored: Vec<Ignored> = cx.ignored.into_inner();
    Ok(Model {
        name: robot.attribute("name").unwrap_or("").to_owned(),
        source: path.to_owned(),
        gravity_m_per_s2: None,
        dt_secs: None,
        links,
        joints,
        loops: Vec::new(),
        contact_excludes: Vec::new(),
        initial_positions: Vec::new(),
        initial_velocities: Vec::new(),
        ignored,
    })
}

/// Every joint's links exist; one root link (URDF has no world link: the root stands on the
/// base pose).
fn check_links(cx: &Ctx, robot: Node, links: &[Link], joints: &[Joint]) -> Result<(), ImportError> {
    let names: HashMap<&str, &Link> = links.iter().map(|l| (l.name.as_str(), l)).collect();
    for l in links {
        if names[l.name.as_str()].at != l.at {
            return Err(ImportError::Invalid {
                at: l.at.clone(),
                element: format!("link \"{}\"", l.name),
                message: format!(
                    "a second link of this name (the first: {})",
                    names[l.name.as_str()].at
                ),
            });
        }
    }
    let mut parent_of: HashMap<&str, &Joint> = HashMap::new();
    for j in joints {
        if let Some(first) = parent_of.insert(j.child.as_str(), j) {
            return Err(ImportError::Invalid {
                at: j.at.clone(),
                element: format!("joint \"{}\"", j.name),
                message: format!(
                    "link \"{}\" has two parents: this joint and joint \"{}\" ({}) (a URDF \
                     robot is a tree)",
                    j.child, first.name, first.at
                ),
            });
        }
        for (role, name) in [("parent", &j.parent), ("child", &j.child)] {
            if !names.contains_key(name.as_str()) {
                return Err(ImportError::Invalid {
                    at: j.at.clone(),
                    element: format!("joint \"{}\"", j.name),
                    message: format!("its {role} link \"{name}\" does not exist"),
                });
            }
        }
    }
    if links.is_empty() {
        return Err(cx.invalid(robot, "<robot>".into(), "the robot has no <link>"));
    }
    let children: std::collections::HashSet<&str> =
        joints.iter().map(|j| j.child.as_str()).collect();
    let roots: Vec<&Link> = links
        .iter()
        .filter(|l| !children.contains(l.name.as_str()))
        .collect();
    if roots.len() > 1 {
        return Err(ImportError::Invalid {
            at: roots[1].at.clone(),
            element: format!("link \"{}\"", roots[1].name),
            message: format!(
                "a second root link (no joint has it as child; the first is \"{}\" at {}): \
                 a URDF robot is one tree",
                roots[0].name, roots[0].at
            ),
        });
    }
    Ok(())
}

fn link(
    cx: &Ctx,
    node: Node,
    materials: &HashMap<String, [f64; 4]>,
    options: &ImportOptions,
) -> Result<Link, ImportError> {
    let name = cx.required(node, "name", "<link>")?.to_owned();
    let element = format!("link \"{name}\"");
    let mut l = Link {
        name,
        mass_kg: 0.0,
        com_in_link: Vector3::zeros(),
        inertia_in_link_kg_m2: Matrix3::zeros(),
        visuals: Vec::new(),
        collisions: Vec::new(),
        at: cx.at(node),
    };
    for child in node.children().filter(Node::is_element) {
        match child.tag_name().name() {
            "inertial" => inertial(cx, child, &element, &mut l)?,
            "visual" => l
                .visuals
                .push(geometry::geom(cx, child, &element, materials, options)?),
            "collision" => l
                .collisions
                .push(geometry::geom(cx, child, &element, materials, options)?),
            other => cx.ignore(child, format!("<link><{other}>")),
        }
    }
    Ok(l)
}

fn inertial(cx: &Ctx, node: Node, element: &str, l: &mut Link) -> Result<(), ImportError> {
    let origin = cx.origin(node, element)?;
    let mass = cx
        .child(node, "mass")
        .ok_or_else(|| cx.invalid(node, element.into(), "<inertial> without <mass>"))?;
    l.mass_kg = cx.number(mass, "value", element)?;
    let i = cx
        .child(node, "inertia")
        .ok_or_else(|| cx.invalid(node, element.into(), "<inertial> without <inertia>"))?;
    let v = |a: &str| cx.number(i, a, element);
    let (xx, xy, xz, yy, yz, zz) = (
        v("ixx")?,
        v("ixy")?,
        v("ixz")?,
        v("iyy")?,
        v("iyz")?,
        v("izz")?,
    );
    let in_inertial = Matrix3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz);
    let r = origin.rotation.to_rotation_matrix();
    l.inertia_in_link_kg_m2 = r.matrix() * in_inertial * r.matrix().transpose();
    l.com_in_link = origin.translation.vector;
    for c in node.children().filter(Node::is_element) {
        let tag = c.tag_name().name();
        if !matches!(tag, "origin" | "mass" | "inertia") {
            cx.ignore(c, format!("<inertial><{tag}>"));
        }
    }
    Ok(())
}

fn joint(cx: &Ctx, node: Node) -> Result<Joint, ImportError> {
    let name = cx.required(node, "name", "<joint>")?.to_owned();
    let element = format!("joint \"{name}\"");
    let kind = match cx.required(node, "type", &element)? {
        "revolute" | "continuous" => JointKind::Revolute,
        "prismatic" => JointKind::Prismatic,
        "fixed" => JointKind::Fixed,
        "floating" => JointKind::Free,
        "planar" => {
            return Err(cx.invalid(
                node,
                element,
                "planar joints are not supported (the scene format has no planar joint): \
                 model it as two prismatic joints and a revolute one",
            ))
        }
        other => {
            return Err(cx.invalid(
                node,
                element,
                format!(
                    "unknown joint type \"{other}\" (revolute, continuous, prismatic, fixed, \
                     floating, planar)"
                ),
            ))
        }
    };
    let link_of = |tag: &str| -> Result<String, ImportError> {
        let n = cx
            .child(node, tag)
            .ok_or_else(|| cx.invalid(node, element.clone(), format!("no <{tag} link=...>")))?;
        Ok(cx.required(n, "link", &element)?.to_owned())
    };
    let axis = match cx.child(node, "axis") {
        Some(a) => cx.vector(a, "xyz", &element)?.unwrap_or(Vector3::x()),
        None => Vector3::x(),
    };
    if axis.norm() == 0.0 {
        return Err(cx.invalid(node, element, "the <axis> is zero"));
    }
    let mut j = Joint::new(
        name.clone(),
        kind,
        link_of("parent")?,
        link_of("child")?,
        cx.origin(node, &element)?,
        Unit::new_normalize(axis),
        cx.at(node),
    );
    if j.parent == j.child {
        return Err(cx.invalid(node, element, "a joint needs two different links"));
    }
    joint_details(cx, node, &element, &mut j)?;
    Ok(j)
}

/// `<limit>`, `<dynamics>`, `<mimic>`; other children ignored (listed).
fn joint_details(cx: &Ctx, node: Node, element: &str, j: &mut Joint) -> Result<(), ImportError> {
    let continuous = node.attribute("type") == Some("continuous");
    for c in node.children().filter(Node::is_element) {
        match c.tag_name().name() {
            "origin" | "parent" | "child" | "axis" => {}
            "limit"
                if matches!(j.kind, JointKind::Revolute | JointKind::Prismatic) && !continuous =>
            {
                let lo = cx.optional_number(c, "lower", element)?.unwrap_or(0.0);
                let hi = cx.optional_number(c, "upper", element)?.unwrap_or(0.0);
                if lo > hi {
                    return Err(cx.invalid(
                        c,
                        element.into(),
                        format!("<limit lower=\"{lo}\" upper=\"{hi}\">: lower is above upper"),
                    ));
                }
                j.limits = Some([lo, hi]);
            }
            "limit" => {} // effort and velocity only: nothing the simulation uses
            "dynamics" => {
                j.damping = cx.optional_number(c, "damping", element)?.unwrap_or(0.0);
                j.friction = cx.optional_number(c, "friction", element)?.unwrap_or(0.0);
            }
            "mimic" => {
                j.mimic = Some(Mimic {
                    joint: cx.required(c, "joint", element)?.to_owned(),
                    multiplier: cx.optional_number(c, "multiplier", element)?.unwrap_or(1.0),
                    offset: cx.optional_number(c, "offset", element)?.unwrap_or(0.0),
                });
            }
            other => cx.ignore(c, format!("<joint><{other}>")),
        }
    }
    Ok(())
}

/// A whole URDF document's rotation convention, for the tests.
#[cfg(test)]
pub(crate) fn rpy(r: f64, p: f64, y: f64) -> nalgebra::Isometry3<f64> {
    values::pose([0.0; 3], [r, p, y])
}

#[cfg(test)]
mod tests;
