//! The MJCF reader against hand-computed values: frames from each orientation form, geom
//! inertia against the closed forms, default-class resolution, keyframes and the errors.

use std::f64::consts::{FRAC_PI_2, PI};
use std::path::Path;

use nalgebra::{Matrix3, UnitQuaternion, Vector3};

use super::read_str;
use crate::error::ImportError;
use crate::model::{GeomShape, JointKind, LoopKind, Model, WORLD};
use crate::options::ImportOptions;

fn read(text: &str) -> Model {
    read_str(text, Path::new("t.xml"), &ImportOptions::default()).expect("reads")
}

fn fails(text: &str) -> String {
    read_str(text, Path::new("t.xml"), &ImportOptions::default())
        .expect_err("refused")
        .to_string()
}

/// One body `b` with `attrs` and a unit sphere inertial, under `compiler`.
fn body_frame(compiler: &str, attrs: &str) -> UnitQuaternion<f64> {
    let text = format!(
        "<mujoco>{compiler}<worldbody><body name=\"b\" {attrs}>\
         <joint type=\"ball\"/><geom size=\"0.1\"/></body></worldbody></mujoco>"
    );
    read(&text).joints[0].parent_from_child.rotation
}

fn close(a: &UnitQuaternion<f64>, b: &UnitQuaternion<f64>) {
    assert!(a.angle_to(b) < 1e-12, "{a:?} vs {b:?}");
}

fn axis(v: Vector3<f64>, angle: f64) -> UnitQuaternion<f64> {
    UnitQuaternion::from_axis_angle(&nalgebra::Unit::new_normalize(v), angle)
}

#[test]
fn orientation_forms_give_the_hand_computed_frames() {
    let (x, y, z) = (Vector3::x(), Vector3::y(), Vector3::z());
    // Degrees by default, as in MuJoCo.
    close(&body_frame("", "euler=\"90 0 0\""), &axis(x, FRAC_PI_2));
    close(
        &body_frame("", "axisangle=\"0 0 2 90\""),
        &axis(z, FRAC_PI_2),
    );
    close(
        &body_frame("<compiler angle=\"radian\"/>", "axisangle=\"0 1 0 0.5\""),
        &axis(y, 0.5),
    );
    close(&body_frame("", "quat=\"0 2 0 0\""), &axis(x, PI));
    // x → y, y → −x: a quarter turn about z.
    close(
        &body_frame("", "xyaxes=\"0 1 0 -1 0.3 0\""),
        &axis(z, FRAC_PI_2),
    );
    // z → x by the smallest turn: a quarter turn about y.
    close(&body_frame("", "zaxis=\"1 0 0\""), &axis(y, FRAC_PI_2));
    // Moving axes (lower case): R = Rx(a)·Ry(b)·Rz(c); fixed (upper case): Rz(c)·Ry(b)·Rx(a).
    let (a, b, c) = (0.3, -0.7, 1.1);
    let e = format!("euler=\"{a} {b} {c}\"");
    close(
        &body_frame("<compiler angle=\"radian\"/>", &e),
        &(axis(x, a) * axis(y, b) * axis(z, c)),
    );
    close(
        &body_frame("<compiler angle=\"radian\" eulerseq=\"XYZ\"/>", &e),
        &(axis(z, c) * axis(y, b) * axis(x, a)),
    );
    close(
        &body_frame("<compiler angle=\"radian\" eulerseq=\"zyx\"/>", &e),
        &(axis(z, a) * axis(y, b) * axis(x, c)),
    );
    let two = fails(
        "<mujoco><worldbody>\n<body euler=\"1 2 3\" quat=\"1 0 0 0\"><geom size=\"1\"/></body>\
         </worldbody></mujoco>",
    );
    assert!(
        two.starts_with("t.xml:2: <body>: attribute `euler`: the orientation is given twice"),
        "{two}"
    );
}

fn approx(a: f64, b: f64) {
    assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
}

