//! `BatchNorm`: the training-mode layer, with one eps for its forward and
//! backward passes.

use super::backward::{AffineGrads, Backward};
use super::{BatchStats, BnConfig, GradSums, Layout, checks};
use crate::{Element, Error, Float};

/// Batch normalization in training mode (Ioffe and Szegedy, 2015): every
/// channel is normalized with the batch's mean and biased variance over
/// all samples and positions — PyTorch's `torch.nn.functional.batch_norm(…,
/// training=True, eps)` — with its backward pass, as a layer holding its
/// eps, like [`LayerNorm`](super::LayerNorm), [`GroupNorm`](super::GroupNorm)
/// and [`InstanceNorm`](super::InstanceNorm).
///
/// It is a thin layer over [`BatchStats`] and [`GradSums`], which stay the
/// place for synchronized BatchNorm's statistics and sums; what the layer
/// adds is one eps for every step (built [`from_config`](BatchNorm::from_config),
/// the same as its [`RunningStats`](super::RunningStats)' in evaluation),
/// the backward pass as [`Backward`] arguments instead of seven positional
/// ones, and any [`Element`] type in and out.
///
/// # Synchronized BatchNorm
///
/// Each worker: statistics of its shard, all-reduced ([`BatchStats`]
/// merge); [`grad_sums`](BatchNorm::grad_sums) of its shard about the
/// merged statistics, all-reduced ([`GradSums`] merge); its own `dx` by
/// [`grad_input`](BatchNorm::grad_input) with the merged sums. The `dγ`,
/// `dβ` that `grad_sums` returns are the worker's own, which the workers
/// add, as PyTorch's `SyncBatchNorm` leaves them to the data-parallel
/// all-reduce.
///
/// # Example
///
/// ```
/// use momenta::norm::{Backward, BatchNorm, BnConfig, Layout, RunningStats};
///
/// let config = BnConfig::<f32>::pytorch();
/// let bn = BatchNorm::from_config(&config);
/// let layout = Layout::nchw(2, 3, 2, 2)?;
/// let xs: Vec<f32> = (0..24).map(|i| (i % 5) as f32).collect();
///
/// // Forward: statistics and output; the running update.
/// let mut y = vec![0.0_f32; 24];
/// let stats = bn.normalize(&xs, layout, None, None, &mut y)?;
/// let mut running = RunningStats::new(3, config);
/// running.update(&stats)?;
///
/// // Backward, with the same eps.
/// let dy: Vec<f32> = (0..24).map(|i| (i % 3) as f32 - 1.0).collect();
/// let mut dx = vec![0.0_f32; 24];
/// let grads = bn.backward(&Backward::new(&xs, &dy, layout, &stats), &mut dx)?;
/// assert_eq!(grads.bias.len(), 3);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchNorm<F> {
    eps: F,
}

