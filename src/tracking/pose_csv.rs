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

use ar_io::csv_write::{CsvWriter, Row};
use std::path::{Path, PathBuf};

/// Header of the tracker's CSV.
pub const TRACK_CSV_HEADER: [&str; 11] = [
    "frame",
    "t_s",
    "detected",
    "tx",
    "ty",
    "tz",
    "rx",
    "ry",
    "rz",
    "reproj_px",
    "detect_ms",
];
/// Header of a ground-truth CSV.
pub const TRUTH_CSV_HEADER: [&str; 8] = ["frame", "t_s", "tx", "ty", "tz", "rx", "ry", "rz"];

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

/// Translation (m) and Rodrigues rotation (rad) of a pose, to 1 nm and 1 nrad.
fn pose_row<'a, W: Write>(row: Row<'a, W>, p: &Isometry3<f64>) -> Row<'a, W> {
    let (t, r) = (p.translation.vector, p.rotation.scaled_axis());
    [t.x, t.y, t.z, r.x, r.y, r.z]
        .into_iter()
        .fold(row, |row, x| row.fixed(x, 9))
}

/// Writes one row of the tracker's CSV: the pose with its reprojection error (px) when the
/// marker was detected, empty pose fields when not.
pub fn write_track_row<W: Write>(
    out: &mut CsvWriter<W>,
    frame: u64,
    t_s: f64,
    pose: Option<(&Isometry3<f64>, f64)>,
    detect_ms: f64,
) -> std::io::Result<()> {
    let row = out.row().value(frame).fixed(t_s, 6);
    let row = match pose {
        Some((p, reproj_px)) => pose_row(row.value(1), p).fixed(reproj_px, 4),
        None => (0..7).fold(row.value(0), |row, _| row.text("")),
    };
    row.fixed(detect_ms, 3).end()
}

/// Writes ground-truth lines as frames are produced.
pub struct TruthWriter {
    out: CsvWriter<std::fs::File>,
    path: PathBuf,
}

impl TruthWriter {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path) -> Result<Self, PoseCsvError> {
        let io = |source| PoseCsvError::Io {
            path: path.to_owned(),
            source,
        };
        let f = ar_io::safe_open::create_stream(path).map_err(io)?;
        let mut out = CsvWriter::new(f);
        out.write_fields(TRUTH_CSV_HEADER).map_err(io)?;
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
        let row = self.out.row().value(frame).fixed(t_s, 6);
        pose_row(row, camera_from_world)
            .end()
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
    let text = ar_io::input_file::read_text(path).map_err(|source| PoseCsvError::Io {
        path: path.to_owned(),
        source,
    })?;
    let err = |line: usize, problem: String| PoseCsvError::Parse {
        path: path.to_owned(),
        line,
        problem,
    };
    let table = ar_io::csv_table::read_table(&text)
        .map_err(|e| err(e.line, e.message))?
        .ok_or_else(|| err(1, "empty file".into()))?;
    let names = TRUTH_CSV_HEADER;
    if table.columns() != names {
        return Err(err(
            table.header.line,
            format!(
                "header is `{}`, expected `{}`",
                table.header.joined(),
                names.join(",")
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
            format!(
                "{}\n0,0,0,0,0.5,0,0,0\n1,0,0,0,x,0,0,0\n",
                TRUTH_CSV_HEADER.join(",")
            ),
        )
        .unwrap();
        let e = read_truth(&p).unwrap_err().to_string();
        assert!(e.contains("line 3") && e.contains("`tz`"), "{e}");
    }

    #[test]
    fn undetected_line_leaves_pose_empty() {
        let mut w = CsvWriter::new(Vec::new());
        write_track_row(&mut w, 3, 0.1, None, 1.5).unwrap();
        let pose = Isometry3::new(Vector3::new(0.01, -0.2, 0.6), Vector3::z() * 0.5);
        write_track_row(&mut w, 4, 0.2, Some((&pose, 0.25)), 2.0).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "3,0.100000,0,,,,,,,,1.500");
        assert_eq!(
            lines[1],
            "4,0.200000,1,0.010000000,-0.200000000,0.600000000,0.000000000,0.000000000,\
             0.500000000,0.2500,2.000"
        );
        for l in lines {
            assert_eq!(l.split(',').count(), TRACK_CSV_HEADER.len());
        }
    }
}
