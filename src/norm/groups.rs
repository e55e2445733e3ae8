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

use super::backward::{AffineGrads, Backward, DxCoefficients, check_gamma, rstd, write_dx};
use super::batch_stats::RowStats;
use super::normalize::{Centre, FUSED_VALUES, apply_entries};
use super::{BatchStats, GradSums, Layout, checks};
use crate::kernels::affine::{Affine, Pass, streams};
use crate::moments::Moments;
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

/// The argument checks of a fused normalization, in the order the
/// statistics and then the normalization made them: the data, the
/// groups, the output, eps, γ and β.
#[allow(clippy::too_many_arguments, reason = "the layer's own arguments")]
fn check_fused<S, O, F: Float>(
    xs: &[S],
    layout: Layout,
    groups: usize,
    eps: F,
    gamma: Option<&[F]>,
    beta: Option<&[F]>,
    out: &[O],
) -> Result<(), Error> {
    layout.check(xs.len())?;
    check_groups(groups, layout.channels())?;
    if out.len() != xs.len() {
        return Err(Error::length("output", xs.len(), out.len()));
    }
    checks::eps(eps)?;
    checks::optional_channel_len("gamma", gamma, layout.channels())?;
    checks::optional_channel_len("beta", beta, layout.channels())?;
    Ok(())
}

/// The statistics of every group of every sample of `xs` (as
/// [`group_statistics`] gives them, bit for bit), taken a chunk of samples
/// at a time, with `each(chunk's moments, its values, its output, the
/// chunks' length in bytes)` called on each chunk right after its
/// statistics, while it is in cache: the tensor is read from memory once
/// (and `each` may ask for the next chunk as it goes). A chunk is about
/// [`FUSED_VALUES`] values of whole samples; channels first, an even
/// number of groups (the pair kernel's pairs stay those of the whole
/// tensor).
///
/// The caller has made [`check_fused`]'s checks.
fn fused<S: Element, O, F: Float>(
    xs: &[S],
    layout: Layout,
    groups: usize,
    out: &mut [O],
    mut each: impl FnMut(&[Moments<f64>], &[S], &mut [O], usize),
) -> BatchStats<F> {
    let (samples, positions) = (layout.samples(), layout.positions());
    let width = layout.channels() / groups * layout.inner();
    let per_sample = positions * groups * width;
    let count = (positions as u64).saturating_mul(width as u64);
    if per_sample == 0 {
        return BatchStats::from_moments(count, vec![Moments::default(); samples * groups]);
    }
    let mut per_chunk = (FUSED_VALUES / per_sample).max(1);
    if groups % 2 == 1 {
        per_chunk = per_chunk.next_multiple_of(2);
    }
    let mut stats = RowStats::new(count, samples * groups);
    let chunks = xs
        .chunks(per_chunk * per_sample)
        .zip(out.chunks_mut(per_chunk * per_sample));
    let ahead = core::mem::size_of_val(xs.get(..per_chunk * per_sample).unwrap_or(xs));
    for (x, y) in chunks {
        let moments = if positions == 1 {
            // Channels first: every group one run, as `group_statistics`
            // reads the whole tensor.
            stats.push_rows(x, width)
        } else {
            let sample = |s: &[S]| crate::kernels::channel_moments(s, positions, groups, width);
            stats.push_moments(x.chunks_exact(per_sample).flat_map(sample))
        };
        each(moments, x, y, ahead);
    }
    stats.finish()
}

/// The channels' entries of a chunk of samples: for channel `c` of each
/// sample, `entry(centre, √(var + eps), c)` of its group's moments.
fn chunk_entries<T>(
    moments: &[Moments<f64>],
    groups: usize,
    channels: usize,
    eps: f64,
    mut entry: impl FnMut(Centre, f64, usize) -> T,
    out: &mut Vec<T>,
) {
    out.clear();
    let per_group = channels / groups;
    for sample in moments.chunks_exact(groups) {
        for (g, m) in sample.iter().enumerate() {
            let centre = Centre::of(m);
            let root = num_traits::Float::sqrt(m.variance(0).unwrap_or(f64::NAN) + eps);
            for c in g * per_group..(g + 1) * per_group {
                out.push(entry(centre, root, c));
            }
        }
    }
}

