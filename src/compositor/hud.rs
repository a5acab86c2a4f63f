//! The heads-up display: the numbers a user watches while interacting, as text lines.

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
    /// Displayed frames per second.
    pub fps: f64,
    /// Simulated time over wall time of the solver thread (1.0 = real time).
    pub solver_real_time_factor: f64,
    /// Norm of the position-level constraint violation ‖ψ‖, metres.
    pub psi_norm_m: f64,
    /// Relative energy balance error (energy change minus work in plus dissipation, over the
    /// reference energy).
    pub energy_error_rel: f64,
    /// Marker tracking.
    pub marker: DeviceStatus,
    /// Digitizer arm.
    pub arm: DeviceStatus,
    /// Microphone.
    pub mic: DeviceStatus,
    /// End-to-end latency, stylus sample time → frame presented, milliseconds.
    pub latency_ms: Option<f64>,
    /// Why the simulation failed, once it has (the solver then stops stepping).
    pub solver_failure: Option<String>,
}

impl HudStats {
    /// The HUD as text lines, top to bottom.
    pub fn lines(&self) -> Vec<String> {
        let latency = match self.latency_ms {
            Some(ms) => format!("{ms:.1} ms"),
            None => "-".to_owned(),
        };
        let mut lines = Vec::with_capacity(4);
        // First, so that it is seen: the numbers below stopped changing.
        if let Some(why) = &self.solver_failure {
            lines.push(format!("solver failed: {why}"));
        }
        lines.extend([
            format!(
                "{:.1} fps   solver x{:.2} real time   latency {latency}",
                self.fps, self.solver_real_time_factor
            ),
            format!(
                "|psi| {:.2e} m   energy error {:+.3} %",
                self.psi_norm_m,
                100.0 * self.energy_error_rel
            ),
            format!(
                "marker: {}   arm: {}   mic: {}",
                self.marker, self.arm, self.mic
            ),
        ]);
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_show_latency_and_lost_devices() {
        let hud = HudStats {
            fps: 25.0,
            solver_real_time_factor: 1.0,
            psi_norm_m: 1.0e-5,
            energy_error_rel: -2.0e-3,
            marker: DeviceStatus::Ok("tracked".into()),
            arm: DeviceStatus::Lost("port closed".into()),
            mic: DeviceStatus::Waiting,
            latency_ms: Some(31.25),
            solver_failure: None,
        };
        let text = hud.lines().join("\n");
        assert!(
            text.contains("latency 31.2 ms") || text.contains("latency 31.3 ms"),
            "{text}"
        );
        assert!(text.contains("arm: LOST (port closed)"), "{text}");
        assert!(text.contains("mic: waiting"), "{text}");
        assert!(!text.contains("solver failed"), "{text}");
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
        assert_eq!(lines.len(), 4);
    }
}
