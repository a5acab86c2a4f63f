//! The printed sheets (marker and calibration chessboard) and their use as textures.
//!
//! The same generator writes the files in `assets/markers/` and, through [`MARKER_PNG`] (the
//! committed PNG embedded at build time), feeds the synthetic camera, so what the synthetic
//! camera shows is exactly what the user prints. A test checks that the committed PNG still
//! equals the generator's output.
//!
//! Marker sheet layout at [`MARKER_SHEET_DPI`]: the black marker square is
//! [`MarkerSheet::MARKER_SIDE_PX`] pixels (80.0 mm) with a white quiet zone of
//! [`MarkerSheet::QUIET_PX`] pixels (20 mm) on every side, and two text lines below it naming
//! the dictionary, the id and the side length.

use super::{cv_ctx, CameraError};
use nalgebra::Vector2;
use opencv::core::{Mat, Point, Scalar, Vector, CV_8UC1};
use opencv::prelude::*;
use opencv::{aruco, imgcodecs, imgproc};
use std::path::Path;

/// Side of the shipped marker's black square, metres: what `assets/markers` prints, what the
/// demo and the synthetic camera use, and the default of `track --marker-length` and of the
/// tracker.
pub const PRINTED_MARKER_SIDE_M: f64 = 0.08;

/// Resolution of the printable PNGs, dots per inch.
pub const MARKER_SHEET_DPI: f64 = 300.0;

/// The committed printable marker (ArUco 4X4_50 id 0, 80 mm at 300 dpi).
pub const MARKER_PNG: &[u8] = include_bytes!("../../../assets/markers/aruco_4x4_50_id0_80mm.png");

/// A flat printed sheet lying in the world's z = 0 plane, as a texture.
#[derive(Debug, Clone)]
pub struct CardTexture {
    /// The sheet's image, BGR8.
    pub image: Mat,
    /// Size of one texture pixel on the paper, metres.
    pub metres_per_px: f64,
    /// World (x, y) of the top-left corner of the image's pixel (0, 0); image rows go toward
    /// −y, columns toward +x.
    pub top_left_in_world: Vector2<f64>,
}

/// The printable marker sheet and where the marker square sits on it.
#[derive(Debug, Clone)]
pub struct MarkerSheet {
    /// The sheet, BGR8.
    pub image: Mat,
    /// Column and row of the marker square's top-left pixel.
    pub marker_origin_px: (i32, i32),
    /// Side of the black marker square, pixels.
    pub marker_side_px: i32,
}

impl MarkerSheet {
    /// Side of the marker square on the committed sheet: 80 mm at 300 dpi (945 px = 80.01 mm).
    pub const MARKER_SIDE_PX: i32 = 945;
    /// White quiet zone around the marker on the committed sheet: 20 mm.
    pub const QUIET_PX: i32 = 236;
    /// Extra white strip under the bottom quiet zone that holds the text.
    pub const TEXT_STRIP_PX: i32 = 260;

    /// The committed sheet (decoded from [`MARKER_PNG`]).
    pub fn printed() -> Result<Self, CameraError> {
        let bytes = Vector::<u8>::from_slice(MARKER_PNG);
        let image = cv_ctx(
            imgcodecs::imdecode(&bytes, imgcodecs::IMREAD_COLOR),
            "decoding the embedded marker PNG",
        )?;
        let sheet = Self {
            image,
            marker_origin_px: (Self::QUIET_PX, Self::QUIET_PX),
            marker_side_px: Self::MARKER_SIDE_PX,
        };
        let expected = (
            Self::MARKER_SIDE_PX + 2 * Self::QUIET_PX,
            Self::MARKER_SIDE_PX + 2 * Self::QUIET_PX + Self::TEXT_STRIP_PX,
        );
        if (sheet.image.cols(), sheet.image.rows()) != expected {
            return Err(CameraError::SyntheticConfig(format!(
                "embedded marker PNG is {}x{}, expected {}x{}",
                sheet.image.cols(),
                sheet.image.rows(),
                expected.0,
                expected.1
            )));
        }
        Ok(sheet)
    }

