//! Calder-style mobiles: a tree of bars and hanging plates ("fish") described by geometry
//! only; the program computes the masses that make every bar hang level.
//!
//! A scene's `[mobile]` table lists bars (`[[mobile.bar]]`: length, where along it the bar
//! hangs, and what hangs at its left and right ends) and fish (`[[mobile.fish]]`: a box,
//! optionally with a part hanging `below` it). The bar that nothing hangs from is the top; it
//! is nailed to a fixed point by a ball joint (`nail`), and every other part hangs by a ball
//! joint from the end of its parent bar or from the middle of its parent fish's bottom edge.
//!
//! **Masses.** Bars are rods of square section and a given density (steel by default), so
//! their masses follow from their geometry. The rest of the total mass is shared out top
//! down: a bar carrying a subtree of mass s (its own mass m_b included) that hangs at a point
//! a from its left end and b from its right end (a + b = L) is level when the torques of its
//! loads balance about the hanging point, M_L a + m_b (a − L/2) = M_R b, with
//! M_L + M_R + m_b = s; hence
//!
//! ```text
//! M_L = s · b / L − m_b / 2,     M_R = s · a / L − m_b / 2
//! ```
//!
//! — the bottom-up mass ratios of the arm lengths, with the total mass as the parameter.
//! A leaf fish's mass is what its parent's split gives it; its inertia is that of a uniform
//! box of that mass. A fish may also carry a part hanging from the middle of its bottom edge
//! (`below`, the single-child components of the virtual-mobile paper's Steel Fish, whose
//! Jacobian pattern has components with one child): such a plate weighs what its geometry
//! gives (plate density × volume) and passes the rest of its subtree's mass down, which keeps
//! every bar level because the whole chain hangs on the vertical through its joint. A total
//! too small to carry the bars and plates is refused.
//!
//! **Stability.** Each part hangs `drop_m` below its joint (a stiff wire, part of the body),
//! so the loads at a bar's ends lie below its hanging point and a tilted bar rights itself.
//!
//! **Pose.** In the initial pose every bar lies along world +x ("left" is −x), everything in
//! the x–z plane below the nail; fish are boxes whose `size_m` is given along x, y, z.

use std::collections::HashMap;
use std::ops::Range;

use nalgebra::Vector3;
use serde::Deserialize;
use toml::Spanned;

use super::checker::name_problem;
use crate::model::shape::Shape;

/// Density of steel, the default for the rods (kg/m³).
pub const STEEL_KG_PER_M3: f64 = 7850.0;

/// The `[mobile]` table of a scene file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MobileDef {
    /// Total mass of the mobile, bars included (kg).
    pub total_mass_kg: Spanned<f64>,
    /// The fixed point the top bar hangs from (world, m).
    #[serde(deserialize_with = "super::array3::spanned")]
    pub nail_in_world_m: Spanned<[f64; 3]>,
    /// Thickness of the bars' blades, along y in the initial pose (m).
    pub bar_thickness_m: Spanned<f64>,
    /// Height of the bars' blades, along z (m).
    pub bar_height_m: Spanned<f64>,
    /// Density of the bars (kg/m³); steel if absent.
    #[serde(default)]
    pub bar_density_kg_per_m3: Option<Spanned<f64>>,
    /// Density of the fish that carry a part below them (kg/m³); steel if absent.
    #[serde(default)]
    pub plate_density_kg_per_m3: Option<Spanned<f64>>,
    /// The bars.
    #[serde(rename = "bar")]
    pub bars: Vec<BarDef>,
    /// The hanging plates.
    #[serde(rename = "fish")]
    pub fish: Vec<FishDef>,
}

