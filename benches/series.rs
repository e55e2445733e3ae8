//! The whole-series APIs against the push loops that give the same bits,
//! and the momenta side of the peers harness (`benches/peers/series.py`).
//!
//! - `cargo bench --bench series`: criterion, 64 Ki values of
//!   `1e6 + U(0, 1)` (in cache), each statistic's series against the push
//!   loop, in values per second.
//! - `MOMENTA_SERIES_DATA=<file> cargo bench --bench series`: reads the
//!   file as little-endian `f64` values and, for each statistic named in
//!   `MOMENTA_SERIES_STATS` (comma-separated: `rolling_mean_20`,
//!   `rolling_var_1000`, `rolling_max_5`, `rolling_median_101`,
//!   `ewm_mean_0.1`, `ewm_var_0.1`, …), times its series (a new vector
//!   each time, as pandas returns one) and its push loop alternately,
//!   best of `MOMENTA_SERIES_REPEAT` (default 3), and prints one line per
//!   statistic: `momenta <stat> series=<ns/value> push=<ns/value>`. With
//!   `MOMENTA_SERIES_OUT=<dir>` each series is written to
//!   `<dir>/<stat>.f64`, for the harness to check against the peers.
//!
//! Every allocation of 4 MiB or more is advised into transparent huge
//! pages, as numpy advises its arrays (its `alloc.c`): on a machine whose
//! huge pages are "madvise" only, a new 80 MB vector otherwise costs as
//! many page faults as values written, which the peers' new arrays do not
//! pay (7 ns a value here, more than any statistic).

extern crate alloc;

mod common;