    /// The sheet as a texture for a marker whose black square is `marker_length_m` wide,
    /// centred on the world origin.
    pub fn card(&self, marker_length_m: f64) -> CardTexture {
        let m = marker_length_m / self.marker_side_px as f64;
        let (ox, oy) = self.marker_origin_px;
        CardTexture {
            image: self.image.clone(),
            metres_per_px: m,
            top_left_in_world: Vector2::new(
                -marker_length_m / 2.0 - ox as f64 * m,
                marker_length_m / 2.0 + oy as f64 * m,
            ),
        }
    }
}

/// Draws a printable marker sheet: marker `id` of `dictionary` (an OpenCV predefined
/// dictionary number) with the layout constants of [`MarkerSheet`] and a label.
pub fn marker_sheet(dictionary: i32, id: i32, label: &[&str]) -> Result<MarkerSheet, CameraError> {
    let side = MarkerSheet::MARKER_SIDE_PX;
    let q = MarkerSheet::QUIET_PX;
    let w = side + 2 * q;
    let h = side + 2 * q + MarkerSheet::TEXT_STRIP_PX;
    let dict = cv_ctx(
        aruco::get_predefined_dictionary_i32(dictionary),
        "loading the ArUco dictionary",
    )?;
    let mut marker = Mat::default();
    cv_ctx(
        aruco::draw_marker(&dict, id, side, &mut marker, 1),
        "drawing the marker",
    )?;
    let mut sheet = cv_ctx(
        Mat::new_rows_cols_with_default(h, w, CV_8UC1, Scalar::all(255.0)),
        "allocating the sheet",
    )?;
    {
        let mut roi = cv_ctx(
            Mat::roi_mut(&mut sheet, opencv::core::Rect::new(q, q, side, side)),
            "marker region",
        )?;
        cv_ctx(marker.copy_to(&mut roi), "placing the marker")?;
    }
    draw_label(&mut sheet, label, side + 2 * q + 60)?;
    let mut bgr = Mat::default();
    cv_ctx(
        imgproc::cvt_color(&sheet, &mut bgr, imgproc::COLOR_GRAY2BGR, 0),
        "sheet to BGR",
    )?;
    Ok(MarkerSheet {
        image: bgr,
        marker_origin_px: (q, q),
        marker_side_px: side,
    })
}

fn draw_label(sheet: &mut Mat, lines: &[&str], first_baseline_px: i32) -> Result<(), CameraError> {
    for (i, line) in lines.iter().enumerate() {
        cv_ctx(
            imgproc::put_text(
                sheet,
                line,
                Point::new(60, first_baseline_px + 75 * i as i32),
                imgproc::FONT_HERSHEY_SIMPLEX,
                1.6,
                Scalar::all(0.0),
                3,
                imgproc::LINE_AA,
                false,
            ),
            "drawing the label",
        )?;
    }
    Ok(())
}

