//! Settling a simulation for the static-equilibrium tests of deformable bodies.

use ar_dynamics::Simulation;
use nalgebra::Vector3;

/// Steps `steps` times, then 100 more (1 s at h = 0.01 s); returns how far the element that
/// moved most in those last 100 steps moved (m).
pub fn settle(sim: &mut Simulation, steps: usize) -> f64 {
    for _ in 0..steps {
        sim.step().expect("step");
    }
    let before: Vec<Vector3<f64>> = sim.bodies().iter().map(|b| b.position_in_world).collect();
    for _ in 0..100 {
        sim.step().expect("step");
    }
    sim.bodies()
        .iter()
        .zip(&before)
        .map(|(b, p)| (b.position_in_world - p).norm())
        .fold(0.0, f64::max)
}
