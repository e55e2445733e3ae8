//! A quantile (a median, by default) over the last span of time.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::bounds::{Bounds, Closed};
use super::interpolation::Interpolation;
use super::policy::Policy;
use super::spare::release_spare;
use super::window_order::{WindowOrder, numbered};
use crate::NanPolicy;
use crate::error::check_unit_interval;
use crate::{Error, Float};

/// The `q`-quantile of the samples of the last `span` of time, exactly: pandas'
/// `rolling("10s").quantile(q)` and `rolling("10s").median()` (and polars'
/// `rolling_quantile_by`), pushed one timestamped sample at a time.
///
/// The window is that of [`TimeWindow`](crate::TimeWindow): `(t − span,
/// t]` at the time `t` of the latest push, or another [`Closed`] choice of
/// ends; times are `f64` in the caller's unit and must not decrease
/// (equal times are fine). The quantile is that of
/// [`MovingQuantile`](crate::MovingQuantile) over the samples in the
/// window — the rank `q·(m − 1)` among the `m` values, read by an
/// [`Interpolation`] (default `Linear`) — so on finite data it is pandas'
/// to the bit.
///
/// # NaN, infinities, zeros
///
/// As for [`MovingQuantile`](crate::MovingQuantile): `Some(NaN)` while a
/// NaN is in the window (or it is left out, with [`NanPolicy::Skip`], as
/// pandas does), infinities are ordered values, `−0.0` sorts below `+0.0`.
/// A time that is NaN, infinite or earlier than the previous one is an
/// `Err` and changes nothing.
///
/// # Memory
///
/// Every sample inside the span is kept, once in a queue and once in
/// order: memory grows with the number of samples in the span, and once
/// a burst has left, the room it took is given back (the queues keep at
/// most four times, and at least twice, what they hold).
///
/// # Speed
///
/// Up to 4096 samples in the span, their order is one sorted array: a
/// push that lets one sample in and one out moves the values between
/// their two places by one. Past that, two ordered sets (O(log n) a push
/// for n samples); the order moves between the two as the span fills and
/// empties, and the quantile is the same either way. A push and read took
/// 62–146 ns for spans of 5 to 1000 samples, where the sets alone took
/// 121–348 (AMD EPYC 7003 guest).
///
/// # Equality and serialization
///
/// Equal when the span, `q`, the options, the latest time and the samples
/// in order are equal. Serialized as `{"span", "q", "interpolation",
/// "closed", "last_time", "times", "values", "pending", "nan_policy",
/// "min_periods"}`, the order rebuilt on the way in (which gives it
/// again exactly); the times are checked as a
/// [`TimeWindow`](crate::TimeWindow)'s are. **Checkpoints** (feature
/// `serde`): restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::TimeQuantile;
///
/// // A median over the last 10 s of a sensor that reports irregularly:
/// // pandas' s.rolling("10s").median().
/// let mut median = TimeQuantile::median(10.0)?;
/// let mut out = Vec::new();
/// for (t, x) in [(0.0, 20.0), (2.5, 21.0), (3.0, 95.0), (9.0, 20.5), (12.0, 20.0)] {
///     out.push(median.push_at(t, x)?);
/// }
/// // At 12 s the window is (2, 12]: 21, 95, 20.5, 20.
/// assert_eq!(out, [20.0, 20.5, 21.0, 20.75, 20.75]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct TimeQuantile<F> {
    /// The span, the ends, the clock and the values waiting at the latest
    /// time.
    bounds: Bounds<F>,
    /// `(time, value)` of the samples in the window, oldest first.
    samples: VecDeque<(f64, F)>,
    /// The values in the window that are not NaN, in order.
    order: WindowOrder<F>,
    /// The values that leave the window at a push (not NaN, with their
    /// numbers): a buffer kept between pushes, empty outside them.
    leaving: Vec<(F, u64)>,
    /// NaN values in the window.
    nans: usize,
    /// Samples that entered the window since the last reset: the next
    /// one's number.
    entered: u64,
    q: F,
    interpolation: Interpolation,
    policy: Policy,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] TimeQuantile<F>, TimeQuantileState<F>);