/// Draws a grid board: `markers` (across, down) markers of `dictionary` with ids running
/// row-major from `first_id` at the top-left, `marker_px` wide, `gap_px` apart, with a white
/// margin of one marker; as a texture with `marker_length_m` markers centred on the world
/// origin (the layout `ar_multibody::tracking::GridBoardConfig` expects).
pub fn grid_board_card(
    dictionary: i32,
    markers: (i32, i32),
    marker_px: i32,
    gap_px: i32,
    first_id: i32,
    marker_length_m: f64,
) -> Result<CardTexture, CameraError> {
    let dict = cv_ctx(
        aruco::get_predefined_dictionary_i32(dictionary),
        "loading the ArUco dictionary",
    )?;
    let margin = marker_px;
    let inner_w = markers.0 * marker_px + (markers.0 - 1) * gap_px;
    let inner_h = markers.1 * marker_px + (markers.1 - 1) * gap_px;
    let mut sheet = cv_ctx(
        Mat::new_rows_cols_with_default(
            inner_h + 2 * margin,
            inner_w + 2 * margin,
            CV_8UC1,
            Scalar::all(255.0),
        ),
        "allocating the board",
    )?;
    for row in 0..markers.1 {
        for col in 0..markers.0 {
            let mut m = Mat::default();
            cv_ctx(
                aruco::draw_marker(
                    &dict,
                    first_id + row * markers.0 + col,
                    marker_px,
                    &mut m,
                    1,
                ),
                "drawing a board marker",
            )?;
            let rect = opencv::core::Rect::new(
                margin + col * (marker_px + gap_px),
                margin + row * (marker_px + gap_px),
                marker_px,
                marker_px,
            );
            let mut roi = cv_ctx(Mat::roi_mut(&mut sheet, rect), "board region")?;
            cv_ctx(m.copy_to(&mut roi), "placing a board marker")?;
        }
    }
    let mut bgr = Mat::default();
    cv_ctx(
        imgproc::cvt_color(&sheet, &mut bgr, imgproc::COLOR_GRAY2BGR, 0),
        "board to BGR",
    )?;
    let m = marker_length_m / marker_px as f64;
    Ok(CardTexture {
        image: bgr,
        metres_per_px: m,
        top_left_in_world: Vector2::new(
            -(inner_w as f64) * m / 2.0 - margin as f64 * m,
            inner_h as f64 * m / 2.0 + margin as f64 * m,
        ),
    })
}

/// A printable chessboard and its geometry.
#[derive(Debug, Clone)]
pub struct ChessboardSheet {
    /// The sheet, BGR8.
    pub image: Mat,
    /// Squares across and down.
    pub squares: (i32, i32),
    /// Side of one square, pixels.
    pub square_px: i32,
    /// White margin around the squares, pixels.
    pub margin_px: i32,
}

impl ChessboardSheet {
    /// Inner corners across and down (what OpenCV's chessboard finder is given).
    pub fn inner_corners(&self) -> (i32, i32) {
        (self.squares.0 - 1, self.squares.1 - 1)
    }

    /// The sheet as a texture with squares `square_m` wide, centred on the world origin.
    pub fn card(&self, square_m: f64) -> CardTexture {
        let m = square_m / self.square_px as f64;
        let w = self.image.cols() as f64 * m;
        let h = self.image.rows() as f64 * m;
        CardTexture {
            image: self.image.clone(),
            metres_per_px: m,
            top_left_in_world: Vector2::new(-w / 2.0, h / 2.0),
        }
    }
}

/// Draws a chessboard of `squares` (across, down) with `square_px` squares, a white margin of
/// one square and an optional text label in the bottom margin; the top-left square is black.
pub fn chessboard_sheet(
    squares: (i32, i32),
    square_px: i32,
    label: &[&str],
) -> Result<ChessboardSheet, CameraError> {
    let margin = square_px;
    let w = squares.0 * square_px + 2 * margin;
    let h = squares.1 * square_px + 2 * margin + if label.is_empty() { 0 } else { 180 };
    let mut sheet = cv_ctx(
        Mat::new_rows_cols_with_default(h, w, CV_8UC1, Scalar::all(255.0)),
        "allocating the board",
    )?;
    for j in 0..squares.1 {
        for i in 0..squares.0 {
            if (i + j) % 2 == 0 {
                cv_ctx(
                    imgproc::rectangle(
                        &mut sheet,
                        opencv::core::Rect::new(
                            margin + i * square_px,
                            margin + j * square_px,
                            square_px,
                            square_px,
                        ),
                        Scalar::all(0.0),
                        -1,
                        imgproc::LINE_8,
                        0,
                    ),
                    "drawing a square",
                )?;
            }
        }
    }
    if !label.is_empty() {
        draw_label(&mut sheet, label, squares.1 * square_px + 2 * margin + 60)?;
    }
    let mut bgr = Mat::default();
    cv_ctx(
        imgproc::cvt_color(&sheet, &mut bgr, imgproc::COLOR_GRAY2BGR, 0),
        "board to BGR",
    )?;
    Ok(ChessboardSheet {
        image: bgr,
        squares,
        square_px,
        margin_px: margin,
    })
}

