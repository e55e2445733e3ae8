//! Running (moving) mean and variance, updated from batch statistics.

use alloc::vec::Vec;

use super::{BatchStats, BnConfig};
use crate::error::ErrorKind;
use crate::{Error, Float, Momentum};

/// A BatchNorm layer's running mean and variance (Keras: moving mean and
/// variance), updated from each training batch's [`BatchStats`] under one
/// framework's [`BnConfig`], and used to normalize in evaluation mode.
///
/// Each [`update`](RunningStats::update) takes, per channel, the batch mean
/// and the batch variance with the configuration's
/// [`VarianceCorrection`](super::VarianceCorrection), and averages them in
/// with the framework's own formula ([`Momentum::blend`]; for `Decay`,
/// Keras' two weights, see [`BnConfig::keras`]).
///
/// # Accuracy
///
/// The blend is evaluated in `f64` from the `f64` batch statistics and
/// rounded to `F` once, so each update is the exact blend of the stored
/// running value and the batch statistic correctly rounded (up to the
/// `f64` roundings, ~1e-9 of an `f32` ulp). The
/// stored value is `F`, though, and its roundings add up over updates, as
/// in any framework that keeps `f32` running statistics. Measured
/// (`running_statistics_drift_over_many_updates` in `tests/momenta/batchnorm.rs`,
/// 1000 `f32` updates against the same recurrence evaluated exactly):
///
/// - momentum 0.1 (PyTorch): within 2 ulps at every step, 0.1–0.6 ulp at
///   the end; PyTorch's documented update `(1 − m)·r + m·b` evaluated on
///   `float32` tensors (emulated in numpy; torch itself not run) ends 3–5
///   ulps from exact. PyTorch's CPU kernel blends in double and rounds
///   once, as this crate does.
/// - momentum 0.99 (Keras): within 6.1 ulps at every step, 2–2.7 at the
///   end; Keras 3's `float32` arithmetic (three roundings per update,
///   emulated in numpy) ends 3.4–8 ulps from exact.
///
/// So results agree with a framework to within a few ulps of `F`, not bit
/// for bit: frameworks also compute the batch statistics themselves, in
/// `f32` and in their own summation order (PyTorch forms the unbiased
/// variance as `var·n/(n − 1)` where this crate divides M2 by `n − 1`).
/// The tests check the reference vectors at a relative 1e-6.
///
/// State is `F`; a checkpoint (with the `serde` feature) holds the running
/// mean and variance, the number of batches seen and the configuration, and
/// a restored value continues bit for bit like the original, in any format
/// ([Checkpoints](crate#checkpoints)).
///
/// # Example
///
/// ```
/// use momenta::norm::{BatchStats, BnConfig, Layout, RunningStats};
///
/// // Values recorded from PyTorch: BatchNorm1d(3) on x of shape (4, 3, 4), defaults.
/// let xs: Vec<f64> = (0..48).map(|i| f64::from(i % 12 + 1 + i / 12)).collect();
/// let batch = BatchStats::<f64>::compute(&xs, Layout::ncl(4, 3, 4)?)?;
/// let mut running = RunningStats::new(3, BnConfig::pytorch());
/// running.update(&batch)?;
/// assert!((running.mean()[0] - 0.4).abs() < 1e-12);
/// assert!((running.var()[2] - 0.9 - 0.1 * 8.0 / 3.0).abs() < 1e-12);
/// assert_eq!(running.batches_tracked(), 1);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(into = "RunningStatsState<F>", bound = "F: Float")
)]
pub struct RunningStats<F> {
    mean: Vec<F>,
    var: Vec<F>,
    batches_tracked: u64,
    config: BnConfig<F>,
}

#[cfg(feature = "serde")]
crate::checkpoint::path::restore_from!([F: Float] RunningStats<F>, RunningStatsState<F>);

/// One running update of the `t`-th batch, in `f64`, as the momentum's
/// frameworks evaluate it.
#[derive(Clone, Copy)]
enum Blend {
    /// Keras: `old·β + new·α`, with Keras' two weights.
    Weights { old: f64, new: f64 },
    /// PyTorch, cuDNN, TensorFlow's fused kernel: [`Momentum::blend`].
    Momentum(Momentum<f64>, u64),
}

