//! `simulate --plot`: ‖ψ‖ (log scale) and the energies over time, drawn with plotters'
//! bitmap backend (its `ttf` fonts need a system font such as DejaVu for the labels).

use anyhow::{Context as _, Result};

/// Everything the plot needs, one entry per step.
#[derive(Default)]
pub struct Series {
    /// Simulated time (s).
    pub t: Vec<f64>,
    /// ‖ψ‖ (m).
    pub psi: Vec<f64>,
    /// Kinetic energy (J).
    pub kinetic: Vec<f64>,
    /// Gravitational energy (J).
    pub potential: Vec<f64>,
    /// Elastic energy (J).
    pub elastic: Vec<f64>,
    /// User work (J).
    pub user: Vec<f64>,
    /// Dissipated energy (J).
    pub dissipated: Vec<f64>,
}

impl Series {
    /// Appends the last step's diagnostics.
    pub fn push(&mut self, d: &ar_dynamics::StepDiagnostics) {
        self.t.push(d.time_secs);
        self.psi.push(d.constraint_norm_m);
        self.kinetic.push(d.kinetic_j);
        self.potential.push(d.potential_j);
        self.elastic.push(d.elastic_j);
        self.user.push(d.user_work_j);
        self.dissipated.push(d.dissipated_j);
    }
}

/// The plot's size, pixels.
const PLOT_SIZE_PX: (u32, u32) = (1200, 900);

/// Draws the two charts and writes them as the PNG `path`, atomically (a failed plot leaves
/// the file that was there).
pub fn plot(path: &std::path::Path, s: &Series) -> Result<()> {
    let (w, h) = PLOT_SIZE_PX;
    let mut rgb = vec![0u8; (w * h * 3) as usize];
    draw(&mut rgb, s)?;
    let image = image::RgbImage::from_raw(w, h, rgb).context("plot buffer size")?;
    let mut png = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .context("encoding the plot as PNG")?;
    ar_io::atomic_write::write_atomic(path, &png)?;
    Ok(())
}

/// Draws the two charts into an RGB buffer of [`PLOT_SIZE_PX`].
fn draw(rgb: &mut [u8], s: &Series) -> Result<()> {
    use plotters::prelude::*;
    let root = BitMapBackend::with_buffer(rgb, PLOT_SIZE_PX).into_drawing_area();
    root.fill(&WHITE)?;
    let (top, bottom) = root.split_vertically(420);
    let t_end = s.t.last().copied().unwrap_or(1.0).max(1e-9);

    let psi_max = s.psi.iter().copied().fold(1e-12_f64, f64::max) * 2.0;
    let mut chart = ChartBuilder::on(&top)
        .caption("constraint error |psi| (m)", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..t_end, (1e-12..psi_max).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("t (s)")
        .y_label_formatter(&|v| format!("{v:.0e}"))
        .draw()?;
    chart.draw_series(LineSeries::new(
        s.t.iter().zip(&s.psi).map(|(&t, &p)| (t, p.max(1e-12))),
        &RED,
    ))?;

    let p0 = s.potential.first().copied().unwrap_or(0.0);
    let lines: [(&str, Vec<f64>, RGBColor); 5] = [
        ("kinetic", s.kinetic.clone(), BLUE),
        (
            "potential - initial",
            s.potential.iter().map(|p| p - p0).collect(),
            GREEN,
        ),
        ("elastic", s.elastic.clone(), MAGENTA),
        ("user work", s.user.clone(), BLACK),
        ("dissipated", s.dissipated.clone(), CYAN),
    ];
    let (mut lo, mut hi) = (0.0_f64, 1e-9_f64);
    for (_, v, _) in &lines {
        for &x in v {
            lo = lo.min(x);
            hi = hi.max(x);
        }
    }
    let pad = 0.05 * (hi - lo);
    let mut chart = ChartBuilder::on(&bottom)
        .caption("energies (J)", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..t_end, (lo - pad)..(hi + pad))?;
    chart.configure_mesh().x_desc("t (s)").draw()?;
    for (name, v, color) in lines {
        chart
            .draw_series(LineSeries::new(s.t.iter().copied().zip(v), &color))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