impl<F: Float> TimeQuantile<F> {
    /// An empty window over the last `span` of time (in the unit of the
    /// times given to [`push_at`](Self::push_at)) that reports the
    /// `q`-quantile of its samples.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `span` when it is not positive (0, negative or NaN; `+∞` is
    /// allowed: nothing leaves), or `q` when it is outside `[0, 1]` or NaN.
    ///
    /// ```
    /// use momenta::TimeQuantile;
    /// let p90 = TimeQuantile::<f64>::new(60.0, 0.9)?;
    /// assert_eq!((p90.span(), p90.q()), (60.0, 0.9));
    /// assert_eq!(
    ///     TimeQuantile::<f64>::new(60.0, 1.5).unwrap_err().to_string(),
    ///     "q must be in [0, 1], got 1.5"
    /// );
    /// assert!(TimeQuantile::<f64>::new(0.0, 0.5).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(span: f64, q: F) -> Result<Self, Error> {
        let bounds = Bounds::new(span)?;
        check_unit_interval("q", q.as_f64())?;
        Ok(Self {
            bounds,
            samples: VecDeque::new(),
            order: WindowOrder::for_window(0),
            leaving: Vec::new(),
            nans: 0,
            entered: 0,
            q,
            interpolation: Interpolation::Linear,
            policy: Policy::default(),
        })
    }

    /// A median over the last `span` of time: `new(span, 0.5)`, pandas'
    /// `rolling(span).median()`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `span` when it is not positive.
    ///
    /// ```
    /// let mut m = momenta::TimeQuantile::median(5.0)?;
    /// m.push_at(0.0, 1.0)?;
    /// m.push_at(1.0, 9.0)?;
    /// assert_eq!(m.quantile(), Some(5.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn median(span: f64) -> Result<Self, Error> {
        Self::new(span, F::from_f64(0.5))
    }

    /// Reads a rank between two values as `how` says (pandas'
    /// `interpolation=`); the default is [`Interpolation::Linear`].
    ///
    /// ```
    /// use momenta::{Interpolation, TimeQuantile};
    /// let mut m = TimeQuantile::median(5.0)?.with_interpolation(Interpolation::Higher);
    /// m.push_at(0.0, 1.0)?;
    /// assert_eq!(m.push_at(1.0, 9.0)?, 9.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_interpolation(mut self, how: Interpolation) -> Self {
        self.interpolation = how;
        self
    }

    /// Sets which ends of the window belong to it (pandas' `closed=`),
    /// as [`TimeWindow::with_closed`](crate::TimeWindow::with_closed).
    ///
    /// ```
    /// use momenta::{Closed, TimeQuantile};
    /// let mut m = TimeQuantile::median(5.0)?.with_closed(Closed::Left);
    /// assert!(m.push_at(0.0, 1.0_f64)?.is_nan()); // nothing before 0
    /// assert_eq!(m.push_at(1.0, 9.0)?, 1.0); // [−4, 1): the sample at 0
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_closed(mut self, closed: Closed) -> Self {
        self.bounds.closed = closed;
        self
    }

    /// Skips NaN values instead of propagating them ([`NanPolicy`]): the
    /// quantile of the other values, as pandas computes it.
    ///
    /// ```
    /// use momenta::{NanPolicy, TimeQuantile};
    /// let mut m = TimeQuantile::median(5.0)?.with_nan_policy(NanPolicy::Skip);
    /// m.push_at(0.0, 1.0)?;
    /// m.push_at(1.0, f64::NAN)?;
    /// assert_eq!(m.push_at(2.0, 3.0)?, 2.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_nan_policy(mut self, policy: NanPolicy) -> Self {
        self.policy.nan = policy;
        self
    }

    /// Holds the quantile back (`None`, and NaN from
    /// [`push_at`](Self::push_at)) until the window holds `min_periods`
    /// samples that count — every sample, or the non-NaN ones under
    /// [`NanPolicy::Skip`] — as pandas' `min_periods`. The default is 1,
    /// pandas' default for time windows; 0 acts as 1. Any count can be
    /// reached, so this cannot fail.
    ///
    /// ```
    /// let mut m = momenta::TimeQuantile::median(5.0)?.with_min_periods(2);
    /// assert!(m.push_at(0.0, 1.0_f64)?.is_nan());
    /// assert_eq!(m.push_at(1.0, 3.0)?, 2.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_min_periods(mut self, min_periods: usize) -> Self {
        self.policy.min_periods = min_periods;
        self
    }

    /// Adds the sample `x` taken at time `t` and returns the quantile of
    /// the window after it (NaN while a NaN counts or until the window is
    /// [ready](Self::is_ready)). Samples outside the window at `t` leave.
    /// O(log n) per sample entering or leaving.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `time` when `t` is NaN or infinite, or earlier than the time
    /// of the previous push; the window is then unchanged.
    ///
    /// ```
    /// let mut m = momenta::TimeQuantile::median(2.0)?;
    /// assert_eq!(m.push_at(1.0, 5.0)?, 5.0);
    /// assert_eq!(m.push_at(1.0, 7.0)?, 6.0); // equal times are fine
    /// assert!(m.push_at(0.5, 1.0).is_err());
    /// assert_eq!(m.push_at(3.0, 9.0)?, 9.0); // (1, 3]: both samples at 1 leave
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn push_at(&mut self, t: f64, x: F) -> Result<F, Error> {
        self.bounds.check(t)?;
        let q = self.q.as_f64();
        if let Some((at, waiting)) = self.bounds.release(t) {
            for &v in &waiting {
                let entering = self.enter(at, v);
                self.order.exchange(None, entering, q);
            }
            self.bounds.restore_pending(waiting);
        }
        self.evict(t);
        let entering = self.bounds.admit(t, x).and_then(|x| self.enter(t, x));
        // One leaving and one entering (the steady state) is one exchange.
        self.order.exchange_many(&self.leaving, entering, q);
        self.leaving.clear();
        release_spare(&mut self.leaving);
        release_spare(&mut self.samples);
        self.fit_order();
        Ok(self.quantile_or_nan())
    }

    /// Adds the sample `x` at time `t` to the queue; returns it with its
    /// number when it is to enter the order (not NaN).
    fn enter(&mut self, t: f64, x: F) -> Option<(F, u64)> {
        self.samples.push_back((t, x));
        let seq = self.entered;
        self.entered += 1;
        if x.is_nan() {
            self.nans += 1;
            None
        } else {
            Some((x, seq))
        }
    }

    /// Drops the samples that are outside the window at `t` from the
    /// queue, and puts those that are to leave the order (not NaN) in
    /// `leaving`.
    fn evict(&mut self, t: f64) {
        while let Some(&(u, old)) = self.samples.front() {
            if !self.bounds.leaves(u, t) {
                break;
            }
            let seq = self.entered - self.samples.len() as u64;
            self.samples.pop_front();
            if old.is_nan() {
                self.nans -= 1;
            } else {
                self.leaving.push((old, seq));
            }
        }
    }

    /// The values in the queue that are not NaN, with their numbers.
    fn numbered_samples(
        samples: &VecDeque<(f64, F)>,
        entered: u64,
    ) -> impl Iterator<Item = (F, u64)> {
        numbered(
            entered - samples.len() as u64,
            samples.iter().map(|&(_, x)| x),
        )
    }

    /// The order in the structure that suits its length.
    fn fit_order(&mut self) {
        let (samples, entered) = (&self.samples, self.entered);
        self.order
            .fit(|| Self::numbered_samples(samples, entered), self.q.as_f64());
    }

    /// The samples the quantile is computed from.
    fn counted(&self) -> usize {
        self.policy.counted(self.samples.len(), self.nans)
    }

    /// Whether the window holds enough samples for a quantile (see
    /// [`with_min_periods`](Self::with_min_periods)).
    ///
    /// ```
    /// let mut m = momenta::TimeQuantile::median(1.0)?;
    /// assert!(!m.is_ready());
    /// m.push_at(0.0, 2.0)?;
    /// assert!(m.is_ready());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.policy.ready(self.counted())
    }

    /// The quantile, NaN when there is none.
    fn quantile_or_nan(&self) -> F {
        if !self.is_ready() || (self.nans > 0 && !self.policy.skips_nan()) {
            return F::nan();
        }
        self.order.quantile(self.q.as_f64(), self.interpolation)
    }

    /// The `q`-quantile of the window: `None` until it is
    /// [ready](Self::is_ready), `Some(NaN)` while a NaN counts.
    ///
    /// ```
    /// let mut m = momenta::TimeQuantile::new(10.0, 0.25)?;
    /// assert_eq!(m.quantile(), None);
    /// for (t, x) in [(0.0, 4.0), (1.0, 3.0), (2.0, 2.0), (3.0, 1.0)] {
    ///     m.push_at(t, x)?;
    /// }
    /// assert_eq!(m.quantile(), Some(1.75));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn quantile(&self) -> Option<F> {
        self.is_ready().then(|| self.quantile_or_nan())
    }

    /// The `q` given to [`new`](Self::new).
    ///
    /// ```
    /// assert_eq!(momenta::TimeQuantile::<f32>::median(3.0)?.q(), 0.5);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn q(&self) -> F {
        self.q
    }

    /// The [`Interpolation`] in force.
    ///
    /// ```
    /// use momenta::{Interpolation, TimeQuantile};
    /// assert_eq!(TimeQuantile::<f64>::median(3.0)?.interpolation(), Interpolation::Linear);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Which ends of the window belong to it.
    ///
    /// ```
    /// use momenta::{Closed, TimeQuantile};
    /// assert_eq!(TimeQuantile::<f64>::median(3.0)?.closed(), Closed::Right);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn closed(&self) -> Closed {
        self.bounds.closed
    }

    /// The span given to [`new`](Self::new).
    ///
    /// ```
    /// assert_eq!(momenta::TimeQuantile::<f64>::median(0.25)?.span(), 0.25);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn span(&self) -> f64 {
        self.bounds.span
    }

    /// The time of the latest push, `None` before the first (or after a
    /// reset).
    ///
    /// ```
    /// let mut m = momenta::TimeQuantile::median(1.0)?;
    /// m.push_at(7.0, 1.0)?;
    /// assert_eq!(m.last_time(), Some(7.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn last_time(&self) -> Option<f64> {
        self.bounds.last_time
    }

    /// The number of samples in the window (not those waiting at the
    /// latest time for a window open on the right).
    ///
    /// ```
    /// let mut m = momenta::TimeQuantile::median(1.0)?;
    /// for t in [0.0, 0.5, 1.2] {
    ///     m.push_at(t, 1.0)?;
    /// }
    /// assert_eq!(m.len(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether the window holds no sample.
    ///
    /// ```
    /// assert!(momenta::TimeQuantile::<f64>::median(1.0)?.is_empty());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Forgets every sample and the clock; the span, `q` and the options
    /// stay.
    ///
    /// ```
    /// let mut m = momenta::TimeQuantile::median(1.0)?;
    /// m.push_at(5.0, 1.0)?;
    /// m.reset();
    /// assert_eq!(m.quantile(), None);
    /// m.push_at(0.0, 2.0)?; // time may start again
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn reset(&mut self) {
        self.bounds.reset();
        self.samples.clear();
        self.order = WindowOrder::for_window(0);
        self.nans = 0;
        self.entered = 0;
    }

    /// The samples in the window as `(time, value)`, oldest first.
    ///
    /// ```
    /// let mut m = momenta::TimeQuantile::median(2.0)?;
    /// for (t, x) in [(0.0, 1.0), (1.0, 2.0), (2.5, 3.0)] {
    ///     m.push_at(t, x)?;
    /// }
    /// assert!(m.iter().eq([(1.0, 2.0), (2.5, 3.0)]));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (f64, F)> + '_ {
        self.samples.iter().copied()
    }
}

