//! The mean series of `MovingStats`' exact sums, in a few plain float
//! operations a value.
//!
//! `MovingStats` reads its mean correctly rounded from exact integer sums,
//! so the mean of a window depends on the window's values only: any exact
//! way to the window's sum, rounded correctly, gives the push loop's bits.
//! This is one that runs in `f64` registers. `n` is the window's length,
//! `w < 2^wb`.
//!
//! # The grid
//!
//! A run's values are held on a grid: each is `v·2^base` with `v` an
//! integer. A value is on it when `x·2^-base` is an integer within reach
//! (and not a product that underflowed to 0): every test exact. The grid
//! is chosen from the window's values and the run's first ones; a value
//! off it (NaN, ±∞, finer, or too far) ends the run, and the caller
//! pushes it. The window's sum is kept one of two ways.
//!
//! **By an offset**, when the values are close beside their magnitude
//! (`1e6 + U(0, 1)`) or small beside their resolution (whole numbers):
//! `y = v − c` for an integer `c`, every `|y|` below `2^(52 − wb)`, so the
//! window's `T = Σy` and every difference of two are exact in one `f64`.
//! `c` is 0, or the values' middle on a grid fine enough that `|c| ≥
//! 2^53`. The mean is `c + T/n`. Its quotient is taken without a
//! division: `q = fl(T·fl(1/n))`, `r = T − q·n` (exact, fused), and
//! `q' = fl(q + r·fl(1/n))` (fused) is the rounding of a value within
//! `2^-52` of an ulp of `T/n`. For `c = 0` the mean is `q'`: `T/n` is never a midpoint
//! between two floats (that takes an odd numerator of 54 bits, and `|T|
//! < 2^52`) and is at least `ulp/(2n)` from one, more than that, so
//! `q'` is its correct rounding. Otherwise the mean's ulp is at least 1,
//! and the rounding boundaries of `c + ·` near it are multiples of 1/2,
//! which `T/n`, a multiple of `1/n`, is either on (then `q'` is `T/n`
//! exactly, a float) or at least `1/(2n)` away, more than `q'`'s error
//! (below `2^(−1−wb)·(1 + 2^-51)`, with `|T/n| < 2^(52 − wb)` and `n <
//! 2^wb`); so `fl(c + q')` is the correct rounding of the mean.
//!
//! **Split**, for values spanning more bits (up to `TOP = min(105 − 2·wb,
//! 94)`, 94 being what `ExactSums` holds, so the push loop stays on its
//! exact sums): each `v` split at `2^K` (`K = 53 − wb`) into `h`, the
//! nearest multiple of `2^K`, and `l = v − h`, by adding and taking away
//! `1.5·2^(52+K)` (exact for `|v| < 2^(51+K)`). `Σ|h| < w·2^TOP ≤
//! 2^(52+K)` in multiples of `2^K`, and `Σ|l| ≤ w·2^(K−1) < 2^52` in
//! integers: the window's `H + L`, and every difference of two, are exact
//! in two `f64`s. With `s + t = H + L` exactly (`TwoSum`), `q = s·(1/n)`
//! and `r = s − q·n` (exact by a fused multiply-add), the mean is `q +
//! (r + t)/n`; `d = (r + t)·(1/n)` is within `2^-50·|d|` of `δ = (r +
//! t)/n`. With `m = fl(q + d)` and `g = q + d − m` (exact, `Fast2Sum`), `m`
//! is the correct rounding unless `g` is within that of a rounding
//! boundary (`half`, or `half/2` at a power of two, `half` the half ulp
//! of `m`). The mean, a multiple of `ulp/(2n)` (ulp below 1) or of
//! `1/(2n)`, is then on the boundary when `|m| < 2^(98 − wb)`: a tie,
//! which goes to the even neighbour. Above that (short windows of values
//! spanning 90-odd bits) such means, as rare as `2^-45` on random data,
//! come from the integers, as `ExactSums` reads them.
//!
//! # The loop
//!
//! A window moves by adding the entering value's part and taking away the
//! leaving one's: chunk by chunk, the differences (and the on-grid test),
//! their prefix sums in four independent stretches (four chains of
//! additions in flight rather than one waiting on the last), then the
//! means. Each pass is element-wise over a slice, so the compiler
//! vectorises it; the architecture layer compiles it with AVX2 and FMA
//! where the CPU has them. Once every leaving value is in the slice, an
//! offset run goes through [`Fused`]: with AVX2, one pass in
//! registers (`kernels::arch`'s `x86_64/series.rs`), four values a step,
//! their running sums formed within the register so that the window's
//! sum carried on is one addition per four values.

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::float_cmp,
    clippy::many_single_char_names,
    reason = "exact float arithmetic on integers the grid bounds (below 2^53 \
              once divided by 2^K, every cast and comparison exact), named as \
              in the module documentation"
)]
#![allow(
    clippy::inline_always,
    clippy::needless_bitwise_bool,
    reason = "the loops must inline into the architecture layer's \
              `#[target_feature]` function, and stay free of branches so that \
              they vectorise"
)]

