//! Links into scene bodies: links joined by `fixed` joints are merged into their parent's body
//! (as MuJoCo and Pinocchio do), a fixed root is attached to the ground or, without mass,
//! merged into it, and every body gets its combined mass properties in its top link's frame.

use crate::error::ImportError;
use crate::model::{JointKind, Model};
use crate::options::ImportOptions;

use super::inertia::{self, MassProps};
use super::tree::{joint_error, Tree};

/// How a body is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    /// Fixed to the ground: the root of a fixed base (`None`) or a `fixed` joint to the world.
    Ground(Option<usize>),
    /// Free (a floating base, URDF `floating`, MJCF `free`).
    Free,
    /// By this moving joint (revolute, prismatic, ball) to its parent.
    Joint(usize),
}

/// A scene body: links merged into one rigid body.
pub(crate) struct Body {
    /// The top link (its name is the body's, its frame the body's axes).
    pub top: usize,
    /// Every link of the body, the top one first, parents before children.
    pub links: Vec<usize>,
    /// Mass, centre of mass and inertia in the top link's frame (file units).
    pub props: MassProps,
    /// How it is held.
    pub held: Held,
}

/// Where a link went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Merged into the ground (a massless fixed base).
    Ground,
    /// Into this body.
    Body(usize),
}

/// The bodies, and per link its place.
pub(crate) struct Bodies {
    pub bodies: Vec<Body>,
    pub place: Vec<Place>,
}

/// Groups the links into bodies.
pub(crate) fn group(
    model: &Model,
    tree: &Tree,
    options: &ImportOptions,
) -> Result<Bodies, ImportError> {
    let n = model.links.len();
    let mut top = vec![usize::MAX; n];
    let mut bodies: Vec<Body> = Vec::new();
    let mut body_of_top = vec![usize::MAX; n];
    for &i in &tree.order {
        let held = match tree.parent_joint[i] {
            None if options.floating_base => Held::Free,
            None => Held::Ground(None),
            Some(k) => {
                let j = &model.joints[k];
                match (j.kind, tree.index.get(&j.parent)) {
                    (JointKind::Fixed, Some(&p)) => {
                        top[i] = top[p];
                        bodies[body_of_top[top[p]]].links.push(i);
                        continue;
                    }
                    (JointKind::Fixed, None) => Held::Ground(Some(k)),
                    (JointKind::Free, _) => Held::Free,
                    _ => Held::Joint(k),
                }
            }
        };
        top[i] = i;
        body_of_top[i] = bodies.len();
        bodies.push(Body {
            top: i,
            links: vec![i],
            props: MassProps {
                mass_kg: 0.0,
                com: Default::default(),
                inertia: Default::default(),
            },
            held,
        });
    }
    for b in &mut bodies {
        let top_from_world = tree.world_from_link[b.top].inverse();
        let parts: Vec<MassProps> = b
            .links
            .iter()
            .map(|&l| inertia::moved(&model.links[l], &(top_from_world * tree.world_from_link[l])))
            .collect();
        b.props = inertia::combine(&parts);
    }
    // Massless fixed bases go into the ground; any other massless body cannot move.
    let mut place = vec![Place::Ground; n];
    let mut kept = Vec::with_capacity(bodies.len());
    for b in bodies {
        if b.props.mass_kg == 0.0 {
            if let Held::Ground(_) = b.held {
                continue;
            }
            return Err(massless(model, &b));
        }
        for &l in &b.links {
            place[l] = Place::Body(kept.len());
        }
        kept.push(b);
    }
    for b in &kept {
        if let Some(msg) = positive_definite(&b.props) {
            let l = &model.links[b.top];
            return Err(ImportError::Invalid {
                at: l.at.clone(),
                element: format!("link \"{}\"", l.name),
                message: msg,
            });
        }
    }
    Ok(Bodies {
        bodies: kept,
        place,
    })
}

fn massless(model: &Model, b: &Body) -> ImportError {
    let link = &model.links[b.top];
    let how = match b.held {
        Held::Joint(k) | Held::Ground(Some(k)) => {
            return joint_error(
                &model.joints[k],
                format!(
                    "its child link \"{}\" has no mass{} and moves: give it an <inertial> \
                     with mass and inertia, or attach it by a fixed joint",
                    link.name,
                    merged_note(model, b)
                ),
            )
        }
        _ => "is free (a floating base or joint)",
    };
    ImportError::Invalid {
        at: link.at.clone(),
        element: format!("link \"{}\"", link.name),
        message: format!(
            "has no mass{} and {how}: give it an <inertial> with mass and inertia",
            merged_note(model, b)
        ),
    }
}

fn merged_note(model: &Model, b: &Body) -> String {
    if b.links.len() == 1 {
        return String::new();
    }
    let names: Vec<&str> = b.links[1..]
        .iter()
        .map(|&l| model.links[l].name.as_str())
        .collect();
    format!(" (nor do the links fixed to it: {})", names.join(", "))
}

fn positive_definite(p: &MassProps) -> Option<String> {
    let moments = nalgebra::SymmetricEigen::new(p.inertia).eigenvalues;
    if moments.iter().any(|&x| x <= 0.0) {
        return Some(format!(
            "the inertia of the body (with the links fixed to it) is not positive definite: \
             principal moments {:?} kg·m²",
            moments.as_slice()
        ));
    }
    inertia::triangle_problem(&moments)
}
