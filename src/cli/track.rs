//! `track`: finds the printed marker in a camera stream, writes the per-frame pose to CSV and
//! prints a summary (detection rate, timing, and accuracy when the ground truth is known: the
//! synthetic camera's own, or a `--truth` CSV written by `--record`). Ctrl-C or SIGTERM ends
//! a live run cleanly: the CSV rows, the recording and the summary are kept (exit 130 for
//! Ctrl-C, 143 for SIGTERM).

use anyhow::{bail, Context};
use ar_calibration::intrinsics::CameraIntrinsics;
use ar_drivers::camera::{
    CameraPath, CameraSource, CaptureRequest, CaptureTarget, OpenCvCamera, Pacing, SyntheticCamera,
    SyntheticConfig, VideoRecorder,
};
use ar_io::csv_write::CsvWriter;
use ar_multibody::tracking::accuracy::quantile;
use ar_multibody::tracking::pose_csv::{
    read_truth, write_track_row, TruthWriter, TRACK_CSV_HEADER,
};
use ar_multibody::tracking::{
    AccuracyStats, Dictionary, GridBoardConfig, MarkerObservation, MarkerTracker, OneEuroConfig,
    TrackerConfig,
};
use clap::{ArgGroup, Args};
use opencv::prelude::*;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Arguments of `track`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("source").required(true).args(["device", "video", "images", "synthetic"])))]
pub struct TrackArgs {
    /// Live camera: an index (0) or a device path (/dev/video2).
    #[arg(long, value_name = "N|PATH")]
    device: Option<String>,
    /// A video file.
    #[arg(long, value_name = "FILE")]
    video: Option<PathBuf>,
    /// A folder of images, in file-name order.
    #[arg(long, value_name = "DIR")]
    images: Option<PathBuf>,
    /// The synthetic camera (the printed marker rendered along a hand-held path, with truth).
    #[arg(long)]
    synthetic: bool,
    /// Camera file (TOML intrinsics), e.g. assets/cameras/synthetic_640x480.toml.
    #[arg(long, value_name = "FILE")]
    camera: PathBuf,
    /// Side of the marker's black square, metres.
    #[arg(long, value_name = "M", default_value_t = ar_drivers::camera::PRINTED_MARKER_SIDE_M)]
    marker_length: f64,
    /// ArUco dictionary.
    #[arg(long, default_value = "4X4_50")]
    dictionary: String,
    /// Marker id that defines the world.
    #[arg(long, default_value_t = 0)]
    id: i32,
    /// Track a grid board instead: COLSxROWS:MARKER_M:SEPARATION_M[:FIRST_ID].
    #[arg(long, value_name = "SPEC")]
    board: Option<String>,
    /// Write one line per frame: frame,t_s,detected,tx,ty,tz,rx,ry,rz,reproj_px,detect_ms.
    #[arg(long, value_name = "OUT.csv")]
    csv: Option<PathBuf>,
    /// Stop after this many frames (the synthetic camera defaults to 300).
    #[arg(long)]
    frames: Option<u64>,
    /// Ground-truth CSV (frame,t_s,tx,ty,tz,rx,ry,rz) to compare with, e.g. from --record.
    #[arg(long, value_name = "FILE")]
    truth: Option<PathBuf>,
    /// Also write the frames to this MJPG AVI (and, when the truth is known, FILE.truth.csv).
    #[arg(long, value_name = "FILE.avi")]
    record: Option<PathBuf>,
    /// Seed of the synthetic camera's path, desk and noise.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Frame rate: the synthetic camera's, or the one requested of a device.
    #[arg(long)]
    fps: Option<f64>,
    /// Size requested of a device, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH")]
    size: Option<String>,
    /// Synthetic sensor noise, standard deviation in 8-bit levels.
    #[arg(long, default_value_t = 2.0)]
    noise: f64,
    /// Synthetic optical blur, standard deviation in pixels.
    #[arg(long, default_value_t = 0.6)]
    blur: f64,
    /// Run the synthetic camera at its frame rate instead of as fast as possible.
    #[arg(long)]
    realtime: bool,
    /// Report one-euro smoothed poses (CSV and accuracy) instead of the raw per-frame ones.
    #[arg(long)]
    smooth: bool,
    /// Print one line per frame.
    #[arg(long)]
    print: bool,
}

