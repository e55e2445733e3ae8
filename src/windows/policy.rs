//! What a window does with NaN, and when its statistics are ready: the
//! options every window shares.

use crate::{Error, NanPolicy};

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
        self.nan != NanPolicy::Propagate
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
    /// values must be able to reach. (A time window's can always be
    /// reached: it sets the field.)
    pub(crate) fn with_min_periods(self, min_periods: usize, window: usize) -> Result<Self, Error> {
        if min_periods > window {
            return Err(Error::parameter(
                "min_periods",
                min_periods as f64,
                "at most the window",
            ));
        }
        Ok(Self {
            min_periods,
            ..self
        })
    }
}

/// `min_periods` when serialized state has none.
#[cfg(feature = "serde")]
pub(crate) fn default_min_periods() -> usize {
    1
}
