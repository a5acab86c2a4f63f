//! Deformable bodies (Jansson & Vergeest): mass elements with a radius, joined by
//! spring-damper connections that may break, in the same world as the rigid mechanisms.
//!
//! # Design
//! There is no second solver. An element is a small rigid sphere [`crate::Body`] (its
//! mass, the inertia 2/5 m r² of a solid sphere, a sphere shape of its radius), a connection
//! a [`crate::Spring`] between element centres (the solver's implicit soft rows with
//! exact energy booking, so stiff connections are stable at h = 0.01 s). So elements collide
//! through the contact machinery (connected elements of one body are excluded pairs, like
//! jointed bodies, and so are elements of one body that overlap at rest: [`overlap`]), the stylus clips to them through `[[grab]]` tables, and the compositor
//! draws them as the spheres they are. An element's rotation is carried but never driven:
//! connections attach at centres and apply no torque.
//!
//! A scene's `[[deformable]]` table ([`crate::scene`]) expands through a generator into
//! such a [`Network`] of nodes and connections: [`rope`] (a chain between two end points),
//! [`lattice`] (a box of nodes with axis connections and optional face-diagonal bracing) and
//! [`cloth`] (a sheet of nodes with structural, shear and optional bend connections).
//! Pinned nodes are joined to the ground or a named body by ball joints.
//!
//! Each element may feel a linear drag −c v of the medium ([`crate::Body::drag_n_s_per_m`]),
//! so that a deformable body settles: the connection dampers act only along the
//! connections and leave a hanging chain's inextensional swinging undamped. [`fracture`]
//! breaks overstretched connections. A [`rigid_group`] welds a subset of the elements into
//! one rigid body, switchable at given times or on command, conserving momentum.
//!
//! The rig switches a group on a `SetGroupRigid` command (`make_rigid` / `make_deformable`,
//! the rig's solver commands); the sandbox's `G` key sends it.
//!
//! Not yet: skinned drawing (elements are drawn as their spheres).

pub mod cloth;
pub mod fracture;
pub mod lattice;
pub mod overlap;
pub mod rigid_group;
pub mod rope;

pub use fracture::Fracture;
pub use rigid_group::{GroupSwitch, RigidGroup};

use nalgebra::Vector3;

/// Nodes and connections made by a generator, before they become bodies and springs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Network {
    /// Node positions (world, m).
    pub nodes_in_world_m: Vec<Vector3<f64>>,
    /// Connections: node indices and rest length (m).
    pub connections: Vec<Connection>,
}

/// A connection between two nodes of a [`Network`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Connection {
    /// First node.
    pub node1: usize,
    /// Second node.
    pub node2: usize,
    /// Rest length (m).
    pub rest_length_m: f64,
}

impl Network {
    /// Adds a connection whose rest length is the nodes' present distance.
    pub(crate) fn connect(&mut self, node1: usize, node2: usize) {
        let rest_length_m = (self.nodes_in_world_m[node2] - self.nodes_in_world_m[node1]).norm();
        self.connections.push(Connection {
            node1,
            node2,
            rest_length_m,
        });
    }
}

/// Principal moments of inertia of a solid sphere of this mass and radius (kg·m²).
pub fn sphere_inertia_kg_m2(mass_kg: f64, radius_m: f64) -> Vector3<f64> {
    Vector3::repeat(0.4 * mass_kg * radius_m * radius_m)
}
