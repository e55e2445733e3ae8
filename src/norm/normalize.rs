//! Normalization: `y = (x − mean) · γ/√(var + eps) + β`, per channel.

use alloc::vec::Vec;

use super::{BatchStats, Layout, RunningStats, checks};
use crate::float::two_sum;
use crate::kernels::affine::{Affine, Pass, PerValue, affine_lanes, affine_runs, streams};
use crate::moments::Moments;
use crate::{Element, Error, Float};

/// A mean as the unevaluated sum `hi + lo` of two `f64`, `|lo| ≤ ulp(hi)/2`:
/// what every normalization layer subtracts, as `(x − hi)·scale − lo·scale`.
///
/// The statistics keep each mean as a shift (a value from the data) plus a
/// small offset; their sum, split exactly into `hi + lo`, is the mean to
/// about 106 bits. For `x` near the mean `x − hi` is exact, and `lo`,
/// scaled once per channel, joins β: `y = (x − hi)·scale + (β − lo·scale)`,
/// no more operations per value than `(x − mean)·scale + β`. Subtracting a
/// mean rounded once instead carries its rounding, up to half an ulp of
/// the mean, into every output, times the scale: for data at 40 ± 1e-3
/// that was 1e-12 of the normalized output, thousands of `f64` ulps.
/// (`grad_input` takes `x − mean` as `(x − shift) − offset` for the same
/// reason.)
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Centre {
    hi: f64,
    lo: f64,
}

impl Centre {
    /// A mean known only to one rounding: `lo` is 0.
    pub(super) fn rounded(mean: f64) -> Self {
        Self { hi: mean, lo: 0.0 }
    }

    /// The mean of `m`, `shift + offset`, split exactly into `hi + lo`
    /// (Knuth's two-sum); NaN with no values, and `lo` 0 when the mean is
    /// not finite (∞ − ∞ would be NaN).
    pub(super) fn of(m: &Moments<f64>) -> Self {
        if m.count == 0 {
            return Self::rounded(f64::NAN);
        }
        let (hi, lo) = two_sum(m.shift, m.offset);
        Self {
            hi,
            lo: if lo.is_finite() { lo } else { 0.0 },
        }
    }

    /// `(hi, β − rest·scale)` in `F`, with `hi` the mean rounded to `F`
    /// and `rest` what that leaves of `hi + lo` (in `f32`, `x − hi` is
    /// exact near the mean, and the rest keeps what an `f32` mean would
    /// lose). With nothing left (or a non-finite rest) the second is β:
    /// `0·∞` would make a zero variance's outputs NaN.
    pub(super) fn split<F: Float>(self, scale: f64, beta: f64) -> (F, F) {
        let hi = F::from_f64(self.hi);
        let rest = (self.hi - hi.as_f64()) + self.lo;
        let offset = if rest == 0.0 || !rest.is_finite() {
            beta
        } else {
            beta - rest * scale
        };
        (hi, F::from_f64(offset))
    }

    /// The mean in `f64` and `−lo·scale`, for a normalization in `f64`
    /// ([`LayerNorm`](super::LayerNorm)'s, whose γ and β differ from value
    /// to value): `(x − hi)·scale + that`, then the affine map.
    pub(super) fn wide(self, scale: f64) -> (f64, f64) {
        let offset = if self.lo == 0.0 {
            0.0
        } else {
            -(self.lo * scale)
        };
        (self.hi, offset)
    }
}

