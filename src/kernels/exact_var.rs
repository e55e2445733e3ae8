//! The variance series of `MovingStats`' exact sums: integer updates and
//! a checked float quotient per value.
//!
//! `MovingStats` reads a variance as `D = n·Σx² − (Σx)²` (an exact
//! integer on the window's grid) divided by `n·divisor` and rounded once,
//! so it depends on the window's values only: any exact way to `D`,
//! rounded correctly, gives the push loop's bits. This is one for the
//! runs of values on an offset grid (see [`exact_mean`](super::exact_mean):
//! every value `x = (c + y)·2^base` with `c` one integer and `y` a small
//! one, `n < 2^wb`), which is where real series live
//! (`1e6 + U(0, 1)`, whole numbers, prices in cents), in windows of two
//! values or more.
//!
//! # The sums
//!
//! `D` does not change when every value moves by the same amount, so it is
//! taken from the `y`, held to `|y| < 2^(50 − wb)` (a quarter of the mean's
//! reach): `S = Σy` and `D = n·Σy² − S²` (below `2^100`). When `y'` enters
//! and `y` leaves, with `a = y' − y` and `e = n·(y' + y) − a` (integers
//! below `2^51`, exact in an `f64` and turned into `i64` by their bits),
//! `Σy²` grows by `a·(y' + y)`, so `D' = D + a·(e − 2S)`: one 64 × 64 →
//! 128-bit product and a 128-bit addition, and `S' = S + a`. Nothing is
//! rounded and nothing drifts, whatever order the values come in.
//!
//! # The quotient
//!
//! `D`, split as `A·2^52 + B` (each below `2^52`, exact in an `f64`), over
//! `d = n·divisor` (below `2^52`) by `exact_arith::checked_quotient`: a
//! float quotient, one fused correction step and a test that it is not
//! near a rounding boundary, which sends the rare values that are (and
//! exact ties) to the integer division. The quotient is then scaled by
//! `2^(2·base)`, exactly: a run starts only on a grid where every such
//! variance is a normal number.
//!
//! # The loop
//!
//! Chunk by chunk: the entering and leaving values' `a` and `e`
//! (element-wise, vectorised, with the on-grid test), the integer updates
//! (one scalar pass, the only chain from value to value), the quotients
//! (element-wise again). The architecture layer compiles it with AVX2 and
//! FMA where the CPU has them (`kernels::exact_var_run`).

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::float_cmp,
    clippy::many_single_char_names,
    reason = "exact arithmetic on integers the grid bounds (every `y`, `a`, \
              `e` and `2S` an integer below 2^51, `D` below 2^100, so each \
              cast is exact), named as in the module documentation"
)]
#![allow(
    clippy::inline_always,
    clippy::needless_bitwise_bool,
    reason = "the loops must inline into the architecture layer's \
              `#[target_feature]` function, and stay free of branches so that \
              they vectorise there"
)]

use super::exact_mean::{Grid, with_leaving};
use crate::Float;
use crate::kernels::exact_arith::{checked_quotient, pow2, quick_quotient_fits, quotient_to_f64};
// The float methods by name, so that they come from `libm` without `std`.
use num_traits::Float as Real;

/// Outputs computed at a time: the chunk's buffers stay in the first-level
/// cache.
const CHUNK: usize = 1024;

/// The low 52 bits.
const LOW: u64 = (1 << 52) - 1;

/// `2^52`, and `1.5·2^52`.
const TWO52: f64 = 4_503_599_627_370_496.0;
const MAGIC: f64 = 6_755_399_441_055_744.0;

/// Which variance a series reads, and whether its square root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spread {
    /// Divided by `n − 1` (else by `n`).
    pub(crate) sample: bool,
    /// The standard deviation: the square root of the variance as the
    /// element type gives it.
    pub(crate) root: bool,
}

