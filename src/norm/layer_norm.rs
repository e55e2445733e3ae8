//! `LayerNorm`: statistics per row of trailing features.

use super::normalize::Centre;
use super::{BatchStats, Layout, checks};
use crate::{Element, Error, Float};

/// Layer normalization (Ba et al., 2016): every row of the last
/// `features` values is normalized with its own mean and biased variance,
/// then scaled and shifted element by element — PyTorch's
/// `torch.nn.LayerNorm(normalized_shape, eps)` and
/// `torch.nn.functional.layer_norm`, where `features` is the product of
/// `normalized_shape`.
///
/// A transformer's `[batch, tokens, d]` activations take `features = d`;
/// a CNN's per-sample layer normalization over `(C, H, W)` takes `features = C·H·W`,
/// whatever the memory order (γ and β then follow that order: `(H, W, C)`
/// for NHWC). The statistics are a [`BatchStats`] with one "channel" per
/// row, from the same kernels, in `f64`.
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
        BatchStats::compute(xs, self.rows(xs.len())?)
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
    /// over the features (absent: 1 and 0), and returns the statistics it
    /// used. Each value is `(x − μ)/√(σ² + eps)·γ + β` in `f64`, with the
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
        let stats = self.statistics(xs)?;
        stats.check_usable()?;
        let eps = self.eps.as_f64();
        let rows = xs
            .chunks_exact(self.features)
            .zip(out.chunks_exact_mut(self.features));
        for ((x, y), m) in rows.zip(stats.moments()) {
            // The row's mean as its shift and offset, as every layer
            // subtracts it (see `Centre`).
            let centre = Centre::of(m);
            let var = m.variance(0).unwrap_or(f64::NAN);
            let rstd = 1.0 / num_traits::Float::sqrt(var + eps);
            // z = (x − hi)·rstd − lo·rstd, then γ and β: one loop per
            // affine case, so that none tests or applies an absent one.
            let (hi, c) = centre.wide(rstd);
            let z = |x: &F| (x.as_f64() - hi) * rstd + c;
            let pairs = y.iter_mut().zip(x);
            match (gamma, beta) {
                (Some(g), Some(b)) => {
                    for ((y, x), (g, b)) in pairs.zip(g.iter().zip(b)) {
                        *y = F::from_f64(z(x) * g.as_f64() + b.as_f64());
                    }
                }
                (Some(g), None) => {
                    for ((y, x), g) in pairs.zip(g) {
                        *y = F::from_f64(z(x) * g.as_f64());
                    }
                }
                (None, Some(b)) => {
                    for ((y, x), b) in pairs.zip(b) {
                        *y = F::from_f64(z(x) + b.as_f64());
                    }
                }
                (None, None) => {
                    for (y, x) in pairs {
                        *y = F::from_f64(z(x));
                    }
                }
            }
        }
        Ok(stats)
    }
}