use crate::Float;
use crate::kernels::exact_arith::{LIMIT, checked_quotient, parts, pow2, rounded_mean, scale2};
// The float methods by name, so that they come from `libm` without `std`.
use num_traits::Float as Real;

/// Outputs computed at a time: the differences and their prefix sums stay
/// in the first-level cache.
const CHUNK: usize = 2048;

/// The stretches of a chunk whose prefix sums run side by side.
const CHAINS: usize = 4;

/// The exponent bits of an `f64`.
const EXPONENT: u64 = 0x7ff0_0000_0000_0000;

/// How a run's window sums are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sums {
    /// `Σ(v − offset)` in one `f64`: every `|v − offset|` below
    /// `2^(52 − wb)`, and `offset` 0 or at least `2^53` in magnitude.
    Offset,
    /// `Σh + Σl`, each `v` split at `2^K` (every `|v|` below `2^TOP`).
    Split,
}

/// The grid of a run, and the window's length as the mean divides by it.
/// The architecture layer's loop ([`Fused`]) reads the offset grid's
/// constants: a value `x` is on it when `v = x·scale` is an integer, `|v −
/// offset| < reach`, and `v` is not 0 unless `x` is; a window's mean is
/// [`offset_mean`](Grid::offset_mean) of its `Σ(v − offset)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Grid {
    sums: Sums,
    /// `2^-base`.
    pub(crate) scale: f64,
    /// `2^base`.
    pub(crate) unscale: f64,
    base: i32,
    /// The integer every `v` is taken from (0 for `Split`), and the bound
    /// on `|v − offset|`.
    pub(crate) offset: f64,
    pub(crate) reach: f64,
    /// `1.5·2^(52+K)`.
    split: f64,
    /// `2^-K`.
    inv_step: f64,
    /// `2^(98 − wb)`: below it, a mean within rounding error of a
    /// boundary is on it.
    ties_below: f64,
    /// The window's length and its rounded reciprocal.
    pub(crate) n: f64,
    pub(crate) inv_n: f64,
    count: u32,
}

