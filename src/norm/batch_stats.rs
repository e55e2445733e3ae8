//! Per-channel statistics of one batch, and their exact merge (SyncBN).

use alloc::vec::Vec;

use super::Layout;
use crate::moments::Moments;
use crate::{Element, Error, Float, Merge, VarianceParts};

/// Per-channel count, mean and sum of squared deviations (M2) of one batch,
/// computed in one pass over the data.
///
/// The data may be `f32` or `f64` whatever `F` is: the kernels accumulate in
/// `f64` and every channel's state is kept in `f64` (shift, mean offset,
/// M2), so [`BatchStats::<f32>`](BatchStats) of `f32` activations is as
/// accurate as the data allows (no `E[x²] − E[x]²` cancellation) and
/// statistics merged across ranks lose nothing to `f32` rounding, provided
/// they travel as [`to_parts`](BatchStats::to_parts). The getters round to
/// `F` once.
///
/// # Synchronized BatchNorm
///
/// [`merge`](Merge::merge) is Chan's formula: each rank computes its
/// `BatchStats` on its shard, the ranks exchange their state
/// ([`to_parts`](BatchStats::to_parts) out: the count and three `f64`
/// vectors, [`from_parts`](BatchStats::from_parts) in), and merging gives
/// the whole batch's statistics exactly (up to rounding) — no second pass
/// over the data for the variance. The exchange is lossless: the merged
/// statistics are bit for bit those of one process merging the same
/// shards. (Exchanging the rounded getters — `count`, `mean`,
/// `sum_squared_deviations` into [`from_mean_m2`](BatchStats::from_mean_m2)
/// — rounds each mean to `F`: for `f32` data with a mean 10⁶ times its
/// spread, the merged variance is then percents off.) Averaging per-rank means and variances with equal
/// weights, a known porting bug, is wrong whenever shards differ in size or
/// in mean.
///
/// # Empty and invalid values
///
/// A batch with no values per channel has count 0; its means and variances
/// are NaN (0/0), and it is the identity of `merge`. The unbiased variance
/// is NaN below two values. NaN and ±∞ in the data propagate.
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::Merge;
/// use momenta::norm::{BatchStats, Layout};
///
/// // Two ranks of a synchronized BatchNorm with one channel.
/// let mut s = BatchStats::<f64>::compute(&[1.0, 2.0, 3.0, 4.0, 5.0], Layout::nc(5, 1)?)?;
/// let other = BatchStats::compute(&[10.0_f32, 11.0, 12.0], Layout::nc(3, 1)?)?;
/// s.merge(&other);
/// assert_eq!(s.count(), 8);
/// assert_eq!(s.mean(), &[6.0]);
/// assert_eq!(s.variance(), vec![16.5]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "BatchStatsParts", bound = "F: Float")
)]
pub struct BatchStats<F> {
    count: u64,
    moments: Vec<Moments<f64>>,
    /// `moments` rounded to `F`, so that `mean()` can return a slice.
    mean: Vec<F>,
    /// The biased variances rounded to `F`, so that `var()` can return a
    /// slice.
    var: Vec<F>,
    poisoned: bool,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] BatchStats<F>, BatchStatsParts);

/// Equal when the moments are: the cached `mean` is derived from them, and
/// reads NaN for an empty channel, which would make empty statistics
/// unequal to themselves.
impl<F> PartialEq for BatchStats<F> {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count
            && self.moments == other.moments
            && self.poisoned == other.poisoned
    }
}

fn mean_of(m: &Moments<f64>) -> f64 {
    m.mean().unwrap_or(f64::NAN)
}

/// The biased variance, `M2/n` (NaN with no values): `Moments::variance`,
/// with the division by a power of two as a multiplication (the same
/// bits).
fn var_of(m: &Moments<f64>) -> f64 {
    if m.count == 0 {
        return f64::NAN;
    }
    crate::kernels::divide_by_count(m.m2(), m.count)
}