/// The constants of a run's quotients.
#[derive(Clone, Copy, Debug)]
struct Quotients {
    /// `n·divisor`, exact, and its rounded reciprocal.
    d: f64,
    inv_d: f64,
    /// The same, for the integer read-out.
    divisor: u64,
    /// `2·base`, and `2^(2·base)`.
    exp: i32,
    unscale: f64,
}

impl Quotients {
    /// The quotients of a window of `window` values on `grid`, `None` when
    /// a variance on it could be subnormal or overflow (the push loop takes
    /// those runs).
    fn new(grid: &Grid, window: usize, divisor: usize) -> Option<Self> {
        let d = u64::try_from(window * divisor).ok()?;
        let exp = 2 * grid.base();
        quick_quotient_fits(d, exp).then(|| Self {
            d: d as f64,
            inv_d: 1.0 / d as f64,
            divisor: d,
            exp,
            unscale: pow2(exp),
        })
    }

    /// `D/d·2^exp` for `D = a·2^52 + b`, correctly rounded, or NaN when it
    /// must come from the integers ([`exact`](Self::exact)).
    #[inline(always)]
    fn fast(&self, a: f64, b: f64) -> f64 {
        checked_quotient::<true>(a, b, self.d, self.inv_d) * self.unscale
    }

    /// `D/d·2^exp` for `D = a·2^52 + b`, from the integer.
    #[inline(never)]
    fn exact(&self, a: f64, b: f64) -> f64 {
        let d = (u128::from(a as u64) << 52) | u128::from(b as u64);
        quotient_to_f64([d as u64, (d >> 64) as u64, 0, 0], self.divisor, self.exp)
    }

    /// The statistic of every window whose `D` has the 64-bit words
    /// `low[i]` and `high[i]` into `out`.
    #[inline(always)]
    fn write<F: Float, const ROOT: bool>(&self, low: &[i64], high: &[i64], out: &mut [F]) {
        let finish = |v: f64| {
            let v = F::from_f64(v);
            if ROOT { v.sqrt() } else { v }
        };
        // D = A·2^52 + B, each below 2^52.
        let parts = |low: i64, high: i64| {
            let (low, high) = (low as u64, high as u64);
            (to_f64((high << 12) | (low >> 52)), to_f64(low & LOW))
        };
        let mut any_near = false;
        for ((&low, &high), o) in low.iter().zip(high).zip(out.iter_mut()) {
            let (a, b) = parts(low, high);
            let v = self.fast(a, b);
            any_near |= v.is_nan();
            *o = finish(v);
        }
        if any_near {
            for ((&low, &high), o) in low.iter().zip(high).zip(out) {
                if o.is_nan() {
                    let (a, b) = parts(low, high);
                    *o = finish(self.exact(a, b));
                }
            }
        }
    }
}

/// `i` for an `f64` holding an integer `|i| < 2^51`, by the bits of `i +
/// 1.5·2^52` (whose last bit weighs 1): a float addition and an integer
/// subtraction, which vectorise where a conversion does not (AVX2 has no
/// `f64` → `i64` instruction). Any other `i` gives some integer (a value
/// off the grid is worked out with the others, and dropped).
#[inline(always)]
fn to_i64(i: f64) -> i64 {
    ((i + MAGIC).to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64)
}

/// `i` for `0 ≤ i < 2^52`, exact: the float whose significand bits are
/// `i` and whose exponent weighs its last bit 1, less its leading one.
#[inline(always)]
fn to_f64(i: u64) -> f64 {
    f64::from_bits(i | TWO52.to_bits()) - TWO52
}

/// `a = y' − y` and `e = n·(y' + y) − a` of entering values `enter` and
/// leaving ones `leave` into `a` and `e`; how many entering values lead
/// the first one off the grid.
#[inline(always)]
fn steps<F: Float>(
    grid: &Grid,
    n: f64,
    enter: &[F],
    leave: &[F],
    a: &mut [i64],
    e: &mut [i64],
) -> usize {
    let len = enter.len().min(leave.len()).min(a.len()).min(e.len());
    let (enter, leave) = (&enter[..len], &leave[..len]);
    let mut all_on = true;
    for (((&x, &y), a), e) in enter
        .iter()
        .zip(leave)
        .zip(&mut a[..len])
        .zip(&mut e[..len])
    {
        let (x, on) = grid.scaled(x.as_f64());
        let (y, _) = grid.scaled(y.as_f64());
        all_on &= on;
        let step = x - y;
        *a = to_i64(step);
        // Exact: the result is an integer below 2^51.
        *e = to_i64(Real::mul_add(n, x + y, -step));
    }
    grid.on_before(enter, all_on)
}

