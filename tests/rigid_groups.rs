//! Rigid groups of deformable bodies (`[[deformable.rigid_group]]`, issue 18, acceptance 5):
//! switching a group mid-flight conserves linear and angular momentum, summed here from the
//! element states; a group that is rigid throughout moves like the rigid body of its summed
//! inertia, integrated here with RK4 of Euler's equations; and bad tables name their field.

use ar_dynamics::{Body, Scene, Simulation};
use nalgebra::{Isometry3, Matrix3, Quaternion, UnitQuaternion, Vector3};

const RADIUS_M: f64 = 0.005;

fn build(text: &str) -> Simulation {
    Scene::parse(text, "rigid_groups.toml")
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .build()
        .expect("builds")
}

/// A braced lattice of `mass_kg`, its elements' radius [`RADIUS_M`], with `extra` appended
/// (its rigid-group tables) and `gravity`.
fn lattice(size_m: [f64; 3], spacing_m: f64, gravity: [f64; 3], extra: &str) -> String {
    format!(
        r#"
gravity_m_per_s2 = {gravity:?}
[[deformable]]
name = "block"
kind = "lattice"
mass_kg = 0.12
element_radius_m = {RADIUS_M}
stiffness_n_per_m = 50.0
damping_n_s_per_m = 0.01
origin_m = [0.0, 0.0, 0.5]
size_m = {size_m:?}
spacing_m = {spacing_m}
diagonal_bracing = true
{extra}
"#
    )
}

/// The elements' inertia about their own centres, a solid sphere's (kg·m²).
fn element_inertia(mass_kg: f64) -> f64 {
    0.4 * mass_kg * RADIUS_M * RADIUS_M
}

/// Centre of mass, linear momentum and angular momentum about the centre of mass of the
/// moving bodies, summed from their states.
fn momenta(sim: &Simulation) -> (Vector3<f64>, Vector3<f64>, Vector3<f64>) {
    let moving: Vec<_> = sim.bodies().iter().filter(|b| b.mass_kg > 0.0).collect();
    let mass: f64 = moving.iter().map(|b| b.mass_kg).sum();
    let centre = moving
        .iter()
        .map(|b| b.position_in_world * b.mass_kg)
        .sum::<Vector3<f64>>()
        / mass;
    let p = moving
        .iter()
        .map(|b| b.linear_velocity_in_world * b.mass_kg)
        .sum();
    let l = moving
        .iter()
        .map(|b| {
            (b.position_in_world - centre).cross(&(b.linear_velocity_in_world * b.mass_kg))
                + b.angular_velocity_in_world * element_inertia(b.mass_kg)
        })
        .sum();
    (centre, p, l)
}

/// A free lattice (no gravity: nothing outside acts, so both momenta are constants of the
/// motion) whose group `front` (8 of its 12 elements) is rigid from 0.2 s to 0.5 s, with a
/// velocity field far from rigid: the elements tumble and the lattice vibrates.
fn tumbling_lattice(schedule: &str) -> Simulation {
    let mut sim = build(&lattice(
        [0.1, 0.05, 0.05],
        0.05,
        [0.0; 3],
        &format!(
            r#"
[[deformable.rigid_group]]
name = "front"
region_min_m = [0.0, 0.0, 0.5]
region_max_m = [0.05, 0.05, 0.55]
{schedule}
"#
        ),
    ));
    for i in 1..sim.bodies().len() {
        let k = i as f64;
        let v = Vector3::new((1.3 * k).sin(), (0.7 * k).cos(), (2.1 * k + 0.4).sin()) * 0.2;
        let w = Vector3::new(k.sin(), (1.7 * k).cos(), (0.3 * k).sin()) * 3.0;
        sim.set_body_velocity(i, v, w);
    }
    sim
}

