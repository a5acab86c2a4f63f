//! Calibration objects: named points with known marker-frame positions that the user touches
//! with the stylus (the paper's 80 mm reference cube, or crosses printed on the marker sheet).
//!
//! File format (TOML, metres, world = marker frame: origin at the marker centre, z up):
//! ```toml
//! name = "80 mm reference cube"
//! description = "where the object sits and how to touch it"
//! [[points]]
//! label = "top front left corner"
//! p_in_world_m = [0.070, -0.040, 0.080]
//! ```
//! The points are touched in file order. The set must be usable for a fit (at least four,
//! no repeats, not coplanar), which [`CalibrationObject::load`] checks with the file's line
//! numbers in its messages.

use crate::point_set::{check_point_set, PointSetError};
use ar_io::toml_location::line_of;
use nalgebra::Point3;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The text of the paper's 80 mm reference cube, assets/calibration/cube_80mm.toml, built in
/// so that programs find the default object from any directory.
const CUBE_80MM_TOML: &str = include_str!("../../assets/calibration/cube_80mm.toml");
const CUBE_80MM_NAME: &str = "assets/calibration/cube_80mm.toml (built in)";

/// A touchable calibration object.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationObject {
    /// Human-readable name.
    pub name: String,
    /// Where it sits on the marker sheet and how to touch it.
    pub description: String,
    /// The points, in the order the user touches them.
    pub points: Vec<ObjectPoint>,
}

/// One point to touch.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectPoint {
    /// What the prompt calls it ("top front left corner").
    pub label: String,
    /// Its position in the marker (world) frame, m.
    pub p_in_world: Point3<f64>,
}

