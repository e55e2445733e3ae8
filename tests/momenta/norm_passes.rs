//! Every normalization writes the bits of its documented per-value
//! formula, whatever the shape — rows of 1, 3, 32 and 33 values and odd
//! lengths whose last values miss a whole vector, many rows and few, both
//! layouts, every element type in and out — and the layers that take
//! their statistics on the way return those of `statistics`, bit for bit.
//!
//! The formulas are restated here from the statistics' parts (shift,
//! offset, M2): the mean as `hi + lo` by Knuth's two-sum,
//! `scale = γ/√(var + eps)`, and each value `(x − hi)·scale + (β − lo·scale)`
//! in `f64` rounded once to the output type (the `normalize_into`
//! methods, and layer norm's `normalize`, with `γ` and `β` per feature
//! after the row's own scale), or in `F` with the mean rounded to `F` and
//! the rest joining `β` (the `normalize` methods of the other layers).

use crate::support::SplitMix;
use momenta::norm::{BatchNorm, BatchStats, BnConfig, GroupNorm, InstanceNorm, LayerNorm, Layout};
use momenta::{Element, Float};

/// Knuth's two-sum: `a + b` exactly as `hi + lo`.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let hi = a + b;
    let bb = hi - a;
    (hi, (a - (hi - bb)) + (b - bb))
}

/// Per channel of `stats`: the mean's `(hi, lo)` and the biased variance,
/// from the parts (NaN for a channel with no values; `lo` 0 where it is
/// not finite).
fn centres<F: Float>(stats: &BatchStats<F>) -> Vec<(f64, f64, f64)> {
    let parts = stats.to_parts();
    let n = parts.count as f64;
    parts
        .shift
        .iter()
        .zip(&parts.offset)
        .zip(&parts.m2)
        .map(|((&k, &o), &m2)| {
            if parts.count == 0 {
                return (f64::NAN, 0.0, f64::NAN);
            }
            let (hi, lo) = two_sum(k, o);
            (hi, if lo.is_finite() { lo } else { 0.0 }, m2 / n)
        })
        .collect()
}

/// The bits of any element type's values, every NaN as one: Rust leaves
/// a NaN's sign and payload unspecified (an optimised build may fold one
/// to another pattern than the CPU computes), so only NaN-ness is a
/// promise.
fn bits<T: Element>(v: &[T]) -> Vec<u64> {
    v.iter()
        .map(|x| {
            let x = x.widen();
            if x.is_nan() {
                f64::NAN.to_bits()
            } else {
                x.to_bits()
            }
        })
        .collect()
}

/// The bits of two sets of statistics' parts.
fn same_stats<F: Float>(a: &BatchStats<F>, b: &BatchStats<F>) -> bool {
    let (a, b) = (a.to_parts(), b.to_parts());
    let f = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    a.count == b.count
        && f(&a.shift) == f(&b.shift)
        && f(&a.offset) == f(&b.offset)
        && f(&a.m2) == f(&b.m2)
}

/// `n` values at a level with a spread, and hostile ones: a row (of
/// `row` values) that starts with an outlier, a NaN in another, ±∞ in a
/// third, zeros of both signs.
fn data<S: Element>(n: usize, row: usize, seed: u64) -> Vec<S> {
    let mut rng = SplitMix(seed);
    let rows = n / row.max(1);
    (0..n)
        .map(|i| {
            let r = i / row.max(1);
            let x = if i % row.max(1) == 0 && r == 1 && row > 1 {
                1e4
            } else if i % 97 == 13 {
                if i % 2 == 0 { 0.0 } else { -0.0 }
            } else if rows > 4 && r == 3 && i % row.max(1) == row / 2 {
                f64::NAN
            } else if rows > 5 && r == 5 && i % row.max(1) == 0 {
                f64::INFINITY
            } else {
                40.0 + 3.0 * rng.signed_unit() + (r % 3) as f64
            };
            S::narrow(x)
        })
        .collect()
}

/// γ and β of `n` entries (or none).
fn affine(n: usize, on: bool) -> (Option<Vec<f32>>, Option<Vec<f32>>) {
    if !on {
        return (None, None);
    }
    (
        Some((0..n).map(|j| 0.5 + (j % 7) as f32 / 4.0).collect()),
        Some((0..n).map(|j| (j % 5) as f32 / 2.0 - 1.0).collect()),
    )
}

