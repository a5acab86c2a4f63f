//! A synthetic video frame for the compositor tests (included with `#[path]`): a colour ramp,
//! so that "the video's pixel" is a different value at every place.

/// RGB bytes of a `width` × `height` frame: red rising left to right, green top to bottom,
/// blue `blue` everywhere.
pub fn ramp_video(width: u32, height: u32, blue: u8) -> Vec<u8> {
    let mut rgb = vec![0u8; (width * height * 3) as usize];
    for y in 0..height {
        for x in 0..width {
            let i = ((y * width + x) * 3) as usize;
            rgb[i] = (x * 255 / (width - 1)) as u8;
            rgb[i + 1] = (y * 255 / (height - 1)) as u8;
            rgb[i + 2] = blue;
        }
    }
    rgb
}
