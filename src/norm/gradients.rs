//! BatchNorm's backward pass: the two per-channel reductions, their merge
//! for synchronized BatchNorm, and the gradients that follow.

use alloc::vec::Vec;
use core::marker::PhantomData;

use super::backward::{DxCoefficients, write_dx};
use super::{BatchStats, Layout, checks};
use crate::{Element, Error, Float, Merge};

/// The per-channel sums BatchNorm's backward pass needs, `Σdy` and
/// `Σdy·(x − c)`, about a centre `c` per channel (the forward pass's
/// mean), over one batch or one rank's shard.
///
/// In training mode, with `x̂ = (x − μ)/σ` (σ² the biased batch variance
/// plus eps) and `N` values per channel, PyTorch's (and cuDNN's) gradients
/// are
///
/// - `dβ = Σdy` ([`grad_bias`](GradSums::grad_bias)),
/// - `dγ = Σdy·x̂` ([`grad_weight`](GradSums::grad_weight)),
/// - `dx = γ/σ · (dy − Σdy/N − x̂·Σdy·x̂/N)`
///   ([`grad_input`](GradSums::grad_input)).
///
/// In synchronized BatchNorm every rank computes its sums about the same
/// global mean, and the ranks all-reduce them ([`Merge`]: sums add, as
/// the statistics merge) before each computes its own `dx` with the
/// global statistics — with unequal batch sizes per rank too.
///
/// The sums are kept in `f64` whatever `F` is. Summing `dy·(x − c)` about
/// the statistics' shift (a value from the data, which with a small offset
/// makes the mean), rather than `Σdy·x − μ·Σdy`, keeps the digits of a
/// large mean: on `1e6 + k/1024` data, `dγ` is within 1e-12 of the exact
/// fraction, where the textbook sum is off by parts in a billion. Sums about different centres merge exactly enough:
/// `Σdy·(x − a) = Σdy·(x − b) + (b − a)·Σdy`.
///
/// # The other layers
///
/// The layers' statistics are per-sample groups, so their backward sums
/// are these over the tensor re-viewed with a channel per group:
/// [`LayerNorm::grad_sums`](super::LayerNorm::grad_sums),
/// [`GroupNorm::grad_sums`](super::GroupNorm::grad_sums) and
/// [`InstanceNorm::grad_sums`](super::InstanceNorm::grad_sums) return
/// `GradSums` whose channels are the statistics' groups (sample-major) and
/// whose `dy` is the gradient with respect to the normalized value,
/// `γ·dy`, merged like these across the workers a sample is split over,
/// and read back by the same layer's `grad_input`. (So do not feed them to
/// this type's own `grad_weight`: a layer's `dγ`, `dβ` come with its sums.)
///
/// [`BatchNorm::grad_input`](super::BatchNorm::grad_input) is
/// [`grad_input`](GradSums::grad_input) with the arguments as one
/// [`Backward`](super::Backward), the layer's eps, and any element type.
///
/// **Checkpoints** (feature `serde`): serialized losslessly in any
/// format, and restored to a state that goes on bit for bit; see
/// [Checkpoints](crate#checkpoints).
///
/// # Example
///
/// ```
/// use momenta::Merge;
/// use momenta::norm::{BatchStats, GradSums, Layout};
///
/// // One channel, four values, split over two ranks (1 and 3 values).
/// let (xs, dy) = ([1.0, 2.0, 3.0, 6.0], [1.0, 0.0, -1.0, 2.0]);
/// let stats = BatchStats::<f64>::compute(&xs, Layout::nc(4, 1)?)?; // μ = 3, σ² = 3.5
/// let mut sums = GradSums::compute(&xs[..1], &dy[..1], Layout::nc(1, 1)?, &stats)?;
/// sums.merge(&GradSums::compute(&xs[1..], &dy[1..], Layout::nc(3, 1)?, &stats)?);
/// assert_eq!(sums.grad_bias(), vec![2.0]);
/// // Σdy·(x − μ) = −2 + 0 + 0 + 6 = 4, so dγ = 4/√3.5 with eps 0.
/// assert!((sums.grad_weight(&stats, 0.0)?[0] - 4.0 / 3.5_f64.sqrt()).abs() < 1e-15);
///
/// // Rank 0's input gradient, with the merged sums.
/// let mut dx = [0.0; 1];
/// sums.grad_input(&xs[..1], &dy[..1], Layout::nc(1, 1)?, &stats, 0.0, None, &mut dx)?;
/// // (1/σ)(dy − Σdy/N − x̂·Σdy·x̂/N) with x̂ = −2/σ: (1 − 0.5 + (2/3.5))/σ.
/// assert!((dx[0] - (0.5 + 2.0 / 3.5) / 3.5_f64.sqrt()).abs() < 1e-15);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "GradSumsParts", bound = "F: Float")
)]
pub struct GradSums<F> {
    count: u64,
    centre: Vec<f64>,
    sum_dy: Vec<f64>,
    sum_dyx: Vec<f64>,
    poisoned: bool,
    float: PhantomData<F>,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] GradSums<F>, GradSumsParts);

