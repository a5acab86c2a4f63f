//! Issue 44, acceptance 2, on the off-screen surface (Mesa lavapipe): the bodies' soft shadows
//! on the desk, and the digitizer arm as depth-only phantom geometry that hides the bodies
//! behind it and lets the video show through. Every check reads pixels at image positions
//! computed from the geometry (the light's projection onto z = 0, the pinhole projection).

use ar_calibration::intrinsics::CameraIntrinsics;
use ar_multibody::compositor::arm::ArmLook;
use ar_multibody::compositor::renderer::LIGHT_TRAVEL_IN_WORLD;
use ar_multibody::compositor::shadow::{
    DARKENING_HALF_HEIGHT_M, PENUMBRA_MIN_M, PENUMBRA_PER_HEIGHT, SHADOW_DARKENING,
};
use ar_multibody::compositor::{
    Compositor, CompositorConfig, FrameInput, Overlay, Shading, ShapeInstance, VideoImage,
    VisualShape,
};
use ar_multibody::rig::devices::fixed_view::look_at;
use image::RgbImage;
use nalgebra::{Isometry3, Point2, Point3, Vector3};

#[path = "support/ramp_video.rs"]
mod ramp_video;
use ramp_video::ramp_video;

/// The grey of the plain desk video.
const DESK_GREY: u8 = 160;

fn camera() -> CameraIntrinsics {
    CameraIntrinsics::ideal(640, 480, 600.0)
}

fn compositor() -> Compositor {
    let mut config = CompositorConfig::monitor(camera());
    config.show_hud = false;
    Compositor::headless(config).unwrap()
}

fn camera_from_world() -> Isometry3<f64> {
    look_at(Point3::new(0.05, -0.5, 0.45), Point3::new(0.0, 0.0, 0.05)).unwrap()
}

fn lit_sphere(centre: Point3<f64>, radius_m: f64, color: [f32; 3]) -> ShapeInstance {
    ShapeInstance {
        shape: VisualShape::Sphere { radius_m },
        world_from_shape: Isometry3::translation(centre.x, centre.y, centre.z),
        color,
        shading: Shading::Lit,
    }
}

/// Where a point on the desk straight under the light from `p` is.
fn on_desk_along_light(p: &Point3<f64>) -> Point3<f64> {
    let l = Vector3::from(LIGHT_TRAVEL_IN_WORLD.map(f64::from));
    p - l * (p.z / l.z)
}

/// The display value of the desk grey under a full shadow at `height_m`: the darkening
/// applies to linear light, which the output encodes with the power 1/2.2.
fn shadowed_grey(height_m: f64) -> f64 {
    let darkening = f64::from(SHADOW_DARKENING) / (1.0 + height_m / DARKENING_HALF_HEIGHT_M);
    f64::from(DESK_GREY) * (1.0 - darkening).powf(1.0 / 2.2)
}

fn near(value: u8, want: f64) -> bool {
    (f64::from(value) - want).abs() <= 2.0
}

fn render(c: &mut Compositor, rgb: &[u8], overlay: &Overlay) -> RgbImage {
    let cam = camera();
    c.render(&FrameInput {
        video: Some(VideoImage {
            width: cam.image_width,
            height: cam.image_height,
            rgb,
        }),
        camera_from_world: Some(camera_from_world()),
        overlay,
        hud_lines: &[],
    })
    .unwrap()
}

fn pixel_of(c: &Compositor, p: &Point3<f64>) -> (u32, u32) {
    let px: Point2<f64> = c
        .view_intrinsics()
        .project(&(camera_from_world() * p))
        .expect("in front of the camera");
    (px.x.round() as u32, px.y.round() as u32)
}

fn at(img: &RgbImage, px: (u32, u32)) -> [u8; 3] {
    img.get_pixel(px.0, px.1).0
}

