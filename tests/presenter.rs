//! The HMD window: an image shown through the [`Presenter`] reaches the window pixel for
//! pixel, with its colours.
//!
//! Needs a display server, and winit's event loop must live on the main thread, so this
//! test has its own `main` (no test harness). It runs only when `AR_TEST_DISPLAY` is set,
//! for example under a virtual display (Debian package `xvfb`):
//! `AR_TEST_DISPLAY=1 xvfb-run -a cargo test --test presenter`.

use ar_multibody::compositor::presenter::Presenter;
use image::{Rgb, RgbImage};

fn main() {
    if std::env::var_os("AR_TEST_DISPLAY").is_none() {
        println!(
            "test a_presented_image_fills_the_window_pixel_for_pixel ... ignored (needs a display: AR_TEST_DISPLAY=1 xvfb-run -a cargo test --test presenter)"
        );
        return;
    }
    a_presented_image_fills_the_window_pixel_for_pixel();
    println!("test a_presented_image_fills_the_window_pixel_for_pixel ... ok");
}

fn a_presented_image_fills_the_window_pixel_for_pixel() {
    let (w, h) = (96, 48);
    let mut presenter = Presenter::new("presenter test", (w, h), false);
    // Left half a horizontal ramp, right half blocks of pure colours: both halves of a
    // side-by-side frame must arrive where they were put.
    let image = RgbImage::from_fn(w, h, |x, y| {
        if x < w / 2 {
            let v = (x * 255 / (w / 2 - 1)) as u8;
            Rgb([v, v, 128])
        } else if y < h / 2 {
            Rgb([230, 20, 20])
        } else {
            Rgb([20, 200, 40])
        }
    });
    // The first frames may still show the window's initial contents.
    let mut shown = RgbImage::new(1, 1);
    for _ in 0..3 {
        presenter.show(&image).expect("window open");
        shown = presenter.snap_image();
    }
    assert_eq!(shown.dimensions(), (w, h), "window size");
    let mut worst = 0i32;
    let mut at = (0, 0);
    for (x, y, px) in image.enumerate_pixels() {
        // Stay off the edges between blocks, where the texture filter blends neighbours.
        let near_edge =
            (x as i32 - (w / 2) as i32).abs() <= 1 || (y as i32 - (h / 2) as i32).abs() <= 1;
        if near_edge {
            continue;
        }
        let got = shown.get_pixel(x, y);
        for c in 0..3 {
            let d = (i32::from(got[c]) - i32::from(px[c])).abs();
            if d > worst {
                worst = d;
                at = (x, y);
            }
        }
    }
    eprintln!("largest channel difference {worst} at {at:?}");
    assert!(worst <= 3, "pixel {at:?} differs by {worst} levels");
}
