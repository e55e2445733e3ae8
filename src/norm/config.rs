//! Each framework's BatchNorm conventions, as one value.

use crate::{Error, Float, Momentum};

/// The smallest epsilon cuDNN accepts for batch normalization,
/// `CUDNN_BN_MIN_EPSILON` = 1e-5 (cuDNN returns `CUDNN_STATUS_BAD_PARAM`
/// below it). [`BnConfig::cudnn`] enforces it.
///
/// ```
/// assert_eq!(momenta::norm::CUDNN_BN_MIN_EPSILON, 1e-5);
/// ```
pub const CUDNN_BN_MIN_EPSILON: f64 = 1e-5;

/// Which variance of the batch goes into the running variance.
///
/// Normalization always uses the biased batch variance; frameworks differ
/// only in what they average into the running variance, and that decides
/// what happens with one value per channel (`n = 1`).
///
/// # Example
///
/// ```
/// use momenta::norm::{BnConfig, VarianceCorrection};
/// assert_eq!(BnConfig::<f32>::pytorch().correction(), VarianceCorrection::Unbiased);
/// assert_eq!(BnConfig::<f32>::keras().correction(), VarianceCorrection::Biased);
/// assert_eq!(BnConfig::<f32>::tf_fused().correction(), VarianceCorrection::UnbiasedClamped);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum VarianceCorrection {
    /// `M2/n` (Keras 3 and tf.keras non-fused). `n = 1` gives 0.
    Biased,
    /// `M2/(n − 1)` (PyTorch, cuDNN). `n = 1` is an error, as in PyTorch:
    /// "expected more than 1 value per channel when training".
    Unbiased,
    /// `M2/max(n − 1, 1)` (TensorFlow's fused kernel). `n = 1` gives 0.
    UnbiasedClamped,
}

impl VarianceCorrection {
    /// The fewest values per channel a training update needs: 2 for
    /// [`Unbiased`](VarianceCorrection::Unbiased), else 1.
    ///
    /// ```
    /// use momenta::norm::VarianceCorrection;
    /// assert_eq!(VarianceCorrection::Unbiased.min_count(), 2);
    /// assert_eq!(VarianceCorrection::Biased.min_count(), 1);
    /// ```
    #[must_use]
    pub fn min_count(self) -> u64 {
        match self {
            Self::Unbiased => 2,
            Self::Biased | Self::UnbiasedClamped => 1,
        }
    }

    /// The divisor of M2 for `n` values per channel: `n`, `n − 1` or
    /// `max(n − 1, 1)` (as `f64`; `n − 1` saturates at 0).
    ///
    /// ```
    /// use momenta::norm::VarianceCorrection;
    /// assert_eq!(VarianceCorrection::UnbiasedClamped.divisor(1), 1.0);
    /// assert_eq!(VarianceCorrection::Unbiased.divisor(4), 3.0);
    /// ```
    #[must_use]
    pub fn divisor(self, n: u64) -> f64 {
        match self {
            Self::Biased => n as f64,
            Self::Unbiased => n.saturating_sub(1) as f64,
            Self::UnbiasedClamped => n.saturating_sub(1).max(1) as f64,
        }
    }
}

