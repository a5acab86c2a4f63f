//! Microphone worker tests on the synthetic microphone and on this machine's (absent) sound
//! card: levels through the real worker path, WAV playback, the no-device outcome, errors.

use ar_drivers::mic::{
    BreathConfig, MicConfig, MicError, MicLevel, MicSource, MicWorker, Pacing, SyntheticMic,
    SyntheticSignal, WavClip,
};
use std::time::Duration;

fn write_wav(path: &std::path::Path, rate: u32, channels: u16, frames: &[f32]) {
    let spec = hound::WavSpec {
        channels,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).expect("create wav");
    for &s in frames {
        for _ in 0..channels {
            w.write_sample((s * 32767.0).round() as i16)
                .expect("write sample");
        }
    }
    w.finalize().expect("finalize wav");
}

/// True when the kernel shows no sound card (no ALSA card list, or an empty one).
fn machine_has_no_sound_card() -> bool {
    std::fs::read_to_string("/proc/asound/cards").map_or(true, |s| s.contains("no soundcards"))
}

#[test]
fn missing_sound_card_is_a_typed_outcome_not_a_crash() {
    match MicWorker::spawn(MicSource::Default, &MicConfig::default()) {
        Err(e) => {
            assert!(e.is_no_device(), "expected NoInputDevice, got {e:?}");
            assert!(e.to_string().contains("no audio input device"), "{e}");
            assert!(e.to_string().contains("without wind"), "{e}");
        }
        Ok(mic) => assert!(
            !machine_has_no_sound_card(),
            "opened '{}' on a machine without a sound card",
            mic.description()
        ),
    }
}

#[test]
fn unknown_device_name_lists_what_exists() {
    let e = MicWorker::spawn(
        MicSource::Named("no-such-microphone-3f9".into()),
        &MicConfig::default(),
    )
    .expect_err("no device has that name");
    assert!(matches!(e, MicError::DeviceNotFound { .. }), "{e:?}");
    assert!(e.to_string().contains("no-such-microphone-3f9"), "{e}");
    assert!(e.to_string().contains("available inputs"), "{e}");
}

#[test]
fn breath_bursts_raise_the_level_above_the_floor_in_real_time() {
    let breaths = BreathConfig {
        seed: 3,
        first_breath_secs: 0.5,
        breath_secs: (0.6, 0.6),
        gap_secs: (10.0, 10.0),
        ..BreathConfig::default()
    };
    let schedule = breaths.schedule(2.0);
    assert_eq!(schedule.len(), 1);
    let mic = MicWorker::spawn(
        MicSource::Synthetic(SyntheticMic::from_signal(SyntheticSignal::Breaths(
            breaths.clone(),
        ))),
        &MicConfig {
            level_capacity: 256,
            ..MicConfig::default()
        },
    )
    .expect("synthetic microphone starts");
    assert_eq!(mic.sample_rate_hz(), 16_000);
    assert!((mic.block_secs() - 0.02).abs() < 1e-12);
    let levels = mic.levels();
    let mut got: Vec<MicLevel> = Vec::new();
    while got.len() < 75 {
        got.push(
            levels
                .recv_timeout(Duration::from_secs(2))
                .expect("a level per block"),
        );
    }
    // Blocks are 20 ms apart in capture time.
    let first = got[0].t;
    for (k, w) in got.windows(2).enumerate() {
        let dt = (w[1].t - w[0].t).as_secs_f64();
        assert!((dt - 0.02).abs() < 0.015, "block {k}: {dt} s apart");
    }
    let at = |secs: f64| {
        got.iter()
            .min_by_key(|l| ((l.t - first).as_secs_f64() + 0.02 - secs).abs().to_bits())
            .copied()
            .expect("levels")
    };
    let quiet = at(0.3);
    let loud = at(0.8);
    assert!(quiet.above_floor() < 0.002, "before the breath: {quiet:?}");
    assert!(
        loud.above_floor() > 0.5 * schedule[0].rms,
        "during the breath: {loud:?}"
    );
    // The floor stays at the room level through the breath.
    assert!(
        loud.floor < 3.0 * breaths.room_rms,
        "floor rose to {}",
        loud.floor
    );
    assert!(mic.blocks_measured() >= 75);
    let cpu = mic.cpu_time();
    assert!(
        cpu.level_thread > Duration::ZERO && cpu.source > Duration::ZERO,
        "{cpu:?}"
    );
    drop(levels);
    drop(mic); // joins the threads; the test would hang here if they did not stop
}

