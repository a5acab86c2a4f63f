//! The arm worker: a named thread that connects (handshake, fastest baud, `CF` streaming),
//! turns every accepted packet into a [`StylusSample`] on a latest-value channel, reports
//! connection status, and reconnects with backoff when the arm goes silent or the port
//! vanishes. Dropping the [`ArmWorker`] stops and joins the thread. [`ArmWorker::counters`]
//! sums the stream counters (packets passed, rejected by reason, framing losses) over all
//! connections.

use super::codec::DataCommand;
use super::params::{ArmParams, Identity, TipCorrection};
use super::plausibility::ArmCounters;
use super::protocol::{ProtocolError, Session, AUTOSYNC_BUDGET};
use super::transport::{auto_detect, candidate_ports, PortSpec, SerialLine};
use super::StylusSample;
use crate::latest::{latest_channel, LatestReceiver, LatestSender};
use crossbeam_channel::{Receiver, Sender};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How to reach the arm and how to stream.
#[derive(Debug, Clone)]
pub struct ArmConfig {
    /// The port, or auto-detection.
    pub port: PortSpec,
    /// Rate for the autosync and handshake (every HCI arm autobauds at 9600).
    pub handshake_baud: u32,
    /// Fastest rate to switch to with `C4` after the handshake.
    pub max_baud: u32,
    /// Tip corrections applied to the kinematics.
    pub tip: TipCorrection,
    /// `CF` minimum delay between packets (~1.1 ms ticks); the line rate is the other limit.
    pub stream_delay_ticks: u16,
    /// No packet for this long means the arm stopped answering.
    pub silence_timeout: Duration,
    /// How long each autosync attempt lasts.
    pub autosync_budget: Duration,
    /// First reconnection delay; doubles per failed attempt up to `backoff_max`.
    pub backoff_initial: Duration,
    /// Longest reconnection delay.
    pub backoff_max: Duration,
    /// Samples kept for a slow consumer (the oldest are dropped).
    pub channel_capacity: usize,
}

impl Default for ArmConfig {
    fn default() -> Self {
        Self {
            port: PortSpec::Auto,
            handshake_baud: 9_600,
            max_baud: 115_200,
            tip: TipCorrection::point(),
            stream_delay_ticks: 1,
            silence_timeout: Duration::from_millis(500),
            autosync_budget: AUTOSYNC_BUDGET,
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_secs(2),
            channel_capacity: 8,
        }
    }
}

/// Connection events, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum ArmStatus {
    /// Handshake done, streaming.
    Connected {
        /// The port in use.
        port: String,
        /// The arm's identity strings.
        identity: Identity,
        /// The full parameters (kinematics as used for the samples).
        params: Box<ArmParams>,
        /// The line rate after `C4`.
        baud: u32,
    },
    /// The connection ended or an attempt failed.
    Disconnected {
        /// Why, for people.
        reason: String,
    },
    /// Waiting `delay` before attempt number `attempt`.
    Reconnecting {
        /// 1 for the first retry.
        attempt: u32,
        /// The backoff delay.
        delay: Duration,
    },
}

