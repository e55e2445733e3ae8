//! Σx and Σx² of a multiset of finite `f64`, kept exactly in integers.
//!
//! A finite `f64` is `±m·2^e` with an integer `m < 2^53`. When every value
//! of the set is an integer multiple of `2^base` and below `2^(base +
//! LIMIT)` in magnitude, the set's sums are integers once divided by a
//! power of two:
//!
//! - `S = Σx / 2^base`, kept in an `i128`;
//! - `Q = Σx² / 2^(2·base)`, kept in 256 bits (each `m²` is a `u64 × u64 →
//!   u128` product, shifted).
//!
//! Adding and removing a value are integer additions and subtractions: no
//! rounding, no drift, no refresh, nothing cancels. The statistics are
//! read from the exact integers, rounding once ([`ExactSums::mean`]) or
//! twice ([`ExactSums::variance`]), so they depend only on the values in
//! the set, never on the order they came in or on what went through
//! before.
//!
//! # Headroom
//!
//! With `|x|/2^base < 2^LIMIT` (`LIMIT` = 94) for every value and at most
//! `MAX_COUNT` = 2³² − 1 values:
//!
//! - `|S| ≤ n·max|x|/2^base < 2³²·2⁹⁴ = 2¹²⁶`, which fits an `i128`;
//! - `Q < 2³²·2¹⁸⁸ = 2²²⁰`, which fits 256 bits;
//! - at read, `n·Q < 2³²·2²²⁰ = 2²⁵²` and `S² < 2²⁵²`, so `D = n·Q − S²`
//!   (which is `n·M2/2^(2·base)` and never negative, by Cauchy–Schwarz) is
//!   formed in 256 bits without overflow.
//!
//! Intermediate sums after an addition and before the matching removal
//! stay within these bounds too, since they are sums of at most
//! `MAX_COUNT` values of the set. A value that would break either bound
//! (a value too large or too finely resolved for `base`, a `MAX_COUNT`-th
//! value) is refused: the caller takes the sums afresh from its values
//! ([`ExactSums::of_values`]), which picks a new `base` for them, or, when
//! their binades span more than `LIMIT` bits (`1e300` beside `1e-300`,
//! subnormals beside ordinary values), keeps them another way.
//!
//! # Two routes
//!
//! A value whose `x/2^base` is an integer below `2^63` in magnitude takes
//! the fast route: one multiplication by `2^-base` (exact: a power of two)
//! and one conversion to `i64`, checked by converting back, then `i128`
//! sums of the value and of its square (below `2^126`). Every other value
//! that fits takes the wide route, from the float's fields: the mantissa
//! shifted into an `i128` and its square into 256 bits. Both give the same
//! integers, so a value may enter by one route and leave by the other.
//!
//! `of_values` sets `base` halfway into the slack the values leave: with
//! `top` the least power of two above every value and `low` the largest
//! power of two every value is a multiple of, `base = low − (LIMIT −
//! (top − low))/2`, so later values up to `2^(slack/2)` times larger, or
//! resolved that many bits finer, still fit; but not lower than `top − 62`
//! when the values span at most 62 bits, so that all of them take the fast
//! route.

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::many_single_char_names,
    clippy::float_cmp,
    reason = "integer arithmetic on the fields of floats: every cast is of a \
              value whose range the code above it bounds (limbs, bit counts, \
              exponents within ±2200), and the float comparisons test \
              exactness"
)]

/// `|x| / 2^base` stays below `2^LIMIT` for every value of the set.
const LIMIT: i32 = 94;

/// `of_values` keeps the values below `2^(base + SMALL)` when it can, so
/// that they take the fast route (`ExactSums::small`).
const SMALL: i32 = 62;

/// The most values the sums hold (see the module doc).
const MAX_COUNT: u64 = (1 << 32) - 1;

/// `x` as its sign, the integer `m < 2^53` and the exponent `e` with
/// `|x| = m·2^e` (`e = −1074` for subnormals and zeros).
#[inline]
fn parts(x: f64) -> (bool, u64, i32) {
    let bits = x.to_bits();
    let negative = bits >> 63 != 0;
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    if biased == 0 {
        (negative, fraction, -1074)
    } else {
        (negative, fraction | (1 << 52), biased - 1075)
    }
}

/// The number of bits of `m`.
#[inline]
fn bit_length(m: u64) -> i32 {
    64 - m.leading_zeros() as i32
}

/// `2^k` as an `f64`, for `−1074 ≤ k ≤ 1023`.
fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (k + 1074))
    }
}

