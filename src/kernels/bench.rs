//! Entry points for the crate's own benchmarks (feature `bench-internals`,
//! hidden, not part of the API): the per-channel kernels, until the
//! batchnorm module gives them a public face.

use crate::Float;
use alloc::vec::Vec;

/// `(count, mean, M2)` of every channel of `[outer, channels, inner]` data.
///
/// ```
/// let s = momenta::__bench::channel_stats(&[1.0_f32, 10.0, 3.0, 30.0], 2, 2, 1);
/// assert_eq!(s[0], (2, 2.0, 2.0));
/// ```
pub fn channel_stats<S: Float>(
    xs: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
) -> Vec<(u64, f64, f64)> {
    super::channel_moments(xs, outer, channels, inner)
        .iter()
        .map(|m| (m.count, m.mean().unwrap_or(f64::NAN), m.m2()))
        .collect()
}

/// [`channel_stats`] on every rayon thread.
///
/// ```
/// let s = momenta::__bench::par_channel_stats(&[1.0_f32, 10.0, 3.0, 30.0], 2, 2, 1);
/// assert_eq!(s[1], (2, 20.0, 200.0));
/// ```
#[cfg(feature = "rayon")]
pub fn par_channel_stats<S: Float>(
    xs: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
) -> Vec<(u64, f64, f64)> {
    super::par_channel_moments(xs, outer, channels, inner)
        .iter()
        .map(|m| (m.count, m.mean().unwrap_or(f64::NAN), m.m2()))
        .collect()
}
