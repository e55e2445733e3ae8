//! The window statistics of `MovingAverage`, `MovingVariance` and
//! `MovingStats`: exact integer sums ([`ExactSums`]), with compensated
//! sums ([`ShiftedMoments`]) for the windows the integers cannot hold.
//!
//! While every finite value of the window fits the integer sums (their
//! binades span at most 94 bits: `1e9 + U(0, 1)` spans 53, an outlier of
//! `1e15` beside it 73), a push is two integer updates and nothing else:
//! no refresh, no rebuild, no check but whether the new value fits. A
//! value that does not fit sends the window to the engine's rebuild, which
//! takes the integer sums afresh from the ring's values with a new base
//! exponent (O(window), at such transitions only) or, when the values
//! themselves span too many binades (`1e300` beside `1e-300`, subnormals
//! beside ordinary values), computes the compensated sums from them and
//! carries on with those, as `TimeWindow` keeps them. While on the
//! compensated sums, the window tries the integers again each time its
//! ring's head wraps (every `window` pushes: an O(window) pass, less than
//! an operation per push): it is back on them at most `window` pushes
//! after the last value that kept it off has left.
//!
//! On the integer sums the statistics depend on the values in the window
//! only, not on the order they came in nor on what went through before:
//! two histories that leave the same values in the window read the same
//! bits.

#[cfg(feature = "serde")]
use super::state::SumsState;
use super::window::{ShiftedMoments, ShiftedSum, WindowStats};
#[cfg(feature = "serde")]
use crate::Error;
use crate::Float;
use crate::exact::sums::ExactSums;
use crate::kernels::exact_arith::pow2;

/// Exact sums, or compensated ones when the values do not fit them.
#[derive(Clone, Debug)]
pub(crate) struct ExactMoments<F> {
    /// The sums of the window's finite values while `exact`.
    exact: ExactSums,
    /// The sums of the window's finite values while not `exact`.
    fallback: ShiftedMoments<F>,
    /// Which of the two holds the window.
    on_exact: bool,
    /// A value did not fit the integer sums, or the head wrapped while on
    /// the compensated ones: the window is to be taken afresh.
    retake: bool,
    /// An integer `c` the mean is read about ([`offset_mean`]): 0, or a
    /// float of at least `2^53` in magnitude (so an integer), in units of
    /// the base; about the window's mean when its shift last moved (at
    /// each wrap of its ring's head). Any such integer gives the same
    /// bits.
    /// As an integer and as a float.
    offset: (i64, f64),
}

impl<F: Float> Default for ExactMoments<F> {
    fn default() -> Self {
        Self {
            exact: ExactSums::default(),
            fallback: ShiftedMoments::default(),
            on_exact: true,
            retake: false,
            offset: (0, 0.0),
        }
    }
}

/// `2^48`, `2^53`, `2^63`, and `1.5·2^52`.
const TWO48: f64 = 281_474_976_710_656.0;
const TWO53: f64 = 9_007_199_254_740_992.0;
const TWO63: f64 = 9_223_372_036_854_775_808.0;
const MAGIC: f64 = 6_755_399_441_055_744.0;

