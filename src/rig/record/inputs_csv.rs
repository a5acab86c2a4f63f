//! A session's `inputs.csv`, written one row per step by the recorder and read back by
//! `replay` one row at a time ([`InputReader`]): a replay's memory does not grow with the
//! recording's length, and a line longer than any row the recorder writes is refused, not
//! held.

use std::fs::File;
use std::io;
use std::io::{BufRead, BufReader, Read, Take};
use std::path::{Path, PathBuf};

use ar_io::csv_table::{read_records, Record};
use ar_io::csv_write::CsvWriter;
use ar_io::safe_open::open_regular;
use nalgebra::{Isometry3, Point3, Quaternion, Translation3, UnitQuaternion};

use super::session_log::{
    io_error, InputRow, SessionError, StepInputs, INPUTS_FILE, INPUT_HEADER, MAX_LOG_BYTES,
};
use crate::interaction::SpringAttachment;

/// The longest line of `inputs.csv` read, bytes: a row is 18 numbers of at most ~25
/// characters, under 500 bytes.
pub const MAX_INPUT_LINE_BYTES: u64 = 64 << 10;

/// Writes one row of `inputs.csv`.
pub(super) fn write_input_row<W: io::Write>(
    csv: &mut CsvWriter<W>,
    r: &InputRow,
) -> io::Result<()> {
    let mut row = csv.row().value(r.step).value(r.t_s);
    row = match &r.inputs.spring {
        Some(s) => row.value(1).value(s.body).values([
            s.point_in_body.x,
            s.point_in_body.y,
            s.point_in_body.z,
            s.target_in_world.x,
            s.target_in_world.y,
            s.target_in_world.z,
        ]),
        None => match &r.inputs.tip {
            Some(t) => row.value(0).values([""; 4]).values([t.x, t.y, t.z]),
            None => row.value(0).values([""; 7]),
        },
    };
    row = row.value(r.inputs.wind_level);
    row = match &r.inputs.view {
        Some(v) => {
            let p = v.translation.vector;
            let q = v.rotation.quaternion();
            row.values([p.x, p.y, p.z, q.w, q.i, q.j, q.k])
        }
        None => row.values([""; 7]),
    };
    row.end()
}

/// Reads a session's `inputs.csv` whole: every row checked as [`InputReader`] does.
pub fn read_inputs(dir: &Path) -> Result<Vec<InputRow>, SessionError> {
    let path = dir.join(INPUTS_FILE);
    let (file, _) = open_regular(&path, MAX_LOG_BYTES).map_err(io_error(&path))?;
    InputReader::new(&path, file, MAX_LOG_BYTES)?.collect()
}

/// Streams the rows of `inputs.csv`: the header checked first, then every row (the step
/// numbers counting from 0, every number finite), errors naming the line and the field.
pub struct InputReader {
    path: PathBuf,
    reader: BufReader<Take<File>>,
    line: usize,
    rows: u64,
    buf: Vec<u8>,
    failed: bool,
}

impl InputReader {
    /// Reads at most `limit` bytes of `file` (the file named `path`), checking its header.
    pub fn new(path: &Path, file: File, limit: u64) -> Result<Self, SessionError> {
        let mut reader = Self {
            path: path.to_path_buf(),
            reader: BufReader::new(file.take(limit)),
            line: 0,
            rows: 0,
            buf: Vec::new(),
            failed: false,
        };
        let header = reader
            .next_record()?
            .ok_or_else(|| reader.bad(1, "empty file: expected the header".into()))?;
        if header.fields != INPUT_HEADER {
            return Err(reader.bad(
                header.line,
                format!(
                    "header {:?}, expected {:?}",
                    header.joined(),
                    INPUT_HEADER.join(",")
                ),
            ));
        }
        Ok(reader)
    }

    /// Rows read so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    fn bad(&self, line: usize, message: String) -> SessionError {
        SessionError::Bad {
            path: self.path.clone(),
            line: Some(line),
            message,
        }
    }

    /// The next record, skipping blank and comment lines; `None` at the end of the file.
    fn next_record(&mut self) -> Result<Option<Record>, SessionError> {
        loop {
            self.buf.clear();
            let n = (&mut self.reader)
                .take(MAX_INPUT_LINE_BYTES + 1)
                .read_until(b'\n', &mut self.buf)
                .map_err(io_error(&self.path))?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            if n as u64 > MAX_INPUT_LINE_BYTES {
                let message = format!("a line over {MAX_INPUT_LINE_BYTES} bytes: not a row");
                return Err(self.bad(self.line, message));
            }
            let Ok(text) = std::str::from_utf8(&self.buf) else {
                return Err(self.bad(self.line, "not UTF-8 text".into()));
            };
            // The reader's own rules (a BOM, quotes, CRLF, comments), on this one line.
            let records = read_records(text).map_err(|e| self.bad(self.line, e.message))?;
            if let Some(mut record) = records.into_iter().next() {
                record.line = self.line;
                return Ok(Some(record));
            }
        }
    }

    fn row(&mut self) -> Result<Option<InputRow>, SessionError> {
        let Some(rec) = self.next_record()? else {
            return Ok(None);
        };
        let row = parse_row(&rec, self.rows).map_err(|m| self.bad(rec.line, m))?;
        self.rows += 1;
        Ok(Some(row))
    }
}

