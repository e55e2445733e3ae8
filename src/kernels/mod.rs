//! Slice reductions to raw moments, accumulated in `f64` whatever the
//! element type.

use crate::Float;
use crate::moments::Moments;

/// Raw moments of `xs`, in `f64`.
pub(crate) fn moments<S: Float>(xs: &[S]) -> Moments<f64> {
    let mut m = Moments::default();
    for &x in xs {
        m.push(x.as_f64());
    }
    m
}

/// Per-channel raw moments of a row-major tensor seen as
/// `[outer, channels, inner]`. The caller guarantees
/// `xs.len() == outer * channels * inner`.
pub(crate) fn channel_moments<S: Float>(
    xs: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
) -> alloc::vec::Vec<Moments<f64>> {
    debug_assert_eq!(xs.len(), outer * channels * inner);
    let mut out = alloc::vec![Moments::default(); channels];
    if inner == 0 {
        return out;
    }
    for (i, row) in xs.chunks_exact(inner).enumerate() {
        let c = i % channels;
        out[c].merge(&moments(row));
    }
    out
}

/// Raw moments of `xs` on every rayon thread. The result must not depend
/// on the number of threads.
#[cfg(feature = "rayon")]
pub(crate) fn par_moments<S: Float>(xs: &[S]) -> Moments<f64> {
    moments(xs)
}

/// [`channel_moments`] on every rayon thread; the result must not depend on
/// the number of threads.
#[cfg(feature = "rayon")]
pub(crate) fn par_channel_moments<S: Float>(
    xs: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
) -> alloc::vec::Vec<Moments<f64>> {
    channel_moments(xs, outer, channels, inner)
}
