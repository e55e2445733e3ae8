//! Mean, variance, minimum and maximum over the last span of time.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::bounds::{Bounds, Closed};
use super::extrema::{Extrema, Extreme};
use super::policy::Policy;
use super::spare::release_spare;
#[cfg(feature = "serde")]
use super::state::SumsState;
use super::window::{NonFinite, ShiftedMoments, WindowStats};
use crate::NanPolicy;
use crate::series::each_at;
use crate::{Error, Float};

/// Mean, variance, minimum and maximum of the samples of the last `span`
/// of time: pandas' `rolling("5s")` (and polars' `rolling_*_by`), pushed
/// one timestamped sample at a time.
///
/// A sample pushed at time `t` belongs to the window of every later time
/// `u` with `u − t < span`: the window at `u` is `(u − span, u]`, closed on
/// the right as in pandas. [`with_closed`](Self::with_closed) chooses the
/// other ends pandas offers ([`Closed`]: `[u − span, u)`, `[u − span, u]`,
/// `(u − span, u)`). Times are `f64` in the caller's unit (seconds,
/// milliseconds, …) and must not decrease; equal times are fine. Samples
/// arrive at any rate: irregular spacing, bursts and long gaps (a gap
/// longer than the span empties the window). [`z_score`](Self::z_score)
/// scores a reading against the window without pushing it; the quantiles
/// of a time window are [`TimeQuantile`](crate::TimeQuantile)'s.
///
/// # Accuracy
///
/// The mean and variance use the engine of
/// [`MovingVariance`](crate::MovingVariance): exact shifted sums whose
/// shift is a value in the window, M2 recomputed from the values after a
/// cancellation, and a second accumulator that only adds and takes over
/// once every sample older than it has left, so nothing drifts however
/// long the stream (a 1e9 outlier leaving costs no digits). The minimum
/// and maximum come from monotonic deques, exactly, as in
/// [`MovingMinMax`](crate::MovingMinMax) (`−0.0` below `+0.0`).
///
/// # Memory
///
/// Every sample inside the span is kept (its time and value, and up to two
/// deque entries): memory grows with the number of samples in the span,
/// without bound if they keep arriving faster, and once a burst has left,
/// the room it took is given back (the queues keep at most four times, and
/// at least twice, what they hold). Use a count window
/// ([`MovingVariance`](crate::MovingVariance),
/// [`MovingMinMax`](crate::MovingMinMax)) where memory must be bounded.
///
/// # NaN and infinities
///
/// As for the count windows: while a NaN is in the window every statistic
/// is NaN (or it is left out, with [`NanPolicy::Skip`], as pandas does);
/// an infinity makes the mean that infinity and the variance NaN. A time
/// that is NaN, infinite or earlier than the previous one is an `Err` and
/// changes nothing.
///
/// # Equality and serialization
///
/// Equal when the span, the options, the time of the latest push and the
/// samples in order are equal. Serialized as `{"span", "last_time",
/// "times", "values", "nan_policy", "min_periods", "engine", "closed",
/// "pending"}` (`pending`: the values waiting at the latest time in a
/// window open on the right; a state without `closed` is `Right`), the engine
/// being the running sums as they are and where the window stands between
/// their take-overs; on the way in the times must be finite, in order, no
/// later than `last_time` and inside its span, and the sums must match the
/// values. The restored window goes on bit for bit as the original would
/// have, in any format ([Checkpoints](crate#checkpoints)); a state without
/// the engine (saved before it was carried) takes its sums afresh.
///
/// # Example
///
/// ```
/// use momenta::TimeWindow;
///
/// // The last 5 seconds of a sensor that reports irregularly.
/// let mut w = TimeWindow::new(5.0)?;
/// w.push_at(0.0, 10.0)?;
/// w.push_at(1.5, 12.0)?;
/// w.push_at(4.0, 14.0)?;
/// assert_eq!(w.mean(), Some(12.0));
/// w.push_at(5.0, 20.0)?; // the sample at 0.0 leaves: (0, 5]
/// assert_eq!(w.len(), 3);
/// assert_eq!((w.min(), w.max()), (Some(12.0), Some(20.0)));
/// assert!(w.push_at(4.5, 1.0).is_err()); // time went backwards
/// assert_eq!(w.len(), 3);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct TimeWindow<F> {
    /// The span, the ends, the clock and the values waiting at the latest
    /// time.
    bounds: Bounds<F>,
    /// `(time, value)` of the samples in the window, oldest first.
    samples: VecDeque<(f64, F)>,
    non_finite: NonFinite,
    /// Statistics of the finite values in the window.
    total: ShiftedMoments<F>,
    /// Statistics of the finite values pushed since the last refresh.
    fresh: ShiftedMoments<F>,
    /// The samples at the front that predate the last refresh: in `total`,
    /// not in `fresh`. When the last of them has left, `fresh` holds
    /// exactly the window and takes over.
    stale: usize,
    /// The shift of `total` is no longer a value that stays: move it onto
    /// the next finite value pushed.
    rebase_pending: bool,
    /// While a re-base is pending: the newest finite sample's value, once
    /// searched for (as `Window` keeps it: only non-finite samples come in
    /// until the re-base is done). Cleared whenever a re-base becomes
    /// pending.
    newest_finite: Option<F>,
    extrema: Extrema<F>,
    /// Samples pushed since the last reset: the next sample's number.
    pushed: u64,
    policy: Policy,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] TimeWindow<F>, TimeWindowState<F>);