/// `x·2^k`, exact whenever the result is a normal number.
fn scale2(mut x: f64, mut k: i32) -> f64 {
    while k > 1000 {
        x *= pow2(1000);
        k -= 1000;
    }
    while k < -1000 {
        x *= pow2(-1000);
        k += 1000;
    }
    x * pow2(k)
}

/// `mag·2^exp`, plus a fraction strictly between 0 and `2^exp` when
/// `sticky`, rounded to the nearest `f64` (ties to even), +∞ when it
/// overflows. When `sticky`, `mag` must have at least 55 bits, or the
/// result must be subnormal: the fraction then only breaks ties.
fn round_to_f64(mag: u128, exp: i32, sticky: bool) -> f64 {
    if mag == 0 {
        return 0.0;
    }
    let bits = 128 - mag.leading_zeros() as i32;
    let top = exp + bits - 1;
    if top > 1023 {
        return f64::INFINITY;
    }
    // The weight of the result's last bit, and how many bits of `mag` lie
    // below it.
    let lsb = (top - 52).max(-1074);
    let drop = lsb - exp;
    let kept = if drop <= 0 {
        mag << (-drop)
    } else if drop > 128 {
        0
    } else {
        let kept = if drop == 128 { 0 } else { mag >> drop };
        let rest = if drop == 128 {
            mag
        } else {
            mag - (kept << drop)
        };
        let half = 1_u128 << (drop - 1);
        let up = rest > half || (rest == half && (sticky || kept & 1 == 1));
        kept + u128::from(up)
    };
    // `kept ≤ 2^53`, and `kept·2^lsb` is representable (or overflows to
    // +∞ when rounding carried into 2^1024).
    let kept = kept as u64 as f64;
    if lsb > 971 {
        scale2(kept, lsb)
    } else {
        kept * pow2(lsb)
    }
}

/// `i²` for an `i` of magnitude below `2^63` (one 64 × 64 → 128-bit
/// product), below `2^126`.
#[inline]
fn square64(i: i64) -> i128 {
    let a = u128::from(i.unsigned_abs());
    (a * a) as i128
}

/// A 256-bit unsigned integer as four 64-bit limbs, least significant
/// first (the read-out's arithmetic).
type U256 = [u64; 4];

/// `a·b` for a 256-bit `a` and a 64-bit `b`, which must fit 256 bits.
fn mul_small(a: U256, b: u64) -> U256 {
    let mut out = [0; 4];
    let mut carry = 0_u128;
    for (o, &limb) in out.iter_mut().zip(&a) {
        let p = u128::from(limb) * u128::from(b) + carry;
        *o = p as u64;
        carry = p >> 64;
    }
    out
}

/// `a²` for `a < 2^128`.
fn square(a: u128) -> U256 {
    let (h, l) = ((a >> 64) as u64, a as u64);
    let ll = u128::from(l) * u128::from(l);
    let lh = u128::from(l) * u128::from(h);
    let hh = u128::from(h) * u128::from(h);
    // a² = hh·2^128 + 2·lh·2^64 + ll.
    let mut out = [ll as u64, (ll >> 64) as u64, hh as u64, (hh >> 64) as u64];
    for _ in 0..2 {
        let mut carry = 0_u128;
        for (i, part) in [lh as u64, (lh >> 64) as u64, 0].into_iter().enumerate() {
            let s = u128::from(out[i + 1]) + u128::from(part) + carry;
            out[i + 1] = s as u64;
            carry = s >> 64;
        }
    }
    out
}

/// `a − b` for `a ≥ b`.
fn sub(a: U256, b: U256) -> U256 {
    let mut out = [0; 4];
    let mut borrow = false;
    for i in 0..4 {
        let (d, b1) = a[i].overflowing_sub(b[i]);
        let (d, b2) = d.overflowing_sub(u64::from(borrow));
        out[i] = d;
        borrow = b1 || b2;
    }
    out
}

/// `a` rounded to the nearest `f64` (ties to even), then times `2^exp`
/// (a second rounding only when that is subnormal).
fn u256_to_f64(a: U256, exp: i32) -> f64 {
    let hi = (u128::from(a[3]) << 64) | u128::from(a[2]);
    let lo = (u128::from(a[1]) << 64) | u128::from(a[0]);
    if hi == 0 {
        return scale2(round_to_f64(lo, 0, false), exp);
    }
    // The top 128 bits, and whether anything below them is set.
    let shift = hi.leading_zeros();
    let top = if shift == 0 {
        hi
    } else {
        (hi << shift) | (lo >> (128 - shift))
    };
    let below = if shift == 0 { lo } else { lo << shift };
    scale2(round_to_f64(top, 128 - shift as i32, below != 0), exp)
}

