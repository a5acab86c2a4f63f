//! Running statistics of a per-frame duration (latency, render time), in milliseconds.

/// Count, mean, maximum and percentiles of a series of durations.
#[derive(Debug, Clone, Default)]
pub struct LatencyStats {
    samples_ms: Vec<f64>,
}

impl LatencyStats {
    /// Adds one sample.
    pub fn push_ms(&mut self, ms: f64) {
        if ms.is_finite() {
            self.samples_ms.push(ms);
        }
    }
    /// Number of samples.
    pub fn count(&self) -> usize {
        self.samples_ms.len()
    }
    /// The newest sample.
    pub fn last_ms(&self) -> Option<f64> {
        self.samples_ms.last().copied()
    }
    /// Mean, if any samples.
    pub fn mean_ms(&self) -> Option<f64> {
        (!self.samples_ms.is_empty())
            .then(|| self.samples_ms.iter().sum::<f64>() / self.samples_ms.len() as f64)
    }
    /// Largest sample.
    pub fn max_ms(&self) -> Option<f64> {
        self.samples_ms.iter().copied().reduce(f64::max)
    }
    /// The `q`-quantile (0..=1, nearest rank).
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        if self.samples_ms.is_empty() {
            return None;
        }
        let mut v = self.samples_ms.clone();
        v.sort_by(f64::total_cmp);
        let idx = ((q.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        Some(v[idx])
    }
    /// "mean a ms, median b ms, p95 c ms, max d ms (n frames)" or "no samples".
    pub fn describe(&self) -> String {
        match (
            self.mean_ms(),
            self.quantile_ms(0.5),
            self.quantile_ms(0.95),
            self.max_ms(),
        ) {
            (Some(m), Some(med), Some(p), Some(x)) => format!(
                "mean {m:.1} ms, median {med:.1} ms, p95 {p:.1} ms, max {x:.1} ms ({} frames)",
                self.count()
            ),
            _ => "no samples".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_mean() {
        let mut s = LatencyStats::default();
        for v in 1..=100 {
            s.push_ms(v as f64);
        }
        assert_eq!(s.mean_ms(), Some(50.5));
        assert_eq!(s.quantile_ms(0.95), Some(95.0));
        assert_eq!(s.quantile_ms(0.5), Some(50.0));
        assert!(s.describe().contains("median 50.0 ms"), "{}", s.describe());
        assert_eq!(s.max_ms(), Some(100.0));
        s.push_ms(f64::NAN);
        assert_eq!(s.count(), 100);
    }
}