/// The whole state of [`GradSums`] as plain `f64` vectors, what an MPI
/// all-gather or a socket carries; [`GradSums::from_parts`] rebuilds it
/// bit for bit.
///
/// ```
/// use momenta::norm::{BatchStats, GradSums, GradSumsParts, Layout};
/// let stats = BatchStats::<f64>::compute(&[1.0, 3.0], Layout::nc(2, 1)?)?;
/// let sums = GradSums::compute(&[1.0, 3.0], &[0.5, 0.25], Layout::nc(2, 1)?, &stats)?;
/// let parts: GradSumsParts = sums.to_parts();
/// assert_eq!((parts.count, parts.sum_dy.clone()), (2, vec![0.75]));
/// assert_eq!(GradSums::from_parts(parts)?, sums);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GradSumsParts {
    /// The number of values per channel.
    pub count: u64,
    /// Per channel, the centre the products are summed about (the
    /// statistics' shift).
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float::seq"))]
    pub centre: Vec<f64>,
    /// Per channel, `Σdy`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float::seq"))]
    pub sum_dy: Vec<f64>,
    /// Per channel, `Σdy·(x − centre)`.
    #[cfg_attr(feature = "serde", serde(with = "crate::checkpoint::float::seq"))]
    pub sum_dy_dx: Vec<f64>,
    /// Whether sums of different channel counts were merged.
    pub poisoned: bool,
}

/// `Σdy·(x − from)` as `Σdy·(x − to)`. Identical centres leave the sum
/// as it is (the product would turn an infinite `Σdy` into NaN).
#[allow(clippy::float_cmp, reason = "exactly the same centre: nothing to move")]
fn rebase(sum_dyx: f64, sum_dy: f64, from: f64, to: f64) -> f64 {
    if from == to {
        sum_dyx
    } else {
        sum_dyx + (from - to) * sum_dy
    }
}

fn poisoned_error() -> Error {
    Error::state("gradient sums were merged with sums of a different channel count")
}

impl<F: Float> GradSums<F> {
    /// Sums over no values for `channels` channels: the identity of
    /// [`merge`](Merge::merge).
    ///
    /// ```
    /// let s = momenta::norm::GradSums::<f32>::new(3);
    /// assert_eq!((s.channels(), s.count()), (3, 0));
    /// ```
    #[must_use]
    pub fn new(channels: usize) -> Self {
        Self {
            count: 0,
            centre: alloc::vec![0.0; channels],
            sum_dy: alloc::vec![0.0; channels],
            sum_dyx: alloc::vec![0.0; channels],
            poisoned: false,
            float: PhantomData,
        }
    }

