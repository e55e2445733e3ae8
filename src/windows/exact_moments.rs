//! The window statistics of `MovingAverage`, `MovingVariance` and
//! `MovingStats`: exact integer sums ([`ExactSums`]), with compensated
//! sums ([`ShiftedMoments`]) for the windows the integers cannot hold.
//!
//! While every finite value of the window fits the integer sums (their
//! binades span at most 94 bits: `1e9 + U(0, 1)` spans 53, an outlier of
//! `1e15` beside it 73), a push is two integer updates and nothing else:
//! no refresh, no rebuild, no check but whether the new value fits. A
//! value that does not fit sends the window to the engine's rebuild, which
//! takes the integer sums afresh from the ring's values with a new base
//! exponent (O(window), at such transitions only) or, when the values
//! themselves span too many binades (`1e300` beside `1e-300`, subnormals
//! beside ordinary values), computes the compensated sums from them and
//! carries on with those, as `TimeWindow` keeps them. While on the
//! compensated sums, the window tries the integers again each time its
//! ring's head wraps (every `window` pushes: an O(window) pass, less than
//! an operation per push): it is back on them at most `window` pushes
//! after the last value that kept it off has left.
//!
//! On the integer sums the statistics depend on the values in the window
//! only, not on the order they came in nor on what went through before:
//! two histories that leave the same values in the window read the same
//! bits.

#[cfg(feature = "serde")]
use super::state::SumsState;
use super::window::{ShiftedMoments, ShiftedSum, WindowStats};
#[cfg(feature = "serde")]
use crate::Error;
use crate::Float;
use crate::exact_sums::ExactSums;

/// Exact sums, or compensated ones when the values do not fit them.
#[derive(Clone, Debug)]
pub(crate) struct ExactMoments<F> {
    /// The sums of the window's finite values while `exact`.
    exact: ExactSums,
    /// The sums of the window's finite values while not `exact`.
    fallback: ShiftedMoments<F>,
    /// Which of the two holds the window.
    on_exact: bool,
    /// A value did not fit the integer sums, or the head wrapped while on
    /// the compensated ones: the window is to be taken afresh.
    retake: bool,
}

impl<F: Float> Default for ExactMoments<F> {
    fn default() -> Self {
        Self {
            exact: ExactSums::default(),
            fallback: ShiftedMoments::default(),
            on_exact: true,
            retake: false,
        }
    }
}

impl<F: Float> ExactMoments<F> {
    /// The mean of the finite values (0 when there are none).
    #[inline]
    pub(crate) fn mean_value(&self) -> F {
        if self.on_exact {
            F::from_f64(self.exact.mean_or_zero())
        } else {
            self.fallback.sum().mean()
        }
    }

    /// `Σ(x − x̄)² / divisor` of the finite values, `divisor > 0`.
    pub(crate) fn variance(&self, divisor: usize) -> F {
        if self.on_exact {
            F::from_f64(self.exact.variance(divisor as u64))
        } else {
            self.fallback.variance(F::from_count(divisor as u64))
        }
    }

    /// Whether the statistics come from the exact integer sums.
    pub(crate) fn is_exact(&self) -> bool {
        self.on_exact
    }

    /// Takes the statistics afresh from `values()`: the integer sums when
    /// the values fit them, else `fallback` (which recomputes the
    /// compensated sums).
    fn retake_from<I: Iterator<Item = F>>(
        &mut self,
        values: impl Fn() -> I,
        fallback: impl FnOnce(&mut ShiftedMoments<F>),
    ) {
        self.retake = false;
        if let Some(exact) = ExactSums::of_values(|| values().map(F::as_f64)) {
            self.exact = exact;
            self.on_exact = true;
        } else {
            fallback(&mut self.fallback);
            self.on_exact = false;
        }
    }
}

impl<F: Float> WindowStats<F> for ExactMoments<F> {
    #[inline]
    fn add(&mut self, x: F) {
        if self.on_exact {
            self.retake |= !self.exact.add_fitting(x.as_f64());
        } else {
            self.fallback.add(x);
        }
    }

    /// At the wraps the engine would refresh its compensated sums: the
    /// integer sums do not drift, but the values are taken afresh anyway,
    /// which fits the base exponent to them again.
    fn refresh(&mut self, older: &[F], newer: &[F]) {
        let values = || older.iter().chain(newer).copied();
        self.retake_from(values, |f| f.refresh(older, newer));
    }

