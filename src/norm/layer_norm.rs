//! `LayerNorm`: statistics per row of trailing features.

use alloc::vec;
use alloc::vec::Vec;

use super::backward::{AffineGrads, Backward, DxCoefficients, check_gamma, rstd};
use super::batch_stats::RowStats;
use super::normalize::FUSED_VALUES;
use super::normalize::{Centre, widen};
use super::{BatchStats, GradSums, Layout, checks};
use crate::kernels::Schedule;
use crate::kernels::affine::{Affine, Pass, PerValue, affine_runs, streams};
use crate::moments::Moments;
use crate::{Element, Error, Float};

/// Rows of a leaf of the backward sums' tree: at least this many values,
/// and [`MIN_LEAF_ROWS`] rows, so that adding the leaves' per-feature sums
/// (two `f64` per feature) costs little beside the leaf's own work.
const LEAF_VALUES: usize = 16_384;

/// See [`LEAF_VALUES`].
const MIN_LEAF_ROWS: usize = 32;

/// Features per block of the backward sums: the block's per-feature sums,
/// 16 KiB, stay in the L1 cache while each of a leaf's rows adds to them.
/// A multiple of 4, so that every block starts on lane 0.
const COLUMN_BLOCK: usize = 1024;

/// How one sample's features lie in memory against the order of γ and β,
/// PyTorch's `(C, H, W)`: channels last (`[P, C, inner]` with `P > 1` and
/// `C > 1`) needs a permutation, every other layout none.
#[derive(Clone, Copy, Debug)]
struct Order {
    positions: usize,
    channels: usize,
    inner: usize,
}

impl Order {
    /// The memory index of each feature in `(C, P, inner)` order:
    /// `(c·P + p)·inner + i` lies at `(p·C + c)·inner + i`.
    fn memory_index(&self, logical: usize) -> usize {
        let (cp, i) = (logical / self.inner, logical % self.inner);
        let (c, p) = (cp / self.positions, cp % self.positions);
        (p * self.channels + c) * self.inner + i
    }

    /// A vector in `(C, P, inner)` order, in memory order, in `f64`.
    fn to_memory<F: Float>(order: Option<Self>, logical: &[F]) -> Vec<f64> {
        let mut out = vec![0.0; logical.len()];
        for (j, v) in logical.iter().enumerate() {
            let k = order.map_or(j, |o| o.memory_index(j));
            if let Some(slot) = out.get_mut(k) {
                *slot = v.as_f64();
            }
        }
        out
    }

    /// A vector in memory order, in `(C, P, inner)` order.
    fn from_memory(order: Option<Self>, memory: &[f64]) -> Vec<f64> {
        (0..memory.len())
            .map(|j| {
                let k = order.map_or(j, |o| o.memory_index(j));
                memory.get(k).copied().unwrap_or(f64::NAN)
            })
            .collect()
    }
}

/// The backward sums of the rows `lo..hi`: per row `Σĝ` and
/// `Σĝ·(x − shift)` (`ĝ = γ·dy`), and per feature `Σdy·x̂` and `Σdy`.
struct RowSums {
    sum: Vec<f64>,
    sum_about_shift: Vec<f64>,
    weight: Vec<f64>,
    bias: Vec<f64>,
}

impl RowSums {
    #[allow(
        clippy::needless_pass_by_value,
        reason = "the tree's merge takes `(&mut T, T)`"
    )]
    fn merge(&mut self, other: Self) {
        self.sum.extend(other.sum);
        self.sum_about_shift.extend(other.sum_about_shift);
        for (a, b) in self.weight.iter_mut().zip(&other.weight) {
            *a += b;
        }
        for (a, b) in self.bias.iter_mut().zip(&other.bias) {
            *a += b;
        }
    }
}

/// A row's four partial sums of `ĝ` and of `ĝ·(x − shift)`: value `j`
/// goes to lane `j mod 4`.
type Lanes = ([f64; 4], [f64; 4]);