/// The conventions of one framework's BatchNorm: the momentum (with its
/// meaning), epsilon, which batch variance feeds the running variance, and
/// with it the `n = 1` policy.
///
/// | preset | momentum | eps | running variance | n = 1 |
/// |---|---|---|---|---|
/// | [`pytorch`](BnConfig::pytorch) | `Factor(0.1)`: r = (1−m)·r + m·b | 1e-5 | unbiased | error |
/// | [`keras`](BnConfig::keras) (Keras 3, tf.keras non-fused) | `Decay(0.99)`: r = m·r + (1−m)·b | 1e-3 | biased | variance 0 |
/// | [`tf_fused`](BnConfig::tf_fused) | `Factor(1 − 0.99)`, evaluated as TF's fused kernel | 1e-3 | unbiased, max(n−1, 1) | variance 0 |
/// | [`cudnn`](BnConfig::cudnn) | `Factor(f)`: r = f·b + (1−f)·r | 1e-5, ≥ [`CUDNN_BN_MIN_EPSILON`] | unbiased | error |
///
/// PyTorch's `momentum=None` and cuDNN's factor `1/(1 + k)` are
/// [`Momentum::Cumulative`]: `pytorch().with_momentum(Momentum::Cumulative)`.
///
/// A `BnConfig` is valid by construction: [`with_momentum`](BnConfig::with_momentum)
/// and [`with_eps`](BnConfig::with_eps) return a `Result`, and deserialized
/// configurations are validated, so [`RunningStats::new`](super::RunningStats::new)
/// cannot fail.
///
/// # Example
///
/// ```
/// use momenta::Momentum;
/// use momenta::norm::BnConfig;
///
/// // Porting `nn.BatchNorm2d(64, momentum=0.01, eps=1e-3)`:
/// let config = BnConfig::<f32>::pytorch()
///     .with_momentum(Momentum::Factor(0.01))?
///     .with_eps(1e-3)?;
/// assert_eq!(config.eps(), 1e-3);
/// assert!(BnConfig::<f32>::keras().with_momentum(Momentum::Decay(1.5)).is_err());
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "BnConfigState<F>", bound = "F: Float")
)]
pub struct BnConfig<F> {
    momentum: Momentum<F>,
    eps: F,
    correction: VarianceCorrection,
    min_eps: F,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] BnConfig<F>, BnConfigState<F>);

impl<F: Float> BnConfig<F> {
    /// PyTorch's `BatchNorm{1,2,3}d` defaults: `momentum=0.1`
    /// (`Factor(0.1)`), `eps=1e-5`, unbiased running variance, `n = 1` an
    /// error.
    ///
    /// ```
    /// use momenta::Momentum;
    /// let c = momenta::norm::BnConfig::<f64>::pytorch();
    /// assert_eq!((c.momentum(), c.eps()), (Momentum::Factor(0.1), 1e-5));
    /// ```
    #[must_use]
    pub fn pytorch() -> Self {
        Self {
            momentum: Momentum::Factor(F::from_f64(0.1)),
            eps: F::from_f64(1e-5),
            correction: VarianceCorrection::Unbiased,
            min_eps: F::zero(),
        }
    }