/// Group normalization of `xs` (shape `layout`) into `out` in `F`, per
/// channel `(x − mean)·scale + offset` as [`Normalizer`](super::Normalizer) computes it, with
/// the statistics of each chunk of samples taken just before (see
/// [`fused`]); returns the statistics.
///
/// # Errors
///
/// Slices that do not hold `layout`, a bad group count, a bad eps or
/// affine vector.
#[allow(clippy::too_many_arguments, reason = "the layer's own arguments")]
pub(super) fn normalize_fused<F: Float>(
    xs: &[F],
    layout: Layout,
    groups: usize,
    eps: F,
    gamma: Option<&[F]>,
    beta: Option<&[F]>,
    out: &mut [F],
) -> Result<BatchStats<F>, Error> {
    check_fused(xs, layout, groups, eps, gamma, beta, out)?;
    let (channels, inner, positions) = (layout.channels(), layout.inner(), layout.positions());
    let per_sample = positions * channels * inner;
    let epsilon = eps.as_f64();
    let param = |v: Option<&[F]>, c: usize, default: f64| {
        v.and_then(|v| v.get(c)).map_or(default, |x| x.as_f64())
    };
    let mut entries: Vec<(F, F, F)> = Vec::new();
    let mut split: [Vec<F>; 3] = Default::default();
    let stats = fused(xs, layout, groups, out, |moments, x, y, _| {
        // `Normalizer`'s entries: the scale γ/√(var + eps) in `f64`, the
        // mean rounded to `F` and what it leaves joining β.
        let entry = |centre: Centre, root: f64, c: usize| {
            let scale = param(gamma, c, 1.0) / root;
            let (mean, offset) = centre.split::<F>(scale, param(beta, c, 0.0));
            (mean, F::from_f64(scale), offset)
        };
        chunk_entries(moments, groups, channels, epsilon, entry, &mut entries);
        // As three vectors, which the loops read in step (a vector of
        // triples kept the channels-last loop from vectorising).
        let [mean, scale, offset] = &mut split;
        for v in [&mut *mean, &mut *scale, &mut *offset] {
            v.clear();
        }
        for &(m, s, b) in &entries {
            mean.push(m);
            scale.push(s);
            offset.push(b);
        }
        let [mean, scale, offset] = &split;
        if positions == 1 {
            apply_native([mean, scale, offset], x, inner, y);
        } else {
            let samples = x
                .chunks_exact(per_sample)
                .zip(y.chunks_exact_mut(per_sample));
            for (n, (x, y)) in samples.enumerate() {
                let range = n * channels..(n + 1) * channels;
                let entries = [&mean[range.clone()], &scale[range.clone()], &offset[range]];
                for (x, y) in x
                    .chunks_exact(channels * inner)
                    .zip(y.chunks_exact_mut(channels * inner))
                {
                    apply_native(entries, x, inner, y);
                }
            }
        }
    });
    Ok(stats)
}

/// `(x − mean)·scale + offset` in `F` over runs of `inner` values, run `r`
/// with entry `r` of `[mean, scale, offset]` (as [`Normalizer::apply`]
/// computes it).
///
/// [`Normalizer::apply`]: super::Normalizer::apply
fn apply_native<F: Float>(entries: [&[F]; 3], xs: &[F], inner: usize, out: &mut [F]) {
    let [mean, scale, offset] = entries;
    let params = mean.iter().zip(scale).zip(offset);
    if inner == 1 {
        for ((y, &x), ((&m, &s), &b)) in out.iter_mut().zip(xs).zip(params) {
            *y = (x - m) * s + b;
        }
        return;
    }
    let runs = xs.chunks_exact(inner).zip(out.chunks_exact_mut(inner));
    for ((x, y), ((&m, &s), &b)) in runs.zip(params) {
        for (y, &x) in y.iter_mut().zip(x) {
            *y = (x - m) * s + b;
        }
    }
}