/// Statistics built a chunk of channels at a time (a layer norm's rows,
/// the groups of a few samples): each chunk's means and variances are
/// taken while its moments are in cache, and no vector is filled twice.
/// Rows added by [`push_rows`](RowStats::push_rows) get the moments
/// [`BatchStats::compute`] gives rows of that length, bit for bit, when
/// every chunk but the last holds an even number of rows.
pub(super) struct RowStats<F> {
    count: u64,
    moments: Vec<Moments<f64>>,
    mean: Vec<F>,
    var: Vec<F>,
}

impl<F: Float> RowStats<F> {
    /// Room for `channels` channels of `count` values each.
    pub(super) fn new(count: u64, channels: usize) -> Self {
        Self {
            count,
            moments: Vec::with_capacity(channels),
            mean: Vec::with_capacity(channels),
            var: Vec::with_capacity(channels),
        }
    }

    /// Adds the rows of `run` values of `xs` (whole rows) as channels and
    /// returns their moments.
    pub(super) fn push_rows<S: Element>(&mut self, xs: &[S], run: usize) -> &[Moments<f64>] {
        let start = self.moments.len();
        crate::kernels::extend_row_moments(xs, run, &mut self.moments);
        self.rounded_from(start)
    }

    /// Adds channels of the given moments and returns them.
    pub(super) fn push_moments(
        &mut self,
        moments: impl IntoIterator<Item = Moments<f64>>,
    ) -> &[Moments<f64>] {
        let start = self.moments.len();
        self.moments.extend(moments);
        self.rounded_from(start)
    }

    /// The means and variances of the channels from `start` on, and their
    /// moments.
    fn rounded_from(&mut self, start: usize) -> &[Moments<f64>] {
        let added = self.moments.get(start..).unwrap_or(&[]);
        self.mean
            .extend(added.iter().map(|m| F::from_f64(mean_of(m))));
        self.var
            .extend(added.iter().map(|m| F::from_f64(var_of(m))));
        added
    }

    /// The statistics of every channel added.
    pub(super) fn finish(self) -> BatchStats<F> {
        BatchStats {
            count: self.count,
            moments: self.moments,
            mean: self.mean,
            var: self.var,
            poisoned: false,
        }
    }
}

impl<F: Float> BatchStats<F> {
    pub(super) fn from_moments(count: u64, moments: Vec<Moments<f64>>) -> Self {
        let mean = moments.iter().map(|m| F::from_f64(mean_of(m))).collect();
        let var = moments.iter().map(|m| F::from_f64(var_of(m))).collect();
        Self {
            count,
            moments,
            mean,
            var,
            poisoned: false,
        }
    }