impl Blend {
    fn new<F: Float>(momentum: Momentum<F>, t: u64) -> Self {
        match momentum {
            Momentum::Decay(beta) => Self::Weights {
                old: beta.as_f64(),
                new: keras_complement(beta),
            },
            Momentum::Factor(alpha) => Self::Momentum(Momentum::Factor(alpha.as_f64()), t),
            Momentum::Cumulative => Self::Momentum(Momentum::Cumulative, t),
            // PyTorch's form with β = 2^(−1/h), computed once per update.
            Momentum::HalfLife(_) => Self::Momentum(Momentum::Decay(momentum.decay(1).as_f64()), t),
        }
    }

    fn apply(self, old: f64, new: f64) -> f64 {
        match self {
            Self::Weights { old: b, new: a } => old * b + new * a,
            Self::Momentum(m, t) => m.blend(old, new, t),
        }
    }
}

/// Keras' weight of the batch for a momentum `β` of type `F`.
///
/// Keras evaluates `moving·m + batch·(1 − m)` on tensors of the variable's
/// dtype with `m` a Python float: `1 − m` is computed in `f64`, then both
/// weights are rounded to the dtype. For `f64` that is `1 − β`. An `f32`
/// `β` has lost the Python float, and `1 − β` computed from it is off by
/// ten `f32` ulps for 0.99 (`1 − 0.99_f32 = 0.0099999905`, where Keras has
/// `float32(1 − 0.99) = 0.0099999998`); the Python float is taken to be
/// the shortest decimal that rounds to `β` (0.99 for `0.99_f32`) — what a
/// Keras user writes.
fn keras_complement<F: Float>(beta: F) -> f64 {
    let python = alloc::format!("{beta}")
        .parse::<f64>()
        .unwrap_or(beta.as_f64());
    F::from_f64(1.0 - python).as_f64()
}

fn check_state<F: Float>(mean: &[F], var: &[F]) -> Result<(), Error> {
    if mean.len() != var.len() {
        return Err(Error::length("running variance", mean.len(), var.len()));
    }
    if let Some(v) = var.iter().find(|v| **v < F::zero()) {
        return Err(Error::state(alloc::format!(
            "running variance must be non-negative, got {v:?}"
        )));
    }
    Ok(())
}

impl<F: Float> RunningStats<F> {
    /// Fresh running statistics for `channels` channels: mean 0 and
    /// variance 1, as every framework initializes them, no batches seen.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// let r = RunningStats::<f32>::new(2, BnConfig::keras());
    /// assert_eq!((r.mean(), r.var()), (&[0.0, 0.0][..], &[1.0, 1.0][..]));
    /// ```
    #[must_use]
    pub fn new(channels: usize, config: BnConfig<F>) -> Self {
        Self {
            mean: alloc::vec![F::zero(); channels],
            var: alloc::vec![F::one(); channels],
            batches_tracked: 0,
            config,
        }
    }

