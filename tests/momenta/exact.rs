//! Mean and variance against exact rational arithmetic on small data.

use momenta::{Mean, Merge, Variance};

/// A fraction p/q with q > 0, reduced.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Q(i128, i128);

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

impl Q {
    fn new(p: i128, q: i128) -> Self {
        let g = gcd(p, q).max(1);
        let s = if q < 0 { -1 } else { 1 };
        Q(s * p / g, s * q / g)
    }
    /// Correctly rounded when both parts are below 2^53.
    fn to_f64(self) -> f64 {
        self.0 as f64 / self.1 as f64
    }
}

/// Exact mean and M2 = Σ(x − x̄)² of values k/d (integers over a common
/// denominator): mean = Σk/(n·d), M2 = (nΣk² − (Σk)²)/(n·d²).
fn exact(ks: &[i64], d: i128) -> (Q, Q) {
    let n = ks.len() as i128;
    let s: i128 = ks.iter().map(|&k| i128::from(k)).sum();
    let s2: i128 = ks.iter().map(|&k| i128::from(k) * i128::from(k)).sum();
    (Q::new(s, n * d), Q::new(n * s2 - s * s, n * d * d))
}

fn within_ulps(got: f64, want: f64, ulps: f64) -> bool {
    (got - want).abs() <= ulps * f64::EPSILON * want.abs().max(f64::MIN_POSITIVE)
}

const CASES: &[&[i64]] = &[
    &[1, 2, 3, 4],
    &[2, 4, 4, 4, 5, 5, 7, 9],
    &[-7, 0, 7, 1, 1, 1, 100],
    &[3, 3, 3],
    &[1_000_000_001, 1_000_000_002, 1_000_000_004, 999_999_999],
];

#[test]
fn push_from_slice_and_merge_match_exact_fractions() {
    for (i, ks) in CASES.iter().enumerate() {
        for d in [1_i128, 3, 10, 1024] {
            let xs: Vec<f64> = ks.iter().map(|&k| (k as f64) / (d as f64)).collect();
            // k/d for d = 3 or 10 is not exact in f64: use exact inputs only.
            if xs
                .iter()
                .zip(ks.iter())
                .any(|(x, &k)| Q::new(k as i128, d) != q_of(*x))
            {
                continue;
            }
            let (mean, m2) = exact(ks, d);
            let n = ks.len() as i128;
            let pop = Q::new(m2.0, m2.1 * n);
            let sample = Q::new(m2.0, m2.1 * (n - 1));

            let mut pushed = Variance::new();
            xs.iter().for_each(|&x| pushed.push(x));
            let sliced = Variance::<f64>::from_slice(&xs);
            let (left, right) = xs.split_at(xs.len() / 2);
            let mut merged = Variance::<f64>::from_slice(left);
            merged.merge(&Variance::from_slice(right));

            for (how, v) in [("push", &pushed), ("slice", &sliced), ("merge", &merged)] {
                assert!(
                    within_ulps(v.mean().unwrap(), mean.to_f64(), 2.0),
                    "case {i} d {d} {how}: mean {:?} vs {:?}",
                    v.mean(),
                    mean
                );
                assert!(
                    within_ulps(v.population_variance().unwrap(), pop.to_f64(), 8.0),
                    "case {i} d {d} {how}: var {:?} vs {:?}",
                    v.population_variance(),
                    pop
                );
                assert!(within_ulps(
                    v.sample_variance().unwrap(),
                    sample.to_f64(),
                    8.0
                ));
            }
            let m: Mean<f64> = xs.iter().collect();
            assert!(within_ulps(m.mean().unwrap(), mean.to_f64(), 2.0));
        }
    }
}

/// The exact fraction an f64 holds, when its denominator fits.
fn q_of(x: f64) -> Q {
    let mut q = 1_i128;
    let mut v = x;
    while v.fract() != 0.0 && q < (1 << 60) {
        v *= 2.0;
        q *= 2;
    }
    Q::new(v as i128, q)
}

#[test]
fn sample_variance_is_none_below_two_values() {
    let v: Variance<f64> = [5.0].into_iter().collect();
    assert_eq!(v.population_variance(), Some(0.0));
    assert_eq!(v.sample_variance(), None);
    assert_eq!(v.sample_std_dev(), None);
    let e = Variance::<f32>::new();
    assert_eq!((e.mean(), e.population_variance()), (None, None));
}

#[test]
fn f32_data_has_f64_accurate_statistics() {
    // V8: 1000 + [0.1, 0.2, 0.3, 0.4] stored as f32.
    let xs: Vec<f32> = [0.1_f32, 0.2, 0.3, 0.4]
        .iter()
        .map(|d| 1000.0 + d)
        .collect();
    let ks: Vec<i64> = xs
        .iter()
        .map(|&x| (f64::from(x) * 65536.0) as i64)
        .collect();
    let (_, m2) = exact(&ks, 65536);
    let pop = Q::new(m2.0, m2.1 * 4).to_f64();
    assert!((pop - 0.012_503_052_13).abs() < 1e-11);
    let v = Variance::<f64>::from_slice(&xs);
    assert!(within_ulps(v.population_variance().unwrap(), pop, 4.0));
    // In f32 the accumulator still keeps the digits, thanks to the shift.
    let v32 = Variance::<f32>::from_slice(&xs);
    assert!((f64::from(v32.population_variance().unwrap()) - pop).abs() < 1e-7 * pop * 10.0);
}