/// `sum·2^base / count` correctly rounded (to nearest, ties to even) by
/// one division, about an integer `offset` (`c`): 0, or a float of at
/// least `2^53` in magnitude (the window keeps its mean at the last wrap
/// of its ring's head). `None` unless `T = sum − n·c` is below `2^51` in
/// magnitude (the mean within `2^51/n` units of `c`), or when the result
/// would not be a normal float.
///
/// `T` and `n` are exact floats, so `q = fl(T/n)` is within half an ulp
/// of `T/n`, less than `1/(4n)` (`|T/n| < 2^51/n`). For `c = 0` the mean
/// is `q`. Otherwise `c + T/n` lies above `2^52`, where the floats are
/// integers and the ties between them multiples of 1/2; `T/n`, a multiple
/// of `1/n`, is either on a tie (then `q = T/n`, exactly) or at least
/// `1/(2n)` from every one, so `fl(c + q)` rounds as `c + T/n` does (the
/// argument of the series' offset sums, `series/exact_mean.rs`).
#[inline]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::float_cmp,
    reason = "T below 2^51, tested; the offset's two forms compared exactly"
)]
fn offset_mean(sum: i128, count: u64, base: i32, (c, offset): (i64, f64)) -> Option<f64> {
    debug_assert!(c as f64 == offset && (c == 0 || offset.abs() >= TWO53));
    if count == 0 || !(-990..=950).contains(&base) {
        return None;
    }
    let t = sum - i128::from(count) * i128::from(c);
    if (t + (1 << 51)) as u128 >= 1 << 52 {
        return None;
    }
    // T + 1.5·2^52 by its bits, less 1.5·2^52: T, exactly.
    let t = f64::from_bits(MAGIC.to_bits().wrapping_add(t as i64 as u64)) - MAGIC;
    let q = t / small_to_f64(count);
    Some((offset + q) * pow2(base))
}

/// `|sum|/count`, within a few ulps (`None` from `2^100` on): the window's
/// mean in units of the base, for an offset ([`offset_mean`]).
#[inline]
#[allow(
    clippy::cast_possible_truncation,
    reason = "parts of a sum below 2^100, each below 2^52"
)]
fn approximate(sum: i128, count: u64) -> Option<f64> {
    let a = sum.unsigned_abs();
    if a >> 100 != 0 || count == 0 {
        return None;
    }
    // fl(a), from two parts below 2^52.
    let fa = small_to_f64((a >> 48) as u64) * TWO48 + small_to_f64(a as u64 & ((1 << 48) - 1));
    let q = fa / small_to_f64(count);
    Some(if sum < 0 { -q } else { q })
}

/// `sum·2^base / count` correctly rounded (to nearest, ties to even), as
/// `ExactSums::mean_or_zero` reads it, in a few integer and float
/// operations and no call, so that a push that reads its mean back
/// (`MovingAverage::push`) stays a short loop; `None` where this route
/// does not decide (a tie, a result at the bottom of a binade or off the
/// normal range, `|sum| ≥ 2^100`, an empty set), for `mean_or_zero`.
///
/// With `a = |sum|`, `q = fl(fl(a)/n)` is within one and a half ulps of
/// `a/n` (`fl(a)` within `2^-53·a`, below an ulp of `a/n` once divided,
/// and the quotient's half an ulp). Written `q = m·2^e` (`2^52 ≤ m <
/// 2^53`), `a/n = (m + R/D)·2^e` for the integers `R = a − n·m·2^e` and
/// `D = n·2^e` (or, for `e < 0`, `R = a·2^-e − n·m` and `D = n`), with
/// `|R| < 1.5·D < 2^50`: exact in 64-bit words. `|2R| < D` makes `m·2^e`
/// the nearest float, `D < 2R < 3D` makes it `(m + 1)·2^e`, and `−3D <
/// 2R < −D` makes it `(m − 1)·2^e` when `m` is above `2^52` (below
/// `2^52·2^e` the floats are twice as close). A push of `1e6 + U(0, 1)`
/// is left to the integers about once in `2^53`.
#[inline]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::many_single_char_names,
    clippy::needless_bitwise_bool,
    reason = "every cast is of a value the tests above it bound (parts below \
              2^52, the exponent field, R below 2^50); the names are the doc's; \
              the rare cases are tested together, one branch"
)]
fn quick_mean(sum: i128, count: u64, base: i32) -> Option<f64> {
    let a = sum.unsigned_abs();
    if a >> 100 != 0 || a == 0 || count == 0 || count >> 32 != 0 {
        return None;
    }
    // fl(a), from two parts below 2^52.
    let fa = small_to_f64((a >> 48) as u64) * TWO48 + small_to_f64(a as u64 & ((1 << 48) - 1));
    let q = fa / small_to_f64(count);
    let bits = q.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1075;
    let m = (bits & ((1 << 52) - 1)) | (1 << 52);
    // R and D: |R| < 1.5·D and D = n·2^e ≈ a/m < 2^48, so R is the low
    // 64 bits of the difference, taken modulo 2^64.
    let nm = count.wrapping_mul(m);
    let (r, d) = if e >= 0 {
        ((a as u64).wrapping_sub(nm << e) as i64, (count << e) as i64)
    } else if e > -64 {
        (((a as u64) << -e).wrapping_sub(nm) as i64, count as i64)
    } else {
        return None;
    };
    let r2 = 2 * r;
    // Up when 2R > D, down when 2R < −D; at the bottom of a binade (a
    // negative R and m = 2^52) the floats below are twice as close, and
    // a tie or an estimate off by more is left to the integers (none of
    // which happens but about once in 2^53 on random data): tested
    // together, one branch.
    let (up, down) = (r2 > d, r2 < -d);
    let undecided =
        (r2 == d) | (r2 == -d) | (r2 >= 3 * d) | (r2 <= -3 * d) | ((r < 0) & (m == 1 << 52));
    let (mut m, mut k) = (m + u64::from(up) - u64::from(down), e + base);
    if undecided || !(-1074..=970).contains(&k) {
        return None;
    }
    if m == 1 << 53 {
        (m, k) = (1 << 52, k + 1);
    }
    // m·2^k, a normal float, by its bits: no conversion, no product.
    let magnitude = (((k + 52 + 1023) as u64) << 52) | (m & ((1 << 52) - 1));
    let sign = u64::from(sum < 0) << 63;
    Some(f64::from_bits(sign | magnitude))
}

