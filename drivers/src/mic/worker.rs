//! The microphone worker: source threads feed sample chunks to the level thread, which
//! publishes [`MicLevel`]s; the handle stops and joins every thread on drop.

use super::capture;
use super::cpu_time::CpuMeter;
use super::level::LevelMeter;
use super::synthetic::{self, SyntheticMic};
use super::{MicError, MicLevel};
use crate::latest::{latest_channel, LatestReceiver, LatestSender, SendOutcome};
use crossbeam_channel::{select, Receiver, Sender};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the samples come from.
#[derive(Debug, Clone)]
pub enum MicSource {
    /// The host's default input device.
    Default,
    /// The input device with this name (as cpal displays it).
    Named(String),
    /// The synthetic microphone.
    Synthetic(SyntheticMic),
}

/// Settings of the level computation.
#[derive(Debug, Clone, PartialEq)]
pub struct MicConfig {
    /// Length of one RMS block in seconds (rounded to whole samples).
    pub block_secs: f64,
    /// Fastest rise of the noise-floor estimate, dB per second.
    pub floor_rise_db_per_sec: f64,
    /// Capacity of the [`MicLevel`] latest-value channel.
    pub level_capacity: usize,
    /// Chunks that may wait between a source and the level thread before new ones are
    /// dropped (device) or the source waits (synthetic, unpaced).
    pub chunk_capacity: usize,
}

impl Default for MicConfig {
    fn default() -> Self {
        Self {
            block_secs: 0.02,
            floor_rise_db_per_sec: 1.0,
            level_capacity: 4,
            chunk_capacity: 64,
        }
    }
}

impl MicConfig {
    fn validate(&self) -> Result<(), MicError> {
        if !(self.block_secs.is_finite() && self.block_secs > 0.0 && self.block_secs <= 1.0) {
            return Err(MicError::InvalidConfig {
                field: "block_secs",
                why: format!("{} is not in (0, 1] s", self.block_secs),
            });
        }
        if !(self.floor_rise_db_per_sec.is_finite() && self.floor_rise_db_per_sec >= 0.0) {
            return Err(MicError::InvalidConfig {
                field: "floor_rise_db_per_sec",
                why: format!(
                    "{} is not a finite non-negative rate",
                    self.floor_rise_db_per_sec
                ),
            });
        }
        Ok(())
    }
}

/// A chunk of mono samples and the instant its last sample was captured.
#[derive(Debug)]
pub(crate) struct AudioChunk {
    pub(crate) samples: Vec<f32>,
    pub(crate) t_end: Instant,
}

/// What a source sends to the level thread.
#[derive(Debug)]
pub(crate) enum SourceMsg {
    Chunk(AudioChunk),
    Failed(MicError),
}

/// State shared between the handle and its threads.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub(crate) level_cpu: CpuMeter,
    pub(crate) source_cpu: CpuMeter,
    pub(crate) chunks_dropped: AtomicU64,
    pub(crate) blocks: AtomicU64,
    pub(crate) failure: Mutex<Option<MicError>>,
}

/// Everything a source thread needs.
pub(crate) struct SourceLink {
    pub(crate) chunks: Sender<SourceMsg>,
    pub(crate) shutdown: Receiver<()>,
    pub(crate) shared: Arc<Shared>,
}

/// What a started source reports back.
pub(crate) struct StartedSource {
    pub(crate) sample_rate_hz: u32,
    pub(crate) description: String,
    pub(crate) thread: JoinHandle<()>,
}

/// CPU time used by the microphone's threads since they started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MicCpuTime {
    /// The level thread (`mic-level`).
    pub level_thread: Duration,
    /// The source: the synthetic generator thread, or the time spent inside the audio
    /// backend's capture callbacks.
    pub source: Duration,
}

/// A running microphone. Dropping it stops and joins its threads.
#[derive(Debug)]
pub struct MicWorker {
    levels: LatestReceiver<MicLevel>,
    shutdown: Option<Sender<()>>,
    threads: Vec<JoinHandle<()>>,
    shared: Arc<Shared>,
    sample_rate_hz: u32,
    block_len: usize,
    description: String,
}

