//! No silent no-contact (issue 42, acceptance 6): a scene whose bodies set `friction`,
//! `restitution` or `collide` has contact even without `[contact]`, `[[plane]]` or
//! `[[static]]`; a scene that sets none of them still has none.

use ar_dynamics::Scene;

fn asset_text(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/assets/scenes/{name}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    ))
    .unwrap()
}

/// Two free balls (radius 0.025 m, 0.1 kg) 1 cm apart along x, no gravity, the first coming
/// in at 1 m/s, with `extra` in the first ball's table and no contact table.
fn two_balls(extra: &str) -> String {
    let ball = |name: &str, x: f64, v: f64, extra: &str| {
        format!(
            "[[body]]\nname = \"{name}\"\nmass_kg = 0.1\ninertia_kg_m2 = [2.5e-05, 2.5e-05, 2.5e-05]\n\
             position_m = [{x}, 0.0, 0.0]\nshape = {{ kind = \"sphere\", radius_m = 0.025 }}\n\
             velocity_m_per_s = [{v}, 0.0, 0.0]\n{extra}\n"
        )
    };
    format!(
        "gravity_m_per_s2 = [0.0, 0.0, 0.0]\n[solver]\ndt_secs = 0.01\n{}{}",
        ball("a", 0.0, 1.0, extra),
        ball("b", 0.06, 0.0, "")
    )
}

#[test]
fn a_cradle_without_a_contact_table_transmits_the_impulse() {
    let text = asset_text("newtons_cradle.toml");
    let without = text.replace("[contact]\nmargin_m = 0.001\n", "");
    assert_ne!(text, without, "the cradle's [contact] table was removed");
    assert!(!without.contains("[contact]"));
    let scene = Scene::parse(&without, "cradle.toml").unwrap();
    assert!(scene.contact.is_some());
    let mut sim = scene.build().unwrap();
    for _ in 0..20 {
        sim.step().unwrap();
    }
    let v: Vec<f64> = (1..=5)
        .map(|i| {
            let id = sim.body_id(&format!("ball{i}")).unwrap();
            sim.bodies()[id].linear_velocity_in_world.x
        })
        .collect();
    // As the shipped cradle with its table: the last ball leaves at 1 m/s, the others stop.
    assert!(v[4] >= 0.97, "{v:?}");
    assert!(v[..4].iter().all(|x| x.abs() <= 0.05), "{v:?}");
}

#[test]
fn each_contact_field_of_a_body_turns_contact_on() {
    for extra in ["restitution = 1.0", "friction = 0.2", "collide = true"] {
        let scene = Scene::parse(&two_balls(extra), "balls.toml").unwrap();
        assert!(scene.contact.is_some(), "{extra}");
    }
    // Elastic balls exchange their velocities instead of passing through each other.
    let mut sim = Scene::parse(&two_balls("restitution = 1.0"), "balls.toml")
        .unwrap()
        .build()
        .unwrap();
    for _ in 0..20 {
        sim.step().unwrap();
    }
    let (a, b) = (sim.body_id("a").unwrap(), sim.body_id("b").unwrap());
    let va = sim.bodies()[a].linear_velocity_in_world.x;
    let vb = sim.bodies()[b].linear_velocity_in_world.x;
    assert!(va.abs() < 1e-9 && (vb - 1.0).abs() < 1e-9, "{va} {vb}");
    assert!(sim.bodies()[a].position_in_world.x < sim.bodies()[b].position_in_world.x);
}

#[test]
fn a_scene_without_contact_fields_still_has_no_contact() {
    let scene = Scene::parse(&two_balls(""), "balls.toml").unwrap();
    assert!(scene.contact.is_none());
    let text = asset_text("ten_pendula.toml");
    assert!(Scene::parse(&text, "ten_pendula.toml")
        .unwrap()
        .contact
        .is_none());
}