/// What was wrong with a calibration-object file.
#[derive(Debug, thiserror::Error)]
pub enum ObjectError {
    /// The file could not be read.
    #[error("calibration object {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML did not parse, or a field is missing, misspelt or of the wrong type (the
    /// parser's message has line, column and field).
    #[error("calibration object {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A value parsed but is unusable.
    #[error("calibration object {path}, line {line}: field `{field}`: {problem}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line of the offending value.
        line: usize,
        /// The field.
        field: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// The points cannot determine a transform (point numbers are in file order).
    #[error("calibration object {path}: {source}")]
    Unusable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: PointSetError,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ObjectFile {
    name: String,
    #[serde(default)]
    description: String,
    points: Spanned<Vec<PointFile>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PointFile {
    label: Spanned<String>,
    p_in_world_m: Spanned<[f64; 3]>,
}

impl CalibrationObject {
    /// Parses an object file's text; `path` only names the file in errors.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Self, ObjectError> {
        let file: ObjectFile = toml::from_str(text).map_err(|e| ObjectError::Parse {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        let invalid = |offset: usize, field, problem: String| ObjectError::Invalid {
            path: path.to_owned(),
            line: line_of(text, offset),
            field,
            problem,
        };
        let mut points = Vec::new();
        for (i, p) in file.points.get_ref().iter().enumerate() {
            let label = p.label.get_ref().trim();
            if label.is_empty() {
                return Err(invalid(
                    p.label.span().start,
                    "label",
                    format!("point {} has an empty label", i + 1),
                ));
            }
            if let Some(j) = points.iter().position(|q: &ObjectPoint| q.label == label) {
                return Err(invalid(
                    p.label.span().start,
                    "label",
                    format!(
                        "point {} repeats the label of point {}: \"{label}\"",
                        i + 1,
                        j + 1
                    ),
                ));
            }
            let [x, y, z] = *p.p_in_world_m.get_ref();
            if ![x, y, z].iter().all(|v| v.is_finite() && v.abs() < 10.0) {
                return Err(invalid(
                    p.p_in_world_m.span().start,
                    "p_in_world_m",
                    format!(
                        "point {} must be three finite coordinates within 10 m",
                        i + 1
                    ),
                ));
            }
            points.push(ObjectPoint {
                label: label.to_owned(),
                p_in_world: Point3::new(x, y, z),
            });
        }
        let world: Vec<_> = points.iter().map(|p| p.p_in_world).collect();
        check_point_set(&world, &world).map_err(|source| ObjectError::Unusable {
            path: path.to_owned(),
            source,
        })?;
        Ok(Self {
            name: file.name,
            description: file.description.trim().to_owned(),
            points,
        })
    }

    /// Reads and checks an object file.
    pub fn load(path: &Path) -> Result<Self, ObjectError> {
        let text = ar_io::input_file::read_text(path).map_err(|source| ObjectError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_toml_str(&text, path)
    }

    /// The paper's 80 mm reference cube on its place of the printed calibration sheet: the
    /// default object of the guided calibration (the built-in copy of
    /// assets/calibration/cube_80mm.toml).
    pub fn cube_80mm() -> Result<Self, ObjectError> {
        Self::from_toml_str(CUBE_80MM_TOML, Path::new(CUBE_80MM_NAME))
    }

    /// The known positions, in touching order.
    pub fn positions(&self) -> Vec<Point3<f64>> {
        self.points.iter().map(|p| p.p_in_world).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "tetra"
[[points]]
label = "a"
p_in_world_m = [0.0, 0.0, 0.0]
[[points]]
label = "b"
p_in_world_m = [0.08, 0.0, 0.0]
[[points]]
label = "c"
p_in_world_m = [0.0, 0.08, 0.0]
[[points]]
label = "d"
p_in_world_m = [0.0, 0.0, 0.08]
"#;

    #[test]
    fn a_good_file_loads_in_order() {
        let o = CalibrationObject::from_toml_str(GOOD, Path::new("t.toml")).unwrap();
        assert_eq!(o.points.len(), 4);
        assert_eq!(o.points[3].label, "d");
        assert_eq!(o.points[1].p_in_world, Point3::new(0.08, 0.0, 0.0));
    }

    #[test]
    fn a_bad_coordinate_names_its_line_and_field() {
        let text = GOOD.replace("[0.08, 0.0, 0.0]", "[0.08, 0.0, nan]");
        let err = CalibrationObject::from_toml_str(&text, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("t.toml, line 8") && err.contains("p_in_world_m"),
            "{err}"
        );
    }

    #[test]
    fn a_misspelt_field_is_a_parse_error_with_a_line() {
        let text = GOOD.replace("label = \"c\"", "lable = \"c\"");
        let err = CalibrationObject::from_toml_str(&text, Path::new("t.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 10") && err.contains("lable"), "{err}");
    }

    #[test]
    fn a_flat_object_is_refused() {
        let text = GOOD.replace("[0.0, 0.0, 0.08]", "[0.08, 0.08, 0.0]");
        let err = CalibrationObject::from_toml_str(&text, Path::new("t.toml")).unwrap_err();
        assert!(matches!(err, ObjectError::Unusable { .. }), "{err}");
    }

    #[test]
    fn the_shipped_objects_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/calibration");
        let cube = CalibrationObject::load(&dir.join("cube_80mm.toml")).unwrap();
        assert_eq!(cube.points.len(), 8);
        // Every corner is 80 mm from three others: it really is an 80 mm cube.
        for p in &cube.points {
            let edges = cube
                .points
                .iter()
                .filter(|q| ((q.p_in_world - p.p_in_world).norm() - 0.080).abs() < 1e-9)
                .count();
            assert_eq!(edges, 3, "{}", p.label);
        }
        assert_eq!(
            CalibrationObject::cube_80mm().unwrap(),
            cube,
            "built-in copy"
        );
        let sheet = CalibrationObject::load(&dir.join("sheet_points.toml")).unwrap();
        assert!(sheet.points.len() >= 6);
    }

    /// The numbers `(a b)` of `transform="translate(a b)"` or the `x`/`y` attributes of the
    /// element with `id` in the sheet SVG, in paper mm.
    fn svg_position(svg: &str, id: &str) -> (f64, f64) {
        let start = svg
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("no {id} in the sheet"));
        let tag = &svg[start..start + svg[start..].find('>').expect("closed tag")];
        let attr = |name: &str| -> Option<f64> {
            let i = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            tag[i..i + tag[i..].find('"')?].parse().ok()
        };
        if let Some(i) = tag.find("translate(") {
            let inner = &tag[i + 10..i + tag[i..].find(')').expect("closing paren")];
            let v: Vec<f64> = inner
                .split_whitespace()
                .map(|t| t.parse().unwrap())
                .collect();
            (v[0], v[1])
        } else {
            (attr("x").expect("x"), attr("y").expect("y"))
        }
    }

    /// The printable sheet carries the cube place and the crosses exactly where the object
    /// files say (a mismatch would silently bias every calibration made with it).
    #[test]
    fn the_printable_sheet_agrees_with_the_object_files() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/calibration");
        let svg = std::fs::read_to_string(dir.join("calibration_sheet_a4.svg")).unwrap();
        let (mx, my) = svg_position(&svg, "marker");
        // Paper mm (y down) of the marker centre; world = (X − cx, cy − Y) / 1000.
        let (cx, cy) = (mx + 40.0, my + 40.0);
        let to_world = |(x, y): (f64, f64)| ((x - cx) / 1e3, (cy - y) / 1e3);
        let cube = CalibrationObject::load(&dir.join("cube_80mm.toml")).unwrap();
        let (px, py) = to_world(svg_position(&svg, "cube-place"));
        // The rect's x, y is its top-left on paper: world min x, max y.
        let min_x = cube
            .points
            .iter()
            .map(|p| p.p_in_world.x)
            .fold(f64::MAX, f64::min);
        let max_y = cube
            .points
            .iter()
            .map(|p| p.p_in_world.y)
            .fold(f64::MIN, f64::max);
        assert!(
            (px - min_x).abs() < 1e-9 && (py - max_y).abs() < 1e-9,
            "cube place"
        );
        assert!(svg.contains("id=\"cube-place\"") && svg.contains("width=\"80\" height=\"80\""));
        let sheet = CalibrationObject::load(&dir.join("sheet_points.toml")).unwrap();
        let (_, fold_y) = to_world(svg_position_line(&svg));
        for (p, name) in sheet.points.iter().zip('A'..) {
            let (x, y) = to_world(svg_position(&svg, &format!("cross-{name}")));
            let w = p.p_in_world;
            if w.z == 0.0 {
                assert!(
                    (x - w.x).abs() < 1e-9 && (y - w.y).abs() < 1e-9,
                    "cross {name}"
                );
            } else {
                // On the tab: printed w.z beyond the fold line, which folds up to y = fold_y.
                assert!(
                    (w.y - fold_y).abs() < 1e-9,
                    "cross {name} is not on the fold line"
                );
                assert!(
                    (x - w.x).abs() < 1e-9 && (y - fold_y - w.z).abs() < 1e-9,
                    "cross {name}"
                );
            }
        }
    }

    fn svg_position_line(svg: &str) -> (f64, f64) {
        let start = svg.find("id=\"fold-line\"").expect("fold line");
        let tag = &svg[start..start + svg[start..].find('>').expect("closed tag")];
        let i = tag.find(" y1=\"").expect("y1") + 5;
        let y: f64 = tag[i..i + tag[i..].find('"').expect("quote")]
            .parse()
            .unwrap();
        (0.0, y)
    }
}
