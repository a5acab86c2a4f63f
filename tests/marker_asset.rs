//! The shipped marker measures what it says (issue 19, acceptance 5): the PNG printed at the
//! resolution its pHYs chunk states, and the SVG at its stated millimetres, give a black
//! square of the side the demo, the tracker and the README use. Measured here from the files'
//! bytes and pixels, not from the generator's constants.

use std::path::Path;

use ar_drivers::camera::PRINTED_MARKER_SIDE_M;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The PNG's pixels per metre (its pHYs chunk, unit 1 = metre), x and y.
fn png_pixels_per_metre(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        if kind == b"pHYs" {
            assert_eq!(data[8], 1, "pHYs unit must be the metre");
            let x = u32::from_be_bytes(data[0..4].try_into().unwrap());
            let y = u32::from_be_bytes(data[4..8].try_into().unwrap());
            return (x, y);
        }
        at += 12 + len;
    }
    panic!("no pHYs chunk: the PNG does not say how large it prints");
}

#[test]
fn the_marker_png_prints_a_black_square_of_the_stated_side() {
    let path = Path::new(ROOT).join("assets/markers/aruco_4x4_50_id0_80mm.png");
    let bytes = std::fs::read(&path).unwrap();
    let (ppm_x, ppm_y) = png_pixels_per_metre(&bytes);
    assert_eq!(ppm_x, ppm_y, "square pixels");
    let img = image::load_from_memory(&bytes).unwrap().to_luma8();
    // The marker is the block of dark pixels whose outer border is black all round: its
    // first dark row and column, and its extent along that row and column.
    let dark = |x: u32, y: u32| img.get_pixel(x, y).0[0] < 128;
    let (w, h) = img.dimensions();
    let top = (0..h).find(|&y| (0..w).any(|x| dark(x, y))).unwrap();
    let left = (0..w).find(|&x| dark(x, top)).unwrap();
    let right = (left..w).take_while(|&x| dark(x, top)).last().unwrap();
    let bottom = (top..h).take_while(|&y| dark(left, y)).last().unwrap();
    let (side_x_px, side_y_px) = (right - left + 1, bottom - top + 1);
    let side_x_m = f64::from(side_x_px) / f64::from(ppm_x);
    let side_y_m = f64::from(side_y_px) / f64::from(ppm_y);
    println!(
        "marker PNG: {side_x_px} x {side_y_px} px at {ppm_x} px/m = {side_x_m} x {side_y_m} m"
    );
    // One pixel at 300 dpi is 0.085 mm.
    let px_m = 1.0 / f64::from(ppm_x);
    for side in [side_x_m, side_y_m] {
        assert!((side - PRINTED_MARKER_SIDE_M).abs() <= px_m, "{side} m");
    }
    // The sheet's label and file name say the same.
    assert!(path.to_str().unwrap().contains("80mm"));
    assert!((PRINTED_MARKER_SIDE_M - 0.080).abs() < 1e-12);
}

#[test]
fn the_marker_svg_draws_the_stated_side_in_millimetres() {
    let text =
        std::fs::read_to_string(Path::new(ROOT).join("assets/markers/aruco_4x4_50_id0_80mm.svg"))
            .unwrap();
    // The root says its user unit is a millimetre: width="Wmm" over a viewBox W wide.
    let attr = |tag: &str, name: &str| -> String {
        let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        tag[at..].split('"').next().unwrap().to_owned()
    };
    let root = text.split('>').next().unwrap();
    let width = attr(root, "width");
    let view_box: Vec<f64> = attr(root, "viewBox")
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(
        width.strip_suffix("mm").unwrap().parse::<f64>().unwrap(),
        view_box[2]
    );
    // The extent of the black cells.
    let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
    for tag in text
        .split('<')
        .filter(|t| t.starts_with("rect") && t.contains("black"))
    {
        let v = |n: &str| attr(tag, n).parse::<f64>().unwrap();
        let (x, y, w, h) = (v("x"), v("y"), v("width"), v("height"));
        lo = [lo[0].min(x), lo[1].min(y)];
        hi = [hi[0].max(x + w), hi[1].max(y + h)];
    }
    for side_mm in [hi[0] - lo[0], hi[1] - lo[1]] {
        assert!(
            (side_mm / 1000.0 - PRINTED_MARKER_SIDE_M).abs() < 1e-6,
            "{side_mm} mm"
        );
    }
}

#[test]
fn the_readme_the_example_rig_and_the_demo_use_the_printed_side() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    assert!(readme.contains("it should be 80 mm"));
    let rig: toml::Value = toml::from_str(
        &std::fs::read_to_string(Path::new(ROOT).join("assets/rig.example.toml")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        rig["camera"]["marker_length_m"].as_float(),
        Some(PRINTED_MARKER_SIDE_M)
    );
    assert_eq!(
        ar_multibody::rig::devices::demo_world::DEMO_MARKER_LENGTH_M,
        PRINTED_MARKER_SIDE_M
    );
}