/// One block of a row (features `j0..`, `j0` a multiple of 4): its values'
/// `ĝ` and `ĝ·(x − shift)` into the row's `lanes`, and `dy·x̂`, `dy` added
/// to the block's `weight` and `bias` (slices of the block's length;
/// `gamma` ones when the layer has none).
#[allow(clippy::too_many_arguments, reason = "one block's inputs")]
fn block_sums<S: Element>(
    x: &[S],
    g: &[S],
    m: &Moments<f64>,
    rstd: f64,
    gamma: &[f64],
    weight: &mut [f64],
    bias: &mut [f64],
    lanes: &mut Lanes,
) {
    let (shift, offset) = (m.shift, m.offset);
    // The per-feature sums: a loop of independent updates.
    let cols = weight.iter_mut().zip(bias.iter_mut());
    for ((&x, &dy), (w, b)) in x.iter().zip(g).zip(cols) {
        let dy = dy.widen();
        *b += dy;
        *w += dy * (((x.widen() - shift) - offset) * rstd);
    }
    // The row's sums, reading the block again from the cache: four
    // independent chains the compiler keeps in vector registers (and a
    // shorter chain of roundings than one running sum).
    let (sum, about) = lanes;
    let quads = x
        .chunks_exact(4)
        .zip(g.chunks_exact(4))
        .zip(gamma.chunks_exact(4));
    for ((x, g), gamma) in quads {
        for l in 0..4 {
            let scaled = gamma[l] * g[l].widen();
            sum[l] += scaled;
            about[l] += scaled * (x[l].widen() - shift);
        }
    }
    let whole = x.len().min(g.len()).min(gamma.len()) / 4 * 4;
    let rest = x[whole..].iter().zip(&g[whole..]).zip(&gamma[whole..]);
    for (l, ((&x, &g), &gamma)) in rest.enumerate() {
        let scaled = gamma * g.widen();
        sum[l] += scaled;
        about[l] += scaled * (x.widen() - shift);
    }
}

/// Layer normalization (Ba et al., 2016): every row of the last
/// `features` values is normalized with its own mean and biased variance,
/// then scaled and shifted element by element — PyTorch's
/// `torch.nn.LayerNorm(normalized_shape, eps)` and
/// `torch.nn.functional.layer_norm`, where `features` is the product of
/// `normalized_shape`.
///
/// A transformer's `[batch, tokens, d]` activations take `features = d`;
/// a CNN's per-sample layer normalization over `(C, H, W)` takes `features = C·H·W`.
/// The statistics are a [`BatchStats`] with one "channel" per
/// row, from the same kernels, in `f64`.
///
/// # Which order γ and β are in
///
/// The methods that take a [`Layout`] — [`normalize_into`](LayerNorm::normalize_into),
/// [`backward`](LayerNorm::backward), [`grad_sums`](LayerNorm::grad_sums),
/// [`grad_input`](LayerNorm::grad_input) — normalize each sample over its
/// `(C, H, W)` (`features` must be that many, else an error) and take γ
/// and β in PyTorch's order, `(C, H, W)`, whatever the memory order:
/// on an NHWC tensor they read γ in its `(C, H, W)` order from NHWC
/// memory. [`Layout::nc(rows, features)`](Layout::nc) is the plain case,
/// rows of `features` values (a transformer's tokens). The methods without
/// a layout ([`normalize`](LayerNorm::normalize)) take γ and β in memory
/// order: `(H, W, C)` on NHWC memory.
///
/// # Backward
///
/// [`backward`](LayerNorm::backward) gives `dx`, `dγ` and `dβ`, PyTorch's
/// autograd values: per row, the sums `Σĝ` and `Σĝ·(x − μ)` of
/// `ĝ = γ·dy` (γ varies along the row, so they are taken in one pass
/// with the per-feature `dγ`, `dβ`), in `f64` about the row's shift, then
/// `dx = (γ·dy − Σĝ/n − x̂·Σĝ·x̂/n)/σ`. When the features of a row are
/// split over workers (tensor parallelism), each worker's
/// [`grad_sums`](LayerNorm::grad_sums) are merged before
/// [`grad_input`](LayerNorm::grad_input), as for a synchronized BatchNorm,
/// and each keeps its own features' `dγ`, `dβ`.
///
/// # Example
///
/// ```
/// use momenta::norm::LayerNorm;
///
/// // Two tokens of 4 features.
/// let xs = [1.0, 2.0, 3.0, 6.0, 10.0, 10.0, 10.0, 10.0];
/// let ln = LayerNorm::<f64>::new(4)?.with_eps(0.0)?;
/// let stats = ln.statistics(&xs)?;
/// assert_eq!(stats.mean(), &[3.0, 10.0]);
/// assert_eq!(stats.variance(), vec![3.5, 0.0]);
///
/// let mut y = [0.0; 8];
/// let ln = LayerNorm::<f64>::new(4)?; // eps 1e-5 keeps the constant row finite
/// ln.normalize(&xs, Some(&[1.0, 1.0, 1.0, 2.0]), None, &mut y)?;
/// assert_eq!(&y[4..], &[0.0; 4]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerNorm<F> {
    features: usize,
    eps: F,
}

