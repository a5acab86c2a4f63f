//! The CSV formats of a run: `simulate --csv` (one row per step: time, ‖ψ‖, energies, work,
//! the stylus and the first grab point, and the default method's joint reactions) and
//! `simulate --poses` (one row per dynamic body and step). Every number but the time is
//! written in Rust's shortest round-trip form, so equal files mean bit-identical runs.

use std::io::{self, Write};

use ar_io::csv_write::{CsvWriter, Row};
use nalgebra::{Isometry3, Vector3};

use crate::simulation::{MethodSim, SceneSimulation};
use crate::state::diagnostics::StepDiagnostics;

/// Decimals of the `t_s` columns: the time is printed rounded to 1 ns. The solver's time is
/// n·h accumulated step by step (0.49000000000000027 after 49 steps of 0.01 s), which would
/// otherwise show its last-bit rounding; 1 ns is far below any step the solver is run with.
pub const TIME_DECIMALS: usize = 9;

/// The columns of `simulate --csv` before the per-joint reaction columns (all of them for
/// the articulated method, which computes no reactions).
pub const MAIN_CSV_COLUMNS: [&str; 16] = [
    "t_s",
    "constraint_norm_m",
    "kinetic_j",
    "potential_j",
    "elastic_j",
    "user_work_j",
    "external_work_j",
    "dissipated_j",
    "energy_error_rel",
    "clipped",
    "stylus_x",
    "stylus_y",
    "stylus_z",
    "grab_x",
    "grab_y",
    "grab_z",
];

/// The column after the main ones in a scene with breakable connections (a spring with a
/// fracture extension): the elastic energy the broken connections held when they broke (J),
/// the energy balance's fracture line. Absent otherwise, so that the files of scenes without
/// fracture keep their bytes.
pub const FRACTURED_COLUMN: &str = "fractured_j";

/// Whether the run has breakable connections, and so the [`FRACTURED_COLUMN`]: the default
/// method with a spring that has a fracture extension.
pub fn has_breakable_connections(sim: &SceneSimulation) -> bool {
    match sim.method() {
        MethodSim::Default(sim) => sim
            .springs()
            .iter()
            .any(|s| s.fracture_extension_m.is_some()),
        MethodSim::Articulated(_) => false,
    }
}

/// The CSV header of `simulate --csv` for this simulation: the main columns, with breakable
/// connections [`FRACTURED_COLUMN`], and with the default method six reaction columns per
/// joint. The columns are documented in `simulate --help` and the manual's `commands` page
/// (`src/manual/commands.md`).
pub fn csv_header(sim: &SceneSimulation) -> Vec<String> {
    let mut columns: Vec<String> = MAIN_CSV_COLUMNS.map(String::from).into();
    if has_breakable_connections(sim) {
        columns.push(FRACTURED_COLUMN.into());
    }
    let MethodSim::Default(sim) = sim.method() else {
        return columns;
    };
    for j in sim.joints() {
        for column in ["fx", "fy", "fz", "tx", "ty", "tz"] {
            columns.push(format!("{}_{column}", j.name));
        }
    }
    // The limited joints' limit forces last, so that a scene without limits keeps its columns.
    for j in sim.joints() {
        if j.limits.angle_rad.is_some() {
            columns.push(format!("{}_limit_n_m", j.name));
        }
        if j.limits.travel_m.is_some() {
            columns.push(format!("{}_limit_n", j.name));
        }
    }
    columns
}

/// Adds the [`MAIN_CSV_COLUMNS`] of a step to `row`: the diagnostics, the stylus tip the
/// solver uses and the first grab point (NaN where there is none).
pub fn main_csv_fields<'a, W: Write>(
    row: Row<'a, W>,
    d: &StepDiagnostics,
    tip_in_world: [f64; 3],
    grab_in_world: [f64; 3],
) -> Row<'a, W> {
    row.fixed(d.time_secs, TIME_DECIMALS)
        .values([
            d.constraint_norm_m,
            d.kinetic_j,
            d.potential_j,
            d.elastic_j,
            d.user_work_j,
            d.external_work_j,
            d.dissipated_j,
            d.energy_error_rel,
        ])
        .value(u8::from(d.clipped))
        .values(tip_in_world)
        .values(grab_in_world)
}