impl Grid {
    /// The grid for a window of `window` values that holds `values` (their
    /// finite ones), or `None` when no grid does (the window is too long,
    /// or the values span too many binades for its sums): one sum in an
    /// `f64` when the values are close beside their magnitude or small
    /// beside their resolution, else the split pair.
    #[inline(always)]
    pub(crate) fn of<'a, F: Float + 'a>(
        values: impl Iterator<Item = &'a F>,
        window: usize,
    ) -> Option<Self> {
        let count = u32::try_from(window).ok().filter(|&c| c < 1 << 26)?;
        let wb = 32 - count.leading_zeros() as i32;
        let (mut low, mut high) = (i32::MAX, i32::MIN);
        let (mut least, mut most) = (f64::INFINITY, f64::NEG_INFINITY);
        for x in values {
            let x = x.as_f64();
            if !x.is_finite() || x == 0.0 {
                continue;
            }
            let (_, m, e) = parts(x);
            if m >> 52 == 0 {
                // Subnormal: no grid.
                return None;
            }
            low = low.min(e + m.trailing_zeros() as i32);
            high = high.max(e + 52);
            least = least.min(x);
            most = most.max(x);
        }
        if low == i32::MAX {
            // Only zeros so far: integers take the grid.
            (low, high, least, most) = (0, 0, 0.0, 0.0);
        }
        let reach = pow2(52 - wb);
        // Small beside the resolution: no offset.
        let small = Self::new(Sums::Offset, low, 0.0, reach, count);
        if let Some(g) = small.filter(|g| g.holds(least) && g.holds(most)) {
            return Some(g);
        }
        // Close beside the magnitude: the offset their middle, at least
        // 2^53 on a grid fine enough.
        let middle = 0.5 * least + 0.5 * most;
        if middle != 0.0 {
            // |middle| is in [2^(e + 52), 2^(e + 53)).
            let (_, _, e) = parts(middle);
            let base = low.min(e - 1);
            let offset = Real::round(scale2(middle, -base));
            let close = Self::new(Sums::Offset, base, offset, reach, count);
            if let Some(g) = close.filter(|g| g.holds(least) && g.holds(most)) {
                return Some(g);
            }
        }
        // At most `LIMIT` bits, so that `ExactSums` holds every window of
        // the run and the push loop reads its exact sums.
        let top = (105 - 2 * wb).min(LIMIT);
        let base = low.min(high - 52);
        Self::new(Sums::Split, base, 0.0, pow2(top), count).filter(|_| high - base < top)
    }

    /// The grid at `base`, when its scales and every mean it gives are
    /// normal numbers.
    fn new(sums: Sums, base: i32, offset: f64, reach: f64, count: u32) -> Option<Self> {
        let wb = 32 - count.leading_zeros() as i32;
        let k = 53 - wb;
        // A mean of a nonzero sum is at least 2^(base − wb); the values are
        // below 2^(base + 55) by an offset, 2^(base + LIMIT) split.
        let fits = base - wb >= -1022 && base + LIMIT < 1023;
        fits.then(|| Self {
            sums,
            scale: pow2(-base),
            unscale: pow2(base),
            base,
            offset,
            reach,
            split: 1.5 * pow2(52 + k),
            inv_step: pow2(-k),
            ties_below: pow2(98 - wb),
            n: f64::from(count),
            inv_n: 1.0 / f64::from(count),
            count,
        })
    }

    /// Whether the window's sums are kept by an offset: every `|x·2^-base
    /// − offset|` below `2^(52 − wb)`.
    pub(crate) fn is_offset(&self) -> bool {
        self.sums == Sums::Offset
    }

    /// The grid's exponent: its values are integer multiples of `2^base`.
    pub(crate) fn base(&self) -> i32 {
        self.base
    }

    /// How many of `values` lead the first one off the grid, `all_on`
    /// telling whether all are on it.
    #[inline(always)]
    pub(crate) fn on_before<F: Float>(&self, values: &[F], all_on: bool) -> usize {
        if all_on {
            values.len()
        } else {
            values
                .iter()
                .position(|x| !self.holds(x.as_f64()))
                .unwrap_or(values.len())
        }
    }

    /// Whether `x` is on the grid.
    #[inline(always)]
    fn holds(&self, x: f64) -> bool {
        self.scaled(x).1
    }

    /// `x·2^-base − offset`, and whether `x` is on the grid.
    #[inline(always)]
    pub(crate) fn scaled(&self, x: f64) -> (f64, bool) {
        let v = x * self.scale;
        let y = v - self.offset;
        let on = (Real::trunc(v) == v) & (y.abs() < self.reach) & ((v != 0.0) | (x == 0.0));
        (y, on)
    }

