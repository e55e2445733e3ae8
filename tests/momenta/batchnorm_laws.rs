//! The laws under load: 10 000 quickcheck cases each (1000 without
//! `MOMENTA_LONG_TESTS`) for the BatchNorm merge, the thread-count
//! independence of the parallel paths, NCHW/NHWC equivalence, and
//! checkpoint–restore–continue for every state type.
//! (`laws.rs` holds the same scale for `Mean`, `Variance` and bundles.)
#![cfg(all(feature = "serde", feature = "rayon"))]

use momenta::batchnorm::{BatchStats, BnConfig, Layout, RunningStats};
use momenta::{Ema, EwVariance, Mean, Merge, Momentum, MovingAverage, MovingVariance, Variance};
use quickcheck::{Arbitrary, Gen, QuickCheck};
use std::sync::OnceLock;

/// Cases per law: 10 000 with `MOMENTA_LONG_TESTS` (CI), 1000 by default.
fn cases() -> u64 {
    crate::support::long::size(10_000, 1000)
}

fn check<T: quickcheck::Testable>(law: T) {
    QuickCheck::new()
        .tests(cases())
        .max_tests(cases() * 10)
        .quickcheck(law);
}

/// A small tensor: shape `[n, c, hw]` and finite values with an offset.
#[derive(Clone, Debug)]
struct Tensor {
    n: usize,
    c: usize,
    hw: usize,
    xs: Vec<f64>,
}

impl Arbitrary for Tensor {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = usize::arbitrary(g) % 6 + 1;
        let c = usize::arbitrary(g) % 5 + 1;
        let hw = usize::arbitrary(g) % 7 + 1;
        let offset = *g.choose(&[0.0, -3.5, 1e6]).unwrap_or(&0.0);
        let xs = (0..n * c * hw)
            .map(|_| offset + f64::from(i16::arbitrary(g)) / 128.0)
            .collect();
        Tensor { n, c, hw, xs }
    }
}

/// Finite values of moderate size, any length.
#[derive(Clone, Debug)]
struct Stream(Vec<f64>, usize);

impl Arbitrary for Stream {
    fn arbitrary(g: &mut Gen) -> Self {
        let xs: Vec<i32> = Arbitrary::arbitrary(g);
        let cut = usize::arbitrary(g) % (xs.len() + 1);
        Stream(xs.into_iter().map(|k| f64::from(k) / 1024.0).collect(), cut)
    }
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * scale.max(1.0)
}

fn same_stats(a: &BatchStats<f64>, b: &BatchStats<f64>, scale: f64) -> bool {
    a.channels() == b.channels()
        && a.count() == b.count()
        && a.mean()
            .iter()
            .zip(b.mean())
            .all(|(x, y)| close(*x, *y, scale))
        && a.variance()
            .iter()
            .zip(b.variance())
            .all(|(x, y)| close(*x, y, scale * scale))
}

#[test]
fn batch_stats_of_shards_merge_into_the_whole() {
    fn law(t: Tensor, cut: usize) -> bool {
        let per_image = t.c * t.hw;
        let k = cut % (t.n + 1);
        let (a, b) = t.xs.split_at(k * per_image);
        let whole =
            BatchStats::<f64>::compute(&t.xs, Layout::ncl(t.n, t.c, t.hw).unwrap()).unwrap();
        let mut left = BatchStats::<f64>::compute(a, Layout::ncl(k, t.c, t.hw).unwrap()).unwrap();
        let right =
            BatchStats::<f64>::compute(b, Layout::ncl(t.n - k, t.c, t.hw).unwrap()).unwrap();
        left.merge(&right);
        same_stats(&left, &whole, 1e6)
    }
    check(law as fn(Tensor, usize) -> bool);
}

#[test]
fn nchw_and_nhwc_of_the_same_data_agree() {
    fn law(t: Tensor) -> bool {
        // Transpose [n, c, hw] into [n, hw, c].
        let mut nhwc = vec![0.0; t.xs.len()];
        for i in 0..t.n {
            for ch in 0..t.c {
                for p in 0..t.hw {
                    nhwc[(i * t.hw + p) * t.c + ch] = t.xs[(i * t.c + ch) * t.hw + p];
                }
            }
        }
        let a =
            BatchStats::<f64>::compute(&t.xs, Layout::nchw(t.n, t.c, t.hw, 1).unwrap()).unwrap();
        let b =
            BatchStats::<f64>::compute(&nhwc, Layout::nhwc(t.n, t.hw, 1, t.c).unwrap()).unwrap();
        same_stats(&a, &b, 1e6)
    }
    check(law as fn(Tensor) -> bool);
}

