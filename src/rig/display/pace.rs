//! When the display loop draws its next frame: at its period, or as soon as a new camera frame
//! is tracked, whichever comes first, so that the video shown is never older than the tracking
//! and one render (a fixed cadence added up to a whole period of waiting to every frame's age).

use crossbeam_channel::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Waits for the next frame and returns the instant the frame period counts from.
///
/// The wait ends at `due` (one period after the last frame), or earlier when the camera sends a
/// frame, which is kept in `pending` for the loop to show; but never before `earliest`, which
/// bounds the display's rate when the camera runs faster than the display period. A loop that is
/// behind (`due` passed) goes on at once. Without a camera (its channel disconnected) the wait is
/// the plain period.
pub fn wait_for_frame<T>(
    camera: &Receiver<T>,
    pending: &mut Option<T>,
    due: Instant,
    earliest: Instant,
) -> Instant {
    let now = Instant::now();
    if due <= now {
        return now;
    }
    if earliest > now {
        std::thread::sleep(earliest.min(due) - now);
    }
    if pending.is_some() {
        return Instant::now().min(due);
    }
    match camera.recv_deadline(due) {
        Ok(update) => {
            *pending = Some(update);
            Instant::now()
        }
        Err(RecvTimeoutError::Timeout) => due,
        Err(RecvTimeoutError::Disconnected) => {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            due
        }
    }
}

/// The earliest instant a frame that started rendering at `render_start` may be followed by the
/// next one: half a display period, so a fast camera cannot drive the display beyond twice its
/// rate.
pub fn earliest_next(render_start: Instant, frame_period: Duration) -> Instant {
    render_start + frame_period / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_camera_frame_ends_the_wait_before_the_period() {
        let (tx, rx) = crossbeam_channel::bounded(1);
        tx.send(7).unwrap();
        let start = Instant::now();
        let mut pending = None;
        // A period far longer than any scheduling delay: the frame, not the deadline, ends it.
        let due = start + Duration::from_secs(600);
        let base = wait_for_frame(&rx, &mut pending, due, start);
        assert_eq!(pending, Some(7));
        assert!(base < due);
    }

    #[test]
    fn without_a_camera_the_wait_is_the_period() {
        let (tx, rx) = crossbeam_channel::bounded::<u8>(1);
        drop(tx);
        let start = Instant::now();
        let due = start + Duration::from_millis(30);
        let mut pending = None;
        let base = wait_for_frame(&rx, &mut pending, due, start);
        assert_eq!(base, due);
        assert!(Instant::now() >= due);
        assert_eq!(pending, None);
    }

    #[test]
    fn a_frame_already_waiting_is_not_shown_before_the_earliest_instant() {
        let (tx, rx) = crossbeam_channel::bounded(1);
        tx.send(1).unwrap();
        let start = Instant::now();
        let earliest = start + Duration::from_millis(20);
        let mut pending = None;
        wait_for_frame(
            &rx,
            &mut pending,
            start + Duration::from_secs(600),
            earliest,
        );
        assert!(Instant::now() >= earliest);
        assert_eq!(pending, Some(1));
    }

    #[test]
    fn a_loop_behind_its_period_goes_on_at_once() {
        let (_tx, rx) = crossbeam_channel::bounded::<u8>(1);
        let past = Instant::now();
        let mut pending = None;
        let base = wait_for_frame(&rx, &mut pending, past, past);
        assert!(base >= past);
        assert_eq!(pending, None);
    }
}
