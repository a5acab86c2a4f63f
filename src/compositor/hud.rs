//! The heads-up display: the numbers a user watches while interacting (the scene, the grab,
//! the spring force, the energies, the devices), as text lines, with the developer's figures
//! (frame rate, ‖ψ‖, latency) behind a switch; and the band of the view the HUD covers.

/// State of one device as shown in the HUD.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum DeviceStatus {
    /// Not heard from yet.
    #[default]
    Waiting,
    /// Working; the text says how (e.g. "tracked", "clipped", "level 0.12").
    Ok(String),
    /// Lost or failed; the text says why.
    Lost(String),
}

impl std::fmt::Display for DeviceStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceStatus::Waiting => write!(f, "waiting"),
            DeviceStatus::Ok(s) => write!(f, "{s}"),
            DeviceStatus::Lost(s) => write!(f, "LOST ({s})"),
        }
    }
}

/// Everything the HUD shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HudStats {
    /// The scene's name.
    pub scene: String,
    /// Simulated time, seconds.
    pub sim_time_s: f64,
    /// The body the stylus is clipped to, while clipped.
    pub grabbed_body: Option<String>,
    /// Force of the stylus spring while clipped, newtons.
    pub spring_force_n: f64,
    /// Mechanical energy (kinetic, gravitational from the marker plane, elastic), joules.
    pub energy_j: f64,
    /// Kinetic energy, joules.
    pub kinetic_j: f64,
    /// Work the user has done through the stylus spring, joules.
    pub user_work_j: f64,
    /// Marker tracking.
    pub marker: DeviceStatus,
    /// Digitizer arm.
    pub arm: DeviceStatus,
    /// Microphone.
    pub mic: DeviceStatus,
    /// Why the simulation failed, once it has (the solver then stops stepping).
    pub solver_failure: Option<String>,
    /// The developer's figures, shown only when asked for ([`HudStats::lines`]).
    pub diagnostics: Option<HudDiagnostics>,
}

/// The developer's figures: how fast and how exactly the rig runs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HudDiagnostics {
    /// Displayed frames per second.
    pub fps: f64,
    /// Simulated time over wall time of the solver thread (1.0 = real time).
    pub solver_real_time_factor: f64,
    /// Norm of the position-level constraint violation ‖ψ‖, metres.
    pub psi_norm_m: f64,
    /// Relative energy balance error (energy change minus work in plus dissipation, over the
    /// reference energy).
    pub energy_error_rel: f64,
    /// End-to-end latency, stylus sample time → frame presented, milliseconds.
    pub latency_ms: Option<f64>,
}

/// Most lines the HUD shows without its diagnostics (a solver failure, the scene, the grab,
/// the energies, the devices): what a view must keep clear at its top.
pub const HUD_LINES: usize = 5;
/// Lines the diagnostics add.
pub const HUD_DIAGNOSTIC_LINES: usize = 2;

/// Height of the HUD's text in a view `view_height_px` high, pixels.
pub fn hud_text_px(view_height_px: u32) -> f32 {
    (view_height_px as f32 / 26.0).clamp(12.0, 40.0)
}

/// Top of HUD line `line` (0 first) in a view `view_height_px` high, pixels; with
/// `line` = the number of lines, the bottom of the band the HUD covers.
pub fn hud_line_top_px(view_height_px: u32, line: usize) -> f32 {
    6.0 + line as f32 * hud_text_px(view_height_px) * 1.05
}