/// The exact sums of a multiset of finite `f64` (see the module doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ExactSums {
    /// How many values.
    count: u64,
    /// Every value is a multiple of `2^base` below `2^(base + LIMIT)`.
    base: i32,
    /// `Σx / 2^base`.
    sum: i128,
    /// `Σx² / 2^(2·base)`, low and high halves.
    squares_lo: u128,
    squares_hi: u128,
    /// `2^-base` when that is a normal `f64`, else 0 (no fast route).
    scale: f64,
}

impl ExactSums {
    /// `x / 2^base` when it is an integer of magnitude below `2^63` (the
    /// fast route: a multiplication by a power of two and a conversion,
    /// both exact when the check passes), else `None`.
    #[inline]
    fn small(&self, x: f64) -> Option<i64> {
        let v = x * self.scale;
        let i = v as i64;
        // A conversion that saturated, or a product that underflowed to 0,
        // fails the check.
        (i as f64 == v && i != i64::MAX && (i != 0 || x == 0.0)).then_some(i)
    }

    /// Adds `d` (a difference of squares below `2^126`) to `Q`.
    #[inline]
    fn add_squares(&mut self, d: i128) {
        let (l, carry) = self.squares_lo.overflowing_add(d as u128);
        let extend = if d < 0 { u128::MAX } else { 0 };
        self.squares_hi = self
            .squares_hi
            .wrapping_add(extend)
            .wrapping_add(u128::from(carry));
        self.squares_lo = l;
    }

    /// `|x| / 2^base` as `(negative, m, s)` with `|x|/2^base = m·2^s`,
    /// or `None` when it is not an integer below `2^LIMIT`.
    #[inline]
    fn scaled(&self, x: f64) -> Option<(bool, u64, u32)> {
        let (negative, m, e) = parts(x);
        let d = e - self.base;
        if d >= 0 {
            (d + bit_length(m) <= LIMIT).then_some((negative, m, d as u32))
        } else if m == 0 {
            Some((negative, 0, 0))
        } else {
            let r = d.unsigned_abs();
            if r < 64 && m.trailing_zeros() >= r {
                Some((negative, m >> r, 0))
            } else {
                None
            }
        }
    }

    /// `±m·2^s` and `m²·2^(2s)` (low and high halves), for a value that
    /// [`scaled`](Self::scaled) took.
    #[inline]
    fn terms((negative, m, s): (bool, u64, u32)) -> (i128, u128, u128) {
        let v = i128::from(m) << s;
        let v = if negative { -v } else { v };
        let p = u128::from(m) * u128::from(m);
        let t = 2 * s;
        let (lo, hi) = if t == 0 {
            (p, 0)
        } else if t < 128 {
            (p << t, p >> (128 - t))
        } else {
            (0, p << (t - 128))
        };
        (v, lo, hi)
    }

    /// Adds the terms of a value.
    #[inline]
    fn plus(&mut self, (v, lo, hi): (i128, u128, u128)) {
        self.sum += v;
        let (l, carry) = self.squares_lo.overflowing_add(lo);
        self.squares_lo = l;
        self.squares_hi = self
            .squares_hi
            .wrapping_add(hi)
            .wrapping_add(u128::from(carry));
    }

    /// Takes away the terms of a value of the set.
    #[inline]
    fn minus(&mut self, (v, lo, hi): (i128, u128, u128)) {
        self.sum -= v;
        let (l, borrow) = self.squares_lo.overflowing_sub(lo);
        self.squares_lo = l;
        self.squares_hi = self
            .squares_hi
            .wrapping_sub(hi)
            .wrapping_sub(u128::from(borrow));
    }

    /// The terms of `x`, a value of the set.
    #[inline]
    fn held(&self, x: f64) -> (i128, u128, u128) {
        // Every value of the set was taken at this base or a higher one
        // (the base only moves in `of_values`), and fits.
        Self::terms(self.scaled(x).unwrap_or_default())
    }

    /// Adds `x` (finite), or returns `false` and changes nothing when it
    /// does not fit (see the module doc).
    #[inline]
    pub(crate) fn add(&mut self, x: f64) -> bool {
        if self.count == 0 {
            // An empty set takes any base: the one `of_values` would pick.
            *self = Self::of_values(|| core::iter::once(x)).unwrap_or_default();
            return self.count == 1;
        }
        if self.count >= MAX_COUNT {
            return false;
        }
        if let Some(i) = self.small(x) {
            self.count += 1;
            self.sum += i128::from(i);
            self.add_squares(square64(i));
            return true;
        }
        let Some(taken) = self.scaled(x) else {
            return false;
        };
        self.plus(Self::terms(taken));
        self.count += 1;
        true
    }