/// The group of every channel of a sample, and the geometry of one
/// sample, for the backward pass and the wide normalization.
#[derive(Clone, Copy)]
struct Geometry {
    samples: usize,
    channels: usize,
    groups: usize,
    per_group: usize,
    inner: usize,
    /// Values per sample: `positions · channels · inner`.
    len: usize,
}

impl Geometry {
    /// The geometry of `layout` in `groups` groups, checked.
    fn new(layout: Layout, groups: usize) -> Result<Self, Error> {
        check_groups(groups, layout.channels())?;
        let channels = layout.channels();
        Ok(Self {
            samples: layout.samples(),
            channels,
            groups,
            per_group: channels / groups,
            inner: layout.inner(),
            len: layout.positions() * channels * layout.inner(),
        })
    }

    /// Checks that `stats` has one group per group of every sample.
    fn check_stats<F: Float>(&self, stats: &BatchStats<F>) -> Result<(), Error> {
        stats.check_usable()?;
        let expected = self.samples * self.groups;
        if stats.channels() == expected {
            Ok(())
        } else {
            Err(Error::length(
                "statistics groups",
                expected,
                stats.channels(),
            ))
        }
    }

    /// The group statistics' index of channel `c` of sample `n`.
    fn group_of(&self, n: usize, c: usize) -> usize {
        n * self.groups + c / self.per_group
    }
}

/// `(Σdy, Σdy·(x − shift))` for every channel of every sample
/// (sample-major), each about its group's shift in `stats`: the
/// per-channel grad kernel on each sample seen as `[P, C, inner]` — or,
/// channels first, on the whole tensor seen as `[1, N·C, inner]`.
#[cfg_attr(
    not(feature = "rayon"),
    allow(unused_variables, reason = "only the rayon build runs in parallel")
)]
fn channel_grad_sums<S: Element, F: Float>(
    xs: &[S],
    dy: &[S],
    geometry: Geometry,
    positions: usize,
    stats: &BatchStats<F>,
    parallel: bool,
) -> (Vec<f64>, Vec<f64>) {
    let moments = stats.moments();
    let centre: Vec<f64> = (0..geometry.samples * geometry.channels)
        .map(|i| {
            let (n, c) = (i / geometry.channels.max(1), i % geometry.channels.max(1));
            moments
                .get(geometry.group_of(n, c))
                .map_or(f64::NAN, |m| m.shift)
        })
        .collect();
    let kernel = |x: &[S], g: &[S], outer: usize, channels: usize, centre: &[f64]| {
        #[cfg(feature = "rayon")]
        if parallel {
            return crate::kernels::par_channel_grad_sums(
                x,
                g,
                outer,
                channels,
                geometry.inner,
                centre,
            );
        }
        crate::kernels::channel_grad_sums(x, g, outer, channels, geometry.inner, centre)
    };
    if geometry.len == 0 {
        let zeros = vec![0.0; centre.len()];
        return (zeros.clone(), zeros);
    }
    if positions == 1 {
        return kernel(xs, dy, 1, geometry.samples * geometry.channels, &centre);
    }
    let sample = |(n, (x, g)): (usize, (&[S], &[S]))| {
        let range = n * geometry.channels..(n + 1) * geometry.channels;
        kernel(x, g, positions, geometry.channels, &centre[range])
    };
    let pairs = xs
        .chunks_exact(geometry.len)
        .zip(dy.chunks_exact(geometry.len));
    #[cfg(feature = "rayon")]
    let each: Vec<(Vec<f64>, Vec<f64>)> = if parallel {
        use rayon::prelude::*;
        xs.par_chunks_exact(geometry.len)
            .zip(dy.par_chunks_exact(geometry.len))
            .enumerate()
            .map(sample)
            .collect()
    } else {
        pairs.enumerate().map(sample).collect()
    };
    #[cfg(not(feature = "rayon"))]
    let each: Vec<(Vec<f64>, Vec<f64>)> = pairs.enumerate().map(sample).collect();
    let mut sum_dy = Vec::with_capacity(centre.len());
    let mut sum_dyx = Vec::with_capacity(centre.len());
    for (a, b) in each {
        sum_dy.extend(a);
        sum_dyx.extend(b);
    }
    (sum_dy, sum_dyx)
}

