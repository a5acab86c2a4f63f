//! The `G` key on the paper's beam (`beam.toml`, whose right half of one beam is the rigid
//! group `half_rigid.right`): the session sends the rig's `SetGroupRigid` command, and the
//! solver loop's path (the command through [`UserControls`], the event applied to the
//! simulation) switches the group.

use super::*;
use crate::rig::threads::solver_commands::{ControlEvent, UserControls};
use crate::rig::RigSimulation;
use crate::sandbox::input::SandboxKey;
use ar_dynamics::scene::resolve_scene;
use std::sync::Arc;

fn group(name: &str, rigid: bool) -> RigidGroupView {
    RigidGroupView {
        name: Arc::from(name),
        rigid,
    }
}

#[test]
fn g_makes_every_group_rigid_if_one_is_deformable_else_every_group_deformable() {
    let mixed = [group("a.x", true), group("b.y", false)];
    assert_eq!(rigid_group_switches(&mixed), vec![("b.y".to_owned(), true)]);
    let rigid = [group("a.x", true), group("b.y", true)];
    assert_eq!(
        rigid_group_switches(&rigid),
        vec![("a.x".to_owned(), false), ("b.y".to_owned(), false)]
    );
    assert!(rigid_group_switches(&[]).is_empty());
}

/// Applies the commands the session sent as the solver loop does; returns the switches made.
fn apply_as_the_solver_loop_does(
    commands: &crossbeam_channel::Receiver<SolverCommand>,
    controls: &mut UserControls,
    sim: &mut RigSimulation,
) -> Vec<(String, bool)> {
    let mut switched = Vec::new();
    while let Ok(command) = commands.try_recv() {
        if let Some(ControlEvent::SetGroupRigid { name, rigid }) = controls.apply(command) {
            sim.set_group_rigid(&name, rigid).expect("the group exists");
            switched.push((name, rigid));
        }
    }
    switched
}

#[test]
fn the_g_key_switches_the_beams_rigid_half_through_the_rigs_command() {
    let mut sim = RigSimulation::load(&resolve_scene("beam"), crate::rig::method::Method::Default)
        .expect("beam.toml");
    assert_eq!(sim.rigid_groups(), vec![group("half_rigid.right", true)]);
    let (tx, rx) = crossbeam_channel::bounded(16);
    let view = initial_view(&sim);
    let mut session = SandboxSession::new(
        vec!["beam".into()],
        view,
        ViewHandle::new(view.camera_from_world()),
        tx,
        Box::new(|_| Err("no other scene here".into())),
    );
    let mut controls = UserControls::default();
    let bodies = sim.bodies();
    let press = SandboxInput::KeyPressed(SandboxKey::RigidGroups);
    let release = SandboxInput::KeyReleased(SandboxKey::RigidGroups);

    session.update_rigid_groups(&sim.rigid_groups());
    assert!(session.handle(press, &bodies));
    // A held key's repeat switches nothing more.
    assert!(session.handle(press, &bodies));
    assert_eq!(
        apply_as_the_solver_loop_does(&rx, &mut controls, &mut sim),
        vec![("half_rigid.right".to_owned(), false)]
    );
    assert_eq!(sim.rigid_groups(), vec![group("half_rigid.right", false)]);
    sim.step(None, 0.0).expect("steps deformable");

    session.handle(release, &bodies);
    session.update_rigid_groups(&sim.rigid_groups());
    session.handle(press, &bodies);
    assert_eq!(
        apply_as_the_solver_loop_does(&rx, &mut controls, &mut sim),
        vec![("half_rigid.right".to_owned(), true)]
    );
    assert_eq!(sim.rigid_groups(), vec![group("half_rigid.right", true)]);
    sim.step(None, 0.0).expect("steps rigid again");
}
