//! Sequences of operations on an `Ema<f64>`, an `EwVariance<f64>` and an
//! `EwCovariance<f64>` fed `(x, x)`, that share a momentum drawn from the
//! input (either convention, or cumulative; also through `from_span` and
//! `from_half_life`), a weighting (recursive or adjusted), a NaN policy and
//! a `min_periods`, maybe with an initial value, maybe bias-corrected;
//! values come by `push`, `extend_from_slice`, `push_at` (a clock) and
//! `push_after` (a time step).
//!
//! Constructors must return `Err` exactly for an invalid momentum (outside
//! [0, 1] or NaN) or a non-finite initial value, never panic; `push_at`
//! exactly for a time that is NaN, ±∞ or before the clock, `push_after` for
//! a step that is NaN or negative, and an `Err` changes nothing. After
//! every operation: the counts equal the number of values that entered
//! since the last reset (NaN skipped under a skipping policy); the value is
//! present exactly when it should be (`min_periods` included); the
//! variance is never negative; the covariance of `(x, x)` is the variance,
//! bit for bit; and while every input is finite and of moderate size, the
//! average lies in [min, max] of the inputs (and the initial value), the
//! variance is finite and within Popoviciu's bound, and the seeded `Ema`
//! and `EwVariance` agree.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use momenta::{Ema, EwCovariance, EwVariance, Momentum, NanPolicy};
use momenta_fuzz::{Same, Seen, round_trip};

#[derive(Arbitrary, Debug)]
enum MomentumSpec {
    /// Any float: mostly invalid.
    Decay(f64),
    Factor(f64),
    /// `k / 65535`: always valid.
    DecayRatio(u16),
    FactorRatio(u16),
    Cumulative,
    Span(f64),
    HalfLife(f64),
}

#[derive(Arbitrary, Debug)]
enum Op {
    Push(f64),
    Extend(Vec<f64>),
    PushAt(f64, f64),
    PushAfter(f64, f64),
    Reset,
    RoundTrip,
}

#[derive(Arbitrary, Debug)]
struct Input {
    momentum: MomentumSpec,
    initial: Option<f64>,
    bias_correction: bool,
    adjusted: bool,
    nan_policy: u8,
    min_periods: u8,
    ops: Vec<Op>,
}

const TAME: f64 = 1e150;
/// A few of the smallest subnormals: results that round to subnormals.
const TINY: f64 = 4.0 * 4.9e-324;

fn in_unit_interval(m: f64) -> bool {
    (0.0..=1.0).contains(&m)
}

/// The momentum the input asks for, or `None` when it is invalid (after
/// checking that the constructors say so).
fn momentum(spec: &MomentumSpec) -> Option<Momentum<f64>> {
    let (m, valid) = match *spec {
        MomentumSpec::Decay(b) => (Momentum::Decay(b), in_unit_interval(b)),
        MomentumSpec::Factor(a) => (Momentum::Factor(a), in_unit_interval(a)),
        MomentumSpec::DecayRatio(k) => (Momentum::Decay(f64::from(k) / 65535.0), true),
        MomentumSpec::FactorRatio(k) => (Momentum::Factor(f64::from(k) / 65535.0), true),
        MomentumSpec::Cumulative => (Momentum::Cumulative, true),
        MomentumSpec::Span(s) => {
            let r = Momentum::from_span(s);
            assert_eq!(r.is_ok(), s >= 1.0 && s.is_finite(), "from_span({s})");
            (r.ok()?, true)
        }
        MomentumSpec::HalfLife(h) => {
            let r = Momentum::from_half_life(h);
            assert_eq!(r.is_ok(), h > 0.0 && h.is_finite(), "from_half_life({h})");
            (r.ok()?, true)
        }
    };
    assert_eq!(m.validate().is_ok(), valid, "validate({m:?})");
    assert_eq!(Ema::new(m).is_ok(), valid, "Ema::new({m:?})");
    assert_eq!(Ema::with_initial(1.0, m).is_ok(), valid);
    assert_eq!(EwVariance::new(m).is_ok(), valid, "EwVariance::new({m:?})");
    valid.then_some(m)
}

struct State {
    ema: Ema<f64>,
    ew: EwVariance<f64>,
    cov: EwCovariance<f64>,
    initial: Option<f64>,
    /// Whether NaN values are skipped.
    skips: bool,
    min_periods: u64,
    /// The time of the last `push_at` since the last reset.
    clock: Option<f64>,
    /// The inputs since the last reset.
    seen: Seen,
    /// The same and the initial value: what the plain average lies between.
    range: Seen,
}

