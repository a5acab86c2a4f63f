//! Point pairs from a CSV file for `calibrate tracker --pairs`: a header
//! `world_x,world_y,world_z,arm_x,arm_y,arm_z` and one pair per line, metres, read through
//! [`ar_io::csv_table`] (BOM, quotes, CRLF, blank and `#` lines). Errors name the file, line
//! and column.

use nalgebra::Point3;
use std::path::{Path, PathBuf};

/// The required header, column by column.
pub const HEADER: [&str; 6] = ["world_x", "world_y", "world_z", "arm_x", "arm_y", "arm_z"];

/// One pair read from the file.
#[derive(Debug, Clone, PartialEq)]
pub struct PointPair {
    /// Known marker-frame position, m.
    pub p_in_world: Point3<f64>,
    /// Touched arm-frame position, m.
    pub p_in_arm: Point3<f64>,
    /// 1-based line it came from.
    pub line: usize,
}

/// What was wrong with a pairs file.
#[derive(Debug, thiserror::Error)]
pub enum PairsError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The header line is missing or wrong.
    #[error("{path}, line {line}: the header must be `{}`, found `{found}`", HEADER.join(","))]
    Header {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What was there.
        found: String,
    },
    /// A data line has the wrong number of fields.
    #[error("{path}, line {line}: {got} columns, expected 6 ({})", HEADER.join(","))]
    FieldCount {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// Fields found.
        got: usize,
    },
    /// A field is not a finite number.
    #[error(
        "{path}, line {line}, column {column} ({name}): `{value}` is not a finite number of metres"
    )]
    Number {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The column's header name.
        name: &'static str,
        /// The text found.
        value: String,
    },
}

/// Parses the text of a pairs file; `path` only names the file in errors.
pub fn parse_pairs(text: &str, path: &Path) -> Result<Vec<PointPair>, PairsError> {
    let table = ar_io::csv_table::read_table(text).map_err(|e| PairsError::Header {
        path: path.to_owned(),
        line: e.line,
        found: e.message,
    })?;
    let Some(table) = table else {
        return Err(PairsError::Header {
            path: path.to_owned(),
            line: 1,
            found: "(empty file)".into(),
        });
    };
    if table.columns() != HEADER {
        return Err(PairsError::Header {
            path: path.to_owned(),
            line: table.header.line,
            found: table.header.joined(),
        });
    }
    let mut pairs = Vec::new();
    for row in &table.rows {
        let line = row.line;
        if row.fields.len() != 6 {
            return Err(PairsError::FieldCount {
                path: path.to_owned(),
                line,
                got: row.fields.len(),
            });
        }
        let mut v = [0.0; 6];
        for (c, field) in row.fields.iter().enumerate() {
            v[c] = field
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| PairsError::Number {
                    path: path.to_owned(),
                    line,
                    column: c + 1,
                    name: HEADER[c],
                    value: field.clone(),
                })?;
        }
        pairs.push(PointPair {
            p_in_world: Point3::new(v[0], v[1], v[2]),
            p_in_arm: Point3::new(v[3], v[4], v[5]),
            line,
        });
    }
    Ok(pairs)
}

/// Reads and parses a pairs file.
pub fn load_pairs(path: &Path) -> Result<Vec<PointPair>, PairsError> {
    let text = ar_io::input_file::read_text(path).map_err(|source| PairsError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_pairs(&text, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "world_x,world_y,world_z,arm_x,arm_y,arm_z\n";

    #[test]
    fn reads_pairs_with_their_lines() {
        let text =
            format!("# touched 2026-11-21\n{HEAD}0.07,-0.04,0.08, 0.5,0.1,0.2\n\n1,2,3,4,5,6\n");
        let pairs = parse_pairs(&text, Path::new("p.csv")).unwrap();
        assert_eq!(pairs.len(), 2);
        assert_eq!(pairs[0].p_in_world, Point3::new(0.07, -0.04, 0.08));
        assert_eq!(pairs[0].p_in_arm, Point3::new(0.5, 0.1, 0.2));
        assert_eq!(pairs[0].line, 3);
        assert_eq!(pairs[1].line, 5);
    }

    #[test]
    fn a_bad_number_names_line_and_column() {
        let text = format!("{HEAD}0,0,0,0,0,0\n0,0,0,0,zero,0\n");
        let err = parse_pairs(&text, Path::new("p.csv"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("p.csv, line 3, column 5 (arm_y)") && err.contains("`zero`"),
            "{err}"
        );
    }

    #[test]
    fn a_short_line_and_a_wrong_header_are_refused() {
        let text = format!("{HEAD}0,0,0,0,0\n");
        let err = parse_pairs(&text, Path::new("p.csv"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2: 5 columns"), "{err}");
        let err = parse_pairs("x,y,z,a,b,c\n", Path::new("p.csv"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 1: the header must be"), "{err}");
        assert!(parse_pairs("", Path::new("p.csv")).is_err());
    }

    #[test]
    fn nan_is_not_a_coordinate() {
        let text = format!("{HEAD}0,0,NaN,0,0,0\n");
        let err = parse_pairs(&text, Path::new("p.csv"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("column 3 (world_z)"), "{err}");
    }
}