/// Writes the CSV row of the last step. `t_s` has [`TIME_DECIMALS`] decimals; every other
/// number uses Rust's shortest round-trip formatting, so equal rows mean bit-identical values.
/// The stylus columns hold the tip the solver uses (NaN when none was ever set); the grab
/// columns the first grab point's world position (NaN if the scene has none); with breakable
/// connections, [`FRACTURED_COLUMN`]; per joint, the reaction force (N) and moment (N·m) on
/// its second body, world axes (default method); then per limited joint its limit torque
/// (`_limit_n_m`, N·m) and force (`_limit_n`, N) on its second body along its coordinate
/// (see [`crate::Simulation::joint_limit_forces`]).
pub fn csv_row<W: Write>(sim: &SceneSimulation, out: &mut CsvWriter<W>) -> io::Result<()> {
    let d = sim.diagnostics();
    let tip: [f64; 3] = sim
        .stylus_target()
        .map_or([f64::NAN; 3], |t| t.position_in_world.coords.into());
    let grab: [f64; 3] = sim
        .grab_point_in_world(0)
        .map_or([f64::NAN; 3], |p| p.coords.into());
    let mut row = main_csv_fields(out.row(), d, tip, grab);
    if has_breakable_connections(sim) {
        row = row.value(d.fractured_j);
    }
    let MethodSim::Default(sim) = sim.method() else {
        return row.end();
    };
    for r in sim.joint_reactions() {
        let (f, m) = (r.force_in_world, r.torque_in_world);
        row = row.values([f.x, f.y, f.z, m.x, m.y, m.z]);
    }
    let forces = sim.joint_limit_forces();
    for (i, j) in sim.joints().iter().enumerate() {
        let [torque, force] = forces.get(i).copied().unwrap_or([f64::NAN; 2]);
        if j.limits.angle_rad.is_some() {
            row = row.value(torque);
        }
        if j.limits.travel_m.is_some() {
            row = row.value(force);
        }
    }
    row.end()
}

/// The header of `simulate --poses`: one row per dynamic body and written step, world frame;
/// the position and velocity are those of the body frame's origin, which is the centre of
/// mass.
pub const POSES_CSV_HEADER: [&str; 15] = [
    "t_s",
    "body",
    "x_m",
    "y_m",
    "z_m",
    "qw",
    "qx",
    "qy",
    "qz",
    "vx_m_per_s",
    "vy_m_per_s",
    "vz_m_per_s",
    "wx_rad_per_s",
    "wy_rad_per_s",
    "wz_rad_per_s",
];

/// Writes one `simulate --poses` row per dynamic body (in scene order) for the last step:
/// time ([`TIME_DECIMALS`] decimals), body name, position of the centre of mass (m), the unit
/// quaternion `world_from_body` (w, x, y, z), velocity of the centre of mass (m/s) and angular
/// velocity (rad/s), all in world axes, numbers in Rust's shortest round-trip formatting.
pub fn poses_csv_rows<W: Write>(sim: &SceneSimulation, out: &mut CsvWriter<W>) -> io::Result<()> {
    let t = sim.diagnostics().time_secs;
    for (id, b) in sim.bodies().iter().enumerate() {
        if b.is_dynamic() {
            pose_csv_row(out, t, &b.name, &sim.body_pose(id), sim.body_velocity(id))?;
        }
    }
    Ok(())
}

/// Writes one row of the [`POSES_CSV_HEADER`] columns: a body's centre-of-mass pose
/// (`world_from_body`) and its velocity (m/s) and angular velocity (rad/s) in world axes.
pub fn pose_csv_row<W: Write>(
    out: &mut CsvWriter<W>,
    t_secs: f64,
    name: &str,
    world_from_body: &Isometry3<f64>,
    (v, w): (Vector3<f64>, Vector3<f64>),
) -> io::Result<()> {
    let (x, q) = (world_from_body.translation.vector, world_from_body.rotation);
    out.row()
        .fixed(t_secs, TIME_DECIMALS)
        .text(name)
        .values([x.x, x.y, x.z, q.w, q.i, q.j, q.k])
        .values([v.x, v.y, v.z, w.x, w.y, w.z])
        .end()
}
