//! What every layer's backward pass takes and gives — [`Backward`], the
//! arguments, and [`AffineGrads`], `dγ` and `dβ` — and the loop that
//! writes `dx` from per-channel coefficients.

use alloc::vec::Vec;

use super::{BatchStats, Layout};
use crate::moments::Moments;
use crate::{Element, Error, Float};

/// The arguments of a normalization layer's backward pass, in one value:
/// the forward pass's input `xs` and the gradient `dy` of the loss with
/// respect to its output (both of shape `layout`, of any
/// [`Element`] type: `f32`, `f64`, or `f16`/`bf16` with the `half`
/// feature), the statistics the forward pass normalized with, and `γ`
/// (absent: ones, PyTorch's `affine=False`).
///
/// Every layer — [`BatchNorm`](super::BatchNorm),
/// [`LayerNorm`](super::LayerNorm), [`GroupNorm`](super::GroupNorm),
/// [`InstanceNorm`](super::InstanceNorm) — takes it in `backward`,
/// `grad_sums` and `grad_input`, with eps from the layer itself, so no
/// argument is given twice. It replaces the seven positional arguments of
/// [`GradSums::grad_input`](super::GradSums::grad_input), which stays.
///
/// # Example
///
/// ```
/// use momenta::norm::{Backward, BatchNorm, Layout};
///
/// // One sample, 2 channels of 2 positions.
/// let (xs, dy) = ([1.0_f32, 3.0, 10.0, 30.0], [1.0_f32, -1.0, 0.5, 0.5]);
/// let layout = Layout::ncl(1, 2, 2)?;
/// let bn = BatchNorm::<f32>::new().with_eps(0.0)?;
/// let stats = bn.statistics(&xs, layout)?;
/// let pass = Backward::new(&xs, &dy, layout, &stats).with_gamma(&[2.0, 1.0]);
/// let mut dx = [0.0_f32; 4];
/// let grads = bn.backward(&pass, &mut dx)?;
/// assert_eq!(grads.bias, vec![0.0, 1.0]); // Σdy per channel
/// assert_eq!(grads.weight, vec![-2.0, 0.0]); // Σdy·x̂, x̂ = ∓1
/// assert_eq!(dx, [0.0, 0.0, 0.0, 0.0]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Backward<'a, F, S = F> {
    xs: &'a [S],
    dy: &'a [S],
    layout: Layout,
    stats: &'a BatchStats<F>,
    gamma: Option<&'a [F]>,
}

