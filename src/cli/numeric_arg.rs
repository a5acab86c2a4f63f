//! Value parsers for numeric flags: a value out of range is refused while the command line is
//! parsed, with clap's one-line error naming the flag and the value (e.g. `invalid value '0'
//! for '--dt <H>': must be a positive, finite number of seconds`), before any file is read.
//!
//! Flags that take these parsers also set `allow_negative_numbers`, so that `--dt -1` reaches
//! the parser (and is refused for being negative) instead of being taken for a flag `-1`.

/// Parses a floating-point number (`nan` and `inf` parse; the checks below refuse them).
fn number(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .map_err(|_| "not a number".to_owned())
}

/// A time step or other duration that must be positive: finite and > 0 (s).
pub fn positive_secs(text: &str) -> Result<f64, String> {
    match number(text)? {
        v if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("must be a positive, finite number of seconds".to_owned()),
    }
}

/// A duration: finite and ≥ 0 (s), and small enough for [`std::time::Duration`] (whose
/// conversion panics beyond ~5.8e11 years).
pub fn duration_secs(text: &str) -> Result<f64, String> {
    match number(text)? {
        v if v.is_finite() && v >= 0.0 && std::time::Duration::try_from_secs_f64(v).is_ok() => {
            Ok(v)
        }
        _ => Err("must be a finite number of seconds, zero or more".to_owned()),
    }
}

/// A factor in [0, 1] (e.g. the Baumgarte factor β).
pub fn unit_interval(text: &str) -> Result<f64, String> {
    match number(text)? {
        v if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err("must be between 0 and 1".to_owned()),
    }
}

/// A physical coefficient that must be positive: finite and > 0 (e.g. a stiffness in N/m).
pub fn positive(text: &str) -> Result<f64, String> {
    match number(text)? {
        v if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err("must be a positive, finite number".to_owned()),
    }
}

/// A physical coefficient that may be zero: finite and ≥ 0 (e.g. a damping in N·s/m).
pub fn non_negative(text: &str) -> Result<f64, String> {
    match number(text)? {
        v if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err("must be a finite number, zero or more".to_owned()),
    }
}

/// A count that must be at least 1 (e.g. iterations, every-Nth-step).
pub fn positive_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("must be a whole number, 1 or more".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_values_are_refused_and_edge_values_kept() {
        for bad in ["0", "-1", "nan", "NaN", "inf", "-inf", "abc", ""] {
            assert!(positive_secs(bad).is_err(), "{bad:?}");
            assert!(positive(bad).is_err(), "{bad:?}");
        }
        assert_eq!(positive_secs("0.01"), Ok(0.01));
        for bad in ["-1", "-0.5", "nan", "inf", "1e300"] {
            assert!(duration_secs(bad).is_err(), "{bad:?}");
        }
        assert_eq!(duration_secs("0"), Ok(0.0));
        assert_eq!(duration_secs("600"), Ok(600.0));
        for bad in ["-0.1", "1.01", "nan", "inf"] {
            assert!(unit_interval(bad).is_err(), "{bad:?}");
        }
        assert_eq!(unit_interval("0"), Ok(0.0));
        assert_eq!(unit_interval("1"), Ok(1.0));
        for bad in ["-1", "nan", "inf"] {
            assert!(non_negative(bad).is_err(), "{bad:?}");
        }
        assert_eq!(non_negative("0"), Ok(0.0));
        for bad in ["0", "-1", "1.5", "x"] {
            assert!(positive_count(bad).is_err(), "{bad:?}");
        }
        assert_eq!(positive_count("3"), Ok(3));
    }
}
