//! The MJCF sections after the tree: `<equality>` rows that close loops (`connect`, `weld`),
//! `<contact><exclude>` pairs, and the `<keyframe>` whose `qpos`/`qvel` set the initial state.

use roxmltree::Node;

use super::xml::{invalid, location, Attrs};
use super::Reader;
use crate::error::ImportError;
use crate::model::{JointKind, LoopClosure, LoopKind, WORLD};
use crate::options::ImportOptions;

impl<'a, 'input> Reader<'a, 'input> {
    /// A body name of the tree, or `world`; anything else is an error at the attribute.
    fn body_ref(&self, attrs: &Attrs, name: &str) -> Result<String, ImportError> {
        let Some(body) = attrs.get(name) else {
            return Err(invalid(
                self.file,
                attrs.node,
                format!("`{name}` is missing"),
            ));
        };
        if body == WORLD || self.model.links.iter().any(|l| l.name == body) {
            Ok(body.to_owned())
        } else {
            Err(attrs.bad(name, format!("no body `{body}`")))
        }
    }

    /// `<equality>`: `connect` and `weld` as loop closures; other kinds are listed as ignored.
    pub(super) fn equality(&mut self, node: Node<'a, 'input>) -> Result<(), ImportError> {
        for c in node.children().filter(Node::is_element) {
            let tag = c.tag_name().name();
            let kind = match tag {
                "connect" => LoopKind::Connect,
                "weld" => LoopKind::Weld,
                other => {
                    self.log
                        .note(format!("equality/{other}"), location(self.file, c));
                    continue;
                }
            };
            let attrs = Attrs::new(self.file, c, &Default::default());
            // solref/solimp soften MuJoCo's rows; ours are exact, so they are read as stiff.
            attrs.note_unknown(
                &[
                    "name", "class", "body1", "body2", "anchor", "solref", "solimp", "relpose",
                    "active",
                ],
                &mut self.log,
            );
            if attrs.has("site1") || attrs.has("site2") {
                return Err(invalid(
                    self.file,
                    c,
                    "an equality between sites is not read: give body1, body2 and anchor",
                ));
            }
            if kind == LoopKind::Weld && attrs.has("relpose") {
                self.log.note(
                    "weld@relpose (welded at the initial pose)".into(),
                    location(self.file, c),
                );
            }
            if attrs.get("active") == Some("false") {
                continue;
            }
            let link1 = self.body_ref(&attrs, "body1")?;
            let link2 = match attrs.get("body2") {
                Some(_) => self.body_ref(&attrs, "body2")?,
                None => WORLD.to_owned(),
            };
            if link1 == link2 {
                return Err(attrs.bad("body2", "an equality joins two different bodies"));
            }
            let anchor = attrs.fixed::<3>("anchor")?;
            if kind == LoopKind::Connect && anchor.is_none() {
                return Err(invalid(
                    self.file,
                    c,
                    "a connect needs an `anchor` (in body1's frame)",
                ));
            }
            let name = match attrs.get("name") {
                Some(n) => n.to_owned(),
                None => format!("{link1}_{link2}_{tag}"),
            };
            self.model.loops.push(LoopClosure {
                name,
                kind,
                link1,
                link2,
                anchor_in_link1: anchor.unwrap_or([0.0; 3]).into(),
                at: location(self.file, c),
            });
        }
        Ok(())
    }

    /// `<contact>`: `exclude` pairs; `pair` and the rest are listed as ignored.
    pub(super) fn contact(&mut self, node: Node<'a, 'input>) -> Result<(), ImportError> {
        for c in node.children().filter(Node::is_element) {
            if c.tag_name().name() != "exclude" {
                let what = format!("contact/{}", c.tag_name().name());
                self.log.note(what, location(self.file, c));
                continue;
            }
            let attrs = Attrs::new(self.file, c, &Default::default());
            attrs.note_unknown(&["name", "body1", "body2"], &mut self.log);
            let pair = (
                self.body_ref(&attrs, "body1")?,
                self.body_ref(&attrs, "body2")?,
            );
            self.model.contact_excludes.push(pair);
        }
        Ok(())
    }

    /// The keyframe named by `--keyframe` (none: MuJoCo's initial state, `qpos0`): its `qpos`
    /// (free: position and quaternion w x y z in the parent; ball: a quaternion; hinge, slide:
    /// the position, always radians) and `qvel` (free: the velocity of the body frame's origin,
    /// world axes, and the angular velocity, body axes; ball: angular velocity, body axes).
    pub(super) fn keyframe(
        &mut self,
        sections: &[Node<'a, 'input>],
        options: &ImportOptions,
    ) -> Result<(), ImportError> {
        let keys: Vec<Node> = sections
            .iter()
            .flat_map(|s| s.children().filter(Node::is_element))
            .filter(|k| k.tag_name().name() == "key")
            .collect();
        let Some(wanted) = &options.keyframe else {
            return Ok(());
        };
        let Some(&key) = keys
            .iter()
            .find(|k| k.attribute("name") == Some(wanted.as_str()))
        else {
            let names: Vec<&str> = keys.iter().filter_map(|k| k.attribute("name")).collect();
            return Err(ImportError::Invalid {
                at: crate::error::Location {
                    file: self.file.to_owned(),
                    line: sections.first().map_or(0, |s| location(self.file, *s).line),
                },
                element: "keyframe".into(),
                message: format!(
                    "--keyframe {wanted}: no <key name=\"{wanted}\"> (the file's keys: {})",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                ),
            });
        };
        let attrs = Attrs::new(self.file, key, &Default::default());
        attrs.note_unknown(&["name", "qpos", "qvel", "time"], &mut self.log);
        let sizes = |kind: JointKind| match kind {
            JointKind::Free => (7, 6),
            JointKind::Ball => (4, 3),
            _ => (1, 1),
        };
        let (nq, nv) = self
            .qpos_layout
            .iter()
            .fold((0, 0), |(q, v), (_, k)| (q + sizes(*k).0, v + sizes(*k).1));
        let split = |name: &str, n: usize, pick: fn((usize, usize)) -> usize| {
            let Some(values) = attrs.numbers(name)? else {
                return Ok(None);
            };
            if values.len() != n {
                return Err(attrs.bad(
                    name,
                    format!("{} numbers; the model's joints take {n}", values.len()),
                ));
            }
            let mut rest = values.as_slice();
            let mut out = Vec::new();
            for (joint, kind) in &self.qpos_layout {
                let (now, later) = rest.split_at(pick(sizes(*kind)));
                out.push((joint.clone(), now.to_vec()));
                rest = later;
            }
            Ok(Some(out))
        };
        let qpos = split("qpos", nq, |s| s.0)?;
        let qvel = split("qvel", nv, |s| s.1)?;
        if let Some(q) = qpos {
            self.model.initial_positions = q;
        }
        if let Some(v) = qvel {
            self.model.initial_velocities = v
                .into_iter()
                .filter(|(_, v)| v.iter().any(|x| *x != 0.0))
                .collect();
        }
        Ok(())
    }
}