impl State {
    fn feed(&mut self, x: f64) {
        if x.is_nan() && self.skips {
            return;
        }
        self.seen.add(x);
        self.range.add(x);
    }

    /// Applies a timed push to all three, checking that each accepts or
    /// rejects it as the clock says, and that a rejection changes nothing.
    fn timed(&mut self, valid: bool, x: f64, push: impl Fn(&mut Self) -> [bool; 3]) {
        // Debug text, which compares NaN fields as equal.
        let snapshot = |s: &Self| format!("{:?} {:?} {:?}", s.ema, s.ew, s.cov);
        let before = snapshot(self);
        let ok = push(self);
        assert_eq!(
            ok, [valid; 3],
            "timed push accepted {ok:?}, expected {valid}"
        );
        if valid {
            self.feed(x);
        } else {
            assert_eq!(
                snapshot(self),
                before,
                "a rejected timed push changed the state"
            );
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Push(x) => {
                self.ema.push(*x);
                self.ew.push(*x);
                self.cov.push(*x, *x);
                self.feed(*x);
            }
            Op::Extend(xs) => {
                self.ema.extend_from_slice(xs);
                self.ew.extend_from_slice(xs);
                self.cov.extend(xs.iter().map(|&x| (x, x)));
                xs.iter().for_each(|&x| self.feed(x));
            }
            Op::PushAt(t, x) => {
                let (t, x) = (*t, *x);
                let valid = t.is_finite() && self.clock.is_none_or(|c| t >= c);
                self.timed(valid, x, |s| {
                    [
                        s.ema.push_at(t, x).is_ok(),
                        s.ew.push_at(t, x).is_ok(),
                        s.cov.push_at(t, x, x).is_ok(),
                    ]
                });
                if valid {
                    self.clock = Some(t);
                }
            }
            Op::PushAfter(dt, x) => {
                let (dt, x) = (*dt, *x);
                let valid = dt >= 0.0;
                self.timed(valid, x, |s| {
                    [
                        s.ema.push_after(dt, x).is_ok(),
                        s.ew.push_after(dt, x).is_ok(),
                        s.cov.push_after(dt, x, x).is_ok(),
                    ]
                });
                if valid {
                    self.clock = self.clock.map(|c| c + dt);
                }
            }
            Op::Reset => {
                self.ema.reset();
                self.ew.reset();
                self.cov.reset();
                self.clock = None;
                self.seen.reset();
                self.range.reset();
                if let Some(v0) = self.initial {
                    self.range.add(v0);
                }
            }
            Op::RoundTrip => {
                self.ema = round_trip(&self.ema, |a, b| {
                    a.count() == b.count()
                        && a.value().same(b.value())
                        && a.momentum() == b.momentum()
                        && a.is_bias_corrected() == b.is_bias_corrected()
                });
                self.ew = round_trip(&self.ew, |a, b| {
                    a.count() == b.count()
                        && a.mean().same(b.mean())
                        && a.variance().same(b.variance())
                        && a.unbiased_variance().same(b.unbiased_variance())
                        && a.momentum() == b.momentum()
                });
                self.cov = round_trip(&self.cov, |a, b| {
                    a.count() == b.count()
                        && a.mean_x().same(b.mean_x())
                        && a.covariance().same(b.covariance())
                        && a.unbiased_covariance().same(b.unbiased_covariance())
                });
            }
        }
    }

