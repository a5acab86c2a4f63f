//! The device threads: camera + tracking, microphone. Each pulls from its device and pushes
//! into a latest-value channel, so a slow consumer never blocks it. A disconnect is reported
//! and retried; a fatal device error stops the rig with its message. (The arm has no thread of
//! the rig's: the driver's own thread feeds the solver thread, see
//! [`crate::rig::devices::arm`].)

use super::messages::{CameraUpdate, MicLevel};
use super::worker::{report, StopFlag, Worker, WorkerError, WorkerReport};
use crate::rig::devices::{CameraTracker, DeviceError, MicDevice};
use ar_drivers::latest::{LatestSender, SendOutcome};
use crossbeam_channel::Sender;
use std::time::Duration;

/// Pause before retrying a disconnected device.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// The common loop: `next` until stopped; values go to `deliver` (which returns false once
/// the consumer is gone).
fn device_loop<T>(
    name: &str,
    stop: &StopFlag,
    reports: &Sender<WorkerReport>,
    mut next: impl FnMut() -> Result<T, DeviceError>,
    mut deliver: impl FnMut(T) -> bool,
) {
    let mut connected = true;
    while !stop.is_stopped() {
        match next() {
            Ok(v) => {
                if !connected {
                    report(
                        reports,
                        WorkerReport::Event {
                            worker: name.to_owned(),
                            message: "reconnected".into(),
                        },
                    );
                    connected = true;
                }
                if !deliver(v) {
                    return;
                }
            }
            Err(DeviceError::Timeout) => {}
            Err(DeviceError::Disconnected(why)) => {
                if connected {
                    report(
                        reports,
                        WorkerReport::Event {
                            worker: name.to_owned(),
                            message: format!("disconnected: {why}"),
                        },
                    );
                    connected = false;
                }
                std::thread::sleep(RETRY_PAUSE);
            }
            Err(DeviceError::Fatal(message)) => {
                report(
                    reports,
                    WorkerReport::Fatal {
                        worker: name.to_owned(),
                        message,
                    },
                );
                stop.stop();
                return;
            }
        }
    }
}

fn alive(outcome: SendOutcome) -> bool {
    outcome != SendOutcome::Disconnected
}

/// Starts the camera + tracking thread ("camera").
pub fn spawn_camera(
    mut device: Box<dyn CameraTracker>,
    tx: LatestSender<CameraUpdate>,
    reports: Sender<WorkerReport>,
    stop: StopFlag,
) -> Result<Worker<()>, WorkerError> {
    Worker::spawn("camera", stop, move |stop| {
        device_loop(
            "camera",
            &stop,
            &reports,
            || device.next_update(),
            |u| alive(tx.send(u)),
        )
    })
}

/// Starts the microphone thread ("mic").
pub fn spawn_mic(
    mut device: Box<dyn MicDevice>,
    tx: LatestSender<MicLevel>,
    reports: Sender<WorkerReport>,
    stop: StopFlag,
) -> Result<Worker<()>, WorkerError> {
    Worker::spawn("mic", stop, move |stop| {
        device_loop(
            "mic",
            &stop,
            &reports,
            || device.next_level(),
            |l| alive(tx.send(l)),
        )
    })
}
