//! The integration tests: one binary (one link), a module per subject.
//!
//! Expected values come from independent math — exact rational or integer
//! arithmetic, naive formulas on small data, and the frameworks' reference
//! vectors — never from the code under test.
//!
//! The case counts and sizes named below are the full ones, which
//! `MOMENTA_LONG_TESTS=1` asks for (CI sets it); by default the long
//! sweeps and stress sizes run the same checks smaller
//! (`support::long`).

extern crate alloc;

#[path = "../support/mod.rs"]
mod support;

/// The public contract: every name, auto traits and std traits.
mod api;
/// BatchNorm's backward pass against PyTorch autograd, synchronized
/// workers, its laws and hostile input.
mod backward;
/// BatchNorm statistics against the frameworks' reference vectors.
mod batchnorm;
/// The laws of BatchNorm merges, thread counts, layouts and checkpoints,
/// 10 000 quickcheck cases each.
mod batchnorm_laws;
/// Huge values that cancel, through every window's compensated sums: the
/// mean at every push against an exact fixed-point sum.
mod cancelling;
/// Every serializable state saved at every position of a hostile stream,
/// through JSON and postcard, continues bit for bit.
mod checkpoint;
/// `Covariance` against exact and numpy values on every path, its laws,
/// hostile input and checkpoints.
mod covariance;
/// `Ema`, `EwVariance` and `Momentum` against closed forms and reference
/// values in both conventions.
mod ema;
/// pandas' and polars' exponential options (adjust, bias, cov, corr,
/// ignore_na, min_periods, irregular time) against recorded values, the
/// laws of the clock and the NaN policies, hostile clocks.
mod ewm;
/// Mean and variance against exact rational arithmetic.
mod exact;
/// Checkpoints of the exact sums: continued bit for bit after every
/// prefix of a hostile stream, and the states no values leave refused.
mod exact_checkpoint;
/// `ExactSums`: exact rationals, any order, refusals.
mod exact_sums;
/// Inputs the fuzz targets found, replayed.
mod fuzz_regressions;
/// Half-precision tensors through the kernels (feature `half`).
mod half;
/// The input-policy table: every hostile input on every route.
mod hostile;
/// The slice kernels against exact references, and thread-count
/// independence.
mod kernels;
/// The laws of `Merge` and `Accumulator` for the core types, 10 000
/// quickcheck cases each.
mod laws;
/// The crate's plan from its source: no import circle between files, no
/// folder using one above it.
mod layers;
/// `MinMax`: zeros, NaN, thread counts, parts.
mod min_max;
/// `MovingStats` against exact rational arithmetic on hostile data, history
/// independence, and agreement with the single-statistic windows.
mod moving_stats;
/// The MPI transport in one process (feature `mpi`).
mod mpi;
/// `ndarray` views along any axis (feature `ndarray`).
mod ndarray;
/// The backward pass of every normalization layer against PyTorch autograd
/// and exact references, synchronized workers, laws and hostile input.
mod norm_backward;
/// LayerNorm, InstanceNorm and GroupNorm against PyTorch, both layouts,
/// their laws and hostile input.
mod norm_layers;
/// Every normalization against its per-value formula, bit for bit, in
/// every shape and element type; the fused passes' statistics.
mod norm_passes;
/// Data whose first value is not typical: no statistic less accurate than
/// the naive two-pass.
mod outliers;
/// Values recorded from pandas for `quantiles`.
mod pandas_quantiles;
/// Values recorded from pandas for `signals`.
mod pandas_signals;
/// Values recorded from pandas for `time_windows`.
mod pandas_time;
/// Every `interpolation` of pandas' rolling and time-based quantiles, bit
/// for bit, and the naive sort under every option.
mod quantiles;
/// A failed restore names the field and the value it could not read.
mod restore_errors;
/// A restored state holds NaN and ±∞ only where streams put them.
mod restore_limits;
/// Checkpoint and restore of the core accumulators.
mod serde_core;
/// The whole-series slice APIs against the push loop, pandas and hostile
/// data.
mod series;
/// `Skewness` and `Kurtosis` against exact values and scipy/pandas.
mod shape;
/// The laws of `Skewness`, `Kurtosis` and `MinMax`, 10 000 quickcheck
/// cases each.
mod shape_laws;
/// Rolling min/max, quantiles, time windows and skipped NaN against
/// pandas, naive recomputation and quickcheck.
mod signals;
/// Time windows' `closed` ends, the time-based quantile and the z-score of
/// a reading against a window or an EW statistic, against pandas.
mod time_windows;
/// `WeightedMean` and `WeightedVariance` against exact and numpy values,
/// their laws, hostile weights and checkpoints.
mod weighted;
/// Moving windows against exact fractions and naive recomputation.
mod window;
/// Moving windows fed for ever: no drift.
mod window_drift;