impl<F: Float> TimeWindow<F> {
    /// An empty window over the last `span` of time (in the unit of the
    /// times given to [`push_at`](Self::push_at)).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// when `span` is not positive (0, negative or NaN). `+∞` is allowed:
    /// nothing ever leaves.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// assert_eq!(TimeWindow::<f64>::new(60.0)?.span(), 60.0);
    /// assert_eq!(
    ///     TimeWindow::<f64>::new(0.0).unwrap_err().to_string(),
    ///     "span must be positive, got 0"
    /// );
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(span: f64) -> Result<Self, Error> {
        Ok(Self {
            bounds: Bounds::new(span)?,
            samples: VecDeque::new(),
            non_finite: NonFinite::default(),
            total: ShiftedMoments::default(),
            fresh: ShiftedMoments::default(),
            stale: 0,
            rebase_pending: false,
            newest_finite: None,
            extrema: Extrema::default(),
            pushed: 0,
            policy: Policy::default(),
        })
    }

    /// Sets which ends of the window belong to it (pandas' `closed=`; the
    /// default is [`Closed::Right`], `(t − span, t]`). Open on the right,
    /// the window leaves out the samples at the time of the latest push:
    /// they enter at the next push of a later time.
    ///
    /// ```
    /// use momenta::{Closed, TimeWindow};
    /// let mut w = TimeWindow::new(2.0)?.with_closed(Closed::Both);
    /// w.push_at(0.0, 1.0)?;
    /// w.push_at(2.0, 3.0)?; // [0, 2]: the sample at 0 stays
    /// assert_eq!(w.mean(), Some(2.0));
    /// assert_eq!(w.closed(), Closed::Both);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_closed(mut self, closed: Closed) -> Self {
        self.bounds.closed = closed;
        self
    }

    /// Which ends of the window belong to it.
    ///
    /// ```
    /// use momenta::{Closed, TimeWindow};
    /// assert_eq!(TimeWindow::<f64>::new(1.0)?.closed(), Closed::Right);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn closed(&self) -> Closed {
        self.bounds.closed
    }

    /// Skips NaN values instead of propagating them ([`NanPolicy`]), as
    /// pandas' `rolling("5s")` does.
    ///
    /// ```
    /// use momenta::{NanPolicy, TimeWindow};
    /// let mut w = TimeWindow::new(10.0)?.with_nan_policy(NanPolicy::Skip);
    /// w.push_at(0.0, 1.0)?;
    /// w.push_at(1.0, f64::NAN)?;
    /// w.push_at(2.0, 3.0)?;
    /// assert_eq!(w.mean(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Self {
        self.policy.nan = policy;
        self
    }

    /// Holds every statistic back (`None`) until the window holds
    /// `min_periods` samples that count — every sample, or the non-NaN
    /// ones under [`NanPolicy::Skip`] — as pandas' `min_periods`. The
    /// default is 1, pandas' default for time windows; 0 acts as 1.
    ///
    /// Any count can be reached, so this cannot fail and returns `Self`,
    /// as on the exponential types. (It returned a `Result` that was never
    /// an error; the count windows' `with_min_periods` returns one because
    /// theirs must not exceed the window.)
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(3.0)?.with_min_periods(2);
    /// w.push_at(0.0, 4.0)?;
    /// assert_eq!(w.mean(), None);
    /// w.push_at(1.0, 6.0)?;
    /// assert_eq!(w.mean(), Some(5.0));
    /// w.push_at(10.0, 1.0)?; // a gap: one sample in the window
    /// assert_eq!(w.mean(), None);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_min_periods(mut self, min_periods: usize) -> Self {
        self.policy.min_periods = min_periods;
        self
    }

    /// Whether the window holds enough samples for its statistics (see
    /// [`with_min_periods`](Self::with_min_periods)).
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(1.0)?;
    /// assert!(!w.is_ready());
    /// w.push_at(0.0, 2.0)?;
    /// assert!(w.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.policy.ready(self.counted())
    }

    /// The samples the statistics are computed from.
    fn counted(&self) -> usize {
        self.policy.counted(self.samples.len(), self.non_finite.nan)
    }

    /// Adds the sample `x` taken at time `t`; samples outside the window at
    /// `t` (by default, those at or before `t − span`) leave. Amortized
    /// O(1), plus an O(window) recomputation after a cancellation, as in
    /// [`MovingVariance`](crate::MovingVariance).
    ///
    /// Returns nothing on success: the window offers several statistics,
    /// so none is singled out.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `time` when `t` is NaN or infinite, or earlier than the time
    /// of the previous push; the window is then unchanged.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(2.0)?;
    /// w.push_at(1.0, 5.0)?;
    /// w.push_at(1.0, 7.0)?; // equal times are fine
    /// assert_eq!(w.mean(), Some(6.0));
    /// assert!(w.push_at(f64::NAN, 1.0).is_err());
    /// assert!(w.push_at(0.5, 1.0).is_err());
    /// w.push_at(3.0, 9.0)?; // (1, 3]: both samples at 1.0 leave
    /// assert_eq!(w.mean(), Some(9.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn push_at(&mut self, t: f64, x: F) -> Result<(), Error> {
        self.bounds.check(t)?;
        if let Some((at, waiting)) = self.bounds.release(t) {
            for &v in &waiting {
                self.enter(at, v);
            }
            self.bounds.restore_pending(waiting);
        }
        let evicted = self.evict(t);
        match self.bounds.admit(t, x) {
            Some(x) => self.enter(t, x),
            // Open on the right, nothing enters now: the evictions may have
            // taken the shift's owner away, and no entering value moves the
            // shift. Until one does, the newest finite sample holds it, so
            // that the sums are read around a value of the window.
            None if evicted && self.rebase_pending => self.shift_to_newest_finite(),
            None => {}
        }
        // After the evictions too: open on the right, a push may only
        // remove values (an outlier leaving), and that is the cancellation
        // the check is for.
        if self.total.needs_rebuild() {
            // The rebuilt shift, the newest finite value, stays until the
            // next take-over only if it came after the last one (open on
            // the right, the newest sample may predate it).
            let newest_stays = self.samples.len() > self.stale
                && self.samples.back().is_some_and(|s| s.1.is_finite());
            self.rebuild(newest_stays);
        }
        Ok(())
    }

    /// Moves the shift onto the newest finite sample while a re-base is
    /// pending (a sample that may leave before the next refresh: the
    /// re-base stays pending, for the next finite value to enter).
    fn shift_to_newest_finite(&mut self) {
        if let Some(v) = self.newest_finite_while_pending() {
            self.total.rebase(v);
        }
    }

    /// Adds the sample `x` at time `t` to the window.
    fn enter(&mut self, t: f64, x: F) {
        let seq = self.pushed;
        self.pushed += 1;
        self.samples.push_back((t, x));
        let finite = x.is_finite();
        if finite {
            self.total.add(x);
            self.fresh.add_fresh(x);
        } else {
            *self.non_finite.slot(x) += 1;
        }
        if !x.is_nan() {
            self.extrema.push(seq, x);
        }
        if self.rebase_pending {
            if finite {
                // `x` stays until the next refresh.
                self.total.rebase(x);
                self.rebase_pending = false;
            } else {
                // Meanwhile the newest finite sample, which is in the window
                // now (the shift's owner may have left); the next finite
                // sample takes over for the rest of the refresh.
                self.shift_to_newest_finite();
            }
        }
    }

    /// Drops the samples that are outside the window at `t`; whether any
    /// left.
    fn evict(&mut self, t: f64) -> bool {
        let before = self.samples.len();
        while let Some(&(old_t, old)) = self.samples.front() {
            if !self.bounds.leaves(old_t, t) {
                break;
            }
            if self.stale == 0 {
                // Every sample in the window came after the last refresh,
                // so `fresh` holds exactly them: it takes over, and its
                // shift (taken from the oldest) must move.
                self.total = core::mem::take(&mut self.fresh);
                let samples = &self.samples;
                self.total
                    .took_over(|| samples.iter().map(|&(_, x)| x).filter(|x| x.is_finite()));
                self.stale = self.samples.len();
                self.rebase_pending = true;
                self.newest_finite = None;
            }
            self.samples.pop_front();
            self.stale -= 1;
            if old.is_finite() {
                self.total.remove(old);
            } else {
                *self.non_finite.slot(old) -= 1;
            }
        }
        self.extrema
            .evict_before(self.pushed - self.samples.len() as u64);
        release_spare(&mut self.samples);
        self.samples.len() < before
    }

    /// Recomputes the statistics of the window from its values;
    /// `newest_stays` says whether the new shift (the newest finite value)
    /// stays until the next refresh.
    #[cold]
    #[inline(never)]
    fn rebuild(&mut self, newest_stays: bool) {
        let samples = &self.samples;
        self.total
            .rebuild(|| samples.iter().map(|s| s.1).filter(|x| x.is_finite()));
        self.rebase_pending = !newest_stays;
        self.newest_finite = None;
    }

    /// The newest finite sample's value while a re-base is pending and a
    /// non-finite sample was just pushed: searched for once, then
    /// remembered, so that a long run of non-finite samples after it does
    /// not search back to it at every push; `None` without finite samples.
    fn newest_finite_while_pending(&mut self) -> Option<F> {
        if self.non_finite.total() >= self.samples.len() {
            return None;
        }
        if self.newest_finite.is_none() {
            self.newest_finite = self
                .samples
                .iter()
                .rev()
                .map(|s| s.1)
                .find(|v| v.is_finite());
        }
        self.newest_finite
    }

    /// The mean of the samples in the window: `None` until
    /// [ready](Self::is_ready); NaN while a NaN counts, an infinity while
    /// only that infinity is there.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(10.0)?;
    /// w.push_at(0.0, 1.0)?;
    /// w.push_at(3.0, 2.0)?;
    /// assert_eq!(w.mean(), Some(1.5));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn mean(&self) -> Option<F> {
        self.is_ready().then(|| {
            self.non_finite
                .mean(self.policy.skips_nan())
                .unwrap_or_else(|| self.total.sum().mean())
        })
    }

    /// Σ(x − x̄)² / `divisor`, NaN while a non-finite value counts.
    fn variance(&self, divisor: usize) -> F {
        if self.non_finite.is_empty(self.policy.skips_nan()) {
            self.total.variance(F::from_count(divisor as u64))
        } else {
            F::nan()
        }
    }

    /// The population variance Σ(x − x̄)²/n of the window: `None` until
    /// ready. Never negative.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(10.0)?;
    /// w.push_at(0.0, 1.0)?;
    /// w.push_at(1.0, 3.0)?;
    /// assert_eq!(w.population_variance(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn population_variance(&self) -> Option<F> {
        let n = self.counted();
        (n > 0 && self.is_ready()).then(|| self.variance(n))
    }

    /// The sample variance Σ(x − x̄)²/(n − 1) of the window (pandas'
    /// `.var()`): `None` until ready and below two samples. Never
    /// negative.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(10.0)?;
    /// w.push_at(0.0, 1.0)?;
    /// assert_eq!(w.sample_variance(), None);
    /// w.push_at(1.0, 3.0)?;
    /// assert_eq!(w.sample_variance(), Some(2.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn sample_variance(&self) -> Option<F> {
        let n = self.counted();
        (n > 1 && self.is_ready()).then(|| self.variance(n - 1))
    }

    /// The population standard deviation, √(population variance).
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(10.0)?;
    /// w.push_at(0.0, 1.0)?;
    /// w.push_at(1.0, 3.0)?;
    /// assert_eq!(w.population_std_dev(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn population_std_dev(&self) -> Option<F> {
        self.population_variance().map(F::sqrt)
    }

    /// The sample standard deviation, √(sample variance) (pandas'
    /// `.std()`).
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(10.0)?;
    /// for (t, x) in [(0.0, 0.0), (1.0, 4.0), (2.0, 8.0)] {
    ///     w.push_at(t, x)?;
    /// }
    /// assert_eq!(w.sample_std_dev(), Some(4.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn sample_std_dev(&self) -> Option<F> {
        self.sample_variance().map(F::sqrt)
    }

    /// How unusual `x` is against the window as it stands, without
    /// pushing it: (x − mean)/s with s the
    /// [sample standard deviation](Self::sample_std_dev). The window is the
    /// one of the latest push, so what `x` is scored against depends on
    /// when it is called:
    ///
    /// - before pushing `x`: pandas' `(x - r.mean().shift()) /
    ///   r.std().shift()` for `r = s.rolling("10s")`, the window at the
    ///   previous sample's time;
    /// - after pushing `x` at its time `t` into a window with
    ///   [`Closed::Left`]: the span before `x`'s own time, `[t − span, t)`,
    ///   which leaves `x` (and every sample at `t`) out: pandas'
    ///   `(x - r.mean()) / r.std()` for `r = s.rolling("10s",
    ///   closed="left")`.
    ///
    /// `None` until the window is [ready](Self::is_ready), below two
    /// samples (pandas' NaN), and while s is 0 (a flat window, where pandas
    /// divides by 0 into ±∞ or NaN). `Some(NaN)` while a NaN or an
    /// infinity counts in the window, or when `x` is NaN.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(10.0)?;
    /// for (t, x) in [(0.0, 9.0), (1.0, 11.0), (2.0, 9.0), (3.0, 11.0)] {
    ///     w.push_at(t, x)?;
    /// }
    /// let z = w.z_score(14.0).unwrap(); // mean 10, s² = 4/3
    /// assert!((z - 4.0 / (4.0_f64 / 3.0).sqrt()).abs() < 1e-15);
    ///
    /// // Closed on the left: push first, then score against [t − 10, t).
    /// let mut left = momenta::TimeWindow::new(10.0)?.with_closed(momenta::Closed::Left);
    /// for (t, x) in [(0.0, 9.0), (1.0, 11.0), (2.0, 9.0), (3.0, 11.0), (4.0, 14.0)] {
    ///     left.push_at(t, x)?;
    /// }
    /// assert_eq!(left.len(), 4); // 14.0 at t = 4 waits outside
    /// assert_eq!(left.z_score(14.0), Some(z));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn z_score(&self, x: F) -> Option<F> {
        crate::float::z_score(x, self.mean()?, self.sample_std_dev()?)
    }

    /// Whether a NaN in the window makes the statistics NaN.
    fn nan_counts(&self) -> bool {
        self.non_finite.nan > 0 && !self.policy.skips_nan()
    }

    /// The least value in the window: `None` until ready, `Some(NaN)`
    /// while a NaN counts.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(2.0)?;
    /// w.push_at(0.0, 1.0)?;
    /// w.push_at(1.0, 5.0)?;
    /// w.push_at(2.0, 3.0)?;
    /// assert_eq!(w.min(), Some(3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn min(&self) -> Option<F> {
        Extreme::Min.of(&self.extrema, self.is_ready(), self.nan_counts())
    }

    /// The greatest value in the window: `None` until ready, `Some(NaN)`
    /// while a NaN counts.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(2.0)?;
    /// w.push_at(0.0, 9.0)?;
    /// w.push_at(1.0, 5.0)?;
    /// assert_eq!(w.max(), Some(9.0));
    /// w.push_at(2.0, 3.0)?;
    /// assert_eq!(w.max(), Some(5.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn max(&self) -> Option<F> {
        Extreme::Max.of(&self.extrema, self.is_ready(), self.nan_counts())
    }

    /// `max − min` over the window: `None` until ready, `Some(NaN)` while
    /// a NaN counts.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(5.0)?;
    /// w.push_at(0.0, -1.0)?;
    /// w.push_at(1.0, 2.0)?;
    /// assert_eq!(w.range(), Some(3.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn range(&self) -> Option<F> {
        Extreme::Range.of(&self.extrema, self.is_ready(), self.nan_counts())
    }

    /// Every `*_series_at_into`: [`each_at`] with this statistic's clock.
    fn series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
        read: fn(&Self) -> Option<F>,
    ) -> Result<(), Error> {
        each_at(
            self,
            self.bounds.last_time,
            "at least the time of the previous sample",
            (times, xs, out),
            Self::push_at,
            read,
        )
    }

    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the mean after each push, NaN where [`mean`](Self::mean)
    /// is `None`: pandas' `s.rolling("5s").mean()` on a time index, polars'
    /// `s.rolling_mean_by(t, "5s")`. The window goes on from where it was and is
    /// left as the push loop leaves it, every value the push loop's bit
    /// for bit; the times are checked first, so a bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// let mut w = TimeWindow::new(5.0)?;
    /// let (t, x) = ([0.0, 1.5, 4.0, 5.0], [10.0, 12.0, 14.0, 22.0]);
    /// // At 5.0 the sample at 0.0 has left: (0, 5].
    /// assert_eq!(w.mean_series_at(&t, &x)?, [10.0, 11.0, 12.0, 16.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn mean_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.mean_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`mean_series_at`](Self::mean_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`mean_series_at`](Self::mean_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::<f64>::new(5.0)?;
    /// let mut out = [0.0; 2];
    /// w.mean_series_at_into(&[0.0, 1.5], &[10.0, 12.0], &mut out)?;
    /// assert!(w.mean_series_at_into(&[1.0, 2.0], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn mean_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::mean)
    }
    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the sample variance after each push, NaN where [`sample_variance`](Self::sample_variance)
    /// is `None`: pandas' `s.rolling("5s").var()`, polars'
    /// `s.rolling_var_by(t, "5s")`. The window goes on from where it was and is
    /// left as the push loop leaves it, every value the push loop's bit
    /// for bit; the times are checked first, so a bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// let mut w = TimeWindow::new(5.0)?;
    /// let (t, x) = ([0.0, 1.5, 4.0, 5.0], [10.0, 12.0, 14.0, 22.0]);
    /// let v: Vec<f64> = w.sample_variance_series_at(&t, &x)?;
    /// assert!(v[0].is_nan());
    /// assert_eq!(v[1..], [2.0, 4.0, 28.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn sample_variance_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.sample_variance_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`sample_variance_series_at`](Self::sample_variance_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`sample_variance_series_at`](Self::sample_variance_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::<f64>::new(5.0)?;
    /// let mut out = [0.0; 2];
    /// w.sample_variance_series_at_into(&[0.0, 1.5], &[10.0, 12.0], &mut out)?;
    /// assert!(w.sample_variance_series_at_into(&[1.0, 2.0], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn sample_variance_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::sample_variance)
    }
    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the population variance after each push, NaN where [`population_variance`](Self::population_variance)
    /// is `None`: pandas' `s.rolling("5s").var(ddof=0)`, polars'
    /// `s.rolling_var_by(t, "5s", ddof=0)`. The window goes on from where it was and is
    /// left as the push loop leaves it, every value the push loop's bit
    /// for bit; the times are checked first, so a bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// let mut w = TimeWindow::new(5.0)?;
    /// let (t, x) = ([0.0, 1.5, 4.0, 5.0], [10.0, 12.0, 14.0, 22.0]);
    /// let v = w.population_variance_series_at(&t, &x)?;
    /// assert_eq!(v[..2], [0.0, 1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn population_variance_series_at(
        &mut self,
        times: &[f64],
        xs: &[F],
    ) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.population_variance_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`population_variance_series_at`](Self::population_variance_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`population_variance_series_at`](Self::population_variance_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::<f64>::new(5.0)?;
    /// let mut out = [0.0; 2];
    /// w.population_variance_series_at_into(&[0.0, 1.5], &[10.0, 12.0], &mut out)?;
    /// assert!(w.population_variance_series_at_into(&[1.0, 2.0], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn population_variance_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::population_variance)
    }
    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the sample standard deviation after each push, NaN where [`sample_std_dev`](Self::sample_std_dev)
    /// is `None`: pandas' `s.rolling("5s").std()`, polars'
    /// `s.rolling_std_by(t, "5s")`. The window goes on from where it was and is
    /// left as the push loop leaves it, every value the push loop's bit
    /// for bit; the times are checked first, so a bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// let mut w = TimeWindow::new(5.0)?;
    /// let (t, x) = ([0.0, 1.5, 4.0, 5.0], [10.0, 12.0, 14.0, 22.0]);
    /// let s = w.sample_std_dev_series_at(&t, &x)?;
    /// assert_eq!(s[2], 2.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn sample_std_dev_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.sample_std_dev_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`sample_std_dev_series_at`](Self::sample_std_dev_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`sample_std_dev_series_at`](Self::sample_std_dev_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::<f64>::new(5.0)?;
    /// let mut out = [0.0; 2];
    /// w.sample_std_dev_series_at_into(&[0.0, 1.5], &[10.0, 12.0], &mut out)?;
    /// assert!(w.sample_std_dev_series_at_into(&[1.0, 2.0], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn sample_std_dev_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::sample_std_dev)
    }
    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the population standard deviation after each push, NaN where [`population_std_dev`](Self::population_std_dev)
    /// is `None`: pandas' `s.rolling("5s").std(ddof=0)`, polars'
    /// `s.rolling_std_by(t, "5s", ddof=0)`. The window goes on from where it was and is
    /// left as the push loop leaves it, every value the push loop's bit
    /// for bit; the times are checked first, so a bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// let mut w = TimeWindow::new(5.0)?;
    /// let (t, x) = ([0.0, 1.5, 4.0, 5.0], [10.0, 12.0, 14.0, 22.0]);
    /// let s = w.population_std_dev_series_at(&t, &x)?;
    /// assert_eq!(s[..2], [0.0, 1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn population_std_dev_series_at(
        &mut self,
        times: &[f64],
        xs: &[F],
    ) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.population_std_dev_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`population_std_dev_series_at`](Self::population_std_dev_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`population_std_dev_series_at`](Self::population_std_dev_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::<f64>::new(5.0)?;
    /// let mut out = [0.0; 2];
    /// w.population_std_dev_series_at_into(&[0.0, 1.5], &[10.0, 12.0], &mut out)?;
    /// assert!(w.population_std_dev_series_at_into(&[1.0, 2.0], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn population_std_dev_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::population_std_dev)
    }
    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the minimum after each push, NaN where [`min`](Self::min)
    /// is `None`: pandas' `s.rolling("5s").min()`, polars'
    /// `s.rolling_min_by(t, "5s")`. The window goes on from where it was and is
    /// left as the push loop leaves it, every value the push loop's bit
    /// for bit; the times are checked first, so a bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// let mut w = TimeWindow::new(5.0)?;
    /// let (t, x) = ([0.0, 1.5, 4.0, 5.0], [10.0, 12.0, 14.0, 22.0]);
    /// assert_eq!(w.min_series_at(&t, &x)?, [10.0, 10.0, 10.0, 12.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn min_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.min_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`min_series_at`](Self::min_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`min_series_at`](Self::min_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::<f64>::new(5.0)?;
    /// let mut out = [0.0; 2];
    /// w.min_series_at_into(&[0.0, 1.5], &[10.0, 12.0], &mut out)?;
    /// assert!(w.min_series_at_into(&[1.0, 2.0], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn min_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::min)
    }
    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the maximum after each push, NaN where [`max`](Self::max)
    /// is `None`: pandas' `s.rolling("5s").max()`, polars'
    /// `s.rolling_max_by(t, "5s")`. The window goes on from where it was and is
    /// left as the push loop leaves it, every value the push loop's bit
    /// for bit; the times are checked first, so a bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// let mut w = TimeWindow::new(5.0)?;
    /// let (t, x) = ([0.0, 1.5, 4.0, 5.0], [10.0, 12.0, 14.0, 22.0]);
    /// assert_eq!(w.max_series_at(&t, &x)?, [10.0, 12.0, 14.0, 22.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn max_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.max_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`max_series_at`](Self::max_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`max_series_at`](Self::max_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::<f64>::new(5.0)?;
    /// let mut out = [0.0; 2];
    /// w.max_series_at_into(&[0.0, 1.5], &[10.0, 12.0], &mut out)?;
    /// assert!(w.max_series_at_into(&[1.0, 2.0], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn max_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::max)
    }
    /// [`push_at`](Self::push_at) every `(times[i], xs[i])` in order and
    /// returns the range (maximum − minimum) after each push, NaN where [`range`](Self::range)
    /// is `None`: pandas' `s.rolling("5s").max() - s.rolling("5s").min()`, polars'
    /// `s.rolling_max_by(t, "5s") - s.rolling_min_by(t, "5s")`. The window goes on from where it was and is
    /// left as the push loop leaves it, every value the push loop's bit
    /// for bit; the times are checked first, so a bad one changes nothing.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `times`) when `times` is not as long as `xs`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// (naming `time`) when a time is NaN, infinite or earlier than the
    /// one before it, as [`push_at`](Self::push_at) says. Nothing is
    /// pushed then.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// let mut w = TimeWindow::new(5.0)?;
    /// let (t, x) = ([0.0, 1.5, 4.0, 5.0], [10.0, 12.0, 14.0, 22.0]);
    /// assert_eq!(w.range_series_at(&t, &x)?, [0.0, 2.0, 4.0, 10.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn range_series_at(&mut self, times: &[f64], xs: &[F]) -> Result<Vec<F>, Error> {
        let mut out = alloc::vec![F::zero(); xs.len()];
        self.range_series_at_into(times, xs, &mut out)?;
        Ok(out)
    }

    /// [`range_series_at`](Self::range_series_at) into a caller's buffer,
    /// as long as `xs`.
    ///
    /// # Errors
    ///
    /// As [`range_series_at`](Self::range_series_at), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// (naming `output`) when `out` is not as long as `xs`.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::<f64>::new(5.0)?;
    /// let mut out = [0.0; 2];
    /// w.range_series_at_into(&[0.0, 1.5], &[10.0, 12.0], &mut out)?;
    /// assert!(w.range_series_at_into(&[1.0, 2.0], &[1.0, 2.0], &mut out).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn range_series_at_into(
        &mut self,
        times: &[f64],
        xs: &[F],
        out: &mut [F],
    ) -> Result<(), Error> {
        self.series_at_into(times, xs, out, Self::range)
    }

    /// The number of samples in the window (not those waiting at the
    /// latest time in a window open on the right).
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(1.0)?;
    /// w.push_at(0.0, 1.0)?;
    /// w.push_at(0.5, 1.0)?;
    /// w.push_at(1.2, 1.0)?;
    /// assert_eq!(w.len(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether the window holds no sample.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(1.0)?;
    /// assert!(w.is_empty());
    /// w.push_at(0.0, 1.0)?;
    /// w.push_at(5.0, 1.0)?;
    /// assert!(!w.is_empty());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The span given to [`new`](Self::new).
    ///
    /// ```
    /// assert_eq!(momenta::TimeWindow::<f32>::new(0.25)?.span(), 0.25);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn span(&self) -> f64 {
        self.bounds.span
    }

    /// The time of the latest push, `None` before the first (or after a
    /// reset). The next time must not be earlier.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(1.0)?;
    /// assert_eq!(w.last_time(), None);
    /// w.push_at(7.0, 1.0)?;
    /// assert_eq!(w.last_time(), Some(7.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn last_time(&self) -> Option<f64> {
        self.bounds.last_time
    }

    /// Forgets every sample and the last time; the span and options stay.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(1.0)?;
    /// w.push_at(5.0, 1.0)?;
    /// w.reset();
    /// assert_eq!(w.mean(), None);
    /// w.push_at(0.0, 2.0)?; // time may start again
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.samples.clear();
        self.bounds.reset();
        self.non_finite = NonFinite::default();
        self.total = ShiftedMoments::default();
        self.fresh = ShiftedMoments::default();
        self.stale = 0;
        self.rebase_pending = false;
        self.newest_finite = None;
        self.extrema.clear();
        self.pushed = 0;
    }

    /// The samples in the window as `(time, value)`, oldest first.
    ///
    /// ```
    /// let mut w = momenta::TimeWindow::new(2.0)?;
    /// for (t, x) in [(0.0, 1.0), (1.0, 2.0), (2.5, 3.0)] {
    ///     w.push_at(t, x)?;
    /// }
    /// assert!(w.iter().eq([(1.0, 2.0), (2.5, 3.0)]));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (f64, F)> + '_ {
        self.samples.iter().copied()
    }
}