    /// Running statistics that start from given values — a framework's
    /// checkpoint, or Keras' `moving_mean_initializer` /
    /// `moving_variance_initializer` — with no batches seen (see
    /// [`with_batches_tracked`](RunningStats::with_batches_tracked)).
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`] naming `running variance` when `var`
    ///   and `mean` differ in length;
    /// - [`ErrorKind::InvalidState`] when a variance is negative. (NaN is
    ///   accepted, as it propagates everywhere in the crate.)
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// let r = RunningStats::with_state(&[1.0, 1.0], &[1.0, 1.0], BnConfig::<f64>::keras())?;
    /// assert_eq!(r.mean(), &[1.0, 1.0]);
    /// assert!(RunningStats::with_state(&[0.0], &[-1.0], BnConfig::<f64>::keras()).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn with_state(mean: &[F], var: &[F], config: BnConfig<F>) -> Result<Self, Error> {
        check_state(mean, var)?;
        Ok(Self {
            mean: mean.to_vec(),
            var: var.to_vec(),
            batches_tracked: 0,
            config,
        })
    }

    /// The same state with the number of batches seen set to `n`, e.g.
    /// PyTorch's `num_batches_tracked` from a `state_dict` — which matters
    /// for [`Momentum::Cumulative`].
    ///
    /// ```
    /// use momenta::Momentum;
    /// use momenta::norm::{BatchStats, BnConfig, Layout, RunningStats};
    /// let config = BnConfig::<f64>::pytorch().with_momentum(Momentum::Cumulative)?;
    /// // The cumulative mean of 3 batches is 4; a 4th batch with mean 8 makes it 5.
    /// let mut r = RunningStats::with_state(&[4.0], &[1.0], config)?.with_batches_tracked(3);
    /// r.update(&BatchStats::compute(&[7.0, 9.0], Layout::nc(2, 1)?)?)?;
    /// assert_eq!(r.mean(), &[5.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn with_batches_tracked(self, n: u64) -> Self {
        Self {
            batches_tracked: n,
            ..self
        }
    }

    /// Averages one training batch's statistics into the running ones.
    ///
    /// The running mean takes the batch mean; the running variance takes
    /// `M2 / divisor(n)` per the configuration's
    /// [`VarianceCorrection`](super::VarianceCorrection). With
    /// [`Momentum::Cumulative`] the weight of the new batch is
    /// `1/batches_tracked` after counting it. On error nothing changes.
    ///
    /// `batch` has the running statistics' float type. Statistics of the
    /// other type convert losslessly with
    /// [`BatchStats::convert`]: `running.update(&batch_f64.convert())`.
    /// (A generic `update` would break the common
    /// `running.update(&BatchStats::compute(&xs, layout)?)`, whose float
    /// type is inferred from `update`.)
    ///
    /// # Errors
    ///
    /// - [`ErrorKind::LengthMismatch`] naming `batch channels` when the
    ///   batch has a different number of channels;
    /// - [`ErrorKind::TooFewValues`] when the batch has fewer values per
    ///   channel than the correction needs: one for the biased and clamped
    ///   corrections, two for the unbiased one (PyTorch: "expected more
    ///   than 1 value per channel when training");
    /// - [`ErrorKind::InvalidState`] when the batch statistics are
    ///   [poisoned](BatchStats::is_poisoned) by a mismatched merge.
    ///
    /// ```
    /// use momenta::norm::{BatchStats, BnConfig, Layout, RunningStats};
    /// let one = BatchStats::<f32>::compute(&[0.5_f32, 2.0], Layout::nc(1, 2)?)?;
    /// let mut torch = RunningStats::new(2, BnConfig::pytorch());
    /// let err = torch.update(&one).unwrap_err();
    /// assert_eq!(err.to_string(), "expected at least 2 values per channel, got 1");
    /// let mut keras = RunningStats::new(2, BnConfig::keras());
    /// keras.update(&one)?; // biased variance: 0
    /// assert_eq!(keras.var(), &[0.99, 0.99]);
    ///
    /// // f64 batch statistics into f32 running statistics.
    /// let wide = BatchStats::<f64>::compute(&[1.0, 2.0, 3.0, 4.0], Layout::nc(2, 2)?)?;
    /// torch.update(&wide.convert())?;
    /// assert_eq!(torch.mean(), &[0.2, 0.3]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn update(&mut self, batch: &BatchStats<F>) -> Result<(), Error> {
        batch.check_usable()?;
        if batch.channels() != self.channels() {
            return Err(Error::length(
                "batch channels",
                self.channels(),
                batch.channels(),
            ));
        }
        let correction = self.config.correction();
        let n = batch.count();
        let needed = correction.min_count();
        if n < needed {
            return Err(Error::from(ErrorKind::TooFewValues { needed, actual: n }));
        }
        let divisor = correction.divisor(n);
        let moments = batch.moments();
        let mean: Vec<f64> = moments
            .iter()
            .map(|m| m.mean().unwrap_or(f64::NAN))
            .collect();
        let var: Vec<f64> = moments.iter().map(|m| m.m2() / divisor).collect();
        self.blend_in(&mean, &var)
    }

    /// Blends one batch's per-channel mean and variance (already corrected)
    /// into the running statistics with the configuration's momentum, and
    /// counts the batch: the step every running update shares.
    pub(super) fn blend_in(&mut self, mean: &[f64], var: &[f64]) -> Result<(), Error> {
        super::checks::channel_len("batch channels", mean, self.channels())?;
        super::checks::channel_len("batch channels", var, self.channels())?;
        let t = self.batches_tracked.saturating_add(1);
        let blend = Blend::new(self.config.momentum(), t);
        let running = self.mean.iter_mut().zip(self.var.iter_mut());
        for ((r_mean, r_var), (&b_mean, &b_var)) in running.zip(mean.iter().zip(var)) {
            *r_mean = F::from_f64(blend.apply(r_mean.as_f64(), b_mean));
            *r_var = F::from_f64(blend.apply(r_var.as_f64(), b_var));
        }
        self.batches_tracked = t;
        Ok(())
    }

    /// The running means.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// assert_eq!(RunningStats::<f64>::new(1, BnConfig::pytorch()).mean(), &[0.0]);
    /// ```
    #[must_use]
    pub fn mean(&self) -> &[F] {
        &self.mean
    }

    /// The running variances.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// assert_eq!(RunningStats::<f64>::new(1, BnConfig::pytorch()).var(), &[1.0]);
    /// ```
    #[must_use]
    pub fn var(&self) -> &[F] {
        &self.var
    }

    /// The number of successful updates (PyTorch's `num_batches_tracked`).
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// assert_eq!(RunningStats::<f64>::new(1, BnConfig::pytorch()).batches_tracked(), 0);
    /// ```
    #[must_use]
    pub fn batches_tracked(&self) -> u64 {
        self.batches_tracked
    }

    /// The number of channels.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// assert_eq!(RunningStats::<f64>::new(4, BnConfig::pytorch()).channels(), 4);
    /// ```
    #[must_use]
    pub fn channels(&self) -> usize {
        self.mean.len()
    }

    /// The configuration.
    ///
    /// ```
    /// use momenta::norm::{BnConfig, RunningStats};
    /// let r = RunningStats::<f64>::new(4, BnConfig::keras());
    /// assert_eq!(r.config(), &BnConfig::keras());
    /// ```
    #[must_use]
    pub fn config(&self) -> &BnConfig<F> {
        &self.config
    }
}

