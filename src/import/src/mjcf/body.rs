//! The `<worldbody>` tree: each `<body>` becomes a link with the joint that places it in its
//! parent (a body without joints is welded to it), its geoms (drawn and colliding) and its
//! mass properties (the `<inertial>`, or the geoms' as MuJoCo derives them). `<frame>`
//! elements move what they hold and pass their `childclass` on.

use nalgebra::{Isometry3, Matrix3, Translation3, UnitQuaternion, Vector3};
use roxmltree::Node;

use super::frame::{frame, nonzero};
use super::geom::GeomRead;
use super::inertia::{combine, geom_props, volume, MassProps};
use super::xml::{invalid, location, Attrs};
use super::Reader;
use crate::error::ImportError;
use crate::model::{GeomShape, Joint, JointKind, Link, WORLD};

/// Attributes of `<body>` the reader takes.
const BODY_KNOWN: [&str; 8] = [
    "name",
    "childclass",
    "pos",
    "quat",
    "axisangle",
    "euler",
    "xyaxes",
    "zaxis",
];
/// Attributes of `<joint>` the reader takes.
const JOINT_KNOWN: [&str; 15] = [
    "name",
    "class",
    "type",
    "pos",
    "axis",
    "range",
    "limited",
    "damping",
    "armature",
    "stiffness",
    "springref",
    "frictionloss",
    "ref",
    "group",
    "user",
];
/// Attributes of `<inertial>`.
const INERTIAL_KNOWN: [&str; 9] = [
    "pos",
    "quat",
    "axisangle",
    "euler",
    "xyaxes",
    "zaxis",
    "mass",
    "diaginertia",
    "fullinertia",
];