    fn rebuild_finite(&mut self, older: &[F], newer: &[F]) {
        let values = || older.iter().chain(newer).copied();
        self.rebuild(values);
    }

    #[inline]
    fn remove(&mut self, x: F) {
        if self.on_exact {
            self.exact.remove(x.as_f64());
        } else {
            self.fallback.remove(x);
        }
    }

    #[inline]
    fn replace(&mut self, old: F, new: F) {
        if self.on_exact {
            // A branch, not an `|=`: the flag is written only when a value
            // does not fit, not read and stored back at every push.
            if !self.exact.replace(old.as_f64(), new.as_f64()) {
                self.retake = true;
            }
        } else {
            self.fallback.replace(old, new);
        }
    }

    fn rebase(&mut self, x: F) {
        if !self.on_exact {
            self.fallback.rebase(x);
        }
    }

    fn wrapped(&mut self) {
        if !self.on_exact {
            self.retake = true;
        }
    }

    #[inline]
    fn needs_rebuild(&self) -> bool {
        self.retake || (!self.on_exact && self.fallback.needs_rebuild())
    }

    /// A retake: the integer sums if the values fit, else the compensated
    /// sums, computed afresh when the window comes off the integers and
    /// rebuilt by their own rule while it stays off them.
    fn rebuild<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        if self.on_exact || self.retake {
            let was_exact = self.on_exact;
            let stale = self.fallback.needs_rebuild();
            self.retake_from(&values, |f| {
                if was_exact {
                    f.resum(&values);
                } else if stale {
                    f.rebuild(&values);
                }
            });
        } else {
            self.fallback.rebuild(values);
        }
    }

    fn resum<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        self.retake_from(&values, |f| f.resum(&values));
    }

    /// The compensated sum, which only [`mean`](WindowStats::mean) reads
    /// and only off the integer sums.
    #[inline]
    fn sum(&self) -> &ShiftedSum<F> {
        self.fallback.sum()
    }

    #[inline]
    fn mean(&self) -> F {
        self.mean_value()
    }

    /// On the integer sums, nothing but the mark that the window is on
    /// them (a `shift`, `hi`, `lo` and `lo_churn` of 0, a `scale` of 1,
    /// and no `m2`): they are taken afresh from the values on the way in,
    /// exactly as they were. Off them, the compensated sums as they are.
    #[cfg(feature = "serde")]
    fn to_state(&self) -> SumsState<F> {
        if self.on_exact {
            SumsState {
                shift: F::zero(),
                hi: F::zero(),
                lo: F::zero(),
                lo_churn: F::zero(),
                scale: F::one(),
                m2: None,
            }
        } else {
            self.fallback.to_state()
        }
    }

    /// A state with M2 is the compensated sums as they were (a window
    /// saved off the integer sums, or a `MovingVariance` saved before it
    /// moved onto them), which go on as they would have. A state without
    /// M2 that is not the mark of the integer sums is a `MovingAverage`'s
    /// plain compensated sum, saved before it moved onto them: checked as
    /// it was then, then the sums are taken afresh from the values.
    ///
    /// # Errors
    ///
    /// When the mark of the integer sums is exactly that but the values do
    /// not fit them, or when the compensated sums (with or without M2) do
    /// not pass their checks.
    #[cfg(feature = "serde")]
    fn from_state<I: Iterator<Item = F>>(
        state: SumsState<F>,
        values: impl Fn() -> I,
    ) -> Result<Self, Error> {
        if state.m2.is_some() {
            return Ok(Self {
                fallback: ShiftedMoments::from_state(state, values)?,
                on_exact: false,
                ..Self::default()
            });
        }
        let mark = [state.shift, state.hi, state.lo, state.lo_churn];
        let positive_zero = |x: &F| *x == F::zero() && x.is_sign_positive();
        if !mark.iter().all(positive_zero) || state.scale != F::one() {
            // A plain compensated sum: the state of a `MovingAverage` saved
            // before it moved onto these sums. Checked as it was then, and
            // taken afresh from the values, as a window that has just come
            // onto the exact sums holds them.
            ShiftedSum::from_state(state, &values)?;
            let mut sums = Self::default();
            sums.retake_from(&values, |f| f.resum(&values));
            return Ok(sums);
        }
        let Some(exact) = ExactSums::of_values(|| values().map(F::as_f64)) else {
            return Err(Error::state(
                "the values span too many binades for exact sums, which the sums claim",
            ));
        };
        Ok(Self {
            exact,
            ..Self::default()
        })
    }
}