/// The serialized form of a [`RunningStats`], validated on the way in.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
struct RunningStatsState<F> {
    #[serde(with = "crate::checkpoint::float::seq")]
    mean: Vec<F>,
    #[serde(with = "crate::checkpoint::float::seq")]
    var: Vec<F>,
    batches_tracked: u64,
    config: BnConfig<F>,
}

#[cfg(feature = "serde")]
impl<F: Float> TryFrom<RunningStatsState<F>> for RunningStats<F> {
    type Error = Error;
    fn try_from(s: RunningStatsState<F>) -> Result<Self, Error> {
        check_state(&s.mean, &s.var)?;
        Ok(Self {
            mean: s.mean,
            var: s.var,
            batches_tracked: s.batches_tracked,
            config: s.config,
        })
    }
}

#[cfg(feature = "serde")]
impl<F> From<RunningStats<F>> for RunningStatsState<F> {
    fn from(r: RunningStats<F>) -> Self {
        Self {
            mean: r.mean,
            var: r.var,
            batches_tracked: r.batches_tracked,
            config: r.config,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::norm::Layout;
    use alloc::string::ToString;

    #[test]
    fn failed_updates_change_nothing() {
        let mut r = RunningStats::<f64>::new(2, BnConfig::pytorch());
        let before = r.clone();
        let three = BatchStats::compute(&[1.0, 2.0, 3.0], Layout::nc(1, 3).unwrap()).unwrap();
        assert!(r.update(&three).is_err());
        let one = BatchStats::compute(&[1.0, 2.0], Layout::nc(1, 2).unwrap()).unwrap();
        assert!(r.update(&one).is_err());
        assert_eq!(r, before);
    }

    #[test]
    fn factor_one_takes_the_batch() {
        // Momentum 1 → the running stats are the batch's (PyTorch's BatchNorm1d(4, momentum=1) reference, in miniature).
        let config = BnConfig::<f64>::pytorch()
            .with_momentum(Momentum::Factor(1.0))
            .unwrap();
        let mut r = RunningStats::new(1, config);
        r.update(&BatchStats::compute(&[2.0, 2.0, -4.0], Layout::nc(3, 1).unwrap()).unwrap())
            .unwrap();
        assert_eq!((r.mean()[0], r.var()[0]), (0.0, 12.0));
    }

    #[test]
    fn with_state_checks_lengths() {
        let e =
            RunningStats::with_state(&[0.0, 1.0], &[1.0], BnConfig::<f64>::keras()).unwrap_err();
        assert_eq!(e.to_string(), "running variance must have length 2, got 1");
        assert!(RunningStats::with_state(&[0.0], &[f64::NAN], BnConfig::<f64>::keras()).is_ok());
        assert!(
            RunningStats::with_state(&[0.0], &[f64::NEG_INFINITY], BnConfig::<f64>::keras())
                .is_err()
        );
    }
}