fn single_body(geoms: &str) -> Model {
    read(&format!(
        "<mujoco><worldbody><body name=\"b\"><freejoint/>{geoms}</body></worldbody></mujoco>"
    ))
}

#[test]
fn geom_inertia_matches_the_closed_forms() {
    // A box of half sizes 0.1, 0.2, 0.3 at density 1000: 0.2 × 0.4 × 0.6 m, 48 kg.
    let m = single_body("<geom type=\"box\" size=\"0.1 0.2 0.3\"/>");
    let l = &m.links[0];
    approx(l.mass_kg, 48.0);
    approx(l.inertia_in_link_kg_m2[(0, 0)], 48.0 * (0.16 + 0.36) / 12.0);
    approx(l.inertia_in_link_kg_m2[(2, 2)], 48.0 * (0.04 + 0.16) / 12.0);
    assert!(
        matches!(m.links[0].visuals[0].shape, GeomShape::Box { size } if (size - Vector3::new(0.2, 0.4, 0.6)).norm() < 1e-15)
    );
    // A cylinder of radius 0.05 along x from fromto, 0.4 long, with mass 2: about its axis
    // m r²/2, across m (3 r² + L²)/12, centred at x = 0.2.
    let m =
        single_body("<geom type=\"cylinder\" fromto=\"0 0 0 0.4 0 0\" size=\"0.05\" mass=\"2\"/>");
    let l = &m.links[0];
    approx(l.mass_kg, 2.0);
    approx(l.com_in_link.x, 0.2);
    approx(l.inertia_in_link_kg_m2[(0, 0)], 2.0 * 0.0025 / 2.0);
    approx(
        l.inertia_in_link_kg_m2[(1, 1)],
        2.0 * (3.0 * 0.0025 + 0.16) / 12.0,
    );
    // A capsule (r = 0.1, half length 0.2) at density 500: a cylinder and two hemispheres.
    let m = single_body("<geom type=\"capsule\" size=\"0.1 0.2\" density=\"500\"/>");
    let (r, h) = (0.1_f64, 0.4_f64);
    let (mc, ms) = (500.0 * PI * r * r * h, 500.0 * 4.0 / 3.0 * PI * r.powi(3));
    let l = &m.links[0];
    approx(l.mass_kg, mc + ms);
    approx(
        l.inertia_in_link_kg_m2[(2, 2)],
        mc * r * r / 2.0 + ms * 2.0 * r * r / 5.0,
    );
    // Hemisphere: 83/320 m r² about its own centre, 3r/8 from its face at h/2.
    let hemi = 83.0 / 320.0 * ms * r * r + ms * (h / 2.0 + 3.0 * r / 8.0).powi(2);
    approx(
        l.inertia_in_link_kg_m2[(0, 0)],
        mc * (3.0 * r * r + h * h) / 12.0 + hemi,
    );
    // An ellipsoid.
    let m = single_body("<geom type=\"ellipsoid\" size=\"0.1 0.2 0.3\"/>");
    let mass = 1000.0 * 4.0 / 3.0 * PI * 0.006;
    approx(m.links[0].mass_kg, mass);
    approx(
        m.links[0].inertia_in_link_kg_m2[(1, 1)],
        mass * (0.01 + 0.09) / 5.0,
    );
    // Two spheres of 1 kg at x = ±0.5: parallel axes, 2 (2/5 r²) + 2 · 0.25 about y and z.
    let m = single_body(
        "<geom size=\"0.1\" pos=\"0.5 0 0\" mass=\"1\"/><geom size=\"0.1\" pos=\"-0.5 0 0\" mass=\"1\"/>",
    );
    let i = m.links[0].inertia_in_link_kg_m2;
    approx(i[(0, 0)], 0.008);
    approx(i[(1, 1)], 0.008 + 0.5);
    approx(i[(2, 2)], 0.008 + 0.5);
    // An <inertial> wins over the geoms (inertiafromgeom auto), turned into the body axes.
    let m = single_body(
        "<inertial pos=\"0 0 0.1\" euler=\"0 0 90\" mass=\"3\" diaginertia=\"1 2 3\"/><geom size=\"1\"/>",
    );
    let l = &m.links[0];
    approx(l.mass_kg, 3.0);
    assert!((l.com_in_link - Vector3::new(0.0, 0.0, 0.1)).norm() < 1e-15);
    assert!(
        (l.inertia_in_link_kg_m2 - Matrix3::from_diagonal(&Vector3::new(2.0, 1.0, 3.0))).norm()
            < 1e-12
    );
}

