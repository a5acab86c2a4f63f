//! The MJCF test models of `tests/import/models/` (the MuJoCo comparison's) read, emitted as
//! scene text and parsed by the scene loader: every body's mass, principal moments, centre of
//! mass in the initial pose and (for the thrown body) its initial velocities equal MuJoCo's own
//! compiled values (MuJoCo 4.0.0, `mj_forward`; copied here so that `make test` needs no
//! Python), to round-off.

use std::path::PathBuf;

use ar_dynamics::scene::Scene;
use ar_import::{emit, mjcf, ImportOptions};
use nalgebra::Vector3;

/// Model, body, mass (kg), principal moments (sorted, kg·m²), centre of mass (m).
type Row = (&'static str, &'static str, f64, [f64; 3], [f64; 3]);

/// MuJoCo's body mass, principal moments (sorted) and `xipos` after `mj_forward`.
const MUJOCO: [Row; 10] = [
    (
        "double_pendulum",
        "upper",
        1.0,
        [
            0.00019673469387755104,
            0.009013061224489798,
            0.009013061224489798,
        ],
        [-0.0964181414529809, 0.0, 0.8850933335321532],
    ),
    (
        "double_pendulum",
        "lower",
        0.5,
        [
            5.541666666666666e-05,
            0.003071427469135802,
            0.003071427469135802,
        ],
        [-0.3102978605042004, 0.0, 0.7274341491485979],
    ),
    (
        "slider_crank",
        "crank",
        0.2,
        [
            9.764705882352942e-06,
            0.0002200588235294117,
            0.0002200588235294117,
        ],
        [0.02500000000000001, 0.0, 0.5433012701892219],
    ),
    (
        "slider_crank",
        "rod",
        0.3,
        [
            9.534077253218883e-06,
            0.0024186757081545063,
            0.0024186757081545063,
        ],
        [0.1422215239063892, 0.0, 0.4683012701892219],
    ),
    (
        "slider_crank",
        "slider",
        0.5,
        [
            0.00010416666666666667,
            0.00018749999999999998,
            0.00021666666666666666,
        ],
        [0.23444304781277836, 0.0, 0.35],
    ),
    (
        "free_body",
        "brick",
        0.22925818989619287,
        [
            8.261888367044907e-05,
            0.0003007073717763397,
            0.0003494787584882649,
        ],
        [
            0.00654452824401066,
            0.009009648067580473,
            0.30183100635062077,
        ],
    ),
    (
        "chain",
        "l1",
        0.16611736642533678,
        [
            1.167902802068015e-05,
            0.0002632002640082195,
            0.0002632002640082195,
        ],
        [0.0511721119171466, -0.03, 0.5909769760091739],
    ),
    (
        "chain",
        "l2",
        1.4375927982826895,
        [
            0.00027706333930539105,
            0.0027471091472638302,
            0.0027471091472638302,
        ],
        [0.137030578972001, -0.08399999999999999, 0.5392824537172474],
    ),
    (
        "chain",
        "l3",
        0.3428319531897627,
        [
            5.585767471178663e-05,
            0.0006156328565781632,
            0.0006156328565781632,
        ],
        [0.2306669304020197, -0.11374799122512354, 0.4276208333020345],
    ),
    (
        "chain",
        "l4",
        0.08,
        [2e-05, 0.0001, 0.00011],
        [0.247580911631674, -0.06516170669796664, 0.41288797445204306],
    ),
];

/// The thrown brick's velocity in MuJoCo (`mj_objectVelocity` of the body, world axes):
/// angular, then the centre of mass's linear velocity.
const BRICK_VELOCITY: [f64; 6] = [
    4.980986870975664,
    -2.5093648074027555,
    10.68376609883128,
    0.2991483645148043,
    -0.13920000960691029,
    2.561299547593303,
];

fn model_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/import/models/{name}.xml"))
}

fn scene(name: &str) -> Scene {
    let options = ImportOptions {
        keyframe: (name == "free_body").then(|| "throw".to_owned()),
        ..ImportOptions::default()
    };
    let path = model_path(name);
    let model = mjcf::read(&path, &options).expect("the model reads");
    let emitted = emit::scene_toml(&model, &options).expect("the model emits");
    Scene::parse(&emitted.text, &path).unwrap_or_else(|e| panic!("{e}\n{}", emitted.text))
}

fn close(a: &Vector3<f64>, b: &[f64; 3], tol: f64, what: &str) {
    let d = (a - Vector3::from(*b)).norm();
    assert!(d <= tol, "{what}: {a:?} vs MuJoCo {b:?} ({d:e})");
}

#[test]
fn bodies_match_mujocos_compiled_model() {
    for model in ["double_pendulum", "slider_crank", "free_body", "chain"] {
        let scene = scene(model);
        let rows: Vec<_> = MUJOCO.iter().filter(|r| r.0 == model).collect();
        let dynamic: Vec<_> = scene.bodies.iter().filter(|b| b.is_dynamic()).collect();
        assert_eq!(dynamic.len(), rows.len(), "{model}");
        for &&(_, name, mass, moments, com) in &rows {
            let b = dynamic.iter().find(|b| b.name == name).expect(name);
            let what = format!("{model}/{name}");
            assert!(
                (b.mass_kg - mass).abs() <= 1e-14 * mass,
                "{what}: mass {}",
                b.mass_kg
            );
            let mut ours: Vec<f64> = b.principal_inertia_kg_m2.iter().copied().collect();
            ours.sort_by(f64::total_cmp);
            close(
                &Vector3::from_vec(ours),
                &moments,
                1e-12 * moments[2],
                &what,
            );
            close(&b.position_in_world, &com, 1e-14, &what);
        }
    }
}

#[test]
fn the_thrown_body_starts_with_mujocos_velocity() {
    let scene = scene("free_body");
    let brick = scene.bodies.iter().find(|b| b.name == "brick").unwrap();
    let [wx, wy, wz, vx, vy, vz] = BRICK_VELOCITY;
    close(
        &brick.angular_velocity_in_world,
        &[wx, wy, wz],
        1e-13,
        "angular velocity",
    );
    close(
        &brick.linear_velocity_in_world,
        &[vx, vy, vz],
        1e-13,
        "velocity",
    );
    assert!(scene.joints.is_empty(), "a free body has no joint");
}

#[test]
fn the_crank_loop_is_a_ball_joint_and_the_damping_is_the_scenes() {
    let path = model_path("slider_crank");
    let model = mjcf::read(&path, &ImportOptions::default()).unwrap();
    let emitted = emit::scene_toml(&model, &ImportOptions::default()).unwrap();
    let scene = Scene::parse(&emitted.text, &path).unwrap();
    let kinds: Vec<(&str, &str)> = scene
        .joints
        .iter()
        .map(|j| (j.name.as_str(), j.kind.name()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("crank_pivot", "hinge"),
            ("crank_pin", "hinge"),
            ("slide", "prismatic"),
            ("wrist_pin", "ball")
        ]
    );
    let path = model_path("double_pendulum");
    let model = mjcf::read(&path, &ImportOptions::default()).unwrap();
    let emitted = emit::scene_toml(&model, &ImportOptions::default()).unwrap();
    let scene = Scene::parse(&emitted.text, &path).unwrap();
    let damping: Vec<f64> = scene.joints.iter().map(|j| j.damping).collect();
    assert_eq!(damping, [0.02, 0.01]);
    assert!(
        emitted.warnings.iter().all(|w| !w.contains("damping")),
        "{:?}",
        emitted.warnings
    );
}