/// A bar of the mobile.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BarDef {
    /// Unique name (also the body's name).
    pub name: Spanned<String>,
    /// Length (m).
    pub length_m: Spanned<f64>,
    /// Where it hangs, as a fraction of the length from the left end (0 < hang_at < 1).
    pub hang_at: Spanned<f64>,
    /// From the joint it hangs from down to its axis (m).
    pub drop_m: Spanned<f64>,
    /// What hangs at the left (−x) end: a bar or a fish, by name.
    pub left: Spanned<String>,
    /// What hangs at the right (+x) end.
    pub right: Spanned<String>,
}

/// A hanging plate.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FishDef {
    /// Unique name (also the body's name).
    pub name: Spanned<String>,
    /// Box edges along world x, y, z in the initial pose (m).
    #[serde(deserialize_with = "super::array3::spanned")]
    pub size_m: Spanned<[f64; 3]>,
    /// From the joint it hangs from down to its top edge (m).
    pub drop_m: Spanned<f64>,
    /// A bar or fish hanging from the middle of this fish's bottom edge, by name.
    #[serde(default)]
    pub below: Option<Spanned<String>>,
}

/// A mobile description that cannot be built: where (byte span in the scene text), which
/// field, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct MobileError {
    /// Byte range of the offending value in the scene text.
    pub span: Range<usize>,
    /// The field, e.g. `mobile.bar[2].hang_at`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// One rigid part of a built mobile.
#[derive(Debug, Clone, PartialEq)]
pub struct MobilePart {
    /// Name.
    pub name: String,
    /// True for a bar, false for a fish.
    pub is_bar: bool,
    /// Mass (kg), computed.
    pub mass_kg: f64,
    /// Principal moments of inertia about the centre of mass, along the world axes of the
    /// initial pose (kg·m²).
    pub inertia_kg_m2: Vector3<f64>,
    /// Centre of mass in the initial pose (world, m); the body frame is world-aligned there.
    pub position_in_world_m: Vector3<f64>,
    /// Visual shape (a box).
    pub shape: Shape,
}

/// A ball joint of a built mobile: `parent` is `None` for the nail (the fixed ground).
#[derive(Debug, Clone, PartialEq)]
pub struct MobileLink {
    /// Joint name: `nail`, or `<parent>-<child>`.
    pub name: String,
    /// The upper part, `None` for the ground.
    pub parent: Option<String>,
    /// The hanging part.
    pub child: String,
    /// The joint's position in the initial pose (world, m).
    pub anchor_in_world_m: Vector3<f64>,
}

/// A mobile ready to become bodies and ball joints.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltMobile {
    /// Parts, top bar first, parents before children.
    pub parts: Vec<MobilePart>,
    /// Joints, the nail first.
    pub links: Vec<MobileLink>,
}

enum Node<'a> {
    Bar(usize, &'a BarDef),
    Fish(usize, &'a FishDef),
}

fn box_inertia(mass_kg: f64, size: [f64; 3]) -> Vector3<f64> {
    let [x, y, z] = size.map(|s| s * s);
    Vector3::new(y + z, x + z, x + y) * (mass_kg / 12.0)
}

fn err(span: Range<usize>, field: String, message: String) -> MobileError {
    MobileError {
        span,
        field,
        message,
    }
}

/// The value if it is finite and positive.
fn positive(v: &Spanned<f64>, field: String) -> Result<f64, MobileError> {
    let x = *v.get_ref();
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(err(v.span(), field, format!("must be positive, got {x}")))
    }
}

/// The mobile's numbers, checked: total mass (kg), the bars' section (m) and density and the
/// plates' density (kg/m³), and the nail (world, m).
struct Settings {
    total: f64,
    thickness: f64,
    height: f64,
    density: f64,
    plate_density: f64,
    nail: [f64; 3],
}

/// The parts by name, bars first: index k of a part is its node index; found by name in
/// constant time, so that a mobile of 2^15 parts is set up in milliseconds (a search per
/// reference took 21 s).
struct Names<'a> {
    list: Vec<(&'a str, Node<'a>)>,
    index: HashMap<&'a str, usize>,
}