    fn check(&self, before: u64, op: &Op) {
        let n = self.ema.count();
        assert_eq!(n, self.seen.count, "Ema count is not the number of values");
        assert_eq!(self.ew.count(), n, "EwVariance count differs");
        assert_eq!(self.cov.count(), n, "EwCovariance count differs");
        // Bit for bit, any NaN being the same (payloads may differ).
        assert!(
            self.cov.covariance().same(self.ew.variance()),
            "cov(x, x) {:?} is not var(x) {:?}",
            self.cov.covariance(),
            self.ew.variance()
        );
        assert!(self.cov.mean_y().same(self.ew.mean()));
        assert!(
            self.cov
                .unbiased_covariance()
                .same(self.ew.unbiased_variance())
        );
        let ready = n >= self.min_periods;
        if !matches!(op, Op::Reset) {
            assert!(n >= before, "count fell from {before} to {n}");
        }
        let slack = 64.0 * f64::EPSILON * (n.min(1 << 20) as f64 + 4.0);

        let corrected = self.ema.is_bias_corrected();
        let value = self.ema.value();
        if corrected {
            assert!(
                value.is_none() || n > 0,
                "bias-corrected value before any input"
            );
        } else {
            assert_eq!(value.is_some(), ready && (n > 0 || self.initial.is_some()));
        }
        if let Some(v) = value {
            // Bias correction divides by the weight of the inputs: with a
            // non-zero initial value the result is no average of anything.
            let (range, check) = match (corrected, self.initial) {
                (false, _) => (&self.range, true),
                (true, None) => (&self.seen, true),
                (true, Some(v0)) => (&self.seen, v0 == 0.0),
            };
            // Dividing by a small weight also magnifies the rounding of
            // subnormal results: allow for it in absolute terms.
            let tiny = if corrected { 1e-290 } else { TINY };
            if check && range.tame {
                assert!(v.is_finite(), "average {v} of tame values");
                assert!(
                    range.brackets(v, slack, tiny),
                    "average {v:e} outside [{:e}, {:e}]",
                    range.min,
                    range.max
                );
            }
        }

        assert_eq!(self.ew.mean().is_some(), ready && n > 0);
        assert_eq!(self.ew.variance().is_some(), ready && n > 0);
        if let Some(u) = self.ew.unbiased_variance() {
            assert!(u >= 0.0 || u.is_nan(), "negative unbiased variance {u}");
        }
        if let Some(r) = self.cov.correlation() {
            assert!(r.is_nan() || (-1.0..=1.0).contains(&r), "correlation {r}");
        }
        for s in [self.ew.variance(), self.ew.std_dev()]
            .into_iter()
            .flatten()
        {
            assert!(s >= 0.0 || s.is_nan(), "negative spread {s}");
        }
        if let (Some(mean), Some(var), true) = (self.ew.mean(), self.ew.variance(), self.seen.tame)
        {
            assert!(
                mean.is_finite() && var.is_finite(),
                "{mean} ± {var} of tame values"
            );
            assert!(
                self.seen.brackets(mean, slack, TINY),
                "EW mean {mean:e} out of range"
            );
            let bound = self.seen.variance_bound(slack, TINY);
            assert!(
                var <= bound,
                "EW variance {var:e} above (max − min)²/4 = {bound:e}"
            );
            if self.initial.is_none() && !corrected {
                let v = value.unwrap();
                let tol = slack * self.seen.max_abs + TINY;
                assert!(
                    (v - mean).abs() <= tol,
                    "Ema {v:e} vs EwVariance mean {mean:e}"
                );
            }
        }
    }
}

fuzz_target!(|input: Input| {
    let Some(m) = momentum(&input.momentum) else {
        return;
    };
    // Adjusted weights are seeded by the first value: no initial value.
    let initial = input.initial.filter(|_| !input.adjusted);
    let ema = match initial {
        Some(v0) => {
            let r = Ema::with_initial(v0, m);
            assert_eq!(r.is_ok(), v0.is_finite(), "with_initial({v0})");
            let Ok(ema) = r else { return };
            ema
        }
        None if input.adjusted => Ema::adjusted(m).expect("a valid momentum is accepted"),
        None => Ema::new(m).expect("a valid momentum is accepted"),
    };
    let policy =
        [NanPolicy::Propagate, NanPolicy::Skip, NanPolicy::Gap][usize::from(input.nan_policy % 3)];
    let min_periods = u64::from(input.min_periods % 8);
    let periods = usize::from(input.min_periods % 8);
    let ema = ema.with_nan_policy(policy).with_min_periods(periods);
    let ema = if input.bias_correction {
        ema.with_bias_correction()
    } else {
        ema
    };
    let mut range = Seen::new(TAME);
    if let Some(v0) = initial {
        range.add(v0);
    }
    let ew = if input.adjusted {
        EwVariance::adjusted(m)
    } else {
        EwVariance::new(m)
    };
    let cov = if input.adjusted {
        EwCovariance::adjusted(m)
    } else {
        EwCovariance::new(m)
    };
    let mut state = State {
        ema,
        ew: ew
            .expect("a valid momentum is accepted")
            .with_nan_policy(policy)
            .with_min_periods(periods),
        cov: cov
            .expect("a valid momentum is accepted")
            .with_nan_policy(policy)
            .with_min_periods(periods),
        initial,
        skips: policy != NanPolicy::Propagate,
        min_periods,
        clock: None,
        seen: Seen::new(TAME),
        range,
    };
    for op in &input.ops {
        let before = state.ema.count();
        state.apply(op);
        state.check(before, op);
    }
});
