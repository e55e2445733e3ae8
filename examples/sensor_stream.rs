//! A sensor stream as it really arrives: `(time, value)` lines with
//! irregular timestamps, a dropout, unreadable values and outliers. For
//! each line it updates
//!
//! - a time-decayed EMA and EW variance (half-life 20 s, in seconds, not
//!   in samples), skipping bad readings, ready after 10 values, and reset
//!   after a dropout so that stale statistics raise no false alarms;
//! - a median filter over the last 9 readings (`MovingQuantile`) and the
//!   rolling min and max over the last 25 (`MovingMinMax`);
//!
//! flags a reading as an anomaly when it lies more than 4σ from the
//! time-decayed mean (`EwVariance::z_score`), prints the anomalies and a
//! summary, and draws everything as an SVG.
//!
//! ```sh
//! cargo run --release --example sensor_stream                          # generated data
//! cargo run --release --example sensor_stream -- --input data.csv      # your own "t,x" lines
//! cat data.csv | cargo run --release --example sensor_stream -- --input -
//! ```
//!
//! The picture goes to `target/sensor_stream.svg`, or where `--svg PATH`
//! says.

use momenta::{Ema, EwVariance, Momentum, MovingMinMax, MovingQuantile, NanPolicy};
use plotters::prelude::*;
use std::error::Error;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;

/// Half-life of the exponential statistics, in seconds.
const HALF_LIFE: f64 = 20.0;
/// Readings before the band is trusted (pandas' `min_periods`).
const WARM_UP: usize = 10;
/// A silence longer than this (seconds) is a dropout: start afresh.
const DROPOUT: f64 = 30.0;
/// How many standard deviations make an anomaly.
const K: f64 = 4.0;

/// A deterministic generator (splitmix64), uniform in [0, 1).
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// 3000 readings of a slow wave around 20 °C: samples every 0.5–1.5 s,
/// a two-minute dropout after which the level has moved, 1 % unreadable
/// lines, and eight spikes of ±2.5 °C.
fn generated() -> String {
    let mut rng = Rng(0x5E45_0125);
    let mut t = 0.0;
    let mut out = String::new();
    for i in 0..3000 {
        t += 0.5 + rng.unit();
        if i == 1800 {
            t += 120.0;
        }
        let level = if i >= 1800 { 23.0 } else { 20.0 };
        let noise: f64 = (0..4).map(|_| rng.unit() - 0.5).sum::<f64>() * 0.25;
        let spike = if i % 373 == 200 {
            if i % 2 == 0 { 2.5 } else { -2.5 }
        } else {
            0.0
        };
        let x = level + (t / 90.0).sin() + noise + spike;
        if rng.unit() < 0.01 {
            out.push_str(&format!("{t:.3},nan\n"));
        } else {
            out.push_str(&format!("{t:.3},{x:.4}\n"));
        }
    }
    out
}

/// One reading; an unreadable value is NaN, an unreadable time skips the
/// line.
fn parse(line: &str) -> Option<(f64, f64)> {
    let (t, x) = line.split_once(',')?;
    let t: f64 = t.trim().parse().ok()?;
    let x = x.trim().parse().unwrap_or(f64::NAN);
    t.is_finite().then_some((t, x))
}

/// A labelled line: its label, points and colour.
type Curve<'a> = (&'a str, &'a [(f64, f64)], RGBColor);

#[derive(Default)]
struct Trace {
    raw: Vec<(f64, f64)>,
    ema: Vec<(f64, f64)>,
    low: Vec<(f64, f64)>,
    high: Vec<(f64, f64)>,
    median: Vec<(f64, f64)>,
    min: Vec<(f64, f64)>,
    max: Vec<(f64, f64)>,
    anomalies: Vec<(f64, f64)>,
}

