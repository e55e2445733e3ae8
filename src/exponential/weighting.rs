//! The weights every exponential statistic shares: how much the past keeps
//! at a push, across a gap of missing values, and on a clock.
//!
//! One engine serves every member, so the clock, the NaN policy, the
//! readiness rule and pandas' two weightings are written once. A push asks
//! it for one [`Step`]: skip the value, seed the state with it, or blend it
//! in with weights `(α, β)`, `α + β = 1` (the new value's and the old
//! state's). The statistics then apply the same Finch update whatever
//! produced the weights.
//!
//! With `W` the total weight of the values so far (unnormalised), a step
//! that decays the past by `d` and gives the new value weight `ν` has
//! `W' = d·W + ν`, `α = ν/W'`, `β = d·W/W'`:
//!
//! | weighting | `d` per step | `ν` | `W` |
//! |---|---|---|---|
//! | recursive (pandas `adjust=False`) | `β₀` of the momentum | `α₀` | 1 |
//! | adjusted (pandas `adjust=True`) | `β₀` | 1 | grows to 1/α₀ |
//! | recursive, on a clock (polars `ewm_mean_by`) | `β₀^Δt` | `1 − d` | 1 |
//! | adjusted, on a clock (pandas `times=`) | `β₀^Δt` | 1 | grows |
//!
//! On a clock, a half-life `h` ([`Momentum::HalfLife`]) gives
//! `d = 2^(−Δt/h)`, from the ratio `Δt/h` as pandas has it, so that the
//! decay does not depend on the clock's unit; a `Decay` or `Factor`
//! momentum is a decay β₀ per unit of time, and `d = 2^(Δt·log₂β₀)`. Times
//! and time steps are `f64` whatever the statistic's type, and `d` is
//! computed in `f64` and rounded once to it.
//!
//! A gap (NaN under [`NanPolicy::Gap`], or time passing with no value)
//! multiplies a pending decay that the next value's step takes in, so the
//! older values' weights decay over the gap as pandas' `ignore_na=False`
//! has them. The sum of the squared normalised weights, `r = Σw̃²`, follows
//! as `r ← β²·r + α²`: `1/r` is Kish's effective number of values. Its
//! complement `q = 1 − r` has its own recurrence, `q ← β²·q + 2αβ` (from
//! `α + β = 1`), whose terms are all positive: pandas' debiasing factor
//! is `1/q`, and `q` keeps its digits when it is tiny (one value carries
//! almost all the weight, after a long gap), where `1 − r` would be a
//! difference of two numbers close to 1.

use super::momentum::half_life_decay;
use crate::{Error, Float, Momentum, NanPolicy};

/// How far a push moves the clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Elapsed {
    /// One sample (`push`).
    Sample,
    /// A time step, non-negative, maybe +∞.
    Time(f64),
}

/// What a push does to the statistic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Step<F> {
    /// Nothing enters (a skipped NaN).
    Skip,
    /// The value replaces the state: the first value, or the old state
    /// keeps no weight.
    Seed,
    /// `new ← α·x + β·old`.
    Blend(F, F),
}

/// The weights of one exponential statistic; see the module documentation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Weighting<F> {
    pub(crate) momentum: Momentum<F>,
    pub(crate) adjusted: bool,
    pub(crate) nan: NanPolicy,
    pub(crate) min_periods: u64,
    /// Values that entered.
    pub(crate) count: u64,
    /// Whether some value (or an initial value) carries weight.
    pub(crate) primed: bool,
    /// `W`, the total weight (adjusted weighting; 1 otherwise).
    pub(crate) total: F,
    /// `r = Σw̃²`, the sum of the squared normalised weights (not followed
    /// by `Ema`, which reads no statistic of it).
    pub(crate) squares: F,
    /// `q = 1 − Σw̃²`, by its own recurrence (followed with `squares`).
    pub(crate) complement: F,
    /// The decay of gaps since the last value, not yet applied.
    pub(crate) pending: F,
    /// The time of the last timed push, once `push_at` has set it.
    pub(crate) clock: Option<f64>,
    /// Whether a time step other than one unit was ever taken (then the
    /// weights follow no closed form of the count).
    pub(crate) timed: bool,
    /// The weights `(α, β)` of one update, or of one unit of time
    /// (derived from the momentum; any but `Cumulative`, whose weights
    /// depend on the count), so that a half-life's `exp2` is taken once.
    unit: (F, F),
    /// log₂ of the decay per unit of time of a `Decay` or `Factor`
    /// momentum (derived from it), so that a time step costs one `exp2`.
    log2_decay: f64,
}