#[test]
fn switching_a_group_mid_flight_conserves_linear_and_angular_momentum() {
    // By command, so that the switch is measured alone; the scheduled run must be the same.
    let mut sim = tumbling_lattice("deformable_from_s = 0.0");
    let mut scheduled = tumbling_lattice("rigid_from_s = 0.2\ndeformable_from_s = 0.5");
    let group = sim.rigid_groups()[0].elements.clone();
    assert_eq!(group.len(), 8);
    assert!(!sim.rigid_groups()[0].rigid && !scheduled.rigid_groups()[0].rigid);
    let (_, p0, l0) = momenta(&sim);
    let (mut dp_switch, mut dl_switch, mut dp_run, mut dl_run) =
        (0.0_f64, 0.0_f64, 0.0_f64, 0.0_f64);
    let mut rigid_distance_change = 0.0_f64;
    let mut distances_at_switch: Vec<f64> = Vec::new();
    let pairwise = |sim: &Simulation| -> Vec<f64> {
        let x: Vec<_> = group
            .iter()
            .map(|&e| sim.bodies()[e].position_in_world)
            .collect();
        let mut d = Vec::new();
        for a in 0..x.len() {
            for b in a + 1..x.len() {
                d.push((x[b] - x[a]).norm());
            }
        }
        d
    };
    for n in 0..80 {
        if n == 20 || n == 50 {
            let (_, p_before, l_before) = momenta(&sim);
            sim.set_group_rigid("block.front", n == 20)
                .expect("known group");
            let (_, p, l) = momenta(&sim);
            dp_switch = dp_switch.max((p - p_before).norm() / p0.norm());
            dl_switch = dl_switch.max((l - l_before).norm() / l0.norm());
            distances_at_switch = pairwise(&sim);
        }
        sim.step().expect("step");
        scheduled.step().expect("step");
        let rigid = sim.rigid_groups()[0].rigid;
        assert_eq!(rigid, (20..50).contains(&n), "step {n}");
        assert_eq!(scheduled.rigid_groups()[0].rigid, rigid, "step {n}");
        for (a, b) in sim.bodies().iter().zip(scheduled.bodies()) {
            assert_eq!(a.position_in_world, b.position_in_world, "step {n}");
            assert_eq!(a.linear_velocity_in_world, b.linear_velocity_in_world);
        }
        let (_, p, l) = momenta(&sim);
        dp_run = dp_run.max((p - p0).norm() / p0.norm());
        dl_run = dl_run.max((l - l0).norm() / l0.norm());
        if rigid {
            for (d, d0) in pairwise(&sim).iter().zip(&distances_at_switch) {
                rigid_distance_change = rigid_distance_change.max((d - d0).abs());
            }
        }
    }
    println!(
        "mid-flight switches (rigid at 0.2 s, deformable at 0.5 s): |ΔP|/|P| = {dp_switch:.2e}, \
         |ΔL|/|L| = {dl_switch:.2e} across the switches; over the whole 0.8 s, steps included, \
         {dp_run:.2e} and {dl_run:.2e}; distances in the rigid group changed by at most \
         {rigid_distance_change:.2e} m"
    );
    // Acceptance: the switch conserves both within 1e-9 relative. It is exact up to round-off.
    assert!(
        dp_switch < 1e-14 && dl_switch < 1e-13,
        "{dp_switch:e}, {dl_switch:e}"
    );
    // The steps themselves: linear momentum to round-off; angular momentum to the solver's
    // velocity tolerance (its spring and weld rows are solved to it, not exactly), a drift
    // that a lattice without any group shows too. Measured 3.3e-6 over the run.
    assert!(
        dp_run < 1e-14 && dl_run < 1e-5,
        "momentum drift {dp_run:e}, {dl_run:e}"
    );
    assert!(rigid_distance_change < 2e-8, "{rigid_distance_change:e} m");
}

/// The inertia tensor about `centre` of the elements at `x` (world), each of `mass_kg`:
/// the parallel-axis sum, summed here and not by the solver.
fn summed_inertia(x: &[Vector3<f64>], mass_kg: f64, centre: &Vector3<f64>) -> Matrix3<f64> {
    x.iter()
        .map(|p| {
            let d = p - centre;
            Matrix3::identity() * (element_inertia(mass_kg) + mass_kg * d.norm_squared())
                - d * d.transpose() * mass_kg
        })
        .sum()
}

