//! The synthetic microphone: a complete input device that plays seeded breath bursts or a
//! WAV file in real time, through the same level thread as a real device.
//!
//! Breaths are low-pass filtered Gaussian noise (the rumble of air on a microphone capsule)
//! under a raised-cosine envelope, on top of a quiet white-noise room floor. Their start
//! times, lengths and strengths come from a seeded ChaCha generator, so a run repeats
//! exactly and [`BreathConfig::schedule`] tells a test or the rig when each breath happens.

use super::worker::{AudioChunk, SourceLink, SourceMsg, StartedSource};
use super::MicError;
use crossbeam_channel::RecvTimeoutError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the synthetic microphone paces its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// One chunk per chunk duration of wall-clock time, like a sound card.
    RealTime,
    /// As fast as the level thread takes the chunks (timestamps are then delivery times).
    Unpaced,
}

/// What the synthetic microphone plays.
#[derive(Debug, Clone)]
pub enum SyntheticSignal {
    /// Seeded breath bursts over a noise floor, forever.
    Breaths(BreathConfig),
    /// A WAV file's samples (mono mix-down).
    Wav(WavClip),
}

/// The synthetic microphone.
#[derive(Debug, Clone)]
pub struct SyntheticMic {
    /// The signal.
    pub signal: SyntheticSignal,
    /// Samples per delivered chunk, in seconds (a sound card's period; 5 ms by default).
    pub chunk_secs: f64,
    /// Real-time or unpaced delivery.
    pub pacing: Pacing,
}

impl SyntheticMic {
    /// Breath bursts with the default shape and the given seed, in real time.
    pub fn breaths(seed: u64) -> Self {
        Self::from_signal(SyntheticSignal::Breaths(BreathConfig {
            seed,
            ..BreathConfig::default()
        }))
    }

    /// Plays a WAV file once (or looped), in real time; errors name the file.
    pub fn wav(path: impl AsRef<Path>, looped: bool) -> Result<Self, MicError> {
        let mut clip = WavClip::open(path)?;
        clip.looped = looped;
        Ok(Self::from_signal(SyntheticSignal::Wav(clip)))
    }

    /// Any signal with 5 ms chunks in real time.
    pub fn from_signal(signal: SyntheticSignal) -> Self {
        Self {
            signal,
            chunk_secs: 0.005,
            pacing: Pacing::RealTime,
        }
    }

    fn sample_rate_hz(&self) -> u32 {
        match &self.signal {
            SyntheticSignal::Breaths(b) => b.sample_rate_hz,
            SyntheticSignal::Wav(w) => w.sample_rate_hz,
        }
    }
}

/// Shape and timing of synthetic breaths. Times in seconds from the start of the stream;
/// levels are RMS with full scale = 1.
#[derive(Debug, Clone, PartialEq)]
pub struct BreathConfig {
    /// Seed of every random choice.
    pub seed: u64,
    /// Sample rate in Hz.
    pub sample_rate_hz: u32,
    /// RMS of the room noise that is always there.
    pub room_rms: f64,
    /// RMS of the strongest breath at its plateau; each breath draws 60–100 % of it.
    pub breath_rms: f64,
    /// Start of the first breath.
    pub first_breath_secs: f64,
    /// Range of the pause between the end of a breath and the start of the next.
    pub gap_secs: (f64, f64),
    /// Range of a breath's length (including its rise and fall).
    pub breath_secs: (f64, f64),
    /// Duration of the raised-cosine rise and of the fall.
    pub ramp_secs: f64,
    /// Corner frequency of the breath noise's one-pole low-pass filter, Hz.
    pub breath_corner_hz: f64,
}

impl Default for BreathConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            sample_rate_hz: 16_000,
            room_rms: 0.002,
            breath_rms: 0.2,
            first_breath_secs: 1.0,
            gap_secs: (3.0, 6.0),
            breath_secs: (0.6, 1.5),
            ramp_secs: 0.1,
            breath_corner_hz: 800.0,
        }
    }
}

/// One scheduled breath.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Breath {
    /// Start, seconds from the start of the stream.
    pub start_secs: f64,
    /// Length, seconds.
    pub duration_secs: f64,
    /// Plateau RMS.
    pub rms: f64,
}

impl Breath {
    /// End, seconds from the start of the stream.
    pub fn end_secs(&self) -> f64 {
        self.start_secs + self.duration_secs
    }
}

