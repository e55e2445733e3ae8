//! Data whose first value is not typical of the rest: an outlier first, an
//! outlier at the start of every kernel block, a level change. The rule: on
//! any order of the data, no statistic is less accurate than the same
//! statistic computed by a naive two-pass over the values (sum, divide,
//! then sum the squared deviations from that mean).
//!
//! Every value is an integer multiple of 2⁻²⁰, so the exact mean and M2
//! follow from integer sums (`i128`); the reference is that exact value
//! rounded to `f64` (within an ulp or two).

use crate::support::{BLOCK_F64, SplitMix, two_pass};
use momenta::batchnorm::{BatchStats, Layout};
use momenta::{Mean, Merge, Variance};

const SCALE: f64 = (1u64 << 20) as f64;

/// Values `k · 2⁻²⁰`, kept with their integers.
struct Data {
    ks: Vec<i64>,
    xs: Vec<f64>,
}

impl Data {
    fn new(ks: Vec<i64>) -> Self {
        let xs = ks.iter().map(|&k| k as f64 / SCALE).collect();
        Self { ks, xs }
    }

    /// `n` values of `U(0, 1)` on the 2⁻²⁰ grid.
    fn uniform(rng: &mut SplitMix, n: usize) -> Vec<i64> {
        (0..n).map(|_| (rng.next_u64() >> 44) as i64).collect()
    }

    /// The exact mean and M2, each rounded to `f64` (about an ulp).
    fn exact(&self) -> (f64, f64) {
        exact(&self.ks)
    }
}

/// Exact mean and M2 of `k · 2⁻²⁰` values, rounded to `f64`. M2 is
/// `Σ(k − c)² − (Σ(k − c))²/n` over `2⁴⁰` with `c` the integer nearest the
/// mean: every term fits `i128` for the data of these tests, and the
/// correction term is below one unit.
fn exact(ks: &[i64]) -> (f64, f64) {
    let n = ks.len() as i128;
    let s: i128 = ks.iter().map(|&k| i128::from(k)).sum();
    let c = s / n;
    let (mut d1, mut d2) = (0_i128, 0_i128);
    for &k in ks {
        let d = i128::from(k) - c;
        d1 += d;
        d2 += d * d;
    }
    let mean = (c as f64 + d1 as f64 / n as f64) / SCALE;
    let m2 = (d2 as f64 - (d1 * d1) as f64 / n as f64) / (SCALE * SCALE);
    (mean, m2)
}

fn ulp(x: f64) -> f64 {
    f64::EPSILON * x.abs()
}

/// `got` is no further from `exact` than the naive result, up to a factor
/// of 2 and 8 ulps.
#[track_caller]
fn no_worse(what: &str, got: f64, naive: f64, exact: f64) {
    let (err, naive_err) = ((got - exact).abs(), (naive - exact).abs());
    let bound = 2.0 * naive_err + 8.0 * ulp(exact);
    assert!(
        err <= bound,
        "{what}: error {:.3e} relative (naive two-pass {:.3e}), got {got:e}, exact {exact:e}",
        err / exact.abs(),
        naive_err / exact.abs()
    );
}

/// Mean and M2 of a `Variance` checked against the exact values and the
/// naive two-pass.
#[track_caller]
fn check(what: &str, v: &Variance<f64>, data: &Data) {
    let (mean, m2) = data.exact();
    let (naive_mean, naive_m2) = two_pass(&data.xs);
    assert_eq!(v.count(), data.xs.len() as u64, "{what}: count");
    no_worse(&format!("{what} mean"), v.mean().unwrap(), naive_mean, mean);
    no_worse(
        &format!("{what} M2"),
        v.sum_squared_deviations().unwrap(),
        naive_m2,
        m2,
    );
}

/// `head` followed by 10⁶ values of `U(0, 1)`.
fn after(head: &[i64], seed: u64) -> Data {
    let mut ks = head.to_vec();
    ks.extend(Data::uniform(&mut SplitMix(seed), 1_000_000));
    Data::new(ks)
}

fn pushed(xs: &[f64]) -> Variance<f64> {
    let mut v = Variance::new();
    for &x in xs {
        v.push(x);
    }
    v
}

#[test]
fn push_after_an_outlier_first() {
    for outlier in [1e12, -1e12, 1e9, 3e15] {
        let data = after(&[(outlier * SCALE) as i64], 1);
        check(
            &format!("push, {outlier:e} first"),
            &pushed(&data.xs),
            &data,
        );
    }
}

#[test]
fn push_after_a_level_change() {
    // A long level of 1e9, then data near 0.
    let head = vec![(1e9 * SCALE) as i64; 100_000];
    let data = after(&head, 2);
    check("push, level change", &pushed(&data.xs), &data);
    // And the reverse: near 0 for a while, then a level of 1e6.
    let mut ks = Data::uniform(&mut SplitMix(3), 1000);
    ks.extend(
        Data::uniform(&mut SplitMix(4), 1_000_000)
            .iter()
            .map(|k| k + (1e6 * SCALE) as i64),
    );
    let data = Data::new(ks);
    check("push, level rise", &pushed(&data.xs), &data);
}