fn parse_board(spec: &str) -> anyhow::Result<GridBoardConfig> {
    let bad = || {
        anyhow::anyhow!(
            "--board `{spec}`: expected COLSxROWS:MARKER_M:SEPARATION_M[:FIRST_ID], e.g. 3x2:0.04:0.01"
        )
    };
    let parts: Vec<&str> = spec.split(':').collect();
    if !(3..=4).contains(&parts.len()) {
        return Err(bad());
    }
    let (c, r) = parts[0].split_once(['x', 'X']).ok_or_else(bad)?;
    Ok(GridBoardConfig {
        markers_x: c.parse().map_err(|_| bad())?,
        markers_y: r.parse().map_err(|_| bad())?,
        marker_length_m: parts[1].parse().map_err(|_| bad())?,
        separation_m: parts[2].parse().map_err(|_| bad())?,
        first_id: match parts.get(3) {
            Some(s) => s.parse().map_err(|_| bad())?,
            None => 0,
        },
    })
}

fn parse_size(spec: &str) -> anyhow::Result<(u32, u32)> {
    let (w, h) = spec.split_once(['x', 'X']).context(format!(
        "--size `{spec}`: expected WIDTHxHEIGHT, e.g. 640x480"
    ))?;
    Ok((
        w.parse().context(format!("--size `{spec}`: bad width"))?,
        h.parse().context(format!("--size `{spec}`: bad height"))?,
    ))
}