/// Per-channel parameters of a normalization, precomputed once:
/// `y = (x − mean) · scale + β` with `scale = γ/√(var + eps)`.
///
/// Applying it is one streaming pass over the tensor, which runs near the
/// speed of a plain copy in both layouts: channels-first rows of `inner`
/// values share one `(mean, scale, β)`; channels-last rows of `C` values
/// zip with the parameter vectors.
///
/// Every output is `(x − hi)·scale + (β − lo·scale)` in `F`, with the mean
/// as two parts `hi + lo`: from [`BatchStats`] (and
/// [`GroupNorm`](super::GroupNorm), [`InstanceNorm`](super::InstanceNorm))
/// the statistics' own shift and offset, so the mean loses nothing to
/// cancellation in `x − mean` in `f64` either; from a given mean
/// ([`new`](Normalizer::new), [`RunningStats`]) that mean. The scale and
/// `β − lo·scale` are computed in `f64` and rounded once. Against the
/// exact normalization, on data at 40 ± 1e-3 and 40 ± 1, an `f64` output
/// is within 3 ulps of `max(|y|, 1)` (with the mean rounded once to `f64`
/// before `x − mean`, up to 7000), an `f32` output within 1.5: its
/// roundings in `f32`. (Computed in `f64` and rounded once, it would be
/// within half an ulp, but with twice the arithmetic, which ran `f32`
/// tensors in cache at half the speed.)
///
/// Subtracting the mean first is more accurate than the frameworks'
/// `x · scale + (β − mean · scale)` when the data sit far from zero
/// (there `x · scale` and `mean · scale` are large and cancel), and costs
/// nothing measurable: the pass is bound by memory, not arithmetic.
///
/// Training mode uses the batch's own statistics
/// ([`BatchStats::normalize`]); evaluation mode the running ones
/// ([`RunningStats::normalize`]).
///
/// # Example
///
/// ```
/// use momenta::norm::{Layout, Normalizer};
///
/// let n = Normalizer::new(&[1.0, 10.0], &[4.0, 1.0], 0.0, Some(&[1.0, 3.0]), Some(&[0.0, 0.5]))?;
/// let mut y = [0.0; 4];
/// n.apply(&[3.0, 11.0, -1.0, 9.0], Layout::nc(2, 2)?, &mut y)?;
/// assert_eq!(y, [1.0, 3.5, -1.0, -2.5]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Normalizer<F> {
    /// The mean rounded to `F`: `x − mean` is exact for `x` near it.
    mean: Vec<F>,
    scale: Vec<F>,
    /// `β − lo·scale`, `lo` the part of the mean `mean` leaves out (see
    /// [`Centre::split`]).
    offset: Vec<F>,
}

/// `γ/√(var + eps)` per channel, in `f64`, after checking every argument.
pub(super) fn scales<F: Float>(
    var: &[f64],
    eps: F,
    gamma: Option<&[F]>,
) -> Result<Vec<f64>, Error> {
    checks::eps(eps)?;
    checks::optional_channel_len("gamma", gamma, var.len())?;
    if let Some(&v) = var.iter().find(|v| **v < 0.0) {
        return Err(Error::parameter("variance", v, "non-negative"));
    }
    let eps = eps.as_f64();
    Ok(var
        .iter()
        .enumerate()
        .map(|(c, &v)| {
            let g = gamma.and_then(|g| g.get(c)).map_or(1.0, |g| g.as_f64());
            g / num_traits::Float::sqrt(v + eps)
        })
        .collect())
}

/// Widens a slice to `f64`.
pub(super) fn widen<F: Float>(xs: &[F]) -> Vec<f64> {
    xs.iter().map(|x| x.as_f64()).collect()
}

impl<F: Float> Normalizer<F> {
    /// Precomputes the per-channel parameters; `gamma` defaults to ones and
    /// `beta` to zeros.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    ///   naming `variance`, `gamma` or `beta` when its length differs from
    ///   `mean`'s;
    /// - [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    ///   naming `eps` unless it is finite and non-negative, or `variance`
    ///   when one is negative.
    ///
    /// ```
    /// use momenta::norm::Normalizer;
    /// assert!(Normalizer::new(&[0.0, 0.0], &[1.0], 1e-5, None, None).is_err());
    /// assert!(Normalizer::new(&[0.0], &[1.0], -1e-5, None, None).is_err());
    /// assert_eq!(Normalizer::new(&[0.0_f32; 3], &[1.0; 3], 0.0, None, None)?.channels(), 3);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(
        mean: &[F],
        var: &[F],
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<Self, Error> {
        checks::channel_len("variance", var, mean.len())?;
        let centre: Vec<Centre> = mean.iter().map(|m| Centre::rounded(m.as_f64())).collect();
        Self::from_centres(&centre, &widen(var), eps, gamma, beta)
    }

