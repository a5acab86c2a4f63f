//! cpal capture: the default or a named input device, mixed down to mono and handed to the
//! level thread without ever blocking the audio callback.
//!
//! A cpal stream is not `Send` on every platform, so the stream lives on its own thread
//! (`mic-capture`), which opens it, reports the outcome, and keeps it playing until shutdown.

use super::cpu_time::thread_cpu_time;
use super::error::retry_may_help;
use super::worker::{AudioChunk, SourceLink, SourceMsg, StartedSource};
use super::MicError;
use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use cpal::{Sample, SampleFormat, SizedSample};
use crossbeam_channel::{Sender, TrySendError};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Finds the device: the default input, or the input whose name is `name`.
fn find_device(host: &cpal::Host, name: Option<&str>) -> Result<cpal::Device, MicError> {
    match name {
        None => host
            .default_input_device()
            .ok_or_else(|| MicError::NoInputDevice {
                host: host.id().name().to_string(),
                detail: format!("the {} host has no default input", host.id().name()),
            }),
        Some(name) => {
            let devices = host
                .input_devices()
                .map_err(|e| MicError::backend("listing input devices", e))?;
            let mut available = Vec::new();
            for d in devices {
                let n = d.to_string();
                if n == name {
                    return Ok(d);
                }
                available.push(n);
            }
            Err(MicError::DeviceNotFound {
                name: name.to_string(),
                available,
            })
        }
    }
}

/// ALSA always offers a `default` input PCM, even with no sound card behind it; opening it
/// then fails with "device not available". For the default device that means the same as
/// having none, and the caller should hear it as [`MicError::NoInputDevice`].
fn no_card_behind_default(e: MicError, host: &cpal::Host, is_default: bool) -> MicError {
    match e {
        MicError::Backend { during, source, .. }
            if is_default && source.kind() == cpal::ErrorKind::DeviceNotAvailable =>
        {
            MicError::NoInputDevice {
                host: host.id().name().to_string(),
                detail: format!(
                    "the {} host's default input cannot be opened ({during}: {source})",
                    host.id().name()
                ),
            }
        }
        other => other,
    }
}

/// Opens the device and starts `mic-capture`; returns once the stream plays or failed.
pub(crate) fn start(name: Option<&str>, link: SourceLink) -> Result<StartedSource, MicError> {
    let name = name.map(str::to_string);
    let (ready_tx, ready_rx) = crossbeam_channel::bounded(1);
    let thread = std::thread::Builder::new()
        .name("mic-capture".into())
        .spawn(move || {
            let host = cpal::default_host();
            let opened = find_device(&host, name.as_deref())
                .and_then(|device| open(&device, &link))
                .map_err(|e| no_card_behind_default(e, &host, name.is_none()));
            match opened {
                Ok((stream, rate, description)) => {
                    if ready_tx.send(Ok((rate, description))).is_err() {
                        return;
                    }
                    // Keep the stream alive until the handle drops its shutdown sender.
                    let _ = link.shutdown.recv();
                    drop(stream);
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            }
        })
        .map_err(|source| MicError::Spawn {
            thread: "mic-capture",
            source,
        })?;
    match ready_rx.recv() {
        Ok(Ok((sample_rate_hz, description))) => Ok(StartedSource {
            sample_rate_hz,
            description,
            thread,
        }),
        Ok(Err(e)) => {
            let _ = thread.join();
            Err(e)
        }
        Err(_) => {
            let _ = thread.join();
            Err(MicError::Backend {
                during: "opening the input stream",
                source: cpal::Error::with_message(
                    cpal::ErrorKind::Other,
                    "the capture thread ended before reporting",
                ),
                retry_may_help: false,
            })
        }
    }
}

fn open(device: &cpal::Device, link: &SourceLink) -> Result<(cpal::Stream, u32, String), MicError> {
    let device_name = device.to_string();
    let supported = device
        .default_input_config()
        .map_err(|e| MicError::backend("reading the default input configuration", e))?;
    let config = supported.config();
    let channels = usize::from(config.channels.max(1));
    let rate = config.sample_rate;
    let stream = match supported.sample_format() {
        SampleFormat::F32 => build::<f32>(device, &config, channels, link),
        SampleFormat::I16 => build::<i16>(device, &config, channels, link),
        SampleFormat::U16 => build::<u16>(device, &config, channels, link),
        SampleFormat::I32 => build::<i32>(device, &config, channels, link),
        SampleFormat::I8 => build::<i8>(device, &config, channels, link),
        SampleFormat::U8 => build::<u8>(device, &config, channels, link),
        SampleFormat::F64 => build::<f64>(device, &config, channels, link),
        other => {
            return Err(MicError::UnsupportedFormat {
                device: device_name,
                format: other.to_string(),
            })
        }
    }?;
    stream
        .play()
        .map_err(|e| MicError::backend("starting the input stream", e))?;
    let description = format!("{device_name} ({rate} Hz, {channels} ch)");
    Ok((stream, rate, description))
}

fn build<T>(
    device: &cpal::Device,
    config: &cpal::StreamConfig,
    channels: usize,
    link: &SourceLink,
) -> Result<cpal::Stream, MicError>
where
    T: SizedSample,
    f32: cpal::FromSample<T>,
{
    let chunks = link.chunks.clone();
    let shared = link.shared.clone();
    let errors: Sender<SourceMsg> = link.chunks.clone();
    device
        .build_input_stream::<T, _, _>(
            *config,
            move |data: &[T], _info| {
                let t_end = Instant::now();
                let cpu_start = thread_cpu_time();
                let samples: Vec<f32> = data
                    .chunks_exact(channels)
                    .map(|frame| {
                        frame.iter().map(|s| f32::from_sample(*s)).sum::<f32>() / channels as f32
                    })
                    .collect();
                // The callback must never wait: a full queue means the level thread is
                // behind, and an old chunk is worth less than a punctual callback.
                if let Err(TrySendError::Full(_)) =
                    chunks.try_send(SourceMsg::Chunk(AudioChunk { samples, t_end }))
                {
                    shared.chunks_dropped.fetch_add(1, Ordering::Relaxed);
                }
                shared.source_cpu.add_since(cpu_start);
            },
            move |e| {
                let retry = retry_may_help(&e);
                let _ = errors.try_send(SourceMsg::Failed(MicError::StreamFailed {
                    source: e,
                    retry_may_help: retry,
                }));
            },
            Some(Duration::from_secs(2)),
        )
        .map_err(|e| MicError::backend("building the input stream", e))
}
