//! Smooth a noisy signal — with a step and an outlier — four ways, and plot
//! the result as an SVG.
//!
//! ```sh
//! cargo run --release --example smooth_signal [-- OUTPUT.svg]
//! ```
//!
//! - `MovingAverage` (window 25): the classic moving-average filter; the
//!   outlier lifts it for exactly one window, then it is gone.
//! - `Ema` with `Momentum::Decay(0.9)` (Keras' convention) and
//!   `Momentum::Factor(0.1)` (PyTorch's): the same average, written two ways
//!   — the curves coincide.
//! - `Ema` with `Momentum::Factor(0.3)`: faster, noisier.
//! - `EwVariance` (decay 0.95): the mean ± 2σ band, which widens at the step
//!   and the outlier.

use momenta::{Ema, EwVariance, Momentum, MovingAverage};
use plotters::prelude::*;
use std::error::Error;
use std::path::PathBuf;

const SAMPLES: usize = 600;

/// A labelled line: its points, colour and stroke width.
type Curve<'a> = (&'a str, &'a [(f64, f64)], RGBColor, u32);

/// A deterministic noisy sine with a step at t = 300 and an outlier at
/// t = 450. Noise: the sum of four uniforms (close to Gaussian), from
/// splitmix64.
fn signal() -> Vec<f64> {
    let mut state = 0x5EED_u64;
    let mut uniform = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..SAMPLES)
        .map(|t| {
            let noise: f64 = (0..4).map(|_| uniform() - 0.5).sum::<f64>() * 0.8;
            let step = if t >= 300 { 2.0 } else { 0.0 };
            let outlier = if t == 450 { 6.0 } else { 0.0 };
            (t as f64 / 40.0).sin() + step + noise + outlier
        })
        .collect()
}

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("target/smooth_signal.svg"), PathBuf::from);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }

    let xs = signal();
    let mut window = MovingAverage::new(25)?;
    let mut keras = Ema::new(Momentum::Decay(0.9))?;
    let mut torch = Ema::new(Momentum::Factor(0.1))?;
    let mut fast = Ema::new(Momentum::Factor(0.3))?;
    let mut band = EwVariance::new(Momentum::Decay(0.95))?;

    let (mut ma, mut ek, mut et, mut ef, mut lo, mut hi) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut largest_gap = 0.0_f64;
    for (t, &x) in xs.iter().enumerate() {
        let t = t as f64;
        ma.push((t, window.push(x)));
        keras.push(x);
        torch.push(x);
        fast.push(x);
        band.push(x);
        let (k, p) = (keras.value().unwrap_or(x), torch.value().unwrap_or(x));
        largest_gap = largest_gap.max((k - p).abs());
        ek.push((t, k));
        et.push((t, p));
        ef.push((t, fast.value().unwrap_or(x)));
        let (m, s) = (band.mean().unwrap_or(x), band.std_dev().unwrap_or(0.0));
        lo.push((t, m - 2.0 * s));
        hi.push((t, m + 2.0 * s));
    }

    let root = SVGBackend::new(&path, (960, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption("momenta: smoothing a noisy signal", ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(40)
        .build_cartesian_2d(0.0..SAMPLES as f64, -2.5..9.0)?;
    chart
        .configure_mesh()
        .x_desc("sample")
        .y_desc("value")
        .light_line_style(WHITE)
        .draw()?;

    let band_color = RGBColor(120, 170, 230).mix(0.25);
    let polygon: Vec<(f64, f64)> = hi.iter().copied().chain(lo.iter().rev().copied()).collect();
    chart
        .draw_series(std::iter::once(Polygon::new(polygon, band_color.filled())))?
        .label("EwVariance mean ± 2σ (decay 0.95)")
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], band_color.filled()));
    chart
        .draw_series(
            xs.iter().enumerate().map(|(t, &x)| {
                Circle::new((t as f64, x), 2, RGBColor(90, 90, 90).mix(0.5).filled())
            }),
        )?
        .label("signal (step at 300, outlier at 450)")
        .legend(|(x, y)| Circle::new((x + 9, y), 3, RGBColor(90, 90, 90).filled()));

    let series: [Curve; 4] = [
        ("MovingAverage, window 25", &ma, RGBColor(200, 60, 40), 2),
        (
            "Ema Decay(0.9) — Keras convention",
            &ek,
            RGBColor(30, 110, 200),
            3,
        ),
        (
            "Ema Factor(0.1) — PyTorch convention",
            &et,
            RGBColor(240, 170, 30),
            1,
        ),
        ("Ema Factor(0.3)", &ef, RGBColor(40, 160, 90), 1),
    ];
    for (label, points, color, width) in series {
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(width),
            ))?
            .label(label)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()?;
    root.present()?;

    println!("smoothed {SAMPLES} samples");
    println!(
        "  MovingAverage(25) at the end:   {:.4}",
        window.mean().unwrap_or(f64::NAN)
    );
    println!(
        "  Ema Decay(0.9) at the end:      {:.4}",
        keras.value().unwrap_or(f64::NAN)
    );
    println!(
        "  Ema Factor(0.1) at the end:     {:.4}",
        torch.value().unwrap_or(f64::NAN)
    );
    println!("  largest gap between the two conventions: {largest_gap:.1e}");
    println!(
        "  EwVariance σ at the end:        {:.4}",
        band.std_dev().unwrap_or(f64::NAN)
    );
    println!("wrote {}", path.display());
    Ok(())
}