impl<F: Float> PartialEq for TimeQuantile<F> {
    /// Equal when the spans, `q`, the options and the latest times are
    /// equal and the windows hold the same samples in the same order.
    ///
    /// ```
    /// use momenta::TimeQuantile;
    /// let mut a = TimeQuantile::median(1.0)?;
    /// let mut b = TimeQuantile::median(1.0)?;
    /// a.push_at(0.0, 9.0)?;
    /// a.push_at(2.0, 1.0)?;
    /// b.push_at(2.0, 1.0)?;
    /// assert_eq!(a, b);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn eq(&self, other: &Self) -> bool {
        self.bounds == other.bounds
            && self.q == other.q
            && self.interpolation == other.interpolation
            && self.policy == other.policy
            && self.samples == other.samples
    }
}

/// A time quantile as serialized.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
#[serde(bound = "F: Float")]
#[serde(deny_unknown_fields)]
struct TimeQuantileState<F> {
    #[serde(with = "crate::checkpoint::float")]
    span: f64,
    #[serde(with = "crate::checkpoint::float")]
    q: f64,
    interpolation: Interpolation,
    closed: Closed,
    #[serde(with = "crate::checkpoint::float::option")]
    last_time: Option<f64>,
    #[serde(with = "crate::checkpoint::float::seq")]
    times: alloc::vec::Vec<f64>,
    #[serde(with = "crate::checkpoint::float::seq")]
    values: alloc::vec::Vec<F>,
    #[serde(with = "crate::checkpoint::float::seq")]
    pending: alloc::vec::Vec<F>,
    nan_policy: NanPolicy,
    min_periods: usize,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<TimeQuantileState<F>> for TimeQuantile<F> {
    type Error = Error;

    fn try_from(state: TimeQuantileState<F>) -> Result<Self, Error> {
        let mut m = Self::new(state.span, crate::float::exactly("q", state.q)?)?
            .with_interpolation(state.interpolation)
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
            ..m.bounds.clone()
        };
        bounds.check_restored(&state.times)?;
        for (&t, x) in state.times.iter().zip(state.values) {
            m.enter(t, x);
        }
        m.order = WindowOrder::for_window(m.samples.len() - m.nans);
        m.order
            .refill(Self::numbered_samples(&m.samples, m.entered), m.q.as_f64());
        m.bounds = bounds;
        Ok(m)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> serde::Serialize for TimeQuantile<F> {
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

        let mut state = serializer.serialize_struct("TimeQuantileState", 10)?;
        state.serialize_field("span", &Exact(self.bounds.span))?;
        state.serialize_field("q", &Exact(self.q.as_f64()))?;
        state.serialize_field("interpolation", &self.interpolation)?;
        state.serialize_field("closed", &self.bounds.closed)?;
        state.serialize_field("last_time", &self.bounds.last_time.map(Exact))?;
        state.serialize_field("times", &Column(&self.samples, |s| Exact(s.0)))?;
        state.serialize_field("values", &Column(&self.samples, |s| Exact(s.1)))?;
        state.serialize_field("pending", &Values(&self.bounds.pending))?;
        state.serialize_field("nan_policy", &self.policy.nan)?;
        state.serialize_field("min_periods", &self.policy.min_periods)?;
        state.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn the_room_of_a_burst_is_given_back_once_it_has_left() {
        let mut m = TimeQuantile::median(1.0).unwrap();
        for k in 0..100_000 {
            m.push_at(0.0, f64::from(k % 1000)).unwrap();
        }
        assert!(m.samples.capacity() >= 100_000);
        assert_eq!(m.push_at(5.0, 7.0).unwrap(), 7.0);
        assert!(m.samples.capacity() < 256, "{}", m.samples.capacity());
        assert!(m.leaving.capacity() < 256, "{}", m.leaving.capacity());
        // And the window goes on as one that never held the burst.
        let mut fresh = TimeQuantile::median(1.0).unwrap();
        fresh.push_at(5.0, 7.0).unwrap();
        for (t, x) in [(5.5, 1.0), (5.75, -2.0), (6.25, 4.0), (6.5, 3.0)] {
            assert_eq!(m.push_at(t, x).unwrap(), fresh.push_at(t, x).unwrap());
        }
    }

    #[test]
    fn auto_traits() {
        assert_send_sync::<TimeQuantile<f32>>();
        assert_send_sync::<TimeQuantile<f64>>();
    }

    #[test]
    fn the_sets_hold_exactly_the_window() {
        for closed in [Closed::Right, Closed::Left, Closed::Both, Closed::Neither] {
            let mut m = TimeQuantile::<f64>::new(3.0, 0.3)
                .unwrap()
                .with_closed(closed);
            for i in 0..400_u32 {
                let t = f64::from(i / 3) * 0.5;
                let x = if i % 17 == 0 {
                    f64::NAN
                } else {
                    f64::from((i * 7) % 11)
                };
                m.push_at(t, x).unwrap();
                assert_eq!(m.order.len() + m.nans, m.len());
                assert!(m.order.is_in_order(0.3));
            }
        }
    }
}
