//! `InstanceNorm`: statistics per sample and channel, and the running
//! statistics PyTorch keeps for it.

use alloc::vec::Vec;

use super::backward::{AffineGrads, Backward};
use super::normalize::WideNormalizer;
use super::{BatchStats, BnConfig, GradSums, GroupNorm, Layout, RunningStats, checks};
use crate::error::ErrorKind;
use crate::{Element, Error, Float};

/// Instance normalization (Ulyanov et al., 2016): every channel of every
/// sample is normalized with its own mean and biased variance over its
/// positions — PyTorch's `torch.nn.InstanceNorm1d/2d/3d` and
/// `torch.nn.functional.instance_norm`, for channels-first and
/// channels-last tensors. It is [`GroupNorm`] with one
/// channel per group, on the same engine.
///
/// With `track_running_stats`, PyTorch also keeps a running mean and
/// variance per channel: [`update_running`](InstanceNorm::update_running)
/// applies its update, and evaluation normalizes with them like
/// BatchNorm.
///
/// # One eps
///
/// PyTorch's layer has one eps, for training and evaluation alike. Here it
/// is the layer's: [`normalize_running`](InstanceNorm::normalize_running)
/// evaluates with the running statistics and the layer's eps, and
/// [`from_config`](InstanceNorm::from_config) builds the layer with the
/// eps of the configuration its running statistics use. (Evaluating
/// through [`RunningStats::normalize`] instead takes the configuration's
/// eps, which a layer built with [`with_eps`](InstanceNorm::with_eps) may
/// not share.)
///
/// # Backward
///
/// [`backward`](InstanceNorm::backward) (with [`grad_sums`](InstanceNorm::grad_sums)
/// and [`grad_input`](InstanceNorm::grad_input) for statistics merged
/// across workers) gives PyTorch's autograd `dx`, `dγ`, `dβ`: the
/// [`GroupNorm`] backward with one channel per group.
///
/// # Example
///
/// ```
/// use momenta::norm::{BnConfig, InstanceNorm, Layout, RunningStats};
///
/// // Two samples of 2 channels × 2 positions, channels first.
/// let xs = [1.0, 3.0, 0.0, 4.0, 5.0, 9.0, 2.0, 2.0];
/// let layout = Layout::ncl(2, 2, 2)?;
/// let norm = InstanceNorm::<f64>::new().with_eps(0.0)?;
/// let stats = norm.statistics(&xs, layout)?;
/// assert_eq!(stats.mean(), &[2.0, 2.0, 7.0, 2.0]);
///
/// let mut running = RunningStats::new(2, BnConfig::pytorch());
/// norm.update_running(&mut running, &stats)?;
/// // 0.9 · 0 + 0.1 · (mean over the samples of 2, 7 and of 2, 2).
/// assert!((running.mean()[0] - 0.45).abs() < 1e-15);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstanceNorm<F> {
    eps: F,
}

