//! Sequences of operations on `Mean<f64>`, `Variance<f64>` and
//! `Variance<f32>` fed the same values: push, extend (from f64 and f32
//! slices), merge with a slice's statistics, merge with itself, reset and
//! serde round trips.
//!
//! After every operation: the counts agree with each other and with the
//! number of values fed since the last reset (so they only grow between
//! resets); every statistic is present exactly when it should be; variances
//! are never negative; and while every value is finite and of moderate size,
//! the mean is finite and lies in [min, max] and the variance is finite and
//! within Popoviciu's bound (max − min)²/4, up to rounding.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use momenta::{Float, Kurtosis, Mean, Merge, MinMax, Variance};
use momenta_fuzz::{Same, Seen, round_trip};

#[derive(Arbitrary, Debug)]
enum Op {
    Push(f64),
    Extend(Vec<f64>),
    ExtendF32(Vec<f32>),
    Merge(Vec<f64>),
    MergeSelf,
    Reset,
    RoundTrip,
}

/// Magnitudes below which an f64 accumulator must stay finite.
const TAME_F64: f64 = 1e150;
/// The same for f32: squares and sums of squares must fit.
const TAME_F32: f64 = 1e15;

struct State {
    mean: Mean<f64>,
    var: Variance<f64>,
    var32: Variance<f32>,
    kurt: Kurtosis<f64>,
    extremes: MinMax<f64>,
    /// The values fed to `mean` and `var`.
    seen: Seen,
    /// The values fed to `var32`, as it received them.
    seen32: Seen,
}

impl State {
    fn apply(&mut self, op: &Op) {
        match op {
            Op::Push(x) => {
                self.mean.push(*x);
                self.var.push(*x);
                self.var32.push(*x as f32);
                self.kurt.push(*x);
                self.extremes.push(*x);
                self.seen.add(*x);
                self.seen32.add(f64::from(*x as f32));
            }
            Op::Extend(xs) => {
                self.kurt.extend_from_slice(xs);
                self.extremes.extend_from_slice(xs);
                self.mean.extend_from_slice(xs);
                self.var.extend_from_slice(xs);
                self.var32.extend_from_slice(xs);
                self.seen.add_all(xs.iter().copied());
                // Computed in f64, rounded to f32 at the end: the mean lies
                // between the rounded extremes.
                self.seen32.add_all(xs.iter().map(|&x| f64::from(x as f32)));
            }
            Op::ExtendF32(xs) => {
                self.kurt.extend_from_slice(xs);
                self.extremes.extend_from_slice(xs);
                self.mean.extend_from_slice(xs);
                self.var.extend_from_slice(xs);
                self.var32.extend_from_slice(xs);
                self.seen.add_all(xs.iter().map(|&x| f64::from(x)));
                self.seen32.add_all(xs.iter().map(|&x| f64::from(x)));
            }
            Op::Merge(xs) => {
                self.kurt.merge(&Kurtosis::from_slice(xs));
                self.extremes.merge(&MinMax::from_slice(xs));
                self.mean.merge(&Mean::from_slice(xs));
                self.var.merge(&Variance::from_slice(xs));
                self.var32.merge(&Variance::<f32>::from_slice(xs));
                self.seen.add_all(xs.iter().copied());
                self.seen32.add_all(xs.iter().map(|&x| f64::from(x as f32)));
            }
            Op::MergeSelf => {
                self.kurt.merge(&self.kurt.clone());
                self.extremes.merge(&self.extremes.clone());
                self.mean.merge(&self.mean.clone());
                self.var.merge(&self.var.clone());
                self.var32.merge(&self.var32.clone());
                self.seen.absorb(&self.seen.clone());
                self.seen32.absorb(&self.seen32.clone());
            }
            Op::Reset => {
                self.kurt.reset();
                self.extremes.reset();
                self.mean.reset();
                self.var.reset();
                self.var32.reset();
                self.seen.reset();
                self.seen32.reset();
            }
            Op::RoundTrip => {
                self.mean = round_trip(&self.mean, |a, b| {
                    a.count() == b.count() && a.mean().same(b.mean())
                });
                self.var = round_trip(&self.var, same_variance);
                self.var32 = round_trip(&self.var32, same_variance);
                self.kurt = round_trip(&self.kurt, |a, b| a.to_parts().same_parts(&b.to_parts()));
                self.extremes = round_trip(&self.extremes, |a, b| {
                    a.count() == b.count() && a.min().same(b.min()) && a.max().same(b.max())
                });
            }
        }
    }