#[test]
fn default_classes_resolve_as_mujoco_does() {
    let m = read(
        r#"<mujoco>
  <default>
    <joint damping="1" axis="1 0 0"/>
    <geom size="0.1"/>
    <default class="a">
      <joint axis="0 1 0"/>
      <default class="b">
        <joint damping="2" range="-30 30"/>
        <geom type="box" size="0.1 0.1 0.1"/>
      </default>
    </default>
  </default>
  <worldbody>
    <body name="p" childclass="b">
      <joint name="j1"/>
      <geom/>
      <body name="q">
        <joint name="j2" class="a" stiffness="5"/>
        <geom class="main"/>
        <body name="r" childclass="main">
          <joint name="j3"/>
          <geom/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"#,
    );
    let j = |n: &str| m.joints.iter().find(|j| j.name == n).unwrap();
    // j1: class b through the body's childclass (b's damping and range, a's axis).
    assert_eq!(j("j1").damping, 2.0);
    assert_eq!(j("j1").axis_in_child.into_inner(), Vector3::y());
    let lim = j("j1").limits.unwrap();
    approx(lim[1], 30.0 * PI / 180.0);
    // j2: its own class a (main's damping, a's axis), childclass b inherited but overridden.
    assert_eq!(j("j2").damping, 1.0);
    assert_eq!(j("j2").stiffness, 5.0);
    assert_eq!(j("j2").limits, None);
    assert_eq!(j("j3").axis_in_child.into_inner(), Vector3::x());
    assert!(matches!(m.links[0].visuals[0].shape, GeomShape::Box { .. }));
    assert!(matches!(
        m.links[1].visuals[0].shape,
        GeomShape::Sphere { .. }
    ));
    assert!(matches!(
        m.links[2].visuals[0].shape,
        GeomShape::Sphere { .. }
    ));
    let unknown = fails(
        "<mujoco><worldbody>\n<body childclass=\"nope\"><geom size=\"1\"/></body></worldbody></mujoco>",
    );
    assert_eq!(unknown, "t.xml:2: <body>: unknown default class `nope`");
}

#[test]
fn joints_take_frames_limits_and_ref() {
    let m = read(
        r#"<mujoco>
  <worldbody>
    <body name="a" pos="0 0 1" euler="0 0 90">
      <joint name="h" pos="0 0 0.5" axis="1 0 0" range="-90 45" damping="0.2" armature="0.01" springref="10" ref="30"/>
      <geom size="0.1"/>
      <body name="b" pos="1 0 0">
        <joint name="s" type="slide" axis="0 0 2" range="-0.1 0.2" limited="true"/>
        <geom size="0.1"/>
      </body>
    </body>
  </worldbody>
</mujoco>"#,
    );
    let h = &m.joints[0];
    assert_eq!(
        (h.kind, h.parent.as_str(), h.child.as_str()),
        (JointKind::Revolute, WORLD, "a")
    );
    assert_eq!(h.at.line, 4);
    let [lo, hi] = h.limits.unwrap();
    approx(lo, -FRAC_PI_2);
    approx(hi, PI / 4.0);
    approx(h.spring_ref, 10.0 * PI / 180.0);
    assert_eq!((h.damping, h.armature), (0.2, 0.01));
    assert_eq!(h.anchor_in_child, Vector3::new(0.0, 0.0, 0.5));
    // ref = 30°: the file draws the body at q = 30°, so q = 0 is 30° back about x.
    let at_zero = axis(Vector3::z(), FRAC_PI_2) * axis(Vector3::x(), -PI / 6.0);
    close(&h.parent_from_child.rotation, &at_zero);
    assert_eq!(m.initial_positions, vec![("h".to_owned(), vec![PI / 6.0])]);
    let s = &m.joints[1];
    assert_eq!(s.kind, JointKind::Prismatic);
    assert_eq!(s.axis_in_child.into_inner(), Vector3::z());
    assert_eq!(s.limits, Some([-0.1, 0.2]));
    let no_limits = read(
        "<mujoco><compiler angle=\"radian\"/><worldbody><body><joint range=\"-1 1\" limited=\"false\"/><geom size=\"1\"/></body></worldbody></mujoco>",
    );
    assert_eq!(no_limits.joints[0].limits, None);
}

