//! Sequences of operations on `WeightedMean<f64>` and `WeightedVariance<f64>`
//! fed the same pairs: push, extend, the statistics of `f64`, `f32` and
//! `f16` slices merged in, merge with itself, reset and serde round trips.
//!
//! Every operation with a negative, NaN or infinite weight must fail and
//! change nothing. The slice kernels must agree with West's step, pair by
//! pair, on the same batch; `f32` and `f16` slices must give the bits of
//! their values widened to `f64` (the kernels read every element type in
//! the same order), the count of positive weights and the rejection of a
//! bad one included. After every operation: the count is the number of
//! positive weights fed since the last reset, the mean is present exactly
//! when that count is not 0, and while the data are finite and moderate
//! the mean lies in [min, max] of the values with a positive weight, the
//! variance within (max − min)²/4, and Σw near its naive sum.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use momenta::{Merge, WeightedMean, WeightedVariance};
use momenta_fuzz::{Same, Seen, round_trip};

#[derive(Arbitrary, Debug)]
enum Op {
    Push(f64, f64),
    Extend(Vec<(f64, f64)>),
    Slices(Vec<(f64, f64)>),
    SlicesF32(Vec<(f32, f32)>),
    /// Bit patterns of `f16` values and weights.
    SlicesF16(Vec<(u16, u16)>),
    MergeSelf,
    Reset,
    RoundTrip,
}

/// Values below this magnitude are moderate.
const TAME: f64 = 1e50;
/// Positive weights in this range are moderate: sums of `w·d²` stay far
/// from overflow, and `w·d` far from the subnormals.
const TAME_WEIGHTS: (f64, f64) = (1e-100, 1e50);

fn valid(w: f64) -> bool {
    w.is_finite() && w >= 0.0
}

struct State {
    mean: WeightedMean<f64>,
    var: WeightedVariance<f64>,
    /// The values fed with a positive weight; not tame once any value (of
    /// any weight) is non-finite or large, or a weight is out of range.
    seen: Seen,
    /// Positive weights fed.
    positive: u64,
    /// Σw in order, naively.
    weight: f64,
}

/// What a batch of pairs adds to a `State`'s record.
fn record(seen: &mut Seen, positive: &mut u64, weight: &mut f64, pairs: &[(f64, f64)]) {
    for &(x, w) in pairs {
        if w > 0.0 {
            seen.add(x);
            *positive = positive.saturating_add(1);
            *weight += w;
            if !(TAME_WEIGHTS.0..=TAME_WEIGHTS.1).contains(&w) {
                seen.tame = false;
            }
        } else if !x.is_finite() {
            seen.tame = false;
        }
    }
}

/// Whether every value and positive weight of `pairs` is moderate.
fn tame(pairs: &[(f64, f64)]) -> bool {
    pairs.iter().all(|&(x, w)| {
        x.is_finite()
            && x.abs() < TAME
            && (w == 0.0 || (TAME_WEIGHTS.0..=TAME_WEIGHTS.1).contains(&w))
    })
}

fn same_parts(a: &WeightedVariance<f64>, b: &WeightedVariance<f64>) -> bool {
    let (p, q) = (a.to_parts(), b.to_parts());
    p.count == q.count
        && p.total_weight.same(q.total_weight)
        && p.reliability_divisor.same(q.reliability_divisor)
        && p.shift.same(q.shift)
        && p.offset.same(q.offset)
        && p.m2.same(q.m2)
}

fn same_mean_parts(a: &WeightedMean<f64>, b: &WeightedMean<f64>) -> bool {
    let (p, q) = (a.to_parts(), b.to_parts());
    p.count == q.count
        && p.total_weight.same(q.total_weight)
        && p.shift.same(q.shift)
        && p.offset.same(q.offset)
}