impl Names<'_> {
    fn len(&self) -> usize {
        self.list.len()
    }

    /// The node index of the part named `n`.
    fn find(&self, n: &str) -> Option<usize> {
        self.index.get(n).copied()
    }
}

impl<'a> std::ops::Index<usize> for Names<'a> {
    type Output = (&'a str, Node<'a>);

    fn index(&self, k: usize) -> &Self::Output {
        &self.list[k]
    }
}

impl MobileDef {
    /// Checks the description, computes the masses and lays the parts out.
    pub fn build(&self) -> Result<BuiltMobile, MobileError> {
        let settings = self.settings()?;
        // Names: unique across bars and fish; every reference resolves; each part hangs once.
        let names = self.names()?;
        let parent_of = self.parents(&names)?;
        let top = self.top(&names, &parent_of)?;
        let mut layout = Layout {
            def: self,
            settings: &settings,
            names: &names,
            parts: Vec::with_capacity(names.len()),
            links: vec![],
            stack: vec![],
        };
        layout.run(top)?;
        let Layout { parts, links, .. } = layout;
        if parts.len() != names.len() {
            return Err(err(
                self.total_mass_kg.span(),
                "mobile".into(),
                "some parts do not hang from the top bar (a loop?)".into(),
            ));
        }
        Ok(BuiltMobile { parts, links })
    }

    /// The table's numbers, checked.
    fn settings(&self) -> Result<Settings, MobileError> {
        let total = positive(&self.total_mass_kg, "mobile.total_mass_kg".into())?;
        let thickness = positive(&self.bar_thickness_m, "mobile.bar_thickness_m".into())?;
        let height = positive(&self.bar_height_m, "mobile.bar_height_m".into())?;
        let density = match &self.bar_density_kg_per_m3 {
            Some(d) => positive(d, "mobile.bar_density_kg_per_m3".into())?,
            None => STEEL_KG_PER_M3,
        };
        let plate_density = match &self.plate_density_kg_per_m3 {
            Some(d) => positive(d, "mobile.plate_density_kg_per_m3".into())?,
            None => STEEL_KG_PER_M3,
        };
        let nail = *self.nail_in_world_m.get_ref();
        if !nail.iter().all(|c| c.is_finite()) {
            return Err(err(
                self.nail_in_world_m.span(),
                "mobile.nail_in_world_m".into(),
                "every component must be a finite number".into(),
            ));
        }
        Ok(Settings {
            total,
            thickness,
            height,
            density,
            plate_density,
            nail,
        })
    }