    /// Statistics with no values for `channels` channels: the identity of
    /// [`merge`](Merge::merge).
    ///
    /// ```
    /// use momenta::Merge;
    /// use momenta::norm::{BatchStats, Layout};
    /// let mut total = BatchStats::<f64>::new(2);
    /// assert_eq!(total.count(), 0);
    /// total.merge(&BatchStats::compute(&[1.0, 2.0, 3.0, 4.0], Layout::nc(2, 2)?)?);
    /// assert_eq!(total.mean(), &[2.0, 3.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn new(channels: usize) -> Self {
        Self::from_moments(0, alloc::vec![Moments::default(); channels])
    }

    /// The statistics of every channel of `xs`, a tensor of shape `layout`,
    /// in one pass through the kernels (accumulating in `f64`).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `data` when `xs.len()` differs from `layout.len()`.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// // PyTorch's BatchNorm1d(4) reference: x = [[2, 15, 2, 1], [2, 17, 2, 1], [−4, −2, −2, −1]], shape (N=3, C=4).
    /// let xs = [2.0, 15.0, 2.0, 1.0, 2.0, 17.0, 2.0, 1.0, -4.0, -2.0, -2.0, -1.0];
    /// let s = BatchStats::<f64>::compute(&xs, Layout::nc(3, 4)?)?;
    /// assert_eq!(&s.mean()[..2], &[0.0, 10.0]);
    /// assert!((s.mean()[2] - 2.0 / 3.0).abs() < 1e-15);
    /// assert_eq!(s.unbiased_variance()[..2], [12.0, 109.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn compute<S: Element>(xs: &[S], layout: Layout) -> Result<Self, Error> {
        layout.check(xs.len())?;
        let moments =
            crate::kernels::channel_moments(xs, layout.outer(), layout.channels(), layout.inner());
        Ok(Self::from_moments(layout.count_per_channel(), moments))
    }

    /// [`compute`](BatchStats::compute) on every rayon thread. The result
    /// does not depend on the number of threads.
    ///
    /// # Errors
    ///
    /// As [`compute`](BatchStats::compute).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let xs: Vec<f32> = (0..600).map(|i| (i % 7) as f32).collect();
    /// let layout = Layout::nchw(2, 3, 10, 10)?;
    /// let s = BatchStats::<f64>::par_compute(&xs, layout)?;
    /// assert_eq!(s, BatchStats::compute(&xs, layout)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_compute<S: Element>(xs: &[S], layout: Layout) -> Result<Self, Error> {
        layout.check(xs.len())?;
        let moments = crate::kernels::par_channel_moments(
            xs,
            layout.outer(),
            layout.channels(),
            layout.inner(),
        );
        Ok(Self::from_moments(layout.count_per_channel(), moments))
    }

    /// The whole state as plain data — one `f64` vector per field, what an
    /// MPI all-gather or a socket wants — to rebuild on another rank with
    /// [`from_parts`](BatchStats::from_parts) and merge there.
    ///
    /// Lossless for either `F`: the parts are the internal `f64` moments
    /// of every channel (shift included), not the means rounded to `F`, so
    /// statistics of `f32` data merged across ranks equal, bit for bit,
    /// those of one process merging the same shards. NaN and ±∞ states and
    /// the [poisoned](BatchStats::is_poisoned) flag round-trip too.
    ///
    /// ```
    /// use momenta::Merge;
    /// use momenta::norm::{BatchStats, Layout};
    /// let local = BatchStats::<f32>::compute(&[1.0_f32, 2.0, 3.0, 4.0, 5.0], Layout::nc(5, 1)?)?;
    /// let remote = BatchStats::<f32>::compute(&[10.0_f32, 11.0, 12.0], Layout::nc(3, 1)?)?;
    /// // The other rank sends `remote.to_parts()`; this rank rebuilds it.
    /// let received = BatchStats::<f32>::from_parts(remote.to_parts())?;
    /// assert_eq!(received, remote);
    /// let mut all = local.clone();
    /// all.merge(&received);
    /// assert_eq!((all.mean()[0], all.variance()[0]), (6.0, 16.5));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> BatchStatsParts {
        let channels = self.moments.iter().map(VarianceParts::of);
        BatchStatsParts {
            count: self.count,
            shift: channels.clone().map(|p| p.shift).collect(),
            offset: channels.clone().map(|p| p.offset).collect(),
            m2: channels.map(|p| p.m2).collect(),
            poisoned: self.poisoned,
        }
    }

    /// Rebuilds the statistics [`to_parts`](BatchStats::to_parts)
    /// described (of either float type: the parts are the same for
    /// `BatchStats<f32>` and `BatchStats<f64>`). The result equals the
    /// original and merges bit for bit as it would.
    ///
    /// This replaces `from_parts(count, mean, m2)` of 0.1.0, whose means
    /// were rounded to `F` and cost a `BatchStats<f32>` exchanged that way
    /// its `f64` accuracy; that constructor is now
    /// [`from_mean_m2`](BatchStats::from_mean_m2), for statistics that
    /// come from elsewhere.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    ///   naming `offset` or `m2` when the vectors differ in length from
    ///   `shift`;
    /// - [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState),
    ///   naming the broken invariant, when a channel's `m2` is negative,
    ///   when `count` is 0 and a field is not 0, when `count` is 1 and
    ///   an `m2` is neither 0 nor NaN, or when an `offset` is NaN, or
    ///   other than 0 beside a NaN or infinite `shift` (a channel's mean
    ///   is NaN or infinite only in its shift). Any `m2` may stand beside
    ///   any `shift`, as [`from_mean_m2`](BatchStats::from_mean_m2) takes
    ///   them.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, BatchStatsParts};
    /// let parts = BatchStatsParts {
    ///     count: 2,
    ///     shift: vec![1.0, 5.0],
    ///     offset: vec![0.5, 0.0],
    ///     m2: vec![0.5, 2.0],
    ///     poisoned: false,
    /// };
    /// let s = BatchStats::<f64>::from_parts(parts.clone())?;
    /// assert_eq!(s.mean(), &[1.5, 5.0]);
    /// assert_eq!(s.to_parts(), parts);
    ///
    /// let bad = BatchStatsParts { m2: vec![0.5, -2.0], ..parts };
    /// let err = BatchStats::<f64>::from_parts(bad).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid state: m2 must be non-negative, got -2.0");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_parts(parts: BatchStatsParts) -> Result<Self, Error> {
        let channels = parts.shift.len();
        if parts.offset.len() != channels {
            return Err(Error::length("offset", channels, parts.offset.len()));
        }
        if parts.m2.len() != channels {
            return Err(Error::length("m2", channels, parts.m2.len()));
        }
        let count = parts.count;
        let moments = parts
            .shift
            .into_iter()
            .zip(parts.offset)
            .zip(parts.m2)
            .map(|((shift, offset), m2)| {
                VarianceParts {
                    count,
                    shift,
                    offset,
                    m2,
                }
                .received_moments()
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Self::restored(parts.count, moments, parts.poisoned))
    }

    /// Statistics received from elsewhere — another library, or a
    /// framework's per-rank statistics — as one `(count, mean, M2)` triple
    /// per channel, where `M2 = Σ(x − mean)²` is what
    /// [`sum_squared_deviations`](BatchStats::sum_squared_deviations) gives.
    /// With `count` 0 the means and M2 must all be 0.
    ///
    /// The means are rounded to `F`, which costs digits when the mean is
    /// far larger than the spread: between ranks of this crate exchange
    /// [`to_parts`](BatchStats::to_parts) instead, which is lossless.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    ///   naming `m2` when `m2` and `mean` differ in length;
    /// - [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) when an
    ///   M2 is negative, when `count` is 0 and a mean or M2 is not, or when
    ///   `count` is 1 and an M2 is not 0. (NaN is accepted: it propagates.)
    ///
    /// ```
    /// use momenta::Merge;
    /// use momenta::norm::{BatchStats, Layout};
    /// let local = BatchStats::<f64>::compute(&[1.0, 2.0, 3.0, 4.0, 5.0], Layout::nc(5, 1)?)?;
    /// // What the other rank sent: its count, means and M2.
    /// let remote = BatchStats::from_mean_m2(3, &[11.0], &[2.0])?;
    /// let mut all = local.clone();
    /// all.merge(&remote);
    /// assert_eq!((all.mean()[0], all.variance()[0]), (6.0, 16.5));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn from_mean_m2(count: u64, mean: &[F], m2: &[F]) -> Result<Self, Error> {
        if mean.len() != m2.len() {
            return Err(Error::length("m2", mean.len(), m2.len()));
        }
        let moments = mean
            .iter()
            .zip(m2)
            .map(|(&mu, &m2)| {
                let m = Moments {
                    count,
                    shift: mu.as_f64(),
                    offset: 0.0,
                    m2: m2.as_f64(),
                };
                m.validate_received().map(|()| m)
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Self::from_moments(count, moments))
    }

    /// The same statistics with getters in another float type: lossless,
    /// since the state is `f64` whatever `F` is (only the getters round).
    /// `From` converts between `BatchStats<f32>` and `BatchStats<f64>`
    /// the same way.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// // 0.1_f32 is not 0.1: the f64 getters show it.
    /// let s = BatchStats::<f32>::compute(&[0.1_f32, 0.1], Layout::nc(2, 1)?)?;
    /// let wide: BatchStats<f64> = s.convert();
    /// assert_eq!(wide.mean(), &[f64::from(0.1_f32)]);
    /// assert_eq!(wide.convert::<f32>(), s);
    /// assert_eq!(BatchStats::<f64>::from(s.clone()), wide);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn convert<G: Float>(&self) -> BatchStats<G> {
        BatchStats::restored(self.count, self.moments.clone(), self.poisoned)
    }

    /// Statistics from restored moments (already validated), poisoned or
    /// not.
    fn restored(count: u64, moments: Vec<Moments<f64>>, poisoned: bool) -> Self {
        let mut out = Self::from_moments(count, moments);
        if poisoned {
            out.poison();
        }
        out
    }

    /// Marks the statistics poisoned; their means read NaN.
    fn poison(&mut self) {
        self.poisoned = true;
        self.mean.iter_mut().for_each(|m| *m = F::nan());
        self.var.iter_mut().for_each(|v| *v = F::nan());
    }

    /// The number of channels.
    ///
    /// ```
    /// assert_eq!(momenta::norm::BatchStats::<f32>::new(3).channels(), 3);
    /// ```
    #[must_use]
    pub fn channels(&self) -> usize {
        self.moments.len()
    }

    /// The number of values per channel (the `n` of the BatchNorm formulas;
    /// after a merge, the whole batch's).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let s = BatchStats::<f32>::compute(&[0.0_f32; 120], Layout::nchw(2, 3, 4, 5)?)?;
    /// assert_eq!(s.count(), 40);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The per-channel means (NaN when the count is 0 or the stats are
    /// [poisoned](BatchStats::is_poisoned)).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let s = BatchStats::<f64>::compute(&[1.0, 10.0, 3.0, 20.0], Layout::nc(2, 2)?)?;
    /// assert_eq!(s.mean(), &[2.0, 15.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn mean(&self) -> &[F] {
        &self.mean
    }

    fn per_channel(&self, f: impl Fn(&Moments<f64>) -> f64) -> Vec<F> {
        self.moments
            .iter()
            .map(|m| {
                if self.poisoned {
                    F::nan()
                } else {
                    F::from_f64(f(m))
                }
            })
            .collect()
    }

    /// The per-channel sums of squared deviations `M2 = Σ(x − mean)²`
    /// (never negative; 0 when the count is 0) — what a rank sends to the
    /// others in a synchronized BatchNorm.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let s = BatchStats::<f64>::compute(&[1.0, 2.0, 3.0, 4.0, 5.0], Layout::nc(5, 1)?)?;
    /// assert_eq!(s.sum_squared_deviations(), vec![10.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn sum_squared_deviations(&self) -> Vec<F> {
        self.per_channel(Moments::m2)
    }

    /// The per-channel biased variance `M2/n` — the one BatchNorm
    /// normalizes with in training. NaN when the count is 0.
    ///
    /// A new vector each call; [`var`](BatchStats::var) lends the same
    /// values as a slice, as [`mean`](BatchStats::mean) does the means.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let s = BatchStats::<f64>::compute(&[1.0, 10.0, 3.0, 20.0], Layout::nc(2, 2)?)?;
    /// assert_eq!(s.variance(), vec![1.0, 25.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn variance(&self) -> Vec<F> {
        self.var.clone()
    }

    /// The per-channel biased variance `M2/n` as a slice: the partner of
    /// [`mean`](BatchStats::mean), as [`RunningStats::mean`](super::RunningStats::mean)
    /// and [`RunningStats::var`](super::RunningStats::var) are (PyTorch's
    /// `mean`/`var` pair). The same values as
    /// [`variance`](BatchStats::variance), without a new vector; NaN when
    /// the count is 0 or the statistics are
    /// [poisoned](BatchStats::is_poisoned).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let s = BatchStats::<f64>::compute(&[1.0, 10.0, 3.0, 20.0], Layout::nc(2, 2)?)?;
    /// let (mean, var): (&[f64], &[f64]) = (s.mean(), s.var());
    /// assert_eq!((mean, var), (&[2.0, 15.0][..], &[1.0, 25.0][..]));
    /// assert_eq!(s.var(), s.variance());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn var(&self) -> &[F] {
        &self.var
    }

    /// The per-channel unbiased variance `M2/(n − 1)` (Bessel's
    /// correction), NaN below two values.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let s = BatchStats::<f64>::compute(&[1.0, 10.0, 3.0, 20.0], Layout::nc(2, 2)?)?;
    /// assert_eq!(s.unbiased_variance(), vec![2.0, 50.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn unbiased_variance(&self) -> Vec<F> {
        self.per_channel(|m| m.variance(1).unwrap_or(f64::NAN))
    }

    /// The per-channel inverse standard deviation `1/√(σ²_biased + eps)`:
    /// cuDNN's and TensorFlow's "saved inverse variance".
    ///
    /// `eps` is not validated here (configurations validate theirs): a
    /// negative or NaN `eps` gives NaN or ∞ where `σ² + eps ≤ 0`, never a
    /// panic.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let s = BatchStats::<f64>::compute(&[1.0, 3.0], Layout::nc(2, 1)?)?;
    /// assert_eq!(s.inv_std(0.0), vec![1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn inv_std(&self, eps: F) -> Vec<F> {
        let eps = eps.as_f64();
        self.per_channel(|m| {
            let var = m.variance(0).unwrap_or(f64::NAN);
            num_traits::Float::sqrt(var + eps).recip()
        })
    }

    /// Merges `other` into `self`, checking that the channel counts agree.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    ///   naming `channels` when the channel counts differ;
    /// - [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) when
    ///   either side is [poisoned](BatchStats::is_poisoned).
    ///
    /// `self` is unchanged on error.
    ///
    /// ```
    /// use momenta::norm::BatchStats;
    /// let mut a = BatchStats::<f64>::new(2);
    /// assert!(a.try_merge(&BatchStats::new(2)).is_ok());
    /// assert!(a.try_merge(&BatchStats::new(3)).is_err());
    /// assert!(!a.is_poisoned());
    /// ```
    pub fn try_merge(&mut self, other: &Self) -> Result<(), Error> {
        if self.channels() != other.channels() {
            return Err(Error::length("channels", self.channels(), other.channels()));
        }
        if self.poisoned || other.poisoned {
            return Err(poisoned_error());
        }
        let cached = self.mean.iter_mut().zip(&mut self.var);
        for ((m, o), (mean, var)) in self.moments.iter_mut().zip(&other.moments).zip(cached) {
            m.merge(o);
            *mean = F::from_f64(mean_of(m));
            *var = F::from_f64(var_of(m));
        }
        self.count = self.count.saturating_add(other.count);
        Ok(())
    }

    /// Whether a [`merge`](Merge::merge) of statistics with different
    /// channel counts happened. Poisoned statistics report NaN means and
    /// variances, and every fallible use of them —
    /// [`RunningStats::update`](super::RunningStats::update), normalizing,
    /// [`try_merge`](BatchStats::try_merge) — returns an error, so the
    /// mistake cannot pass silently into running statistics.
    ///
    /// ```
    /// use momenta::Merge;
    /// use momenta::norm::BatchStats;
    /// let mut a = BatchStats::<f64>::new(2);
    /// a.merge(&BatchStats::new(3));
    /// assert!(a.is_poisoned());
    /// assert!(a.mean()[0].is_nan());
    /// ```
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    /// Fails if the statistics are poisoned.
    pub(crate) fn check_usable(&self) -> Result<(), Error> {
        if self.poisoned {
            Err(poisoned_error())
        } else {
            Ok(())
        }
    }

    /// The raw per-channel moments, in `f64`.
    pub(crate) fn moments(&self) -> &[Moments<f64>] {
        &self.moments
    }
}