#[test]
fn a_body_above_the_desk_darkens_the_desk_where_the_light_projects_it_and_only_there() {
    let cam = camera();
    let desk = vec![DESK_GREY; (cam.image_width * cam.image_height * 3) as usize];
    let centre = Point3::new(0.0, 0.0, 0.1);
    let mut overlay = Overlay::default();
    overlay
        .shapes
        .push(lit_sphere(centre, 0.03, [0.3, 0.7, 0.95]));
    let mut c = compositor();
    let shadowed = render(&mut c, &desk, &overlay);
    c.set_shadows(false);
    let plain = render(&mut c, &desk, &overlay);
    c.set_shadows(true);

    let under = pixel_of(&c, &on_desk_along_light(&centre));
    let beside = pixel_of(&c, &Point3::new(-0.15, 0.0, 0.0));
    // Straight below the sphere is not where its shadow falls (the light is slanted).
    let plumb = pixel_of(&c, &Point3::new(-0.04, -0.04, 0.0));
    eprintln!(
        "shadow {under:?}: {:?} with shadows, {:?} without; beside {:?}; plumb {:?}",
        at(&shadowed, under),
        at(&plain, under),
        at(&shadowed, beside),
        at(&shadowed, plumb)
    );
    assert_eq!(
        at(&plain, under),
        [DESK_GREY; 3],
        "the desk without shadows"
    );
    // A full shadow at 0.1 m: 104 of 160.
    let want = shadowed_grey(0.1);
    for ch in at(&shadowed, under) {
        assert!(near(ch, want), "shadow pixel {ch}, expected {want:.1}");
    }
    assert_eq!(at(&shadowed, beside), [DESK_GREY; 3]);
    assert_eq!(at(&shadowed, plumb), [DESK_GREY; 3]);

    // Soft edge: leaving the shadow sideways (−x), the desk brightens smoothly over the
    // penumbra (PENUMBRA_MIN_M + PENUMBRA_PER_HEIGHT · 0.1 m = 5 mm, about 5 px here) round
    // the outline, 30 to 36 mm from the centre.
    let penumbra_m = PENUMBRA_MIN_M + PENUMBRA_PER_HEIGHT * 0.1;
    let step_m = 0.0005;
    let mut brightness = Vec::new();
    for k in 0..60 {
        let d = 0.015 + step_m * k as f64;
        let p = on_desk_along_light(&centre) + Vector3::new(-d, 0.0, 0.0);
        brightness.push(at(&shadowed, pixel_of(&c, &p))[0]);
    }
    eprintln!("across the edge: {brightness:?}");
    assert!(
        brightness.windows(2).all(|w| w[0] <= w[1]),
        "{brightness:?}"
    );
    assert!(near(brightness[0], want) && brightness[59] == DESK_GREY);
    let between = brightness
        .iter()
        .filter(|&&b| f64::from(b) > want + 2.0 && b < DESK_GREY - 2)
        .count();
    assert!(
        between >= 4 && (between as f64) <= 1.5 * penumbra_m / step_m,
        "a soft edge about {penumbra_m} m wide: {brightness:?}"
    );
}

#[test]
fn overlapping_shadows_darken_no_more_than_one() {
    let cam = camera();
    let desk = vec![DESK_GREY; (cam.image_width * cam.image_height * 3) as usize];
    let a = Point3::new(0.0, 0.0, 0.1);
    let b = Point3::new(0.015, 0.0, 0.1);
    let mut one = Overlay::default();
    one.shapes.push(lit_sphere(a, 0.03, [0.9, 0.35, 0.2]));
    let mut two = one.clone();
    two.shapes.push(lit_sphere(b, 0.03, [0.9, 0.35, 0.2]));
    let mut c = compositor();
    let single = render(&mut c, &desk, &one);
    let double = render(&mut c, &desk, &two);
    let overlap = pixel_of(&c, &on_desk_along_light(&nalgebra::center(&a, &b)));
    eprintln!(
        "overlap {overlap:?}: {:?} / {:?}",
        at(&single, overlap),
        at(&double, overlap)
    );
    assert!(near(at(&single, overlap)[0], shadowed_grey(0.1)));
    assert_eq!(at(&double, overlap), at(&single, overlap));
}

/// The camera's frame of the colour ramp (blue 60).
fn ramp() -> Vec<u8> {
    let cam = camera();
    ramp_video(cam.image_width, cam.image_height, 60)
}

fn video_at(rgb: &[u8], px: (u32, u32)) -> [u8; 3] {
    let i = ((px.1 * camera().image_width + px.0) * 3) as usize;
    [rgb[i], rgb[i + 1], rgb[i + 2]]
}

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(&b).all(|(x, y)| x.abs_diff(*y) <= 1)
}

