//! The URDF reader: values, frames and every refusal with its line.

use std::path::Path;

use nalgebra::{Matrix3, Vector3};

use super::parse;
use crate::error::ImportError;
use crate::model::JointKind;
use crate::options::ImportOptions;

const ARM: &str = r#"<?xml version="1.0"?>
<robot name="arm">
  <material name="steel"><color rgba="0.5 0.5 0.6 1"/></material>
  <link name="base"/>
  <link name="upper">
    <inertial>
      <origin xyz="0.5 0 0" rpy="0 0 1.5707963267948966"/>
      <mass value="2"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.25"/>
    </inertial>
    <visual><origin xyz="0.5 0 0"/><geometry><box size="1 0.1 0.1"/></geometry>
      <material name="steel"/></visual>
    <collision><geometry><cylinder radius="0.05" length="1"/></geometry></collision>
  </link>
  <joint name="shoulder" type="revolute">
    <origin xyz="0 0 1" rpy="0.1 0.2 0.3"/>
    <parent link="base"/><child link="upper"/>
    <axis xyz="0 2 0"/>
    <limit lower="-1" upper="2" effort="10" velocity="1"/>
    <dynamics damping="0.5" friction="0.1"/>
    <calibration rising="0"/>
  </joint>
  <transmission name="t1"/>
  <transmission name="t2"/>
  <gazebo/>
</robot>
"#;

fn err(text: &str) -> (u32, String, String) {
    match parse(text, Path::new("bad.urdf"), &ImportOptions::default()).unwrap_err() {
        ImportError::Invalid {
            at,
            element,
            message,
        } => (at.line, element, message),
        ImportError::Xml { at, message } => (at.line, "xml".into(), message),
        other => panic!("{other}"),
    }
}

#[test]
fn reads_links_joints_and_lists_what_it_ignored() {
    let m = parse(ARM, Path::new("arm.urdf"), &ImportOptions::default()).unwrap();
    assert_eq!(m.name, "arm");
    let upper = &m.links[1];
    assert_eq!(upper.mass_kg, 2.0);
    assert_eq!(upper.com_in_link, Vector3::new(0.5, 0.0, 0.0));
    // Turned 90° about z: the x and y moments swap.
    let want = Matrix3::from_diagonal(&Vector3::new(0.2, 0.1, 0.25));
    assert!((upper.inertia_in_link_kg_m2 - want).abs().max() < 1e-15);
    assert_eq!(upper.visuals[0].rgba, Some([0.5, 0.5, 0.6, 1.0]));
    assert_eq!(upper.at.line, 5);
    let j = &m.joints[0];
    assert_eq!(
        (j.kind, j.limits, j.damping, j.friction),
        (JointKind::Revolute, Some([-1.0, 2.0]), 0.5, 0.1)
    );
    assert_eq!(j.axis_in_child.into_inner(), Vector3::y());
    assert_eq!(j.at.line, 15);
    let ignored: Vec<(String, u32, usize)> = m
        .ignored
        .iter()
        .map(|i| (i.what.clone(), i.at.line, i.count))
        .collect();
    assert_eq!(
        ignored,
        [
            ("<joint><calibration>".to_string(), 21, 1),
            ("<transmission>".to_string(), 23, 2),
            ("<gazebo>".to_string(), 25, 1),
        ]
    );
}

#[test]
fn rpy_is_fixed_axis_roll_pitch_yaw() {
    let (r, p, y) = (0.1_f64, 0.2_f64, 0.3_f64);
    let rx = nalgebra::Rotation3::from_axis_angle(&Vector3::x_axis(), r);
    let ry = nalgebra::Rotation3::from_axis_angle(&Vector3::y_axis(), p);
    let rz = nalgebra::Rotation3::from_axis_angle(&Vector3::z_axis(), y);
    let want = rz * ry * rx;
    let got = super::rpy(r, p, y).rotation.to_rotation_matrix();
    assert!((got.matrix() - want.matrix()).abs().max() < 1e-15);
}

#[test]
fn refusals_name_line_and_element() {
    let (line, _, msg) = err("<robot name=\"x\">\n<link name=\"a\">\n</robot>");
    assert_eq!(line, 3, "{msg}");
    let missing = ARM.replace("<child link=\"upper\"/>", "<child link=\"uper\"/>");
    let (line, element, msg) = err(&missing);
    assert_eq!((line, element.as_str()), (15, "joint \"shoulder\""));
    assert!(msg.contains("child link \"uper\" does not exist"), "{msg}");
    let planar = ARM.replace("type=\"revolute\"", "type=\"planar\"");
    let (line, _, msg) = err(&planar);
    assert_eq!(line, 15);
    assert!(msg.contains("planar joints are not supported"), "{msg}");
    let mesh = ARM.replace(
        "<box size=\"1 0.1 0.1\"/>",
        "<mesh filename=\"meshes/nope.stl\"/>",
    );
    let (line, element, msg) = err(&mesh);
    assert_eq!((line, element.as_str()), (11, "link \"upper\""));
    assert!(
        msg.contains("mesh \"meshes/nope.stl\" not found; tried: meshes/nope.stl"),
        "{msg}"
    );
    let nan = ARM.replace("<mass value=\"2\"/>", "<mass value=\"two\"/>");
    let (line, _, msg) = err(&nan);
    assert_eq!(line, 8, "{msg}");
}

#[test]
fn package_paths_are_searched_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("second").join("robot_pkg").join("meshes");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("a.stl"), b"solid a\nendsolid a\n").unwrap();
    let paths = [dir.path().join("first"), dir.path().join("second")];
    let found = super::geometry::find_mesh(
        "package://robot_pkg/meshes/a.stl",
        Path::new("x.urdf"),
        &paths,
    );
    assert_eq!(found.unwrap(), pkg.join("a.stl"));
    let tried = super::geometry::find_mesh(
        "package://robot_pkg/meshes/b.stl",
        Path::new("x.urdf"),
        &paths,
    )
    .unwrap_err();
    assert_eq!(
        tried.len(),
        2 + std::env::var_os("ROS_PACKAGE_PATH").map_or(0, |v| std::env::split_paths(&v).count())
    );
}