/// RK4 of a free rigid body's rotation over `secs` in steps of `dt_secs`: world angular
/// momentum `l` constant, ω = R I⁻¹ Rᵀ L with `inertia` the world tensor at R = identity,
/// q̇ = ½ ω ⊗ q. Returns q at every multiple of `every_secs`.
fn rk4_rotation(
    inertia: &Matrix3<f64>,
    l: &Vector3<f64>,
    secs: f64,
    dt_secs: f64,
    every: usize,
) -> Vec<UnitQuaternion<f64>> {
    let inv = inertia.try_inverse().expect("positive inertia");
    let rate = |q: &Quaternion<f64>| {
        let r = UnitQuaternion::from_quaternion(*q).to_rotation_matrix();
        let w = r.matrix() * inv * r.matrix().transpose() * l;
        Quaternion::from_parts(0.0, w) * q * 0.5
    };
    let steps = (secs / dt_secs).round() as usize;
    let mut q = Quaternion::identity();
    let mut out = vec![UnitQuaternion::identity()];
    for n in 1..=steps {
        let k1 = rate(&q);
        let k2 = rate(&(q + k1 * (0.5 * dt_secs)));
        let k3 = rate(&(q + k2 * (0.5 * dt_secs)));
        let k4 = rate(&(q + k3 * dt_secs));
        q += (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (dt_secs / 6.0);
        q = q.normalize();
        if n % every == 0 {
            out.push(UnitQuaternion::from_quaternion(q));
        }
    }
    out
}

/// A falling lattice of 30 elements, fully rigid, tumbling about no principal axis, at steps
/// of `dt_secs`; with its elements' initial centres, their centre of mass, and the initial
/// linear and angular velocity.
struct TumblingGroup {
    sim: Simulation,
    x0: Vec<Vector3<f64>>,
    c0: Vector3<f64>,
    v0: Vector3<f64>,
    w0: Vector3<f64>,
}

impl TumblingGroup {
    const MASS_KG: f64 = 0.12;

    fn new(dt_secs: f64) -> Self {
        let mut sim = build(&lattice(
            [0.12, 0.06, 0.03],
            0.03,
            [0.0, 0.0, -9.81],
            "[[deformable.rigid_group]]\nname = \"all\"\n",
        ));
        let mut params = *sim.params();
        params.dt_secs = dt_secs;
        sim.set_params(params).expect("params");
        assert!(sim.rigid_groups()[0].rigid);
        assert_eq!(sim.bodies().len() - 1, 30);
        let x0: Vec<Vector3<f64>> = sim.bodies()[1..]
            .iter()
            .map(|b| b.position_in_world)
            .collect();
        let c0 = x0.iter().sum::<Vector3<f64>>() / x0.len() as f64;
        let (v0, w0) = (Vector3::new(0.1, 0.0, 0.5), Vector3::new(0.8, 0.4, 1.2));
        for (i, x) in x0.iter().enumerate() {
            sim.set_body_velocity(i + 1, v0 + w0.cross(&(x - c0)), w0);
        }
        Self {
            sim,
            x0,
            c0,
            v0,
            w0,
        }
    }

    /// The elements' inertia tensor about their centre of mass (world, kg·m²).
    fn inertia(&self) -> Matrix3<f64> {
        summed_inertia(&self.x0, Self::MASS_KG / self.x0.len() as f64, &self.c0)
    }

    /// Steps 1 s, and returns the largest distance of an element from where `expected`
    /// (called after each step with the time and the element's initial offset from the
    /// centre of mass) puts it.
    fn worst_distance_m(
        &mut self,
        mut expected: impl FnMut(usize, f64, &Vector3<f64>) -> Vector3<f64>,
    ) -> f64 {
        let steps = (1.0 / self.sim.params().dt_secs).round() as usize;
        let mut worst_m = 0.0_f64;
        for n in 1..=steps {
            self.sim.step().expect("step");
            let t = self.sim.time_secs();
            for (i, x) in self.x0.iter().enumerate() {
                let d = self.sim.bodies()[i + 1].position_in_world - expected(n, t, &(x - self.c0));
                worst_m = worst_m.max(d.norm());
            }
        }
        worst_m
    }
}

/// The largest distance over 1 s at steps of `dt_secs` between the elements of a tumbling,
/// falling, fully rigid lattice group and the rigid body of their summed inertia, integrated
/// here by RK4 (rotation) and in closed form (centre of mass).
fn rigid_trajectory_error_m(dt_secs: f64) -> f64 {
    let mut group = TumblingGroup::new(dt_secs);
    let inertia = group.inertia();
    let l = inertia * group.w0;
    // 100 RK4 steps per solver step: its error is far below the solver's.
    let rotations = rk4_rotation(&inertia, &l, 1.0, dt_secs / 100.0, 100);
    let (c0, v0, g) = (group.c0, group.v0, group.sim.gravity_in_world());
    group.worst_distance_m(|n, t, offset| c0 + v0 * t + g * (0.5 * t * t) + rotations[n] * offset)
}

/// The same group against one rigid body of the elements' summed mass and inertia in this
/// solver at the same step: the largest distance over 1 s between an element and the point
/// of that body where it started.
fn single_body_difference_m(dt_secs: f64) -> f64 {
    let mut group = TumblingGroup::new(dt_secs);
    let eigen = group.inertia().symmetric_eigen();
    let mut axes = eigen.eigenvectors;
    if axes.determinant() < 0.0 {
        axes.column_mut(2).neg_mut();
    }
    let body_from_principal = UnitQuaternion::from_matrix(&axes);
    let body = Body::new(
        "rigid",
        TumblingGroup::MASS_KG,
        eigen.eigenvalues,
        body_from_principal,
        Isometry3::translation(group.c0.x, group.c0.y, group.c0.z),
        None,
    );
    let mut single = Simulation::new(
        vec![Body::ground(), body],
        Vec::new(),
        Vec::new(),
        Vec::new(),
        group.sim.gravity_in_world(),
        *group.sim.params(),
    )
    .expect("one body");
    single.set_body_velocity(1, group.v0, group.w0);
    let mut stepped = 0;
    group.worst_distance_m(|n, _, offset| {
        while stepped < n {
            single.step().expect("step");
            stepped += 1;
        }
        (single.bodies()[1].world_from_body() * nalgebra::Point3::from(*offset)).coords
    })
}

#[test]
fn a_fully_rigid_group_moves_like_the_rigid_body_of_its_summed_inertia() {
    let coarse_m = rigid_trajectory_error_m(0.01);
    let fine_m = rigid_trajectory_error_m(0.005);
    let same_solver_m = single_body_difference_m(0.01);
    println!(
        "fully rigid group of 30 elements tumbling at |ω₀| = 1.5 rad/s: trajectories within \
         {coarse_m:.3e} m (h = 0.01 s) and {fine_m:.3e} m (h = 0.005 s) of RK4 of Euler's \
         equations over 1 s; ratio {:.2} (the implicit midpoint rule's second order: 4); \
         within {same_solver_m:.3e} m of one rigid body of the same mass and inertia in this \
         solver at h = 0.01 s",
        coarse_m / fine_m
    );
    // Against the exact motion, the difference is the integrator's O((h ω)²) phase error,
    // not the group's: halving h quarters it. Within 1e-6 m over 1 s at h = 0.005 s.
    assert!(fine_m < 1e-6, "{fine_m:e} m");
    assert!(coarse_m < 2e-6, "{coarse_m:e} m");
    let order = (coarse_m / fine_m).log2();
    assert!((order - 2.0).abs() < 0.1, "order {order}");
    // Against the rigid body of the same inertia in the same solver at the rig's step, the
    // welded group is that body.
    assert!(same_solver_m < 1e-6, "{same_solver_m:e} m");
}

#[test]
fn bad_rigid_group_tables_name_their_field() {
    let cases = [
        (
            "[[deformable.rigid_group]]\nname = \"g\"\nelements = [0, 99]\n",
            "deformable[0].rigid_group[0].elements",
            "does not exist",
        ),
        (
            "[[deformable.rigid_group]]\nname = \"g\"\nelements = [1]\n",
            "deformable[0].rigid_group[0].elements",
            "at least two",
        ),
        (
            "[[deformable.rigid_group]]\nname = \"g\"\nregion_min_m = [0.0, 0.0, 0.0]\n",
            "deformable[0].rigid_group[0].region_max_m",
            "both",
        ),
        (
            "[[deformable.rigid_group]]\nname = \"g\"\nrigid_from_s = 0.3\ndeformable_from_s = 0.3\n",
            "deformable[0].rigid_group[0].deformable_from_s",
            "different times",
        ),
        (
            "[[deformable.rigid_group]]\nname = \"g\"\nrigid_from_s = -1.0\n",
            "deformable[0].rigid_group[0].rigid_from_s",
            "zero or positive",
        ),
        (
            "[[deformable.rigid_group]]\nname = \"g\"\nelements = [0, 1]\n\
             [[deformable.rigid_group]]\nname = \"h\"\nelements = [1, 2]\n",
            "deformable[0].rigid_group[1].elements",
            "already in a rigid group",
        ),
        (
            "[[deformable.rigid_group]]\nname = \"g\"\nelements = [0, 1]\n\
             [[deformable.rigid_group]]\nname = \"g\"\nelements = [2, 3]\n",
            "deformable[0].rigid_group[1].name",
            "used twice",
        ),
    ];
    for (extra, field, message) in cases {
        let text = lattice([0.1, 0.05, 0.05], 0.05, [0.0; 3], extra);
        let e = Scene::parse(&text, "bad.toml")
            .err()
            .unwrap_or_else(|| panic!("accepted:\n{extra}"))
            .to_string();
        assert!(e.contains(field) && e.contains(message), "{e}\n{extra}");
        assert!(e.starts_with("bad.toml:"), "{e}");
    }
}

#[test]
fn groups_switch_by_command_and_unknown_names_are_refused() {
    let mut sim = build(&lattice(
        [0.1, 0.05, 0.05],
        0.05,
        [0.0, 0.0, -9.81],
        "[[deformable.rigid_group]]\nname = \"g\"\nelements = [0, 1, 2]\ndeformable_from_s = 0.0\n",
    ));
    let joints = sim.model().joints.len();
    assert!(!sim.rigid_groups()[0].rigid);
    sim.set_group_rigid("block.g", true).expect("known group");
    assert!(sim.rigid_groups()[0].rigid);
    // Two welds of 6 rows join three elements; the scene's joints do not list them.
    assert_eq!(sim.model().joints.len(), joints + 2);
    assert_eq!(sim.joints().len(), joints);
    for _ in 0..10 {
        sim.step().expect("step");
    }
    sim.set_group_rigid("block.g", false).expect("known group");
    assert_eq!(sim.model().joints.len(), joints);
    sim.step().expect("step");
    assert!(sim.set_group_rigid("block.nope", true).is_err());
}

#[test]
fn the_rig_switches_a_group_through_its_simulation() {
    use ar_multibody::rig::RigSimulation;
    let sim = build(&lattice(
        [0.1, 0.05, 0.05],
        0.05,
        [0.0, 0.0, -9.81],
        "[[deformable.rigid_group]]\nname = \"g\"\ndeformable_from_s = 0.0\n",
    ));
    let mut rig_sim = RigSimulation::new(ar_dynamics::SceneSimulation::from(sim));
    rig_sim
        .set_group_rigid("block.g", true)
        .expect("make_rigid");
    rig_sim
        .set_group_rigid("block.g", false)
        .expect("make_deformable");
    let e = rig_sim.set_group_rigid("block.h", true).unwrap_err();
    assert!(e.to_string().contains("block.h"), "{e}");
}

#[test]
fn the_articulated_method_refuses_rigid_groups_rather_than_ignore_them() {
    let text = lattice(
        [0.1, 0.05, 0.05],
        0.05,
        [0.0, 0.0, -9.81],
        "[[deformable.rigid_group]]\nname = \"g\"\n",
    );
    let scene = Scene::parse(&text, "rigid_groups.toml").expect("scene");
    let e = ar_dynamics::articulated::system::scene_model(&scene).unwrap_err();
    assert!(e.to_string().contains("rigid groups"), "{e}");
}