#[test]
fn the_arm_phantom_in_front_of_a_body_shows_the_video_where_it_covers_the_body() {
    let video = ramp();
    let body_centre = Point3::new(0.0, 0.0, 0.12);
    let body = lit_sphere(body_centre, 0.04, [0.9, 0.1, 0.1]);
    // An arm whose last link passes between the camera and the body's centre: 40 % of the way
    // from the body to the camera, crossing the line of sight sideways.
    let eye = camera_from_world().inverse() * Point3::origin();
    let crossing = body_centre + 0.4 * (eye - body_centre);
    let linkage = [
        Point3::new(-0.3, crossing.y, 0.0),
        Point3::new(-0.3, crossing.y, crossing.z),
        crossing - Vector3::new(0.12, 0.0, 0.0),
        crossing + Vector3::new(0.05, 0.0, 0.0),
    ];
    let mut with_arm = Overlay::default();
    with_arm.shapes.push(body.clone());
    with_arm.push_arm_as(&linkage, ArmLook::Phantom);
    let mut drawn_arm = Overlay::default();
    drawn_arm.shapes.push(body.clone());
    drawn_arm.push_arm_as(&linkage, ArmLook::Drawn);
    let mut without_arm = Overlay::default();
    without_arm.shapes.push(body);
    // The phantom also lies over the body's shadow on the desk: it must not darken the arm.
    let mut c = compositor();
    let hidden = render(&mut c, &video, &with_arm);
    let shown = render(&mut c, &video, &without_arm);
    let drawn = render(&mut c, &video, &drawn_arm);

    let px = pixel_of(&c, &body_centre);
    assert_eq!(
        px,
        pixel_of(&c, &crossing),
        "the arm crosses the body's centre"
    );
    eprintln!(
        "at {px:?}: {:?} with the phantom, {:?} without, video {:?}",
        at(&hidden, px),
        at(&shown, px),
        video_at(&video, px)
    );
    let [r, g, b] = at(&shown, px);
    assert!(
        r > 150 && g < 60 && b < 60,
        "the body is drawn red: {:?}",
        [r, g, b]
    );
    assert!(
        close(at(&hidden, px), video_at(&video, px)),
        "the phantom shows the video's pixel"
    );
    // A few pixels along the link, still over the body: the video too; beside the link, the
    // body.
    let along = pixel_of(&c, &(crossing - Vector3::new(0.012, 0.0, 0.0)));
    assert!(close(at(&hidden, along), video_at(&video, along)));
    let off_link = pixel_of(&c, &(body_centre + Vector3::new(0.0, 0.0, 0.03)));
    assert!(at(&hidden, off_link)[0] > 150 && at(&hidden, off_link)[1] < 60);
    // Where the video has no arm (the demo) the arm is drawn, in its dark blue-grey, and
    // hides the body the same way.
    let [r, g, b] = at(&drawn, px);
    assert!(
        r < 120 && b > r && g < 130,
        "the drawn arm: {:?}",
        [r, g, b]
    );
}

#[test]
fn a_phantom_behind_a_body_does_not_hide_it() {
    let video = ramp();
    let body_centre = Point3::new(0.0, 0.0, 0.12);
    let mut overlay = Overlay::default();
    overlay
        .shapes
        .push(lit_sphere(body_centre, 0.04, [0.9, 0.1, 0.1]));
    // A phantom rod 10 cm behind the body, seen through it.
    overlay.shapes.push(ShapeInstance {
        shape: VisualShape::Box {
            size_m: Vector3::new(0.3, 0.02, 0.02),
        },
        world_from_shape: Isometry3::translation(0.0, 0.1, 0.12),
        color: [0.0, 0.0, 0.0],
        shading: Shading::Phantom,
    });
    let mut c = compositor();
    let img = render(&mut c, &video, &overlay);
    let [r, g, b] = at(&img, pixel_of(&c, &body_centre));
    assert!(r > 150 && g < 60 && b < 60, "{:?}", [r, g, b]);
}

/// `--no-shadows` is an option of the demo (and of `run` and `sandbox`): the headless demo
/// runs with it and writes its frames.
#[test]
fn the_demo_runs_headless_without_shadows() {
    let out = tempfile::tempdir().unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_ar-multibody"))
        .args([
            "demo",
            "--headless",
            "--no-mic",
            "--no-shadows",
            "--frames",
            "5",
        ])
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(out.path().join("frame_000004.png").is_file());
}