    /// The normalizer of statistics' moments: each channel's mean as its
    /// shift and offset, and its biased variance.
    pub(super) fn from_moments(
        moments: &[Moments<f64>],
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<Self, Error> {
        let centre: Vec<Centre> = moments.iter().map(Centre::of).collect();
        let var: Vec<f64> = moments
            .iter()
            .map(|m| m.variance(0).unwrap_or(f64::NAN))
            .collect();
        Self::from_centres(&centre, &var, eps, gamma, beta)
    }

    /// The constructor behind the others.
    fn from_centres(
        centre: &[Centre],
        var: &[f64],
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<Self, Error> {
        let channels = centre.len();
        checks::channel_len("variance", var, channels)?;
        checks::optional_channel_len("beta", beta, channels)?;
        let scale = scales(var, eps, gamma)?;
        let (mean, offset) = centre
            .iter()
            .zip(&scale)
            .enumerate()
            .map(|(c, (m, &s))| {
                let b = beta.and_then(|b| b.get(c)).map_or(0.0, |b| b.as_f64());
                m.split::<F>(s, b)
            })
            .unzip();
        Ok(Self {
            mean,
            scale: scale.into_iter().map(F::from_f64).collect(),
            offset,
        })
    }

    /// The number of channels.
    ///
    /// ```
    /// use momenta::norm::Normalizer;
    /// assert_eq!(Normalizer::new(&[0.0; 2], &[1.0; 2], 0.0, None, None)?.channels(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn channels(&self) -> usize {
        self.mean.len()
    }

    /// The per-channel scales `γ/√(var + eps)`.
    ///
    /// ```
    /// use momenta::norm::Normalizer;
    /// let n = Normalizer::new(&[0.0], &[4.0], 0.0, Some(&[3.0]), None)?;
    /// assert_eq!(n.scale(), &[1.5]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn scale(&self) -> &[F] {
        &self.scale
    }

    /// `(mean, scale, offset)` of each channel, in order.
    fn params(&self) -> impl Iterator<Item = (&F, &F, &F)> + Clone {
        self.mean
            .iter()
            .zip(&self.scale)
            .zip(&self.offset)
            .map(|((m, s), b)| (m, s, b))
    }

    fn check(&self, len: usize, layout: Layout) -> Result<(), Error> {
        layout.check(len)?;
        if layout.channels() != self.channels() {
            return Err(Error::length(
                "layout channels",
                self.channels(),
                layout.channels(),
            ));
        }
        Ok(())
    }