fn poisoned_error() -> Error {
    Error::state("batch statistics were merged with statistics of a different channel count")
}

impl<F: Float> Merge for BatchStats<F> {
    /// Chan's merge of every channel: afterwards `self` holds the
    /// statistics of both batches together.
    ///
    /// `Merge::merge` cannot return an error. When the channel counts
    /// differ, `self` becomes [poisoned](BatchStats::is_poisoned): its
    /// means and variances read NaN and every later fallible use returns
    /// an error naming the mismatch. Use
    /// [`try_merge`](BatchStats::try_merge) to get the error at once and
    /// keep `self` unchanged.
    ///
    /// ```
    /// use momenta::Merge;
    /// use momenta::norm::{BatchStats, Layout};
    /// let xs: Vec<f64> = (0..24).map(f64::from).collect();
    /// let whole = BatchStats::<f64>::compute(&xs, Layout::nc(8, 3)?)?;
    /// let mut a = BatchStats::<f64>::compute(&xs[..15], Layout::nc(5, 3)?)?;
    /// a.merge(&BatchStats::compute(&xs[15..], Layout::nc(3, 3)?)?);
    /// assert_eq!(a.mean(), whole.mean());
    /// assert_eq!(a.variance(), whole.variance());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn merge(&mut self, other: &Self) {
        if self.try_merge(other).is_err() {
            self.poison();
        }
    }
}