#[test]
fn bodies_without_joints_are_welded_and_two_joints_are_refused() {
    let m = read(
        "<mujoco><worldbody><body name=\"base\" pos=\"1 2 3\"><geom size=\"1\"/></body></worldbody></mujoco>",
    );
    assert_eq!(m.joints[0].kind, JointKind::Fixed);
    assert_eq!(m.joints[0].parent, WORLD);
    assert_eq!(
        m.joints[0].parent_from_child.translation.vector,
        Vector3::new(1.0, 2.0, 3.0)
    );
    let e = fails(
        "<mujoco><worldbody>\n<body name=\"u\">\n<joint axis=\"1 0 0\"/>\n<joint name=\"second\" axis=\"0 1 0\"/><geom size=\"1\"/></body></worldbody></mujoco>",
    );
    assert!(
        e.starts_with(
            "t.xml:4: <joint \"second\">: body `u` has 2 joints; a body may have one here"
        ),
        "{e}"
    );
    assert!(e.contains("split the body into nested bodies"), "{e}");
}

#[test]
fn loops_excludes_options_and_keyframes() {
    let text = r#"<mujoco model="crank">
  <option gravity="0 0 -1" timestep="0.002" integrator="RK4"/>
  <worldbody>
    <body name="a"><joint/><geom size="0.1"/></body>
    <body name="b"><freejoint/><geom size="0.1"/></body>
  </worldbody>
  <equality>
    <connect body1="a" body2="b" anchor="0 0 1" solref="0.001 1"/>
    <weld name="w" body1="b"/>
    <joint joint1="x"/>
  </equality>
  <contact><exclude body1="a" body2="b"/></contact>
  <keyframe>
    <key name="k" qpos="0.5 1 2 3 1 0 0 0" qvel="1 0 0 0 0 0 2"/>
  </keyframe>
</mujoco>"#;
    let m = read(text);
    assert_eq!(m.name, "crank");
    assert_eq!(m.gravity_m_per_s2, Some([0.0, 0.0, -1.0]));
    assert_eq!(m.dt_secs, Some(0.002));
    assert_eq!(m.loops.len(), 2);
    assert_eq!(m.loops[0].kind, LoopKind::Connect);
    assert_eq!(m.loops[0].anchor_in_link1, Vector3::new(0.0, 0.0, 1.0));
    assert_eq!(
        (m.loops[1].link2.as_str(), m.loops[1].name.as_str()),
        (WORLD, "w")
    );
    assert_eq!(m.contact_excludes, vec![("a".to_owned(), "b".to_owned())]);
    assert!(
        m.initial_positions.is_empty(),
        "qpos0 unless a keyframe is named"
    );
    let ignored: Vec<(&str, u32)> = m
        .ignored
        .iter()
        .map(|i| (i.what.as_str(), i.at.line))
        .collect();
    assert_eq!(
        ignored,
        vec![("option@integrator", 2), ("equality/joint", 10)]
    );
    let options = ImportOptions {
        keyframe: Some("k".into()),
        ..ImportOptions::default()
    };
    let m = read_str(text, Path::new("t.xml"), &options).unwrap();
    assert_eq!(
        m.initial_positions,
        vec![
            ("a_joint".to_owned(), vec![0.5]),
            (
                "b_joint".to_owned(),
                vec![1.0, 2.0, 3.0, 1.0, 0.0, 0.0, 0.0]
            )
        ]
    );
    assert_eq!(
        m.initial_velocities,
        vec![
            ("a_joint".to_owned(), vec![1.0]),
            ("b_joint".to_owned(), vec![0.0, 0.0, 0.0, 0.0, 0.0, 2.0])
        ]
    );
    let options = ImportOptions {
        keyframe: Some("none".into()),
        ..ImportOptions::default()
    };
    let e = read_str(text, Path::new("t.xml"), &options)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "t.xml:13: <keyframe>: --keyframe none: no <key name=\"none\"> (the file's keys: k)"
    );
}

