//! Scripted stylus motion: a CSV of time-stamped tip positions and clip states.
//!
//! Header `t_s,x_m,y_m,z_m,grab`: tip in the world frame (m). Header `t_s,dx_m,dy_m,dz_m,grab`:
//! tip relative to a given origin (the initial position of the scene's first grab point).
//! The CSV that `arm probe` writes (`t_s,theta0,...,theta4,x_m,y_m,z_m,buttons`) is read as
//! the tip in the arm's frame, clipped while button 1 is held; [`StylusScript::into_world`]
//! maps it with the tracker calibration. Columns are found by name, in any order; the short
//! names `t`, `x`, `dx`... are accepted too. Read through `ar_io::csv_table` (BOM,
//! quotes, CRLF). Times in seconds, strictly increasing. Positions are linearly interpolated between rows and the
//! tip velocity is the slope of the current segment (zero before the first and after the
//! last row); `grab` (1 clipped to the first grab point, 0 released) holds from its row until
//! the next. Blank lines and lines starting with `#` are ignored.

use ar_io::csv_table::Record;
use nalgebra::{Isometry3, Point3, Vector3};
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
    /// `x_m,y_m,z_m` with `buttons`: the tip in the digitizer's base frame, as `arm probe`
    /// writes it; [`StylusScript::into_world`] brings it into the world frame.
    Arm,
}

/// The header of a world-frame script.
pub const HEADER_WORLD: &str = "t_s,x_m,y_m,z_m,grab";
/// The header of a script relative to the first grab point.
pub const HEADER_RELATIVE: &str = "t_s,dx_m,dy_m,dz_m,grab";
/// The header of the CSV `arm probe` writes (angles in rad, tip in the arm's frame, m).
pub const ARM_PROBE_HEADER: &str = "t_s,theta0,theta1,theta2,theta3,theta4,x_m,y_m,z_m,buttons";
/// The `buttons` bit that clips the stylus when a script has a `buttons` column (button 1, as
/// the rig's default `button_mask`).
pub const GRAB_BUTTON_MASK: u8 = 1;

/// Where a script's columns are.
struct Layout {
    frame: ScriptFrame,
    time: usize,
    position: [usize; 3],
    grab: Grab,
}

enum Grab {
    Flag(usize),
    Buttons(usize),
}