impl BreathConfig {
    fn validate(&self) -> Result<(), MicError> {
        let bad = |field: &'static str, why: String| Err(MicError::InvalidConfig { field, why });
        if self.sample_rate_hz < 1000 {
            return bad(
                "sample_rate_hz",
                format!("{} Hz is below 1000 Hz", self.sample_rate_hz),
            );
        }
        let range_ok =
            |r: (f64, f64)| r.0.is_finite() && r.1.is_finite() && 0.0 < r.0 && r.0 <= r.1;
        if !range_ok(self.gap_secs) {
            return bad(
                "gap_secs",
                format!("{:?} is not a positive (min, max) range", self.gap_secs),
            );
        }
        if !range_ok(self.breath_secs) {
            return bad(
                "breath_secs",
                format!("{:?} is not a positive (min, max) range", self.breath_secs),
            );
        }
        for (field, v) in [
            ("room_rms", self.room_rms),
            ("breath_rms", self.breath_rms),
            ("first_breath_secs", self.first_breath_secs),
            ("ramp_secs", self.ramp_secs),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(field, format!("{v} is not a finite non-negative number"));
            }
        }
        let nyquist = f64::from(self.sample_rate_hz) / 2.0;
        if !(self.breath_corner_hz > 0.0 && self.breath_corner_hz < nyquist) {
            return bad(
                "breath_corner_hz",
                format!("{} Hz is not in (0, {nyquist}) Hz", self.breath_corner_hz),
            );
        }
        Ok(())
    }

    /// The breaths that start before `until_secs`, in order (the same ones the generator plays).
    pub fn schedule(&self, until_secs: f64) -> Vec<Breath> {
        let mut s = Schedule::new(self);
        let mut out = Vec::new();
        while s.next.start_secs < until_secs {
            out.push(s.next);
            s.advance();
        }
        out
    }

    /// A sample generator for this configuration.
    pub fn generator(&self) -> BreathGenerator {
        let dt = 1.0 / f64::from(self.sample_rate_hz.max(1));
        let a = (-2.0 * std::f64::consts::PI * self.breath_corner_hz * dt).exp();
        BreathGenerator {
            schedule: Schedule::new(self),
            // Separate streams keep the noise independent of how many breaths were drawn.
            noise: stream(self.seed, 1),
            dt,
            index: 0,
            lp_a: a,
            // A one-pole low-pass of unit white noise has variance (1-a)/(1+a).
            lp_gain: ((1.0 + a) / (1.0 - a)).sqrt(),
            lp_state: 0.0,
            room_rms: self.room_rms,
            ramp_secs: self.ramp_secs,
        }
    }
}

fn stream(seed: u64, id: u64) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(id);
    r
}

/// The seeded sequence of breaths.
#[derive(Debug, Clone)]
struct Schedule {
    rng: ChaCha8Rng,
    config: BreathConfig,
    next: Breath,
}

impl Schedule {
    fn new(config: &BreathConfig) -> Self {
        let mut rng = stream(config.seed, 0);
        let next = Self::draw(&mut rng, config, config.first_breath_secs);
        Self {
            rng,
            config: config.clone(),
            next,
        }
    }

    fn draw(rng: &mut ChaCha8Rng, c: &BreathConfig, start_secs: f64) -> Breath {
        let duration_secs = uniform(rng, c.breath_secs);
        let rms = c.breath_rms * uniform(rng, (0.6, 1.0));
        Breath {
            start_secs,
            duration_secs,
            rms,
        }
    }

    fn advance(&mut self) {
        let start = self.next.end_secs() + uniform(&mut self.rng, self.config.gap_secs);
        self.next = Self::draw(&mut self.rng, &self.config, start);
    }
}

fn uniform(rng: &mut ChaCha8Rng, (lo, hi): (f64, f64)) -> f64 {
    lo + (hi - lo) * rng.random::<f64>()
}

/// Produces breath samples one buffer at a time; the same seed gives the same samples.
#[derive(Debug, Clone)]
pub struct BreathGenerator {
    schedule: Schedule,
    noise: ChaCha8Rng,
    dt: f64,
    index: u64,
    lp_a: f64,
    lp_gain: f64,
    lp_state: f64,
    room_rms: f64,
    ramp_secs: f64,
}

impl BreathGenerator {
    /// Fills `out` with the next samples.
    pub fn fill(&mut self, out: &mut [f32]) {
        for s in out {
            let t = self.index as f64 * self.dt;
            while t >= self.schedule.next.end_secs() {
                self.schedule.advance();
            }
            let room: f64 = StandardNormal.sample(&mut self.noise);
            let white: f64 = StandardNormal.sample(&mut self.noise);
            self.lp_state = self.lp_a * self.lp_state + (1.0 - self.lp_a) * white;
            let b = &self.schedule.next;
            let env = envelope(t - b.start_secs, b.duration_secs, self.ramp_secs);
            let v = self.room_rms * room + env * b.rms * self.lp_gain * self.lp_state;
            *s = v.clamp(-1.0, 1.0) as f32;
            self.index += 1;
        }
    }
}