/// The backward sums of a group normalization (one pass over `xs` and
/// `dy`): per group of every sample, `Σĝ` and `Σĝ·(x − shift)` with
/// `ĝ = γ·dy`, as [`GradSums`] whose channels are the groups; and this
/// tensor's `dγ`, `dβ` per channel.
///
/// # Errors
///
/// Slices that do not hold the layout, a bad group count, statistics of
/// another shape or poisoned, a bad eps or `γ`.
pub(super) fn group_grad_sums<S: Element, F: Float>(
    pass: &Backward<'_, F, S>,
    groups: usize,
    eps: F,
    parallel: bool,
) -> Result<(GradSums<F>, AffineGrads<F>), Error> {
    pass.check_tensors()?;
    let layout = pass.layout();
    let geometry = Geometry::new(layout, groups)?;
    let stats = pass.stats();
    geometry.check_stats(stats)?;
    checks::eps(eps)?;
    let gamma = pass.gamma();
    check_gamma(gamma, geometry.channels)?;
    let (sum_dy, sum_dyx) = channel_grad_sums(
        pass.xs(),
        pass.dy(),
        geometry,
        layout.positions(),
        stats,
        parallel,
    );
    let eps = eps.as_f64();
    let moments = stats.moments();
    let gamma_of = |c: usize| gamma.and_then(|g| g.get(c)).map_or(1.0, |g| g.as_f64());
    let mut group_dy = vec![0.0; geometry.samples * groups];
    let mut group_dyx = vec![0.0; geometry.samples * groups];
    let mut weight = vec![0.0; geometry.channels];
    let mut bias = vec![0.0; geometry.channels];
    if geometry.len > 0 {
        for (i, (&sdy, &sdyx)) in sum_dy.iter().zip(&sum_dyx).enumerate() {
            let (n, c) = (i / geometry.channels, i % geometry.channels);
            let g = geometry.group_of(n, c);
            let m = moments.get(g).copied().unwrap_or_default();
            // About the mean, shift + offset, in two steps (as
            // `GradSums::about` does): the sums are about the shift.
            let about_mean = sdyx - m.offset * sdy;
            bias[c] += sdy;
            weight[c] += about_mean * rstd(&m, eps);
            let gamma = gamma_of(c);
            group_dy[g] += gamma * sdy;
            group_dyx[g] += gamma * sdyx;
        }
    }
    let centre = moments.iter().map(|m| m.shift).collect();
    let count =
        (layout.positions() as u64).saturating_mul((geometry.per_group * geometry.inner) as u64);
    Ok((
        GradSums::from_sums(count, centre, group_dy, group_dyx),
        AffineGrads::from_f64(&weight, &bias),
    ))
}