    /// The sums over `xs` (the forward pass's input) and `dy` (the
    /// gradient of the loss with respect to its output), both of shape
    /// `layout`, about the means of `stats` (the forward pass's
    /// statistics: the whole batch's, merged, in synchronized BatchNorm).
    /// One pass reading both tensors, in `f64`.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    ///   naming `data` or `gradient` when a slice does not hold `layout`,
    ///   or `statistics channels` when `stats` has another channel count;
    /// - [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) when
    ///   `stats` is poisoned.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, GradSums, Layout};
    /// // NCHW: 1 image, 2 channels of 2 pixels.
    /// let xs = [1.0_f32, 3.0, 10.0, 20.0];
    /// let dy = [1.0_f32, 1.0, 0.5, -0.5];
    /// let layout = Layout::nchw(1, 2, 1, 2)?;
    /// let stats = BatchStats::<f32>::compute(&xs, layout)?;
    /// let sums = GradSums::compute(&xs, &dy, layout, &stats)?;
    /// assert_eq!(sums.grad_bias(), vec![2.0, 0.0]);
    /// assert!(GradSums::compute(&xs, &dy[1..], layout, &stats).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn compute<S: Element>(
        xs: &[S],
        dy: &[S],
        layout: Layout,
        stats: &BatchStats<F>,
    ) -> Result<Self, Error> {
        Self::compute_with(xs, dy, layout, stats, crate::kernels::channel_grad_sums)
    }

    /// [`compute`](GradSums::compute) on every rayon thread (feature
    /// `rayon`): the same sums, bit for bit, whatever the number of
    /// threads.
    ///
    /// # Errors
    ///
    /// As [`compute`](GradSums::compute).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, GradSums, Layout};
    /// let layout = Layout::nhwc(8, 16, 16, 4)?;
    /// let xs: Vec<f32> = (0..layout.len()).map(|i| (i % 11) as f32).collect();
    /// let dy: Vec<f32> = (0..layout.len()).map(|i| (i % 7) as f32 - 3.0).collect();
    /// let stats = BatchStats::<f32>::compute(&xs, layout)?;
    /// let par = GradSums::par_compute(&xs, &dy, layout, &stats)?;
    /// assert_eq!(par, GradSums::compute(&xs, &dy, layout, &stats)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_compute<S: Element>(
        xs: &[S],
        dy: &[S],
        layout: Layout,
        stats: &BatchStats<F>,
    ) -> Result<Self, Error> {
        Self::compute_with(xs, dy, layout, stats, crate::kernels::par_channel_grad_sums)
    }

    /// The checks and state of [`compute`](GradSums::compute), with the
    /// sums from `kernel` (sequential or parallel).
    fn compute_with<S: Element>(
        xs: &[S],
        dy: &[S],
        layout: Layout,
        stats: &BatchStats<F>,
        kernel: impl Fn(&[S], &[S], usize, usize, usize, &[f64]) -> (Vec<f64>, Vec<f64>),
    ) -> Result<Self, Error> {
        layout.check(xs.len())?;
        if dy.len() != xs.len() {
            return Err(Error::length("gradient", xs.len(), dy.len()));
        }
        stats.check_usable()?;
        checks::channel_len("statistics channels", stats.moments(), layout.channels())?;
        // The statistics keep each mean as a shift (a value from the data)
        // plus a small offset; summing about the shift keeps `x − centre`
        // exact where `x − mean`, with the mean rounded once, would carry
        // its rounding into every product.
        let centre: Vec<f64> = stats.moments().iter().map(|m| m.shift).collect();
        let (sum_dy, sum_dyx) = kernel(
            xs,
            dy,
            layout.outer(),
            layout.channels(),
            layout.inner(),
            &centre,
        );
        Ok(Self {
            count: layout.count_per_channel(),
            centre,
            sum_dy,
            sum_dyx,
            poisoned: false,
            float: PhantomData,
        })
    }

    /// The number of channels.
    ///
    /// ```
    /// assert_eq!(momenta::norm::GradSums::<f64>::new(2).channels(), 2);
    /// ```
    #[must_use]
    pub fn channels(&self) -> usize {
        self.sum_dy.len()
    }

    /// The number of values per channel summed.
    ///
    /// ```
    /// assert_eq!(momenta::norm::GradSums::<f64>::new(2).count(), 0);
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.count
    }

    /// `dβ = Σdy` per channel (NaN when poisoned).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, GradSums, Layout};
    /// let stats = BatchStats::<f64>::compute(&[0.0, 1.0], Layout::nc(1, 2)?)?;
    /// let sums = GradSums::compute(&[0.0, 1.0], &[0.25, -4.0], Layout::nc(1, 2)?, &stats)?;
    /// assert_eq!(sums.grad_bias(), vec![0.25, -4.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn grad_bias(&self) -> Vec<F> {
        self.sum_dy
            .iter()
            .map(|&s| F::from_f64(if self.poisoned { f64::NAN } else { s }))
            .collect()
    }

    /// `Σdy·(x − μ)` about `stats`' means, and `1/√(σ² + eps)`, per channel.
    pub(super) fn about(&self, stats: &BatchStats<F>, eps: F) -> Result<Vec<(f64, f64)>, Error> {
        if self.poisoned {
            return Err(poisoned_error());
        }
        stats.check_usable()?;
        checks::eps(eps)?;
        checks::channel_len("statistics channels", stats.moments(), self.channels())?;
        let eps = eps.as_f64();
        Ok(stats
            .moments()
            .iter()
            .zip(
                self.centre
                    .iter()
                    .zip(self.sum_dy.iter().zip(&self.sum_dyx)),
            )
            .map(|(m, (&c, (&dy, &dyx)))| {
                let var = m.variance(0).unwrap_or(f64::NAN);
                // Onto the mean, `shift + offset`, in two steps: the
                // offset's digits are not lost to rounding the mean.
                let about_mean = if m.count == 0 {
                    f64::NAN
                } else {
                    rebase(rebase(dyx, dy, c, m.shift), dy, 0.0, m.offset)
                };
                (about_mean, 1.0 / num_traits::Float::sqrt(var + eps))
            })
            .collect())
    }

    /// `dγ = Σdy·x̂` per channel, with `stats`' mean and biased variance
    /// and `eps`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `statistics channels`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `eps` unless it is finite and non-negative;
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) when the
    /// sums or the statistics are poisoned.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, GradSums, Layout};
    /// let xs = [1.0, 3.0];
    /// let stats = BatchStats::<f64>::compute(&xs, Layout::nc(2, 1)?)?; // μ 2, σ² 1
    /// let sums = GradSums::compute(&xs, &[2.0, 5.0], Layout::nc(2, 1)?, &stats)?;
    /// assert_eq!(sums.grad_weight(&stats, 0.0)?, vec![3.0]); // 2·(−1) + 5·1
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn grad_weight(&self, stats: &BatchStats<F>, eps: F) -> Result<Vec<F>, Error> {
        Ok(self
            .about(stats, eps)?
            .into_iter()
            .map(|(dyx, rstd)| F::from_f64(dyx * rstd))
            .collect())
    }

    /// `dx` for the values `xs` with output gradients `dy` (shape
    /// `layout`: this rank's shard), written to `dx`, from the sums (the
    /// merged ones in synchronized BatchNorm), `stats` (the statistics the
    /// forward pass normalized with), `eps` and `γ` (absent: ones):
    /// `dx = γ/σ · (dy − Σdy/N − x̂·Σdy·x̂/N)` with `N` the sums' count, in
    /// `f64`, rounded once.
    ///
    /// The same with the arguments as one value, eps from the layer, and
    /// any element type in and out (`f16`/`bf16` with the `half`
    /// feature): [`BatchNorm::grad_input`](super::BatchNorm::grad_input).
    /// This form stays, for code that calls it.
    ///
    /// # Errors
    ///
    /// As [`grad_weight`](GradSums::grad_weight); and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `data`, `gradient` or `output` for a slice that does not
    /// hold `layout`, `layout channels` for a layout of another channel
    /// count, `gamma` for a γ of the wrong length, or `statistics count`
    /// when `stats` and the sums count different numbers of values.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, GradSums, Layout};
    /// let (xs, dy) = ([1.0, 3.0], [1.0, 1.0]);
    /// let layout = Layout::nc(2, 1)?;
    /// let stats = BatchStats::<f64>::compute(&xs, layout)?;
    /// let sums = GradSums::compute(&xs, &dy, layout, &stats)?;
    /// let mut dx = [9.0; 2];
    /// // A constant output gradient moves nothing through a normalization.
    /// sums.grad_input(&xs, &dy, layout, &stats, 1e-5, Some(&[2.0]), &mut dx)?;
    /// assert_eq!(dx, [0.0, 0.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments, reason = "the layer's own arguments")]
    pub fn grad_input(
        &self,
        xs: &[F],
        dy: &[F],
        layout: Layout,
        stats: &BatchStats<F>,
        eps: F,
        gamma: Option<&[F]>,
        dx: &mut [F],
    ) -> Result<(), Error> {
        self.grad_input_into(xs, dy, layout, stats, eps, gamma, dx)
    }

    /// [`grad_input`](GradSums::grad_input) for any element types in and
    /// out (what [`BatchNorm::grad_input`](super::BatchNorm::grad_input)
    /// calls).
    #[allow(clippy::too_many_arguments, reason = "the layer's own arguments")]
    pub(super) fn grad_input_into<S: Element, O: Element>(
        &self,
        xs: &[S],
        dy: &[S],
        layout: Layout,
        stats: &BatchStats<F>,
        eps: F,
        gamma: Option<&[F]>,
        dx: &mut [O],
    ) -> Result<(), Error> {
        layout.check(xs.len())?;
        if dy.len() != xs.len() {
            return Err(Error::length("gradient", xs.len(), dy.len()));
        }
        if dx.len() != xs.len() {
            return Err(Error::length("output", xs.len(), dx.len()));
        }
        checks::channel_len("layout channels", &self.sum_dy, layout.channels())?;
        checks::optional_channel_len("gamma", gamma, self.channels())?;
        self.check_count(stats)?;
        let per_channel = self.about(stats, eps)?;
        #[allow(clippy::cast_precision_loss, reason = "a count, exact below 2⁵³")]
        let n = self.count as f64;
        // Per channel: dx = a·dy + b·(x − μ) + c, with x − μ taken as
        // (x − shift) − offset, which keeps the digits a rounded mean
        // would lose far from zero.
        let coefficients: Vec<DxCoefficients> = per_channel
            .iter()
            .zip(stats.moments())
            .zip(&self.sum_dy)
            .enumerate()
            .map(|(ch, (((dyx, rstd), m), &sdy))| {
                let g = gamma.and_then(|g| g.get(ch)).map_or(1.0, |g| g.as_f64());
                let scale = g * rstd;
                DxCoefficients {
                    shift: m.shift,
                    offset: m.offset,
                    a: scale,
                    b: -scale * dyx * rstd * rstd / n,
                    c: -scale * sdy / n,
                }
            })
            .collect();
        write_dx(xs, dy, layout.channels(), layout.inner(), &coefficients, dx);
        Ok(())
    }

    /// Fails unless `stats` count as many values as the sums.
    pub(super) fn check_count(&self, stats: &BatchStats<F>) -> Result<(), Error> {
        if stats.count() == self.count {
            return Ok(());
        }
        #[allow(
            clippy::cast_possible_truncation,
            reason = "reported in the message; saturates"
        )]
        Err(Error::length(
            "statistics count",
            self.count as usize,
            stats.count() as usize,
        ))
    }

    /// Sums built by a layer's engine: per channel, the centre and the two
    /// sums about it.
    pub(super) fn from_sums(
        count: u64,
        centre: Vec<f64>,
        sum_dy: Vec<f64>,
        sum_dyx: Vec<f64>,
    ) -> Self {
        Self {
            count,
            centre,
            sum_dy,
            sum_dyx,
            poisoned: false,
            float: PhantomData,
        }
    }

    /// Per channel, `Σdy`.
    pub(super) fn sum_dy(&self) -> &[f64] {
        &self.sum_dy
    }

    /// Adds `other`'s sums to these (synchronized BatchNorm's all-reduce).
    /// Sums about another centre are re-based onto this one's; empty sums
    /// take the other's centre.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `channels` when the channel counts differ;
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) when
    /// either side is poisoned. `self` is then unchanged.
    ///
    /// ```
    /// use momenta::norm::GradSums;
    /// let mut a = GradSums::<f64>::new(2);
    /// assert!(a.try_merge(&GradSums::new(3)).is_err());
    /// assert!(!a.is_poisoned());
    /// ```
    pub fn try_merge(&mut self, other: &Self) -> Result<(), Error> {
        if self.channels() != other.channels() {
            return Err(Error::length("channels", self.channels(), other.channels()));
        }
        if self.poisoned || other.poisoned {
            return Err(poisoned_error());
        }
        if other.count == 0 {
            return Ok(());
        }
        if self.count == 0 {
            self.centre.clone_from(&other.centre);
        }
        let theirs = other
            .centre
            .iter()
            .zip(other.sum_dy.iter().zip(&other.sum_dyx));
        let ours = self
            .centre
            .iter()
            .zip(self.sum_dy.iter_mut().zip(&mut self.sum_dyx));
        for ((&c, (dy, dyx)), (&oc, (&ody, &odyx))) in ours.zip(theirs) {
            let rebased = rebase(odyx, ody, oc, c);
            *dy += ody;
            *dyx += rebased;
        }
        self.count = self.count.saturating_add(other.count);
        Ok(())
    }

    /// Whether a [`merge`](Merge::merge) of sums with different channel
    /// counts happened: the gradients then fail (or read NaN) rather than
    /// pass the mistake on.
    ///
    /// ```
    /// use momenta::Merge;
    /// use momenta::norm::GradSums;
    /// let mut a = GradSums::<f64>::new(2);
    /// a.merge(&GradSums::new(1));
    /// assert!(a.is_poisoned());
    /// assert!(a.grad_bias()[0].is_nan());
    /// ```
    #[must_use]
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    /// The whole state as plain data (see [`GradSumsParts`]).
    ///
    /// ```
    /// let p = momenta::norm::GradSums::<f32>::new(1).to_parts();
    /// assert_eq!(p.sum_dy_dx, vec![0.0]);
    /// ```
    #[must_use]
    pub fn to_parts(&self) -> GradSumsParts {
        GradSumsParts {
            count: self.count,
            centre: self.centre.clone(),
            sum_dy: self.sum_dy.clone(),
            sum_dy_dx: self.sum_dyx.clone(),
            poisoned: self.poisoned,
        }
    }

    /// Rebuilds sums from [`to_parts`](GradSums::to_parts), bit for bit.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `sum_dy` or `sum_dy_dx` when the vectors differ in length
    /// from `centre`; [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState)
    /// when the count is 0 and a sum is not, or when a channel's `centre`
    /// is NaN or ±∞ and its `sum_dy_dx` is finite (sums about such a
    /// centre are not).
    ///
    /// ```
    /// use momenta::norm::{GradSums, GradSumsParts};
    /// let bad = GradSumsParts { count: 0, centre: vec![0.0], sum_dy: vec![1.0], sum_dy_dx: vec![0.0], poisoned: false };
    /// assert!(GradSums::<f64>::from_parts(bad).is_err());
    /// ```
    pub fn from_parts(parts: GradSumsParts) -> Result<Self, Error> {
        let channels = parts.centre.len();
        checks::channel_len("sum_dy", &parts.sum_dy, channels)?;
        checks::channel_len("sum_dy_dx", &parts.sum_dy_dx, channels)?;
        if parts.count == 0
            && parts
                .sum_dy
                .iter()
                .chain(&parts.sum_dy_dx)
                .any(|&s| s != 0.0)
        {
            return Err(Error::state("gradient sums over no values must be 0"));
        }
        // Over one value or more, every product about a NaN or infinite
        // centre is NaN or infinite (`0·∞` is NaN), and so is their sum,
        // which a merge then only adds to.
        if parts.count > 0
            && let Some((c, (centre, sum))) = parts
                .centre
                .iter()
                .zip(&parts.sum_dy_dx)
                .enumerate()
                .find(|(_, (centre, sum))| !centre.is_finite() && sum.is_finite())
        {
            return Err(Error::state(alloc::format!(
                "centre[{c}] is {centre:?} but sum_dy_dx[{c}] is {sum:?}: sums about a NaN or \
                 infinite centre are NaN or infinite"
            )));
        }
        Ok(Self {
            count: parts.count,
            centre: parts.centre,
            sum_dy: parts.sum_dy,
            sum_dyx: parts.sum_dy_dx,
            poisoned: parts.poisoned,
            float: PhantomData,
        })
    }
}