impl<F: Float> Weighting<F> {
    /// Fresh weights; `primed` for a statistic that starts at a value.
    pub(crate) fn new(momentum: Momentum<F>, adjusted: bool, primed: bool) -> Result<Self, Error> {
        let momentum = momentum.validate()?;
        let unit = momentum.weights(1);
        Ok(Self {
            momentum,
            adjusted,
            nan: NanPolicy::Propagate,
            min_periods: 0,
            count: 0,
            primed,
            total: F::one(),
            squares: F::one(),
            complement: F::zero(),
            pending: F::one(),
            clock: None,
            timed: false,
            unit,
            log2_decay: num_traits::Float::log2(unit.1.as_f64()),
        })
    }

    /// Sets the NaN policy.
    pub(crate) fn set_nan(&mut self, policy: NanPolicy) {
        self.nan = policy;
    }

    /// Back to the state `new` made, keeping the options.
    pub(crate) fn reset(&mut self, primed: bool) {
        let fresh = Self::new(self.momentum, self.adjusted, primed);
        if let Ok(fresh) = fresh {
            *self = Self {
                nan: self.nan,
                min_periods: self.min_periods,
                ..fresh
            };
        }
    }

    /// Whether the statistics are defined: primed and at least
    /// `min_periods` values in.
    #[inline]
    pub(crate) fn ready(&self) -> bool {
        self.primed && self.count >= self.min_periods
    }

    /// The weights of the `n`-th update without a gap or a time step.
    #[inline]
    fn plain_weights(&self, n: u64) -> (F, F) {
        if self.momentum == Momentum::Cumulative {
            self.momentum.weights(n)
        } else {
            self.unit
        }
    }