impl From<BatchStats<f32>> for BatchStats<f64> {
    /// Lossless: see [`BatchStats::convert`].
    ///
    /// ```
    /// use momenta::norm::BatchStats;
    /// let s = BatchStats::<f64>::from(BatchStats::<f32>::new(2));
    /// assert_eq!(s.channels(), 2);
    /// ```
    fn from(s: BatchStats<f32>) -> Self {
        Self::restored(s.count, s.moments, s.poisoned)
    }
}

impl From<BatchStats<f64>> for BatchStats<f32> {
    /// Lossless (the state stays `f64`; only the getters round to `f32`):
    /// see [`BatchStats::convert`].
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let s = BatchStats::<f64>::compute(&[0.1, 0.2], Layout::nc(2, 1)?)?;
    /// let narrow = BatchStats::<f32>::from(s.clone());
    /// assert_eq!(narrow.mean(), &[0.15_f32]);
    /// assert_eq!(BatchStats::<f64>::from(narrow), s);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn from(s: BatchStats<f64>) -> Self {
        Self::restored(s.count, s.moments, s.poisoned)
    }
}

/// The whole state of a [`BatchStats`] as plain data, one `f64` vector per
/// field with one entry per channel: what [`BatchStats::to_parts`] gives
/// and [`BatchStats::from_parts`] takes. Channel `c` is the
/// [`VarianceParts`] `{ count, shift[c], offset[c], m2[c] }`: its mean is
/// `shift[c] + offset[c]`, computed in `f64` from the data.
///
/// The same parts describe a `BatchStats<f32>` and a `BatchStats<f64>`.
/// For one flat buffer, send `shift`, `offset` and `m2` one after the
/// other, with `count` and `poisoned` beside them.
///
/// Serialized (feature `serde`) losslessly in any format: in JSON each
/// float is an exact string ([Checkpoints](crate#checkpoints)).
///
/// # Example
///
/// ```
/// use momenta::Merge;
/// use momenta::norm::{BatchStats, BatchStatsParts, Layout};
///
/// // Two ranks of a synchronized BatchNorm, three channels each (NC).
/// let rank0 = BatchStats::<f32>::compute(&[1.0_f32, 2.0, 3.0, 4.0, 5.0, 6.0], Layout::nc(2, 3)?)?;
/// let rank1 = BatchStats::<f32>::compute(&[7.0_f32, 8.0, 9.0], Layout::nc(1, 3)?)?;
/// let sent: BatchStatsParts = rank1.to_parts();
/// assert_eq!(sent.shift.len(), 3);
/// let mut all = rank0.clone();
/// all.merge(&BatchStats::from_parts(sent)?);
/// assert_eq!(all.mean(), &[4.0, 5.0, 6.0]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BatchStatsParts {
    /// The number of values per channel.
    pub count: u64,
    /// Per channel, a reference point taken from the data.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float::seq"))]
    pub shift: Vec<f64>,
    /// Per channel, the mean minus the shift.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float::seq"))]
    pub offset: Vec<f64>,
    /// Per channel, the sum of squared deviations from the mean.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float::seq"))]
    pub m2: Vec<f64>,
    /// Whether the statistics were merged with others of a different
    /// channel count (see [`BatchStats::is_poisoned`]).
    pub poisoned: bool,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<BatchStatsParts> for BatchStats<F> {
    type Error = Error;
    fn try_from(parts: BatchStatsParts) -> Result<Self, Error> {
        Self::from_parts(parts)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> From<BatchStats<F>> for BatchStatsParts {
    fn from(s: BatchStats<F>) -> Self {
        s.to_parts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    #[test]
    fn channels_are_separated_in_both_layouts() {
        // NC with C = 2: channel 0 = 1, 3, 5; channel 1 = 2, 4, 9.
        let s =
            BatchStats::<f64>::compute(&[1.0, 2.0, 3.0, 4.0, 5.0, 9.0], Layout::nc(3, 2).unwrap())
                .unwrap();
        assert_eq!(s.mean(), &[3.0, 5.0]);
        assert_eq!(s.unbiased_variance(), vec![4.0, 13.0]);
        // NCL with L = 3: channel 0 = 1, 2, 3; channel 1 = 4, 5, 9.
        let s = BatchStats::<f64>::compute(
            &[1.0, 2.0, 3.0, 4.0, 5.0, 9.0],
            Layout::ncl(1, 2, 3).unwrap(),
        )
        .unwrap();
        assert_eq!(s.mean(), &[2.0, 6.0]);
        assert_eq!(s.variance(), vec![2.0 / 3.0, 14.0 / 3.0]);
    }

    #[test]
    fn empty_batches_are_nan_and_the_merge_identity() {
        let e = BatchStats::<f64>::compute::<f64>(&[], Layout::nchw(0, 2, 3, 3).unwrap()).unwrap();
        assert_eq!(e.count(), 0);
        assert!(e.mean()[1].is_nan());
        assert!(e.variance()[0].is_nan());
        let s = BatchStats::<f64>::compute(&[1.0, 2.0], Layout::nc(1, 2).unwrap()).unwrap();
        let mut t = e.clone();
        t.merge(&s);
        assert_eq!(t, s);
        let mut u = s.clone();
        u.merge(&e);
        assert_eq!(u, s);
    }

    #[test]
    fn length_mismatch_is_an_error() {
        let e = BatchStats::<f32>::compute(&[1.0_f32; 5], Layout::nc(3, 2).unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "data must have length 6, got 5");
    }

    #[test]
    fn from_mean_m2_validates() {
        assert!(BatchStats::<f64>::from_mean_m2(3, &[1.0], &[-1.0]).is_err());
        assert!(BatchStats::<f64>::from_mean_m2(3, &[1.0, 2.0], &[1.0]).is_err());
        assert!(BatchStats::<f64>::from_mean_m2(0, &[1.0], &[0.0]).is_err());
        assert!(BatchStats::<f64>::from_mean_m2(1, &[1.0], &[0.5]).is_err());
        assert!(BatchStats::<f64>::from_mean_m2(0, &[0.0], &[0.0]).is_ok());
        assert!(BatchStats::<f64>::from_mean_m2(2, &[f64::NAN], &[f64::NAN]).is_ok());
    }

    #[test]
    fn poison_sticks_and_errors() {
        let mut a = BatchStats::<f64>::new(2);
        a.merge(&BatchStats::new(1));
        assert!(a.is_poisoned());
        assert!(a.variance()[1].is_nan());
        assert!(a.check_usable().is_err());
        a.merge(&BatchStats::new(2));
        assert!(a.is_poisoned());
        assert!(a.try_merge(&BatchStats::new(2)).is_err());
    }
}