#[test]
fn ignored_elements_are_listed_once_with_their_first_line() {
    let m = read(
        "<mujoco>\n<visual/>\n<worldbody>\n<light/>\n<body><joint/><geom size=\"1\" friction=\"1\"/>\n<site/><geom size=\"1\" friction=\"2\"/></body></worldbody>\n<actuator/></mujoco>",
    );
    let ignored: Vec<(&str, u32, usize)> = m
        .ignored
        .iter()
        .map(|i| (i.what.as_str(), i.at.line, i.count))
        .collect();
    assert_eq!(
        ignored,
        vec![
            ("<visual>", 2, 1),
            ("<actuator>", 7, 1),
            ("<light>", 4, 1),
            ("geom@friction", 5, 2),
            ("<site>", 6, 1),
        ]
    );
}

#[test]
fn bad_input_names_file_line_and_element() {
    let cases = [
        ("<mujoco><worldbody>\n<body><geom size=\"1\"></body></worldbody></mujoco>", "t.xml:2: malformed XML"),
        ("<robot/>", "t.xml:1: <robot>: an MJCF file's root element is <mujoco>"),
        (
            "<mujoco><worldbody>\n<body><joint type=\"screw\"/><geom size=\"1\"/></body></worldbody></mujoco>",
            "t.xml:2: <joint>: attribute `type`: `screw` is not one of hinge, slide, ball, free",
        ),
        (
            "<mujoco><worldbody>\n<body><geom type=\"capsule\" size=\"0.1\"/></body></worldbody></mujoco>",
            "t.xml:2: <geom>: attribute `size`: a capsule needs 2 size numbers, 1 given",
        ),
        (
            "<mujoco><worldbody><body><geom size=\"1\"/>\n<body><freejoint/><geom size=\"1\"/></body></body></worldbody></mujoco>",
            "t.xml:2: <freejoint>: a free joint is allowed only in a top-level body",
        ),
        (
            "<mujoco><worldbody><body name=\"a\"><geom size=\"x\"/></body></worldbody>\n<equality><connect body1=\"a\" body2=\"z\" anchor=\"0 0 0\"/></equality></mujoco>",
            "t.xml:1: <geom>: attribute `size`: `x` is not a finite number",
        ),
        (
            "<mujoco><worldbody><body name=\"a\"><geom size=\"1\"/></body></worldbody>\n<equality><connect body1=\"a\" body2=\"z\" anchor=\"0 0 0\"/></equality></mujoco>",
            "t.xml:2: <connect>: attribute `body2`: no body `z`",
        ),
        (
            "<mujoco><asset>\n<mesh file=\"missing.stl\"/></asset></mujoco>",
            "t.xml:2: <mesh>: attribute `file`: the mesh file missing.stl cannot be found",
        ),
        (
            "<mujoco><compiler autolimits=\"false\"/><worldbody><body>\n<joint range=\"0 1\"/><geom size=\"1\"/></body></worldbody></mujoco>",
            "t.xml:2: <joint>: attribute `range`: a range without `limited`",
        ),
    ];
    for (text, start) in cases {
        let e = fails(text);
        assert!(e.starts_with(start), "{e}\nexpected: {start}");
    }
    let io = super::read(Path::new("/nonexistent/m.xml"), &ImportOptions::default()).unwrap_err();
    assert!(matches!(io, ImportError::Io { .. }));
}