impl<F: Float> PartialEq for TimeWindow<F> {
    /// Equal when the spans, options and last times are equal and the
    /// windows hold the same samples in the same order.
    ///
    /// ```
    /// use momenta::TimeWindow;
    /// let mut a = TimeWindow::new(1.0)?;
    /// let mut b = TimeWindow::new(1.0)?;
    /// a.push_at(0.0, 9.0)?;
    /// a.push_at(2.0, 1.0)?;
    /// b.push_at(2.0, 1.0)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.bounds == other.bounds && self.policy == other.policy && self.samples == other.samples
    }
}

/// A time window as serialized.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(bound = "F: Float")]
#[serde(deny_unknown_fields)]
struct TimeWindowState<F> {
    #[serde(with = "crate::checkpoint::float")]
    span: f64,
    #[serde(with = "crate::checkpoint::float::option")]
    last_time: Option<f64>,
    #[serde(with = "crate::checkpoint::float::seq")]
    times: alloc::vec::Vec<f64>,
    #[serde(with = "crate::checkpoint::float::seq")]
    values: alloc::vec::Vec<F>,
    #[serde(default)]
    nan_policy: NanPolicy,
    #[serde(default = "super::policy::default_min_periods")]
    min_periods: usize,
    /// Absent in state saved before the sums were carried: they are then
    /// taken afresh from the samples.
    #[serde(default)]
    engine: Option<TimeEngineState<F>>,
    /// Absent in state saved before it existed: `Right`.
    #[serde(default)]
    closed: Closed,
    /// The values waiting at `last_time` (a window open on the right).
    #[serde(default, with = "crate::checkpoint::float::seq")]
    pending: alloc::vec::Vec<F>,
}

