//! Motion scripts for the simulated arm: keyframes of joint angles or of tip positions over
//! time, read from CSV, interpolated linearly (tip keyframes are followed along straight lines
//! through inverse kinematics), with the buttons held from one keyframe to the next.
//!
//! CSV formats (header required; read through `ar_io::csv_table`: BOM, quotes, CRLF,
//! blank and `#` comment lines):
//! - `t_s,theta0,theta1,theta2,theta3,theta4,buttons` (a `theta5` column is optional), rad;
//! - `t_s,x_m,y_m,z_m,buttons`, tip in the arm's base frame.

use crate::arm::ik::{solve_tip, IkError, IkOptions};
use crate::arm::params::DhParams;
use nalgebra::Point3;
use std::path::Path;
use std::time::Duration;

/// Errors reading a script.
#[derive(Debug, thiserror::Error)]
pub enum MotionError {
    /// The file could not be read.
    #[error("reading motion script {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A line is malformed.
    #[error("{path}:{line}: {message}")]
    Syntax {
        /// The file (or `<text>`).
        path: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A tip keyframe cannot be reached by the arm.
    #[error("{path}:{line}: tip keyframe out of reach: {source}")]
    Unreachable {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The solver's report.
        source: IkError,
    },
}

/// What a keyframe positions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Joint angles (rad).
    Joints([f64; 6]),
    /// Tip position in the arm's base frame (m).
    Tip(Point3<f64>),
}

/// One keyframe.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Keyframe {
    /// Time since the script started (s).
    pub t_s: f64,
    /// Pose.
    pub target: Target,
    /// Buttons from this keyframe until the next.
    pub buttons: u8,
    /// Source line, for error messages.
    pub line: usize,
}

/// A motion script: keyframes in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct MotionScript {
    /// Keyframes, strictly increasing in time, all of one kind.
    pub keyframes: Vec<Keyframe>,
    /// Start over after the last keyframe (otherwise hold it).
    pub looping: bool,
    /// Where it came from.
    pub source: String,
}