/// `v < 2^52` as an `f64`, exactly: its bits under the exponent of `2^52`,
/// less `2^52`. A conversion instruction (`cvtsi2sd`) writes only the low
/// half of its register and so waits for the register's last writer,
/// which in a loop of pushes and reads is the read before.
#[inline]
fn small_to_f64(v: u64) -> f64 {
    const TWO52: f64 = 4_503_599_627_370_496.0;
    f64::from_bits(TWO52.to_bits() | v) - TWO52
}

impl<F: Float> ExactMoments<F> {
    /// The mean of the finite values (0 when there are none).
    #[inline]
    pub(crate) fn mean_value(&self) -> F {
        if self.on_exact {
            F::from_f64(self.exact_mean())
        } else {
            self.fallback.sum().mean()
        }
    }

    /// The integer sums' mean, correctly rounded: [`offset_mean`], else
    /// [`quick_mean`], else `ExactSums::mean_or_zero`.
    #[inline]
    fn exact_mean(&self) -> f64 {
        let (sum, count, base) = (self.exact.sum(), self.exact.count(), self.exact.base());
        offset_mean(sum, count, base, self.offset)
            .or_else(|| quick_mean(sum, count, base))
            .unwrap_or_else(|| self.exact.mean_or_zero())
    }

    /// `Σ(x − x̄)² / divisor` of the finite values, `divisor > 0`.
    pub(crate) fn variance(&self, divisor: usize) -> F {
        if self.on_exact {
            F::from_f64(self.exact.variance(divisor as u64))
        } else {
            self.fallback.variance(F::from_count(divisor as u64))
        }
    }

    /// Whether the statistics come from the exact integer sums.
    pub(crate) fn is_exact(&self) -> bool {
        self.on_exact
    }

    /// Takes the statistics afresh from `values()`: the integer sums when
    /// the values fit them, else `fallback` (which recomputes the
    /// compensated sums).
    fn retake_from<I: Iterator<Item = F>>(
        &mut self,
        values: impl Fn() -> I,
        fallback: impl FnOnce(&mut ShiftedMoments<F>),
    ) {
        self.retake = false;
        if let Some(exact) = ExactSums::of_values(|| values().map(F::as_f64)) {
            self.exact = exact;
            self.on_exact = true;
        } else {
            fallback(&mut self.fallback);
            self.on_exact = false;
        }
    }
}