fn main() -> Result<(), Box<dyn Error>> {
    let (mut input, mut svg) = (None, PathBuf::from("target/sensor_stream.svg"));
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        match (flag.as_str(), args.next()) {
            ("--input", Some(path)) => input = Some(path),
            ("--svg", Some(path)) => svg = PathBuf::from(path),
            _ => {
                return Err(format!(
                    "usage: sensor_stream [--input FILE|-] [--svg PATH]; got {flag}"
                )
                .into());
            }
        }
    }
    let lines: Box<dyn BufRead> = match input.as_deref() {
        None => Box::new(std::io::Cursor::new(generated())),
        Some("-") => Box::new(BufReader::new(std::io::stdin())),
        Some(path) => Box::new(BufReader::new(std::fs::File::open(path)?)),
    };

    let decay = Momentum::from_half_life(HALF_LIFE)?;
    let mut ema = Ema::new(decay)?.with_nan_policy(NanPolicy::Skip);
    let mut band = EwVariance::new(decay)?
        .with_nan_policy(NanPolicy::Skip)
        .with_min_periods(WARM_UP);
    let mut median = MovingQuantile::median(9)?.with_nan_policy(NanPolicy::Skip);
    let mut extremes = MovingMinMax::new(25)?.with_nan_policy(NanPolicy::Skip);

    let mut trace = Trace::default();
    let (mut read, mut bad, mut dropouts) = (0_usize, 0_usize, 0_usize);
    let mut last_t: Option<f64> = None;
    for line in lines.lines() {
        let Some((t, x)) = parse(&line?) else {
            continue;
        };
        read += 1;
        if last_t.is_some_and(|last| t - last > DROPOUT) {
            // A dropout: what came before says little about what follows.
            dropouts += 1;
            ema.reset();
            band.reset();
            median.reset();
            extremes.reset();
        }
        if last_t.is_some_and(|last| t < last) {
            eprintln!("time went backwards at t = {t}: line skipped");
            continue;
        }
        last_t = Some(t);
        if x.is_nan() {
            bad += 1;
        }
        // How unusual is x, measured against the past (before it counts)?
        if band.is_ready() && band.z_score(x).is_some_and(|z| z.abs() > K) {
            trace.anomalies.push((t, x));
            println!(
                "anomaly at t = {t:8.2} s: {x:.3} (mean {:.3})",
                band.mean().unwrap_or(f64::NAN)
            );
        }
        ema.push_at(t, x)?;
        band.push_at(t, x)?;
        median.push(x);
        extremes.push(x);

        if x.is_finite() {
            trace.raw.push((t, x));
        }
        if let (Some(m), Some(s)) = (ema.value(), band.std_dev()) {
            trace.ema.push((t, m));
            trace.low.push((t, m - K * s));
            trace.high.push((t, m + K * s));
        }
        if let Some(m) = median.quantile().filter(|m| m.is_finite()) {
            trace.median.push((t, m));
        }
        if let (Some(lo), Some(hi)) = (extremes.min(), extremes.max()) {
            trace.min.push((t, lo));
            trace.max.push((t, hi));
        }
    }
    println!(
        "{read} readings, {bad} unreadable (skipped), {dropouts} dropout(s), {} anomalies",
        trace.anomalies.len()
    );
    draw(&trace, &svg)?;
    println!("picture: {}", svg.display());
    Ok(())
}

/// The signal, the EMA with its ±Kσ band, the median filter, the rolling
/// extremes and the anomalies.
fn draw(trace: &Trace, path: &PathBuf) -> Result<(), Box<dyn Error>> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let t_end = trace.raw.last().map_or(1.0, |p| p.0);
    let (lo, hi) = trace
        .raw
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
    let root = SVGBackend::new(path, (1100, 480)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "momenta: a sensor stream with gaps, bad readings and spikes",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(44)
        .build_cartesian_2d(0.0..t_end, (lo - 0.5)..(hi + 0.5))?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc("°C")
        .light_line_style(WHITE)
        .draw()?;

    let band = RGBColor(120, 170, 230).mix(0.25);
    for (highs, lows) in segments(&trace.high).into_iter().zip(segments(&trace.low)) {
        let polygon: Vec<(f64, f64)> = highs
            .iter()
            .copied()
            .chain(lows.iter().rev().copied())
            .collect();
        chart.draw_series(std::iter::once(Polygon::new(polygon, band.filled())))?;
    }
    chart
        .draw_series(
            trace
                .raw
                .iter()
                .map(|&p| Circle::new(p, 1, RGBColor(90, 90, 90).mix(0.4).filled())),
        )?
        .label("readings")
        .legend(|(x, y)| Circle::new((x + 9, y), 3, RGBColor(90, 90, 90).filled()));
    let lines: [Curve; 4] = [
        (
            "EMA, half-life 20 s (band: ±4σ)",
            &trace.ema,
            RGBColor(30, 110, 200),
        ),
        ("median of the last 9", &trace.median, RGBColor(40, 160, 80)),
        ("min of the last 25", &trace.min, RGBColor(200, 140, 40)),
        ("max of the last 25", &trace.max, RGBColor(200, 140, 40)),
    ];
    for (label, points, color) in lines {
        for (i, segment) in segments(points).into_iter().enumerate() {
            let series = chart.draw_series(LineSeries::new(
                segment.iter().copied(),
                color.stroke_width(2),
            ))?;
            if i == 0 {
                series.label(label).legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2))
                });
            }
        }
    }
    chart
        .draw_series(
            trace
                .anomalies
                .iter()
                .map(|&p| Cross::new(p, 6, RED.stroke_width(2))),
        )?
        .label("anomaly: more than 4σ from the mean")
        .legend(|(x, y)| Cross::new((x + 9, y), 5, RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// Splits a curve where time jumps by more than the dropout, so that no
/// line is drawn across a gap.
fn segments(points: &[(f64, f64)]) -> Vec<&[(f64, f64)]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..points.len() {
        if points[i].0 - points[i - 1].0 > DROPOUT {
            out.push(&points[start..i]);
            start = i;
        }
    }
    if start < points.len() {
        out.push(&points[start..]);
    }
    out
}