/// Layer norm over rows of `h` (layout `[rows, h]`): `normalize_into`
/// from `S` to `O` and, for `f32`, `normalize`, against the formula.
fn layer_norm_rows<S: Element, O: Element>(h: usize, rows: usize, with_affine: bool) {
    let xs: Vec<S> = data(rows * h, h, (h * 31 + rows) as u64);
    let ln = LayerNorm::<f32>::new(h).unwrap();
    let (g, b) = affine(h, with_affine);
    let mut y = vec![O::narrow(-7.0); xs.len()];
    let layout = Layout::nc(rows, h).unwrap();
    let stats = ln
        .normalize_into(&xs, layout, g.as_deref(), b.as_deref(), &mut y)
        .unwrap();
    let alone = ln.statistics(&xs).unwrap();
    assert!(same_stats(&stats, &alone), "h {h}, rows {rows}");
    let reference = BatchStats::<f32>::compute(&xs, Layout::ncl(1, rows, h).unwrap()).unwrap();
    assert!(same_stats(&alone, &reference), "h {h}, rows {rows}");
    let eps = f64::from(ln.eps());
    let centres = centres(&stats);
    let want: Vec<O> = xs
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let (hi, lo, var) = centres[i / h];
            let rstd = 1.0 / (var + eps).sqrt();
            let c = if lo == 0.0 { 0.0 } else { -(lo * rstd) };
            let z = (x.widen() - hi) * rstd + c;
            let gj = g.as_ref().map_or(1.0, |g| f64::from(g[i % h]));
            let bj = b.as_ref().map_or(0.0, |b| f64::from(b[i % h]));
            O::narrow(z * gj + bj)
        })
        .collect();
    assert_eq!(
        bits(&y),
        bits(&want),
        "h {h}, rows {rows}, affine {with_affine}"
    );
}

/// Layer norm's own `normalize` in `F`, each case of γ and β.
fn layer_norm_native<F: Float + Element>(h: usize, rows: usize) {
    let xs: Vec<F> = data(rows * h, h, (h * 17 + rows) as u64);
    let ln = LayerNorm::<F>::new(h).unwrap();
    let g: Vec<F> = (0..h)
        .map(|j| F::from_f64(0.5 + (j % 7) as f64 / 4.0))
        .collect();
    let b: Vec<F> = (0..h)
        .map(|j| F::from_f64((j % 5) as f64 / 2.0 - 1.0))
        .collect();
    for (gamma, beta) in [
        (None, None),
        (Some(&g), None),
        (None, Some(&b)),
        (Some(&g), Some(&b)),
    ] {
        let mut y = vec![F::from_f64(-7.0); xs.len()];
        let stats = ln
            .normalize(&xs, gamma.map(|v| &v[..]), beta.map(|v| &v[..]), &mut y)
            .unwrap();
        assert!(same_stats(&stats, &ln.statistics(&xs).unwrap()));
        let eps = ln.eps().as_f64();
        let centres = centres(&stats);
        let want: Vec<F> = xs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let (hi, lo, var) = centres[i / h];
                let rstd = 1.0 / (var + eps).sqrt();
                let c = if lo == 0.0 { 0.0 } else { -(lo * rstd) };
                let z = (x.as_f64() - hi) * rstd + c;
                let j = i % h;
                F::from_f64(match (gamma, beta) {
                    (Some(g), Some(b)) => z * g[j].as_f64() + b[j].as_f64(),
                    (Some(g), None) => z * g[j].as_f64(),
                    (None, Some(b)) => z + b[j].as_f64(),
                    (None, None) => z,
                })
            })
            .collect();
        assert_eq!(
            bits(&y),
            bits(&want),
            "h {h}, rows {rows}, γ {}, β {}",
            gamma.is_some(),
            beta.is_some()
        );
    }
}

#[test]
fn layer_norm_rows_of_every_length_are_the_formula_bit_for_bit() {
    // Rows of 1, 3, 32 and 33 values (short runs, a vector and a tail),
    // 130 and 300 (long runs), 8200 (two at a time), in numbers that fill
    // several chunks of the fused pass and leave a partial one, odd and
    // even.
    for (h, rows) in [
        (1, 3),
        (1, 20_001),
        (3, 7),
        (3, 6_001),
        (32, 1),
        (32, 1_537),
        (33, 2),
        (33, 1_001),
        (130, 9),
        (300, 131),
        (8_200, 5),
    ] {
        for with_affine in [false, true] {
            layer_norm_rows::<f32, f32>(h, rows, with_affine);
        }
        layer_norm_rows::<f64, f32>(h, rows, true);
        layer_norm_rows::<f32, f64>(h, rows, false);
        #[cfg(feature = "half")]
        {
            layer_norm_rows::<half::f16, half::f16>(h, rows, true);
            layer_norm_rows::<half::bf16, half::f16>(h, rows, false);
            layer_norm_rows::<f32, half::bf16>(h, rows, true);
        }
        layer_norm_native::<f32>(h, rows.min(600));
        layer_norm_native::<f64>(h, rows.min(600));
    }
}