impl Layout {
    /// Finds the columns by name; each has its unit-suffixed name and the short one.
    fn of(columns: &[&str]) -> Result<Self, String> {
        let find = |names: &[&str]| columns.iter().position(|c| names.contains(c));
        let expected = || {
            format!(
                "header `{}`: expected `{HEADER_WORLD}`, `{HEADER_RELATIVE}` or an `arm probe` \
                 CSV (`t_s,theta0,...,x_m,y_m,z_m,buttons`); `t`, `x`, `dx`... are accepted too",
                columns.join(",")
            )
        };
        let time = find(&["t_s", "t"]).ok_or_else(expected)?;
        let world = [["x_m", "x"], ["y_m", "y"], ["z_m", "z"]].map(|n| find(&n));
        let relative = [["dx_m", "dx"], ["dy_m", "dy"], ["dz_m", "dz"]].map(|n| find(&n));
        let all = |a: [Option<usize>; 3]| -> Option<[usize; 3]> { Some([a[0]?, a[1]?, a[2]?]) };
        let grab = match (find(&["grab"]), find(&["buttons"])) {
            (Some(k), None) => Grab::Flag(k),
            (None, Some(k)) => Grab::Buttons(k),
            _ => return Err(expected()),
        };
        let (frame, position) = match (all(world), relative.iter().any(Option::is_some)) {
            (Some(p), false) if matches!(grab, Grab::Buttons(_)) => (ScriptFrame::Arm, p),
            (Some(p), false) => (ScriptFrame::World, p),
            (None, true) if matches!(grab, Grab::Flag(_)) => (
                ScriptFrame::RelativeToGrab,
                all(relative).ok_or_else(expected)?,
            ),
            _ => return Err(expected()),
        };
        let known = |c: &str| {
            [
                "t_s", "t", "x_m", "x", "y_m", "y", "z_m", "z", "dx_m", "dx", "dy_m", "dy",
            ]
            .contains(&c)
                || ["dz_m", "dz", "grab", "buttons"].contains(&c)
                || (frame == ScriptFrame::Arm && c.starts_with("theta"))
        };
        if let Some(c) = columns.iter().find(|c| !known(c)) {
            return Err(format!("unknown column `{c}`; {}", expected()));
        }
        Ok(Self {
            frame,
            time,
            position,
            grab,
        })
    }
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

impl Row {
    /// One record of a script with this `header` and column `layout`.
    fn parse(header: &Record, record: &Record, layout: &Layout) -> Result<Self, ScriptError> {
        let line = record.line;
        let err = |message: String| ScriptError { line, message };
        if record.fields.len() != header.fields.len() {
            return Err(err(format!(
                "expected {} fields, found {}",
                header.fields.len(),
                record.fields.len()
            )));
        }
        let number = |k: usize| {
            let f = record.get(k);
            f.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| {
                    err(format!(
                        "field `{}` is not a finite number: `{f}`",
                        header.get(k)
                    ))
                })
        };
        let t = number(layout.time)?;
        let p = Vector3::new(
            number(layout.position[0])?,
            number(layout.position[1])?,
            number(layout.position[2])?,
        );
        let grab = match layout.grab {
            Grab::Flag(k) => match number(k)? {
                1.0 => true,
                0.0 => false,
                x => return Err(err(format!("field `grab` must be 0 or 1, got {x}"))),
            },
            Grab::Buttons(k) => {
                let f = record.get(k);
                let b: u8 = f.parse().map_err(|_| {
                    err(format!(
                        "field `buttons` must be an integer 0 to 255, got `{f}`"
                    ))
                })?;
                b & GRAB_BUTTON_MASK != 0
            }
        };
        Ok(Self { t, p, grab })
    }
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
        let err = |line: usize, message: String| ScriptError { line, message };
        let table = ar_io::csv_table::read_table(text)
            .map_err(|e| err(e.line, e.message))?
            .ok_or_else(|| {
                err(
                    1,
                    format!("empty script: expected a header such as `{HEADER_WORLD}`"),
                )
            })?;
        let hline = table.header.line;
        let layout = Layout::of(&table.columns()).map_err(|m| err(hline, m))?;
        let mut rows: Vec<Row> = Vec::new();
        for record in &table.rows {
            let row = Row::parse(&table.header, record, &layout)?;
            if let Some(prev) = rows.last() {
                if row.t <= prev.t {
                    return Err(err(
                        record.line,
                        format!(
                            "time {} s does not increase (previous row {} s)",
                            row.t, prev.t
                        ),
                    ));
                }
            }
            rows.push(row);
        }
        if rows.is_empty() {
            return Err(err(hline, "the script has a header but no rows".into()));
        }
        Ok(Self {
            frame: layout.frame,
            rows,
        })
    }

    /// Brings a script recorded in the arm's frame (an `arm probe` CSV) into the world frame
    /// with the tracker calibration; scripts in the other frames are returned as they are.
    pub fn into_world(mut self, world_from_arm: &Isometry3<f64>) -> Self {
        if self.frame == ScriptFrame::Arm {
            for r in &mut self.rows {
                r.p = (world_from_arm * Point3::from(r.p)).coords;
            }
            self.frame = ScriptFrame::World;
        }
        self
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
            ScriptFrame::World | ScriptFrame::Arm => Vector3::zeros(),
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
        let e = StylusScript::parse("t_s,x_m,y_m,z_m,grab,speed\n").unwrap_err();
        assert!(e.message.contains("unknown column `speed`"), "{e}");
        let e = StylusScript::parse("t_s,x_m,y_m,dz_m,grab\n").unwrap_err();
        assert_eq!(e.line, 1);
    }

    /// The unit-suffixed header, the short one, another column order, and a file saved by a
    /// spreadsheet (BOM, quoted header, CRLF) all read the same script.
    #[test]
    fn headers_by_name_and_spreadsheet_files_read_alike() {
        let rows = "0,0,0,0,0\n1,0,0,0,1\n3,0.1,0,0.05,1\n";
        let plain = StylusScript::parse(&format!("{HEADER_RELATIVE}\n{rows}")).unwrap();
        let short = StylusScript::parse(&format!("t,dx,dy,dz,grab\n{rows}")).unwrap();
        let saved = format!("\u{feff}\"t_s\",\"dx_m\",\"dy_m\",\"dz_m\",\"grab\"\r\n{rows}")
            .replace('\n', "\r\n")
            .replace("\r\r", "\r");
        let saved = StylusScript::parse(&saved).unwrap();
        let shuffled =
            StylusScript::parse("grab,dz,t,dy,dx\n0,0,0,0,0\n1,0,1,0,0\n1,0.05,3,0,0.1\n").unwrap();
        assert_eq!(plain, short);
        assert_eq!(plain, saved);
        assert_eq!(plain, shuffled);
        assert_eq!(plain.frame(), ScriptFrame::RelativeToGrab);
    }

    /// The CSV `arm probe` writes is a script in the arm's frame: button 1 clips, the joint
    /// angles are ignored, and the tracker calibration brings the tips into the world.
    #[test]
    fn an_arm_probe_csv_replays_in_the_world_through_the_calibration() {
        let text = format!(
            "{ARM_PROBE_HEADER}\n\
             0.00,0.1,0.2,0.3,0.4,0.5,0.20,-0.05,0.02,0\n\
             0.01,0.1,0.2,0.3,0.4,0.5,0.21,-0.05,0.02,1\n\
             0.02,0.1,0.2,0.3,0.4,0.5,0.22,-0.05,0.02,2\n"
        );
        let s = StylusScript::parse(&text).unwrap();
        assert_eq!(s.frame(), ScriptFrame::Arm);
        let world_from_arm = Isometry3::new(
            Vector3::new(0.25, -0.40, 0.02),
            Vector3::z() * std::f64::consts::FRAC_PI_2,
        );
        let w = s.into_world(&world_from_arm);
        assert_eq!(w.frame(), ScriptFrame::World);
        let o = Point3::origin();
        let tip = w.sample(0.01, &o);
        let expected = world_from_arm * Point3::new(0.21, -0.05, 0.02);
        assert!((tip.position_in_world - expected).norm() < 1e-15);
        assert!(tip.grab, "button 1 clips");
        assert!(!w.sample(0.0, &o).grab);
        assert!(!w.sample(0.02, &o).grab, "button 2 alone does not");
    }
}
