//! The level that drives the wind over time: a constant, or a `t_s,level` table (CSV) read
//! from a file and linearly interpolated (held at the first and last values outside it).

use std::path::{Path, PathBuf};

/// A bad level table: names the file, the line and what was wrong.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// The file could not be read.
    #[error("cannot read wind level file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is malformed.
    #[error("{}:{line}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// Level (RMS above the noise floor, full scale 1) as a function of simulated time.
#[derive(Debug, Clone, PartialEq)]
pub enum LevelSchedule {
    /// The same level all the time.
    Constant(f64),
    /// `(t_secs, level)` rows, strictly increasing in time, at least one.
    Table(Vec<(f64, f64)>),
}

impl LevelSchedule {
    /// The level at `t_secs`.
    pub fn level_at(&self, t_secs: f64) -> f64 {
        match self {
            LevelSchedule::Constant(l) => *l,
            LevelSchedule::Table(rows) => {
                let i = rows.partition_point(|&(t, _)| t <= t_secs);
                match (i.checked_sub(1).and_then(|k| rows.get(k)), rows.get(i)) {
                    (Some(&(t0, l0)), Some(&(t1, l1))) => {
                        l0 + (l1 - l0) * (t_secs - t0) / (t1 - t0)
                    }
                    (Some(&(_, l)), None) | (None, Some(&(_, l))) => l,
                    (None, None) => 0.0,
                }
            }
        }
    }

    /// Reads a `t_s,level` CSV file: the header `t_s,level` (or `t,level`), then one row per
    /// line, through `ar_io::csv_table` (BOM, quotes, CRLF, blank and `#` lines).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, ScheduleError> {
        let path = path.as_ref();
        let text = ar_io::input_file::read_text(path).map_err(|source| ScheduleError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses CSV text; `path` is used in messages only.
    pub fn parse(text: &str, path: impl AsRef<Path>) -> Result<Self, ScheduleError> {
        let path = path.as_ref();
        let bad = |line: usize, message: String| ScheduleError::Invalid {
            path: path.to_owned(),
            line,
            message,
        };
        let table = ar_io::csv_table::read_table(text).map_err(|e| bad(e.line, e.message))?;
        let last_line = ar_io::csv_table::last_line(text);
        let Some(table) = table else {
            return Err(bad(last_line, "no `t_s,level` rows".into()));
        };
        let columns = table.columns();
        if !matches!(columns.as_slice(), ["t_s" | "t", "level"]) {
            return Err(bad(
                table.header.line,
                format!(
                    "the header must be `t_s,level`, found `{}`",
                    table.header.joined()
                ),
            ));
        }
        let mut rows: Vec<(f64, f64)> = Vec::new();
        for record in &table.rows {
            let line = record.line;
            if record.fields.len() != 2 {
                return Err(bad(
                    line,
                    format!(
                        "expected 2 fields `t_s,level`, found {}",
                        record.fields.len()
                    ),
                ));
            }
            let num = |name: &str, v: &str| -> Result<f64, ScheduleError> {
                match v.parse::<f64>() {
                    Ok(x) if x.is_finite() => Ok(x),
                    _ => Err(bad(
                        line,
                        format!("field `{name}`: `{v}` is not a finite number"),
                    )),
                }
            };
            let t = num("t_s", record.get(0))?;
            let level = num("level", record.get(1))?;
            if level < 0.0 {
                return Err(bad(line, format!("field `level`: {level} is negative")));
            }
            if let Some(&(t_prev, _)) = rows.last() {
                if t <= t_prev {
                    return Err(bad(
                        line,
                        format!("field `t_s`: {t} s does not come after {t_prev} s"),
                    ));
                }
            }
            rows.push((t, level));
        }
        if rows.is_empty() {
            return Err(bad(last_line, "no `t_s,level` rows".into()));
        }
        Ok(LevelSchedule::Table(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_interpolates_and_holds_its_ends() {
        let s = LevelSchedule::parse(
            "t_s,level\n# a blow\n1.0, 0.0\n1.5,0.2\n3,0.2\n3.5,0\n",
            "x.csv",
        )
        .expect("valid");
        assert_eq!(s.level_at(0.0), 0.0);
        assert!((s.level_at(1.25) - 0.1).abs() < 1e-15);
        assert_eq!(s.level_at(2.0), 0.2);
        assert!((s.level_at(3.25) - 0.1).abs() < 1e-15);
        assert_eq!(s.level_at(10.0), 0.0);
        assert_eq!(LevelSchedule::Constant(0.3).level_at(7.0), 0.3);
    }

    #[test]
    fn errors_name_the_file_and_line() {
        for (text, line, what) in [
            ("time,level\n", 1, "header"),
            ("t_s,level\n0,0.1\n0,0.2\n", 3, "does not come after"),
            ("t_s,level\n0,abc\n", 2, "`level`"),
            ("t_s,level\n0,-1\n", 2, "negative"),
            ("t_s,level\n0,1,2\n", 2, "2 fields"),
            ("t_s,level\n", 1, "no `t_s,level` rows"),
        ] {
            let e = LevelSchedule::parse(text, "blow.csv").expect_err(text);
            let msg = e.to_string();
            assert!(msg.starts_with(&format!("blow.csv:{line}:")), "{msg}");
            assert!(msg.contains(what), "{msg}");
        }
    }
}