use common::{config, data};
use criterion::{Criterion, Throughput, black_box};
use momenta::{
    Ema, EwVariance, Momentum, MovingAverage, MovingMinMax, MovingQuantile, MovingStats,
    MovingVariance,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::time::Instant;

/// The system allocator, with large allocations advised into huge pages.
struct HugePages;

/// numpy's threshold.
const HUGE: usize = 4 << 20;

/// Advises the whole pages of `len` bytes at `p` into huge pages (Linux
/// only; elsewhere nothing).
#[cfg(target_os = "linux")]
fn advise(p: *mut u8, len: usize) {
    if p.is_null() || len < HUGE {
        return;
    }
    let offset = 4096 - (p as usize) % 4096;
    // SAFETY: `p..p + len` is an allocation we own; the advised range is
    // inside it, and madvise changes no content, only how pages are
    // backed.
    unsafe {
        libc::madvise(p.add(offset).cast(), len - offset, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_: *mut u8, _: usize) {}

// SAFETY: every call is forwarded to `System` with its own arguments; the
// advice changes no memory contents.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: `p` came from `System` with this layout.
        unsafe { System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        // SAFETY: `p` came from `System` with this layout.
        let q = unsafe { System.realloc(p, layout, size) };
        advise(q, size);
        q
    }
}

#[global_allocator]
static ALLOCATOR: HugePages = HugePages;

/// A statistic the harness knows, by its harness name:
/// `rolling_<stat>_<window>` (the pandas spellings `mean`, `var`, `std`,
/// `min`, `max`, `median`, with pandas' defaults but `min_periods=1`) or
/// `ewm_<stat>_<alpha>` (`mean`, `var`: `adjust=True`, `bias=False`, as
/// pandas' defaults).
#[derive(Clone, Copy, Debug)]
enum Stat {
    /// The memory floor: `out[i] = x[i] − x[i − w]`, the same reads and
    /// writes as a rolling statistic, and nothing else.
    Floor(usize),
    /// `MovingStats`' mean (exact sums, correctly rounded).
    Mean(usize),
    /// `MovingAverage`'s mean (compensated sums).
    Average(usize),
    /// `MovingStats`' sample variance and deviation (exact sums, correctly
    /// rounded).
    Var(usize),
    Std(usize),
    /// `MovingVariance`'s sample variance (compensated sums).
    Variance(usize),
    Min(usize),
    Max(usize),
    Median(usize),
    EwmMean(f64),
    EwmVar(f64),
}

impl Stat {
    fn parse(name: &str) -> Option<Self> {
        let mut parts = name.split('_');
        let (family, what, param) = (parts.next()?, parts.next()?, parts.next()?);
        match family {
            "rolling" => {
                let w: usize = param.parse().ok()?;
                Some(match what {
                    "floor" => Self::Floor(w),
                    "mean" => Self::Mean(w),
                    "average" => Self::Average(w),
                    "var" => Self::Var(w),
                    "variance" => Self::Variance(w),
                    "std" => Self::Std(w),
                    "min" => Self::Min(w),
                    "max" => Self::Max(w),
                    "median" => Self::Median(w),
                    _ => return None,
                })
            }
            "ewm" => {
                let alpha: f64 = param.parse().ok()?;
                match what {
                    "mean" => Some(Self::EwmMean(alpha)),
                    "var" => Some(Self::EwmVar(alpha)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn ema(alpha: f64) -> Ema<f64> {
        Ema::adjusted(Momentum::Factor(alpha)).unwrap()
    }

    fn ew(alpha: f64) -> EwVariance<f64> {
        EwVariance::adjusted(Momentum::Factor(alpha)).unwrap()
    }

    /// The series into a caller's buffer.
    fn into(self, xs: &[f64], out: &mut [f64]) {
        match self {
            Self::Floor(w) => {
                floor(xs, w, out);
                Ok(())
            }
            Self::Mean(w) => MovingStats::new(w).unwrap().mean_series_into(xs, out),
            Self::Average(w) => MovingAverage::new(w).unwrap().mean_series_into(xs, out),
            Self::Var(w) => MovingStats::new(w)
                .unwrap()
                .sample_variance_series_into(xs, out),
            Self::Std(w) => MovingStats::new(w)
                .unwrap()
                .sample_std_dev_series_into(xs, out),
            Self::Variance(w) => MovingVariance::new(w)
                .unwrap()
                .sample_variance_series_into(xs, out),
            Self::Min(w) => MovingMinMax::new(w).unwrap().min_series_into(xs, out),
            Self::Max(w) => MovingMinMax::new(w).unwrap().max_series_into(xs, out),
            Self::Median(w) => MovingQuantile::median(w)
                .unwrap()
                .quantile_series_into(xs, out),
            Self::EwmMean(a) => Self::ema(a).value_series_into(xs, out),
            Self::EwmVar(a) => Self::ew(a).unbiased_variance_series_into(xs, out),
        }
        .unwrap();
    }

    /// The series as a new vector.
    fn series(self, xs: &[f64]) -> Vec<f64> {
        match self {
            Self::Floor(w) => {
                let mut out = vec![0.0; xs.len()];
                floor(xs, w, &mut out);
                out
            }
            Self::Mean(w) => MovingStats::new(w).unwrap().mean_series(xs),
            Self::Average(w) => MovingAverage::new(w).unwrap().mean_series(xs),
            Self::Var(w) => MovingStats::new(w).unwrap().sample_variance_series(xs),
            Self::Std(w) => MovingStats::new(w).unwrap().sample_std_dev_series(xs),
            Self::Variance(w) => MovingVariance::new(w).unwrap().sample_variance_series(xs),
            Self::Min(w) => MovingMinMax::new(w).unwrap().min_series(xs),
            Self::Max(w) => MovingMinMax::new(w).unwrap().max_series(xs),
            Self::Median(w) => MovingQuantile::median(w).unwrap().quantile_series(xs),
            Self::EwmMean(a) => Self::ema(a).value_series(xs),
            Self::EwmVar(a) => Self::ew(a).unbiased_variance_series(xs),
        }
    }

    /// The push loop that gives the same values.
    fn push(self, xs: &[f64]) -> Vec<f64> {
        match self {
            Self::Floor(_) => self.series(xs),
            Self::Mean(w) => pushed(
                xs,
                &mut MovingStats::new(w).unwrap(),
                MovingStats::push,
                MovingStats::mean,
            ),
            Self::Average(w) => {
                let mut a = MovingAverage::new(w).unwrap();
                xs.iter().map(|&x| a.push(black_box(x))).collect()
            }
            Self::Var(w) => pushed(
                xs,
                &mut MovingStats::new(w).unwrap(),
                MovingStats::push,
                MovingStats::sample_variance,
            ),
            Self::Std(w) => pushed(
                xs,
                &mut MovingStats::new(w).unwrap(),
                MovingStats::push,
                MovingStats::sample_std_dev,
            ),
            Self::Variance(w) => pushed(
                xs,
                &mut MovingVariance::new(w).unwrap(),
                MovingVariance::push,
                MovingVariance::sample_variance,
            ),
            Self::Min(w) => pushed(
                xs,
                &mut MovingMinMax::new(w).unwrap(),
                MovingMinMax::push,
                MovingMinMax::min,
            ),
            Self::Max(w) => pushed(
                xs,
                &mut MovingMinMax::new(w).unwrap(),
                MovingMinMax::push,
                MovingMinMax::max,
            ),
            Self::Median(w) => {
                let mut m = MovingQuantile::median(w).unwrap();
                xs.iter().map(|&x| m.push(black_box(x))).collect()
            }
            Self::EwmMean(a) => pushed(xs, &mut Self::ema(a), Ema::push, Ema::value),
            Self::EwmVar(a) => pushed(
                xs,
                &mut Self::ew(a),
                EwVariance::push,
                EwVariance::unbiased_variance,
            ),
        }
    }
}

/// `out[i] = x[i] − x[i − w]` (`x[i]` for the first `w`).
#[inline(never)]
fn floor(xs: &[f64], w: usize, out: &mut [f64]) {
    let w = w.min(xs.len());
    out[..w].copy_from_slice(&xs[..w]);
    for ((o, &new), &old) in out[w..].iter_mut().zip(&xs[w..]).zip(xs) {
        *o = new - old;
    }
}

/// The push loop: push, then read the statistic (NaN for `None`).
fn pushed<S>(
    xs: &[f64],
    state: &mut S,
    push: impl Fn(&mut S, f64),
    read: impl Fn(&S) -> Option<f64>,
) -> Vec<f64> {
    xs.iter()
        .map(|&x| {
            push(state, black_box(x));
            read(state).unwrap_or(f64::NAN)
        })
        .collect()
}

/// Seconds per call of `f`, best of one call.
fn time(f: impl Fn() -> Vec<f64>) -> (f64, Vec<f64>) {
    let start = Instant::now();
    let out = black_box(f());
    (start.elapsed().as_secs_f64(), out)
}

/// The harness mode: see the module documentation.
fn peers(path: &str) {
    let bytes = std::fs::read(path).expect("the data file");
    let xs: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    let repeat: usize = std::env::var("MOMENTA_SERIES_REPEAT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let names = std::env::var("MOMENTA_SERIES_STATS").unwrap_or_default();
    let out_dir = std::env::var("MOMENTA_SERIES_OUT").ok();
    let n = xs.len() as f64;
    let mut buffer = vec![0.0; xs.len()];
    // A new process's first large allocations are slow: their pages are
    // faulted in for the first time (and, with huge pages, memory is
    // compacted for them), which the peers' long-running process paid
    // before its best round. Measured here, 10⁷ values: the memory floor
    // at 36.6 ns a value on the first call, 3.8 from the second. So the
    // output buffer is touched, and as much again allocated, written and
    // freed, before anything is timed.
    buffer.fill(1.0);
    for _ in 0..2 {
        drop(black_box(vec![1.0_f64; xs.len()]));
    }
    // For profiling: only the series into the buffer, no timing.
    let only_into = std::env::var("MOMENTA_SERIES_ONLY").is_ok_and(|s| s == "into");
    for name in names.split(',').filter(|s| !s.is_empty()) {
        let Some(stat) = Stat::parse(name) else {
            println!("momenta {name} unknown");
            continue;
        };
        let (mut best_series, mut best_into, mut best_push) =
            (f64::INFINITY, f64::INFINITY, f64::INFINITY);
        let mut kept = Vec::new();
        for _ in 0..repeat {
            if only_into {
                stat.into(&xs, black_box(&mut buffer));
                continue;
            }
            let (t, out) = time(|| stat.series(&xs));
            best_series = best_series.min(t);
            kept = out;
            let start = Instant::now();
            stat.into(&xs, black_box(&mut buffer));
            best_into = best_into.min(start.elapsed().as_secs_f64());
            let (t, _) = time(|| stat.push(&xs));
            best_push = best_push.min(t);
        }
        println!(
            "momenta {name} series={:.3} into={:.3} push={:.3}",
            best_series / n * 1e9,
            best_into / n * 1e9,
            best_push / n * 1e9
        );
        if let Some(dir) = &out_dir {
            let bytes: Vec<u8> = kept.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(format!("{dir}/{name}.f64"), bytes).expect("the output file");
        }
    }
}

fn series(c: &mut Criterion) {
    let xs = data(1 << 16, 1e6, 11);
    let mut group = c.benchmark_group("series");
    group.throughput(Throughput::Elements(xs.len() as u64));
    for name in [
        "rolling_mean_20",
        "rolling_mean_1000",
        "rolling_average_20",
        "rolling_var_20",
        "rolling_var_1000",
        "rolling_variance_20",
    ] {
        let stat = Stat::parse(name).expect("a known statistic");
        let mut out = vec![0.0; xs.len()];
        group.bench_function(format!("{name} series_into"), |b| {
            b.iter(|| stat.into(black_box(&xs), &mut out))
        });
        group.bench_function(format!("{name} push loop"), |b| {
            b.iter(|| stat.push(black_box(&xs)))
        });
    }
    group.finish();
}

fn main() {
    if let Ok(path) = std::env::var("MOMENTA_SERIES_DATA") {
        peers(&path);
        return;
    }
    let mut c = config();
    series(&mut c);
    c.final_summary();
}