impl HudStats {
    /// The HUD as text lines, top to bottom: a solver failure first, the scene and time, the
    /// grab and its spring force, the energies and the user's work, the devices, then the
    /// diagnostics when they are asked for.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::with_capacity(HUD_LINES + HUD_DIAGNOSTIC_LINES);
        // First, so that it is seen: the numbers below stopped changing.
        if let Some(why) = &self.solver_failure {
            lines.push(format!("solver failed: {why}"));
        }
        let grab = match &self.grabbed_body {
            Some(body) => format!(
                "grabbed: {body}   spring force {:.2} N",
                self.spring_force_n
            ),
            None => "grabbed: nothing".to_owned(),
        };
        lines.extend([
            format!("scene: {}   t = {:.2} s", self.scene, self.sim_time_s),
            grab,
            format!(
                "energy {:.3} J (kinetic {:.3} J)   user work {:+.3} J",
                self.energy_j, self.kinetic_j, self.user_work_j
            ),
            format!(
                "marker: {}   arm: {}   mic: {}",
                self.marker, self.arm, self.mic
            ),
        ]);
        if let Some(d) = &self.diagnostics {
            let latency = match d.latency_ms {
                Some(ms) => format!("{ms:.1} ms"),
                None => "-".to_owned(),
            };
            lines.extend([
                format!(
                    "{:.1} fps   solver x{:.2} real time   latency {latency}",
                    d.fps, d.solver_real_time_factor
                ),
                format!(
                    "|psi| {:.2e} m   energy error {:+.3} %",
                    d.psi_norm_m,
                    100.0 * d.energy_error_rel
                ),
            ]);
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clipped() -> HudStats {
        HudStats {
            scene: "ten_pendula".into(),
            sim_time_s: 3.456,
            grabbed_body: Some("p10".into()),
            spring_force_n: 1.234,
            energy_j: 2.5,
            kinetic_j: 0.0125,
            user_work_j: 0.0456,
            marker: DeviceStatus::Ok("tracked".into()),
            arm: DeviceStatus::Lost("port closed".into()),
            mic: DeviceStatus::Waiting,
            solver_failure: None,
            diagnostics: None,
        }
    }

    #[test]
    fn lines_show_the_mechanics_and_the_devices_without_diagnostics() {
        let lines = clipped().lines();
        assert_eq!(
            lines,
            [
                "scene: ten_pendula   t = 3.46 s",
                "grabbed: p10   spring force 1.23 N",
                "energy 2.500 J (kinetic 0.013 J)   user work +0.046 J",
                "marker: tracked   arm: LOST (port closed)   mic: waiting",
            ]
        );
        let free = HudStats {
            grabbed_body: None,
            ..clipped()
        };
        assert_eq!(free.lines()[1], "grabbed: nothing");
    }

    #[test]
    fn diagnostics_come_last_when_asked_for() {
        let hud = HudStats {
            diagnostics: Some(HudDiagnostics {
                fps: 25.0,
                solver_real_time_factor: 1.0,
                psi_norm_m: 1.0e-5,
                energy_error_rel: -2.0e-3,
                latency_ms: Some(31.0),
            }),
            ..clipped()
        };
        let lines = hud.lines();
        assert_eq!(lines.len(), 4 + HUD_DIAGNOSTIC_LINES);
        assert_eq!(
            lines[4],
            "25.0 fps   solver x1.00 real time   latency 31.0 ms"
        );
        assert_eq!(lines[5], "|psi| 1.00e-5 m   energy error -0.200 %");
    }

    #[test]
    fn a_failed_solver_is_the_first_line_with_its_reason() {
        let hud = HudStats {
            solver_failure: Some("body `p1` has a non-finite position".into()),
            ..HudStats::default()
        };
        let lines = hud.lines();
        assert_eq!(
            lines[0],
            "solver failed: body `p1` has a non-finite position"
        );
        assert_eq!(lines.len(), HUD_LINES);
    }

    #[test]
    fn the_band_grows_with_the_lines_and_the_view() {
        assert_eq!(hud_text_px(480), 480.0 / 26.0);
        assert_eq!(hud_text_px(100), 12.0);
        assert_eq!(hud_line_top_px(480, 0), 6.0);
        assert!((hud_line_top_px(480, 5) - (6.0 + 5.0 * 1.05 * 480.0 / 26.0)).abs() < 1e-4);
    }
}
