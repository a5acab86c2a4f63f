//! What the tracker looks for: dictionary, marker id and size, or a grid board; how long it
//! holds a lost pose; how it smooths.

use super::one_euro::OneEuroConfig;

/// An OpenCV predefined ArUco dictionary, by its short name (`4X4_50`, `5X5_100`, `ARUCO_ORIGINAL`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dictionary(pub i32);

impl Dictionary {
    const NAMES: [(&'static str, i32); 17] = [
        ("4X4_50", 0),
        ("4X4_100", 1),
        ("4X4_250", 2),
        ("4X4_1000", 3),
        ("5X5_50", 4),
        ("5X5_100", 5),
        ("5X5_250", 6),
        ("5X5_1000", 7),
        ("6X6_50", 8),
        ("6X6_100", 9),
        ("6X6_250", 10),
        ("6X6_1000", 11),
        ("7X7_50", 12),
        ("7X7_100", 13),
        ("7X7_250", 14),
        ("7X7_1000", 15),
        ("ARUCO_ORIGINAL", 16),
    ];

    /// The dictionary of the printed marker in `assets/markers/`.
    pub const DEFAULT: Self = Self(0);

    /// Parses `4X4_50` or `DICT_4X4_50` (case-insensitive).
    pub fn from_name(name: &str) -> Result<Self, String> {
        let upper = name.trim().to_ascii_uppercase();
        let short = upper.strip_prefix("DICT_").unwrap_or(&upper);
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == short)
            .map(|&(_, v)| Self(v))
            .ok_or_else(|| {
                format!(
                    "unknown ArUco dictionary `{name}`; known: {}",
                    Self::NAMES.map(|(n, _)| n).join(", ")
                )
            })
    }

    /// The short name (`4X4_50`).
    pub fn name(&self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, v)| *v == self.0)
            .map_or("?", |(n, _)| n)
    }

    /// Largest valid marker id + 1.
    pub fn marker_count(&self) -> i32 {
        // ARUCO_ORIGINAL has no count in its name: 1024 markers.
        self.name()
            .rsplit('_')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(1024)
    }
}

/// A grid of markers (OpenCV's GridBoard layout) for robustness to occlusion: ids run
/// row-major from the top-left marker; the world origin is the board's centre.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridBoardConfig {
    /// Markers across.
    pub markers_x: u32,
    /// Markers down.
    pub markers_y: u32,
    /// Side of each marker's black square, metres.
    pub marker_length_m: f64,
    /// Gap between neighbouring markers, metres.
    pub separation_m: f64,
    /// Id of the top-left marker.
    pub first_id: i32,
}

/// The tracker's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackerConfig {
    /// ArUco dictionary.
    pub dictionary: Dictionary,
    /// Id of the single marker that defines the world (ignored with `board`).
    pub marker_id: i32,
    /// Side of the single marker's black square, metres.
    pub marker_length_m: f64,
    /// Use a grid board instead of one marker.
    pub board: Option<GridBoardConfig>,
    /// How long the last pose is reported (as held) after the marker is lost, seconds.
    pub hold_secs: f64,
    /// Poses whose RMS reprojection error exceeds this are rejected as not detected, pixels.
    pub max_reprojection_error_px: f64,
    /// One-euro smoothing of the reported pose; `None` reports the raw pose.
    pub smoothing: Option<OneEuroConfig>,
    /// Search around the last detection before searching the whole frame (single marker).
    pub search_around_last: bool,
}

impl Default for TrackerConfig {
    /// The printed marker of `assets/markers` (4X4_50, id 0, 80 mm), 0.5 s hold, 2 px
    /// reprojection limit, default one-euro smoothing, search around the last detection.
    fn default() -> Self {
        Self {
            dictionary: Dictionary::DEFAULT,
            marker_id: 0,
            marker_length_m: ar_drivers::camera::PRINTED_MARKER_SIDE_M,
            board: None,
            hold_secs: 0.5,
            max_reprojection_error_px: 2.0,
            smoothing: Some(OneEuroConfig::default()),
            search_around_last: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictionary_names_parse_with_or_without_prefix() {
        assert_eq!(Dictionary::from_name("4X4_50"), Ok(Dictionary(0)));
        assert_eq!(Dictionary::from_name("dict_6x6_250"), Ok(Dictionary(10)));
        assert_eq!(Dictionary(10).marker_count(), 250);
        let err = Dictionary::from_name("4X4_51").unwrap_err();
        assert!(err.contains("4X4_51") && err.contains("4X4_50"), "{err}");
    }
}