/// The slice kernels against West's step on the same batch.
fn kernel_agrees_with_pushes(pairs: &[(f64, f64)], slices: &WeightedVariance<f64>) {
    let pushed = WeightedVariance::<f64>::try_from_iter(pairs.iter().copied())
        .expect("the slices were accepted, so every push is");
    assert_eq!(slices.count(), pushed.count(), "{pairs:?}");
    if !tame(pairs) {
        return;
    }
    let mut seen = Seen::new(TAME);
    seen.add_all(pairs.iter().filter(|p| p.1 > 0.0).map(|p| p.0));
    let w = (slices.total_weight(), pushed.total_weight());
    assert!((w.0 - w.1).abs() <= 1e-12 * w.1, "Σw {w:?}: {pairs:?}");
    match (slices.mean(), pushed.mean()) {
        (Some(a), Some(b)) => assert!(
            (a - b).abs() <= 1e-12 * seen.max_abs,
            "means {a} and {b}: {pairs:?}"
        ),
        (None, None) => {}
        other => panic!("means {other:?}: {pairs:?}"),
    }
    // The reliability divisors: sums of positive terms on both sides.
    let d = (
        slices.to_parts().reliability_divisor,
        pushed.to_parts().reliability_divisor,
    );
    assert!(
        (d.0 - d.1).abs() <= 1e-12 * d.1,
        "divisors {d:?}: {pairs:?}"
    );
    if let (Some(a), Some(b)) = (slices.population_variance(), pushed.population_variance()) {
        // Both carry rounding at the scale of the spread, and of the
        // values' size where the spread is a sliver of it (ε² there: the
        // deviations are taken exactly about a shift from the data).
        let spread = seen.max - seen.min;
        let slack = 1e-10 * spread * spread + 1e-24 * seen.max_abs * seen.max_abs;
        assert!((a - b).abs() <= slack, "variances {a} and {b}: {pairs:?}");
    }
}

impl State {
    /// Merges a batch's statistics (already checked) into the state.
    fn merge_batch(&mut self, pairs: &[(f64, f64)], var: &WeightedVariance<f64>) {
        let (xs, ws): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
        let mean = WeightedMean::<f64>::from_slices(&xs, &ws)
            .expect("the variance took these weights, so the mean does");
        assert_eq!(mean.count(), var.count());
        self.var.merge(var);
        self.mean.merge(&mean);
        record(&mut self.seen, &mut self.positive, &mut self.weight, pairs);
    }

    /// `from_slices` of a batch given as `f64` pairs: rejected exactly when
    /// a weight is invalid (or the sums overflow), and then changing
    /// nothing; else checked against pushes and merged in.
    fn slices(&mut self, pairs: &[(f64, f64)]) -> Option<WeightedVariance<f64>> {
        let (xs, ws): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
        match WeightedVariance::<f64>::from_slices(&xs, &ws) {
            Ok(v) => {
                assert!(
                    ws.iter().all(|&w| valid(w)),
                    "accepted a bad weight: {ws:?}"
                );
                kernel_agrees_with_pushes(pairs, &v);
                self.merge_batch(pairs, &v);
                Some(v)
            }
            Err(_) => {
                let bad = ws.iter().any(|&w| !valid(w));
                let sum: f64 = ws.iter().sum();
                assert!(
                    bad || !sum.is_finite() || sum > 1e307,
                    "refused good weights: {ws:?}"
                );
                None
            }
        }
    }