/// Where a time window stands between the take-overs of its sums, and the
/// sums.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
#[serde(deny_unknown_fields)]
struct TimeEngineState<F> {
    /// The samples at the front that predate the last take-over.
    stale: usize,
    /// The shift is leaving: the next finite sample takes it over.
    rebase_pending: bool,
    /// The sums of every finite sample in the window.
    sums: SumsState<F>,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<TimeWindowState<F>> for TimeWindow<F> {
    type Error = Error;

    fn try_from(state: TimeWindowState<F>) -> Result<Self, Error> {
        let mut w = Self::new(state.span)?
            .with_nan_policy(state.nan_policy)
            .with_min_periods(state.min_periods);
        if state.times.len() != state.values.len() {
            return Err(Error::state(alloc::format!(
                "{:?} times for {:?} values",
                state.times.len(),
                state.values.len()
            )));
        }
        let bounds = Bounds {
            closed: state.closed,
            last_time: state.last_time,
            pending: state.pending,
            ..w.bounds.clone()
        };
        bounds.check_restored(&state.times)?;
        if bounds.last_time.is_none() {
            w.bounds = bounds;
            return Ok(w);
        }
        let Some(engine) = state.engine else {
            // Every sample is inside the window at the last time, so
            // pushed in order into a window closed at both ends none
            // leaves: the same samples, with their sums taken afresh.
            w.bounds.closed = Closed::Both;
            for (&t, x) in state.times.iter().zip(state.values) {
                w.push_at(t, x)
                    .map_err(|e| Error::state(alloc::format!("{e}")))?;
            }
            w.bounds = bounds;
            return Ok(w);
        };
        if engine.stale > state.times.len() {
            return Err(Error::state(alloc::format!(
                "{:?} stale samples in a window of {:?}",
                engine.stale,
                state.times.len()
            )));
        }
        w.samples = state.times.into_iter().zip(state.values).collect();
        w.bounds = bounds;
        w.pushed = w.samples.len() as u64;
        for (seq, &(_, x)) in (0..).zip(&w.samples) {
            if !x.is_finite() {
                *w.non_finite.slot(x) += 1;
            }
            if !x.is_nan() {
                w.extrema.push(seq, x);
            }
        }
        // `fresh` is what `add_fresh` made of the samples since the last
        // take-over, in order: the same sums again.
        for &(_, x) in w.samples.range(engine.stale..) {
            if x.is_finite() {
                w.fresh.add_fresh(x);
            }
        }
        let samples = &w.samples;
        w.total = ShiftedMoments::from_state(engine.sums, || {
            samples.iter().map(|s| s.1).filter(|x| x.is_finite())
        })?;
        w.stale = engine.stale;
        w.rebase_pending = engine.rebase_pending;
        Ok(w)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> serde::Serialize for TimeWindow<F> {
    fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        use crate::checkpoint::float::Exact;
        use serde::ser::SerializeStruct;

        /// One column of the samples, oldest first, without copying.
        struct Column<'a, F, T>(&'a VecDeque<(f64, F)>, fn(&(f64, F)) -> T);

        impl<F, T: serde::Serialize> serde::Serialize for Column<'_, F, T> {
            fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
                serializer.collect_seq(self.0.iter().map(self.1))
            }
        }