/// The committed marker sheet as the generator draws it.
pub fn default_marker_sheet() -> Result<MarkerSheet, CameraError> {
    marker_sheet(
        aruco::DICT_4X4_50,
        0,
        &[
            "ArUco DICT_4X4_50, id 0",
            "black square side: 80 mm",
            "print at 300 dpi, 100 % scale",
        ],
    )
}

/// The committed calibration chessboard: 10 x 7 squares (9 x 6 inner corners) of 25 mm.
pub fn default_chessboard_sheet() -> Result<ChessboardSheet, CameraError> {
    chessboard_sheet(
        (10, 7),
        295,
        &[
            "chessboard 10 x 7 squares (9 x 6 inner corners)",
            "square side: 25 mm; print at 300 dpi, 100 % scale",
        ],
    )
}

/// Writes the printable assets (PNG at 300 dpi and SVG with the sizes printed on them) into
/// `dir`: `aruco_4x4_50_id0_80mm.{png,svg}` and `chessboard_9x6_25mm.{png,svg}`.
pub fn write_assets(dir: &Path) -> Result<(), CameraError> {
    let io_err = |path: &Path, e: std::io::Error| CameraError::VideoWrite {
        path: path.to_owned(),
        problem: e.to_string(),
    };
    let marker = default_marker_sheet()?;
    let png = encode_png_300dpi(&marker.image)?;
    let p = dir.join("aruco_4x4_50_id0_80mm.png");
    std::fs::write(&p, png).map_err(|e| io_err(&p, e))?;
    let p = dir.join("aruco_4x4_50_id0_80mm.svg");
    std::fs::write(&p, marker_svg(aruco::DICT_4X4_50, 0, 80.0)?).map_err(|e| io_err(&p, e))?;
    let board = default_chessboard_sheet()?;
    let png = encode_png_300dpi(&board.image)?;
    let p = dir.join("chessboard_9x6_25mm.png");
    std::fs::write(&p, png).map_err(|e| io_err(&p, e))?;
    let p = dir.join("chessboard_9x6_25mm.svg");
    std::fs::write(&p, chessboard_svg((10, 7), 25.0)).map_err(|e| io_err(&p, e))?;
    Ok(())
}