/// Handle of the arm worker thread.
#[derive(Debug)]
pub struct ArmWorker {
    samples: LatestReceiver<StylusSample>,
    status: Receiver<ArmStatus>,
    counters: Arc<Mutex<ArmCounters>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ArmWorker {
    /// Starts the worker thread (named `arm`).
    pub fn spawn(config: ArmConfig) -> std::io::Result<Self> {
        let (sample_tx, samples) = latest_channel(config.channel_capacity);
        let (status_tx, status) = crossbeam_channel::bounded(256);
        let stop = Arc::new(AtomicBool::new(false));
        let stop_thread = stop.clone();
        let counters = Arc::new(Mutex::new(ArmCounters::default()));
        let shared = Shared {
            sample_tx,
            status_tx,
            counters: counters.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("arm".into())
            .spawn(move || run(config, shared, stop_thread))?;
        Ok(Self {
            samples,
            status,
            counters,
            stop,
            thread: Some(thread),
        })
    }

    /// The stylus samples (latest-value semantics).
    pub fn samples(&self) -> &LatestReceiver<StylusSample> {
        &self.samples
    }

    /// Connection status events.
    pub fn status(&self) -> &Receiver<ArmStatus> {
        &self.status
    }

    /// The stream counters summed over every connection so far (up to the last packet).
    pub fn counters(&self) -> ArmCounters {
        self.counters.lock().map(|c| *c).unwrap_or_default()
    }

    /// True while the worker thread runs: it ends when stopped, when every receiver of its
    /// samples is gone, or if it panicked.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }
}

/// What the worker thread shares with its handle.
struct Shared {
    sample_tx: LatestSender<StylusSample>,
    status_tx: Sender<ArmStatus>,
    counters: Arc<Mutex<ArmCounters>>,
}

impl Drop for ArmWorker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn report(status_tx: &Sender<ArmStatus>, status: ArmStatus) {
    log::info!("arm: {status:?}");
    // A consumer that never reads status must not stall the arm.
    let _ = status_tx.try_send(status);
}

/// Opens the port, does the handshake, switches rate and starts streaming.
fn connect(config: &ArmConfig) -> Result<(Session<SerialLine>, ArmParams, String, u32), String> {
    let path = match &config.port {
        PortSpec::Path(p) => p.display().to_string(),
        PortSpec::Auto => auto_detect(
            &candidate_ports(),
            config.handshake_baud,
            Duration::from_millis(500),
        )
        .map_err(|e| e.to_string())?,
    };
    let line = SerialLine::open(&path, config.handshake_baud, Duration::from_millis(5))
        .map_err(|e| e.to_string())?;
    let mut session = Session::new(line);
    let setup = |session: &mut Session<SerialLine>| -> Result<(ArmParams, u32), ProtocolError> {
        let rate = session.autosync_rates(
            &[config.handshake_baud, config.max_baud],
            config.autosync_budget,
        )?;
        let params = session.identify(&config.tip)?;
        let baud = session.negotiate_baud(rate, config.max_baud)?;
        session.start_streaming(DataCommand::SIX_WITH_TIMER, config.stream_delay_ticks)?;
        Ok((params, baud))
    };
    let (params, baud) = setup(&mut session).map_err(|e| format!("{path}: {e}"))?;
    Ok((session, params, path, baud))
}

fn run(config: ArmConfig, shared: Shared, stop: Arc<AtomicBool>) {
    let Shared {
        sample_tx,
        status_tx,
        counters,
    } = shared;
    // Counters of finished connections.
    let mut before = ArmCounters::default();
    let mut seq = 0u64;
    let mut attempt = 0u32;
    while !stop.load(Ordering::SeqCst) {
        match connect(&config) {
            Ok((mut session, params, port, baud)) => {
                attempt = 0;
                report(
                    &status_tx,
                    ArmStatus::Connected {
                        port,
                        identity: params.identity.clone(),
                        params: Box::new(params.clone()),
                        baud,
                    },
                );
                let reason = stream(
                    &mut session,
                    &params,
                    &config,
                    (&sample_tx, &counters, &before),
                    &stop,
                    &mut seq,
                );
                let publish = |session: &Session<SerialLine>| {
                    let mut total = before;
                    total.add(&session.counters());
                    if let Ok(mut c) = counters.lock() {
                        *c = total;
                    }
                    total
                };
                if reason.is_none() {
                    let _ = session.stop_streaming();
                } else {
                    session.abandon_stream();
                }
                before = publish(&session);
                match reason {
                    None => {
                        // Leave the arm ready for the next host: streaming stopped, autobaud.
                        let _ = session.end();
                        return;
                    }
                    Some(reason) => {
                        log::info!("arm stream so far: {before}");
                        report(&status_tx, ArmStatus::Disconnected { reason })
                    }
                }
            }
            Err(reason) => report(&status_tx, ArmStatus::Disconnected { reason }),
        }
        if stop.load(Ordering::SeqCst) || sample_tx.is_disconnected() {
            return;
        }
        attempt += 1;
        let factor = 1u32 << (attempt - 1).min(16);
        let delay = config
            .backoff_initial
            .saturating_mul(factor)
            .min(config.backoff_max);
        report(&status_tx, ArmStatus::Reconnecting { attempt, delay });
        let until = Instant::now() + delay;
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Streams until stopped (`None`) or the connection fails (`Some(reason)`).
fn stream(
    session: &mut Session<SerialLine>,
    params: &ArmParams,
    config: &ArmConfig,
    (sample_tx, counters, before): (
        &LatestSender<StylusSample>,
        &Mutex<ArmCounters>,
        &ArmCounters,
    ),
    stop: &AtomicBool,
    seq: &mut u64,
) -> Option<String> {
    let mut last_packet = Instant::now();
    let mut last_published = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        let publish = |session: &Session<SerialLine>| {
            let mut total = *before;
            total.add(&session.counters());
            if let Ok(mut c) = counters.lock() {
                *c = total;
            }
        };
        if last_published.elapsed() >= Duration::from_millis(20) {
            publish(session);
            last_published = Instant::now();
        }
        match session.next_packet(Duration::from_millis(20)) {
            Ok(Some(packet)) => {
                // Counted before it is sent: a consumer never holds more than was counted.
                publish(session);
                last_packet = Instant::now();
                let sample = StylusSample::from_packet(&packet, params, last_packet, *seq);
                *seq += 1;
                if sample_tx.send(sample) == crate::latest::SendOutcome::Disconnected {
                    return None;
                }
            }
            Ok(None) => {
                if last_packet.elapsed() > config.silence_timeout {
                    return Some(format!(
                        "no data from the arm for {} ms",
                        last_packet.elapsed().as_millis()
                    ));
                }
            }
            Err(e) => return Some(e.to_string()),
        }
    }
    None
}
