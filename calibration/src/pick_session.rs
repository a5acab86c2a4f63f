//! The guided picking procedure of `calibrate tracker --arm`: prompt for each point of a
//! calibration object, collect the touched arm-frame positions, fit, re-pick the points the
//! fit flags as likely mis-picks, and fit again.
//!
//! It is generic over where picks come from ([`PickSource`]: the real arm driver, a simulated
//! user, or an in-memory list in tests) and over how it talks to the user ([`SessionUi`]), so
//! the whole procedure is testable without a device or a terminal.

use crate::calibration_object::CalibrationObject;
use crate::fit_report::{calibrate, CalibrationError, FitReport};
use crate::point_set::{PointSetError, Side};
use nalgebra::Point3;

/// One request to the user: touch this point, then press the pedal.
#[derive(Debug, Clone, PartialEq)]
pub struct PickRequest {
    /// 0-based index of the point in the object.
    pub index: usize,
    /// Number of points in the object.
    pub total: usize,
    /// The point's label ("top front left corner").
    pub label: String,
    /// Its known position in the marker frame (used by a simulated user; a person reads the label).
    pub p_in_world: Point3<f64>,
    /// 1 for the first touch of this point, 2 and up for re-picks.
    pub attempt: usize,
}

impl PickRequest {
    /// The prompt shown to the user, e.g. "touch point 3/8: top front left corner, then press
    /// the pedal".
    pub fn prompt(&self) -> String {
        let again = if self.attempt > 1 { " again" } else { "" };
        format!(
            "touch point {}/{}{again}: {}, then press the pedal",
            self.index + 1,
            self.total,
            self.label
        )
    }
}

/// Why a pick could not be obtained.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PickError {
    /// The device stopped delivering samples (unplugged, worker ended); retrying the session
    /// after reconnecting can help.
    #[error("the arm stopped delivering samples: {0}")]
    Disconnected(String),
    /// No pedal press came within the allowed time.
    #[error("no pedal press within {secs:.0} s")]
    Timeout {
        /// The time waited, s.
        secs: f64,
    },
    /// The user cancelled (Ctrl-C).
    #[error("cancelled")]
    Cancelled,
}

/// Where touched points come from.
pub trait PickSource {
    /// Blocks until the user has touched the requested point and pressed the pedal, and
    /// returns the stylus tip in the arm's base frame, m.
    fn pick(&mut self, request: &PickRequest) -> Result<Point3<f64>, PickError>;
}

/// How the session talks to the user.
pub trait SessionUi {
    /// Shows a request before waiting for its pick.
    fn prompt(&mut self, request: &PickRequest);
    /// Shows a pick that was just taken (progress).
    fn picked(&mut self, request: &PickRequest, tip_in_arm: &Point3<f64>);
    /// Shows the fit of a round (1 = after the first pass).
    fn fitted(&mut self, report: &FitReport, round: usize);
    /// Shows a message (why points are re-picked, warnings).
    fn message(&mut self, text: &str);
}

/// A [`SessionUi`] that shows nothing (tests, scripted runs).
#[derive(Debug, Default, Clone, Copy)]
pub struct SilentUi;

impl SessionUi for SilentUi {
    fn prompt(&mut self, _: &PickRequest) {}
    fn picked(&mut self, _: &PickRequest, _: &Point3<f64>) {}
    fn fitted(&mut self, _: &FitReport, _: usize) {}
    fn message(&mut self, _: &str) {}
}

/// Why the session ended without a calibration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    /// A pick failed.
    #[error("point {point}: {source}")]
    Pick {
        /// 1-based point number.
        point: usize,
        /// Why.
        source: PickError,
    },
    /// The touched points cannot give a calibration even after re-picking.
    #[error(transparent)]
    Calibration(#[from] CalibrationError),
}

/// The result of a completed session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionOutcome {
    /// The final fit.
    pub report: FitReport,
    /// The touched points, in object order (after re-picks).
    pub p_in_arm: Vec<Point3<f64>>,
    /// How many re-pick rounds were needed.
    pub repick_rounds: usize,
}