    /// `v` split into the multiple of `2^K` nearest to it and the rest.
    #[inline(always)]
    fn split(&self, v: f64) -> (f64, f64) {
        let h = (v + self.split) - self.split;
        (h, v - h)
    }

    /// The mean of a window whose sum is `offset·n + t`, `|t|` below
    /// `2^(52 − wb)·n`: `t/n` to within half an ulp and a hair, and exactly
    /// when it is a float (a product by `1/n` and one correction step), and
    /// adding `offset` (0, or at least `2^53`) does not move it across a
    /// rounding boundary (see the module documentation).
    #[inline(always)]
    fn offset_mean(&self, t: f64) -> f64 {
        let q = t * self.inv_n;
        let r = Real::mul_add(-q, self.n, t);
        (self.offset + Real::mul_add(r, self.inv_n, q)) * self.unscale
    }

    /// The mean of a window whose sum is `h + l` (split), or NaN where it
    /// must come from the integers ([`exact`](Self::exact)).
    #[inline(always)]
    fn split_mean(&self, h: f64, l: f64) -> f64 {
        // s + t = h + l exactly.
        let s = h + l;
        let hb = s - l;
        let t = (h - hb) + (l - (s - hb));
        let q = s * self.inv_n;
        let r = Real::mul_add(-q, self.n, s);
        let d = (r + t) * self.inv_n;
        let m = q + d;
        let g = d - (m - q);
        let half = f64::from_bits(m.to_bits() & EXPONENT) * pow2(-53);
        let slack = d.abs() * pow2(-50);
        let far = g.abs() >= half - slack;
        let near = far | ((g.abs() - 0.5 * half).abs() <= slack);
        // Near a boundary the mean is one exactly (see the module
        // documentation): a tie, to even.
        let odd = m.to_bits() & 1 == 1;
        let m = if far & odd {
            m + (2.0 * half).copysign(g)
        } else {
            m
        };
        if near & (m.abs() >= self.ties_below) {
            f64::NAN
        } else {
            m * self.unscale
        }
    }

    /// The mean of a window whose sum is `h + l` (split), from the
    /// integers.
    #[inline(never)]
    fn exact(&self, h: f64, l: f64) -> f64 {
        let k = 53 - (32 - self.count.leading_zeros());
        let sum = (i128::from((h * self.inv_step) as i64) << k) + i128::from(l as i64);
        // Rare: the plain quotient (this is compiled apart from the
        // kernel's instruction sets); the bits are the same.
        rounded_mean(sum, self.count, self.base, checked_quotient::<false>)
    }
}

/// The differences of entering and leaving values into `dh` (and, split,
/// `dl`); how many entering values lead the first one off the grid.
#[inline(always)]
fn differences<F: Float, const SPLIT: bool>(
    grid: &Grid,
    enter: &[F],
    leave: &[F],
    dh: &mut [f64],
    dl: &mut [f64],
) -> usize {
    let len = enter.len().min(leave.len()).min(dh.len()).min(dl.len());
    let (enter, leave) = (&enter[..len], &leave[..len]);
    let mut all_on = true;
    if SPLIT {
        for (((&x, &y), dh), dl) in enter
            .iter()
            .zip(leave)
            .zip(&mut dh[..len])
            .zip(&mut dl[..len])
        {
            let (v, on) = grid.scaled(x.as_f64());
            all_on &= on;
            let (h, l) = grid.split(v);
            let (hy, ly) = grid.split(y.as_f64() * grid.scale);
            *dh = h - hy;
            *dl = l - ly;
        }
    } else {
        for ((&x, &y), dh) in enter.iter().zip(leave).zip(&mut dh[..len]) {
            let (v, on) = grid.scaled(x.as_f64());
            all_on &= on;
            *dh = v - (y.as_f64() * grid.scale - grid.offset);
        }
    }
    grid.on_before(enter, all_on)
}

