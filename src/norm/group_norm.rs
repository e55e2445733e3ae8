//! `GroupNorm`: statistics per sample and group of channels.

use super::backward::{AffineGrads, Backward};
use super::groups::{
    check_groups, group_grad_input, group_grad_sums, group_statistics, normalize_fused,
    normalize_fused_wide,
};
use super::{BatchStats, GradSums, Layout, checks};
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
/// # Backward
///
/// [`backward`](GroupNorm::backward) gives `dx`, `dγ` and `dβ`, PyTorch's
/// autograd values. It is BatchNorm's backward over the same re-viewed
/// tensor: the per-channel grad kernel sums `Σdy` and `Σdy·(x − shift)`
/// for every channel of every sample (each about its group's shift), from
/// which come `dβ`, `dγ`, and per group `Σĝ`, `Σĝ·(x − μ)` of
/// `ĝ = γ·dy`; then `dx = (γ·dy − Σĝ/n − x̂·Σĝ·x̂/n)/σ`. When a sample's
/// positions are split over workers (spatial parallelism), the group
/// statistics and then the group sums of [`grad_sums`](GroupNorm::grad_sums)
/// merge across them, as in a synchronized BatchNorm.
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
        normalize_fused(xs, layout, self.groups, self.eps, gamma, beta, out)
    }

    /// Normalizes `xs` (shape `layout`, any [`Element`] type: `f16`/`bf16`
    /// with the `half` feature) into `out` (any `Element` type), `γ` and `β`
    /// per channel, and returns the statistics it used. Each value is
    /// computed in `f64` and rounded once to the output type.
    ///
    /// # Errors
    ///
    /// As [`normalize`](GroupNorm::normalize).
    ///
    /// ```
    /// use momenta::norm::{GroupNorm, Layout};
    /// let xs = [0.0_f32, 2.0, 4.0, 6.0];
    /// let mut y = [0.0_f64; 4];
    /// GroupNorm::<f32>::new(2)?.with_eps(0.0)?.normalize_into(&xs, Layout::nc(1, 4)?, None, None, &mut y)?;
    /// assert_eq!(y, [-1.0, 1.0, -1.0, 1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize_into<S: Element, O: Element>(
        &self,
        xs: &[S],
        layout: Layout,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
        out: &mut [O],
    ) -> Result<BatchStats<F>, Error> {
        normalize_fused_wide(xs, layout, self.groups, self.eps, gamma, beta, out)
    }

    /// The backward sums of `pass`, in one pass over `xs` and `dy`: per
    /// group of every sample, `Σĝ` and `Σĝ·(x − shift)` with `ĝ = γ·dy`, as
    /// [`GradSums`] whose channels are the groups (sample-major, as the
    /// statistics) — what workers that split the samples' positions merge
    /// before [`grad_input`](GroupNorm::grad_input) — and this tensor's
    /// `dγ`, `dβ` per channel, which such workers (and workers holding
    /// other samples) add.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    ///   naming `data` or `gradient` for a slice that does not hold the
    ///   layout, `statistics groups` for statistics of another shape,
    ///   `gamma` for a γ of another length than the channels;
    /// - [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    ///   naming `groups` when they do not divide the channels;
    /// - [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) when
    ///   the statistics are poisoned.
    ///
    /// ```
    /// use momenta::Merge;
    /// use momenta::norm::{Backward, GroupNorm, Layout};
    /// // One sample, 2 channels of 4 positions (NCL), split over two
    /// // workers by position: 2 positions each.
    /// let gn = GroupNorm::<f64>::new(1)?;
    /// let xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0_f64];
    /// let dy = [1.0, -1.0, 2.0, 0.0, 0.5, 0.0, 0.0, 1.0];
    /// // Positions 0–1 and 2–3 of both channels.
    /// let (a, b) = ([1.0, 2.0, 5.0, 6.0], [3.0, 4.0, 7.0, 8.0]);
    /// let (da, db) = ([1.0, -1.0, 0.5, 0.0], [2.0, 0.0, 0.0, 1.0]);
    /// let layout = Layout::ncl(1, 2, 2)?;
    /// let mut stats = gn.statistics(&a, layout)?;
    /// stats.merge(&gn.statistics(&b, layout)?);
    /// let (pa, pb) = (Backward::new(&a, &da, layout, &stats), Backward::new(&b, &db, layout, &stats));
    /// let (mut sums, mut grads) = gn.grad_sums(&pa)?;
    /// let (other, more) = gn.grad_sums(&pb)?;
    /// sums.merge(&other);
    /// grads.bias.iter_mut().zip(&more.bias).for_each(|(x, y)| *x += y);
    /// let mut dx = [0.0_f64; 4];
    /// gn.grad_input(&sums, &pa, &mut dx)?;
    /// // The same as the whole tensor on one process.
    /// let whole = Layout::ncl(1, 2, 4)?;
    /// let all = gn.statistics(&xs, whole)?;
    /// let mut full = [0.0_f64; 8];
    /// let single = gn.backward(&Backward::new(&xs, &dy, whole, &all), &mut full)?;
    /// assert!((dx[0] - full[0]).abs() < 1e-15 && (dx[3] - full[5]).abs() < 1e-15);
    /// assert_eq!(grads.bias, single.bias);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn grad_sums<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
    ) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
        group_grad_sums(pass, self.groups, self.eps, false)
    }

    /// [`grad_sums`](GroupNorm::grad_sums) on every rayon thread (feature
    /// `rayon`): the same sums, bit for bit, whatever the number of
    /// threads.
    ///
    /// # Errors
    ///
    /// As [`grad_sums`](GroupNorm::grad_sums).
    ///
    /// ```
    /// use momenta::norm::{Backward, GroupNorm, Layout};
    /// let layout = Layout::nhwc(4, 8, 8, 16)?;
    /// let xs: Vec<f32> = (0..layout.len()).map(|i| (i % 13) as f32).collect();
    /// let dy: Vec<f32> = (0..layout.len()).map(|i| (i % 7) as f32 - 3.0).collect();
    /// let gn = GroupNorm::<f32>::new(4)?;
    /// let stats = gn.statistics(&xs, layout)?;
    /// let pass = Backward::new(&xs, &dy, layout, &stats);
    /// assert_eq!(gn.par_grad_sums(&pass)?, gn.grad_sums(&pass)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_grad_sums<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
    ) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
        group_grad_sums(pass, self.groups, self.eps, true)
    }

    /// `dx` of `pass` from the group sums of [`grad_sums`](GroupNorm::grad_sums)
    /// (merged across the workers that split the samples), written to `dx`
    /// (any [`Element`] type) in `f64`, each value rounded once:
    /// `dx = (γ·dy − Σĝ/n − x̂·Σĝ·x̂/n)/σ` per group, `n` the statistics'
    /// count.
    ///
    /// # Errors
    ///
    /// As [`grad_sums`](GroupNorm::grad_sums), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `output` for a `dx` of the wrong length, `gradient sums
    /// groups` for sums of another number of groups, `statistics count`
    /// when the sums and the statistics count different numbers of
    /// values; [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState)
    /// for poisoned sums.
    ///
    /// ```
    /// use momenta::norm::{Backward, GroupNorm, Layout};
    /// let (xs, dy) = ([1.0, 3.0, 0.0, 8.0], [1.0, 1.0, 1.0, 1.0]);
    /// let layout = Layout::ncl(1, 2, 2)?;
    /// let gn = GroupNorm::<f64>::new(2)?;
    /// let stats = gn.statistics(&xs, layout)?;
    /// let pass = Backward::new(&xs, &dy, layout, &stats);
    /// let (sums, _) = gn.grad_sums(&pass)?;
    /// let mut dx = [9.0; 4];
    /// gn.grad_input(&sums, &pass, &mut dx)?;
    /// assert_eq!(dx, [0.0; 4]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn grad_input<S: Element, O: Element>(
        &self,
        sums: &GradSums<F>,
        pass: &Backward<'_, F, S>,
        dx: &mut [O],
    ) -> Result<(), Error> {
        group_grad_input(sums, pass, self.groups, self.eps, dx)
    }

    /// The whole backward pass on one process: `dx` written to `dx` (any
    /// [`Element`] type), and `dγ`, `dβ` per channel returned — PyTorch's
    /// `x.grad`, `weight.grad` and `bias.grad` of
    /// `F.group_norm(x, groups, weight, bias, eps)`. Two passes over `xs`
    /// and `dy`: [`grad_sums`](GroupNorm::grad_sums), then
    /// [`grad_input`](GroupNorm::grad_input).
    ///
    /// # Errors
    ///
    /// As [`grad_input`](GroupNorm::grad_input).
    ///
    /// ```
    /// use momenta::norm::{Backward, GroupNorm, Layout};
    /// let layout = Layout::nhwc(2, 1, 2, 4)?;
    /// let xs: Vec<f32> = (0..16).map(|i| (i * i % 7) as f32).collect();
    /// let dy: Vec<f32> = (0..16).map(|i| (i % 3) as f32 - 1.0).collect();
    /// let gn = GroupNorm::<f32>::new(2)?;
    /// let stats = gn.statistics(&xs, layout)?;
    /// let mut dx = vec![0.0_f32; 16];
    /// let grads = gn.backward(&Backward::new(&xs, &dy, layout, &stats), &mut dx)?;
    /// assert_eq!(grads.weight.len(), 4);
    /// // Each group's dx sums to 0.
    /// let group0: f32 = (0..2).flat_map(|p| [dx[4 * p], dx[4 * p + 1]]).sum();
    /// assert!(group0.abs() < 1e-5);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn backward<S: Element, O: Element>(
        &self,
        pass: &Backward<'_, F, S>,
        dx: &mut [O],
    ) -> Result<AffineGrads<F>, Error> {
        pass.check_output(dx.len())?;
        let (sums, grads) = self.grad_sums(pass)?;
        self.grad_input(&sums, pass, dx)?;
        Ok(grads)
    }
}