impl<'a, F: Float, S: Element> Backward<'a, F, S> {
    /// The arguments with no `γ` (ones). Nothing is checked here: each
    /// layer checks what it reads and returns an error naming it.
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchStats, Layout};
    /// let stats = BatchStats::<f64>::compute(&[1.0, 2.0], Layout::nc(2, 1)?)?;
    /// let pass = Backward::new(&[1.0, 2.0], &[0.5, 0.5], Layout::nc(2, 1)?, &stats);
    /// assert!(pass.gamma().is_none());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn new(xs: &'a [S], dy: &'a [S], layout: Layout, stats: &'a BatchStats<F>) -> Self {
        Self {
            xs,
            dy,
            layout,
            stats,
            gamma: None,
        }
    }

    /// The same with `γ`: one value per channel (per feature for
    /// [`LayerNorm`](super::LayerNorm)).
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchStats, Layout};
    /// let stats = BatchStats::<f64>::compute(&[1.0, 2.0], Layout::nc(2, 1)?)?;
    /// let pass = Backward::new(&[1.0, 2.0], &[0.5, 0.5], Layout::nc(2, 1)?, &stats).with_gamma(&[3.0]);
    /// assert_eq!(pass.gamma(), Some(&[3.0][..]));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_gamma(self, gamma: &'a [F]) -> Self {
        Self {
            gamma: Some(gamma),
            ..self
        }
    }

    /// The forward pass's input.
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchStats, Layout};
    /// let stats = BatchStats::<f64>::new(1);
    /// assert_eq!(Backward::new(&[2.0], &[1.0], Layout::nc(1, 1)?, &stats).xs(), &[2.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn xs(&self) -> &'a [S] {
        self.xs
    }

    /// The gradient of the loss with respect to the forward pass's output.
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchStats, Layout};
    /// let stats = BatchStats::<f64>::new(1);
    /// assert_eq!(Backward::new(&[2.0], &[1.0], Layout::nc(1, 1)?, &stats).dy(), &[1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn dy(&self) -> &'a [S] {
        self.dy
    }

    /// The shape of `xs` and `dy`.
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchStats, Layout};
    /// let stats = BatchStats::<f64>::new(1);
    /// let pass = Backward::new(&[2.0], &[1.0], Layout::nc(1, 1)?, &stats);
    /// assert_eq!(pass.layout(), Layout::nc(1, 1)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The statistics the forward pass normalized with.
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchStats, Layout};
    /// let stats = BatchStats::<f64>::new(1);
    /// let pass = Backward::new(&[2.0], &[1.0], Layout::nc(1, 1)?, &stats);
    /// assert_eq!(pass.stats().channels(), 1);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn stats(&self) -> &'a BatchStats<F> {
        self.stats
    }

    /// `γ`, if given.
    ///
    /// ```
    /// use momenta::norm::{Backward, BatchStats, Layout};
    /// let stats = BatchStats::<f64>::new(1);
    /// assert!(Backward::new(&[2.0], &[1.0], Layout::nc(1, 1)?, &stats).gamma().is_none());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn gamma(&self) -> Option<&'a [F]> {
        self.gamma
    }

    /// Checks the tensors: `xs` holds the layout, `dy` as many values, and
    /// the statistics are usable.
    pub(super) fn check_tensors(&self) -> Result<(), Error> {
        self.layout.check(self.xs.len())?;
        if self.dy.len() != self.xs.len() {
            return Err(Error::length("gradient", self.xs.len(), self.dy.len()));
        }
        self.stats.check_usable()
    }

    /// [`check_tensors`](Backward::check_tensors), and that `dx` holds as
    /// many values.
    pub(super) fn check_output(&self, dx: usize) -> Result<(), Error> {
        self.check_tensors()?;
        if dx != self.xs.len() {
            return Err(Error::length("output", self.xs.len(), dx));
        }
        Ok(())
    }
}

/// The gradients of a normalization layer's affine parameters: `weight`
/// is `dγ = Σdy·x̂` and `bias` is `dβ = Σdy`, one value per channel (per
/// feature for [`LayerNorm`](super::LayerNorm)), summed in `f64` and
/// rounded once — PyTorch's `weight.grad` and `bias.grad`.
///
/// Without `γ` (PyTorch's `affine=False`) they are still given, as the
/// gradients a `γ` of ones and a `β` of zeros would get.
///
/// Each worker's values are its own data's; workers that hold different
/// samples (data parallelism) add them, as PyTorch's `DistributedDataParallel`
/// all-reduces parameter gradients.
///
/// ```
/// use momenta::norm::{Backward, GroupNorm, Layout};
/// let (xs, dy) = ([1.0, 3.0, 5.0, 7.0], [1.0, 1.0, 2.0, -2.0]);
/// let layout = Layout::ncl(1, 2, 2)?;
/// let gn = GroupNorm::<f64>::new(1)?.with_eps(0.0)?;
/// let stats = gn.statistics(&xs, layout)?; // μ 4, σ² 5
/// let mut dx = [0.0; 4];
/// let grads = gn.backward(&Backward::new(&xs, &dy, layout, &stats), &mut dx)?;
/// assert_eq!(grads.bias, vec![2.0, 0.0]);
/// assert!((grads.weight[1] - (2.0 * 1.0 - 2.0 * 3.0) / 5.0_f64.sqrt()).abs() < 1e-15);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct AffineGrads<F> {
    /// `dγ`: per channel (per feature for a layer norm), `Σdy·x̂`.
    pub weight: Vec<F>,
    /// `dβ`: per channel (per feature for a layer norm), `Σdy`.
    pub bias: Vec<F>,
}

impl<F: Float> AffineGrads<F> {
    /// Rounds `f64` sums to `F`.
    pub(super) fn from_f64(weight: &[f64], bias: &[f64]) -> Self {
        Self {
            weight: weight.iter().map(|&w| F::from_f64(w)).collect(),
            bias: bias.iter().map(|&b| F::from_f64(b)).collect(),
        }
    }
}