/// The values leaving a full window as `xs[done..done + len]` enter it
/// (the window holding `older` then `newer` before `xs[0]`, so the value
/// that leaves as `xs[j]` enters is the `j`-th of `older`, `newer`, `xs`
/// run together), handed to `step` a source at a time: `step(at,
/// leaving)` for the entering values from `done + at` on, returning how
/// many of them it took (fewer than `leaving.len()` stops there). Returns
/// how many were taken in all.
#[inline(always)]
pub(crate) fn with_leaving<F: Float>(
    [older, newer, xs]: [&[F]; 3],
    done: usize,
    len: usize,
    mut step: impl FnMut(usize, &[F]) -> usize,
) -> usize {
    let window = older.len() + newer.len();
    let mut taken = 0;
    for (start, source) in [(0, older), (older.len(), newer), (window, xs)] {
        let from = (done + taken).max(start).min(start + source.len());
        let to = (done + len).min(start + source.len());
        if from >= to || from != done + taken {
            continue;
        }
        let k = step(from - done, &source[from - start..to - start]);
        taken += k;
        if k < to - from {
            break;
        }
    }
    taken
}

/// Running sums of `d` in place over [`CHAINS`] stretches of `stretch`
/// values (the last ones may be shorter or empty), each from 0; the
/// stretches' totals.
#[inline(always)]
fn prefix_sums(d: &mut [f64], stretch: usize) -> [f64; CHAINS] {
    let mut totals = [0.0; CHAINS];
    let mut parts: [&mut [f64]; CHAINS] = Default::default();
    let mut rest = d;
    for part in &mut parts {
        let (head, tail) = rest.split_at_mut(stretch.min(rest.len()));
        *part = head;
        rest = tail;
    }
    // Every stretch but the last ones is `stretch` long: the chains run
    // side by side over the length of the shortest.
    let common = parts[CHAINS - 1].len();
    for i in 0..common {
        for (part, total) in parts.iter_mut().zip(&mut totals) {
            *total += part[i];
            part[i] = *total;
        }
    }
    for (part, total) in parts.iter_mut().zip(&mut totals) {
        for v in part.iter_mut().skip(common) {
            *total += *v;
            *v = *total;
        }
    }
    totals
}

/// The means of the windows whose sums are `bh + dh[i]` (and, split,
/// `bl + dl[i]`) into `out`.
#[inline(always)]
fn means<F: Float, const SPLIT: bool>(
    grid: &Grid,
    (bh, bl): (f64, f64),
    dh: &[f64],
    dl: &[f64],
    out: &mut [F],
) {
    if !SPLIT {
        for (&dh, o) in dh.iter().zip(out) {
            *o = F::from_f64(grid.offset_mean(bh + dh));
        }
        return;
    }
    let mut any_off = false;
    for ((&dh, &dl), o) in dh.iter().zip(dl).zip(out.iter_mut()) {
        let m = grid.split_mean(bh + dh, bl + dl);
        any_off |= m.is_nan();
        *o = F::from_f64(m);
    }
    if any_off {
        for ((&dh, &dl), o) in dh.iter().zip(dl).zip(out) {
            if o.is_nan() {
                *o = F::from_f64(grid.exact(bh + dh, bl + dl));
            }
        }
    }
}

/// A faster loop over an offset run, where the CPU has one (the
/// architecture layer's); it must give the means [`Grid::offset_mean`]
/// gives, bit for bit.
pub(crate) trait Fused {
    /// The means after pushing `xs[j]` into `out[j]`, for `j` from `start`
    /// (at least `window`, so every leaving value `xs[j − window]` is in
    /// `xs`; `at` is `start` and `Σ(v − offset)` over the window before
    /// `xs[start]`) while the entering values are on the grid: returns where
    /// it stopped (before a stretch with a value off the grid, or near the
    /// end) and the window's sum there. `out` past that is unspecified.
    fn offset_run<F: Float>(
        &self,
        xs: &[F],
        window: usize,
        grid: &Grid,
        at: (usize, f64),
        out: &mut [F],
    ) -> (usize, f64);
}