/// What a body's content (its own children and those of its `<frame>`s) holds.
#[derive(Default)]
struct Content<'a, 'input> {
    joints: Vec<(Node<'a, 'input>, &'a str, Isometry3<f64>)>,
    geoms: Vec<GeomRead>,
    inertial: Option<Node<'a, 'input>>,
    bodies: Vec<(Node<'a, 'input>, &'a str, Isometry3<f64>)>,
}

impl<'a, 'input> Reader<'a, 'input> {
    /// Reads the `<worldbody>`: its bodies (recursively); its own geoms are the fixed
    /// scenery, which the scene format has no place for (listed as ignored).
    pub(super) fn worldbody(&mut self, node: Node<'a, 'input>) -> Result<(), ImportError> {
        let mut content = Content::default();
        self.content(
            node,
            super::defaults::MAIN,
            Isometry3::identity(),
            &mut content,
        )?;
        if let Some((j, ..)) = content.joints.first() {
            return Err(invalid(self.file, *j, "the world cannot have a joint"));
        }
        for g in &content.geoms {
            self.log.note(
                "worldbody/geom (fixed scenery is not imported)".into(),
                g.geom.at.clone(),
            );
        }
        if let Some(i) = content.inertial {
            self.log
                .note("worldbody/inertial".into(), location(self.file, i));
        }
        for (b, class, f) in content.bodies {
            self.body(b, WORLD, class, f)?;
        }
        Ok(())
    }

    /// Reads one `<body>` placed at `parent_from_frame` in `parent`, its children classes
    /// defaulting to `class`.
    fn body(
        &mut self,
        node: Node<'a, 'input>,
        parent: &str,
        class: &'a str,
        parent_from_frame: Isometry3<f64>,
    ) -> Result<(), ImportError> {
        let attrs = Attrs::new(self.file, node, &Default::default());
        attrs.note_unknown(&BODY_KNOWN, &mut self.log);
        let name = match node.attribute("name") {
            Some(n) => n.to_owned(),
            None => format!("body{}", self.model.links.len() + 1),
        };
        if name == WORLD || self.model.links.iter().any(|l| l.name == name) {
            return Err(invalid(
                self.file,
                node,
                format!("the body name `{name}` is taken"),
            ));
        }
        let class = match node.attribute("childclass") {
            Some(c) => {
                self.defaults.check(self.file, node, c)?;
                c
            }
            None => class,
        };
        let parent_from_body = parent_from_frame * frame(&attrs, &self.compiler)?;
        let mut content = Content::default();
        self.content(node, class, Isometry3::identity(), &mut content)?;
        let mass = self.mass_props(node, &content)?;
        let visuals = content.geoms.iter().map(|g| g.geom.clone()).collect();
        let collisions = content
            .geoms
            .iter()
            .filter(|g| g.collides)
            .map(|g| g.geom.clone())
            .collect();
        self.model.links.push(Link {
            name: name.clone(),
            mass_kg: mass.mass_kg,
            com_in_link: mass.com,
            inertia_in_link_kg_m2: mass.inertia_kg_m2,
            visuals,
            collisions,
            at: location(self.file, node),
        });
        self.body_joint(node, parent, &name, parent_from_body, &content.joints)?;
        for (b, c, f) in content.bodies {
            self.body(b, &name, c, f)?;
        }
        Ok(())
    }

    /// The joint that places body `child` in `parent`: its one `<joint>` (or `<freejoint>`),
    /// or a weld when it has none. More than one joint is refused with the fix.
    fn body_joint(
        &mut self,
        node: Node<'a, 'input>,
        parent: &str,
        child: &str,
        parent_from_body: Isometry3<f64>,
        joints: &[(Node<'a, 'input>, &'a str, Isometry3<f64>)],
    ) -> Result<(), ImportError> {
        match joints {
            [] => {
                self.model.joints.push(Joint::new(
                    format!("{child}_weld"),
                    JointKind::Fixed,
                    parent,
                    child,
                    parent_from_body,
                    Vector3::z_axis(),
                    location(self.file, node),
                ));
                Ok(())
            }
            [(j, class, f)] => {
                let joint = self.joint(*j, class, f, parent, child, parent_from_body)?;
                self.model.joints.push(joint);
                Ok(())
            }
            [_, (second, ..), ..] => Err(invalid(
                self.file,
                *second,
                format!(
                    "body `{child}` has {} joints; a body may have one here (the scene format \
                     joins two bodies by one joint): split the body into nested bodies, one \
                     joint each, with the mass on the innermost and a small `<inertial>` on the \
                     others",
                    joints.len()
                ),
            )),
        }
    }

    /// Collects the children of a body or frame (`node`), with `body_from_frame` the frame
    /// they are given in and `class` their default class.
    fn content(
        &mut self,
        node: Node<'a, 'input>,
        class: &'a str,
        body_from_frame: Isometry3<f64>,
        out: &mut Content<'a, 'input>,
    ) -> Result<(), ImportError> {
        for child in node.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "body" => out.bodies.push((child, class, body_from_frame)),
                "joint" | "freejoint" => out.joints.push((child, class, body_from_frame)),
                "geom" => {
                    let geom = self.geom(child, class, &body_from_frame)?;
                    out.geoms.push(geom);
                }
                "inertial" if out.inertial.is_none() => out.inertial = Some(child),
                "inertial" => {
                    return Err(invalid(
                        self.file,
                        child,
                        "a body has at most one <inertial>",
                    ))
                }
                "frame" => {
                    let attrs = Attrs::new(self.file, child, &Default::default());
                    attrs.note_unknown(&BODY_KNOWN, &mut self.log);
                    let c = match child.attribute("childclass") {
                        Some(c) => {
                            self.defaults.check(self.file, child, c)?;
                            c
                        }
                        None => class,
                    };
                    let f = body_from_frame * frame(&attrs, &self.compiler)?;
                    self.content(child, c, f, out)?;
                }
                other => self
                    .log
                    .note(format!("<{other}>"), location(self.file, child)),
            }
        }
        Ok(())
    }

    /// The attributes of an element of `kind` with its class's defaults.
    pub(super) fn attrs(
        &self,
        node: Node<'a, 'input>,
        class: &'a str,
        kind: &str,
    ) -> Result<Attrs<'a, 'input>, ImportError> {
        let class = node.attribute("class").unwrap_or(class);
        let defaults = self.defaults.of(self.file, node, class, kind)?;
        Ok(Attrs::new(self.file, node, defaults))
    }

    /// One `<joint>` or `<freejoint>` of body `child`.
    fn joint(
        &mut self,
        node: Node<'a, 'input>,
        class: &'a str,
        body_from_frame: &Isometry3<f64>,
        parent: &str,
        child: &str,
        parent_from_body: Isometry3<f64>,
    ) -> Result<Joint, ImportError> {
        let free = node.tag_name().name() == "freejoint";
        let attrs = if free {
            Attrs::new(self.file, node, &Default::default())
        } else {
            self.attrs(node, class, "joint")?
        };
        attrs.note_unknown(&JOINT_KNOWN, &mut self.log);
        let kind = if free {
            JointKind::Free
        } else {
            match attrs.keyword("type", &["hinge", "slide", "ball", "free"])? {
                None | Some("hinge") => JointKind::Revolute,
                Some("slide") => JointKind::Prismatic,
                Some("ball") => JointKind::Ball,
                _ => JointKind::Free,
            }
        };
        if kind == JointKind::Free && parent != WORLD {
            return Err(invalid(
                self.file,
                node,
                format!("a free joint is allowed only in a top-level body, not in `{child}`"),
            ));
        }
        let angular = kind == JointKind::Revolute;
        let unit = if angular {
            self.compiler.rad_per_unit
        } else {
            1.0
        };
        let name = match attrs.get("name") {
            Some(n) => n.to_owned(),
            None => format!("{child}_joint"),
        };
        if self.model.joints.iter().any(|j| j.name == name) {
            return Err(invalid(
                self.file,
                node,
                format!("the joint name `{name}` is taken"),
            ));
        }
        let pos = Vector3::from(attrs.fixed::<3>("pos")?.unwrap_or([0.0; 3]));
        let axis = Vector3::from(attrs.fixed::<3>("axis")?.unwrap_or([0.0, 0.0, 1.0]));
        let axis = nonzero(&attrs, "axis", body_from_frame.rotation * axis)?;
        let anchor = body_from_frame * nalgebra::Point3::from(pos);
        let limits = self.limits(&attrs, kind, unit)?;
        let reference = attrs.number("ref")?.unwrap_or(0.0) * unit;
        let parent_from_child = at_zero(kind, &axis, &anchor.coords, reference, parent_from_body);
        if reference != 0.0 && matches!(kind, JointKind::Revolute | JointKind::Prismatic) {
            self.model
                .initial_positions
                .push((name.clone(), vec![reference]));
        }
        self.qpos_layout.push((name.clone(), kind));
        Ok(Joint {
            name,
            kind,
            parent: parent.to_owned(),
            child: child.to_owned(),
            parent_from_child,
            anchor_in_child: if kind == JointKind::Free {
                Vector3::zeros()
            } else {
                anchor.coords
            },
            axis_in_child: axis,
            limits,
            damping: attrs.non_negative("damping", 0.0)?,
            friction: attrs.non_negative("frictionloss", 0.0)?,
            armature: attrs.non_negative("armature", 0.0)?,
            stiffness: attrs.non_negative("stiffness", 0.0)?,
            spring_ref: attrs.number("springref")?.unwrap_or(0.0) * unit,
            mimic: None,
            at: location(self.file, node),
        })
    }

    /// A joint's limits from `range` and `limited` (with `autolimits`), in rad or m.
    fn limits(
        &mut self,
        attrs: &Attrs,
        kind: JointKind,
        unit: f64,
    ) -> Result<Option<[f64; 2]>, ImportError> {
        let range = attrs.fixed::<2>("range")?;
        let limited = match attrs.keyword("limited", &["true", "false", "auto"])? {
            Some("true") => true,
            Some("false") => false,
            _ if range.is_some() && !self.compiler.auto_limits => {
                return Err(attrs.bad(
                    "range",
                    "a range without `limited` needs <compiler autolimits=\"true\"> \
                     (MuJoCo refuses it too): add limited=\"true\"",
                ))
            }
            _ => range.is_some(),
        };
        if !limited {
            return Ok(None);
        }
        let Some([lo, hi]) = range else {
            return Err(attrs.bad("limited", "a limited joint needs a `range`"));
        };
        if lo > hi {
            return Err(attrs.bad(
                "range",
                format!("the lower end {lo} is above the upper {hi}"),
            ));
        }
        match kind {
            JointKind::Revolute | JointKind::Prismatic => Ok(Some([lo * unit, hi * unit])),
            _ => {
                self.log.note(
                    format!("joint@range of a {kind:?} joint"),
                    location(self.file, attrs.node),
                );
                Ok(None)
            }
        }
    }

    /// A body's mass properties: its `<inertial>`, or its geoms' (MuJoCo's `inertiafromgeom`).
    fn mass_props(&mut self, body: Node, content: &Content) -> Result<MassProps, ImportError> {
        let from_geoms = match (self.compiler.inertia_from_geom, content.inertial) {
            (Some(always), _) => always,
            (None, inertial) => inertial.is_none(),
        };
        if !from_geoms {
            return match content.inertial {
                Some(i) => self.inertial(i),
                None => Ok(MassProps::zero()),
            };
        }
        let mut parts = Vec::new();
        for read in &content.geoms {
            let g = &read.geom;
            if matches!(g.shape, GeomShape::Plane) {
                continue;
            }
            let m = match (read.mass_kg, volume(&g.shape)) {
                (Some(m), _) => m,
                (None, Some(v)) => v * read.density_kg_m3,
                (None, None) => 0.0,
            };
            let Some(p) = geom_props(&g.shape, m, &g.link_from_geom) else {
                return Err(ImportError::Invalid {
                    at: g.at.clone(),
                    element: "geom".into(),
                    message: format!(
                        "body `{}` takes its inertia from its geoms, and the inertia of a mesh \
                         geom is not computed yet: give the body an <inertial>",
                        body.attribute("name").unwrap_or("?")
                    ),
                });
            };
            parts.push(p);
        }
        Ok(combine(&parts))
    }

    /// An `<inertial>`: mass, centre and inertia in the body frame.
    fn inertial(&mut self, node: Node) -> Result<MassProps, ImportError> {
        let attrs = Attrs::new(self.file, node, &Default::default());
        attrs.note_unknown(&INERTIAL_KNOWN, &mut self.log);
        let f = frame(&attrs, &self.compiler)?;
        let mass = attrs
            .number("mass")?
            .ok_or_else(|| invalid(self.file, node, "an <inertial> needs a `mass`"))?;
        if mass < 0.0 {
            return Err(attrs.bad("mass", format!("{mass} is negative")));
        }
        let local = match (
            attrs.fixed::<3>("diaginertia")?,
            attrs.fixed::<6>("fullinertia")?,
        ) {
            (Some(d), None) => Matrix3::from_diagonal(&Vector3::from(d)),
            (None, Some([xx, yy, zz, xy, xz, yz])) => {
                Matrix3::new(xx, xy, xz, xy, yy, yz, xz, yz, zz)
            }
            (Some(_), Some(_)) => {
                return Err(attrs.bad(
                    "fullinertia",
                    "give `diaginertia` or `fullinertia`, not both",
                ))
            }
            (None, None) => {
                return Err(invalid(
                    self.file,
                    node,
                    "an <inertial> needs `diaginertia` or `fullinertia`",
                ))
            }
        };
        let r = f.rotation.to_rotation_matrix();
        Ok(MassProps {
            mass_kg: mass,
            com: f.translation.vector,
            inertia_kg_m2: r.matrix() * local * r.matrix().transpose(),
        })
    }
}

/// The child's frame at joint position zero: MuJoCo's `ref` is the joint position of the pose
/// the file draws, and the model's frames are at position zero, so a hinge turns back by
/// `reference` about its axis through the anchor and a slide moves back along its axis.
fn at_zero(
    kind: JointKind,
    axis: &nalgebra::Unit<Vector3<f64>>,
    anchor: &Vector3<f64>,
    reference: f64,
    parent_from_body: Isometry3<f64>,
) -> Isometry3<f64> {
    match kind {
        JointKind::Revolute => {
            let turn = UnitQuaternion::from_axis_angle(axis, -reference);
            let about = Translation3::from(*anchor);
            parent_from_body
                * (about * Isometry3::from_parts(Default::default(), turn) * about.inverse())
        }
        JointKind::Prismatic => {
            parent_from_body * Translation3::from(axis.into_inner() * -reference)
        }
        _ => parent_from_body,
    }
}