impl<F: Float> WindowStats<F> for ExactMoments<F> {
    #[inline]
    fn add(&mut self, x: F) {
        if self.on_exact {
            self.retake |= !self.exact.add_fitting(x.as_f64());
        } else {
            self.fallback.add(x);
        }
    }

    /// At the wraps the engine would refresh its compensated sums: the
    /// integer sums do not drift, but the values are taken afresh anyway,
    /// which fits the base exponent to them again.
    fn refresh(&mut self, older: &[F], newer: &[F]) {
        let values = || older.iter().chain(newer).copied();
        self.retake_from(values, |f| f.refresh(older, newer));
    }

    fn rebuild_finite(&mut self, older: &[F], newer: &[F]) {
        let values = || older.iter().chain(newer).copied();
        self.rebuild(values);
    }

    #[inline]
    fn remove(&mut self, x: F) {
        if self.on_exact {
            self.exact.remove(x.as_f64());
        } else {
            self.fallback.remove(x);
        }
    }

    #[inline]
    fn replace(&mut self, old: F, new: F) {
        if self.on_exact {
            // A branch, not an `|=`: the flag is written only when a value
            // does not fit, not read and stored back at every push.
            if !self.exact.replace(old.as_f64(), new.as_f64()) {
                self.retake = true;
            }
        } else {
            self.fallback.replace(old, new);
        }
    }

    /// Off the integer sums, the compensated sums' shift moves onto `x`;
    /// on them, the mean's offset ([`offset_mean`]) onto the mean, so that
    /// it follows the values.
    #[inline]
    fn rebase(&mut self, x: F) {
        if self.on_exact {
            // The mean now, in units of the base: from 2^53 on every
            // float is an integer; below, 0 (any integer offset gives the
            // same bits).
            let v = approximate(self.exact.sum(), self.exact.count()).unwrap_or(0.0);
            let fits = (TWO53..TWO63).contains(&v.abs());
            #[allow(
                clippy::cast_possible_truncation,
                reason = "an integer below 2^63 in magnitude"
            )]
            let offset = if fits { (v as i64, v) } else { (0, 0.0) };
            self.offset = offset;
        } else {
            self.fallback.rebase(x);
        }
    }

    fn wrapped(&mut self) {
        if !self.on_exact {
            self.retake = true;
        }
    }

    #[inline]
    fn needs_rebuild(&self) -> bool {
        self.retake || (!self.on_exact && self.fallback.needs_rebuild())
    }

    /// A retake: the integer sums if the values fit, else the compensated
    /// sums, computed afresh when the window comes off the integers and
    /// rebuilt by their own rule while it stays off them.
    fn rebuild<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        if self.on_exact || self.retake {
            let was_exact = self.on_exact;
            let stale = self.fallback.needs_rebuild();
            self.retake_from(&values, |f| {
                if was_exact {
                    f.resum(&values);
                } else if stale {
                    f.rebuild(&values);
                }
            });
        } else {
            self.fallback.rebuild(values);
        }
    }

    fn resum<I: Iterator<Item = F>>(&mut self, values: impl Fn() -> I) {
        self.retake_from(&values, |f| f.resum(&values));
    }

    /// The compensated sum, which only [`mean`](WindowStats::mean) reads
    /// and only off the integer sums.
    #[inline]
    fn sum(&self) -> &ShiftedSum<F> {
        self.fallback.sum()
    }

    #[inline]
    fn mean(&self) -> F {
        self.mean_value()
    }

    /// On the integer sums, nothing but the mark that the window is on
    /// them (a `shift`, `hi`, `lo` and `lo_churn` of 0, a `scale` of 1,
    /// and no `m2`): they are taken afresh from the values on the way in,
    /// exactly as they were. Off them, the compensated sums as they are.
    #[cfg(feature = "serde")]
    fn to_state(&self) -> SumsState<F> {
        if self.on_exact {
            SumsState {
                shift: F::zero(),
                hi: F::zero(),
                lo: F::zero(),
                lo_churn: F::zero(),
                scale: F::one(),
                m2: None,
            }
        } else {
            self.fallback.to_state()
        }
    }

    /// A state with M2 is the compensated sums as they were (a window
    /// saved off the integer sums, or a `MovingVariance` saved before it
    /// moved onto them), which go on as they would have. A state without
    /// M2 that is not the mark of the integer sums is a `MovingAverage`'s
    /// plain compensated sum, saved before it moved onto them: checked as
    /// it was then, then the sums are taken afresh from the values.
    ///
    /// # Errors
    ///
    /// When the mark of the integer sums is exactly that but the values do
    /// not fit them, or when the compensated sums (with or without M2) do
    /// not pass their checks.
    #[cfg(feature = "serde")]
    fn from_state<I: Iterator<Item = F>>(
        state: SumsState<F>,
        values: impl Fn() -> I,
    ) -> Result<Self, Error> {
        if state.m2.is_some() {
            return Ok(Self {
                fallback: ShiftedMoments::from_state(state, values)?,
                on_exact: false,
                ..Self::default()
            });
        }
        let mark = [state.shift, state.hi, state.lo, state.lo_churn];
        let positive_zero = |x: &F| *x == F::zero() && x.is_sign_positive();
        if !mark.iter().all(positive_zero) || state.scale != F::one() {
            // A plain compensated sum: the state of a `MovingAverage` saved
            // before it moved onto these sums. Checked as it was then, and
            // taken afresh from the values, as a window that has just come
            // onto the exact sums holds them.
            ShiftedSum::from_state(state, &values)?;
            let mut sums = Self::default();
            sums.retake_from(&values, |f| f.resum(&values));
            return Ok(sums);
        }
        let Some(exact) = ExactSums::of_values(|| values().map(F::as_f64)) else {
            return Err(Error::state(
                "the values span too many binades for exact sums, which the sums claim",
            ));
        };
        Ok(Self {
            exact,
            ..Self::default()
        })
    }
}

