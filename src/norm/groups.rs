//! Per-sample group statistics and normalization: the one engine behind
//! [`GroupNorm`](super::GroupNorm) and [`InstanceNorm`](super::InstanceNorm).
//!
//! A sample of a tensor `[outer, C, inner]` with `P = outer / N` positions
//! per sample is `[P, C, inner]`; splitting its `C` channels into `G`
//! groups of consecutive channels makes it `[P, G, (C / G) · inner]`, a
//! tensor whose "channels" are the groups. So each sample's group
//! statistics are the per-channel kernels' result on that view, with no
//! new kernel: NCHW (`P = 1`) reads each group as one contiguous run,
//! NHWC (`inner = 1`) as lanes of `C / G` values in every row.

use alloc::vec;
use alloc::vec::Vec;

use super::{BatchStats, Layout, Normalizer, checks};
use crate::cumulative::moments::Moments;
use crate::{Element, Error, Float};

/// Checks that `groups` is a valid group count for `channels`.
pub(super) fn check_groups(groups: usize, channels: usize) -> Result<(), Error> {
    if groups == 0 {
        return Err(Error::parameter("groups", 0.0, "at least 1"));
    }
    if !channels.is_multiple_of(groups) {
        #[allow(
            clippy::cast_precision_loss,
            reason = "reported in the message; group counts are small"
        )]
        return Err(Error::parameter(
            "groups",
            groups as f64,
            "a divisor of the number of channels",
        ));
    }
    Ok(())
}

/// The statistics of every group of every sample of `xs` (shape `layout`,
/// `groups` dividing its channels), in sample-major order: sample 0's
/// groups, then sample 1's, and so on. With `parallel` (and the `rayon`
/// feature) on every rayon thread, bit for bit the same: each group's
/// statistics depend on its values alone.
///
/// # Errors
///
/// A slice that does not hold `layout`, or a bad group count.
pub(super) fn group_statistics<S: Element, F: Float>(
    xs: &[S],
    layout: Layout,
    groups: usize,
    parallel: bool,
) -> Result<BatchStats<F>, Error> {
    layout.check(xs.len())?;
    check_groups(groups, layout.channels())?;
    let (samples, positions) = (layout.samples(), layout.positions());
    let width = layout.channels() / groups * layout.inner();
    let per_sample = positions * groups * width;
    let count = (positions as u64).saturating_mul(width as u64);
    let moments: Vec<Moments<f64>> = if per_sample == 0 {
        vec![Moments::default(); samples * groups]
    } else if positions == 1 {
        // Channels first (NCHW): every group of every sample is one
        // contiguous run, so the whole tensor is one call with a channel
        // per group, the same bits as a call per sample. (A call per
        // sample cost a third of instance norm's time on 8×16 images.)
        channel_moments(xs, 1, samples * groups, width, parallel)
    } else {
        // Channels last: the samples in parallel, each on every thread too
        // when it is large enough.
        let sample = |x: &[S]| channel_moments(x, positions, groups, width, parallel);
        #[cfg(feature = "rayon")]
        if parallel {
            use rayon::prelude::*;
            let each: Vec<Vec<Moments<f64>>> =
                xs.par_chunks_exact(per_sample).map(sample).collect();
            return Ok(BatchStats::from_moments(count, each.concat()));
        }
        xs.chunks_exact(per_sample).flat_map(sample).collect()
    };
    Ok(BatchStats::from_moments(count, moments))
}

/// The kernels' per-channel moments, on every rayon thread when asked (and
/// built with `rayon`): the same bits either way.
fn channel_moments<S: Element>(
    xs: &[S],
    outer: usize,
    channels: usize,
    inner: usize,
    parallel: bool,
) -> Vec<Moments<f64>> {
    #[cfg(feature = "rayon")]
    if parallel {
        return crate::kernels::par_channel_moments(xs, outer, channels, inner);
    }
    let _ = parallel;
    crate::kernels::channel_moments(xs, outer, channels, inner)
}

/// Normalizes every sample of `xs` (shape `layout`) into `out` with its
/// groups' mean and biased variance from `stats` (as [`group_statistics`]
/// returns them), and the per-channel `gamma` and `beta`.
///
/// # Errors
///
/// Slices that do not hold `layout`, a bad group count, statistics of
/// another shape, a bad eps or affine vector.
#[allow(clippy::too_many_arguments, reason = "the layer's own arguments")]
pub(super) fn normalize_groups<F: Float>(
    xs: &[F],
    layout: Layout,
    groups: usize,
    stats: &BatchStats<F>,
    eps: F,
    gamma: Option<&[F]>,
    beta: Option<&[F]>,
    out: &mut [F],
) -> Result<(), Error> {
    layout.check(xs.len())?;
    if out.len() != xs.len() {
        return Err(Error::length("output", xs.len(), out.len()));
    }
    check_groups(groups, layout.channels())?;
    stats.check_usable()?;
    let expected = layout.samples() * groups;
    if stats.channels() != expected {
        return Err(Error::length(
            "statistics groups",
            expected,
            stats.channels(),
        ));
    }
    let channels = layout.channels();
    let per_group = channels / groups;
    let sample_layout = Layout::new(layout.positions(), channels, layout.inner())?;
    let per_sample = sample_layout.len();
    // A sample's groups' moments, one per channel: the normalizer takes
    // each mean as its shift and offset (see `Centre`).
    let spread = |groups: &[Moments<f64>]| -> Vec<Moments<f64>> {
        (0..channels)
            .map(|c| groups.get(c / per_group).copied().unwrap_or_default())
            .collect()
    };
    // Checked once, also for an empty tensor: eps and the affine lengths.
    checks::eps(eps)?;
    checks::optional_channel_len("gamma", gamma, channels)?;
    checks::optional_channel_len("beta", beta, channels)?;
    if per_sample == 0 {
        return Ok(());
    }
    let samples = xs
        .chunks_exact(per_sample)
        .zip(out.chunks_exact_mut(per_sample));
    for (n, (x, y)) in samples.enumerate() {
        let g = n * groups..(n + 1) * groups;
        let moments = spread(stats.moments().get(g).unwrap_or(&[]));
        Normalizer::from_moments(&moments, eps, gamma, beta)?.apply(x, sample_layout, y)?;
    }
    Ok(())
}
