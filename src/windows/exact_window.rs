//! The one engine behind `MovingAverage`, `MovingVariance` and
//! `MovingStats`: a [`Window`] over [`ExactMoments`], and what the three
//! read from it — the mean, the variances and standard deviations, and
//! their series — in one place, so that the three give the same bits for
//! the same pushes.
//!
//! `MovingStats` carries its blocks of extremes beside the window
//! ([`Alongside`]); the other two carry nothing.

use super::block_extrema::BlockExtrema;
use super::exact_moments::ExactMoments;
use super::window::Window;
use crate::Float;
use crate::kernels::exact_var::Spread;
use crate::series::or_nan;

/// The window of the three types.
pub(crate) type ExactWindow<F> = Window<F, ExactMoments<F>>;

/// A series' run shorter than this (values) doubles the wait before the
/// kernel is tried again (see [`ExactWindow::series_along`]).
const RETRY: usize = 4096;

/// A statistic of the window, as its accessor reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stat {
    Mean,
    Spread(Spread),
}

impl Stat {
    pub(crate) const POPULATION_VARIANCE: Self = Self::Spread(Spread {
        sample: false,
        root: false,
    });
    pub(crate) const SAMPLE_VARIANCE: Self = Self::Spread(Spread {
        sample: true,
        root: false,
    });
    pub(crate) const POPULATION_STD_DEV: Self = Self::Spread(Spread {
        sample: false,
        root: true,
    });
    pub(crate) const SAMPLE_STD_DEV: Self = Self::Spread(Spread {
        sample: true,
        root: true,
    });
}

/// What a window carries beside its values and sums, kept in step with
/// them: nothing (`()`), or `MovingStats`' blocks of extremes.
pub(crate) trait Alongside<F> {
    /// `x` was pushed into the window.
    fn pushed(&mut self, x: F);
    /// `xs` were pushed into `window` by its `extend_from_slice`.
    fn extended(&mut self, window: &ExactWindow<F>, xs: &[F]);
}

impl<F> Alongside<F> for () {
    #[inline]
    fn pushed(&mut self, _: F) {}
    #[inline]
    fn extended(&mut self, _: &ExactWindow<F>, _: &[F]) {}
}

impl<F: Float> Alongside<F> for BlockExtrema {
    #[inline]
    fn pushed(&mut self, x: F) {
        self.push(x);
    }

    fn extended(&mut self, window: &ExactWindow<F>, xs: &[F]) {
        if xs.len() >= window.window() {
            // The blocks of the window's values, whatever came before.
            self.refill(window.iter());
        } else {
            for &x in xs {
                self.push(x);
            }
        }
    }
}

impl<F: Float> ExactWindow<F> {
    /// `Σ(x − x̄)²/divisor`, NaN while a non-finite value counts.
    fn spread_of(&self, divisor: usize) -> F {
        self.finite_stats()
            .map_or_else(F::nan, |s| s.variance(divisor))
    }

    /// The population variance, `None` while empty or not ready.
    #[inline]
    pub(crate) fn population_variance(&self) -> Option<F> {
        let n = self.counted();
        (n > 0 && self.is_ready()).then(|| self.spread_of(n))
    }

    /// The sample variance, `None` below two values or while not ready.
    #[inline]
    pub(crate) fn sample_variance(&self) -> Option<F> {
        let n = self.counted();
        (n > 1 && self.is_ready()).then(|| self.spread_of(n - 1))
    }

    /// The statistic `stat`, as its accessor returns it.
    #[inline]
    pub(crate) fn read(&self, stat: Stat) -> Option<F> {
        match stat {
            Stat::Mean => self.mean(),
            Stat::Spread(Spread { sample, root }) => {
                let v = if sample {
                    self.sample_variance()
                } else {
                    self.population_variance()
                };
                if root { v.map(F::sqrt) } else { v }
            }
        }
    }

    /// Whether the statistics come from the exact integer sums.
    #[inline]
    pub(crate) fn is_exact(&self) -> bool {
        self.total.is_exact()
    }

    /// Pushes `x` into the window and `along`.
    #[inline]
    pub(crate) fn push_along(&mut self, along: &mut impl Alongside<F>, x: F) {
        self.push(x);
        along.pushed(x);
    }

    /// Pushes every value of `xs` into the window and `along`, as the push
    /// loop would.
    pub(crate) fn extend_along(&mut self, along: &mut impl Alongside<F>, xs: &[F]) {
        self.extend_from_slice(xs);
        along.extended(self, xs);
    }

    /// Pushes every value of `xs` and writes `stat` after each push into
    /// `out` (as long as `xs`; NaN where the accessor says `None`).
    ///
    /// The kernel of the statistic (`kernels::exact_mean_run` or
    /// `exact_var_run`, which return how many values they took) takes the
    /// runs of full windows of finite values on one grid; the window then
    /// pushes the run's last values (as many as leave its ring's head
    /// where the run's pushes would). Everything else goes through the
    /// push loop. The bits are the push loop's: each statistic is the
    /// correct rounding of the window's exact one, which any exact route
    /// to the sums gives.
    ///
    /// Finding a grid reads the window and up to a chunk of values ahead,
    /// so an attempt that ends before [`RETRY`] values (the values are on
    /// no grid, or leave it often) doubles the pushes before the next one,
    /// from `window`: on data the kernel cannot take the attempts cost
    /// O(log n) scans, not one every `window` values.
    pub(crate) fn series_along(
        &mut self,
        along: &mut impl Alongside<F>,
        xs: &[F],
        out: &mut [F],
        stat: Stat,
    ) {
        let kernel = |older: &[F], newer: &[F], xs: &[F], out: &mut [F]| match stat {
            Stat::Mean => crate::kernels::exact_mean_run(older, newer, xs, out),
            Stat::Spread(spread) => crate::kernels::exact_var_run(older, newer, xs, out, spread),
        };
        let window = self.window();
        let mut wait = window;
        let mut i = 0;
        while i < xs.len() {
            if self.is_full() && self.is_exact() && self.all_finite() {
                let (older, newer) = self.as_slices();
                let run = kernel(older, newer, &xs[i..], &mut out[i..]);
                if run > 0 {
                    let last = if run >= window {
                        window + (run - window) % window
                    } else {
                        run
                    };
                    self.count_wraps((run - last) / window);
                    self.extend_along(along, &xs[i + run - last..i + run]);
                    i += run;
                }
                wait = if run >= RETRY {
                    window
                } else {
                    wait.saturating_mul(2)
                };
            }
            let slow = xs.len().min(i.saturating_add(wait));
            for (&x, o) in xs[i..slow].iter().zip(&mut out[i..slow]) {
                self.push_along(along, x);
                *o = or_nan(self.read(stat));
            }
            i = slow;
        }
    }
}