/// PNG bytes of `image` with a pHYs chunk saying 300 dpi, so that printing at 100 % gives the
/// stated sizes.
pub fn encode_png_300dpi(image: &Mat) -> Result<Vec<u8>, CameraError> {
    let mut gray = Mat::default();
    cv_ctx(
        imgproc::cvt_color(image, &mut gray, imgproc::COLOR_BGR2GRAY, 0),
        "sheet to gray",
    )?;
    let mut buf = Vector::<u8>::new();
    let params = Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_PNG_COMPRESSION, 9]);
    cv_ctx(
        imgcodecs::imencode(".png", &gray, &mut buf, &params),
        "encoding PNG",
    )?;
    let png = buf.to_vec();
    // The IHDR chunk always comes first: 8-byte signature + 4 length + 4 type + 13 data + 4 CRC.
    let ihdr_end = 8 + 25;
    let ppm = (MARKER_SHEET_DPI / 0.0254).round() as u32;
    let mut chunk_data = Vec::with_capacity(13);
    chunk_data.extend_from_slice(b"pHYs");
    chunk_data.extend_from_slice(&ppm.to_be_bytes());
    chunk_data.extend_from_slice(&ppm.to_be_bytes());
    chunk_data.push(1); // unit: metre
    let mut out = Vec::with_capacity(png.len() + 21);
    out.extend_from_slice(&png[..ihdr_end]);
    out.extend_from_slice(&9u32.to_be_bytes());
    out.extend_from_slice(&chunk_data);
    out.extend_from_slice(&crc32(&chunk_data).to_be_bytes());
    out.extend_from_slice(&png[ihdr_end..]);
    Ok(out)
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// A vector version of the marker sheet, sizes in millimetres.
fn marker_svg(dictionary: i32, id: i32, side_mm: f64) -> Result<String, CameraError> {
    let dict = cv_ctx(
        aruco::get_predefined_dictionary_i32(dictionary),
        "loading the ArUco dictionary",
    )?;
    let cells = dict.marker_size() + 2;
    let mut bits = Mat::default();
    cv_ctx(
        aruco::draw_marker(&dict, id, cells, &mut bits, 1),
        "drawing the marker bits",
    )?;
    let cell_mm = side_mm / cells as f64;
    let quiet = 20.0;
    let w = side_mm + 2.0 * quiet;
    let h = side_mm + 2.0 * quiet + 20.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}mm\" height=\"{h}mm\" viewBox=\"0 0 {w} {h}\">\n\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n"
    );
    for r in 0..cells {
        for c in 0..cells {
            let v = *cv_ctx(bits.at_2d::<u8>(r, c), "reading marker bits")?;
            if v < 128 {
                s += &format!(
                    "<rect x=\"{:.4}\" y=\"{:.4}\" width=\"{:.4}\" height=\"{:.4}\" fill=\"black\"/>\n",
                    quiet + c as f64 * cell_mm,
                    quiet + r as f64 * cell_mm,
                    cell_mm,
                    cell_mm
                );
            }
        }
    }
    s += &format!(
        "<text x=\"5\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"4\">ArUco DICT_4X4_50, id {id}; black square side: {side_mm} mm; print at 100 %</text>\n</svg>\n",
        side_mm + 2.0 * quiet + 8.0
    );
    Ok(s)
}

/// A vector chessboard, sizes in millimetres.
fn chessboard_svg(squares: (i32, i32), square_mm: f64) -> String {
    let margin = square_mm;
    let w = squares.0 as f64 * square_mm + 2.0 * margin;
    let h = squares.1 as f64 * square_mm + 2.0 * margin + 15.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}mm\" height=\"{h}mm\" viewBox=\"0 0 {w} {h}\">\n\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n"
    );
    for j in 0..squares.1 {
        for i in 0..squares.0 {
            if (i + j) % 2 == 0 {
                s += &format!(
                    "<rect x=\"{}\" y=\"{}\" width=\"{square_mm}\" height=\"{square_mm}\" fill=\"black\"/>\n",
                    margin + i as f64 * square_mm,
                    margin + j as f64 * square_mm
                );
            }
        }
    }
    s += &format!(
        "<text x=\"5\" y=\"{:.1}\" font-family=\"sans-serif\" font-size=\"4\">chessboard {} x {} squares ({} x {} inner corners); square side: {square_mm} mm; print at 100 %</text>\n</svg>\n",
        squares.1 as f64 * square_mm + 2.0 * margin + 8.0,
        squares.0,
        squares.1,
        squares.0 - 1,
        squares.1 - 1
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_png_reference_value() {
        // CRC of the IEND chunk type, present in every PNG.
        assert_eq!(crc32(b"IEND"), 0xAE42_6082);
    }

    #[test]
    fn committed_marker_png_equals_the_generator() {
        let committed = MarkerSheet::printed().unwrap();
        let generated = default_marker_sheet().unwrap();
        let mut diff = Mat::default();
        opencv::core::absdiff(&committed.image, &generated.image, &mut diff).unwrap();
        let max =
            opencv::core::norm(&diff, opencv::core::NORM_INF, &opencv::core::no_array()).unwrap();
        assert_eq!(
            max, 0.0,
            "assets/markers is stale: run the ignored regenerate test"
        );
    }

    /// Rewrites assets/markers: `cargo test -p ar-drivers regenerate_assets -- --ignored`.
    #[test]
    #[ignore]
    fn regenerate_assets() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/markers");
        std::fs::create_dir_all(&dir).unwrap();
        write_assets(&dir).unwrap();
    }
}