#[test]
fn merge_of_an_outlier_with_the_bulk() {
    let data = after(&[(1e12 * SCALE) as i64], 5);
    let (head, bulk) = data.xs.split_at(1);
    // The single outlier merged with the bulk, both ways round, and with the
    // bulk pushed one by one.
    let mut a = Variance::<f64>::from_slice(head);
    a.merge(&Variance::from_slice(bulk));
    check("outlier.merge(bulk)", &a, &data);
    let mut b = Variance::<f64>::from_slice(head);
    b.merge(&pushed(bulk));
    check("outlier.merge(pushed bulk)", &b, &data);
    // The bulk first, the outlier merged last is a permutation: compare with
    // the exact statistics of the same multiset.
    let mut c = Variance::<f64>::from_slice(bulk);
    c.merge(&Variance::from_slice(head));
    check("bulk.merge(outlier)", &c, &data);
}

/// 10⁶ values of `U(0, 1)` (300 000 without `MOMENTA_LONG_TESTS`: five
/// blocks) with `outlier` as the first value of every kernel block
/// ([`BLOCK_F64`] values).
fn outlier_per_block(outlier: f64, seed: u64) -> Data {
    let n = crate::support::long::size(1_000_000, 300_000);
    let mut ks = Data::uniform(&mut SplitMix(seed), n);
    for k in ks.iter_mut().step_by(BLOCK_F64) {
        *k = (outlier * SCALE) as i64;
    }
    Data::new(ks)
}

#[test]
fn slices_with_an_outlier_first_in_every_block() {
    for outlier in [1e10, 1e6, -1e8] {
        let data = outlier_per_block(outlier, 6);
        check(
            &format!("from_slice, {outlier:e}"),
            &Variance::from_slice(&data.xs),
            &data,
        );
        check(
            &format!("par_from_slice, {outlier:e}"),
            &Variance::par_from_slice(&data.xs),
            &data,
        );
        let (mean, _) = data.exact();
        let (naive, _) = two_pass(&data.xs);
        for (route, m) in [
            ("Mean::from_slice", Mean::<f64>::from_slice(&data.xs)),
            (
                "Mean::par_from_slice",
                Mean::<f64>::par_from_slice(&data.xs),
            ),
        ] {
            no_worse(
                &format!("{route}, {outlier:e}"),
                m.mean().unwrap(),
                naive,
                mean,
            );
        }
    }
}

#[test]
fn slices_of_f32_with_an_outlier_first_in_every_block() {
    // 1e6 first, then values k/64 for k < 64: every value is exact in f32.
    let mut rng = SplitMix(7);
    let mut ks: Vec<i64> = (0..1_000_000)
        .map(|_| ((rng.next_u64() >> 58) as i64) << 14)
        .collect();
    for k in ks.iter_mut().step_by(BLOCK_F64) {
        *k = (1e6 * SCALE) as i64;
    }
    let data = Data::new(ks);
    let xs32: Vec<f32> = data.xs.iter().map(|&x| x as f32).collect();
    assert!(xs32.iter().zip(&data.xs).all(|(&a, &b)| f64::from(a) == b));
    check("f32 from_slice", &Variance::from_slice(&xs32), &data);
}

/// One channel's statistics from `BatchStats`, against the exact values
/// and the naive two-pass over that channel's values.
#[track_caller]
fn check_channel(what: &str, stats: &BatchStats<f64>, c: usize, data: &Data) {
    let (mean, m2) = data.exact();
    let (naive_mean, naive_m2) = two_pass(&data.xs);
    no_worse(&format!("{what} mean"), stats.mean()[c], naive_mean, mean);
    no_worse(
        &format!("{what} M2"),
        stats.sum_squared_deviations()[c],
        naive_m2,
        m2,
    );
}

#[test]
fn batch_stats_with_an_outlier_first_in_a_channel() {
    // NCHW 4096×1×16×16 and NHWC 1×512×512×1: one channel whose first
    // value is 1e6.
    for (name, layout) in [
        ("NCHW", Layout::nchw(4096, 1, 16, 16).unwrap()),
        ("NHWC", Layout::nhwc(1, 512, 512, 1).unwrap()),
    ] {
        let mut ks = Data::uniform(&mut SplitMix(8), layout.len());
        ks[0] = (1e6 * SCALE) as i64;
        let data = Data::new(ks);
        let seq = BatchStats::<f64>::compute(&data.xs, layout).unwrap();
        check_channel(name, &seq, 0, &data);
        let par = BatchStats::<f64>::par_compute(&data.xs, layout).unwrap();
        check_channel(&format!("{name} parallel"), &par, 0, &data);
    }
}

#[test]
fn batch_stats_with_outliers_in_some_channels() {
    // NHWC with 3 channels: channel 1 has an outlier at the start of its
    // every 4096th row; channels 0 and 2 are ordinary.
    let rows = 300_000;
    let mut rng = SplitMix(9);
    let mut channels: Vec<Vec<i64>> = (0..3).map(|_| Data::uniform(&mut rng, rows)).collect();
    for k in channels[1].iter_mut().step_by(BLOCK_F64) {
        *k = (-1e9 * SCALE) as i64;
    }
    let xs: Vec<f64> = (0..rows)
        .flat_map(|r| channels.iter().map(move |ch| ch[r] as f64 / SCALE))
        .collect();
    let layout = Layout::nhwc(1, rows, 1, 3).unwrap();
    let stats = BatchStats::<f64>::compute(&xs, layout).unwrap();
    for (c, ks) in channels.into_iter().enumerate() {
        check_channel(&format!("NHWC channel {c}"), &stats, c, &Data::new(ks));
    }
}