/// The guided procedure for one calibration object.
#[derive(Debug, Clone)]
pub struct PickSession<'a> {
    object: &'a CalibrationObject,
    max_repick_rounds: usize,
}

impl<'a> PickSession<'a> {
    /// A session over `object`'s points, allowing `max_repick_rounds` rounds of re-picking
    /// flagged points (2 is a good default: one slip, one more chance).
    pub fn new(object: &'a CalibrationObject, max_repick_rounds: usize) -> Self {
        Self {
            object,
            max_repick_rounds,
        }
    }

    fn request(&self, index: usize, attempt: usize) -> PickRequest {
        let p = &self.object.points[index];
        PickRequest {
            index,
            total: self.object.points.len(),
            label: p.label.clone(),
            p_in_world: p.p_in_world,
            attempt,
        }
    }

    fn take(
        &self,
        index: usize,
        attempts: &mut [usize],
        source: &mut dyn PickSource,
        ui: &mut dyn SessionUi,
    ) -> Result<Point3<f64>, SessionError> {
        attempts[index] += 1;
        let request = self.request(index, attempts[index]);
        ui.prompt(&request);
        let tip = source.pick(&request).map_err(|source| SessionError::Pick {
            point: index + 1,
            source,
        })?;
        ui.picked(&request, &tip);
        Ok(tip)
    }