    /// Keras 3 / tf.keras non-fused `BatchNormalization` defaults:
    /// `momentum=0.99` (`Decay(0.99)`, evaluated as `r·m + b·(1 − m)`),
    /// `epsilon=1e-3`, biased running variance.
    ///
    /// Keras computes `1 − m` from the Python float (in `f64`) and rounds
    /// both weights to the variable's dtype: in `f32` the batch's weight is
    /// `float32(1 − 0.99) = 0.0099999998`, not `1 − 0.99_f32 =
    /// 0.0099999905`. [`RunningStats`](super::RunningStats) does the same
    /// for any `Decay(β)`, taking the Python float to be the shortest
    /// decimal that rounds to `β` (0.99 for `0.99_f32`), so
    /// `with_momentum(Momentum::Decay(0.9))` ports `momentum=0.9` too.
    ///
    /// ```
    /// use momenta::Momentum;
    /// use momenta::norm::{BatchStats, BnConfig, Layout, RunningStats};
    /// let c = BnConfig::<f32>::keras();
    /// assert_eq!((c.momentum(), c.eps()), (Momentum::Decay(0.99), 1e-3));
    ///
    /// let mut r = RunningStats::new(1, c);
    /// r.update(&BatchStats::compute(&[1.0_f32, 1.0], Layout::nc(2, 1)?)?)?;
    /// assert_eq!(r.mean(), &[(1.0 - 0.99_f64) as f32]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn keras() -> Self {
        Self {
            momentum: Momentum::Decay(F::from_f64(0.99)),
            eps: F::from_f64(1e-3),
            correction: VarianceCorrection::Biased,
            min_eps: F::zero(),
        }
    }

    /// tf.keras with `fused=True` (`FusedBatchNormV3`): Keras passes
    /// `exponential_avg_factor = 1 − momentum`, so the preset is
    /// `Factor(1 − 0.99)` (computed in `f64`, as Python does, then rounded
    /// to `F`), `epsilon=1e-3`, and the running variance is
    /// `M2/max(n − 1, 1)`. To port another Keras momentum `m`, use
    /// `with_momentum(Momentum::Factor(1.0 - m))`.
    ///
    /// ```
    /// use momenta::Momentum;
    /// let c = momenta::norm::BnConfig::<f64>::tf_fused();
    /// assert_eq!(c.momentum(), Momentum::Factor(1.0 - 0.99));
    /// ```
    #[must_use]
    pub fn tf_fused() -> Self {
        Self {
            momentum: Momentum::Factor(F::from_f64(1.0 - 0.99)),
            eps: F::from_f64(1e-3),
            correction: VarianceCorrection::UnbiasedClamped,
            min_eps: F::zero(),
        }
    }

    /// cuDNN's `cudnnBatchNormalizationForwardTraining` with
    /// `exponentialAverageFactor = factor`: `r = f·b + (1 − f)·r`, unbiased
    /// running variance, eps 1e-5. Epsilons below [`CUDNN_BN_MIN_EPSILON`]
    /// (compared in `F`, so `1e-5_f32` is accepted) are rejected by
    /// [`with_eps`](BnConfig::with_eps) rather than clamped, since cuDNN
    /// itself refuses them. For cuDNN's cumulative mode (factor `1/(1 + k)`
    /// at the `k`-th call) use `with_momentum(Momentum::Cumulative)`.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` unless `factor` is in `[0, 1]`.
    ///
    /// ```
    /// use momenta::norm::BnConfig;
    /// let c = BnConfig::<f32>::cudnn(0.1)?;
    /// assert!(c.with_eps(1e-6).is_err());
    /// assert!(BnConfig::<f32>::cudnn(1.1).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn cudnn(factor: F) -> Result<Self, Error> {
        Ok(Self {
            momentum: Momentum::Factor(factor).validate()?,
            eps: F::from_f64(CUDNN_BN_MIN_EPSILON),
            correction: VarianceCorrection::Unbiased,
            min_eps: F::from_f64(CUDNN_BN_MIN_EPSILON),
        })
    }

    /// The same conventions with another momentum.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `momentum` when it is outside `[0, 1]` or NaN.
    ///
    /// ```
    /// use momenta::Momentum;
    /// use momenta::norm::BnConfig;
    /// let c = BnConfig::<f64>::pytorch().with_momentum(Momentum::Cumulative)?;
    /// assert_eq!(c.momentum(), Momentum::Cumulative);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_momentum(self, momentum: Momentum<F>) -> Result<Self, Error> {
        Ok(Self {
            momentum: momentum.validate()?,
            ..self
        })
    }

    /// The same conventions with another epsilon.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)
    /// naming `eps` when it is negative, NaN or infinite, or, for the
    /// [`cudnn`](BnConfig::cudnn) preset, below [`CUDNN_BN_MIN_EPSILON`].
    ///
    /// ```
    /// use momenta::norm::BnConfig;
    /// let err = BnConfig::<f64>::pytorch().with_eps(-1.0).unwrap_err();
    /// assert_eq!(err.to_string(), "eps must be finite and non-negative, got -1");
    /// let err = BnConfig::<f64>::cudnn(0.1)?.with_eps(1e-6).unwrap_err();
    /// assert_eq!(err.to_string(), "eps must be at least CUDNN_BN_MIN_EPSILON = 1e-5 for cuDNN, got 0.000001");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_eps(self, eps: F) -> Result<Self, Error> {
        super::checks::eps_at_least(eps, self.min_eps)?;
        Ok(Self { eps, ..self })
    }

    /// The same conventions with another running-variance correction.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, VarianceCorrection};
    /// let c = BnConfig::<f64>::keras().with_correction(VarianceCorrection::Unbiased);
    /// assert_eq!(c.correction(), VarianceCorrection::Unbiased);
    /// ```
    #[must_use]
    pub fn with_correction(self, correction: VarianceCorrection) -> Self {
        Self { correction, ..self }
    }

    /// The momentum.
    ///
    /// ```
    /// use momenta::Momentum;
    /// assert_eq!(momenta::norm::BnConfig::<f64>::cudnn(0.25)?.momentum(), Momentum::Factor(0.25));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn momentum(&self) -> Momentum<F> {
        self.momentum
    }

    /// The epsilon added to the variance before the square root.
    ///
    /// ```
    /// assert_eq!(momenta::norm::BnConfig::<f64>::pytorch().eps(), 1e-5);
    /// ```
    #[must_use]
    pub fn eps(&self) -> F {
        self.eps
    }

    /// Which batch variance feeds the running variance.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, VarianceCorrection};
    /// assert_eq!(BnConfig::<f64>::cudnn(0.1)?.correction(), VarianceCorrection::Unbiased);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn correction(&self) -> VarianceCorrection {
        self.correction
    }

    /// The smallest epsilon this configuration accepts: 0, or
    /// [`CUDNN_BN_MIN_EPSILON`] for the cuDNN preset.
    ///
    /// ```
    /// use momenta::norm::BnConfig;
    /// assert_eq!(BnConfig::<f64>::cudnn(0.1)?.min_eps(), 1e-5);
    /// assert_eq!(BnConfig::<f64>::keras().min_eps(), 0.0);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn min_eps(&self) -> F {
        self.min_eps
    }
}