/// Variances (or standard deviations) of full windows over `xs`, the
/// window holding `older` then `newer` (its values, oldest first) before
/// `xs[0]` comes in: writes the statistic after each push into `out` while
/// the values are on one offset grid, and returns how many it wrote (0
/// when the window's own values are on none, or a variance on it could be
/// subnormal or overflow). The architecture layer compiles it for the
/// CPU's features (`kernels::exact_var_run`).
#[inline(always)]
pub(crate) fn run<F: Float>(
    older: &[F],
    newer: &[F],
    xs: &[F],
    out: &mut [F],
    spread: Spread,
) -> usize {
    let window = older.len() + newer.len();
    let xs = &xs[..xs.len().min(out.len())];
    let ahead = &xs[..xs.len().min(window.max(CHUNK))];
    if window < 2 {
        // A window of one has a variance of 0 or none: the push loop.
        return 0;
    }
    let divisor = if spread.sample { window - 1 } else { window };
    let Some((grid, quotients)) = Grid::of(older.iter().chain(newer).chain(ahead), window)
        .filter(Grid::is_offset)
        .and_then(|g| Some((g, Quotients::new(&g, window, divisor)?)))
    else {
        return 0;
    };
    // Every |y| below 2^(50 − wb), a quarter of the mean's reach: then
    // every `a`, `e` and `2S` is below 2^51, as `to_i64` needs.
    let mut grid = grid;
    grid.reach *= 0.25;
    if spread.root {
        run_on::<F, true>(&grid, &quotients, [older, newer], xs, out)
    } else {
        run_on::<F, false>(&grid, &quotients, [older, newer], xs, out)
    }
}

/// [`run`] on its grid.
#[inline(always)]
fn run_on<F: Float, const ROOT: bool>(
    grid: &Grid,
    quotients: &Quotients,
    [older, newer]: [&[F]; 2],
    xs: &[F],
    out: &mut [F],
) -> usize {
    let n = (older.len() + newer.len()) as i64;
    let (mut s, mut squares) = (0_i64, 0_i128);
    for &x in older.iter().chain(newer) {
        let (y, on) = grid.scaled(x.as_f64());
        if !on {
            return 0;
        }
        s += y as i64;
        squares += i128::from(y as i64) * i128::from(y as i64);
    }
    let mut big_d = i128::from(n) * squares - i128::from(s) * i128::from(s);
    let (mut a, mut e) = ([0_i64; CHUNK], [0_i64; CHUNK]);
    let mut done = 0;
    while done < xs.len() {
        let len = CHUNK.min(xs.len() - done);
        let enter = &xs[done..done + len];
        let taken = with_leaving([older, newer, xs], done, len, |at, leave| {
            steps(
                grid,
                n as f64,
                &enter[at..],
                leave,
                &mut a[at..],
                &mut e[at..],
            )
        });
        if taken == 0 {
            break;
        }
        // The integer updates, each `D` left in `a` (its low 64 bits) and
        // `e` (the rest).
        for (a, e) in a[..taken].iter_mut().zip(&mut e[..taken]) {
            let step = *a;
            big_d += i128::from(step) * i128::from(*e - 2 * s);
            s += step;
            *a = big_d as i64;
            *e = (big_d >> 64) as i64;
        }
        quotients.write::<F, ROOT>(&a[..taken], &e[..taken], &mut out[done..done + taken]);
        done += taken;
        if taken < len {
            break;
        }
    }
    done
}
