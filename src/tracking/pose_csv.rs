//! CSV files of poses: the tracker's output and the ground truth of recorded synthetic video.
//!
//! Tracker output: `frame,t_s,detected,tx,ty,tz,rx,ry,rz,reproj_px,detect_ms`, where `t` and
//! `r` are the translation (m) and Rodrigues rotation (rad) of `camera_from_world`; frames
//! without a detection say `detected=0` and leave the pose fields empty.
//!
//! Ground truth: `frame,t_s,tx,ty,tz,rx,ry,rz`, one line per frame.

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Header of the tracker's CSV.
pub const TRACK_CSV_HEADER: &str = "frame,t_s,detected,tx,ty,tz,rx,ry,rz,reproj_px,detect_ms";
/// Header of a ground-truth CSV.
pub const TRUTH_CSV_HEADER: &str = "frame,t_s,tx,ty,tz,rx,ry,rz";

/// A problem with a pose CSV file.
#[derive(Debug, thiserror::Error)]
pub enum PoseCsvError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line does not parse.
    #[error("{path}, line {line}: {problem}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        problem: String,
    },
}

fn pose_fields(p: &Isometry3<f64>) -> String {
    let t = p.translation.vector;
    let r = p.rotation.scaled_axis();
    format!(
        "{:.9},{:.9},{:.9},{:.9},{:.9},{:.9}",
        t.x, t.y, t.z, r.x, r.y, r.z
    )
}

/// One line of the tracker's CSV (without newline).
pub fn track_csv_line(
    frame: u64,
    t_s: f64,
    pose: Option<(&Isometry3<f64>, f64)>,
    detect_ms: f64,
) -> String {
    match pose {
        Some((p, reproj)) => format!(
            "{frame},{t_s:.6},1,{},{reproj:.4},{detect_ms:.3}",
            pose_fields(p)
        ),
        None => format!("{frame},{t_s:.6},0,,,,,,,,{detect_ms:.3}"),
    }
}

/// Writes ground-truth lines as frames are produced.
#[derive(Debug)]
pub struct TruthWriter {
    out: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
}

impl TruthWriter {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path) -> Result<Self, PoseCsvError> {
        let io = |source| PoseCsvError::Io {
            path: path.to_owned(),
            source,
        };
        let f = std::fs::File::create(path).map_err(io)?;
        let mut out = std::io::BufWriter::new(f);
        writeln!(out, "{TRUTH_CSV_HEADER}").map_err(io)?;
        Ok(Self {
            out,
            path: path.to_owned(),
        })
    }

    /// Appends the truth of one frame.
    pub fn write(
        &mut self,
        frame: u64,
        t_s: f64,
        camera_from_world: &Isometry3<f64>,
    ) -> Result<(), PoseCsvError> {
        writeln!(
            self.out,
            "{frame},{t_s:.6},{}",
            pose_fields(camera_from_world)
        )
        .map_err(|source| PoseCsvError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// Flushes the file.
    pub fn finish(mut self) -> Result<(), PoseCsvError> {
        self.out.flush().map_err(|source| PoseCsvError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// Reads a ground-truth CSV into frame number → `camera_from_world`.
pub fn read_truth(path: &Path) -> Result<HashMap<u64, Isometry3<f64>>, PoseCsvError> {
    let text = ar_calibration::input_file::read_text(path).map_err(|source| PoseCsvError::Io {
        path: path.to_owned(),
        source,
    })?;
    let err = |line: usize, problem: String| PoseCsvError::Parse {
        path: path.to_owned(),
        line,
        problem,
    };
    let table = ar_calibration::csv_table::read_table(&text)
        .map_err(|e| err(e.line, e.message))?
        .ok_or_else(|| err(1, "empty file".into()))?;
    let names: Vec<&str> = TRUTH_CSV_HEADER.split(',').collect();
    if table.columns() != names {
        return Err(err(
            table.header.line,
            format!(
                "header is `{}`, expected `{TRUTH_CSV_HEADER}`",
                table.header.joined()
            ),
        ));
    }
    let mut truth = HashMap::new();
    for record in &table.rows {
        let n = record.line;
        let fields = &record.fields;
        if fields.len() != names.len() {
            return Err(err(
                n,
                format!("{} fields, expected {}", fields.len(), names.len()),
            ));
        }
        let frame: u64 = fields[0].parse().map_err(|_| {
            err(
                n,
                format!("field `frame`: `{}` is not a frame number", fields[0]),
            )
        })?;
        let mut v = [0.0; 6];
        for (k, slot) in v.iter_mut().enumerate() {
            let s = &fields[k + 2];
            *slot = s
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    err(
                        n,
                        format!("field `{}`: `{s}` is not a finite number", names[k + 2]),
                    )
                })?;
        }
        let pose = Isometry3::from_parts(
            Translation3::new(v[0], v[1], v[2]),
            UnitQuaternion::from_scaled_axis(Vector3::new(v[3], v[4], v[5])),
        );
        truth.insert(frame, pose);
    }
    Ok(truth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_round_trips_to_nanometres() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        let pose = Isometry3::new(Vector3::new(0.01, -0.2, 0.6), Vector3::new(2.5, -0.3, 0.2));
        let mut w = TruthWriter::create(&p).unwrap();
        w.write(7, 0.25, &pose).unwrap();
        w.finish().unwrap();
        let back = read_truth(&p).unwrap();
        let b = back[&7];
        assert!((b.translation.vector - pose.translation.vector).norm() < 1e-8);
        assert!(b.rotation.angle_to(&pose.rotation) < 1e-8);
    }

    #[test]
    fn bad_truth_line_names_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(
            &p,
            format!("{TRUTH_CSV_HEADER}\n0,0,0,0,0.5,0,0,0\n1,0,0,0,x,0,0,0\n"),
        )
        .unwrap();
        let e = read_truth(&p).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("`tz`"), "{e}");
    }

    #[test]
    fn undetected_line_leaves_pose_empty() {
        let l = track_csv_line(3, 0.1, None, 1.5);
        assert_eq!(l.split(',').count(), TRACK_CSV_HEADER.split(',').count());
        assert!(l.starts_with("3,0.100000,0,,,,,,,"));
    }
}
