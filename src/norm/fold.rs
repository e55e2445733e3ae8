//! Folding evaluation-mode BatchNorm into a scale and shift, or into the
//! preceding linear or convolution layer.

use alloc::vec::Vec;

use super::normalize::{scales, widen};
use super::{RunningStats, checks};
use crate::{Error, Float};

fn beta_at<F: Float>(beta: Option<&[F]>, c: usize) -> f64 {
    beta.and_then(|b| b.get(c)).map_or(0.0, |b| b.as_f64())
}

/// Evaluation-mode BatchNorm as one affine map per channel:
/// `y = x · scale + shift` with `scale = γ/√(var + eps)` and
/// `shift = β − mean · scale` (computed in `f64`, rounded once). `gamma`
/// defaults to ones and `beta` to zeros. Returns `(scale, shift)`.
///
/// # Errors
///
/// - [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
///   naming `variance`, `gamma` or `beta` when its length differs from
///   `mean`'s;
/// - [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
///   naming `eps` unless it is finite and non-negative, or `variance` when
///   one is negative.
///
/// ```
/// use momenta::norm::scale_shift;
/// let (scale, shift) = scale_shift(&[1.0], &[4.0], 0.0, Some(&[3.0]), Some(&[0.5]))?;
/// assert_eq!((scale, shift), (vec![1.5], vec![-1.0]));
/// # Ok::<(), momenta::Error>(())
/// ```
pub fn scale_shift<F: Float>(
    mean: &[F],
    var: &[F],
    eps: F,
    gamma: Option<&[F]>,
    beta: Option<&[F]>,
) -> Result<(Vec<F>, Vec<F>), Error> {
    let channels = mean.len();
    checks::channel_len("variance", var, channels)?;
    checks::optional_channel_len("beta", beta, channels)?;
    let s = scales(&widen(var), eps, gamma)?;
    let shift = mean
        .iter()
        .zip(&s)
        .enumerate()
        .map(|(c, (&m, &s))| F::from_f64(beta_at(beta, c) - m.as_f64() * s))
        .collect();
    Ok((s.into_iter().map(F::from_f64).collect(), shift))
}

/// Folds evaluation-mode BatchNorm into the linear or convolution layer
/// before it, so that the folded layer alone computes `BN(W·x + b)`:
/// `W′ = W · s` row by row and `b′ = (b − mean) · s + β`, with
/// `s = γ/√(var + eps)` per output channel.
///
/// `weight` is row-major with one row per output channel (= BN channel):
/// a linear layer's `(out, in)` matrix, or a convolution's
/// `(out, in, kh, kw)` kernel, whose "row" is everything of one output
/// channel. A layer without bias passes a zeroed `bias`. Both are
/// modified in place, and only if every check passes.
///
/// # Errors
///
/// As [`scale_shift`], and
/// - [`ErrorKind::LengthMismatch`](crate::ErrorKind::LengthMismatch)
///   naming `bias` when its length differs from the channel count;
/// - [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
///   naming `weight length` when it is not a multiple of the channel count.
///
/// ```
/// use momenta::norm::fold_linear;
/// // One output channel: y = 2x + 1, then BN with mean 1, var 4, γ = 1, β = 0.
/// let (mut w, mut b) = ([2.0], [1.0]);
/// fold_linear(&mut w, &mut b, &[1.0], &[4.0], 0.0, None, None)?;
/// assert_eq!((w, b), ([1.0], [0.0]));
/// # Ok::<(), momenta::Error>(())
/// ```
pub fn fold_linear<F: Float>(
    weight: &mut [F],
    bias: &mut [F],
    mean: &[F],
    var: &[F],
    eps: F,
    gamma: Option<&[F]>,
    beta: Option<&[F]>,
) -> Result<(), Error> {
    let channels = mean.len();
    checks::channel_len("variance", var, channels)?;
    checks::optional_channel_len("beta", beta, channels)?;
    if bias.len() != channels {
        return Err(Error::length("bias", channels, bias.len()));
    }
    let row = match weight.len().checked_div(channels) {
        Some(row) if row * channels == weight.len() => row,
        None if weight.is_empty() => 0,
        _ => {
            return Err(Error::parameter(
                "weight length",
                weight.len() as f64,
                "a multiple of the channel count",
            ));
        }
    };
    let s = scales(&widen(var), eps, gamma)?;
    if row > 0 {
        for (w_row, &s) in weight.chunks_exact_mut(row).zip(&s) {
            for w in w_row {
                *w = F::from_f64(w.as_f64() * s);
            }
        }
    }
    for (c, ((b, &m), &s)) in bias.iter_mut().zip(mean).zip(&s).enumerate() {
        *b = F::from_f64((b.as_f64() - m.as_f64()) * s + beta_at(beta, c));
    }
    Ok(())
}

impl<F: Float> RunningStats<F> {
    /// [`scale_shift`] with the running mean and variance and the
    /// configuration's eps: the per-channel affine map evaluation-mode
    /// BatchNorm computes. (The eps is the configuration's, not an
    /// argument, so the folded map always equals
    /// [`normalize`](RunningStats::normalize).)
    ///
    /// # Errors
    ///
    /// As [`scale_shift`].
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// let r = RunningStats::with_state(&[1.0], &[4.0], BnConfig::<f64>::keras().with_eps(0.0)?)?;
    /// assert_eq!(r.scale_shift(None, None)?, (vec![0.5], vec![-0.5]));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn scale_shift(
        &self,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<(Vec<F>, Vec<F>), Error> {
        scale_shift(self.mean(), self.var(), self.config().eps(), gamma, beta)
    }

    /// [`fold_linear`] with the running mean and variance and the
    /// configuration's eps.
    ///
    /// # Errors
    ///
    /// As [`fold_linear`].
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// let r = RunningStats::with_state(&[1.0, 0.0], &[4.0, 1.0], BnConfig::<f64>::keras().with_eps(0.0)?)?;
    /// // A 2×3 linear layer.
    /// let mut w = [2.0, 4.0, 6.0, 1.0, 1.0, 1.0];
    /// let mut b = [1.0, 0.0];
    /// r.fold_linear(&mut w, &mut b, None, Some(&[0.0, 3.0]))?;
    /// assert_eq!(w, [1.0, 2.0, 3.0, 1.0, 1.0, 1.0]);
    /// assert_eq!(b, [0.0, 3.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn fold_linear(
        &self,
        weight: &mut [F],
        bias: &mut [F],
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<(), Error> {
        fold_linear(
            weight,
            bias,
            self.mean(),
            self.var(),
            self.config().eps(),
            gamma,
            beta,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_shapes_leave_the_layer_untouched() {
        let mut w = [1.0, 2.0, 3.0];
        let mut b = [0.0, 0.0];
        let mean = [0.0, 0.0];
        let var = [1.0, 1.0];
        assert!(fold_linear(&mut w, &mut b, &mean, &var, 0.0, None, None).is_err());
        assert!(fold_linear(&mut w[..2], &mut b[..1], &mean, &var, 0.0, None, None).is_err());
        assert!(fold_linear(&mut w[..2], &mut b, &mean, &var[..1], 0.0, None, None).is_err());
        assert!(fold_linear(&mut w[..2], &mut b, &mean, &var, -1.0, None, None).is_err());
        assert_eq!((w, b), ([1.0, 2.0, 3.0], [0.0, 0.0]));
        // No channels, no weights: nothing to do.
        fold_linear::<f64>(&mut [], &mut [], &[], &[], 0.0, None, None).unwrap();
        assert!(fold_linear::<f64>(&mut [1.0], &mut [], &[], &[], 0.0, None, None).is_err());
    }
}