    /// `from_slices` of narrower values and weights, which must give the
    /// bits of `wide`, the same pairs widened (accepted or refused alike);
    /// `wide` then goes through [`slices`](Self::slices).
    fn narrow_slices<S: momenta::Element + core::fmt::Debug>(
        &mut self,
        xs: &[S],
        ws: &[S],
        wide: &[(f64, f64)],
    ) {
        let narrow = WeightedVariance::<f64>::from_slices(xs, ws);
        let narrow_mean = WeightedMean::<f64>::from_slices(xs, ws);
        assert_eq!(narrow.is_ok(), narrow_mean.is_ok(), "{xs:?} {ws:?}");
        let widened = self.slices(wide);
        assert_eq!(
            narrow.is_ok(),
            widened.is_some(),
            "narrow and wide disagree: {wide:?}"
        );
        if let (Ok(a), Ok(am), Some(b)) = (&narrow, &narrow_mean, &widened) {
            assert!(
                same_parts(a, b),
                "narrow {a:?} against wide {b:?}: {wide:?}"
            );
            let (wx, ww): (Vec<f64>, Vec<f64>) = wide.iter().copied().unzip();
            let bm = WeightedMean::<f64>::from_slices(&wx, &ww).expect("accepted above");
            assert!(
                same_mean_parts(am, &bm),
                "narrow {am:?} against wide {bm:?}"
            );
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Push(x, w) => {
                let before = self.var.clone();
                match self.var.push(*x, *w) {
                    Ok(()) => {
                        assert!(valid(*w), "accepted weight {w}");
                        self.mean
                            .push(*x, *w)
                            .expect("the variance took this weight, so the mean does");
                        record(
                            &mut self.seen,
                            &mut self.positive,
                            &mut self.weight,
                            &[(*x, *w)],
                        );
                    }
                    Err(_) => assert!(same_parts(&before, &self.var), "a failed push changed it"),
                }
            }
            Op::Extend(pairs) => {
                let before = self.var.clone();
                match self.var.try_extend(pairs.iter().copied()) {
                    Ok(()) => {
                        assert!(pairs.iter().all(|p| valid(p.1)), "accepted a bad weight");
                        self.mean
                            .try_extend(pairs.iter().copied())
                            .expect("the variance took these weights, so the mean does");
                        record(&mut self.seen, &mut self.positive, &mut self.weight, pairs);
                    }
                    Err(_) => assert!(same_parts(&before, &self.var), "a failed extend changed it"),
                }
            }
            Op::Slices(pairs) => {
                self.slices(pairs);
            }
            Op::SlicesF32(pairs) => {
                let (xs, ws): (Vec<f32>, Vec<f32>) = pairs.iter().copied().unzip();
                let wide: Vec<(f64, f64)> = pairs
                    .iter()
                    .map(|&(x, w)| (f64::from(x), f64::from(w)))
                    .collect();
                self.narrow_slices(&xs, &ws, &wide);
            }
            Op::SlicesF16(bits) => {
                let xs: Vec<half::f16> = bits.iter().map(|p| half::f16::from_bits(p.0)).collect();
                let ws: Vec<half::f16> = bits.iter().map(|p| half::f16::from_bits(p.1)).collect();
                let wide: Vec<(f64, f64)> = xs
                    .iter()
                    .zip(&ws)
                    .map(|(x, w)| (x.to_f64(), w.to_f64()))
                    .collect();
                self.narrow_slices(&xs, &ws, &wide);
            }
            Op::MergeSelf => {
                self.var.merge(&self.var.clone());
                self.mean.merge(&self.mean.clone());
                self.seen.absorb(&self.seen.clone());
                self.positive = self.positive.saturating_mul(2);
                self.weight *= 2.0;
            }
            Op::Reset => {
                self.var.reset();
                self.mean.reset();
                self.seen.reset();
                self.positive = 0;
                self.weight = 0.0;
            }
            Op::RoundTrip => {
                self.var = round_trip(&self.var, same_parts);
                self.mean = round_trip(&self.mean, same_mean_parts);
            }
        }
    }

    fn check(&self, op: &Op) {
        assert_eq!(self.var.count(), self.positive, "after {op:?}");
        assert_eq!(self.mean.count(), self.positive, "after {op:?}");
        assert_eq!(self.var.mean().is_some(), self.positive > 0, "after {op:?}");
        assert_eq!(
            self.mean.mean().is_some(),
            self.positive > 0,
            "after {op:?}"
        );
        if self.positive < 2 {
            assert_eq!(self.var.reliability_variance(), None, "after {op:?}");
        }
        if !self.seen.tame || self.positive == 0 {
            return;
        }
        let w = self.var.total_weight();
        assert!(
            (w - self.weight).abs() <= 1e-12 * self.weight,
            "Σw {w} against {}",
            self.weight
        );
        let (m, mm) = (
            self.var.mean().unwrap_or(f64::NAN),
            self.mean.mean().unwrap_or(f64::NAN),
        );
        assert!(
            self.seen.brackets(m, 1e-12, 0.0),
            "mean {m} outside the values, after {op:?}"
        );
        assert!(
            self.seen.brackets(mm, 1e-12, 0.0),
            "mean {mm} outside the values, after {op:?}"
        );
        assert!(
            (m - mm).abs() <= 1e-12 * self.seen.max_abs,
            "means {m} and {mm}"
        );
        let v = self.var.population_variance().unwrap_or(f64::NAN);
        assert!(v >= 0.0, "variance {v} after {op:?}");
        assert!(
            v <= self.seen.variance_bound(1e-12, 0.0),
            "variance {v} beyond the bound after {op:?}"
        );
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let mut state = State {
        mean: WeightedMean::new(),
        var: WeightedVariance::new(),
        seen: Seen::new(TAME),
        positive: 0,
        weight: 0.0,
    };
    for op in &ops {
        state.apply(op);
        state.check(op);
    }
});
