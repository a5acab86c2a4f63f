//! `calibrate camera`: camera intrinsics from chessboard views in a folder of images or from a
//! live camera, written as a camera file (TOML).

use anyhow::{bail, Context};
use ar_calibration::camera_calibration::{
    calibrate, detect_board, view_signature, BoardSpec, BoardView, CalibrationOptions,
};
use ar_drivers::camera::{CameraSource, CaptureRequest, CaptureTarget, OpenCvCamera};
use clap::{ArgGroup, Args};
use opencv::prelude::*;
use std::path::{Path, PathBuf};

/// Arguments of `calibrate camera`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("source").required(true).args(["device", "images"])))]
pub struct CalibrateCameraArgs {
    /// Live camera: an index (0) or a device path (/dev/video2); views are taken automatically
    /// whenever the board is seen at a new place or tilt.
    #[arg(long, value_name = "N|PATH")]
    device: Option<String>,
    /// A folder of images of the board (png, jpg, bmp, tif).
    #[arg(long, value_name = "DIR")]
    images: Option<PathBuf>,
    /// The board: chessboard:COLSxROWS:SQUARE_M (inner corners, metres).
    #[arg(long, default_value = "chessboard:9x6:0.025")]
    board: String,
    /// Where to write the camera file.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Distinct views to collect from a live camera.
    #[arg(long, default_value_t = 20)]
    views: usize,
    /// Size requested of a live camera, WIDTHxHEIGHT.
    #[arg(long, value_name = "WxH")]
    size: Option<String>,
}

const IMAGE_EXTENSIONS: [&str; 6] = ["png", "jpg", "jpeg", "bmp", "tif", "tiff"];

/// Runs the command.
pub fn run(args: CalibrateCameraArgs) -> anyhow::Result<()> {
    let spec = BoardSpec::parse(&args.board)?;
    let options = CalibrationOptions::default();
    let images = args.images.as_deref().map(image_files).transpose()?;
    check_out(&args, images.as_deref().unwrap_or_default())?;
    let (views, size) = match (&images, &args.device) {
        (Some(files), _) => views_from_files(files, &spec)?,
        (_, Some(dev)) => views_from_device(dev, &spec, &args, &options)?,
        _ => bail!("give --images DIR or --device N"),
    };
    let cal = calibrate(&views, &spec, size, &options)?;
    cal.intrinsics.save(&args.out)?;
    let i = &cal.intrinsics;
    println!(
        "calibrated from {} views of {}x{}: fx {:.2} fy {:.2} cx {:.2} cy {:.2} (std {:.2} {:.2} {:.2} {:.2} px)",
        cal.views, size.0, size.1, i.fx, i.fy, i.cx, i.cy, cal.std_px[0], cal.std_px[1], cal.std_px[2], cal.std_px[3]
    );
    println!(
        "dist [k1 k2 p1 p2 k3] = [{:.5}, {:.5}, {:.5}, {:.5}, {:.5}]; RMS reprojection error {:.3} px",
        i.dist[0],
        i.dist[1],
        i.dist[2],
        i.dist[3],
        i.dist[4],
        i.rms_px.unwrap_or(f64::NAN)
    );
    println!("wrote {}", args.out.display());
    Ok(())
}

/// Refuses, before any view is taken, an `--out` that is one of the inputs (an image of the
/// folder, the device) or that cannot be written (a FIFO, a device, a missing folder): a
/// live calibration takes minutes of the user's time.
fn check_out(args: &CalibrateCameraArgs, images: &[PathBuf]) -> anyhow::Result<()> {
    let device = args
        .device
        .as_deref()
        .filter(|d| d.parse::<u32>().is_err())
        .map(Path::new);
    let mut inputs: Vec<(&str, &Path)> = device.map(|d| ("--device", d)).into_iter().collect();
    inputs.extend(images.iter().map(|f| ("--images image", f.as_path())));
    ar_io::output_target::check_distinct(&inputs, &[("--out", &args.out)])?;
    ar_io::output_target::check_output_path(&args.out)
        .with_context(|| format!("--out {}", args.out.display()))
}

/// The images of the folder `dir`, sorted by name.
fn image_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("image folder {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!(
            "image folder {}: holds no images ({})",
            dir.display(),
            IMAGE_EXTENSIONS.join(", ")
        );
    }
    Ok(files)
}

fn views_from_files(
    files: &[PathBuf],
    spec: &BoardSpec,
) -> anyhow::Result<(Vec<BoardView>, (u32, u32))> {
    let mut views = Vec::new();
    let mut size: Option<(u32, u32)> = None;
    for f in files {
        let img = opencv::imgcodecs::imread(
            f.to_string_lossy().as_ref(),
            opencv::imgcodecs::IMREAD_COLOR,
        )
        .ok()
        .filter(|m| !m.empty())
        .with_context(|| format!("{}: not a readable image", f.display()))?;
        let s = (img.cols() as u32, img.rows() as u32);
        match size {
            None => size = Some(s),
            Some(expected) if expected != s => bail!(
                "{}: image is {}x{}, the others are {}x{}",
                f.display(),
                s.0,
                s.1,
                expected.0,
                expected.1
            ),
            _ => {}
        }
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match detect_board(&img, spec, &name)? {
            Some(v) => {
                println!("{name}: board found");
                views.push(v);
            }
            None => println!("{name}: board not found (whole board must be visible)"),
        }
    }
    Ok((views, size.unwrap_or((0, 0))))
}

fn views_from_device(
    dev: &str,
    spec: &BoardSpec,
    args: &CalibrateCameraArgs,
    options: &CalibrationOptions,
) -> anyhow::Result<(Vec<BoardView>, (u32, u32))> {
    let size = match &args.size {
        Some(s) => {
            let (w, h) = s
                .split_once(['x', 'X'])
                .context("--size: expected WIDTHxHEIGHT")?;
            Some((
                w.parse().context("--size width")?,
                h.parse().context("--size height")?,
            ))
        }
        None => None,
    };
    let mut cam = OpenCvCamera::open(
        CaptureTarget::Device(dev.to_owned()),
        CaptureRequest { size, fps: None },
    )?;
    eprintln!("{}", cam.describe());
    let actual = cam.actual();
    let image_size = (actual.width, actual.height);
    let mut views: Vec<BoardView> = Vec::new();
    let mut sigs: Vec<[f64; 5]> = Vec::new();
    println!(
        "show the board at different places, distances and tilts; {} views needed",
        args.views
    );
    while views.len() < args.views {
        let Some(frame) = cam.next_frame()? else {
            break;
        };
        let Some(v) = detect_board(&frame.image, spec, &format!("frame {}", frame.seq))? else {
            continue;
        };
        let s = view_signature(&v, spec, image_size);
        let alike = sigs.iter().any(|d| {
            d.iter()
                .zip(&s)
                .all(|(a, b)| (a - b).abs() < options.alike_threshold)
        });
        if !alike {
            sigs.push(s);
            views.push(v);
            println!("view {}/{} taken", views.len(), args.views);
        }
    }
    Ok((views, image_size))
}