    /// Writes the normalized tensor `xs` (shape `layout`) to `out`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `data` or `output` when a slice does not hold `layout`, or
    /// `layout channels` when the layout has another channel count.
    ///
    /// ```
    /// use momenta::norm::{Layout, Normalizer};
    /// let n = Normalizer::new(&[2.0_f32], &[0.25], 0.0, None, None)?;
    /// let mut y = [0.0_f32; 3];
    /// n.apply(&[2.0, 2.5, 1.0], Layout::ncl(1, 1, 3)?, &mut y)?;
    /// assert_eq!(y, [0.0, 1.0, -2.0]);
    /// assert!(n.apply(&[2.0, 2.5], Layout::ncl(1, 1, 3)?, &mut y).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn apply(&self, xs: &[F], layout: Layout, out: &mut [F]) -> Result<(), Error> {
        self.check(xs.len(), layout)?;
        if out.len() != xs.len() {
            return Err(Error::length("output", xs.len(), out.len()));
        }
        if layout.is_empty() {
            return Ok(());
        }
        let c = layout.channels();
        let inner = layout.inner();
        let block = c * inner;
        let params = self.params();
        for (xb, ob) in xs.chunks_exact(block).zip(out.chunks_exact_mut(block)) {
            if inner == 1 {
                let row = ob.iter_mut().zip(xb).zip(params.clone());
                for ((o, &x), (&m, &s, &b)) in row {
                    *o = (x - m) * s + b;
                }
            } else {
                let rows = xb.chunks_exact(inner).zip(ob.chunks_exact_mut(inner));
                for ((xr, or), (&m, &s, &b)) in rows.zip(params.clone()) {
                    for (o, &x) in or.iter_mut().zip(xr) {
                        *o = (x - m) * s + b;
                    }
                }
            }
        }
        Ok(())
    }

    /// Normalizes `xs` (shape `layout`) in place.
    ///
    /// # Errors
    ///
    /// As [`apply`](Normalizer::apply).
    ///
    /// ```
    /// use momenta::norm::{Layout, Normalizer};
    /// let n = Normalizer::new(&[1.0, -1.0], &[1.0, 1.0], 0.0, None, None)?;
    /// let mut xs = [2.0, 2.0, 0.0, 0.0];
    /// n.apply_in_place(&mut xs, Layout::nc(2, 2)?)?;
    /// assert_eq!(xs, [1.0, 3.0, -1.0, 1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn apply_in_place(&self, xs: &mut [F], layout: Layout) -> Result<(), Error> {
        self.check(xs.len(), layout)?;
        if layout.is_empty() {
            return Ok(());
        }
        let inner = layout.inner();
        let block = layout.channels() * inner;
        let params = self.params();
        for xb in xs.chunks_exact_mut(block) {
            if inner == 1 {
                for (x, (&m, &s, &b)) in xb.iter_mut().zip(params.clone()) {
                    *x = (*x - m) * s + b;
                }
            } else {
                for (xr, (&m, &s, &b)) in xb.chunks_exact_mut(inner).zip(params.clone()) {
                    for x in xr {
                        *x = (*x - m) * s + b;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Per-channel parameters of a normalization kept in `f64`:
/// `y = (x − hi)·scale + offset` computed in `f64` for input of any
/// [`Element`] type and rounded once to the output's, with the mean as
/// `hi + lo` and `offset = β − lo·scale` (see [`Centre`]). What the
/// `normalize_into` methods use: half-precision in and out, one rounding.
#[derive(Clone, Debug)]
pub(super) struct WideNormalizer {
    hi: Vec<f64>,
    scale: Vec<f64>,
    offset: Vec<f64>,
}

impl WideNormalizer {
    /// From statistics' moments: each mean as its shift and offset, and
    /// the biased variance.
    pub(super) fn from_moments<F: Float>(
        moments: &[Moments<f64>],
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<Self, Error> {
        let centre: Vec<Centre> = moments.iter().map(Centre::of).collect();
        let var: Vec<f64> = moments
            .iter()
            .map(|m| m.variance(0).unwrap_or(f64::NAN))
            .collect();
        Self::from_centres(&centre, &var, eps, gamma, beta)
    }

    /// From a given mean and variance (running statistics).
    pub(super) fn from_mean_var<F: Float>(
        mean: &[F],
        var: &[F],
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<Self, Error> {
        checks::channel_len("variance", var, mean.len())?;
        let centre: Vec<Centre> = mean.iter().map(|m| Centre::rounded(m.as_f64())).collect();
        Self::from_centres(&centre, &widen(var), eps, gamma, beta)
    }

    fn from_centres<F: Float>(
        centre: &[Centre],
        var: &[f64],
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<Self, Error> {
        let channels = centre.len();
        checks::optional_channel_len("beta", beta, channels)?;
        let scale = scales(var, eps, gamma)?;
        let (hi, offset) = centre
            .iter()
            .zip(&scale)
            .enumerate()
            .map(|(c, (m, &s))| {
                let b = beta.and_then(|b| b.get(c)).map_or(0.0, |b| b.as_f64());
                let (hi, rest) = m.wide(s);
                (hi, b + rest)
            })
            .unzip();
        Ok(Self { hi, scale, offset })
    }

    /// Normalizes a tensor `[outer, channels, inner]` (the caller checked
    /// that `xs` and `out` hold it and that the channels agree).
    pub(super) fn apply<S: Element, O: Element>(
        &self,
        xs: &[S],
        channels: usize,
        inner: usize,
        out: &mut [O],
    ) {
        apply_entries(
            Affine {
                hi: &self.hi,
                scale: &self.scale,
                offset: &self.offset,
            },
            xs,
            channels,
            inner,
            Pass {
                stream: streams(out),
                ahead: 0,
            },
            out,
        );
    }
}

/// Values per chunk of the passes that take a tensor's statistics and
/// normalize it a chunk at a time (a layer norm's rows, the samples of a
/// group norm): 64 KiB of `f32`, which the normalization reads again from
/// the L2 cache.
pub(super) const FUSED_VALUES: usize = 16_384;

/// Rows shorter than this are normalized as lanes, each channel's
/// parameters repeated over its values in a row (when a row holds at most
/// [`LANES_CAP`] values): the loop over runs works four values at a time
/// and is slow on runs of one to three.
const SHORT_RUN: usize = 4;

/// The longest rows [`SHORT_RUN`] expands the parameters to: three `f64`
/// vectors of 96 KiB.
const LANES_CAP: usize = 4096;

/// Normalizes a tensor `[outer, channels, inner]` (`xs` and `out` whole
/// slabs of `channels · inner` values) with one entry of `params` per
/// channel: by runs of `inner` values when channels come first, by lanes
/// when they come last; written and read ahead as `pass` says.
pub(super) fn apply_entries<S: Element, O: Element>(
    params: Affine<'_>,
    xs: &[S],
    channels: usize,
    inner: usize,
    pass: Pass,
    out: &mut [O],
) {
    let slab = channels * inner;
    if slab == 0 {
        return;
    }
    if inner == 1 {
        affine_lanes(xs, params, pass, out);
    } else if inner < SHORT_RUN && slab <= LANES_CAP {
        let spread = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .flat_map(|&p| core::iter::repeat_n(p, inner))
                .collect()
        };
        let (hi, scale, offset) = (
            spread(params.hi),
            spread(params.scale),
            spread(params.offset),
        );
        let lanes = Affine {
            hi: &hi,
            scale: &scale,
            offset: &offset,
        };
        affine_lanes(xs, lanes, pass, out);
    } else {
        affine_runs(xs, inner, params, PerValue::default(), pass, out);
    }
}

/// Normalizes `xs` (shape `layout`) into `out` with given per-channel
/// statistics: `y = (x − mean)·γ/√(var + eps) + β`, `γ` defaulting to ones
/// and `β` to zeros. See [`Normalizer`] to reuse the precomputed
/// parameters.
///
/// # Errors
///
/// As [`Normalizer::new`] and [`Normalizer::apply`].
///
/// ```
/// use momenta::norm::{normalize, Layout};
/// let mut y = [0.0; 4];
/// normalize(&[1.0, 5.0, 3.0, 7.0], Layout::nc(2, 2)?, &[2.0, 6.0], &[1.0, 1.0], 0.0, None, None, &mut y)?;
/// assert_eq!(y, [-1.0, -1.0, 1.0, 1.0]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn normalize<F: Float>(
    xs: &[F],
    layout: Layout,
    mean: &[F],
    var: &[F],
    eps: F,
    gamma: Option<&[F]>,
    beta: Option<&[F]>,
    out: &mut [F],
) -> Result<(), Error> {
    Normalizer::new(mean, var, eps, gamma, beta)?.apply(xs, layout, out)
}

/// [`normalize`] in place.
///
/// # Errors
///
/// As [`Normalizer::new`] and [`Normalizer::apply_in_place`].
///
/// ```
/// use momenta::norm::{normalize_in_place, Layout};
/// let mut xs = [1.0_f32, 3.0];
/// normalize_in_place(&mut xs, Layout::ncl(1, 1, 2)?, &[2.0], &[1.0], 0.0, Some(&[2.0]), Some(&[1.0]))?;
/// assert_eq!(xs, [-1.0, 3.0]);
/// # Ok::<(), momenta::Error>(())
/// ```
pub fn normalize_in_place<F: Float>(
    xs: &mut [F],
    layout: Layout,
    mean: &[F],
    var: &[F],
    eps: F,
    gamma: Option<&[F]>,
    beta: Option<&[F]>,
) -> Result<(), Error> {
    Normalizer::new(mean, var, eps, gamma, beta)?.apply_in_place(xs, layout)
}

impl<F: Float> BatchStats<F> {
    /// The training-mode [`Normalizer`]: this batch's mean and biased
    /// variance.
    ///
    /// # Errors
    ///
    /// As [`Normalizer::new`], and
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) when
    /// the statistics are [poisoned](BatchStats::is_poisoned).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let s = BatchStats::<f64>::compute(&[1.0, 3.0], Layout::nc(2, 1)?)?;
    /// assert_eq!(s.normalizer(0.0, None, None)?.scale(), &[1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalizer(
        &self,
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<Normalizer<F>, Error> {
        self.check_usable()?;
        Normalizer::from_moments(self.moments(), eps, gamma, beta)
    }

    /// Training-mode normalization of `xs` (shape `layout`) into `out`,
    /// with this batch's mean and biased variance. `xs` need not be the
    /// data the statistics came from: in synchronized BatchNorm each rank
    /// normalizes its shard with the merged statistics.
    ///
    /// # Errors
    ///
    /// As [`normalizer`](BatchStats::normalizer) and [`Normalizer::apply`].
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let xs = [1.0, 3.0];
    /// let s = BatchStats::<f64>::compute(&xs, Layout::nc(2, 1)?)?;
    /// let mut y = [0.0; 2];
    /// s.normalize(&xs, Layout::nc(2, 1)?, 0.0, None, None, &mut y)?;
    /// assert_eq!(y, [-1.0, 1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize(
        &self,
        xs: &[F],
        layout: Layout,
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
        out: &mut [F],
    ) -> Result<(), Error> {
        self.normalizer(eps, gamma, beta)?.apply(xs, layout, out)
    }

    /// [`normalize`](BatchStats::normalize) in place.
    ///
    /// # Errors
    ///
    /// As [`normalize`](BatchStats::normalize).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let mut xs = [1.0_f32, 3.0];
    /// let s = BatchStats::<f32>::compute(&xs, Layout::nc(2, 1)?)?;
    /// s.normalize_in_place(&mut xs, Layout::nc(2, 1)?, 0.0, None, None)?;
    /// assert_eq!(xs, [-1.0, 1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize_in_place(
        &self,
        xs: &mut [F],
        layout: Layout,
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<(), Error> {
        self.normalizer(eps, gamma, beta)?
            .apply_in_place(xs, layout)
    }
}

impl<F: Float> BatchStats<F> {
    /// Training-mode normalization of `xs` (shape `layout`, any
    /// [`Element`] type: `f16`/`bf16` with the `half` feature) into `out`
    /// (any `Element` type), computed in `f64` from the statistics' `f64`
    /// moments and rounded once to the output type: half-precision
    /// activations in and out with no widening by hand, and an `f32`
    /// output within half an ulp (plus 1e-9 of one) of the exact
    /// normalization.
    ///
    /// # Errors
    ///
    /// As [`normalize`](BatchStats::normalize).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// let xs = [1.0_f32, 3.0];
    /// let s = BatchStats::<f32>::compute(&xs, Layout::nc(2, 1)?)?;
    /// let mut y = [0.0_f64; 2]; // f32 in, f64 out
    /// s.normalize_into(&xs, Layout::nc(2, 1)?, 0.0, None, Some(&[0.5]), &mut y)?;
    /// assert_eq!(y, [-0.5, 1.5]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize_into<S: Element, O: Element>(
        &self,
        xs: &[S],
        layout: Layout,
        eps: F,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
        out: &mut [O],
    ) -> Result<(), Error> {
        self.check_usable()?;
        let wide = WideNormalizer::from_moments(self.moments(), eps, gamma, beta)?;
        apply_wide(&wide, self.channels(), xs, layout, out)
    }
}

/// Checks the tensors of a wide normalization with `channels` channels
/// and applies it.
fn apply_wide<S: Element, O: Element>(
    wide: &WideNormalizer,
    channels: usize,
    xs: &[S],
    layout: Layout,
    out: &mut [O],
) -> Result<(), Error> {
    layout.check(xs.len())?;
    if layout.channels() != channels {
        return Err(Error::length(
            "layout channels",
            channels,
            layout.channels(),
        ));
    }
    if out.len() != xs.len() {
        return Err(Error::length("output", xs.len(), out.len()));
    }
    wide.apply(xs, layout.channels(), layout.inner(), out);
    Ok(())
}

impl<F: Float> RunningStats<F> {
    /// Evaluation-mode normalization of `xs` (shape `layout`, any
    /// [`Element`] type) into `out` (any `Element` type), in `f64` and
    /// rounded once: [`normalize`](RunningStats::normalize) for
    /// half-precision activations.
    ///
    /// # Errors
    ///
    /// As [`normalize`](RunningStats::normalize).
    ///
    /// ```
    /// use momenta::norm::{BnConfig, Layout, RunningStats};
    /// let r = RunningStats::with_state(&[1.0_f32], &[4.0], BnConfig::keras().with_eps(0.0)?)?;
    /// let mut y = [0.0_f32; 2];
    /// r.normalize_into(&[1.0_f64, 5.0], Layout::nc(2, 1)?, None, None, &mut y)?;
    /// assert_eq!(y, [0.0, 2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize_into<S: Element, O: Element>(
        &self,
        xs: &[S],
        layout: Layout,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
        out: &mut [O],
    ) -> Result<(), Error> {
        let wide = WideNormalizer::from_mean_var(
            self.mean(),
            self.var(),
            self.config().eps(),
            gamma,
            beta,
        )?;
        apply_wide(&wide, self.channels(), xs, layout, out)
    }

    /// The evaluation-mode [`Normalizer`]: the running mean and variance and
    /// the configuration's eps.
    ///
    /// # Errors
    ///
    /// As [`Normalizer::new`].
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// let r = RunningStats::<f64>::new(2, BnConfig::pytorch().with_eps(0.0)?);
    /// assert_eq!(r.normalizer(Some(&[2.0, 3.0]), None)?.scale(), &[2.0, 3.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalizer(
        &self,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<Normalizer<F>, Error> {
        Normalizer::new(self.mean(), self.var(), self.config().eps(), gamma, beta)
    }

    /// Evaluation-mode normalization of `xs` (shape `layout`) into `out`.
    ///
    /// # Errors
    ///
    /// As [`Normalizer::new`] and [`Normalizer::apply`].
    ///
    /// ```
    /// use momenta::norm::{BnConfig, Layout, RunningStats};
    /// let r = RunningStats::with_state(&[1.0], &[4.0], BnConfig::<f64>::keras().with_eps(0.0)?)?;
    /// let mut y = [0.0; 2];
    /// r.normalize(&[1.0, 5.0], Layout::nc(2, 1)?, None, Some(&[0.5]), &mut y)?;
    /// assert_eq!(y, [0.5, 2.5]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize(
        &self,
        xs: &[F],
        layout: Layout,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
        out: &mut [F],
    ) -> Result<(), Error> {
        self.normalizer(gamma, beta)?.apply(xs, layout, out)
    }

    /// [`normalize`](RunningStats::normalize) in place.
    ///
    /// # Errors
    ///
    /// As [`normalize`](RunningStats::normalize).
    ///
    /// ```
    /// use momenta::norm::{BnConfig, Layout, RunningStats};
    /// let r = RunningStats::with_state(&[1.0], &[4.0], BnConfig::<f64>::keras().with_eps(0.0)?)?;
    /// let mut xs = [1.0, 5.0];
    /// r.normalize_in_place(&mut xs, Layout::nc(2, 1)?, None, None)?;
    /// assert_eq!(xs, [0.0, 2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize_in_place(
        &self,
        xs: &mut [F],
        layout: Layout,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<(), Error> {
        self.normalizer(gamma, beta)?.apply_in_place(xs, layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_match_the_formula() {
        // 2 × 2 channels × 3 inner, channels first; and the same as NHWC.
        let xs: Vec<f64> = (0..12).map(|i| f64::from(i * i % 7)).collect();
        let (mean, var, g, b) = ([1.0, 2.0], [4.0, 0.25], [1.5, -1.0], [0.5, 2.0]);
        let n = Normalizer::new(&mean, &var, 0.0, Some(&g), Some(&b)).unwrap();
        let mut y = alloc::vec![0.0; 12];
        n.apply(&xs, Layout::ncl(2, 2, 3).unwrap(), &mut y).unwrap();
        for (i, (&x, &y)) in xs.iter().zip(&y).enumerate() {
            let c = (i / 3) % 2;
            assert_eq!(y, (x - mean[c]) * g[c] / var[c].sqrt() + b[c]);
        }
        let mut z = xs.clone();
        n.apply_in_place(&mut z, Layout::nc(6, 2).unwrap()).unwrap();
        for (i, (&x, &z)) in xs.iter().zip(&z).enumerate() {
            let c = i % 2;
            assert_eq!(z, (x - mean[c]) * g[c] / var[c].sqrt() + b[c]);
        }
    }

    #[test]
    fn mismatches_are_errors() {
        let n = Normalizer::new(&[0.0; 2], &[1.0; 2], 0.0, None, None).unwrap();
        let mut y = [0.0; 6];
        assert!(
            n.apply(&[0.0; 6], Layout::nc(2, 3).unwrap(), &mut y)
                .is_err()
        );
        assert!(
            n.apply(&[0.0; 6], Layout::nc(3, 2).unwrap(), &mut y[..5])
                .is_err()
        );
        assert!(Normalizer::new(&[0.0; 2], &[1.0, -1.0], 0.0, None, None).is_err());
        assert!(Normalizer::new(&[0.0; 2], &[1.0; 2], 0.0, Some(&[1.0]), None).is_err());
        assert!(Normalizer::new(&[0.0; 2], &[1.0; 2], 0.0, None, Some(&[1.0; 3])).is_err());
        // Empty tensors and zero channels are fine.
        let e = Normalizer::<f64>::new(&[], &[], 0.0, None, None).unwrap();
        e.apply(&[], Layout::nc(5, 0).unwrap(), &mut []).unwrap();
        n.apply(&[], Layout::ncl(0, 2, 3).unwrap(), &mut [])
            .unwrap();
    }
}