/// The layouts of `n` samples of `c` channels of `hw` positions, with
/// each value's sample, channel and position.
fn layouts(n: usize, c: usize, hw: usize) -> [(Layout, bool); 2] {
    [
        (Layout::nchw(n, c, 1, hw).unwrap(), false),
        (Layout::nhwc(n, 1, hw, c).unwrap(), true),
    ]
}

/// The (sample, channel) of value `i` of a tensor of `n × c × hw` in
/// either layout.
fn place(i: usize, c: usize, hw: usize, last: bool) -> (usize, usize) {
    if last {
        (i / (c * hw), i % c)
    } else {
        (i / (c * hw), (i / hw) % c)
    }
}

/// Group norm (and instance norm, one group per channel) from `S` to `O`,
/// and batch norm from its statistics, against the wide formula.
fn channel_layers<S: Element, O: Element>(n: usize, c: usize, hw: usize) {
    let len = n * c * hw;
    let (g, b) = affine(c, true);
    let (g, b) = (g.unwrap(), b.unwrap());
    for (layout, last) in layouts(n, c, hw) {
        let xs: Vec<S> = data(len, hw, (n * 7 + c * 3 + hw) as u64);
        let wide = |stats: &BatchStats<f32>, group_of: &dyn Fn(usize, usize) -> usize| {
            let centres = centres(stats);
            xs.iter()
                .enumerate()
                .map(|(i, x)| {
                    let (s, ch) = place(i, c, hw, last);
                    let (hi, lo, var) = centres[group_of(s, ch)];
                    let scale = f64::from(g[ch]) / (var + 1e-5_f32 as f64).sqrt();
                    let rest = if lo == 0.0 { 0.0 } else { -(lo * scale) };
                    let offset = f64::from(b[ch]) + rest;
                    O::narrow((x.widen() - hi) * scale + offset)
                })
                .collect::<Vec<O>>()
        };
        for groups in [1, c / 2, c] {
            if groups == 0 || !c.is_multiple_of(groups) {
                continue;
            }
            let gn = GroupNorm::<f32>::new(groups).unwrap();
            let mut y = vec![O::narrow(-7.0); len];
            let stats = gn
                .normalize_into(&xs, layout, Some(&g), Some(&b), &mut y)
                .unwrap();
            assert!(same_stats(&stats, &gn.statistics(&xs, layout).unwrap()));
            let per = c / groups;
            let want = wide(&stats, &|s, ch| s * groups + ch / per);
            assert_eq!(bits(&y), bits(&want), "group norm {groups}, {layout:?}");
        }
        let inorm = InstanceNorm::<f32>::new();
        let mut y = vec![O::narrow(-7.0); len];
        let stats = inorm
            .normalize_into(&xs, layout, Some(&g), Some(&b), &mut y)
            .unwrap();
        assert!(same_stats(&stats, &inorm.statistics(&xs, layout).unwrap()));
        assert_eq!(
            bits(&y),
            bits(&wide(&stats, &|s, ch| s * c + ch)),
            "instance, {layout:?}"
        );
        let bn = BatchNorm::<f32>::new();
        let mut y = vec![O::narrow(-7.0); len];
        let stats = bn
            .normalize_into(&xs, layout, Some(&g), Some(&b), &mut y)
            .unwrap();
        assert_eq!(
            bits(&y),
            bits(&wide(&stats, &|_, ch| ch)),
            "batch, {layout:?}"
        );
        // Evaluation mode: the running mean, rounded once (no low part).
        let running = momenta::norm::RunningStats::with_state(
            &(0..c).map(|k| 39.0 + k as f32 / 3.0).collect::<Vec<_>>(),
            &(0..c).map(|k| 1.0 + k as f32).collect::<Vec<_>>(),
            BnConfig::pytorch(),
        )
        .unwrap();
        let mut y = vec![O::narrow(-7.0); len];
        running
            .normalize_into(&xs, layout, Some(&g), Some(&b), &mut y)
            .unwrap();
        let want: Vec<O> = xs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let ch = place(i, c, hw, last).1;
                let (m, v) = (f64::from(running.mean()[ch]), f64::from(running.var()[ch]));
                let scale = f64::from(g[ch]) / (v + 1e-5_f32 as f64).sqrt();
                O::narrow((x.widen() - m) * scale + (f64::from(b[ch]) + 0.0))
            })
            .collect();
        assert_eq!(bits(&y), bits(&want), "running, {layout:?}");
    }
}