    /// Runs the procedure: every point once, then up to `max_repick_rounds` rounds of
    /// re-picking the points the fit flags (or a touch that repeats an earlier one). Ends with
    /// the last fit, flagged points or not: the report says which are suspect.
    pub fn run(
        &self,
        source: &mut dyn PickSource,
        ui: &mut dyn SessionUi,
    ) -> Result<SessionOutcome, SessionError> {
        let world = self.object.positions();
        let mut attempts = vec![0; world.len()];
        let mut arm = Vec::with_capacity(world.len());
        for index in 0..world.len() {
            arm.push(self.take(index, &mut attempts, source, ui)?);
        }
        let mut round = 0;
        loop {
            let to_repick = match calibrate(&world, &arm) {
                Ok(report) => {
                    ui.fitted(&report, round + 1);
                    if report.suspects.is_empty() || round >= self.max_repick_rounds {
                        if !report.suspects.is_empty() {
                            ui.message(&format!(
                                "points still flagged after {round} re-pick rounds; keeping this fit (check the object's placement)"
                            ));
                        }
                        return Ok(SessionOutcome {
                            report,
                            p_in_arm: arm,
                            repick_rounds: round,
                        });
                    }
                    let mut v = report.suspects.clone();
                    v.sort_unstable();
                    ui.message(&format!(
                        "likely mis-pick at point {}: touch {} again",
                        v.iter()
                            .map(|i| (i + 1).to_string())
                            .collect::<Vec<_>>()
                            .join(", "),
                        if v.len() == 1 { "it" } else { "them" }
                    ));
                    v
                }
                // Two touches at the same place: the second one is the slip.
                Err(CalibrationError::PointSet(PointSetError::Repeated {
                    second,
                    side: Side::Arm,
                    ..
                })) if round < self.max_repick_rounds => {
                    ui.message(&format!(
                        "point {} was touched where an earlier point was: touch it again",
                        second + 1
                    ));
                    vec![second]
                }
                Err(e) => return Err(e.into()),
            };
            round += 1;
            for index in to_repick {
                arm[index] = self.take(index, &mut attempts, source, ui)?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Isometry3, Vector3};
    use std::collections::VecDeque;
    use std::path::Path;

    /// Plays back a scripted list of touches and records the requests it saw.
    struct Scripted {
        touches: VecDeque<Point3<f64>>,
        seen: Vec<PickRequest>,
    }

    impl PickSource for Scripted {
        fn pick(&mut self, request: &PickRequest) -> Result<Point3<f64>, PickError> {
            self.seen.push(request.clone());
            self.touches
                .pop_front()
                .ok_or(PickError::Disconnected("script ended".into()))
        }
    }

    fn cube() -> CalibrationObject {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/calibration/cube_80mm.toml");
        CalibrationObject::load(&path).unwrap()
    }

    fn truth() -> Isometry3<f64> {
        Isometry3::new(Vector3::new(-0.2, 0.35, 0.05), Vector3::new(0.0, 0.1, 1.3))
    }

    fn touch(p_in_world: &Point3<f64>) -> Point3<f64> {
        truth().inverse() * p_in_world
    }

    #[test]
    fn prompt_reads_like_the_issue() {
        let r = PickRequest {
            index: 2,
            total: 8,
            label: "top front left corner".into(),
            p_in_world: Point3::origin(),
            attempt: 1,
        };
        assert_eq!(
            r.prompt(),
            "touch point 3/8: top front left corner, then press the pedal"
        );
    }

    #[test]
    fn a_clean_session_asks_each_point_once_and_recovers_the_transform() {
        let object = cube();
        let mut source = Scripted {
            touches: object.points.iter().map(|p| touch(&p.p_in_world)).collect(),
            seen: vec![],
        };
        let out = PickSession::new(&object, 2)
            .run(&mut source, &mut SilentUi)
            .unwrap();
        assert_eq!(out.repick_rounds, 0);
        assert_eq!(source.seen.len(), 8);
        assert!(source
            .seen
            .iter()
            .enumerate()
            .all(|(i, r)| r.index == i && r.attempt == 1));
        let err = (out.report.world_from_arm().to_homogeneous() - truth().to_homogeneous()).norm();
        assert!(err < 1e-12, "{err}");
    }

    #[test]
    fn a_slipped_touch_is_asked_again_and_the_second_try_is_used() {
        let object = cube();
        let mut touches: VecDeque<_> = object.points.iter().map(|p| touch(&p.p_in_world)).collect();
        touches[5] += Vector3::new(0.0, 0.006, 0.0);
        touches.push_back(touch(&object.points[5].p_in_world));
        let mut source = Scripted {
            touches,
            seen: vec![],
        };
        let out = PickSession::new(&object, 2)
            .run(&mut source, &mut SilentUi)
            .unwrap();
        assert_eq!(out.repick_rounds, 1);
        assert_eq!(source.seen.len(), 9);
        assert_eq!((source.seen[8].index, source.seen[8].attempt), (5, 2));
        assert!(out.report.suspects.is_empty());
        assert!(out.report.rms_mm() < 1e-9);
    }

    #[test]
    fn a_double_press_at_one_place_is_asked_again() {
        let object = cube();
        let mut touches: VecDeque<_> = object.points.iter().map(|p| touch(&p.p_in_world)).collect();
        touches[3] = touches[2];
        touches.push_back(touch(&object.points[3].p_in_world));
        let mut source = Scripted {
            touches,
            seen: vec![],
        };
        let out = PickSession::new(&object, 2)
            .run(&mut source, &mut SilentUi)
            .unwrap();
        assert_eq!((source.seen[8].index, source.seen[8].attempt), (3, 2));
        assert!(out.report.rms_mm() < 1e-9);
    }

    #[test]
    fn a_persistent_error_ends_with_the_point_still_flagged() {
        let object = cube();
        let mut touches: VecDeque<_> = object.points.iter().map(|p| touch(&p.p_in_world)).collect();
        let bad = touch(&object.points[1].p_in_world) + Vector3::new(0.0, 0.0, 0.006);
        touches[1] = bad;
        touches.push_back(bad);
        touches.push_back(bad);
        let mut source = Scripted {
            touches,
            seen: vec![],
        };
        let out = PickSession::new(&object, 2)
            .run(&mut source, &mut SilentUi)
            .unwrap();
        assert_eq!(out.repick_rounds, 2);
        assert_eq!(out.report.suspects, vec![1]);
    }

    #[test]
    fn a_lost_device_names_the_point() {
        let object = cube();
        let mut source = Scripted {
            touches: object.points[..3]
                .iter()
                .map(|p| touch(&p.p_in_world))
                .collect(),
            seen: vec![],
        };
        let err = PickSession::new(&object, 2)
            .run(&mut source, &mut SilentUi)
            .unwrap_err();
        assert!(err.to_string().starts_with("point 4:"), "{err}");
    }
}
