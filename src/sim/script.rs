//! Scripted stylus motion: a CSV of time-stamped tip positions and clip states.
//!
//! Header `t,x,y,z,grab`: tip in the world frame (m). Header `t,dx,dy,dz,grab`: tip relative
//! to a given origin (the initial position of the scene's first grab point). Times in
//! seconds, strictly increasing. Positions are linearly interpolated between rows and the
//! tip velocity is the slope of the current segment (zero before the first and after the
//! last row); `grab` (1 clipped to the first grab point, 0 released) holds from its row until
//! the next. Blank lines and lines starting with `#` are ignored.

use nalgebra::{Point3, Vector3};
use thiserror::Error;

/// A script line could not be understood.
#[derive(Debug, Error, PartialEq)]
#[error("line {line}: {message}")]
pub struct ScriptError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The tip's frame in a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptFrame {
    /// `x,y,z`: world coordinates.
    World,
    /// `dx,dy,dz`: offsets from the first grab point's initial position.
    RelativeToGrab,
}

/// What the script says at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScriptSample {
    /// Tip position (m, world).
    pub position_in_world: Point3<f64>,
    /// Tip velocity (m/s, world).
    pub velocity_in_world: Vector3<f64>,
    /// Whether the stylus is clipped.
    pub grab: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Row {
    t: f64,
    p: Vector3<f64>,
    grab: bool,
}

/// A parsed stylus script.
#[derive(Clone, Debug, PartialEq)]
pub struct StylusScript {
    frame: ScriptFrame,
    rows: Vec<Row>,
}

impl StylusScript {
    /// Parses script text.
    pub fn parse(text: &str) -> Result<Self, ScriptError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
        let (hline, header) = lines.next().ok_or(ScriptError {
            line: 1,
            message: "empty script: expected a header `t,x,y,z,grab` or `t,dx,dy,dz,grab`".into(),
        })?;
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        let frame = match cols.as_slice() {
            ["t", "x", "y", "z", "grab"] => ScriptFrame::World,
            ["t", "dx", "dy", "dz", "grab"] => ScriptFrame::RelativeToGrab,
            _ => {
                return Err(ScriptError {
                    line: hline,
                    message: format!(
                        "header `{header}` is neither `t,x,y,z,grab` nor `t,dx,dy,dz,grab`"
                    ),
                })
            }
        };
        let mut rows: Vec<Row> = Vec::new();
        for (line, l) in lines {
            let fields: Vec<&str> = l.split(',').map(str::trim).collect();
            if fields.len() != 5 {
                return Err(ScriptError {
                    line,
                    message: format!("expected 5 fields, found {}", fields.len()),
                });
            }
            let mut v = [0.0; 5];
            for (k, f) in fields.iter().enumerate() {
                v[k] = f
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| ScriptError {
                        line,
                        message: format!("field `{}` is not a finite number: `{f}`", cols[k]),
                    })?;
            }
            let grab = match v[4] {
                1.0 => true,
                0.0 => false,
                x => {
                    return Err(ScriptError {
                        line,
                        message: format!("field `grab` must be 0 or 1, got {x}"),
                    })
                }
            };
            if let Some(prev) = rows.last() {
                if v[0] <= prev.t {
                    return Err(ScriptError {
                        line,
                        message: format!(
                            "time {} s does not increase (previous row {} s)",
                            v[0], prev.t
                        ),
                    });
                }
            }
            rows.push(Row {
                t: v[0],
                p: Vector3::new(v[1], v[2], v[3]),
                grab,
            });
        }
        if rows.is_empty() {
            return Err(ScriptError {
                line: hline,
                message: "the script has a header but no rows".into(),
            });
        }
        Ok(Self { frame, rows })
    }

    /// The frame of the script's positions.
    pub fn frame(&self) -> ScriptFrame {
        self.frame
    }

    /// Time of the last row (s).
    pub fn end_secs(&self) -> f64 {
        self.rows.last().map_or(0.0, |r| r.t)
    }

    /// The script at time `t_secs`; `origin_in_world` is used by relative scripts.
    pub fn sample(&self, t_secs: f64, origin_in_world: &Point3<f64>) -> ScriptSample {
        let offset = match self.frame {
            ScriptFrame::World => Vector3::zeros(),
            ScriptFrame::RelativeToGrab => origin_in_world.coords,
        };
        let rows = &self.rows;
        // Index of the segment start: the last row with t_i <= t.
        let i = rows.partition_point(|r| r.t <= t_secs);
        let (p, v, grab) = if i == 0 {
            (rows[0].p, Vector3::zeros(), false)
        } else if i == rows.len() {
            let r = rows[i - 1];
            (r.p, Vector3::zeros(), r.grab)
        } else {
            let (a, b) = (rows[i - 1], rows[i]);
            let slope = (b.p - a.p) / (b.t - a.t);
            (a.p + slope * (t_secs - a.t), slope, a.grab)
        };
        ScriptSample {
            position_in_world: Point3::from(p + offset),
            velocity_in_world: v,
            grab,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_and_reports_the_segment_slope() {
        let s =
            StylusScript::parse("t,dx,dy,dz,grab\n0,0,0,0,0\n1,0,0,0,1\n3,0.1,0,0.05,1\n").unwrap();
        let o = Point3::new(0.0, 0.0, 0.1);
        let m = s.sample(2.0, &o);
        assert!((m.position_in_world - Point3::new(0.05, 0.0, 0.125)).norm() < 1e-15);
        assert!((m.velocity_in_world - Vector3::new(0.05, 0.0, 0.025)).norm() < 1e-15);
        assert!(m.grab);
        assert!(!s.sample(0.5, &o).grab);
        assert_eq!(s.sample(10.0, &o).velocity_in_world, Vector3::zeros());
    }

    #[test]
    fn errors_name_the_line() {
        let e = StylusScript::parse("t,x,y,z,grab\n0,0,0,0,0\n\n1,0,zero,0,1\n").unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.message.contains("`y`"), "{e}");
        let e = StylusScript::parse("t,x,y,z,grab\n1,0,0,0,0\n0.5,0,0,0,1\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = StylusScript::parse("time,x,y,z\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = StylusScript::parse("t,x,y,z,grab\n0,0,0,0,2\n").unwrap_err();
        assert!(e.message.contains("grab"), "{e}");
    }
}
