//! The controller driven by synthetic inputs on the ten pendula as the demo's camera sees
//! them: picking, dragging in the camera-facing plane, the keys.

use super::*;
use crate::rig::devices::demo_world::demo_view;
use crate::rig::RigSimulation;
use crate::sandbox::input::{PointerButton, SandboxInput, SandboxKey};
use crate::sandbox::orbit::ORBIT_RAD_PER_PX;
use ar_dynamics::scene::resolve_scene;
use nalgebra::{Point2, Point3};

struct Fixture {
    controller: SandboxController,
    bodies: Vec<BodyView>,
    tip: BodyView,
}

/// The ten pendula at rest, seen from the demo's camera, with the view pivoting 0.9 m ahead.
fn ten_pendula() -> Fixture {
    let sim = RigSimulation::load(
        &resolve_scene("ten_pendula"),
        crate::rig::method::Method::Default,
    )
    .unwrap();
    let view = demo_view(&sim, false, false).unwrap();
    let bodies = sim.bodies();
    let tip = bodies.iter().find(|b| &*b.name == "p10").unwrap().clone();
    let orbit = OrbitView::from_camera(&view.camera_from_world, 0.9);
    Fixture {
        controller: SandboxController::new(view.intrinsics, orbit),
        bodies,
        tip,
    }
}

fn pixel_of(c: &SandboxController, p: &Point3<f64>) -> Point2<f64> {
    c.intrinsics.project(&(c.camera_from_world() * p)).unwrap()
}

fn press(px: Point2<f64>) -> SandboxInput {
    SandboxInput::PointerPressed {
        button: PointerButton::Left,
        x_px: px.x,
        y_px: px.y,
    }
}

/// Distance of a point from the pendulum capsule's surface (radius 4 mm, 42 mm long).
fn off_tip_surface_m(tip: &BodyView, p: &Point3<f64>) -> f64 {
    let local = tip.world_from_body.inverse() * p;
    let z = local.z.clamp(-0.021, 0.021);
    (local - Point3::new(0.0, 0.0, z)).norm() - 0.004
}

#[test]
fn a_press_on_the_tip_picks_it_at_a_point_of_its_surface() {
    let Fixture {
        mut controller,
        bodies,
        tip,
    } = ten_pendula();
    // 5 mm above the tip's centre, on its axis.
    let aim = tip.world_from_body * Point3::new(0.0, 0.0, 0.005);
    let px = pixel_of(&controller, &aim);
    let Some(SandboxAction::Grab { pick, spring }) = controller.handle(press(px), &bodies) else {
        panic!("no grab");
    };
    assert_eq!(&*pick.name, "p10");
    assert_eq!(spring.body, tip.body);
    assert!(
        off_tip_surface_m(&tip, &pick.point_in_world).abs() < 1e-9,
        "{} m off the surface",
        off_tip_surface_m(&tip, &pick.point_in_world)
    );
    // On the side facing the camera, and on the viewing ray of the pixel.
    let eye = controller.view().eye_in_world();
    assert!((pick.point_in_world - eye).norm() < (aim - eye).norm());
    let back = pixel_of(&controller, &pick.point_in_world);
    assert!((back - px).norm() < 1e-6, "{back} vs {px}");
    assert_eq!(spring.target_in_world, pick.point_in_world);
    assert_eq!(controller.grabbed(), Some(spring));
}

#[test]
fn a_drag_moves_the_target_in_the_plane_facing_the_camera() {
    let Fixture {
        mut controller,
        bodies,
        tip,
    } = ten_pendula();
    let px = pixel_of(
        &controller,
        &Point3::from(tip.world_from_body.translation.vector),
    );
    let Some(SandboxAction::Grab { spring, .. }) = controller.handle(press(px), &bodies) else {
        panic!("no grab");
    };
    let start = spring.target_in_world;
    let depth_m = (controller.camera_from_world() * start).z;
    let (dx_px, dy_px) = (60.0, -30.0);
    let moved = controller.handle(
        SandboxInput::PointerMoved {
            x_px: px.x + dx_px,
            y_px: px.y + dy_px,
        },
        &bodies,
    );
    let Some(SandboxAction::MoveTarget(moved)) = moved else {
        panic!("no move: {moved:?}");
    };
    assert_eq!(
        (moved.body, moved.point_in_body),
        (spring.body, spring.point_in_body)
    );
    // In the camera's frame: the same depth, and dx·z/f to the right, dy·z/f down.
    let delta = controller.camera_from_world() * moved.target_in_world
        - controller.camera_from_world() * start;
    let f = controller.intrinsics.fx;
    assert!(delta.z.abs() < 1e-12, "{delta}");
    assert!((delta.x - dx_px * depth_m / f).abs() < 1e-12, "{delta}");
    assert!((delta.y - dy_px * depth_m / f).abs() < 1e-12, "{delta}");
    // 67 px of pointer travel at the tip's depth (about 1.3 m, the view framing the scene and
    // its shadows) with f = 600 px: ~15 cm.
    assert!((delta.norm() - dx_px.hypot(dy_px) * depth_m / f).abs() < 1e-12);
    assert!((0.12..0.18).contains(&delta.norm()), "{} m", delta.norm());
    assert_eq!(
        controller.handle(
            SandboxInput::PointerReleased {
                button: PointerButton::Left
            },
            &bodies
        ),
        Some(SandboxAction::Release)
    );
    assert_eq!(controller.grabbed(), None);
}