    /// Removes `x`, a value of the set.
    #[inline]
    pub(crate) fn remove(&mut self, x: f64) {
        self.count -= 1;
        if let Some(i) = self.small(x) {
            self.sum -= i128::from(i);
            self.add_squares(-square64(i));
            return;
        }
        self.minus(self.held(x));
    }

    /// Removes `old`, a value of the set, and adds `new` (finite), or
    /// returns `false` and changes nothing when `new` does not fit.
    #[inline]
    pub(crate) fn replace(&mut self, old: f64, new: f64) -> bool {
        if let (Some(a), Some(b)) = (self.small(new), self.small(old)) {
            self.sum += i128::from(a) - i128::from(b);
            // Both squares are below 2^126: so is their difference.
            self.add_squares(square64(a) - square64(b));
            return true;
        }
        self.replace_wide(old, new)
    }

    /// [`replace`](Self::replace) off the fast route.
    #[inline(never)]
    fn replace_wide(&mut self, old: f64, new: f64) -> bool {
        let Some(taken) = self.scaled(new) else {
            return false;
        };
        let old = self.held(old);
        self.plus(Self::terms(taken));
        self.minus(old);
        true
    }

    /// The sums of `values()` (finite), with the base picked as the module
    /// doc says, or `None` when they do not fit: their binades span more
    /// than `LIMIT` bits, or there are more than `MAX_COUNT` of them.
    /// O(n), two passes.
    pub(crate) fn of_values<I: Iterator<Item = f64>>(values: impl Fn() -> I) -> Option<Self> {
        let (mut count, mut low, mut top) = (0_u64, i32::MAX, i32::MIN);
        for x in values() {
            count += 1;
            let (_, m, e) = parts(x);
            if m != 0 {
                low = low.min(e + m.trailing_zeros() as i32);
                top = top.max(e + bit_length(m));
            }
        }
        if count > MAX_COUNT {
            return None;
        }
        let base = if top == i32::MIN {
            0
        } else {
            let span = top - low;
            if span > LIMIT {
                return None;
            }
            let halfway = low - (LIMIT - span) / 2;
            if span <= SMALL {
                // Every value on the fast route, with room below.
                halfway.max(top - SMALL)
            } else {
                halfway
            }
        };
        let scale = if (-1022..=1023).contains(&-base) {
            pow2(-base)
        } else {
            0.0
        };
        let mut sums = Self {
            count,
            base,
            scale,
            ..Self::default()
        };
        for x in values() {
            sums.plus(Self::terms(sums.scaled(x)?));
        }
        Some(sums)
    }

    /// The mean `Σx/n`, correctly rounded (to nearest, ties to even);
    /// +0 for an empty set.
    pub(crate) fn mean(&self) -> f64 {
        if self.count == 0 || self.sum == 0 {
            return 0.0;
        }
        let n = u128::from(self.count);
        let a = self.sum.unsigned_abs();
        // Scale the sum up until the quotient has at least 55 bits, so
        // that the remainder only decides ties: |S| < 2^126 and n < 2^32
        // keep the shifted sum below 2^(32 + 56) ≤ 2^127.
        let want = (128 - n.leading_zeros() as i32) + 55;
        let k = (want - (128 - a.leading_zeros() as i32)).max(0);
        let a = a << k;
        let (q, r) = (a / n, a % n);
        let mean = round_to_f64(q, self.base - k, r != 0);
        if self.sum < 0 { -mean } else { mean }
    }