/// The `normalize` methods in `F` (group and instance norm, and batch
/// norm's statistics), against the formula in `F`: the mean rounded to
/// `F` and what that leaves of `hi + lo` joining `β`.
fn channel_layers_native<F: Float + Element>(n: usize, c: usize, hw: usize) {
    let len = n * c * hw;
    let g: Vec<F> = (0..c)
        .map(|j| F::from_f64(0.5 + (j % 7) as f64 / 4.0))
        .collect();
    let b: Vec<F> = (0..c)
        .map(|j| F::from_f64((j % 5) as f64 / 2.0 - 1.0))
        .collect();
    let eps = F::from_f64(1e-5);
    for (layout, last) in layouts(n, c, hw) {
        let xs: Vec<F> = data(len, hw, (n * 5 + c + hw * 3) as u64);
        let narrow = |stats: &BatchStats<F>, group_of: &dyn Fn(usize, usize) -> usize| {
            let centres = centres(stats);
            xs.iter()
                .enumerate()
                .map(|(i, &x)| {
                    let (s, ch) = place(i, c, hw, last);
                    let (hi, lo, var) = centres[group_of(s, ch)];
                    let scale = g[ch].as_f64() / (var + eps.as_f64()).sqrt();
                    let mean = F::from_f64(hi);
                    let rest = (hi - mean.as_f64()) + lo;
                    let offset = if rest == 0.0 || !rest.is_finite() {
                        b[ch].as_f64()
                    } else {
                        b[ch].as_f64() - rest * scale
                    };
                    (x - mean) * F::from_f64(scale) + F::from_f64(offset)
                })
                .collect::<Vec<F>>()
        };
        for groups in [1, c] {
            let gn = GroupNorm::<F>::new(groups).unwrap();
            let mut y = vec![F::from_f64(-7.0); len];
            let stats = gn
                .normalize(&xs, layout, Some(&g), Some(&b), &mut y)
                .unwrap();
            assert!(same_stats(&stats, &gn.statistics(&xs, layout).unwrap()));
            let per = c / groups;
            let want = narrow(&stats, &|s, ch| s * groups + ch / per);
            assert_eq!(bits(&y), bits(&want), "group norm {groups}, {layout:?}");
        }
        let mut y = vec![F::from_f64(-7.0); len];
        let stats = InstanceNorm::<F>::new()
            .normalize(&xs, layout, Some(&g), Some(&b), &mut y)
            .unwrap();
        assert_eq!(
            bits(&y),
            bits(&narrow(&stats, &|s, ch| s * c + ch)),
            "instance, {layout:?}"
        );
        let mut y = vec![F::from_f64(-7.0); len];
        let stats = BatchNorm::<F>::new()
            .normalize(&xs, layout, Some(&g), Some(&b), &mut y)
            .unwrap();
        assert_eq!(
            bits(&y),
            bits(&narrow(&stats, &|_, ch| ch)),
            "batch, {layout:?}"
        );
    }
}

#[test]
fn every_channel_layer_is_its_formula_bit_for_bit_in_both_layouts() {
    // Positions per channel 1, 3, 32, 33 and 130; channels 1, 4 and 6;
    // enough samples for several chunks of the fused passes (and an odd
    // number of groups, 3 of 6 channels, whose chunks take an even number
    // of samples).
    for (n, c, hw) in [
        (3, 4, 1),
        (5, 6, 3),
        (2, 4, 32),
        (67, 4, 33),
        (3, 6, 130),
        (1, 1, 33),
        (300, 4, 3),
        (901, 6, 5),
    ] {
        channel_layers::<f32, f32>(n, c, hw);
        channel_layers::<f64, f32>(n, c, hw);
        #[cfg(feature = "half")]
        {
            channel_layers::<half::f16, half::f16>(n, c, hw);
            channel_layers::<f32, half::bf16>(n, c, hw);
        }
        channel_layers_native::<f32>(n, c, hw);
        channel_layers_native::<f64>(n, c, hw);
    }
}