#[test]
fn a_press_beside_every_body_grabs_nothing_and_a_right_drag_orbits() {
    let Fixture {
        mut controller,
        bodies,
        ..
    } = ten_pendula();
    let empty_desk = pixel_of(&controller, &Point3::new(0.3, 0.0, 0.0));
    assert_eq!(controller.handle(press(empty_desk), &bodies), None);
    assert_eq!(controller.grabbed(), None);
    let before = *controller.view();
    let right = |x: f64| SandboxInput::PointerPressed {
        button: PointerButton::Right,
        x_px: x,
        y_px: 200.0,
    };
    controller.handle(right(100.0), &bodies);
    controller.handle(
        SandboxInput::PointerMoved {
            x_px: 140.0,
            y_px: 200.0,
        },
        &bodies,
    );
    let after = *controller.view();
    assert!((after.yaw_rad - (before.yaw_rad - 40.0 * ORBIT_RAD_PER_PX)).abs() < 1e-12);
    assert_eq!(after.pivot_in_world, before.pivot_in_world);
    // A left press during the orbit does not grab.
    let tip_px = pixel_of(&controller, &Point3::new(0.0, 0.0, 0.125));
    assert_eq!(controller.handle(press(tip_px), &bodies), None);
}

#[test]
fn pause_step_reset_and_wind_keys() {
    let Fixture {
        mut controller,
        bodies,
        tip,
    } = ten_pendula();
    let key = |c: &mut SandboxController, k| c.handle(SandboxInput::KeyPressed(k), &bodies);
    assert_eq!(
        key(&mut controller, SandboxKey::Step),
        None,
        "no step while running"
    );
    assert_eq!(
        key(&mut controller, SandboxKey::Pause),
        Some(SandboxAction::Pause(true))
    );
    assert_eq!(
        key(&mut controller, SandboxKey::Step),
        Some(SandboxAction::Step)
    );
    assert_eq!(
        key(&mut controller, SandboxKey::Pause),
        Some(SandboxAction::Pause(false))
    );
    // A reset while grabbing lets go: the next move drags nothing.
    let px = pixel_of(
        &controller,
        &Point3::from(tip.world_from_body.translation.vector),
    );
    assert!(controller.handle(press(px), &bodies).is_some());
    assert_eq!(
        key(&mut controller, SandboxKey::Reset),
        Some(SandboxAction::Reset)
    );
    assert_eq!(controller.grabbed(), None);
    let moved = SandboxInput::PointerMoved {
        x_px: px.x + 10.0,
        y_px: px.y,
    };
    assert_eq!(controller.handle(moved, &bodies), None);
    // The space bar blows while held, once however often it repeats.
    assert_eq!(
        key(&mut controller, SandboxKey::Wind),
        Some(SandboxAction::Wind(Some(SPACE_BAR_WIND_LEVEL)))
    );
    assert_eq!(key(&mut controller, SandboxKey::Wind), None);
    assert_eq!(
        controller.handle(SandboxInput::KeyReleased(SandboxKey::Wind), &bodies),
        Some(SandboxAction::Wind(None))
    );
    assert_eq!(
        key(&mut controller, SandboxKey::Reactions),
        Some(SandboxAction::ShowReactions(true))
    );
}

#[test]
fn the_g_key_switches_the_rigid_groups_once_per_press() {
    let Fixture {
        mut controller,
        bodies,
        ..
    } = ten_pendula();
    let press = SandboxInput::KeyPressed(SandboxKey::RigidGroups);
    let release = SandboxInput::KeyReleased(SandboxKey::RigidGroups);
    assert_eq!(
        controller.handle(press, &bodies),
        Some(SandboxAction::ToggleRigidGroups)
    );
    // A held key repeats its press: no switching back and forth.
    assert_eq!(controller.handle(press, &bodies), None);
    assert_eq!(controller.handle(release, &bodies), None);
    assert_eq!(
        controller.handle(press, &bodies),
        Some(SandboxAction::ToggleRigidGroups)
    );
}
