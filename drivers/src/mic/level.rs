//! Level metering: RMS over fixed-length blocks and an automatic noise-floor estimate.
//!
//! The wind law needs "how much louder than the room is the microphone now". The meter
//! cuts the mono sample stream into blocks of a fixed length (about 20 ms, short enough to
//! follow a breath, long enough to average a few periods of its low-frequency content),
//! computes each block's RMS, and tracks the noise floor with an asymmetric follower in the
//! logarithmic (dB) domain: it drops to a quieter block at once (the room can only be as loud
//! as its quietest moment) but rises only slowly, at a bounded rate in dB per second, so that
//! a breath of a second or two barely lifts it while a fan switched on is learnt within
//! seconds.

/// Smallest RMS the floor follower works with; keeps the logarithm finite on digital silence.
const MIN_LEVEL: f64 = 1e-9;

/// Tracks the noise floor of a sequence of block RMS values.
#[derive(Debug, Clone)]
pub struct NoiseFloor {
    rise_db_per_sec: f64,
    floor_db: Option<f64>,
}

impl NoiseFloor {
    /// A follower that rises at most `rise_db_per_sec` decibels per second of audio.
    pub fn new(rise_db_per_sec: f64) -> Self {
        Self {
            rise_db_per_sec: rise_db_per_sec.max(0.0),
            floor_db: None,
        }
    }

    /// Feeds the RMS of a block lasting `block_secs`; returns the updated floor (linear RMS).
    pub fn update(&mut self, rms: f64, block_secs: f64) -> f64 {
        let level_db = 20.0 * rms.max(MIN_LEVEL).log10();
        let floor_db = match self.floor_db {
            None => level_db,
            Some(f) if level_db <= f => level_db,
            Some(f) => (f + self.rise_db_per_sec * block_secs).min(level_db),
        };
        self.floor_db = Some(floor_db);
        10f64.powf(floor_db / 20.0)
    }

    /// The current floor (linear RMS), or `None` before the first block.
    pub fn floor(&self) -> Option<f64> {
        self.floor_db.map(|db| 10f64.powf(db / 20.0))
    }
}

/// One finished block: where it ended in the stream and its levels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockLevel {
    /// Index (in samples since the meter started) one past the block's last sample.
    pub end_sample: u64,
    /// RMS of the block (full scale = 1).
    pub rms: f64,
    /// Noise floor after this block (full scale = 1).
    pub floor: f64,
}

/// Cuts a mono stream into blocks and reports each block's RMS and the noise floor.
#[derive(Debug, Clone)]
pub struct LevelMeter {
    block_len: usize,
    block_secs: f64,
    sum_sq: f64,
    filled: usize,
    samples_seen: u64,
    floor: NoiseFloor,
}

impl LevelMeter {
    /// A meter for `sample_rate_hz` with blocks of about `block_secs` (at least one sample).
    pub fn new(sample_rate_hz: u32, block_secs: f64, floor_rise_db_per_sec: f64) -> Self {
        let rate = f64::from(sample_rate_hz.max(1));
        let block_len = ((block_secs * rate).round() as usize).max(1);
        Self {
            block_len,
            block_secs: block_len as f64 / rate,
            sum_sq: 0.0,
            filled: 0,
            samples_seen: 0,
            floor: NoiseFloor::new(floor_rise_db_per_sec),
        }
    }

    /// Number of samples per block.
    pub fn block_len(&self) -> usize {
        self.block_len
    }

    /// Exact block duration in seconds (the requested one rounded to whole samples).
    pub fn block_secs(&self) -> f64 {
        self.block_secs
    }

    /// Feeds samples; calls `on_block` for every block completed inside `samples`.
    pub fn push(&mut self, samples: &[f32], mut on_block: impl FnMut(BlockLevel)) {
        for &s in samples {
            let s = f64::from(s);
            self.sum_sq += s * s;
            self.filled += 1;
            self.samples_seen += 1;
            if self.filled == self.block_len {
                let rms = (self.sum_sq / self.block_len as f64).sqrt();
                let floor = self.floor.update(rms, self.block_secs);
                self.sum_sq = 0.0;
                self.filled = 0;
                on_block(BlockLevel {
                    end_sample: self.samples_seen,
                    rms,
                    floor,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rms_of_a_full_scale_sine_is_one_over_root_two() {
        let rate = 48_000;
        let mut meter = LevelMeter::new(rate, 0.02, 1.0);
        assert_eq!(meter.block_len(), 960);
        // 960 samples hold exactly 20 periods of 1 kHz.
        let sine: Vec<f32> = (0..960 * 3)
            .map(|i| (2.0 * std::f64::consts::PI * 1000.0 * i as f64 / rate as f64).sin() as f32)
            .collect();
        let mut blocks = Vec::new();
        meter.push(&sine, |b| blocks.push(b));
        assert_eq!(blocks.len(), 3);
        for (k, b) in blocks.iter().enumerate() {
            assert_eq!(b.end_sample, 960 * (k as u64 + 1));
            assert!(
                (b.rms - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-6,
                "{b:?}"
            );
        }
    }

    #[test]
    fn blocks_span_chunk_boundaries() {
        let mut meter = LevelMeter::new(1000, 0.01, 1.0);
        let mut blocks = Vec::new();
        for _ in 0..7 {
            meter.push(&[0.5; 3], |b| blocks.push(b));
        }
        // 21 samples make two blocks of 10; the last sample waits for the next chunk.
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[1].end_sample, 20);
        assert!((blocks[0].rms - 0.5).abs() < 1e-12);
    }

    #[test]
    fn floor_drops_at_once_and_rises_at_the_bounded_rate() {
        let mut floor = NoiseFloor::new(3.0);
        let quiet = 0.001;
        assert!((floor.update(quiet, 0.02) - quiet).abs() < 1e-12);
        // One second of a level 40 dB louder raises the floor by exactly 3 dB.
        let mut f = 0.0;
        for _ in 0..50 {
            f = floor.update(quiet * 100.0, 0.02);
        }
        let rise_db = 20.0 * (f / quiet).log10();
        assert!((rise_db - 3.0).abs() < 1e-9, "rose {rise_db} dB");
        // A quieter block resets it immediately.
        assert!((floor.update(quiet / 2.0, 0.02) - quiet / 2.0).abs() < 1e-12);
    }

    #[test]
    fn digital_silence_keeps_the_floor_finite() {
        let mut floor = NoiseFloor::new(1.0);
        let f = floor.update(0.0, 0.02);
        assert!(f.is_finite() && f > 0.0 && f < 1e-8);
    }
}