    /// The bars' and fish's names, each valid and used once.
    fn names(&self) -> Result<Names<'_>, MobileError> {
        let mut list = Vec::with_capacity(self.bars.len() + self.fish.len());
        for (i, b) in self.bars.iter().enumerate() {
            list.push((b.name.get_ref().as_str(), Node::Bar(i, b)));
        }
        for (i, f) in self.fish.iter().enumerate() {
            list.push((f.name.get_ref().as_str(), Node::Fish(i, f)));
        }
        let mut index = HashMap::with_capacity(list.len());
        for (k, (n, node)) in list.iter().enumerate() {
            let kind = match node {
                Node::Bar(..) => "bar",
                Node::Fish(..) => "fish",
            };
            let problem = name_problem(n, kind, &["ground"]).or_else(|| {
                (index.insert(*n, k).is_some()).then(|| format!("name `{n}` is used twice"))
            });
            if let Some(problem) = problem {
                let (span, field) = match node {
                    Node::Bar(i, b) => (b.name.span(), format!("mobile.bar[{i}].name")),
                    Node::Fish(i, f) => (f.name.span(), format!("mobile.fish[{i}].name")),
                };
                return Err(err(span, field, problem));
            }
        }
        Ok(Names { list, index })
    }

    /// Each part's parent (the bar or fish it hangs from): every reference resolves, and
    /// each part hangs once and not from itself.
    fn parents(&self, names: &Names) -> Result<Vec<Option<usize>>, MobileError> {
        let mut parent_of: Vec<Option<usize>> = vec![None; names.len()];
        let hangers = self.bars.iter().enumerate().flat_map(|(i, b)| {
            [
                (i, format!("mobile.bar[{i}].left"), &b.left),
                (i, format!("mobile.bar[{i}].right"), &b.right),
            ]
        });
        let under_fish = self.fish.iter().enumerate().filter_map(|(j, f)| {
            let k = self.bars.len() + j;
            f.below
                .as_ref()
                .map(|c| (k, format!("mobile.fish[{j}].below"), c))
        });
        for (i, field, child) in hangers.chain(under_fish) {
            let Some(c) = names.find(child.get_ref()) else {
                return Err(err(
                    child.span(),
                    field,
                    format!("no bar or fish is named `{}`", child.get_ref()),
                ));
            };
            if parent_of[c].is_some() || c == i {
                return Err(err(
                    child.span(),
                    field,
                    format!(
                        "`{}` already hangs from a part (or from itself)",
                        child.get_ref()
                    ),
                ));
            }
            parent_of[c] = Some(i);
        }
        Ok(parent_of)
    }

    /// The one part that hangs from nothing, which must be a bar.
    fn top(&self, names: &Names, parent_of: &[Option<usize>]) -> Result<usize, MobileError> {
        let roots: Vec<usize> = (0..names.len())
            .filter(|&k| parent_of[k].is_none())
            .collect();
        match roots.as_slice() {
            [r] if *r < self.bars.len() => Ok(*r),
            _ => {
                let list: Vec<&str> = roots.iter().map(|&k| names[k].0).collect();
                Err(err(
                    self.total_mass_kg.span(),
                    "mobile".into(),
                    format!(
                        "exactly one bar must hang from the nail; parts hanging from nothing: [{}]",
                        list.join(", ")
                    ),
                ))
            }
        }
    }
}

/// The top-down layout: each subtree's mass split and its parts placed, depth first.
struct Layout<'a> {
    def: &'a MobileDef,
    settings: &'a Settings,
    names: &'a Names<'a>,
    parts: Vec<MobilePart>,
    links: Vec<MobileLink>,
    /// (node index, subtree mass, joint position it hangs from, parent name)
    stack: Vec<(usize, f64, Vector3<f64>, Option<String>)>,
}