    /// The decay of the past over one step.
    #[inline]
    #[allow(
        clippy::float_cmp,
        reason = "exactly one unit, 0 and ∞ are the special steps"
    )]
    fn decay(&self, elapsed: Elapsed) -> F {
        let beta = self.unit.1;
        match (self.momentum, elapsed) {
            (Momentum::Cumulative, _) => F::one(),
            (_, Elapsed::Sample) => beta,
            // The same bits as `unit` for a step of 1; 1 for 0, 0 for +∞.
            (Momentum::HalfLife(h), Elapsed::Time(dt)) => F::from_f64(half_life_decay(dt, h)),
            (_, Elapsed::Time(dt)) => {
                if dt == 1.0 {
                    beta
                } else if dt == 0.0 {
                    // 0·log₂ 0 would be NaN.
                    F::one()
                } else if dt.is_infinite() {
                    // ∞·log₂ 1 would be NaN.
                    if beta == F::one() {
                        F::one()
                    } else {
                        F::zero()
                    }
                } else {
                    F::from_f64(num_traits::Float::exp2(dt * self.log2_decay))
                }
            }
        }
    }

    /// The weights of one push; `missing` says the value is NaN.
    #[inline]
    #[allow(clippy::float_cmp, reason = "a step of exactly one unit is a push")]
    pub(crate) fn step(&mut self, missing: bool, elapsed: Elapsed) -> Step<F> {
        if missing && self.nan != NanPolicy::Propagate {
            let decays = self.nan == NanPolicy::Gap || matches!(elapsed, Elapsed::Time(_));
            if self.primed && decays {
                self.pending = self.pending * self.decay(elapsed);
            }
            return Step::Skip;
        }
        let n = self.count.saturating_add(1);
        self.count = n;
        if !self.primed {
            return self.seed();
        }
        let plain = self.pending == F::one()
            && match elapsed {
                Elapsed::Sample => true,
                Elapsed::Time(dt) => dt == 1.0,
            };
        let (alpha, beta) = if self.momentum == Momentum::Cumulative || (plain && !self.adjusted) {
            self.plain_weights(n)
        } else {
            let d = self.pending * self.decay(elapsed);
            self.pending = F::one();
            if self.adjusted {
                let old = d * self.total;
                let total = old + F::one();
                self.total = total;
                (total.recip(), old / total)
            } else if matches!(elapsed, Elapsed::Time(_)) {
                (F::one() - d, d)
            } else {
                let nu = self.unit.0;
                let total = d + nu;
                (nu / total, d / total)
            }
        };
        if beta == F::zero() {
            return self.seed();
        }
        Step::Blend(alpha, beta)
    }

    /// Follows `r = Σw̃²` and `q = 1 − r` through a blend with weights
    /// `(α, β)`: the statistics that read them (the unbiased ones, the
    /// effective count) call this; `Ema` does not, and keeps its one
    /// dependency chain.
    ///
    /// `r` stays ≤ 1 in floating point too: β²·r + α² ≤ 1 − 2αβ, and when
    /// αβ is too small for that margin to survive rounding, the smaller
    /// weight's square is below half an ulp of the larger's (≤ 1). `q`
    /// stays ≥ 0 (a sum of non-negative terms), and 0 only while one
    /// value has all the weight.
    #[inline]
    pub(crate) fn track_squares(&mut self, alpha: F, beta: F) {
        let b2 = beta * beta;
        self.squares = b2 * self.squares + alpha * alpha;
        let ab = alpha * beta;
        self.complement = b2 * self.complement + (ab + ab);
    }

    #[inline]
    fn seed(&mut self) -> Step<F> {
        self.primed = true;
        self.total = F::one();
        self.squares = F::one();
        self.complement = F::zero();
        self.pending = F::one();
        Step::Seed
    }

    /// The step of `push_after(dt, ·)`.
    ///
    /// # Errors
    ///
    /// `dt` NaN or negative.
    #[allow(clippy::float_cmp, reason = "a step of exactly one unit is a push")]
    pub(crate) fn after(&mut self, dt: f64) -> Result<Elapsed, Error> {
        if dt.is_nan() || dt < 0.0 {
            return Err(Error::parameter(
                "elapsed time",
                dt,
                "non-negative (+∞ is allowed, NaN is not)",
            ));
        }
        if let Some(t) = self.clock {
            self.clock = Some(t + dt);
        }
        self.timed |= dt != 1.0;
        Ok(Elapsed::Time(dt))
    }

    /// The step of `push_at(t, ·)`: the time since the last timed push,
    /// or one unit for the first one.
    ///
    /// # Errors
    ///
    /// `t` NaN, ±∞, or before the clock.
    pub(crate) fn at(&mut self, t: f64) -> Result<Elapsed, Error> {
        if !t.is_finite() {
            return Err(Error::parameter("time", t, "finite"));
        }
        let elapsed = match self.clock {
            Some(t0) if t < t0 => {
                return Err(Error::parameter(
                    "time",
                    t,
                    "at or after the time of the previous push",
                ));
            }
            Some(t0) => Elapsed::Time(t - t0),
            None => Elapsed::Sample,
        };
        self.clock = Some(t);
        self.timed |= elapsed != Elapsed::Time(1.0) && elapsed != Elapsed::Sample;
        Ok(elapsed)
    }

    /// `1/q = 1/(1 − r)`, pandas' factor from a biased to an unbiased
    /// statistic; `None` while a single value carries all the weight.
    pub(crate) fn debias(&self) -> Option<F> {
        let denominator = self.complement;
        (self.ready() && denominator > F::zero()).then(|| denominator.recip())
    }

    /// `1/r`, Kish's effective number of values.
    pub(crate) fn effective_count(&self) -> Option<F> {
        (self.ready() && self.count > 0).then(|| self.squares.recip())
    }

    /// The weights' part of a serialized state.
    #[cfg(feature = "serde")]
    pub(crate) fn save(&self) -> WeightsState<F> {
        WeightsState {
            adjusted: self.adjusted,
            nan_policy: self.nan,
            min_periods: self.min_periods,
            total: Some(self.total),
            squares: Some(self.squares),
            complement: Some(self.complement),
            pending: Some(self.pending),
            clock: self.clock,
            timed: self.timed,
        }
    }

    /// Weights restored from a state (`initial`: the statistic starts at an
    /// initial value), validated. States saved before the
    /// weights were recorded (no `weights` field) get those of plain pushes,
    /// and states saved before `q = 1 − r` was (no `complement`) get
    /// `1 − r`, with the digits that costs when `r` is close to 1.
    #[cfg(feature = "serde")]
    pub(crate) fn restore(
        momentum: Momentum<F>,
        count: u64,
        initial: bool,
        s: &WeightsState<F>,
    ) -> Result<Self, Error> {
        use alloc::format;
        let fresh = Self::new(momentum, s.adjusted, count > 0 || initial)?;
        let squares = s
            .squares
            .unwrap_or_else(|| squares_after(fresh.momentum, count));
        let w = Self {
            nan: s.nan_policy,
            min_periods: s.min_periods,
            count,
            total: s.total.unwrap_or_else(F::one),
            squares,
            complement: s.complement.unwrap_or_else(|| F::one() - squares),
            pending: s.pending.unwrap_or_else(F::one),
            clock: s.clock,
            timed: s.timed,
            ..fresh
        };
        if !(w.squares > F::zero() && w.squares <= F::one()) {
            return Err(Error::state(format!(
                "the sum of squared weights must be in (0, 1], got {:?}",
                w.squares
            )));
        }
        let single = count == 0 || (count == 1 && !initial);
        if single && (w.squares != F::one() || w.complement != F::zero()) {
            return Err(Error::state(format!(
                "the sum of squared weights must be 1 (and its complement 0) while one value \
                 has all the weight, got {} and {}",
                w.squares, w.complement
            )));
        }
        // q = 1 − r, each by its own recurrence: equal up to their
        // rounding, which stays far below a quarter.
        let quarter = F::from_f64(0.25);
        if !(w.complement >= F::zero()
            && w.complement <= F::one()
            && (w.complement + w.squares - F::one()).abs() <= quarter
            && (w.complement != F::zero() || w.squares == F::one()))
        {
            return Err(Error::state(format!(
                "one minus the sum of squared weights must be in [0, 1] and match the sum \
                 of squared weights {}, got {}",
                w.squares, w.complement
            )));
        }
        if !(w.pending >= F::zero() && w.pending <= F::one()) {
            return Err(Error::state(format!(
                "the pending decay must be in [0, 1], got {:?}",
                w.pending
            )));
        }
        let total_ok = if w.adjusted {
            w.total >= F::one() && w.total.is_finite()
        } else {
            w.total == F::one()
        };
        if !total_ok {
            return Err(Error::state(format!(
                "the total weight {:?} does not fit the weighting",
                w.total
            )));
        }
        // +∞ is reachable: `push_after(+∞)` moves a set clock there.
        if let Some(t) = w.clock.filter(|t| t.is_nan() || *t == f64::NEG_INFINITY) {
            return Err(Error::state(format!(
                "the clock must be a number below +∞ or +∞ itself, got {t:?}"
            )));
        }
        Ok(w)
    }
}