impl<F: Float> LayerNorm<F> {
    /// Normalization over rows of `features` values, with PyTorch's eps,
    /// `1e-5`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `features` when it is 0.
    ///
    /// ```
    /// use momenta::norm::LayerNorm;
    /// assert_eq!(LayerNorm::<f32>::new(768)?.features(), 768);
    /// assert!(LayerNorm::<f32>::new(0).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(features: usize) -> Result<Self, Error> {
        if features == 0 {
            return Err(Error::parameter("features", 0.0, "at least 1"));
        }
        Ok(Self {
            features,
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
    /// use momenta::norm::LayerNorm;
    /// assert!(LayerNorm::<f64>::new(4)?.with_eps(-1e-5).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_eps(self, eps: F) -> Result<Self, Error> {
        checks::eps(eps)?;
        Ok(Self { eps, ..self })
    }

    /// The number of values per row.
    ///
    /// ```
    /// assert_eq!(momenta::norm::LayerNorm::<f64>::new(3)?.features(), 3);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn features(&self) -> usize {
        self.features
    }

    /// The eps added to the variance.
    ///
    /// ```
    /// assert_eq!(momenta::norm::LayerNorm::<f64>::new(3)?.eps(), 1e-5);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn eps(&self) -> F {
        self.eps
    }

    /// Rows of `features` values filling `len`, as samples of `features`
    /// channels (the layout of the methods that take one).
    #[cfg(feature = "ndarray")]
    pub(super) fn rows_layout(&self, len: usize) -> Result<Layout, Error> {
        self.rows(len)?;
        Layout::nc(len / self.features, self.features)
    }

    /// The rows of `xs`, as a layout of one block of `rows` channels.
    fn rows(&self, len: usize) -> Result<Layout, Error> {
        if !len.is_multiple_of(self.features) {
            return Err(Error::parameter(
                "data length",
                len as f64,
                "a multiple of the number of features",
            ));
        }
        Layout::ncl(1, len / self.features, self.features)
    }

    /// The mean and variance of every row of `xs`, in order; `xs` may be
    /// `f32`, `f64` (or half precision with the `half` feature) whatever
    /// `F` is.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `data length` when it is not a multiple of the features.
    ///
    /// ```
    /// use momenta::norm::LayerNorm;
    /// let s = LayerNorm::<f64>::new(2)?.statistics(&[1.0_f32, 3.0, 5.0, 9.0])?;
    /// assert_eq!(s.mean(), &[2.0, 7.0]);
    /// assert!(LayerNorm::<f64>::new(3)?.statistics(&[1.0_f32; 4]).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn statistics<S: Element>(&self, xs: &[S]) -> Result<BatchStats<F>, Error> {
        self.rows(xs.len())?;
        let mut stats = RowStats::new(self.features as u64, xs.len() / self.features);
        // Chunks four times the fused passes' (nothing reads them again):
        // the kernels read a chunk as four streams, and longer streams
        // keep more of memory's bandwidth busy.
        for chunk in xs.chunks(4 * self.chunk_rows() * self.features) {
            stats.push_rows(chunk, self.features);
        }
        Ok(stats.finish())
    }

    /// Rows per chunk of the passes that take the rows a chunk at a time:
    /// about [`FUSED_VALUES`] values, and an even number (rows of 8192
    /// values and more go two at a time through the pair kernel, and
    /// every chunk must start on an even row to keep its pairs).
    fn chunk_rows(&self) -> usize {
        (FUSED_VALUES / self.features).max(1).next_multiple_of(2)
    }

    /// [`statistics`](LayerNorm::statistics) on every rayon thread (feature
    /// `rayon`): the same statistics, bit for bit, whatever the number of
    /// threads.
    ///
    /// # Errors
    ///
    /// As [`statistics`](LayerNorm::statistics).
    ///
    /// ```
    /// use momenta::norm::LayerNorm;
    /// let xs: Vec<f32> = (0..1000 * 64).map(|i| (i % 17) as f32).collect();
    /// let ln = LayerNorm::<f64>::new(64)?;
    /// assert_eq!(ln.par_statistics(&xs)?, ln.statistics(&xs)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_statistics<S: Element>(&self, xs: &[S]) -> Result<BatchStats<F>, Error> {
        BatchStats::par_compute(xs, self.rows(xs.len())?)
    }

    /// Normalizes `xs` into `out` row by row, `γ` and `β` element by element
    /// over the features in memory order (absent: 1 and 0), and returns the
    /// statistics it used. For γ and β in PyTorch's `(C, H, W)` order on
    /// channels-last memory, or another element type in or out, see
    /// [`normalize_into`](LayerNorm::normalize_into). Each value is `(x − μ)/√(σ² + eps)·γ + β` in `f64`, with the
    /// mean in two parts (subtracted as [`Normalizer`](super::Normalizer)
    /// does), rounded once.
    ///
    /// # Errors
    ///
    /// As [`statistics`](LayerNorm::statistics), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `output`, `gamma` or `beta` for a slice of the wrong length.
    ///
    /// ```
    /// use momenta::norm::LayerNorm;
    /// let mut y = [0.0_f32; 2];
    /// LayerNorm::new(2)?.with_eps(0.0)?.normalize(&[1.0, 3.0], None, Some(&[0.5, 0.5]), &mut y)?;
    /// assert_eq!(y, [-0.5, 1.5]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize(
        &self,
        xs: &[F],
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
        out: &mut [F],
    ) -> Result<BatchStats<F>, Error> {
        if out.len() != xs.len() {
            return Err(Error::length("output", xs.len(), out.len()));
        }
        checks::optional_channel_len("gamma", gamma, self.features)?;
        checks::optional_channel_len("beta", beta, self.features)?;
        self.rows(xs.len())?;
        let (gamma, beta) = (gamma.map(widen), beta.map(widen));
        let per_value = PerValue {
            gamma: gamma.as_deref(),
            beta: beta.as_deref(),
        };
        Ok(self.normalize_rows(xs, per_value, out))
    }

    /// Normalizes the rows of `xs` into `out` (of the same length, a
    /// multiple of the features), γ and β by feature, and returns the
    /// rows' statistics: a chunk of rows at a time, its statistics and
    /// then its normalization while the chunk is still in cache, so that
    /// the tensor is read from memory once. The statistics are those of
    /// [`statistics`](LayerNorm::statistics), bit for bit: each row's
    /// depend on its own values only (rows of 8192 values and more go two
    /// at a time, and every chunk starts on an even row).
    fn normalize_rows<S: Element, O: Element>(
        &self,
        xs: &[S],
        per_value: PerValue<'_>,
        out: &mut [O],
    ) -> BatchStats<F> {
        let features = self.features;
        let eps = self.eps.as_f64();
        let per_chunk = self.chunk_rows();
        let mut stats = RowStats::new(features as u64, xs.len() / features);
        let mut entries: [Vec<f64>; 3] = core::array::from_fn(|_| Vec::with_capacity(per_chunk));
        let stream = streams(out);
        let chunks = xs
            .chunks(per_chunk * features)
            .zip(out.chunks_mut(per_chunk * features));
        // The next chunk is asked for while this one is normalized.
        let pass = Pass {
            stream,
            ahead: core::mem::size_of_val(xs.get(..per_chunk * features).unwrap_or(xs)),
        };
        for (x, y) in chunks {
            for e in &mut entries {
                e.clear();
            }
            for m in stats.push_rows(x, features) {
                // The row's mean as its shift and offset, as every layer
                // subtracts it (see `Centre`): z = (x − hi)·rstd − lo·rstd.
                let rstd = rstd(m, eps);
                let (hi, offset) = Centre::of(m).wide(rstd);
                for (e, v) in entries.iter_mut().zip([hi, rstd, offset]) {
                    e.push(v);
                }
            }
            let [hi, scale, offset] = &entries;
            let params = Affine { hi, scale, offset };
            affine_runs(x, features, params, per_value, pass, y);
        }
        stats.finish()
    }

    /// The order of a layout's samples against `(C, H, W)`, after checking
    /// that a sample holds `features` values.
    fn order(&self, layout: Layout) -> Result<Option<Order>, Error> {
        if let Some(per_sample) = layout.len().checked_div(layout.samples())
            && per_sample != self.features
        {
            return Err(Error::length("features", per_sample, self.features));
        }
        let (positions, channels, inner) = (layout.positions(), layout.channels(), layout.inner());
        Ok((positions > 1 && channels > 1).then_some(Order {
            positions,
            channels,
            inner,
        }))
    }

    /// Normalizes each sample of `xs` (shape `layout`, any [`Element`]
    /// type: `f16`/`bf16` with the `half` feature) over its `(C, H, W)`
    /// into `out` (any `Element` type), with `γ` and `β` in `(C, H, W)`
    /// order whatever the memory order (absent: 1 and 0), and returns the
    /// statistics, one per sample. Each value is computed in `f64` and
    /// rounded once to the output type.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `data` or `output` for a slice that does not hold `layout`,
    /// `features` when a sample of `layout` does not hold `features`
    /// values, `gamma` or `beta` for a vector of another length than
    /// `features`.
    ///
    /// ```
    /// use momenta::norm::{LayerNorm, Layout};
    /// // One NHWC sample, 1 × 2 positions × 2 channels: (C, H, W) = (2, 1, 2).
    /// let xs = [1.0_f32, 10.0, 3.0, 30.0];
    /// let gamma = [1.0, 1.0, 0.0, 0.0]; // (C, H, W) order: channel 1 off
    /// let mut y = [9.0_f64; 4];
    /// let ln = LayerNorm::<f32>::new(4)?.with_eps(0.0)?;
    /// ln.normalize_into(&xs, Layout::nhwc(1, 1, 2, 2)?, Some(&gamma), None, &mut y)?;
    /// assert_eq!((y[1], y[3]), (0.0, 0.0));
    /// assert!(ln.normalize_into(&xs, Layout::nhwc(1, 1, 1, 2)?, None, None, &mut y).is_err());
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
        layout.check(xs.len())?;
        if out.len() != xs.len() {
            return Err(Error::length("output", xs.len(), out.len()));
        }
        let order = self.order(layout)?;
        checks::optional_channel_len("gamma", gamma, self.features)?;
        checks::optional_channel_len("beta", beta, self.features)?;
        self.rows(xs.len())?;
        let gamma = gamma.map(|g| Order::to_memory(order, g));
        // β absent adds 0 all the same (as it always has: −0 becomes +0).
        let beta = beta.map_or_else(|| vec![0.0; self.features], |b| Order::to_memory(order, b));
        let per_value = PerValue {
            gamma: gamma.as_deref(),
            beta: Some(&beta),
        };
        Ok(self.normalize_rows(xs, per_value, out))
    }

    /// The checks every backward method makes: the tensors, the
    /// statistics (one per sample), γ and eps; and the order of γ.
    fn check_backward<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
    ) -> Result<Option<Order>, Error> {
        pass.check_tensors()?;
        let order = self.order(pass.layout())?;
        checks::channel_len(
            "statistics rows",
            pass.stats().moments(),
            pass.layout().samples(),
        )?;
        check_gamma(pass.gamma(), self.features)?;
        Ok(order)
    }

    /// The backward sums of `pass`, in one pass over `xs` and `dy`: per
    /// row (sample), `Σĝ` and `Σĝ·(x − shift)` with `ĝ = γ·dy`, as
    /// [`GradSums`] whose channels are the rows — what workers that split
    /// each row's features merge before [`grad_input`](LayerNorm::grad_input)
    /// — and this tensor's `dγ`, `dβ` per feature, in `(C, H, W)` order.
    ///
    /// The statistics are the whole rows' (merged across the workers that
    /// split them); `features` is this tensor's share of each row.
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    ///   naming `data` or `gradient` for a slice that does not hold the
    ///   layout, `features` when a sample does not hold `features` values,
    ///   `statistics rows` for statistics of another number of rows,
    ///   `gamma` for a γ of another length than `features`;
    /// - [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) when
    ///   the statistics are poisoned.
    ///
    /// ```
    /// use momenta::Merge;
    /// use momenta::norm::{Backward, LayerNorm, Layout};
    /// // One row of 4 features split over two workers, 2 each.
    /// let (xs, dy) = ([1.0, 2.0, 3.0, 6.0], [1.0, 0.0, -1.0, 2.0]);
    /// let half = LayerNorm::<f64>::new(2)?.with_eps(0.0)?;
    /// let mut stats = half.statistics(&xs[..2])?;
    /// stats.merge(&half.statistics(&xs[2..])?); // the whole row: μ 3, σ² 3.5
    /// let layout = Layout::nc(1, 2)?;
    /// let left = Backward::new(&xs[..2], &dy[..2], layout, &stats);
    /// let right = Backward::new(&xs[2..], &dy[2..], layout, &stats);
    /// let (mut sums, left_grads) = half.grad_sums(&left)?;
    /// sums.merge(&half.grad_sums(&right)?.0);
    /// let mut dx = [0.0; 2];
    /// half.grad_input(&sums, &left, &mut dx)?;
    /// // The whole row's dx: (dy − Σdy/4 − x̂·Σdy·x̂/4)/σ, Σdy = 2, Σdy·x̂ = 4/σ.
    /// let sigma = 3.5_f64.sqrt();
    /// assert!((dx[0] - (1.0 - 0.5 + (2.0 / sigma) * (4.0 / sigma) / 4.0) / sigma).abs() < 1e-15);
    /// assert_eq!(left_grads.bias, vec![1.0, 0.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn grad_sums<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
    ) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
        self.grad_sums_on(pass, Schedule::Sequential)
    }

    /// [`grad_sums`](LayerNorm::grad_sums) on every rayon thread (feature
    /// `rayon`): the same sums, bit for bit, whatever the number of
    /// threads.
    ///
    /// # Errors
    ///
    /// As [`grad_sums`](LayerNorm::grad_sums).
    ///
    /// ```
    /// use momenta::norm::{Backward, LayerNorm, Layout};
    /// let xs: Vec<f32> = (0..512 * 64).map(|i| (i % 17) as f32).collect();
    /// let dy: Vec<f32> = (0..512 * 64).map(|i| (i % 5) as f32 - 2.0).collect();
    /// let ln = LayerNorm::<f32>::new(64)?;
    /// let stats = ln.statistics(&xs)?;
    /// let pass = Backward::new(&xs, &dy, Layout::nc(512, 64)?, &stats);
    /// assert_eq!(ln.par_grad_sums(&pass)?, ln.grad_sums(&pass)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[cfg(feature = "rayon")]
    pub fn par_grad_sums<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
    ) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
        self.grad_sums_on(pass, Schedule::Parallel)
    }

    fn grad_sums_on<S: Element>(
        &self,
        pass: &Backward<'_, F, S>,
        schedule: Schedule,
    ) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
        let order = self.check_backward(pass)?;
        let features = self.features;
        let gamma = pass
            .gamma()
            .map_or_else(|| vec![1.0; features], |g| Order::to_memory(order, g));
        let moments = pass.stats().moments();
        let rows = pass.layout().samples();
        let eps = self.eps.as_f64();
        let per_leaf = LEAF_VALUES.div_ceil(features).max(MIN_LEAF_ROWS);
        let empty = || RowSums {
            sum: Vec::new(),
            sum_about_shift: Vec::new(),
            weight: vec![0.0; features],
            bias: vec![0.0; features],
        };
        let leaf = |l: usize| {
            let mut out = empty();
            let lo = l * per_leaf;
            let hi = (lo + per_leaf).min(rows);
            let (xs, dy) = (pass.xs(), pass.dy());
            let mut lanes: Vec<Lanes> = vec![([0.0; 4], [0.0; 4]); hi.saturating_sub(lo)];
            let per_row: Vec<(Moments<f64>, f64)> = (lo..hi)
                .map(|r| {
                    let m = moments.get(r).copied().unwrap_or_default();
                    (m, rstd(&m, eps))
                })
                .collect();
            // Column blocks across the leaf's rows: each block's
            // per-feature sums stay in the L1 cache while every row adds
            // to them.
            for j0 in (0..features).step_by(COLUMN_BLOCK) {
                let j1 = (j0 + COLUMN_BLOCK).min(features);
                let (w, b) = (&mut out.weight[j0..j1], &mut out.bias[j0..j1]);
                for (r, (lanes, (m, rstd))) in (lo..hi).zip(lanes.iter_mut().zip(&per_row)) {
                    let range = r * features + j0..r * features + j1;
                    let (x, g) = (
                        xs.get(range.clone()).unwrap_or(&[]),
                        dy.get(range).unwrap_or(&[]),
                    );
                    block_sums(x, g, m, *rstd, &gamma[j0..j1], w, b, lanes);
                }
            }
            for (sum, about) in lanes {
                out.sum.push((sum[0] + sum[1]) + (sum[2] + sum[3]));
                out.sum_about_shift
                    .push((about[0] + about[1]) + (about[2] + about[3]));
            }
            out
        };
        let sums = if rows == 0 {
            empty()
        } else {
            let leaves = rows.div_ceil(per_leaf);
            schedule.at_least(rows * features, 4 * LEAF_VALUES).tree(
                0,
                leaves,
                1,
                &leaf,
                &RowSums::merge,
            )
        };
        let centre = moments.iter().map(|m| m.shift).collect();
        let grads = AffineGrads::from_f64(
            &Order::from_memory(order, &sums.weight),
            &Order::from_memory(order, &sums.bias),
        );
        Ok((
            GradSums::from_sums(features as u64, centre, sums.sum, sums.sum_about_shift),
            grads,
        ))
    }

    /// `dx` of `pass` from the row sums of [`grad_sums`](LayerNorm::grad_sums)
    /// (merged across the workers that split the rows), written to `dx`
    /// (any [`Element`] type) in `f64`, each value rounded once:
    /// `dx = (γ·dy − Σĝ/n − x̂·Σĝ·x̂/n)/σ` with `n` the statistics' count.
    ///
    /// # Errors
    ///
    /// As [`grad_sums`](LayerNorm::grad_sums), and
    /// [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
    /// naming `output` for a `dx` of the wrong length, `gradient sums rows`
    /// for sums of another number of rows, `statistics count` when the
    /// sums and the statistics count different numbers of values;
    /// [`ErrorKind::InvalidState`](crate::ErrorKind::InvalidState) for
    /// poisoned sums.
    ///
    /// ```
    /// use momenta::norm::{Backward, LayerNorm, Layout};
    /// let (xs, dy) = ([1.0, 3.0], [5.0, 5.0]);
    /// let ln = LayerNorm::<f64>::new(2)?;
    /// let stats = ln.statistics(&xs)?;
    /// let pass = Backward::new(&xs, &dy, Layout::nc(1, 2)?, &stats);
    /// let (sums, _) = ln.grad_sums(&pass)?;
    /// let mut dx = [9.0; 2];
    /// ln.grad_input(&sums, &pass, &mut dx)?;
    /// assert_eq!(dx, [0.0, 0.0]); // a constant dy moves nothing
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn grad_input<S: Element, O: Element>(
        &self,
        sums: &GradSums<F>,
        pass: &Backward<'_, F, S>,
        dx: &mut [O],
    ) -> Result<(), Error> {
        let order = self.check_backward(pass)?;
        pass.check_output(dx.len())?;
        let stats = pass.stats();
        checks::channel_len("gradient sums rows", sums.sum_dy(), stats.channels())?;
        sums.check_count(stats)?;
        let about = sums.about(stats, self.eps)?;
        let features = self.features;
        let gamma = pass
            .gamma()
            .map_or_else(|| vec![1.0; features], |g| Order::to_memory(order, g));
        #[allow(clippy::cast_precision_loss, reason = "a count, exact below 2⁵³")]
        let n = stats.count() as f64;
        let rows = pass
            .xs()
            .chunks_exact(features)
            .zip(pass.dy().chunks_exact(features))
            .zip(dx.chunks_exact_mut(features));
        let per_row = stats.moments().iter().zip(&about).zip(sums.sum_dy());
        for (((x, g), out), ((m, &(about_mean, rstd)), &sum)) in rows.zip(per_row) {
            let k = DxCoefficients::new(m, n, rstd, sum, about_mean, 1.0);
            let values = x.iter().zip(g).zip(out.iter_mut()).zip(&gamma);
            for (((&x, &g), out), &gamma) in values {
                let centred = (x.widen() - k.shift) - k.offset;
                *out = O::narrow(gamma * k.a * g.widen() + k.b * centred + k.c);
            }
        }
        Ok(())
    }

    /// The whole backward pass on one process: `dx` written to `dx` (any
    /// [`Element`] type), and `dγ`, `dβ` returned in `(C, H, W)` order —
    /// PyTorch's `x.grad`, `weight.grad` and `bias.grad` of
    /// `F.layer_norm(x, normalized_shape, weight, bias, eps)`. Two passes
    /// over `xs` and `dy`: [`grad_sums`](LayerNorm::grad_sums), then
    /// [`grad_input`](LayerNorm::grad_input).
    ///
    /// # Errors
    ///
    /// As [`grad_input`](LayerNorm::grad_input).
    ///
    /// ```
    /// use momenta::norm::{Backward, LayerNorm, Layout};
    /// // Two tokens of 3 features; γ per feature.
    /// let xs = [1.0_f32, 2.0, 6.0, 0.0, 0.0, 3.0];
    /// let dy = [0.5_f32, -1.0, 0.25, 1.0, 1.0, 1.0];
    /// let ln = LayerNorm::<f32>::new(3)?;
    /// let stats = ln.statistics(&xs)?;
    /// let pass = Backward::new(&xs, &dy, Layout::nc(2, 3)?, &stats).with_gamma(&[1.0, 2.0, 0.5]);
    /// let mut dx = [0.0_f32; 6];
    /// let grads = ln.backward(&pass, &mut dx)?;
    /// assert_eq!(grads.bias, vec![1.5, 0.0, 1.25]);
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