impl Layout<'_> {
    /// The error of a total mass too small for a part's load (`message` says which).
    fn too_little(&self, message: String) -> MobileError {
        err(
            self.def.total_mass_kg.span(),
            "mobile.total_mass_kg".into(),
            message,
        )
    }

    /// Lays out the tree from `top`, which hangs from the nail with the total mass.
    fn run(&mut self, top: usize) -> Result<(), MobileError> {
        let s = self.settings;
        self.stack.push((top, s.total, Vector3::from(s.nail), None));
        let mut visited = 0;
        while let Some((k, mass, joint, parent)) = self.stack.pop() {
            visited += 1;
            if visited > self.names.len() {
                break;
            }
            let name = self.names[k].0.to_string();
            self.links.push(MobileLink {
                name: parent
                    .as_ref()
                    .map_or_else(|| "nail".to_string(), |p| format!("{p}-{name}")),
                parent,
                child: name.clone(),
                anchor_in_world_m: joint,
            });
            match self.names[k].1 {
                Node::Fish(i, f) => self.fish(i, f, name, mass, joint)?,
                Node::Bar(i, b) => self.bar(i, b, name, mass, joint)?,
            }
        }
        Ok(())
    }

    /// Fish `i` carrying `mass` (kg) in all from `joint`: its plate, and what hangs below it
    /// with the rest.
    fn fish(
        &mut self,
        i: usize,
        f: &FishDef,
        name: String,
        mass: f64,
        joint: Vector3<f64>,
    ) -> Result<(), MobileError> {
        let size = *f.size_m.get_ref();
        if !size.iter().all(|s| s.is_finite() && *s > 0.0) {
            return Err(err(
                f.size_m.span(),
                format!("mobile.fish[{i}].size_m"),
                "every edge must be positive".into(),
            ));
        }
        let drop = positive(&f.drop_m, format!("mobile.fish[{i}].drop_m"))?;
        let centre = joint - Vector3::z() * (drop + size[2] / 2.0);
        let own_mass = match &f.below {
            None => mass,
            Some(child) => {
                let plate = self.settings.plate_density * size.iter().product::<f64>();
                let rest = mass - plate;
                if rest <= 0.0 {
                    let total = self.settings.total;
                    return Err(self.too_little(format!(
                        "{total} kg is too little: fish `{name}` ({plate:.4} kg of plate) carries {mass:.4} kg in all, which leaves nothing for `{}` below it; raise the total or thin the plate",
                        child.get_ref()
                    )));
                }
                if let Some(c) = self.names.find(child.get_ref()) {
                    let bottom = centre - Vector3::z() * (size[2] / 2.0);
                    self.stack.push((c, rest, bottom, Some(name.clone())));
                }
                plate
            }
        };
        self.parts.push(MobilePart {
            name,
            is_bar: false,
            mass_kg: own_mass,
            inertia_kg_m2: box_inertia(own_mass, size),
            position_in_world_m: centre,
            shape: Shape::Box { size_m: size },
        });
        Ok(())
    }

    /// Bar `i` carrying `mass` (kg) in all from `joint`: the split between its ends that
    /// keeps it level, and its two subtrees.
    fn bar(
        &mut self,
        i: usize,
        b: &BarDef,
        name: String,
        mass: f64,
        joint: Vector3<f64>,
    ) -> Result<(), MobileError> {
        let Settings {
            total,
            thickness,
            height,
            density,
            ..
        } = *self.settings;
        let f = |s: &str| format!("mobile.bar[{i}].{s}");
        let length = positive(&b.length_m, f("length_m"))?;
        let drop = positive(&b.drop_m, f("drop_m"))?;
        let hang_at = *b.hang_at.get_ref();
        if !(hang_at > 0.0 && hang_at < 1.0) {
            return Err(err(
                b.hang_at.span(),
                f("hang_at"),
                format!("must be strictly between 0 and 1, got {hang_at}"),
            ));
        }
        let size = [length, thickness, height];
        let bar_mass = density * length * thickness * height;
        let (a, bb) = (hang_at * length, (1.0 - hang_at) * length);
        let left_mass = mass * bb / length - bar_mass / 2.0;
        let right_mass = mass * a / length - bar_mass / 2.0;
        if left_mass <= 0.0 || right_mass <= 0.0 {
            return Err(self.too_little(format!(
                "{total} kg is too little: bar `{name}` ({bar_mass:.4} kg) carries {mass:.4} kg in all, which leaves {left_mass:.4} kg for its left end and {right_mass:.4} kg for its right end; raise the total or thin the rods"
            )));
        }
        let centre = joint - Vector3::z() * drop - Vector3::x() * (a - length / 2.0);
        self.parts.push(MobilePart {
            name: name.clone(),
            is_bar: true,
            mass_kg: bar_mass,
            inertia_kg_m2: box_inertia(bar_mass, size),
            position_in_world_m: centre,
            shape: Shape::Box { size_m: size },
        });
        let left_end = centre - Vector3::x() * (length / 2.0);
        let right_end = centre + Vector3::x() * (length / 2.0);
        // Right pushed first so that the left subtree is laid out first.
        for (child, m, end) in [
            (&b.right, right_mass, right_end),
            (&b.left, left_mass, left_end),
        ] {
            if let Some(c) = self.names.find(child.get_ref()) {
                self.stack.push((c, m, end, Some(name.clone())));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "mobile_tests.rs"]
mod tests;