    fn check(&self, before: u64, op: &Op) {
        let n = self.mean.count();
        assert_eq!(n, self.var.count(), "Mean and Variance counts differ");
        assert_eq!(n, self.var32.count(), "f64 and f32 counts differ");
        assert_eq!(n, self.seen.count, "count is not the number of values");
        if !matches!(op, Op::Reset) {
            assert!(n >= before, "count fell from {before} to {n}");
        }
        assert_eq!(self.mean.mean().is_some(), n > 0);
        if let Some(m) = self.mean.mean() {
            check_mean(m, n, &self.seen, f64::EPSILON);
        }
        check_variance(&self.var, &self.seen, TAME_F64, f64::EPSILON);
        assert_eq!(n, self.kurt.count(), "Kurtosis count differs");
        assert_eq!(n, self.extremes.count(), "MinMax count differs");
        assert_eq!(
            self.kurt.sample_kurtosis().is_some(),
            n > 3 && self.kurt.kurtosis().is_some()
        );
        // The extremes are exactly those seen (NaN-free runs), and they
        // bracket the mean.
        if let (Some(lo), Some(hi)) = (self.extremes.min(), self.extremes.max()) {
            if !lo.is_nan() {
                assert_eq!((lo, hi), (self.seen.min, self.seen.max), "MinMax extremes");
            }
        }
        check_variance(&self.var32, &self.seen32, TAME_F32, f64::from(f32::EPSILON));
    }
}

/// Parts compared field by field, NaN-aware.
trait SameParts {
    fn same_parts(&self, other: &Self) -> bool;
}

impl SameParts for momenta::KurtosisParts {
    fn same_parts(&self, o: &Self) -> bool {
        self.count == o.count
            && self.shift.same(o.shift)
            && self.offset.same(o.offset)
            && self.m2.same(o.m2)
            && self.m3.same(o.m3)
            && self.m4.same(o.m4)
    }
}

fn same_variance<F: Float + Same>(a: &Variance<F>, b: &Variance<F>) -> bool {
    a.count() == b.count()
        && a.mean().same(b.mean())
        && a.sum_squared_deviations().same(b.sum_squared_deviations())
        && a.population_variance().same(b.population_variance())
        && a.sample_variance().same(b.sample_variance())
}

/// Rounding slack relative to the largest magnitude: a few units of
/// rounding per value (per merge for huge counts).
fn slack(n: u64, eps: f64) -> f64 {
    64.0 * eps * (n.min(1 << 20) as f64 + 4.0)
}

/// A few of the smallest subnormals of the float type whose epsilon is
/// `eps`: results that round to subnormals are off by that much.
fn tiny(eps: f64) -> f64 {
    if eps == f64::EPSILON {
        4.0 * f64::from_bits(1)
    } else {
        4.0 * f64::from(f32::from_bits(1))
    }
}

fn check_mean(m: f64, n: u64, seen: &Seen, eps: f64) {
    if seen.tame {
        assert!(m.is_finite(), "mean {m:e} of tame values is not finite");
        assert!(
            seen.brackets(m, slack(n, eps), tiny(eps)),
            "mean {m:e} outside [{:e}, {:e}]",
            seen.min,
            seen.max
        );
    }
}

fn check_variance<F: Float>(v: &Variance<F>, seen: &Seen, tame: f64, eps: f64) {
    let n = v.count();
    assert_eq!(v.mean().is_some(), n > 0);
    assert_eq!(v.population_variance().is_some(), n > 0);
    assert_eq!(v.sum_squared_deviations().is_some(), n > 0);
    assert_eq!(v.sample_variance().is_some(), n > 1);
    assert_eq!(v.sample_std_dev().is_some(), n > 1);
    for s in [
        v.population_variance(),
        v.sample_variance(),
        v.sum_squared_deviations(),
        v.population_std_dev(),
        v.sample_std_dev(),
    ]
    .into_iter()
    .flatten()
    {
        let s = s.as_f64();
        assert!(s >= 0.0 || s.is_nan(), "negative spread {s}");
    }
    if let Some(m) = v.mean() {
        check_mean(m.as_f64(), n, seen, eps);
    }
    // M2 = n·variance must fit too: (tame)²·n, well below the float's max.
    let m2_fits = seen.max_abs * seen.max_abs * (n as f64) < tame * tame;
    if let (Some(var), true, true) = (v.population_variance(), seen.tame, m2_fits) {
        let var = var.as_f64();
        assert!(var.is_finite(), "variance {var:e} of tame values");
        let bound = seen.variance_bound(slack(n, eps), tiny(eps));
        assert!(
            var <= bound,
            "variance {var:e} above (max − min)²/4 = {bound:e}"
        );
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut state = State {
        mean: Mean::new(),
        var: Variance::new(),
        var32: Variance::new(),
        kurt: Kurtosis::new(),
        extremes: MinMax::new(),
        seen: Seen::new(TAME_F64),
        seen32: Seen::new(TAME_F32),
    };
    for op in &ops {
        let before = state.mean.count();
        state.apply(op);
        state.check(before, op);
    }
});