/// Runs the command.
pub fn run(args: TrackArgs) -> anyhow::Result<()> {
    let intrinsics = CameraIntrinsics::load(&args.camera)?;
    let dictionary = Dictionary::from_name(&args.dictionary).map_err(anyhow::Error::msg)?;
    let board = args.board.as_deref().map(parse_board).transpose()?;
    let config = TrackerConfig {
        dictionary,
        marker_id: args.id,
        marker_length_m: args.marker_length,
        board,
        smoothing: args.smooth.then(OneEuroConfig::default),
        ..TrackerConfig::default()
    };
    let mut tracker = MarkerTracker::new(config, &intrinsics)?;

    let mut source: Box<dyn CameraSource> = if args.synthetic {
        let cfg = SyntheticConfig {
            path: CameraPath::hand_held(args.seed),
            fps: args.fps.unwrap_or(30.0),
            pacing: if args.realtime {
                Pacing::RealTime
            } else {
                Pacing::AsFastAsPossible
            },
            frames: Some(args.frames.unwrap_or(300)),
            marker_length_m: args.marker_length,
            blur_sigma_px: args.blur,
            noise_sigma_levels: args.noise,
            ..SyntheticConfig::default()
        };
        Box::new(SyntheticCamera::new(&intrinsics, cfg, args.seed)?)
    } else {
        let target = match (&args.device, &args.video, &args.images) {
            (Some(d), _, _) => CaptureTarget::Device(d.clone()),
            (_, Some(v), _) => CaptureTarget::Video(v.clone()),
            (_, _, Some(i)) => CaptureTarget::Folder(i.clone()),
            _ => bail!("no camera source given"),
        };
        let request = CaptureRequest {
            size: args.size.as_deref().map(parse_size).transpose()?,
            fps: args.fps,
        };
        Box::new(OpenCvCamera::open(target, request)?)
    };
    eprintln!("source: {}", source.describe());

    let truth_file = args.truth.as_deref().map(read_truth).transpose()?;
    let mut csv = match &args.csv {
        Some(p) => {
            let f = ar_io::safe_open::create_stream(p)
                .with_context(|| format!("creating {}", p.display()))?;
            let mut w = CsvWriter::new(f);
            w.write_fields(TRACK_CSV_HEADER)
                .with_context(|| format!("writing {}", p.display()))?;
            Some((p, w))
        }
        None => None,
    };
    let mut recorder: Option<(VideoRecorder, Option<TruthWriter>)> = None;

    let mut stats = AccuracyStats::default();
    let mut has_truth = false;
    let mut detect_ms = Vec::new();
    let mut frames = 0u64;
    let mut detected = 0u64;
    let mut t0: Option<Instant> = None;
    let limit = args.frames.unwrap_or(u64::MAX);
    // A source that fails part-way (a damaged video, a lost device) ends the loop; the rows
    // and the recording so far are kept and the summary printed before the error is.
    let mut source_error = None;
    // Ctrl-C and SIGTERM end a live run like the end of a video: rows, recording and
    // summary are kept (the AVI gets its index, so it plays).
    let interrupted = Arc::new(AtomicBool::new(false));
    let interrupts = super::interrupt::Interrupts::setting(&interrupted)?;
    // --print writes a line per frame to the same terminal: no bar then.
    let progress = if args.print {
        indicatif::ProgressBar::hidden()
    } else {
        super::progress::bar(Some(limit).filter(|&n| n < u64::MAX), "frames")
    };
    while frames < limit && !interrupted.load(Ordering::SeqCst) {
        let frame = match source.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(e) if frames > 0 => {
                source_error = Some(e);
                break;
            }
            Err(e) => return Err(e.into()),
        };
        let t_s = frame
            .t
            .saturating_duration_since(*t0.get_or_insert(frame.t))
            .as_secs_f64();
        if let Some(path) = &args.record {
            if recorder.is_none() {
                let fps = args.fps.unwrap_or(30.0);
                let v = VideoRecorder::create(
                    path,
                    frame.image.cols() as u32,
                    frame.image.rows() as u32,
                    fps,
                )?;
                let t = match frame.camera_from_world_truth {
                    Some(_) => Some(TruthWriter::create(&path.with_extension("truth.csv"))?),
                    None => None,
                };
                recorder = Some((v, t));
            }
            if let Some((v, t)) = recorder.as_mut() {
                v.write(&frame.image)?;
                if let (Some(t), Some(truth)) = (t.as_mut(), frame.camera_from_world_truth.as_ref())
                {
                    t.write(frame.seq, t_s, truth)?;
                }
            }
        }
        let start = Instant::now();
        let obs = tracker.process(&frame)?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        detect_ms.push(ms);
        frames += 1;
        progress.set_position(frames);
        let pose = obs.detected().map(|p| {
            let cfw = if args.smooth {
                p.camera_from_world
            } else {
                p.camera_from_world_raw
            };
            (cfw, p.reprojection_error_px)
        });
        if pose.is_some() {
            detected += 1;
        }
        let truth = frame
            .camera_from_world_truth
            .or_else(|| truth_file.as_ref().and_then(|t| t.get(&frame.seq).copied()));
        if let Some(truth) = truth {
            has_truth = true;
            stats.add(pose.as_ref().map(|(p, _)| p), &truth);
        }
        if let Some((path, w)) = csv.as_mut() {
            let pose = pose.as_ref().map(|(p, e)| (p, *e));
            write_track_row(w, frame.seq, t_s, pose, ms)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        if args.print {
            match (&obs, &pose) {
                (_, Some((p, e))) => {
                    let t = p.translation.vector * 1e3;
                    println!(
                        "frame {}: detected  t = ({:.1}, {:.1}, {:.1}) mm  reprojection {e:.3} px",
                        frame.seq, t.x, t.y, t.z
                    );
                }
                (MarkerObservation::Held { age_secs, .. }, None) => println!(
                    "frame {}: not detected (holding the pose of {:.0} ms ago)",
                    frame.seq,
                    age_secs * 1e3
                ),
                _ => println!("frame {}: not detected", frame.seq),
            }
        }
    }
    progress.finish_and_clear();
    if let Some((path, mut w)) = csv {
        w.flush()
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some((v, t)) = recorder {
        let n = v.frames();
        v.finish()?;
        let path = args
            .record
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        match t {
            Some(t) => {
                t.finish()?;
                println!(
                    "recorded {n} frames to {path} (ground truth in {})",
                    args.record
                        .as_ref()
                        .map(|p| p.with_extension("truth.csv").display().to_string())
                        .unwrap_or_default()
                );
            }
            None => println!("recorded {n} frames to {path}"),
        }
    }
    if frames == 0 {
        bail!("the source delivered no frames");
    }
    let median_ms = quantile(&mut detect_ms, 0.5);
    println!(
        "frames {frames}, detected {detected} ({:.2} %), detection + pose median {median_ms:.2} ms/frame",
        100.0 * detected as f64 / frames as f64
    );
    if detected == 0 {
        println!("marker not detected in any frame");
    }
    if has_truth {
        if let Some(s) = stats.summary() {
            println!("accuracy against ground truth: {s}");
        }
    }
    if interrupted.load(Ordering::SeqCst) {
        std::io::stdout().flush()?;
        eprintln!("interrupted after {frames} frames; their rows and recording are kept");
        interrupts.exit_if_received();
    }
    match source_error {
        Some(e) => Err(anyhow::Error::new(e).context(format!(
            "the source failed after {frames} frames (their rows are kept)"
        ))),
        None => Ok(()),
    }
}
