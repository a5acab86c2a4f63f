//! Force arrows: their scale (chosen once per run from the first forces, a round number of
//! metres per newton, unless fixed), their heads, the length they are cut at so that a large
//! force cannot leave the frame, and the legend — a reference arrow on the desk in front of the
//! marker labelled with the force it stands for.

use crate::scene_view::ReactionView;
use nalgebra::{Point3, Vector3};

/// The longest reaction of the first forces is drawn about this long, metres.
pub const LONGEST_ARROW_M: f64 = 0.08;
/// No arrow is drawn longer than this, metres; a longer one gets a second head.
pub const MAX_ARROW_M: f64 = 0.12;
/// The legend's arrow is about this long, metres.
pub const LEGEND_ARROW_M: f64 = 0.05;
/// Where the legend's arrow starts: on the desk, in front of the marker's near right corner.
pub const LEGEND_START_IN_WORLD: [f64; 3] = [0.05, -0.075, 0.0];

/// The largest of 1, 2, 5 × 10ᵏ not above `x` (`x` positive and finite), so that scales and
/// legends read as round numbers.
pub fn round_down_125(x: f64) -> f64 {
    let decade = 10f64.powf(x.log10().floor());
    let mantissa = x / decade;
    // 1e-9: a mantissa of 2 or 5 that rounding put a hair under stays itself.
    let step = [5.0, 2.0, 1.0]
        .into_iter()
        .find(|&m| mantissa >= m - 1e-9)
        .unwrap_or(1.0);
    step * decade
}

/// Arrow length per newton that draws the largest of `reactions` about [`LONGEST_ARROW_M`]
/// long (rounded down to 1, 2, 5 × 10ᵏ m/N); `None` while every force is zero or not finite.
pub fn scale_for(reactions: &[ReactionView]) -> Option<f64> {
    let largest = reactions
        .iter()
        .map(|r| r.force_in_world.norm())
        .filter(|f| f.is_finite())
        .fold(0.0, f64::max);
    (largest > 1e-9).then(|| round_down_125(LONGEST_ARROW_M / largest))
}

/// The line segments of one arrow: the shaft (cut at [`MAX_ARROW_M`]) and two barbs at its
/// tip, plus a second pair of barbs behind the first when the shaft was cut.
pub fn arrow_segments(
    origin: &Point3<f64>,
    force_n: &Vector3<f64>,
    m_per_n: f64,
) -> Vec<(Point3<f64>, Point3<f64>)> {
    let along = force_n * m_per_n;
    let full_m = along.norm();
    if !(full_m > 1e-9 && full_m.is_finite()) {
        return Vec::new();
    }
    let len = full_m.min(MAX_ARROW_M);
    let dir = along / full_m;
    let tip = origin + dir * len;
    let side = match dir.cross(&Vector3::z()).try_normalize(1e-3) {
        Some(s) => s,
        None => dir.cross(&Vector3::x()).normalize(),
    };
    let head_m = 0.25 * len.min(LEGEND_ARROW_M);
    let mut segments = vec![(*origin, tip)];
    let heads = if full_m > MAX_ARROW_M { 2 } else { 1 };
    for k in 0..heads {
        let at = tip - dir * (k as f64 * 0.6 * head_m);
        for s in [-1.0, 1.0] {
            segments.push((at, at - dir * head_m + side * (s * 0.5 * head_m)));
        }
    }
    segments
}

/// The legend: a reference arrow along world x and the force it stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Legend {
    /// The force the arrow stands for, newtons (1, 2, 5 × 10ᵏ).
    pub force_n: f64,
    /// Where its arrow starts.
    pub from_in_world: Point3<f64>,
    /// Its force vector (along world x), newtons.
    pub force_in_world: Vector3<f64>,
    /// Which kinds of arrow it explains: joint reactions, contact normal forces (in their
    /// own colour).
    pub joints: bool,
    pub contacts: bool,
}

impl Legend {
    /// The legend for arrows drawn at `m_per_n`, of joint reactions and/or contact forces.
    pub fn new(m_per_n: f64, joints: bool, contacts: bool) -> Self {
        let force_n = round_down_125(LEGEND_ARROW_M / m_per_n);
        Self {
            force_n,
            from_in_world: Point3::from(LEGEND_START_IN_WORLD),
            force_in_world: Vector3::x() * force_n,
            joints,
            contacts,
        }
    }

    /// The legend's text.
    pub fn label(&self) -> String {
        let what = match (self.joints, self.contacts) {
            (true, true) => "joint reactions (magenta), contact normal forces (cyan)",
            (false, true) => "contact normal forces",
            _ => "joint reaction forces",
        };
        format!("{} N  {what}", self.force_n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_and_legends_are_round_numbers() {
        assert_eq!(round_down_125(0.0123), 0.01);
        assert_eq!(round_down_125(0.037), 0.02);
        assert_eq!(round_down_125(7.0), 5.0);
        assert_eq!(round_down_125(5.0), 5.0);
        assert_eq!(round_down_125(20.0), 20.0);
        let pivot = ReactionView {
            point_in_world: Point3::new(0.0, 0.0, 0.6),
            force_in_world: Vector3::new(0.0, 0.0, 9.81),
        };
        // 0.08 m / 9.81 N = 8.2 mm/N → 5 mm/N; the legend's 5 cm is then 10 N.
        let scale = scale_for(&[pivot]).unwrap();
        assert_eq!(scale, 0.005);
        let legend = Legend::new(scale, true, false);
        assert_eq!(legend.force_n, 10.0);
        assert_eq!(legend.label(), "10 N  joint reaction forces");
        assert_eq!(
            Legend::new(scale, false, true).label(),
            "10 N  contact normal forces"
        );
        assert!(Legend::new(scale, true, true)
            .label()
            .contains("contact normal forces (cyan)"));
        assert_eq!(scale_for(&[]), None);
    }

    #[test]
    fn arrows_have_a_head_and_a_cut_one_has_two() {
        let o = Point3::origin();
        let short = arrow_segments(&o, &Vector3::new(0.0, 0.0, 10.0), 0.005);
        assert_eq!(short.len(), 3);
        assert_eq!(short[0].1, Point3::new(0.0, 0.0, 0.05));
        // The barbs point back from the tip.
        assert!(short[1..]
            .iter()
            .all(|(a, b)| a == &short[0].1 && b.z < a.z));
        let long = arrow_segments(&o, &Vector3::new(100.0, 0.0, 0.0), 0.005);
        assert_eq!(long.len(), 5);
        assert!((long[0].1 - Point3::new(MAX_ARROW_M, 0.0, 0.0)).norm() < 1e-15);
        assert!(arrow_segments(&o, &Vector3::zeros(), 0.005).is_empty());
    }
}