fn pools() -> &'static [rayon::ThreadPool; 3] {
    static POOLS: OnceLock<[rayon::ThreadPool; 3]> = OnceLock::new();
    POOLS.get_or_init(|| {
        [1, 2, 16].map(|n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .expect("a thread pool")
        })
    })
}

#[test]
fn parallel_paths_do_not_depend_on_the_thread_count() {
    fn law(s: Stream, t: Tensor) -> bool {
        // Long enough to span several kernel blocks.
        let xs: Vec<f64> = s.0.iter().cycle().take(s.0.len() * 40).copied().collect();
        let layout = Layout::ncl(t.n, t.c, t.hw).unwrap();
        let runs: Vec<_> = pools()
            .iter()
            .map(|p| {
                p.install(|| {
                    (
                        Variance::<f64>::par_from_slice(&xs),
                        Mean::<f64>::par_from_slice(&xs),
                        BatchStats::<f64>::par_compute(&t.xs, layout).unwrap(),
                    )
                })
            })
            .collect();
        let sequential = (
            Variance::<f64>::from_slice(&xs),
            Mean::<f64>::from_slice(&xs),
            BatchStats::<f64>::compute(&t.xs, layout).unwrap(),
        );
        runs.iter().all(|r| *r == sequential)
    }
    check(law as fn(Stream, Tensor) -> bool);
}

/// Serialize after the first `cut` values, restore, and feed the rest to
/// both; `same` compares the two after every value.
fn restore_continues<T>(
    xs: &[f64],
    cut: usize,
    mut live: T,
    push: impl Fn(&mut T, f64),
    same: impl Fn(&T, &T) -> bool,
) -> bool
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let (first, rest) = xs.split_at(cut.min(xs.len()));
    for &x in first {
        push(&mut live, x);
    }
    let mut restored: T = serde_json::from_str(&serde_json::to_string(&live).unwrap()).unwrap();
    rest.iter().all(|&x| {
        push(&mut live, x);
        push(&mut restored, x);
        same(&live, &restored)
    })
}

#[test]
fn checkpoints_restore_and_continue() {
    fn law(s: Stream, window: u8, m: u16) -> bool {
        let xs = &s.0;
        let momentum = Momentum::Factor(f64::from(m) / f64::from(u16::MAX));
        let window = usize::from(window % 16) + 1;
        let bits = |a: Option<f64>, b: Option<f64>| a.map(f64::to_bits) == b.map(f64::to_bits);
        let near = |a: Option<f64>, b: Option<f64>, scale: f64| match (a, b) {
            (Some(a), Some(b)) => close(a, b, scale),
            (a, b) => a == b,
        };
        restore_continues(xs, s.1, Mean::new(), |a, x| a.push(x), |a, b| a == b)
            && restore_continues(xs, s.1, Variance::new(), |a, x| a.push(x), |a, b| a == b)
            && restore_continues(xs, s.1, Ema::new(momentum).unwrap(), |a, x| a.push(x), |a, b| bits(a.value(), b.value()))
            && restore_continues(
                xs,
                s.1,
                EwVariance::new(momentum).unwrap(),
                |a, x| a.push(x),
                |a, b| bits(a.mean(), b.mean()) && bits(a.variance(), b.variance()),
            )
            // A window is stored as its values; the sums are rebuilt on
            // restore, so the statistics agree up to rounding.
            && restore_continues(
                xs,
                s.1,
                MovingAverage::new(window).unwrap(),
                |a, x| {
                    a.push(x);
                },
                |a, b| a == b && near(a.mean(), b.mean(), 1e6),
            )
            && restore_continues(
                xs,
                s.1,
                MovingVariance::new(window).unwrap(),
                |a, x| a.push(x),
                |a, b| near(a.population_variance(), b.population_variance(), 1e12),
            )
    }
    check(law as fn(Stream, u8, u16) -> bool);
}

#[test]
fn running_stats_restore_and_continue_bit_for_bit() {
    fn law(t: Tensor, steps: u8) -> bool {
        let layout = Layout::ncl(t.n, t.c, t.hw).unwrap();
        let batch = BatchStats::<f64>::compute(&t.xs, layout).unwrap();
        [BnConfig::pytorch(), BnConfig::keras(), BnConfig::tf_fused()]
            .into_iter()
            .all(|config| {
                let mut live = RunningStats::new(t.c, config);
                let mut ok = true;
                for _ in 0..steps % 4 {
                    ok &= live.update(&batch).is_ok() || t.n * t.hw < 2;
                }
                let mut restored: RunningStats<f64> =
                    serde_json::from_str(&serde_json::to_string(&live).unwrap()).unwrap();
                let (a, b) = (live.update(&batch), restored.update(&batch));
                ok && a.is_ok() == b.is_ok() && live == restored
            })
    }
    check(law as fn(Tensor, u8) -> bool);
}