impl Iterator for InputReader {
    type Item = Result<InputRow, SessionError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.row().transpose();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

/// One row, the `k`-th (from 0); an error message naming the field.
fn parse_row(rec: &Record, k: u64) -> Result<InputRow, String> {
    let number = |i: usize| -> Result<f64, String> {
        let field = rec.get(i);
        field
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("{} = {field:?} is not a finite number", INPUT_HEADER[i]))
    };
    let step: u64 = rec
        .get(0)
        .parse()
        .map_err(|_| format!("step = {:?} is not a step number", rec.get(0)))?;
    if step != k {
        return Err(format!(
            "step = {step}, expected {k} (the rows count the steps from 0)"
        ));
    }
    let mut tip = None;
    let spring = match rec.get(2) {
        "0" => {
            if !rec.get(7).is_empty() {
                tip = Some(Point3::new(number(7)?, number(8)?, number(9)?));
            }
            None
        }
        "1" => {
            let body = rec
                .get(3)
                .parse::<usize>()
                .map_err(|_| format!("body = {:?} is not a body index", rec.get(3)))?;
            Some(SpringAttachment {
                body,
                point_in_body: Point3::new(number(4)?, number(5)?, number(6)?),
                target_in_world: Point3::new(number(7)?, number(8)?, number(9)?),
            })
        }
        other => return Err(format!("clipped = {other:?}: expected 0 or 1")),
    };
    let view = if rec.get(11).is_empty() {
        None
    } else {
        let q = Quaternion::new(number(14)?, number(15)?, number(16)?, number(17)?);
        Some(Isometry3::from_parts(
            Translation3::new(number(11)?, number(12)?, number(13)?),
            // As recorded: a unit quaternion read back bit for bit.
            UnitQuaternion::new_unchecked(q),
        ))
    };
    Ok(InputRow {
        step,
        t_s: number(1)?,
        inputs: StepInputs {
            spring,
            tip,
            wind_level: number(10)?,
            view,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn rows() -> Vec<InputRow> {
        let view = Isometry3::from_parts(
            Translation3::new(0.1, -0.2, 0.3),
            UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3),
        );
        vec![
            InputRow {
                step: 0,
                t_s: 0.01,
                inputs: StepInputs {
                    spring: None,
                    tip: None,
                    wind_level: 0.0,
                    view: Some(view),
                },
            },
            InputRow {
                step: 1,
                t_s: 0.02,
                inputs: StepInputs {
                    spring: Some(SpringAttachment {
                        body: 10,
                        point_in_body: Point3::new(0.0, 0.0, -0.025),
                        target_in_world: Point3::new(0.1 / 3.0, 1e-17, 0.6),
                    }),
                    tip: None,
                    wind_level: 0.123456789012345,
                    view: None,
                },
            },
            InputRow {
                step: 2,
                t_s: 0.03,
                inputs: StepInputs {
                    spring: None,
                    tip: Some(Point3::new(-0.085, 0.09, 0.05 / 3.0)),
                    wind_level: 0.0,
                    view: None,
                },
            },
        ]
    }

    fn write_inputs(dir: &Path, rows: &[InputRow]) {
        let mut csv = CsvWriter::new(Vec::new());
        csv.write_fields(INPUT_HEADER).unwrap();
        for r in rows {
            write_input_row(&mut csv, r).unwrap();
        }
        fs::write(dir.join(INPUTS_FILE), csv.into_inner().unwrap()).unwrap();
    }

    #[test]
    fn inputs_read_back_bit_for_bit() {
        let dir = tempfile::tempdir().unwrap();
        write_inputs(dir.path(), &rows());
        assert_eq!(read_inputs(dir.path()).unwrap(), rows());
    }

    #[test]
    fn a_bad_input_row_is_named_by_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        write_inputs(dir.path(), &rows());
        let path = dir.path().join(INPUTS_FILE);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.replace("0.123456789012345", "NaN")).unwrap();
        let e = read_inputs(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("inputs.csv:3") && e.contains("wind_level"),
            "{e}"
        );
        fs::write(&path, text.replace("\n1,0.02,", "\n7,0.02,")).unwrap();
        let e = read_inputs(dir.path()).unwrap_err().to_string();
        assert!(e.contains(":3") && e.contains("expected 1"), "{e}");
    }
}