/// `dx` of a group normalization from the (merged) group sums of
/// [`group_grad_sums`], written to `dx` in `O`.
///
/// # Errors
///
/// As [`group_grad_sums`], and sums of another group count or count,
/// poisoned sums, or a `dx` of the wrong length.
pub(super) fn group_grad_input<S: Element, O: Element, F: Float>(
    sums: &GradSums<F>,
    pass: &Backward<'_, F, S>,
    groups: usize,
    eps: F,
    dx: &mut [O],
) -> Result<(), Error> {
    pass.check_output(dx.len())?;
    let layout = pass.layout();
    let geometry = Geometry::new(layout, groups)?;
    let stats = pass.stats();
    geometry.check_stats(stats)?;
    checks::channel_len("gradient sums groups", sums.sum_dy(), stats.channels())?;
    let gamma = pass.gamma();
    check_gamma(gamma, geometry.channels)?;
    sums.check_count(stats)?;
    let about = sums.about(stats, eps)?;
    #[allow(clippy::cast_precision_loss, reason = "a count, exact below 2⁵³")]
    let count = stats.count() as f64;
    let moments = stats.moments();
    let coefficients: Vec<DxCoefficients> = (0..geometry.samples * geometry.channels)
        .map(|i| {
            let (sample, channel) = (i / geometry.channels, i % geometry.channels);
            let group = geometry.group_of(sample, channel);
            let m = moments.get(group).copied().unwrap_or_default();
            let (about_mean, rstd) = about.get(group).copied().unwrap_or((f64::NAN, f64::NAN));
            let sum = sums.sum_dy().get(group).copied().unwrap_or(f64::NAN);
            let gamma = gamma
                .and_then(|v| v.get(channel))
                .map_or(1.0, |v| v.as_f64());
            DxCoefficients::new(&m, count, rstd, sum, about_mean, gamma)
        })
        .collect();
    if geometry.len == 0 {
        return Ok(());
    }
    let samples = pass
        .xs()
        .chunks_exact(geometry.len)
        .zip(pass.dy().chunks_exact(geometry.len))
        .zip(dx.chunks_exact_mut(geometry.len))
        .zip(coefficients.chunks_exact(geometry.channels));
    for (((x, g), out), k) in samples {
        write_dx(x, g, geometry.channels, geometry.inner, k, out);
    }
    Ok(())
}

/// Group normalization of `xs` (shape `layout`, any [`Element`] type)
/// into `out` (any [`Element`] type) in `f64`, each value rounded once:
/// `(x − hi)·scale + (β − lo·scale)` with each group's mean as `hi + lo`
/// (see [`Centre`]), the statistics of each chunk of samples taken just
/// before (see [`fused`]); returns the statistics.
///
/// # Errors
///
/// As [`normalize_fused`].
#[allow(clippy::too_many_arguments, reason = "the layer's own arguments")]
pub(super) fn normalize_fused_wide<S: Element, O: Element, F: Float>(
    xs: &[S],
    layout: Layout,
    groups: usize,
    eps: F,
    gamma: Option<&[F]>,
    beta: Option<&[F]>,
    out: &mut [O],
) -> Result<BatchStats<F>, Error> {
    check_fused(xs, layout, groups, eps, gamma, beta, out)?;
    let (channels, inner, positions) = (layout.channels(), layout.inner(), layout.positions());
    let per_sample = positions * channels * inner;
    let epsilon = eps.as_f64();
    let param = |v: Option<&[F]>, c: usize, default: f64| {
        v.and_then(|v| v.get(c)).map_or(default, |x| x.as_f64())
    };
    let mut entries: Vec<[f64; 3]> = Vec::new();
    let mut split: [Vec<f64>; 3] = Default::default();
    let stream = streams(out);
    let stats = fused(xs, layout, groups, out, |moments, x, y, ahead| {
        let pass = Pass { stream, ahead };
        // `WideNormalizer`'s entries: the scale γ/√(var + eps), the mean's
        // high part and β − lo·scale.
        let entry = |centre: Centre, root: f64, c: usize| {
            let scale = param(gamma, c, 1.0) / root;
            let (hi, rest) = centre.wide(scale);
            [hi, scale, param(beta, c, 0.0) + rest]
        };
        chunk_entries(moments, groups, channels, epsilon, entry, &mut entries);
        for (k, v) in split.iter_mut().enumerate() {
            v.clear();
            v.extend(entries.iter().map(|e| e[k]));
        }
        let [hi, scale, offset] = &split;
        if positions == 1 {
            let params = Affine { hi, scale, offset };
            apply_entries(params, x, x.len() / inner.max(1), inner, pass, y);
        } else {
            let samples = x
                .chunks_exact(per_sample)
                .zip(y.chunks_exact_mut(per_sample));
            for (n, (x, y)) in samples.enumerate() {
                let range = n * channels..(n + 1) * channels;
                let params = Affine {
                    hi: &hi[range.clone()],
                    scale: &scale[range.clone()],
                    offset: &offset[range],
                };
                apply_entries(params, x, channels, inner, pass, y);
            }
        }
    });
    Ok(stats)
}