impl<F: Float> Merge for GradSums<F> {
    /// Adds the sums (see [`GradSums::try_merge`]); with different channel
    /// counts `self` becomes [poisoned](GradSums::is_poisoned).
    ///
    /// ```
    /// use momenta::Merge;
    /// use momenta::norm::{BatchStats, GradSums, Layout};
    /// let stats = BatchStats::<f64>::compute(&[1.0, 2.0, 3.0], Layout::nc(3, 1)?)?;
    /// let whole = GradSums::compute(&[1.0, 2.0, 3.0], &[1.0, 2.0, 4.0], Layout::nc(3, 1)?, &stats)?;
    /// let mut a = GradSums::compute(&[1.0], &[1.0], Layout::nc(1, 1)?, &stats)?;
    /// a.merge(&GradSums::compute(&[2.0, 3.0], &[2.0, 4.0], Layout::nc(2, 1)?, &stats)?);
    /// assert_eq!(a, whole);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    fn merge(&mut self, other: &Self) {
        if self.try_merge(other).is_err() {
            self.poisoned = true;
        }
    }
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<GradSumsParts> for GradSums<F> {
    type Error = Error;
    fn try_from(parts: GradSumsParts) -> Result<Self, Error> {
        Self::from_parts(parts)
    }
}

#[cfg(feature = "serde")]
impl<F: Float> From<GradSums<F>> for GradSumsParts {
    fn from(s: GradSums<F>) -> Self {
        s.to_parts()
    }
}