/// Raised-cosine rise and fall of `ramp` seconds around a plateau; 0 outside [0, len].
fn envelope(t: f64, len: f64, ramp: f64) -> f64 {
    if t < 0.0 || t > len {
        return 0.0;
    }
    let ramp = ramp.min(len / 2.0);
    if ramp <= 0.0 {
        return 1.0;
    }
    let edge = t.min(len - t);
    if edge >= ramp {
        1.0
    } else {
        0.5 - 0.5 * (std::f64::consts::PI * edge / ramp).cos()
    }
}

/// A WAV file's samples mixed down to mono, full scale = 1.
#[derive(Debug, Clone)]
pub struct WavClip {
    /// Mono samples.
    pub samples: Arc<[f32]>,
    /// Sample rate in Hz.
    pub sample_rate_hz: u32,
    /// Start again at the end instead of ending the stream.
    pub looped: bool,
    /// Where it came from, for messages.
    pub source: String,
}

impl WavClip {
    /// Reads a PCM (8–32 bit integer) or 32-bit float WAV file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, MicError> {
        let path = path.as_ref();
        let wav_err = |source| MicError::Wav {
            path: path.to_path_buf(),
            source,
        };
        let reader = hound::WavReader::open(path).map_err(wav_err)?;
        let spec = reader.spec();
        let content = |why: String| MicError::WavContent {
            path: PathBuf::from(path),
            why,
        };
        if spec.channels == 0 {
            return Err(content("the header declares 0 channels".into()));
        }
        if spec.sample_rate < 1000 {
            return Err(content(format!(
                "sample rate {} Hz is below 1000 Hz",
                spec.sample_rate
            )));
        }
        let interleaved: Vec<f32> = match spec.sample_format {
            hound::SampleFormat::Float => reader
                .into_samples::<f32>()
                .collect::<Result<_, _>>()
                .map_err(wav_err)?,
            hound::SampleFormat::Int => {
                let scale = 1.0 / (1u64 << (spec.bits_per_sample.clamp(1, 32) - 1)) as f64;
                reader
                    .into_samples::<i32>()
                    .map(|s| s.map(|v| (f64::from(v) * scale) as f32))
                    .collect::<Result<_, _>>()
                    .map_err(wav_err)?
            }
        };
        let ch = usize::from(spec.channels);
        let samples: Vec<f32> = interleaved
            .chunks_exact(ch)
            .map(|frame| frame.iter().sum::<f32>() / ch as f32)
            .collect();
        if samples.is_empty() {
            return Err(content("it holds no samples".into()));
        }
        Ok(Self {
            samples: samples.into(),
            sample_rate_hz: spec.sample_rate,
            looped: false,
            source: path.display().to_string(),
        })
    }
}

/// Starts the generator thread `mic-synthetic`.
pub(crate) fn start(mic: SyntheticMic, link: SourceLink) -> Result<StartedSource, MicError> {
    if !(mic.chunk_secs.is_finite() && mic.chunk_secs > 0.0 && mic.chunk_secs <= 0.5) {
        return Err(MicError::InvalidConfig {
            field: "chunk_secs",
            why: format!("{} is not in (0, 0.5] s", mic.chunk_secs),
        });
    }
    let sample_rate_hz = mic.sample_rate_hz();
    let description = match &mic.signal {
        SyntheticSignal::Breaths(b) => {
            b.validate()?;
            format!(
                "synthetic breaths (seed {}, {} Hz)",
                b.seed, b.sample_rate_hz
            )
        }
        SyntheticSignal::Wav(w) => format!(
            "synthetic microphone playing {} ({} Hz{})",
            w.source,
            w.sample_rate_hz,
            if w.looped { ", looped" } else { "" }
        ),
    };
    let thread = std::thread::Builder::new()
        .name("mic-synthetic".into())
        .spawn(move || run(mic, link))
        .map_err(|source| MicError::Spawn {
            thread: "mic-synthetic",
            source,
        })?;
    Ok(StartedSource {
        sample_rate_hz,
        description,
        thread,
    })
}

enum Player {
    Breaths(Box<BreathGenerator>),
    Wav { clip: WavClip, pos: usize },
}

impl Player {
    /// Fills `out`; returns how many samples were written (fewer only at the end of a clip).
    fn fill(&mut self, out: &mut [f32]) -> usize {
        match self {
            Player::Breaths(g) => {
                g.fill(out);
                out.len()
            }
            Player::Wav { clip, pos } => {
                let mut n = 0;
                while n < out.len() {
                    if *pos == clip.samples.len() {
                        if !clip.looped {
                            break;
                        }
                        *pos = 0;
                    }
                    let take = (out.len() - n).min(clip.samples.len() - *pos);
                    out[n..n + take].copy_from_slice(&clip.samples[*pos..*pos + take]);
                    n += take;
                    *pos += take;
                }
                n
            }
        }
    }
}