/// No such loop: the chunks do it all.
pub(crate) struct Chunks;

impl Fused for Chunks {
    fn offset_run<F: Float>(
        &self,
        _: &[F],
        _: usize,
        _: &Grid,
        at: (usize, f64),
        _: &mut [F],
    ) -> (usize, f64) {
        at
    }
}

/// Means of full windows over `xs`, the window holding `older` then `newer`
/// (its values, oldest first) before `xs[0]` comes in: writes the mean
/// after each push into `out` while the values are on one grid, and
/// returns how many it wrote (0 when the window's own values are on none).
/// The architecture layer compiles it for the CPU's features
/// (`kernels::exact_mean_run`).
#[inline(always)]
pub(crate) fn run<F: Float>(
    older: &[F],
    newer: &[F],
    xs: &[F],
    out: &mut [F],
    fused: &impl Fused,
) -> usize {
    let window = older.len() + newer.len();
    let xs = &xs[..xs.len().min(out.len())];
    let ahead = &xs[..xs.len().min(window.max(CHUNK))];
    match Grid::of(older.iter().chain(newer).chain(ahead), window) {
        Some(grid) if grid.sums == Sums::Split => {
            run_on::<F, true>(&grid, [older, newer], xs, out, fused)
        }
        Some(grid) => run_on::<F, false>(&grid, [older, newer], xs, out, fused),
        None => 0,
    }
}

/// [`run`] on its grid.
#[inline(always)]
fn run_on<F: Float, const SPLIT: bool>(
    grid: &Grid,
    [older, newer]: [&[F]; 2],
    xs: &[F],
    out: &mut [F],
    fused: &impl Fused,
) -> usize {
    let window = older.len() + newer.len();
    let (mut h, mut l) = (0.0, 0.0);
    for &x in older.iter().chain(newer) {
        let (v, on) = grid.scaled(x.as_f64());
        if !on {
            return 0;
        }
        if SPLIT {
            let (vh, vl) = grid.split(v);
            h += vh;
            l += vl;
        } else {
            h += v;
        }
    }
    let (mut dh, mut dl) = ([0.0; CHUNK], [0.0; CHUNK]);
    let mut done = 0;
    let mut tried = SPLIT;
    while done < xs.len() {
        if !tried && done >= window {
            tried = true;
            // Every leaving value is in `xs` now; `h` is the window's sum.
            (done, h) = fused.offset_run(xs, window, grid, (done, h), out);
            continue;
        }
        let len = CHUNK.min(xs.len() - done);
        let enter = &xs[done..done + len];
        let taken = with_leaving([older, newer, xs], done, len, |at, leave| {
            differences::<F, SPLIT>(grid, &enter[at..], leave, &mut dh[at..], &mut dl[at..])
        });
        if taken == 0 {
            break;
        }
        let stretch = taken.div_ceil(CHAINS);
        let th = prefix_sums(&mut dh[..taken], stretch);
        let tl = if SPLIT {
            prefix_sums(&mut dl[..taken], stretch)
        } else {
            [0.0; CHAINS]
        };
        let out = &mut out[done..done + taken];
        let (mut bh, mut bl) = (h, l);
        for (((dh, dl), o), (th, tl)) in dh[..taken]
            .chunks(stretch)
            .zip(dl[..taken].chunks(stretch))
            .zip(out.chunks_mut(stretch))
            .zip(th.into_iter().zip(tl))
        {
            means::<F, SPLIT>(grid, (bh, bl), dh, dl, o);
            bh += th;
            bl += tl;
        }
        (h, l) = (bh, bl);
        done += taken;
        if taken < len {
            break;
        }
    }
    done
}