        /// Values, without copying.
        struct Values<'a, F>(&'a [F]);

        impl<F: Float> serde::Serialize for Values<'_, F> {
            fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
                serializer.collect_seq(self.0.iter().copied().map(Exact))
            }
        }

        let mut state = serializer.serialize_struct("TimeWindowState", 9)?;
        state.serialize_field("span", &Exact(self.bounds.span))?;
        state.serialize_field("last_time", &self.bounds.last_time.map(Exact))?;
        state.serialize_field("times", &Column(&self.samples, |s| Exact(s.0)))?;
        state.serialize_field("values", &Column(&self.samples, |s| Exact(s.1)))?;
        state.serialize_field("nan_policy", &self.policy.nan)?;
        state.serialize_field("min_periods", &self.policy.min_periods)?;
        let engine = TimeEngineState {
            stale: self.stale,
            rebase_pending: self.rebase_pending,
            sums: self.total.to_state(),
        };
        state.serialize_field("engine", &Some(engine))?;
        state.serialize_field("closed", &self.bounds.closed)?;
        state.serialize_field("pending", &Values(&self.bounds.pending))?;
        state.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::two_pass;
    use alloc::vec::Vec;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn the_room_of_a_burst_is_given_back_once_it_has_left() {
        let mut w = TimeWindow::new(1.0).unwrap();
        // A falling burst: every value stays in the maximum's deque.
        for k in 0..100_000 {
            w.push_at(0.0, f64::from(100_000 - k)).unwrap();
        }
        assert!(w.samples.capacity() >= 100_000 && w.extrema.room() >= 100_000);
        w.push_at(5.0, 7.0).unwrap();
        assert!(w.samples.capacity() < 256, "{}", w.samples.capacity());
        assert!(w.extrema.room() < 512, "{}", w.extrema.room());
        assert_eq!(
            (w.mean(), w.min(), w.max()),
            (Some(7.0), Some(7.0), Some(7.0))
        );
        // And the window goes on as one that never held the burst.
        let mut fresh = TimeWindow::new(1.0).unwrap();
        fresh.push_at(5.0, 7.0).unwrap();
        for (t, x) in [(5.5, 1.0), (5.75, -2.0), (6.25, 4.0)] {
            w.push_at(t, x).unwrap();
            fresh.push_at(t, x).unwrap();
            assert_eq!(w.mean(), fresh.mean());
            assert_eq!((w.min(), w.max()), (fresh.min(), fresh.max()));
        }
    }

    #[test]
    fn auto_traits() {
        assert_send_sync::<TimeWindow<f32>>();
        assert_send_sync::<TimeWindow<f64>>();
    }

    #[test]
    fn refreshes_keep_total_equal_to_a_recomputation() {
        // Irregular times, a burst, gaps; outliers entering and leaving.
        let mut w = TimeWindow::<f64>::new(10.0).unwrap();
        let mut t = 0.0;
        let mut all: Vec<(f64, f64)> = Vec::new();
        for i in 0..5000_u32 {
            t += f64::from((i * 7919) % 13) * 0.25 + if i % 500 == 0 { 30.0 } else { 0.0 };
            let x = if i % 97 == 0 {
                1e9
            } else {
                f64::from(i % 17) * 0.125
            };
            w.push_at(t, x).unwrap();
            all.push((t, x));
            let inside: Vec<f64> = all.iter().filter(|s| t - s.0 < 10.0).map(|s| s.1).collect();
            assert_eq!(w.len(), inside.len());
            let (mean, m2) = two_pass(&inside);
            let max = inside.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
            assert!((w.mean().unwrap() - mean).abs() <= 4.0 * f64::EPSILON * max);
            let pop = w.population_variance().unwrap();
            let want = m2 / inside.len() as f64;
            assert!(
                (pop - want).abs() <= 1e-12 * want.max(1e-300) + 1e-30,
                "{i}: {pop} {want}"
            );
            assert!(w.stale <= w.len());
        }
    }
}
