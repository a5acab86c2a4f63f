//! The MJCF reader: MuJoCo's XML model format into a [`Model`].
//!
//! Read with `roxmltree`, which keeps every element's position, so that each message names
//! the file, the line and the element. The subset taken (see the manual's import page):
//! `<compiler>` (`angle`, degrees by default as in MuJoCo; `eulerseq`; `meshdir`/`assetdir`;
//! `autolimits`; `inertiafromgeom`), `<default>` classes, `<option>` (`gravity`, `timestep`),
//! `<asset><mesh>`, the `<worldbody>` tree (bodies with one joint each: `hinge`, `slide`,
//! `ball`, `free`), `<equality>` `connect` and `weld`, `<contact><exclude>`, and `<keyframe>`.
//! Everything else is listed in [`Model::ignored`], once per kind, with its first place.
//!
//! Tree order is file order (depth first), which is also MuJoCo's order of `qpos`, so a
//! keyframe's numbers are matched to the joints in that order.

mod body;
mod defaults;
mod extra;
mod frame;
mod geom;
pub mod inertia;
mod xml;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;

use roxmltree::Node;

use crate::error::ImportError;
use crate::model::{JointKind, Model};
use crate::options::ImportOptions;
use defaults::Defaults;
use frame::Compiler;
use geom::MeshAsset;
use xml::{invalid, location, Attrs, IgnoredLog};

pub use frame::euler;

/// Reads the MJCF file at `path` (the keyframe named by `options.keyframe`, if any, sets the
/// initial joint positions).
pub fn read(path: &Path, options: &ImportOptions) -> Result<Model, ImportError> {
    let text = crate::xml_file::read_text(path)?;
    read_str(&text, path, options)
}

/// Reads MJCF text; `path` names it in messages and is where mesh files are looked up from.
pub fn read_str(text: &str, path: &Path, options: &ImportOptions) -> Result<Model, ImportError> {
    let doc = crate::xml_file::parse(text, path)?;
    let root = doc.root_element();
    if root.tag_name().name() != "mujoco" {
        return Err(invalid(
            path,
            root,
            "an MJCF file's root element is <mujoco>",
        ));
    }
    let mut reader = Reader {
        file: path,
        compiler: Compiler::default(),
        defaults: Defaults::default(),
        log: IgnoredLog::default(),
        meshes: BTreeMap::new(),
        qpos_layout: Vec::new(),
        model: Model {
            name: root.attribute("model").unwrap_or("mjcf").to_owned(),
            source: path.to_owned(),
            gravity_m_per_s2: None,
            dt_secs: None,
            links: Vec::new(),
            joints: Vec::new(),
            loops: Vec::new(),
            contact_excludes: Vec::new(),
            initial_positions: Vec::new(),
            initial_velocities: Vec::new(),
            ignored: Vec::new(),
        },
    };
    reader.read_root(root, options)?;
    let mut model = reader.model;
    model.ignored = reader.log.into_vec();
    Ok(model)
}

/// The state of one read.
struct Reader<'a, 'input> {
    file: &'a Path,
    compiler: Compiler,
    defaults: Defaults<'a, 'input>,
    log: IgnoredLog,
    meshes: BTreeMap<String, MeshAsset>,
    /// Joints in `qpos` order with their kinds (for keyframes).
    qpos_layout: Vec<(String, JointKind)>,
    model: Model,
}

/// The top-level sections, in the order they are read (a compiler setting applies to the
/// whole file wherever it stands).
const SECTIONS: [&str; 8] = [
    "compiler",
    "option",
    "default",
    "asset",
    "worldbody",
    "equality",
    "contact",
    "keyframe",
];

impl<'a, 'input> Reader<'a, 'input> {
    fn read_root(
        &mut self,
        root: Node<'a, 'input>,
        options: &ImportOptions,
    ) -> Result<(), ImportError> {
        root.attributes()
            .filter(|a| a.name() != "model")
            .for_each(|a| {
                self.log
                    .note(format!("mujoco@{}", a.name()), location(self.file, root))
            });
        let children: Vec<Node> = root.children().filter(Node::is_element).collect();
        for c in &children {
            if !SECTIONS.contains(&c.tag_name().name()) {
                self.log.note(
                    format!("<{}>", c.tag_name().name()),
                    location(self.file, *c),
                );
            }
        }
        let mut keyframes = Vec::new();
        for section in SECTIONS {
            for &c in children.iter().filter(|c| c.tag_name().name() == section) {
                match section {
                    "compiler" => self.compiler(c)?,
                    "option" => self.option(c)?,
                    "default" => self.defaults.add_top(self.file, c, &mut self.log)?,
                    "asset" => self.assets(c)?,
                    "worldbody" => self.worldbody(c)?,
                    "equality" => self.equality(c)?,
                    "contact" => self.contact(c)?,
                    _ => keyframes.push(c),
                }
            }
        }
        self.keyframe(&keyframes, options)
    }

    /// `<compiler>`.
    fn compiler(&mut self, node: Node<'a, 'input>) -> Result<(), ImportError> {
        let attrs = Attrs::new(self.file, node, &Default::default());
        attrs.note_unknown(
            &[
                "angle",
                "eulerseq",
                "meshdir",
                "assetdir",
                "autolimits",
                "inertiafromgeom",
            ],
            &mut self.log,
        );
        if let Some(a) = attrs.keyword("angle", &["degree", "radian"])? {
            self.compiler.rad_per_unit = if a == "radian" {
                1.0
            } else {
                std::f64::consts::PI / 180.0
            };
        }
        if let Some(seq) = attrs.get("eulerseq") {
            let bytes: [u8; 3] = seq
                .as_bytes()
                .try_into()
                .ok()
                .filter(|b: &[u8; 3]| b.iter().all(|c| b"xyzXYZ".contains(c)))
                .ok_or_else(|| {
                    attrs.bad("eulerseq", format!("`{seq}` is not 3 letters of xyzXYZ"))
                })?;
            self.compiler.euler_seq = bytes;
        }
        if let Some(d) = attrs.get("meshdir").or(attrs.get("assetdir")) {
            self.compiler.mesh_dir = Some(d.to_owned());
        }
        if let Some(a) = attrs.keyword("autolimits", &["true", "false"])? {
            self.compiler.auto_limits = a == "true";
        }
        if let Some(a) = attrs.keyword("inertiafromgeom", &["true", "false", "auto"])? {
            self.compiler.inertia_from_geom = match a {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            };
        }
        Ok(())
    }

    /// `<option>`: `gravity` and `timestep`.
    fn option(&mut self, node: Node<'a, 'input>) -> Result<(), ImportError> {
        let attrs = Attrs::new(self.file, node, &Default::default());
        attrs.note_unknown(&["gravity", "timestep"], &mut self.log);
        if let Some(g) = attrs.fixed::<3>("gravity")? {
            self.model.gravity_m_per_s2 = Some(g);
        }
        if let Some(dt) = attrs.number("timestep")? {
            if dt <= 0.0 {
                return Err(attrs.bad("timestep", format!("{dt} is not positive")));
            }
            self.model.dt_secs = Some(dt);
        }
        for c in node.children().filter(Node::is_element) {
            self.log.note(
                format!("option/{}", c.tag_name().name()),
                location(self.file, c),
            );
        }
        Ok(())
    }
}
