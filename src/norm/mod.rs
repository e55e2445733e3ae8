//! Normalization layers — BatchNorm and layer, group and instance
//! normalization — forward and backward, with BatchNorm statistics that match
//! PyTorch, Keras, TensorFlow and cuDNN. (Also reachable as `momenta::batchnorm`,
//! its first name.)
//!
//! A BatchNorm layer keeps, per channel, a running mean and variance that
//! it updates from each training batch and normalizes with in evaluation.
//! Frameworks disagree on what "momentum" means, on which batch variance
//! goes into the running variance, on eps, and on one value per channel;
//! ported models then drift. This module makes each convention a value and
//! evaluates it exactly:
//!
//! - [`Layout`]: a row-major tensor seen as `[outer, channels, inner]`
//!   (NC, NCL, NCHW, NHWC);
//! - [`BatchStats`]: per-channel count, mean and M2 of a batch in one pass
//!   (in `f64`), the biased and unbiased variance, the saved inverse
//!   standard deviation, and an exact [`Merge`](crate::Merge) for
//!   synchronized BatchNorm, whose ranks exchange [`BatchStatsParts`]
//!   (lossless, plain `f64` vectors);
//! - [`BnConfig`]: the presets [`pytorch`](BnConfig::pytorch),
//!   [`keras`](BnConfig::keras), [`tf_fused`](BnConfig::tf_fused) and
//!   [`cudnn`](BnConfig::cudnn), each with its momentum convention
//!   ([`Momentum`](crate::Momentum)), eps and [`VarianceCorrection`];
//! - [`RunningStats`]: the running mean and variance, updated from
//!   `BatchStats` under a `BnConfig`, serializable;
//! - [`Normalizer`], [`normalize()`], [`normalize_in_place`]: training- and
//!   evaluation-mode normalization over any layout;
//! - [`scale_shift`] and [`fold_linear`]: evaluation-mode BatchNorm as an
//!   affine map, or folded into the preceding layer's weight and bias;
//! - [`GradSums`]: the backward pass — the per-channel sums `Σdy` and
//!   `Σdy·x̂` in one pass over the input and the output gradient, their
//!   merge for synchronized BatchNorm, and `dx`, `dγ`, `dβ`;
//! - the layers, each holding its one eps: [`BatchNorm`] (training mode,
//!   per channel), [`LayerNorm`] (per row of trailing features, or per
//!   sample over `(C, H, W)` in either memory order), [`InstanceNorm`]
//!   (per sample and channel, with PyTorch's running statistics) and
//!   [`GroupNorm`] (per sample and group of channels), for channels-first
//!   and channels-last tensors, on the same kernels;
//! - every layer's backward pass, PyTorch's autograd `dx`, `dγ`, `dβ`:
//!   `backward` on one process, or `grad_sums` (merged across the workers
//!   a layer's statistics span) then `grad_input`, all taking the
//!   arguments as one [`Backward`] and returning [`AffineGrads`];
//! - any [`Element`](crate::Element) type in and out (`f16`/`bf16` with the
//!   `half` feature): the `normalize_into` methods and every `dx` compute in
//!   `f64` and round once to the output's type;
//! - `ndarray` arrays and views (feature `ndarray`): `statistics_array`,
//!   `normalize_array` and `backward_array` on every layer.
//!
//! | framework | config | momentum | running variance | eps | n = 1 |
//! |---|---|---|---|---|---|
//! | PyTorch | `pytorch()` | `Factor(0.1)` | unbiased | 1e-5 | error |
//! | PyTorch `momentum=None` | `pytorch().with_momentum(Cumulative)` | 1/n | unbiased | 1e-5 | error |
//! | Keras 3, tf.keras non-fused | `keras()` | `Decay(0.99)` | biased | 1e-3 | variance 0 |
//! | tf.keras fused | `tf_fused()` | `Factor(1 − 0.99)` | M2/max(n−1, 1) | 1e-3 | variance 0 |
//! | cuDNN | `cudnn(f)` | `Factor(f)` | unbiased | ≥ 1e-5 | error |
//!
//! Normalization always uses the biased batch variance.
//!
//! # Where each piece lives
//!
//! | file | holds |
//! |---|---|
//! | `layout.rs` | [`Layout`] |
//! | `batch_stats.rs` | [`BatchStats`]: computing, reading, merging, serde |
//! | `config.rs` | [`BnConfig`], [`VarianceCorrection`], the presets |
//! | `running.rs` | [`RunningStats`]: state, update, serde |
//! | `normalize.rs` | [`Normalizer`], [`normalize()`], [`normalize_in_place`], and the `normalizer`/`normalize` methods of [`BatchStats`] and [`RunningStats`] |
//! | `fold.rs` | [`scale_shift`], [`fold_linear`], and the same as methods of [`RunningStats`] |
//! | `checks.rs` | the argument checks they share (lengths per channel, eps) |
//! | `array.rs` | `BatchStats::compute_axis` and the layers' `*_array` methods for `ndarray` views (feature `ndarray`) |
//! | `gradients.rs` | [`GradSums`]: the backward reductions, their merge, the gradients |
//! | `backward.rs` | [`Backward`], [`AffineGrads`], and the loop that writes every layer's `dx` |
//! | `batch_norm.rs` | [`BatchNorm`], the layer over [`BatchStats`] and [`GradSums`] |
//! | `groups.rs` | the per-sample group engine behind [`GroupNorm`] and [`InstanceNorm`]: statistics, normalization, backward sums and `dx` |
//! | `group_norm.rs`, `instance_norm.rs`, `layer_norm.rs` | [`GroupNorm`]; [`InstanceNorm`] and its running update; [`LayerNorm`] and its row-wise backward |
//!
//! # Example
//!
//! ```
//! use momenta::norm::{BatchStats, BnConfig, Layout, RunningStats};
//!
//! // A batch of 2 images, 3 channels, 2 × 2 pixels, channels first.
//! let xs: Vec<f32> = (0..24).map(|i| (i % 5) as f32).collect();
//! let layout = Layout::nchw(2, 3, 2, 2)?;
//!
//! // Training: statistics of the batch, running update, normalize.
//! let batch = BatchStats::<f32>::compute(&xs, layout)?;
//! let mut running = RunningStats::new(3, BnConfig::pytorch());
//! running.update(&batch)?;
//! let mut y = vec![0.0_f32; xs.len()];
//! batch.normalize(&xs, layout, running.config().eps(), None, None, &mut y)?;
//!
//! // Evaluation: normalize with the running statistics.
//! running.normalize(&xs, layout, None, None, &mut y)?;
//! assert_eq!(running.batches_tracked(), 1);
//! # Ok::<(), momenta::Error>(())
//! ```
//!
//! # Synchronized BatchNorm
//!
//! Each rank computes the statistics of its shard and sends
//! [`to_parts`](BatchStats::to_parts) — the count and three `f64` vectors
//! per batch, the whole state — to the others (an all-gather); each rank
//! rebuilds them with [`from_parts`](BatchStats::from_parts) and merges.
//! The result is bit for bit what one process merging the shards gets, for
//! `f32` statistics too. Sending the rounded means instead loses digits
//! when the mean is far larger than the spread.
//!
//! ```
//! use momenta::Merge;
//! use momenta::norm::{BatchStats, BatchStatsParts, BnConfig, Layout, RunningStats};
//!
//! // Rank 0 holds 1 sample, rank 1 holds 3, of 2 channels each (NC).
//! let shard0 = [1e4_f32, 0.5];
//! let shard1 = [1e4 + 0.0078125, 1.5, 1e4 + 0.015625, 2.5, 1e4, 3.5];
//! let mine = BatchStats::<f32>::compute(&shard1, Layout::nc(3, 2)?)?;
//!
//! // What rank 0 sent over the wire, and its rebuilt statistics.
//! let received: BatchStatsParts =
//!     BatchStats::<f32>::compute(&shard0, Layout::nc(1, 2)?)?.to_parts();
//! let mut all = BatchStats::<f32>::from_parts(received)?;
//! all.merge(&mine);
//! assert_eq!(all.count(), 4);
//! assert_eq!(all.mean()[1], 2.0);
//! // Channel 0: 1e4 + {0, 1/128, 1/64, 0}, exactly; variance 11/2¹⁸.
//! assert_eq!(all.variance()[0], 11.0 / 262_144.0);
//!
//! let mut running = RunningStats::new(2, BnConfig::pytorch());
//! running.update(&all)?;
//! # Ok::<(), momenta::Error>(())
//! ```

#[cfg(feature = "ndarray")]
mod array;
mod backward;
mod batch_norm;
mod batch_stats;
mod checks;
mod config;
mod fold;
mod gradients;
mod group_norm;
mod groups;
mod instance_norm;
mod layer_norm;
mod layout;
mod normalize;
mod running;

pub use backward::{AffineGrads, Backward};
pub use batch_norm::BatchNorm;
pub use batch_stats::{BatchStats, BatchStatsParts};
pub use config::{BnConfig, CUDNN_BN_MIN_EPSILON, VarianceCorrection};
pub use fold::{fold_linear, scale_shift};
pub use gradients::{GradSums, GradSumsParts};
pub use group_norm::GroupNorm;
pub use instance_norm::InstanceNorm;
pub use layer_norm::LayerNorm;
pub use layout::Layout;
pub use normalize::{Normalizer, normalize, normalize_in_place};
pub use running::RunningStats;