impl<F: Float> Default for InstanceNorm<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Float> InstanceNorm<F> {
    /// Instance normalization with PyTorch's eps, `1e-5`.
    ///
    /// ```
    /// assert_eq!(momenta::norm::InstanceNorm::<f32>::new().eps(), 1e-5);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            eps: F::from_f64(1e-5),
        }
    }

    /// The same with another eps.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`] naming `eps` unless it is finite
    /// and non-negative.
    ///
    /// ```
    /// use momenta::norm::InstanceNorm;
    /// assert!(InstanceNorm::<f64>::new().with_eps(f64::NAN).is_err());
    /// ```
    pub fn with_eps(self, eps: F) -> Result<Self, Error> {
        checks::eps(eps)?;
        Ok(Self { eps })
    }

    /// The layer with the eps of `config`, the configuration of its
    /// running statistics: one eps for training and evaluation, as
    /// PyTorch's `InstanceNorm2d(C, eps, momentum, track_running_stats=True)`.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, InstanceNorm, RunningStats};
    /// let config = BnConfig::<f32>::pytorch().with_eps(1e-3)?;
    /// let norm = InstanceNorm::from_config(&config);
    /// let running = RunningStats::new(8, config);
    /// assert_eq!(norm.eps(), running.config().eps());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn from_config(config: &BnConfig<F>) -> Self {
        Self { eps: config.eps() }
    }

    /// The eps added to the variance.
    ///
    /// ```
    /// use momenta::norm::InstanceNorm;
    /// assert_eq!(InstanceNorm::<f64>::new().with_eps(1e-3)?.eps(), 1e-3);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn eps(&self) -> F {
        self.eps
    }

    /// The mean and variance of every channel of every sample of `xs`
    /// (shape `layout`), sample-major: `N · C` of them.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`] naming `data` when `xs` does not hold
    /// `layout`.
    ///
    /// ```
    /// use momenta::norm::{InstanceNorm, Layout};
    /// // One sample, channels last: 3 positions × 2 channels.
    /// let xs = [1.0_f32, 10.0, 2.0, 20.0, 3.0, 30.0];
    /// let s = InstanceNorm::<f64>::new().statistics(&xs, Layout::nhwc(1, 3, 1, 2)?)?;
    /// assert_eq!(s.mean(), &[2.0, 20.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn statistics<S: Element>(&self, xs: &[S], layout: Layout) -> Result<BatchStats<F>, Error> {
        self.per_channel(layout)?.statistics(xs, layout)
    }

    /// [`statistics`](InstanceNorm::statistics) on every rayon thread
    /// (feature `rayon`): the same statistics, bit for bit, whatever the
    /// number of threads.
    ///
    /// # Errors
    ///
    /// As [`statistics`](InstanceNorm::statistics).
    ///
    /// ```
    /// use momenta::norm::{InstanceNorm, Layout};
    /// let xs: Vec<f32> = (0..8 * 3 * 16 * 16).map(|i| (i % 11) as f32).collect();
    /// let layout = Layout::nchw(8, 3, 16, 16)?;
    /// let norm = InstanceNorm::<f64>::new();
    /// assert_eq!(norm.par_statistics(&xs, layout)?, norm.statistics(&xs, layout)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_statistics<S: Element>(
        &self,
        xs: &[S],
        layout: Layout,
    ) -> Result<BatchStats<F>, Error> {
        self.per_channel(layout)?.par_statistics(xs, layout)
    }

    /// The same layer as a [`GroupNorm`] of one channel per group.
    fn per_channel(&self, layout: Layout) -> Result<GroupNorm<F>, Error> {
        GroupNorm::new(layout.channels().max(1))?.with_eps(self.eps)
    }

    /// Normalizes `xs` (shape `layout`) into `out` with each instance's
    /// statistics, `γ` and `β` per channel (absent: 1 and 0, PyTorch's
    /// `affine=False`), and returns the statistics it used.
    ///
    /// # Errors
    ///
    /// As [`statistics`](InstanceNorm::statistics), and
    /// [`ErrorKind::LengthMismatch`] naming `output`, `gamma` or `beta`
    /// for a slice of the wrong length.
    ///
    /// ```
    /// use momenta::norm::{InstanceNorm, Layout};
    /// let xs = [1.0, 3.0, 10.0, 30.0];
    /// let mut y = [0.0; 4];
    /// let norm = InstanceNorm::new().with_eps(0.0)?;
    /// norm.normalize(&xs, Layout::ncl(1, 2, 2)?, None, Some(&[0.0, 5.0]), &mut y)?;
    /// assert_eq!(y, [-1.0, 1.0, 4.0, 6.0]);
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
        self.per_channel(layout)?
            .normalize(xs, layout, gamma, beta, out)
    }

    /// PyTorch's running update for instance normalization
    /// (`track_running_stats=True`): per channel, the running mean takes
    /// the mean over the samples of the instance means, and the running
    /// variance the mean over the samples of the instance variances with
    /// the configuration's correction (unbiased for
    /// [`BnConfig::pytorch`](super::BnConfig::pytorch)), both blended with
    /// the configuration's momentum. The number of samples is
    /// `stats.channels() / running.channels()`.
    ///
    /// (PyTorch's `InstanceNorm` with `momentum=None` passes momentum 0 and
    /// never updates; a [`Cumulative`](crate::Momentum::Cumulative) config
    /// here averages the batches instead, as BatchNorm does.)
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`] naming `instance statistics` when
    ///   `stats` does not hold a whole number of samples of the running
    ///   statistics' channels;
    /// - [`ErrorKind::TooFewValues`] when an instance has fewer values than
    ///   the correction needs (PyTorch: "expected more than 1 spatial
    ///   element when training");
    /// - [`ErrorKind::InvalidState`] when the statistics are poisoned by a
    ///   mismatched merge.
    ///
    /// On error nothing changes.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, InstanceNorm, Layout, RunningStats};
    /// let xs = [1.0_f32, 3.0, 0.0, 4.0];
    /// let norm = InstanceNorm::<f32>::new();
    /// let stats = norm.statistics(&xs, Layout::ncl(1, 2, 2)?)?;
    /// let mut running = RunningStats::new(2, BnConfig::pytorch());
    /// norm.update_running(&mut running, &stats)?;
    /// // Unbiased instance variances 2 and 8: 0.9 · 1 + 0.1 · v.
    /// assert_eq!(running.var(), &[1.1, 1.7]);
    /// assert!(norm.update_running(&mut RunningStats::new(3, BnConfig::pytorch()), &stats).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn update_running(
        &self,
        running: &mut RunningStats<F>,
        stats: &BatchStats<F>,
    ) -> Result<(), Error> {
        stats.check_usable()?;
        let channels = running.channels();
        let instances = stats.channels();
        if channels == 0 || !instances.is_multiple_of(channels) {
            return Err(Error::length("instance statistics", channels, instances));
        }
        let samples = instances / channels;
        let correction = running.config().correction();
        let needed = correction.min_count();
        if samples == 0 || stats.count() < needed {
            return Err(Error::from(ErrorKind::TooFewValues {
                needed,
                actual: stats.count(),
            }));
        }
        let divisor = correction.divisor(stats.count());
        #[allow(
            clippy::cast_precision_loss,
            reason = "a sample count, exact in f64 below 2⁵³"
        )]
        let n = samples as f64;
        let mut mean = alloc::vec![0.0; channels];
        let mut var = alloc::vec![0.0; channels];
        for instance in stats.moments().chunks_exact(channels) {
            for ((m, v), moments) in mean.iter_mut().zip(var.iter_mut()).zip(instance) {
                *m += moments.mean().unwrap_or(f64::NAN);
                *v += moments.m2() / divisor;
            }
        }
        let mean: Vec<f64> = mean.iter().map(|m| m / n).collect();
        let var: Vec<f64> = var.iter().map(|v| v / n).collect();
        running.blend_in(&mean, &var)
    }

    /// Evaluation mode with `track_running_stats`: normalizes `xs` (shape
    /// `layout`, any [`Element`] type) into `out` (any `Element` type) with
    /// the running mean and variance of `running` and this layer's eps —
    /// PyTorch's `InstanceNorm` in `eval()`, whose one eps serves both
    /// modes. In `f64`, each value rounded once.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`] naming `data` or `output` for a slice
    /// that does not hold `layout`, `layout channels` when `running` has
    /// another channel count, `gamma` or `beta` for a vector of the wrong
    /// length.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, InstanceNorm, Layout, RunningStats};
    /// // Running statistics kept with eps 1e-5; the layer's eps is 0.
    /// let running = RunningStats::with_state(&[1.0], &[4.0], BnConfig::pytorch())?;
    /// let norm = InstanceNorm::<f64>::new().with_eps(0.0)?;
    /// let mut y = [0.0; 2];
    /// norm.normalize_running(&running, &[1.0, 5.0], Layout::ncl(1, 1, 2)?, None, None, &mut y)?;
    /// assert_eq!(y, [0.0, 2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize_running<S: Element, O: Element>(
        &self,
        running: &RunningStats<F>,
        xs: &[S],
        layout: Layout,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
        out: &mut [O],
    ) -> Result<(), Error> {
        layout.check(xs.len())?;
        if layout.channels() != running.channels() {
            return Err(Error::length(
                "layout channels",
                running.channels(),
                layout.channels(),
            ));
        }
        if out.len() != xs.len() {
            return Err(Error::length("output", xs.len(), out.len()));
        }
        WideNormalizer::from_mean_var(running.mean(), running.var(), self.eps, gamma, beta)?.apply(
            xs,
            layout.channels(),
            layout.inner(),
            out,
        );
        Ok(())
    }

    /// Normalizes `xs` (shape `layout`, any [`Element`] type: `f16`/`bf16`
    /// with the `half` feature) into `out` (any `Element` type) with each
    /// instance's statistics, and returns them. Each value is computed in
    /// `f64` and rounded once to the output type.
    ///
    /// # Errors
    ///
    /// As [`normalize`](InstanceNorm::normalize).
    ///
    /// ```
    /// use momenta::norm::{InstanceNorm, Layout};
    /// let xs = [1.0_f32, 3.0, 10.0, 30.0];
    /// let mut y = [0.0_f64; 4];
    /// InstanceNorm::<f32>::new().with_eps(0.0)?.normalize_into(&xs, Layout::ncl(1, 2, 2)?, None, None, &mut y)?;
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
        self.per_channel(layout)?
            .normalize_into(xs, layout, gamma, beta, out)
    }

    /// The backward sums of `pass`, in one pass over `xs` and `dy`: per
    /// channel of every sample, `Σĝ` and `Σĝ·(x − shift)` with `ĝ = γ·dy`
    /// (see [`GroupNorm::grad_sums`]), and this tensor's `dγ`, `dβ`.
    ///
    /// # Errors
    ///
    /// As [`GroupNorm::grad_sums`].
    ///
    /// ```
    /// use momenta::norm::{Backward, InstanceNorm, Layout};
    /// let (xs, dy) = ([1.0, 3.0, 10.0, 30.0], [1.0, 0.0, 0.0, 1.0]);
    /// let layout = Layout::ncl(1, 2, 2)?;
    /// let norm = InstanceNorm::<f64>::new().with_eps(0.0)?;
    /// let stats = norm.statistics(&xs, layout)?;
    /// let (sums, grads) = norm.grad_sums(&Backward::new(&xs, &dy, layout, &stats))?;
    /// assert_eq!((sums.channels(), grads.weight), (2, vec![-1.0, 1.0]));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn grad_sums<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
    ) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
        self.per_channel(pass.layout())?.grad_sums(pass)
    }

    /// [`grad_sums`](InstanceNorm::grad_sums) on every rayon thread
    /// (feature `rayon`): the same sums, bit for bit.
    ///
    /// # Errors
    ///
    /// As [`GroupNorm::grad_sums`].
    ///
    /// ```
    /// use momenta::norm::{Backward, InstanceNorm, Layout};
    /// let layout = Layout::nchw(4, 3, 16, 16)?;
    /// let xs: Vec<f32> = (0..layout.len()).map(|i| (i % 11) as f32).collect();
    /// let norm = InstanceNorm::<f32>::new();
    /// let stats = norm.statistics(&xs, layout)?;
    /// let pass = Backward::new(&xs, &xs, layout, &stats);
    /// assert_eq!(norm.par_grad_sums(&pass)?, norm.grad_sums(&pass)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_grad_sums<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
    ) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
        self.per_channel(pass.layout())?.par_grad_sums(pass)
    }

    /// `dx` of `pass` from the sums of [`grad_sums`](InstanceNorm::grad_sums)
    /// (merged across the workers that split the samples), written to `dx`
    /// (any [`Element`] type), each value rounded once.
    ///
    /// # Errors
    ///
    /// As [`GroupNorm::grad_input`].
    ///
    /// ```
    /// use momenta::norm::{Backward, InstanceNorm, Layout};
    /// let (xs, dy) = ([1.0, 3.0], [2.0, 2.0]);
    /// let layout = Layout::ncl(1, 1, 2)?;
    /// let norm = InstanceNorm::<f64>::new();
    /// let stats = norm.statistics(&xs, layout)?;
    /// let pass = Backward::new(&xs, &dy, layout, &stats);
    /// let mut dx = [1.0; 2];
    /// norm.grad_input(&norm.grad_sums(&pass)?.0, &pass, &mut dx)?;
    /// assert_eq!(dx, [0.0, 0.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn grad_input<S: Element, O: Element>(
        &self,
        sums: &GradSums<F>,
        pass: &Backward<'_, F, S>,
        dx: &mut [O],
    ) -> Result<(), Error> {
        self.per_channel(pass.layout())?.grad_input(sums, pass, dx)
    }

    /// The whole backward pass on one process: `dx` written to `dx`, and
    /// `dγ`, `dβ` per channel returned — PyTorch's `x.grad`, `weight.grad`
    /// and `bias.grad` of `F.instance_norm(x, weight=…, bias=…, eps=…)`.
    ///
    /// # Errors
    ///
    /// As [`GroupNorm::grad_input`].
    ///
    /// ```
    /// use momenta::norm::{Backward, InstanceNorm, Layout};
    /// let (xs, dy) = ([1.0_f32, 3.0, 10.0, 30.0], [1.0_f32, 0.0, 0.5, 0.5]);
    /// let layout = Layout::ncl(1, 2, 2)?;
    /// let norm = InstanceNorm::<f32>::new();
    /// let stats = norm.statistics(&xs, layout)?;
    /// let mut dx = [0.0_f32; 4];
    /// let grads = norm.backward(&Backward::new(&xs, &dy, layout, &stats), &mut dx)?;
    /// assert_eq!(grads.bias, vec![1.0, 1.0]);
    /// assert_eq!(&dx[2..], &[0.0, 0.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn backward<S: Element, O: Element>(
        &self,
        pass: &Backward<'_, F, S>,
        dx: &mut [O],
    ) -> Result<AffineGrads<F>, Error> {
        self.per_channel(pass.layout())?.backward(pass, dx)
    }
}