    /// `Σ(x − x̄)² / divisor` for `divisor > 0`: `D = n·Q − S²`, exact,
    /// rounded to an `f64`, divided by `n·divisor`, scaled by
    /// `2^(2·base)`. Relative error at most `ε` (two roundings of `ε/2`,
    /// and a third when `n·divisor > 2^53`); below the normal range,
    /// within `2^-1074` absolute; +∞ when too large for an `f64`.
    pub(crate) fn variance(&self, divisor: u64) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let q = [
            self.squares_lo as u64,
            (self.squares_lo >> 64) as u64,
            self.squares_hi as u64,
            (self.squares_hi >> 64) as u64,
        ];
        let d = sub(mul_small(q, self.count), square(self.sum.unsigned_abs()));
        let scaled = u256_to_f64(d, 0) / (self.count as f64 * divisor as f64);
        scale2(scaled, 2 * self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    fn of(xs: &[f64]) -> Option<ExactSums> {
        ExactSums::of_values(|| xs.iter().copied())
    }

    #[test]
    fn rounding_is_to_nearest_even_with_the_sticky_bit() {
        // 2^53 + 1 is a tie: to even, 2^53; with anything below, up.
        let m = (1_u128 << 53) + 1;
        assert_eq!(round_to_f64(m, 0, false), 9_007_199_254_740_992.0);
        assert_eq!(round_to_f64(m, 0, true), 9_007_199_254_740_994.0);
        assert_eq!(round_to_f64(3, -1076, false), pow2(-1074)); // 0.75 ulp up
        assert_eq!(round_to_f64(1, -1075, false), 0.0); // a tie to even 0
        assert_eq!(round_to_f64(1, -1075, true), pow2(-1074));
        assert_eq!(round_to_f64(1, 1024, false), f64::INFINITY);
        assert_eq!(round_to_f64((1 << 53) - 1, 971, false), f64::MAX);
    }

    #[test]
    fn squares_of_wide_integers_are_exact() {
        let a = u128::MAX >> 2;
        let s = square(a);
        // (2^126 − 1)² = 2^252 − 2^127 + 1.
        assert_eq!(s, [1, 0x8000_0000_0000_0000, u64::MAX, (1 << 60) - 1]);
    }

    #[test]
    fn adds_removes_and_replaces_back_to_the_same_integers() {
        let xs = [1e9 + 0.25, 1e9 + 0.5, -3.0, 1e9 + 0.125];
        let mut s = of(&xs[..2]).unwrap();
        assert!(s.add(xs[2]));
        assert!(s.replace(xs[0], xs[3]));
        s.remove(xs[2]);
        let fresh = of(&[xs[1], xs[3]]).unwrap();
        assert_eq!(s.mean().to_bits(), fresh.mean().to_bits());
        assert_eq!(s.variance(2).to_bits(), fresh.variance(2).to_bits());
        // A window too fine for the fast route takes the wide one.
        let tiny = 1.0 / 1_180_591_620_717_411_303_424.0; // 2^-70
        let mut w = of(&[1.0, 2.0, tiny]).unwrap();
        assert!(w.small(2.0).is_none());
        assert!(w.add(3.0));
        w.remove(1.0);
        assert!(w.replace(tiny, 5.0));
        assert_eq!(w.mean(), 10.0 / 3.0);
        assert_eq!(w.variance(2), 7.0 / 3.0); // M2 = 14/3
        assert_eq!(s.mean(), 1e9 + 0.3125);
        assert_eq!(s.variance(2), 0.1875 * 0.1875);
    }

    #[test]
    fn values_too_far_apart_are_refused() {
        assert!(of(&[1e300, 1e-300]).is_none());
        assert!(of(&[1.0, 5e-324]).is_none());
        let mut s = of(&[1.0, 2.0]).unwrap();
        assert!(!s.add(1e30));
        assert!(!s.replace(1.0, 1e-30));
        assert_eq!(s, of(&[1.0, 2.0]).unwrap());
        assert!(of(&[f64::MAX, -f64::MAX]).is_some());
        assert!(of(&[5e-324, 1e-310]).is_some());
    }

    #[test]
    fn the_mean_is_correctly_rounded() {
        // (1 + 2^-52) + 1 + 1: the exact mean 1 + 2^-52/3 rounds to 1.
        let s = of(&[1.0 + f64::EPSILON, 1.0, 1.0]).unwrap();
        assert_eq!(s.mean(), 1.0);
        // 2^-1074 and 0: the mean 2^-1075 is a tie, to even 0.
        assert_eq!(of(&[5e-324, 0.0]).unwrap().mean(), 0.0);
        assert_eq!(of(&[f64::MAX, f64::MAX]).unwrap().mean(), f64::MAX);
        assert_eq!(of(&[-f64::MAX, -f64::MAX]).unwrap().mean(), -f64::MAX);
        let v: Vec<f64> = (0..7).map(|i| 0.1 * f64::from(i)).collect();
        assert!(of(&v).unwrap().mean() > 0.0);
    }

    #[test]
    fn a_variance_too_large_is_infinite() {
        let s = of(&[f64::MAX, -f64::MAX]).unwrap();
        assert_eq!(s.mean(), 0.0);
        assert_eq!(s.variance(2), f64::INFINITY);
    }
}