/// The weights' part of a serialized exponential statistic (a field of
/// each state type); every field has a default, so states saved before it
/// existed still restore.
#[cfg(feature = "serde")]
#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
pub(crate) struct WeightsState<F> {
    #[serde(default)]
    adjusted: bool,
    #[serde(default)]
    nan_policy: NanPolicy,
    #[serde(default)]
    min_periods: u64,
    #[serde(default)]
    #[serde(with = "crate::checkpoint::float::option")]
    total: Option<F>,
    #[serde(default)]
    #[serde(with = "crate::checkpoint::float::option")]
    squares: Option<F>,
    /// `q = 1 − r`, kept apart from `r` (absent from older states).
    #[serde(default)]
    #[serde(with = "crate::checkpoint::float::option")]
    complement: Option<F>,
    #[serde(default)]
    #[serde(with = "crate::checkpoint::float::option")]
    pending: Option<F>,
    /// Times are `f64` whatever `F` is (a number written by an older
    /// `f32` state reads as the `f64` nearest its decimal form).
    #[serde(default)]
    #[serde(with = "crate::checkpoint::float::option")]
    clock: Option<f64>,
    #[serde(default)]
    timed: bool,
}

/// The sum of squared normalised weights after `n` plain recursive pushes
/// seeded by the first: what a state saved before the weights were
/// recorded had. β^(2(n−1)) + α²·(1 − β^(2(n−1)))/(1 − β²); 1/n for
/// `Cumulative`.
#[cfg(feature = "serde")]
pub(crate) fn squares_after<F: Float>(momentum: Momentum<F>, n: u64) -> F {
    if n <= 1 {
        return F::one();
    }
    if momentum == Momentum::Cumulative {
        return F::from_count(n).recip();
    }
    let (alpha, beta) = momentum.weights(n);
    let b2 = beta * beta;
    let old = b2.powf(F::from_count(n - 1));
    if b2 == F::one() {
        return F::one();
    }
    let r = old + alpha * alpha * (F::one() - old) / (F::one() - b2);
    r.min(F::one()).max(F::min_positive_value())
}