#[cfg(test)]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    reason = "random integers cut to the ranges the routes take"
)]
mod tests {
    use super::{offset_mean, quick_mean};
    use crate::kernels::exact_arith::{self, checked_quotient};

    /// The integers' correctly rounded mean, the reference.
    fn rounded_mean(sum: i128, count: u32, base: i32) -> f64 {
        exact_arith::rounded_mean(sum, count, base, checked_quotient::<false>)
    }

    /// The `SplitMix64` generator.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn the_quick_mean_is_the_integers_rounding_or_leaves_it_to_them() {
        let mut state = 5;
        let (mut decided, mut total) = (0_u32, 0_u32);
        for _ in 0..200_000 {
            let bits = 1 + next(&mut state) % 99;
            let wide = (u128::from(next(&mut state)) << 64) | u128::from(next(&mut state));
            let magnitude = (wide >> (128 - bits)) as i128;
            let sum = if next(&mut state).is_multiple_of(2) {
                magnitude
            } else {
                -magnitude
            };
            let count = match next(&mut state) % 3 {
                0 => 1 + next(&mut state) % 32,
                1 => 1 + next(&mut state) % 5000,
                _ => 1 + next(&mut state) % u64::from(u32::MAX),
            };
            let base = (next(&mut state) % 200) as i32 - 150;
            let exact = rounded_mean(sum, count as u32, base);
            total += u32::from(sum != 0);
            if let Some(quick) = quick_mean(sum, count, base) {
                decided += 1;
                assert_eq!(
                    quick.to_bits(),
                    exact.to_bits(),
                    "{sum} / {count} · 2^{base}"
                );
            }
        }
        // Everything but the rare ties and binade edges is decided here.
        assert!(
            f64::from(decided) > 0.9 * f64::from(total),
            "{decided} of {total}"
        );
    }

    #[test]
    fn the_offset_mean_is_the_integers_rounding_or_leaves_it_to_them() {
        let mut state = 9;
        let mut decided = 0_u32;
        for i in 0..200_000 {
            let count = match next(&mut state) % 3 {
                0 => 1 + next(&mut state) % 32,
                1 => 1 + next(&mut state) % 2000,
                _ => 1 + next(&mut state) % (1 << 20),
            };
            // An offset of 2^53 to 2^62 (a float, so an integer), or 0.
            let c = if i % 4 == 0 {
                0.0
            } else {
                let bits = 54 + next(&mut state) % 9;
                let c = ((next(&mut state) >> (64 - bits)) | (1 << (bits - 1))) as f64;
                if next(&mut state).is_multiple_of(2) {
                    c
                } else {
                    -c
                }
            };
            // Sums about n·c, within 2^52 (some beyond the route's 2^51).
            let spread = 1 + next(&mut state) % 52;
            let t = (next(&mut state) >> (64 - spread)) as i128;
            let t = if next(&mut state).is_multiple_of(2) {
                t
            } else {
                -t
            };
            let offset = (c as i64, c);
            let sum = i128::from(count) * i128::from(offset.0) + t;
            let base = (next(&mut state) % 100) as i32 - 60;
            if let Some(mean) = offset_mean(sum, count, base, offset) {
                decided += 1;
                let exact = rounded_mean(sum, count as u32, base);
                assert_eq!(
                    mean.to_bits(),
                    exact.to_bits(),
                    "{sum} / {count} · 2^{base} about {c}"
                );
            }
        }
        assert!(decided > 100_000, "{decided}");
        // Every small T over small windows, about offsets where the floats
        // are 2, 4 or 1024 apart: many sums on a boundary or a tie.
        for c in [1_i64 << 53, (1 << 53) + 2, -(1 << 53), 3 << 53, 1 << 62] {
            for count in 1..=100_u64 {
                for t in -300..=300_i128 {
                    let sum = i128::from(count) * i128::from(c) + t;
                    let mean = offset_mean(sum, count, -3, (c, c as f64));
                    let exact = rounded_mean(sum, count as u32, -3);
                    assert_eq!(
                        mean.map(f64::to_bits),
                        Some(exact.to_bits()),
                        "{t}/{count} + {c}"
                    );
                }
            }
        }
        // On a tie, to the even neighbour: 2^53 + 1 lies between 2^53 and
        // 2^53 + 2.
        let two53 = 9_007_199_254_740_992.0;
        let sum = 2 * (1_i128 << 53) + 2;
        assert_eq!(offset_mean(sum, 2, 0, (1 << 53, two53)), Some(two53));
        assert_eq!(rounded_mean(sum, 2, 0), two53);
        // T at 2^51 or beyond, or an empty set: left to the other routes.
        assert_eq!(offset_mean(1 << 51, 1, 0, (0, 0.0)), None);
        assert_eq!(offset_mean(0, 0, 0, (0, 0.0)), None);
    }

    #[test]
    fn ties_and_the_bottom_of_a_binade_go_to_the_integers() {
        // (2^53 + 1)/2 lies halfway between two floats.
        assert_eq!(quick_mean((1 << 53) + 1, 2, 0), None);
        // 2^52 − 1/3: fl(a) rounds up to 3·2^52 and the quotient to 2^52,
        // but the floats below 2^52 are twice as close: 2^52 − 1/2.
        let (sum, below) = ((3_i128 << 52) - 1, 4_503_599_627_370_495.5);
        assert_eq!(rounded_mean(sum, 3, 0), below);
        assert_eq!(quick_mean(sum, 3, 0), None);
        // 2^53 − 1/2, halfway: to the even 2^53.
        let two53 = 9_007_199_254_740_992.0;
        assert_eq!(rounded_mean((1 << 54) - 1, 2, 0), two53);
        assert!(quick_mean((1 << 54) - 1, 2, 0).is_none_or(|q| q == two53));
        // Small integers, either sign, and the empty set.
        assert_eq!(quick_mean(-6, 4, 0), Some(-1.5));
        assert_eq!(quick_mean(7, 2, -1), Some(1.75));
        assert_eq!(quick_mean(0, 3, 0), None);
        assert_eq!(quick_mean(5, 0, 0), None);
    }
}
