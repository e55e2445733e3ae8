//! What a statistic does with a NaN value: one policy type for the
//! exponential and the window families.

/// What a statistic does with a NaN value.
///
/// Only NaN is a missing value; ±∞ is a value and follows the input policy
/// under every setting (as in pandas). The default propagates, as
/// everywhere in the crate.
///
/// | policy | exponential statistics (`Ema`, `EwVariance`, `EwCovariance`) | windows | pandas |
/// |---|---|---|---|
/// | `Propagate` | the statistic reads NaN from then on | every statistic reads NaN while the NaN is in the window | — |
/// | `Skip` | the NaN is dropped as if it had never been pushed | the NaN takes its place in the window (a count window still spans the last `window` values pushed, a time window its span) but the statistics are those of the other values | `ewm(ignore_na=True)`, `rolling` |
/// | `Gap` | a missing sample: nothing enters, but the older values' weights decay over it | as `Skip`: in a window a NaN always takes its slot | `ewm(ignore_na=False)` |
///
/// A window holding only NaN, or an exponential statistic that has seen
/// only NaN, has no statistic (`None`). On a clock
/// ([`EwVariance::push_at`](crate::EwVariance::push_at) and its siblings)
/// elapsed time always counts, so `Skip` and `Gap` agree there: the next
/// value's step covers the time since the last value.
///
/// Under `Gap`, the value after a run of k NaN weighs as pandas has it: with
/// adjusted weights ([`EwVariance::adjusted`](crate::EwVariance::adjusted))
/// the past decays by βᵏ⁺¹, exactly as a time step of k + 1; with recursive
/// weights the past's β^(k+1) is set against the new value's α and the two
/// renormalised (pandas' `ignore_na=False` rule), while a time step Δt gives
/// the new value 1 − β^Δt (polars' and pandas' `times=` rule). The two
/// recursive rules agree when there is no gap.
///
/// # Example
///
/// ```
/// use momenta::{Ema, Momentum, MovingAverage, NanPolicy};
///
/// let xs = [4.0, f64::NAN, 8.0];
/// let mut propagate = Ema::new(Momentum::Factor(0.5))?;
/// let mut skip = Ema::new(Momentum::Factor(0.5))?.with_nan_policy(NanPolicy::Skip);
/// let mut gap = Ema::new(Momentum::Factor(0.5))?.with_nan_policy(NanPolicy::Gap);
/// let mut window = MovingAverage::new(3)?.with_nan_policy(NanPolicy::Skip);
/// for x in xs {
///     propagate.push(x);
///     skip.push(x);
///     gap.push(x);
///     window.push(x);
/// }
/// assert!(propagate.value().unwrap().is_nan());
/// assert_eq!(skip.value(), Some(6.0)); // 4 and 8, weights 1/2 and 1/2
/// // The gap decays 4 over two steps: weights 1/4 and 1/2, normalised:
/// // (4/4 + 8/2)/(3/4) = 20/3.
/// assert!((gap.value().unwrap() - 20.0_f64 / 3.0).abs() < 1e-15);
/// assert_eq!(window.mean(), Some(6.0)); // the mean of 4 and 8
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum NanPolicy {
    /// A NaN enters the statistic (the crate's default).
    #[default]
    Propagate,
    /// A NaN is left out of the statistic (pandas `ignore_na=True`, and
    /// `rolling`).
    Skip,
    /// A NaN is a missing sample: exponential statistics decay the older
    /// values over it (pandas `ignore_na=False`); windows treat it as
    /// [`Skip`](NanPolicy::Skip).
    Gap,
}
