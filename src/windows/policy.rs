//! What a window does with NaN, and when its statistics are ready: the
//! options every window shares.

use crate::Error;

/// What a moving window does with NaN values.
///
/// - [`Propagate`](NanPolicy::Propagate) (the default, the crate's policy):
///   while a NaN is in the window, every statistic of the window is NaN;
///   it is exact again once the NaN has left.
/// - [`Skip`](NanPolicy::Skip): a NaN takes its place in the window (a
///   count window still spans the last `window` values pushed, a time
///   window its span) but the statistics are those of the other values, as
///   pandas' `rolling` computes them: a sensor's missing readings are
///   ignored rather than poisoning the window. A window holding only NaN
///   has no statistic (`None`).
///
/// Infinities are not NaN: they follow the input policy under both
/// settings.
///
/// # Example
///
/// ```
/// use momenta::{MovingAverage, NanPolicy};
///
/// let mut strict = MovingAverage::new(3)?;
/// let mut lenient = MovingAverage::new(3)?.with_nan_policy(NanPolicy::Skip);
/// for x in [1.0, f64::NAN, 3.0] {
///     strict.push(x);
///     lenient.push(x);
/// }
/// assert!(strict.mean().unwrap().is_nan());
/// assert_eq!(lenient.mean(), Some(2.0));
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum NanPolicy {
    /// A NaN in the window makes every statistic NaN until it leaves.
    #[default]
    Propagate,
    /// NaN values are left out of the statistics (pandas' `rolling`).
    Skip,
}

/// A window's NaN policy and readiness threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Policy {
    pub(crate) nan: NanPolicy,
    /// The fewest counted values for a statistic; 0 acts as 1.
    pub(crate) min_periods: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            nan: NanPolicy::Propagate,
            min_periods: 1,
        }
    }
}

impl Policy {
    /// Whether NaN values are left out.
    #[inline]
    pub(crate) fn skips_nan(self) -> bool {
        self.nan == NanPolicy::Skip
    }

    /// The values a statistic is computed from, out of `len` values of
    /// which `nans` are NaN: all of them under `Propagate`, the others
    /// under `Skip`.
    #[inline]
    pub(crate) fn counted(self, len: usize, nans: usize) -> usize {
        if self.skips_nan() { len - nans } else { len }
    }

    /// Whether `counted` values make the statistics ready.
    #[inline]
    pub(crate) fn ready(self, counted: usize) -> bool {
        counted >= self.min_periods.max(1)
    }

    /// This policy with `min_periods`, which a count window of `window`
    /// values must be able to reach.
    pub(crate) fn with_min_periods(
        self,
        min_periods: usize,
        window: Option<usize>,
    ) -> Result<Self, Error> {
        match window {
            Some(w) if min_periods > w => Err(Error::parameter(
                "min_periods",
                min_periods as f64,
                "at most the window",
            )),
            _ => Ok(Self {
                min_periods,
                ..self
            }),
        }
    }
}

/// `min_periods` when serialized state has none.
#[cfg(feature = "serde")]
pub(crate) fn default_min_periods() -> usize {
    1
}
