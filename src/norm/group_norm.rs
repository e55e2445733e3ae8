//! `GroupNorm`: statistics per sample and group of channels.

use super::groups::{check_groups, group_statistics, normalize_groups};
use super::{BatchStats, Layout, checks};
use crate::{Element, Error, Float};

/// Group normalization (Wu and He, 2018): each sample's channels are split
/// into `groups` groups of consecutive channels, and each group is
/// normalized with its own mean and biased variance over its channels and
/// positions — PyTorch's `torch.nn.GroupNorm(groups, C, eps)` and
/// `torch.nn.functional.group_norm`, for channels-first (NCHW, NCL, NC)
/// and channels-last (NHWC, NLC) tensors alike.
///
/// One group is [`LayerNorm`](super::LayerNorm) over `(C, H, W)`; `C` groups is
/// [`InstanceNorm`](super::InstanceNorm). Statistics come from the same
/// per-channel kernels as [`BatchStats`], in `f64`, and are returned as a
/// `BatchStats` whose "channels" are the groups in sample-major order
/// (sample 0's groups, then sample 1's…), which is what a backward pass
/// saves. The layout must know its sample count
/// ([`Layout::samples`]): use the named constructors.
///
/// # Example
///
/// ```
/// use momenta::norm::{GroupNorm, Layout};
///
/// // One sample, 4 channels of 2 positions, channels first; 2 groups.
/// let xs = [1.0, 3.0, 5.0, 7.0, 10.0, 10.0, 20.0, 20.0];
/// let layout = Layout::ncl(1, 4, 2)?;
/// let gn = GroupNorm::<f64>::new(2)?.with_eps(0.0)?;
/// let stats = gn.statistics(&xs, layout)?;
/// assert_eq!(stats.mean(), &[4.0, 15.0]);
/// assert_eq!(stats.variance(), vec![5.0, 25.0]);
///
/// let mut y = [0.0; 8];
/// gn.normalize(&xs, layout, None, None, &mut y)?;
/// assert_eq!(&y[4..], &[-1.0, -1.0, 1.0, 1.0]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupNorm<F> {
    groups: usize,
    eps: F,
}

impl<F: Float> GroupNorm<F> {
    /// `groups` groups, with PyTorch's eps, `1e-5`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `groups` when it is 0. (Whether it divides the channels is
    /// checked against each tensor.)
    ///
    /// ```
    /// use momenta::norm::GroupNorm;
    /// assert_eq!(GroupNorm::<f32>::new(8)?.groups(), 8);
    /// assert!(GroupNorm::<f32>::new(0).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(groups: usize) -> Result<Self, Error> {
        check_groups(groups, 0)?;
        Ok(Self {
            groups,
            eps: F::from_f64(1e-5),
        })
    }

    /// The same with another eps.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `eps` unless it is finite and non-negative.
    ///
    /// ```
    /// use momenta::norm::GroupNorm;
    /// assert_eq!(GroupNorm::<f64>::new(2)?.with_eps(1e-3)?.eps(), 1e-3);
    /// assert!(GroupNorm::<f64>::new(2)?.with_eps(-1.0).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_eps(self, eps: F) -> Result<Self, Error> {
        checks::eps(eps)?;
        Ok(Self { eps, ..self })
    }

    /// The number of groups.
    ///
    /// ```
    /// assert_eq!(momenta::norm::GroupNorm::<f64>::new(4)?.groups(), 4);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// The eps added to the variance.
    ///
    /// ```
    /// assert_eq!(momenta::norm::GroupNorm::<f32>::new(1)?.eps(), 1e-5);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn eps(&self) -> F {
        self.eps
    }

    /// The mean and variance of every group of every sample of `xs`
    /// (shape `layout`), in sample-major order; `xs` may be `f32`, `f64`
    /// (or half precision with the `half` feature) whatever `F` is.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `data` when `xs` does not hold `layout`;
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `groups` when they do not divide the channels.
    ///
    /// ```
    /// use momenta::norm::{GroupNorm, Layout};
    /// // Two samples, channels last: 2 positions × 2 channels each.
    /// let xs = [1.0_f32, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0];
    /// let s = GroupNorm::<f64>::new(1)?.statistics(&xs, Layout::nhwc(2, 1, 2, 2)?)?;
    /// assert_eq!(s.mean(), &[2.5, 25.0]);
    /// assert!(GroupNorm::<f64>::new(3)?.statistics(&xs, Layout::nhwc(2, 1, 2, 2)?).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn statistics<S: Element>(&self, xs: &[S], layout: Layout) -> Result<BatchStats<F>, Error> {
        group_statistics(xs, layout, self.groups, false)
    }

    /// [`statistics`](GroupNorm::statistics) on every rayon thread (feature
    /// `rayon`): the same statistics, bit for bit, whatever the number of
    /// threads.
    ///
    /// # Errors
    ///
    /// As [`statistics`](GroupNorm::statistics).
    ///
    /// ```
    /// use momenta::norm::{GroupNorm, Layout};
    /// let xs: Vec<f32> = (0..4 * 8 * 6 * 6).map(|i| (i % 13) as f32).collect();
    /// let layout = Layout::nhwc(4, 6, 6, 8)?;
    /// let gn = GroupNorm::<f64>::new(2)?;
    /// assert_eq!(gn.par_statistics(&xs, layout)?, gn.statistics(&xs, layout)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_statistics<S: Element>(
        &self,
        xs: &[S],
        layout: Layout,
    ) -> Result<BatchStats<F>, Error> {
        group_statistics(xs, layout, self.groups, true)
    }

    /// Normalizes `xs` (shape `layout`) into `out`, `γ` and `β` per channel
    /// (absent: 1 and 0), and returns the statistics it used.
    ///
    /// # Errors
    ///
    /// As [`statistics`](GroupNorm::statistics), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `output`, `gamma` or `beta` for a slice of the wrong length.
    ///
    /// ```
    /// use momenta::norm::{GroupNorm, Layout};
    /// let xs = [0.0_f32, 2.0, 4.0, 6.0];
    /// let mut y = [0.0_f32; 4];
    /// let gn = GroupNorm::new(2)?.with_eps(0.0)?;
    /// gn.normalize(&xs, Layout::nc(1, 4)?, Some(&[1.0, 1.0, 2.0, 2.0]), None, &mut y)?;
    /// assert_eq!(y, [-1.0, 1.0, -2.0, 2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize(
        &self,
        xs: &[F],
        layout: Layout,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
        out: &mut [F],
    ) -> Result<BatchStats<F>, Error> {
        let stats = self.statistics(xs, layout)?;
        normalize_groups(xs, layout, self.groups, &stats, self.eps, gamma, beta, out)?;
        Ok(stats)
    }
}