/// `1/√(σ² + eps)` of a group's moments, in `f64` (NaN with no values).
pub(super) fn rstd(m: &Moments<f64>, eps: f64) -> f64 {
    let var = m.variance(0).unwrap_or(f64::NAN);
    1.0 / num_traits::Float::sqrt(var + eps)
}

/// The coefficients of one channel's `dx = a·dy + b·(x − μ) + c`, with
/// `x − μ` taken as `(x − shift) − offset` (the statistics' two parts of
/// the mean, which keeps the digits a rounded mean would lose).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DxCoefficients {
    pub(super) shift: f64,
    pub(super) offset: f64,
    pub(super) a: f64,
    pub(super) b: f64,
    pub(super) c: f64,
}

impl DxCoefficients {
    /// The coefficients for a group with moments `m`, `n` values,
    /// `1/σ = rstd`, the sums `Σĝ` and `Σĝ·(x − μ)` of the gradient with
    /// respect to the normalized value (`ĝ = γ·dy`), and the factor `γ`
    /// of the channel's own `dy`:
    /// `dx = rstd·(γ·dy − Σĝ/n − x̂·Σĝ·x̂/n)`.
    pub(super) fn new(
        m: &Moments<f64>,
        n: f64,
        rstd: f64,
        sum: f64,
        about_mean: f64,
        gamma: f64,
    ) -> Self {
        Self {
            shift: m.shift,
            offset: m.offset,
            a: gamma * rstd,
            b: -rstd * about_mean * rstd * rstd / n,
            c: -rstd * sum / n,
        }
    }
}

/// Writes `dx = a·dy + b·((x − shift) − offset) + c` for a tensor
/// `[outer, channels, inner]` (the caller checked the lengths), with one
/// set of coefficients per channel, in `f64`, rounded once to `O`.
pub(super) fn write_dx<S: Element, O: Element>(
    xs: &[S],
    dy: &[S],
    channels: usize,
    inner: usize,
    coefficients: &[DxCoefficients],
    dx: &mut [O],
) {
    let slab = channels * inner;
    if slab == 0 {
        return;
    }
    if inner == 1 {
        // Channels last: each row zips with the coefficients, kept as one
        // array per coefficient so that the loop runs across channels.
        let column =
            |f: fn(&DxCoefficients) -> f64| -> Vec<f64> { coefficients.iter().map(f).collect() };
        let (shift, offset) = (column(|k| k.shift), column(|k| k.offset));
        let (scale, slope, constant) = (column(|k| k.a), column(|k| k.b), column(|k| k.c));
        let rows = xs.chunks_exact(slab).zip(dy.chunks_exact(slab));
        for ((x, g), out) in rows.zip(dx.chunks_exact_mut(slab)) {
            let len = x.len().min(g.len()).min(out.len()).min(shift.len());
            let (x, g, out) = (&x[..len], &g[..len], &mut out[..len]);
            let (shift, offset) = (&shift[..len], &offset[..len]);
            let (scale, slope, constant) = (&scale[..len], &slope[..len], &constant[..len]);
            for j in 0..len {
                let centred = (x[j].widen() - shift[j]) - offset[j];
                out[j] = O::narrow(scale[j] * g[j].widen() + slope[j] * centred + constant[j]);
            }
        }
        return;
    }
    let slabs = xs.chunks_exact(slab).zip(dy.chunks_exact(slab));
    for ((x, g), out) in slabs.zip(dx.chunks_exact_mut(slab)) {
        let runs = x.chunks_exact(inner).zip(g.chunks_exact(inner));
        for (((x, g), out), k) in runs.zip(out.chunks_exact_mut(inner)).zip(coefficients) {
            for ((&x, &g), out) in x.iter().zip(g).zip(out) {
                let centred = (x.widen() - k.shift) - k.offset;
                *out = O::narrow(k.a * g.widen() + k.b * centred + k.c);
            }
        }
    }
}

/// The checks of a layer's `γ`: `channels` values.
pub(super) fn check_gamma<F>(gamma: Option<&[F]>, channels: usize) -> Result<(), Error> {
    super::checks::optional_channel_len("gamma", gamma, channels)
}