#[test]
fn wav_file_plays_once_through_the_worker_and_then_disconnects() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("tone.wav");
    let rate = 8000;
    // 0.5 s of a 0.5-amplitude 400 Hz tone in stereo: 25 blocks of 20 ms, RMS 0.5/√2.
    let tone: Vec<f32> = (0..rate / 2)
        .map(|i| 0.5 * (2.0 * std::f32::consts::PI * 400.0 * i as f32 / rate as f32).sin())
        .collect();
    write_wav(&path, rate, 2, &tone);
    let mut mic = SyntheticMic::wav(&path, false).expect("valid wav");
    mic.pacing = Pacing::Unpaced;
    let worker = MicWorker::spawn(
        MicSource::Synthetic(mic),
        &MicConfig {
            level_capacity: 64,
            ..MicConfig::default()
        },
    )
    .expect("starts");
    let levels = worker.levels();
    let got: Vec<MicLevel> =
        std::iter::from_fn(|| levels.recv_timeout(Duration::from_secs(5)).ok()).collect();
    assert_eq!(
        got.len(),
        25,
        "one level per 20 ms block, then the end of the file"
    );
    for l in &got {
        assert!((l.rms - 0.5 / 2f64.sqrt()).abs() < 1e-3, "{l:?}");
    }
    assert!(worker.take_failure().is_none());
}

#[test]
fn bad_wav_files_are_reported_with_their_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.wav");
    let e = WavClip::open(&missing).expect_err("missing file");
    assert!(e.to_string().contains("missing.wav"), "{e}");

    let garbage = dir.path().join("garbage.wav");
    std::fs::write(&garbage, b"RIFF\x10\0\0\0WAVEjunkjunkjunk").expect("write");
    let e = WavClip::open(&garbage).expect_err("not a wav");
    assert!(matches!(e, MicError::Wav { .. }), "{e:?}");
    assert!(e.to_string().contains("garbage.wav"), "{e}");

    let empty = dir.path().join("empty.wav");
    write_wav(&empty, 8000, 1, &[]);
    let e = WavClip::open(&empty).expect_err("no samples");
    assert!(e.to_string().contains("no samples"), "{e}");
}

#[test]
fn bad_settings_are_refused_before_any_thread_starts() {
    let e = MicWorker::spawn(
        MicSource::Synthetic(SyntheticMic::breaths(1)),
        &MicConfig {
            block_secs: 0.0,
            ..MicConfig::default()
        },
    )
    .expect_err("zero block");
    assert!(e.to_string().contains("block_secs"), "{e}");
    let mut mic = SyntheticMic::breaths(1);
    mic.chunk_secs = f64::NAN;
    let e =
        MicWorker::spawn(MicSource::Synthetic(mic), &MicConfig::default()).expect_err("NaN chunk");
    assert!(e.to_string().contains("chunk_secs"), "{e}");
}

#[test]
fn dropping_the_worker_while_levels_flow_stops_it() {
    let mic = MicWorker::spawn(
        MicSource::Synthetic(SyntheticMic::breaths(9)),
        &MicConfig::default(),
    )
    .expect("starts");
    let levels = mic.levels();
    levels
        .recv_timeout(Duration::from_secs(2))
        .expect("a level");
    drop(mic);
    // The level thread is gone: the channel drains and disconnects.
    while levels.recv_timeout(Duration::from_secs(2)).is_ok() {}
    assert!(levels.recv_timeout(Duration::from_millis(10)).is_err());
}