/// The serialized form of a [`BnConfig`], validated on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
struct BnConfigState<F> {
    momentum: Momentum<F>,
    #[serde(with = "crate::checkpoint::float")]
    eps: F,
    correction: VarianceCorrection,
    #[serde(with = "crate::checkpoint::float")]
    min_eps: F,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<BnConfigState<F>> for BnConfig<F> {
    type Error = Error;
    fn try_from(s: BnConfigState<F>) -> Result<Self, Error> {
        if !(s.min_eps == F::zero() || s.min_eps == F::from_f64(CUDNN_BN_MIN_EPSILON)) {
            return Err(Error::state(alloc::format!(
                "min_eps must be 0 or 1e-5, got {:?}",
                s.min_eps
            )));
        }
        super::checks::eps_at_least(s.eps, s.min_eps)?;
        Ok(Self {
            momentum: s.momentum.validate()?,
            eps: s.eps,
            correction: s.correction,
            min_eps: s.min_eps,
        })
    }
}

#[cfg(feature = "serde")]
impl<F> From<BnConfig<F>> for BnConfigState<F> {
    fn from(c: BnConfig<F>) -> Self {
        Self {
            momentum: c.momentum,
            eps: c.eps,
            correction: c.correction,
            min_eps: c.min_eps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_hold_each_frameworks_defaults() {
        let p = BnConfig::<f64>::pytorch();
        assert_eq!(p.momentum(), Momentum::Factor(0.1));
        assert_eq!(p.eps(), 1e-5);
        let k = BnConfig::<f64>::keras();
        assert_eq!(k.momentum(), Momentum::Decay(0.99));
        assert_eq!(k.eps(), 1e-3);
        let t = BnConfig::<f64>::tf_fused();
        assert_eq!(t.correction(), VarianceCorrection::UnbiasedClamped);
        assert_eq!(t.eps(), 1e-3);
        let c = BnConfig::<f32>::cudnn(0.5).unwrap();
        assert_eq!(c.eps(), 1e-5_f32);
        assert!(c.with_eps(1e-5_f32).is_ok());
        assert!(c.with_eps(9e-6).is_err());
        assert!(BnConfig::<f64>::pytorch().with_eps(0.0).is_ok());
        assert!(BnConfig::<f64>::pytorch().with_eps(f64::NAN).is_err());
        assert!(BnConfig::<f64>::pytorch().with_eps(f64::INFINITY).is_err());
    }

    #[test]
    fn divisors_follow_the_corrections() {
        use VarianceCorrection::*;
        assert_eq!(
            (
                Biased.divisor(4),
                Unbiased.divisor(4),
                UnbiasedClamped.divisor(4)
            ),
            (4.0, 3.0, 3.0)
        );
        assert_eq!(
            (
                Biased.divisor(1),
                Unbiased.divisor(1),
                UnbiasedClamped.divisor(1)
            ),
            (1.0, 0.0, 1.0)
        );
    }
}