impl<F: Float> Default for BatchNorm<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F: Float> BatchNorm<F> {
    /// Batch normalization with PyTorch's eps, `1e-5`.
    ///
    /// ```
    /// assert_eq!(momenta::norm::BatchNorm::<f32>::new().eps(), 1e-5);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self {
            eps: F::from_f64(1e-5),
        }
    }

    /// The layer with the eps of `config`, the configuration of its running
    /// statistics: one eps for training and evaluation.
    ///
    /// ```
    /// use momenta::norm::{BatchNorm, BnConfig};
    /// assert_eq!(BatchNorm::from_config(&BnConfig::<f32>::keras()).eps(), 1e-3);
    /// ```
    #[must_use]
    pub fn from_config(config: &BnConfig<F>) -> Self {
        Self { eps: config.eps() }
    }

    /// The same with another eps.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `eps` unless it is finite and non-negative.
    ///
    /// ```
    /// use momenta::norm::BatchNorm;
    /// assert!(BatchNorm::<f64>::new().with_eps(-1.0).is_err());
    /// assert_eq!(BatchNorm::<f64>::new().with_eps(1e-3)?.eps(), 1e-3);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_eps(self, eps: F) -> Result<Self, Error> {
        checks::eps(eps)?;
        Ok(Self { eps })
    }

    /// The eps added to the variance.
    ///
    /// ```
    /// assert_eq!(momenta::norm::BatchNorm::<f64>::new().eps(), 1e-5);
    /// ```
    #[must_use]
    pub fn eps(&self) -> F {
        self.eps
    }

    /// The batch statistics of `xs` (shape `layout`): [`BatchStats::compute`].
    ///
    /// # Errors
    ///
    /// As [`BatchStats::compute`].
    ///
    /// ```
    /// use momenta::norm::{BatchNorm, Layout};
    /// let s = BatchNorm::<f64>::new().statistics(&[1.0_f32, 3.0], Layout::nc(2, 1)?)?;
    /// assert_eq!(s.mean(), &[2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn statistics<S: Element>(&self, xs: &[S], layout: Layout) -> Result<BatchStats<F>, Error> {
        BatchStats::compute(xs, layout)
    }

    /// Normalizes `xs` (shape `layout`) into `out` with the batch's own
    /// statistics, `γ` and `β` per channel (absent: 1 and 0), and returns
    /// the statistics ([`BatchStats::normalize`] with this layer's eps).
    ///
    /// # Errors
    ///
    /// As [`BatchStats::compute`] and [`BatchStats::normalize`].
    ///
    /// ```
    /// use momenta::norm::{BatchNorm, Layout};
    /// let mut y = [0.0; 2];
    /// BatchNorm::<f64>::new().with_eps(0.0)?.normalize(&[1.0, 3.0], Layout::nc(2, 1)?, None, None, &mut y)?;
    /// assert_eq!(y, [-1.0, 1.0]);
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
        let stats = BatchStats::compute(xs, layout)?;
        stats.normalize(xs, layout, self.eps, gamma, beta, out)?;
        Ok(stats)
    }

    /// [`normalize`](BatchNorm::normalize) for any [`Element`] type in and
    /// out (`f16`/`bf16` with the `half` feature), computed in `f64` and
    /// rounded once ([`BatchStats::normalize_into`]).
    ///
    /// # Errors
    ///
    /// As [`normalize`](BatchNorm::normalize).
    ///
    /// ```
    /// use momenta::norm::{BatchNorm, Layout};
    /// let mut y = [0.0_f64; 2];
    /// BatchNorm::<f32>::new().with_eps(0.0)?.normalize_into(&[1.0_f32, 3.0], Layout::nc(2, 1)?, None, None, &mut y)?;
    /// assert_eq!(y, [-1.0, 1.0]);
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
        let stats = BatchStats::compute(xs, layout)?;
        stats.normalize_into(xs, layout, self.eps, gamma, beta, out)?;
        Ok(stats)
    }

    /// The backward sums of `pass` ([`GradSums::compute`]: per channel
    /// `Σdy` and `Σdy·(x − shift)`, what synchronized workers merge before
    /// [`grad_input`](BatchNorm::grad_input)), and this tensor's `dγ`,
    /// `dβ` per channel, computed with the statistics of `pass` (the
    /// merged ones in synchronized BatchNorm), which the workers add.
    ///
    /// # Errors
    ///
    /// As [`GradSums::compute`] and [`GradSums::grad_weight`], and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `gamma` for a γ of the wrong length.
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchNorm, Layout};
    /// let (xs, dy) = ([1.0, 3.0], [2.0, 5.0]);
    /// let bn = BatchNorm::<f64>::new().with_eps(0.0)?;
    /// let stats = bn.statistics(&xs, Layout::nc(2, 1)?)?;
    /// let (sums, grads) = bn.grad_sums(&Backward::new(&xs, &dy, Layout::nc(2, 1)?, &stats))?;
    /// assert_eq!((sums.count(), grads.weight, grads.bias), (2, vec![3.0], vec![7.0]));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn grad_sums<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
    ) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
        let sums = GradSums::compute(pass.xs(), pass.dy(), pass.layout(), pass.stats())?;
        let grads = self.affine(&sums, pass)?;
        Ok((sums, grads))
    }

    /// [`grad_sums`](BatchNorm::grad_sums) on every rayon thread (feature
    /// `rayon`): the same sums, bit for bit, whatever the number of
    /// threads.
    ///
    /// # Errors
    ///
    /// As [`grad_sums`](BatchNorm::grad_sums).
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchNorm, Layout};
    /// let layout = Layout::nhwc(8, 16, 16, 4)?;
    /// let xs: Vec<f32> = (0..layout.len()).map(|i| (i % 11) as f32).collect();
    /// let bn = BatchNorm::<f32>::new();
    /// let stats = bn.statistics(&xs, layout)?;
    /// let pass = Backward::new(&xs, &xs, layout, &stats);
    /// assert_eq!(bn.par_grad_sums(&pass)?, bn.grad_sums(&pass)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_grad_sums<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
    ) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
        let sums = GradSums::par_compute(pass.xs(), pass.dy(), pass.layout(), pass.stats())?;
        let grads = self.affine(&sums, pass)?;
        Ok((sums, grads))
    }

    /// `dγ`, `dβ` of a tensor's own sums.
    fn affine<S: Element>(
        &self,
        sums: &GradSums<F>,
        pass: &Backward<'_, F, S>,
    ) -> Result<AffineGrads<F>, Error> {
        checks::optional_channel_len("gamma", pass.gamma(), sums.channels())?;
        Ok(AffineGrads {
            weight: sums.grad_weight(pass.stats(), self.eps)?,
            bias: sums.grad_bias(),
        })
    }

    /// `dx` of `pass` from the sums of [`grad_sums`](BatchNorm::grad_sums)
    /// (the merged ones in synchronized BatchNorm), written to `dx` (any
    /// [`Element`] type): [`GradSums::grad_input`] with this layer's eps,
    /// in `f64`, each value rounded once.
    ///
    /// # Errors
    ///
    /// As [`GradSums::grad_input`].
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchNorm, Layout};
    /// let (xs, dy) = ([1.0_f32, 3.0], [1.0_f32, 1.0]);
    /// let bn = BatchNorm::<f32>::new();
    /// let stats = bn.statistics(&xs, Layout::nc(2, 1)?)?;
    /// let pass = Backward::new(&xs, &dy, Layout::nc(2, 1)?, &stats).with_gamma(&[2.0]);
    /// let (sums, _) = bn.grad_sums(&pass)?;
    /// let mut dx = [9.0_f64; 2];
    /// bn.grad_input(&sums, &pass, &mut dx)?;
    /// assert_eq!(dx, [0.0, 0.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn grad_input<S: Element, O: Element>(
        &self,
        sums: &GradSums<F>,
        pass: &Backward<'_, F, S>,
        dx: &mut [O],
    ) -> Result<(), Error> {
        pass.stats().check_usable()?;
        sums.grad_input_into(
            pass.xs(),
            pass.dy(),
            pass.layout(),
            pass.stats(),
            self.eps,
            pass.gamma(),
            dx,
        )
    }

    /// The whole backward pass on one process: `dx` written to `dx` (any
    /// [`Element`] type), and `dγ`, `dβ` returned — PyTorch's `x.grad`,
    /// `weight.grad` and `bias.grad` of `F.batch_norm(x, None, None,
    /// weight, bias, training=True, eps=eps)`.
    ///
    /// # Errors
    ///
    /// As [`grad_sums`](BatchNorm::grad_sums) and
    /// [`grad_input`](BatchNorm::grad_input).
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchNorm, Layout};
    /// let (xs, dy) = ([1.0, 2.0, 3.0, 6.0], [1.0, 0.0, -1.0, 2.0]);
    /// let bn = BatchNorm::<f64>::new().with_eps(0.0)?;
    /// let stats = bn.statistics(&xs, Layout::nc(4, 1)?)?; // μ 3, σ² 3.5
    /// let mut dx = [0.0; 4];
    /// let grads = bn.backward(&Backward::new(&xs, &dy, Layout::nc(4, 1)?, &stats), &mut dx)?;
    /// assert_eq!(grads.bias, vec![2.0]);
    /// assert!((grads.weight[0] - 4.0 / 3.5_f64.sqrt()).abs() < 1e-15);
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