impl MicWorker {
    /// Opens `source` and starts the threads. A missing sound card gives
    /// [`MicError::NoInputDevice`]; a bad WAV file or setting is reported here, not later.
    pub fn spawn(source: MicSource, config: &MicConfig) -> Result<Self, MicError> {
        config.validate()?;
        let shared = Arc::new(Shared::default());
        let (shutdown_tx, shutdown_rx) = crossbeam_channel::bounded::<()>(1);
        let (chunk_tx, chunk_rx) = crossbeam_channel::bounded(config.chunk_capacity.max(1));
        let link = SourceLink {
            chunks: chunk_tx,
            shutdown: shutdown_rx.clone(),
            shared: shared.clone(),
        };
        let started = match source {
            MicSource::Default => capture::start(None, link)?,
            MicSource::Named(name) => capture::start(Some(&name), link)?,
            MicSource::Synthetic(mic) => synthetic::start(mic, link)?,
        };
        let meter = LevelMeter::new(
            started.sample_rate_hz,
            config.block_secs,
            config.floor_rise_db_per_sec,
        );
        let block_len = meter.block_len();
        let (level_tx, level_rx) = latest_channel(config.level_capacity);
        let level_shared = shared.clone();
        let sample_rate_hz = started.sample_rate_hz;
        let level_thread = std::thread::Builder::new()
            .name("mic-level".into())
            .spawn(move || {
                level_loop(
                    meter,
                    sample_rate_hz,
                    chunk_rx,
                    shutdown_rx,
                    level_tx,
                    &level_shared,
                )
            });
        let level_thread = match level_thread {
            Ok(t) => t,
            Err(source) => {
                // Stop the source before reporting.
                drop(shutdown_tx);
                let _ = started.thread.join();
                return Err(MicError::Spawn {
                    thread: "mic-level",
                    source,
                });
            }
        };
        Ok(Self {
            levels: level_rx,
            shutdown: Some(shutdown_tx),
            threads: vec![started.thread, level_thread],
            shared,
            sample_rate_hz,
            block_len,
            description: started.description,
        })
    }

    /// The levels, one per block; the channel disconnects when the source ends (a WAV file
    /// played once) or fails ([`MicWorker::take_failure`] says why).
    pub fn levels(&self) -> LatestReceiver<MicLevel> {
        self.levels.clone()
    }

    /// Sample rate of the source in Hz.
    pub fn sample_rate_hz(&self) -> u32 {
        self.sample_rate_hz
    }

    /// Exact block duration in seconds.
    pub fn block_secs(&self) -> f64 {
        self.block_len as f64 / f64::from(self.sample_rate_hz.max(1))
    }

    /// What is being listened to, for logs and the HUD.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// CPU time used so far by the level thread and the source.
    pub fn cpu_time(&self) -> MicCpuTime {
        MicCpuTime {
            level_thread: self.shared.level_cpu.get(),
            source: self.shared.source_cpu.get(),
        }
    }

    /// Blocks measured so far.
    pub fn blocks_measured(&self) -> u64 {
        self.shared.blocks.load(Ordering::Relaxed)
    }

    /// Chunks a device delivered while the level thread was behind (dropped, never waited for).
    pub fn chunks_dropped(&self) -> u64 {
        self.shared.chunks_dropped.load(Ordering::Relaxed)
    }

    /// The error that stopped the stream, if one did (taken once).
    pub fn take_failure(&self) -> Option<MicError> {
        self.shared.failure.lock().ok().and_then(|mut f| f.take())
    }
}

impl Drop for MicWorker {
    fn drop(&mut self) {
        // A dropped sender is the shutdown signal for every thread.
        self.shutdown.take();
        for t in self.threads.drain(..) {
            if t.join().is_err() {
                log::error!("a microphone thread panicked");
            }
        }
    }
}

fn level_loop(
    mut meter: LevelMeter,
    sample_rate_hz: u32,
    chunks: Receiver<SourceMsg>,
    shutdown: Receiver<()>,
    levels: LatestSender<MicLevel>,
    shared: &Shared,
) {
    let rate = f64::from(sample_rate_hz.max(1));
    let mut samples_done: u64 = 0;
    loop {
        let msg = select! {
            recv(chunks) -> msg => msg,
            recv(shutdown) -> _ => break,
        };
        let chunk = match msg {
            Ok(SourceMsg::Chunk(c)) => c,
            Ok(SourceMsg::Failed(e)) => {
                log::error!("microphone: {e}");
                if let Ok(mut f) = shared.failure.lock() {
                    *f = Some(e);
                }
                break;
            }
            // Every source sender is gone: the source has ended.
            Err(_) => break,
        };
        samples_done += chunk.samples.len() as u64;
        let mut consumer_gone = false;
        meter.push(&chunk.samples, |b| {
            let after = samples_done - b.end_sample;
            let t = chunk
                .t_end
                .checked_sub(Duration::from_secs_f64(after as f64 / rate))
                .unwrap_or(chunk.t_end);
            shared.blocks.fetch_add(1, Ordering::Relaxed);
            let sent = levels.send(MicLevel {
                t,
                rms: b.rms,
                floor: b.floor,
            });
            consumer_gone |= sent == SendOutcome::Disconnected;
        });
        shared.level_cpu.record();
        if consumer_gone {
            break;
        }
    }
    shared.level_cpu.record();
}