impl MotionScript {
    /// Reads a CSV script.
    pub fn load(path: &Path) -> Result<Self, MotionError> {
        let text = std::fs::read_to_string(path).map_err(|source| MotionError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses CSV text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Self, MotionError> {
        let err = |line: usize, message: String| MotionError::Syntax {
            path: source.to_string(),
            line,
            message,
        };
        let table = ar_io::csv_table::read_table(text)
            .map_err(|e| err(e.line, e.message))?
            .ok_or_else(|| err(1, "empty script: expected a header line".into()))?;
        let header_line = table.header.line;
        let header = table.header.joined();
        let columns = table.columns();
        let joints5 = [
            "t_s", "theta0", "theta1", "theta2", "theta3", "theta4", "buttons",
        ];
        let joints6 = [
            "t_s", "theta0", "theta1", "theta2", "theta3", "theta4", "theta5", "buttons",
        ];
        let tips = ["t_s", "x_m", "y_m", "z_m", "buttons"];
        let kind = if columns == joints5 {
            0
        } else if columns == joints6 {
            1
        } else if columns == tips {
            2
        } else {
            return Err(err(
                header_line,
                format!(
                    "header {header:?} is neither {:?}, {:?} nor {:?}",
                    joints5.join(","),
                    joints6.join(","),
                    tips.join(",")
                ),
            ));
        };
        let mut keyframes: Vec<Keyframe> = Vec::new();
        for row in &table.rows {
            let line = row.line;
            let fields: Vec<&str> = row.fields.iter().map(String::as_str).collect();
            if fields.len() != columns.len() {
                return Err(err(
                    line,
                    format!("expected {} fields, found {}", columns.len(), fields.len()),
                ));
            }
            let mut values = Vec::with_capacity(fields.len());
            for (name, f) in columns.iter().zip(&fields).take(columns.len() - 1) {
                let v: f64 = f
                    .parse()
                    .map_err(|_| err(line, format!("{name}: {f:?} is not a number")))?;
                if !v.is_finite() {
                    return Err(err(line, format!("{name}: {f:?} is not finite")));
                }
                values.push(v);
            }
            let f = fields[columns.len() - 1];
            let buttons: u8 = f
                .parse()
                .ok()
                .filter(|b| *b < 4)
                .ok_or_else(|| err(line, format!("buttons: {f:?} is not 0, 1, 2 or 3")))?;
            let t_s = values[0];
            if t_s < 0.0 {
                return Err(err(line, format!("t_s: {t_s} is negative")));
            }
            if let Some(prev) = keyframes.last() {
                if t_s <= prev.t_s {
                    return Err(err(
                        line,
                        format!(
                            "t_s: {t_s} is not after the previous keyframe ({})",
                            prev.t_s
                        ),
                    ));
                }
            }
            let target = match kind {
                2 => Target::Tip(Point3::new(values[1], values[2], values[3])),
                _ => {
                    let mut q = [0.0; 6];
                    for (qi, v) in q.iter_mut().zip(&values[1..]) {
                        *qi = *v;
                    }
                    Target::Joints(q)
                }
            };
            keyframes.push(Keyframe {
                t_s,
                target,
                buttons,
                line,
            });
        }
        if keyframes.is_empty() {
            return Err(err(header_line, "no keyframes after the header".into()));
        }
        Ok(Self {
            keyframes,
            looping: true,
            source: source.to_string(),
        })
    }

    /// Checks that every tip keyframe is reachable (joint keyframes always are).
    pub fn validate(
        &self,
        dh: &DhParams,
        joint_count: usize,
        seed: &[f64; 6],
    ) -> Result<(), MotionError> {
        let ik = IkOptions {
            rest_rad: Some(*seed),
            ..IkOptions::default()
        };
        let mut q = *seed;
        for k in &self.keyframes {
            if let Target::Tip(p) = k.target {
                q = solve_tip(dh, &p, &q, joint_count, &ik).map_err(|source| {
                    MotionError::Unreachable {
                        path: self.source.clone(),
                        line: k.line,
                        source,
                    }
                })?;
            }
        }
        Ok(())
    }

    /// Length of one pass (s).
    pub fn duration_s(&self) -> f64 {
        self.keyframes.last().map_or(0.0, |k| k.t_s)
    }

    /// The pose and buttons at `elapsed` since the start. Tip targets are solved from `seed`
    /// (the previous angles), so that the arm follows the path smoothly.
    pub fn sample(
        &self,
        elapsed: Duration,
        dh: &DhParams,
        joint_count: usize,
        seed: &[f64; 6],
        ik: &IkOptions,
    ) -> Result<([f64; 6], u8), IkError> {
        let mut t = elapsed.as_secs_f64();
        let total = self.duration_s();
        if self.looping && total > 0.0 {
            t = t.rem_euclid(total);
        }
        let ks = &self.keyframes;
        let i = ks.iter().rposition(|k| k.t_s <= t).unwrap_or(0);
        let a = &ks[i];
        let b = ks.get(i + 1).unwrap_or(a);
        let s = if b.t_s > a.t_s && t >= a.t_s {
            ((t - a.t_s) / (b.t_s - a.t_s)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let q = match (a.target, b.target) {
            (Target::Joints(qa), Target::Joints(qb)) => {
                let mut q = [0.0; 6];
                for k in 0..6 {
                    q[k] = qa[k] + s * (qb[k] - qa[k]);
                }
                q
            }
            (Target::Tip(pa), Target::Tip(pb)) => {
                let p = pa + (pb - pa) * s;
                solve_tip(dh, &p, seed, joint_count, ik)?
            }
            // parse() never mixes kinds; hold the first keyframe's pose if it ever happens.
            (Target::Joints(q), _) => q,
            (Target::Tip(p), _) => solve_tip(dh, &p, seed, joint_count, ik)?,
        };
        Ok((q, a.buttons))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_are_named() {
        let e = MotionScript::parse(
            "t_s,x_m,y_m,z_m,buttons\n0,0.1,0.2,0.3,0\n1,0.1,zz,0.3,0\n",
            "s.csv",
        )
        .expect_err("bad number");
        assert_eq!(e.to_string(), "s.csv:3: y_m: \"zz\" is not a number");
        let e = MotionScript::parse("t_s,x_m,y_m,z_m,buttons\n1,0,0,0,0\n0.5,0,0,0,0\n", "s.csv")
            .expect_err("time order");
        assert!(e.to_string().starts_with("s.csv:3: t_s"), "{e}");
        let e = MotionScript::parse("t,x\n", "s.csv").expect_err("header");
        assert!(e.to_string().starts_with("s.csv:1: header"), "{e}");
        let e = MotionScript::parse("t_s,x_m,y_m,z_m,buttons\n0,0,0,0,7\n", "s.csv")
            .expect_err("buttons");
        assert!(e.to_string().contains("buttons"), "{e}");
    }

    #[test]
    fn joint_keyframes_interpolate_and_hold_buttons() {
        let s = MotionScript::parse(
            "# comment\nt_s,theta0,theta1,theta2,theta3,theta4,buttons\n0,0,0,0,0,0,0\n2,1,2,3,4,5,1\n4,1,2,3,4,5,0\n",
            "x",
        )
        .expect("valid");
        let dh = DhParams::from_raw(&crate::arm::params::RawDhParams::microscribe_3dx());
        let (q, b) = s
            .sample(
                Duration::from_secs(1),
                &dh,
                5,
                &[0.0; 6],
                &IkOptions::default(),
            )
            .expect("joints");
        assert_eq!(q, [0.5, 1.0, 1.5, 2.0, 2.5, 0.0]);
        assert_eq!(b, 0);
        let (_, b) = s
            .sample(
                Duration::from_secs(3),
                &dh,
                5,
                &[0.0; 6],
                &IkOptions::default(),
            )
            .expect("joints");
        assert_eq!(b, 1);
    }
}