fn run(mic: SyntheticMic, link: SourceLink) {
    let rate = f64::from(mic.sample_rate_hz());
    let chunk_len = ((mic.chunk_secs * rate).round() as usize).max(1);
    let mut player = match mic.signal {
        SyntheticSignal::Breaths(b) => Player::Breaths(Box::new(b.generator())),
        SyntheticSignal::Wav(clip) => Player::Wav { clip, pos: 0 },
    };
    let start = Instant::now();
    let mut produced: u64 = 0;
    loop {
        let mut samples = vec![0.0f32; chunk_len];
        let n = player.fill(&mut samples);
        if n == 0 {
            break;
        }
        samples.truncate(n);
        produced += n as u64;
        match mic.pacing {
            Pacing::RealTime => {
                // A sound card hands a period over when its last sample has been recorded.
                let due = start + Duration::from_secs_f64(produced as f64 / rate);
                match link.shutdown.recv_deadline(due) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
            }
            Pacing::Unpaced => {
                if link.shutdown.try_recv() != Err(crossbeam_channel::TryRecvError::Empty) {
                    break;
                }
            }
        }
        let chunk = AudioChunk {
            samples,
            t_end: Instant::now(),
        };
        link.shared.source_cpu.record();
        if link.chunks.send(SourceMsg::Chunk(chunk)).is_err() {
            break;
        }
    }
    link.shared.source_cpu.record();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rms(x: &[f32]) -> f64 {
        (x.iter().map(|&v| f64::from(v) * f64::from(v)).sum::<f64>() / x.len() as f64).sqrt()
    }

    #[test]
    fn same_seed_same_samples_other_seed_other_samples() {
        let cfg = BreathConfig::default();
        let mut a = vec![0.0; 20_000];
        let mut b = vec![0.0; 20_000];
        cfg.generator().fill(&mut a);
        let mut g = cfg.generator();
        // Filling in odd-sized pieces must not change the stream.
        for piece in b.chunks_mut(333) {
            g.fill(piece);
        }
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        let mut c = vec![0.0; 20_000];
        BreathConfig { seed: 1, ..cfg }.generator().fill(&mut c);
        assert!(a.iter().zip(&c).any(|(x, y)| x != y));
    }

    #[test]
    fn breaths_are_loud_where_the_schedule_says_and_quiet_elsewhere() {
        let cfg = BreathConfig::default();
        let rate = f64::from(cfg.sample_rate_hz);
        let secs = 20.0;
        let mut x = vec![0.0; (secs * rate) as usize];
        cfg.generator().fill(&mut x);
        let breaths = cfg.schedule(secs);
        assert!(breaths.len() >= 2, "{breaths:?}");
        assert!((breaths[0].start_secs - cfg.first_breath_secs).abs() < 1e-12);
        for w in breaths.windows(2) {
            let gap = w[1].start_secs - w[0].end_secs();
            assert!(gap >= cfg.gap_secs.0 && gap <= cfg.gap_secs.1, "gap {gap}");
        }
        let at = |t0: f64, t1: f64| rms(&x[(t0 * rate) as usize..(t1 * rate) as usize]);
        for b in &breaths {
            if b.end_secs() > secs {
                continue;
            }
            // The plateau's RMS matches the breath's level within 15 % (0.2 s of noise).
            let mid = b.start_secs + b.duration_secs / 2.0;
            let measured = at(mid - 0.1, mid + 0.1);
            assert!(
                (measured / b.rms - 1.0).abs() < 0.15,
                "{measured} vs {}",
                b.rms
            );
            // Just before it, only the room is heard.
            let quiet = at(b.start_secs - 0.3, b.start_secs - 0.05);
            assert!((quiet / cfg.room_rms - 1.0).abs() < 0.1, "room {quiet}");
        }
    }

    #[test]
    fn envelope_rises_and_falls_smoothly() {
        assert_eq!(envelope(-0.01, 1.0, 0.1), 0.0);
        assert_eq!(envelope(1.01, 1.0, 0.1), 0.0);
        assert!((envelope(0.05, 1.0, 0.1) - 0.5).abs() < 1e-12);
        assert_eq!(envelope(0.5, 1.0, 0.1), 1.0);
        assert!((envelope(0.95, 1.0, 0.1) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn bad_breath_settings_are_named() {
        let cfg = BreathConfig {
            gap_secs: (2.0, 1.0),
            ..BreathConfig::default()
        };
        let e = cfg.validate().expect_err("inverted range");
        assert!(e.to_string().contains("gap_secs"), "{e}");
    }
}
