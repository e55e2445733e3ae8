//! Exact arithmetic on binary floats, the floor of the exact sums and of
//! the exact window series: a float's integer and exponent, powers of
//! two, 256-bit integers in four limbs, and the correct rounding of a
//! wide integer, of a mean and of a quotient to `f64`.
//!
//! Nothing here keeps state: [`ExactSums`](crate::ExactSums) builds its
//! sums on these, and the series of `MovingStats` (`exact_mean.rs`,
//! `exact_var.rs`, compiled for the CPU by the architecture layer) read
//! their windows' sums through them.

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

// The float methods by name, so that they come from `libm` without `std`.
use num_traits::Float as Real;

/// `|x| / 2^base` stays below `2^LIMIT` for every value of a set of exact
/// sums (94 bits: the 128-bit sum of up to 2^32 values).
pub(crate) const LIMIT: i32 = 94;

/// `x` as its sign, the integer `m < 2^53` and the exponent `e` with
/// `|x| = m·2^e` (`e = −1074` for subnormals and zeros).
#[inline]
pub(crate) fn parts(x: f64) -> (bool, u64, i32) {
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
pub(crate) fn bit_length(m: u64) -> i32 {
    64 - m.leading_zeros() as i32
}

/// `2^k` as an `f64`, for `−1074 ≤ k ≤ 1023`.
#[inline]
pub(crate) fn pow2(k: i32) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (k + 1074))
    }
}

/// `x·2^k`, exact whenever the result is a normal number.
pub(crate) fn scale2(mut x: f64, mut k: i32) -> f64 {
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
pub(crate) fn round_to_f64(mag: u128, exp: i32, sticky: bool) -> f64 {
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

/// `sum·2^base / count`, correctly rounded (to nearest, ties to even), for
/// `|sum| < 2^126`; +0 for a zero sum or count. `quotient` as for
/// [`quick_quotient`]: the bits are the same whichever is given.
#[inline]
pub(crate) fn rounded_mean(sum: i128, count: u32, base: i32, quotient: Quotient) -> f64 {
    if count == 0 || sum == 0 {
        return 0.0;
    }
    let n = u128::from(count);
    let a = sum.unsigned_abs();
    if let Some(mean) = quick_quotient(a, u64::from(count), base, quotient) {
        return if sum < 0 { -mean } else { mean };
    }
    // Scale the sum up until the quotient has at least 55 bits, so that
    // the remainder only decides ties: |S| < 2^126 and n < 2^32 keep the
    // shifted sum below 2^(32 + 56) ≤ 2^127.
    let want = (128 - n.leading_zeros() as i32) + 55;
    let k = (want - (128 - a.leading_zeros() as i32)).max(0);
    let a = a << k;
    let (q, r) = (a / n, a % n);
    let mean = round_to_f64(q, base - k, r != 0);
    if sum < 0 { -mean } else { mean }
}

/// A 256-bit unsigned integer as four 64-bit limbs, least significant
/// first (the read-out's arithmetic).
pub(crate) type U256 = [u64; 4];

/// `a·b` for a 256-bit `a` and a 64-bit `b`, which must fit 256 bits.
pub(crate) fn mul_small(a: U256, b: u64) -> U256 {
    let mut out = [0; 4];
    let mut carry = 0_u128;
    for (o, &limb) in out.iter_mut().zip(&a) {
        let p = u128::from(limb) * u128::from(b) + carry;
        *o = p as u64;
        carry = p >> 64;
    }
    out
}

/// `a + b` for `a + b < 2^256`.
#[cfg(feature = "serde")]
pub(crate) fn add_small(a: U256, b: u64) -> U256 {
    let mut out = a;
    let mut carry = b;
    for limb in &mut out {
        let (s, c) = limb.overflowing_add(carry);
        *limb = s;
        carry = u64::from(c);
    }
    out
}

/// `a²` for `a < 2^128`.
pub(crate) fn square(a: u128) -> U256 {
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
pub(crate) fn sub(a: U256, b: U256) -> U256 {
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

/// `a·2^k` modulo 2^256, for `k < 256`.
pub(crate) fn shift_left(a: U256, k: u32) -> U256 {
    let (limbs, bits) = ((k / 64) as usize, k % 64);
    let mut out = [0; 4];
    for i in (limbs..4).rev() {
        let from = i - limbs;
        out[i] = a[from] << bits;
        if bits > 0 && from > 0 {
            out[i] |= a[from - 1] >> (64 - bits);
        }
    }
    out
}

/// `a / m` for `m > 0`: the quotient and the remainder.
pub(crate) fn div_small(a: U256, m: u64) -> (U256, u64) {
    let (mut q, mut r) = ([0; 4], 0_u128);
    let m = u128::from(m);
    for i in (0..4).rev() {
        let current = (r << 64) | u128::from(a[i]);
        q[i] = (current / m) as u64;
        r = current % m;
    }
    (q, r as u64)
}

/// [`quotient_to_f64`] for `a < 2^128`: one 128-bit division where the
/// 256-bit one takes four (a variance read after every push of a
/// `MovingStats` spent most of its time in them).
fn small_quotient_to_f64(a: u128, m: u64, exp: i32) -> f64 {
    if a == 0 {
        return 0.0;
    }
    let m = u128::from(m);
    // Scaled so that the quotient has at least 55 bits (the remainder then
    // only breaks ties): 55 + 64 bits at most, which fit.
    let want = (128 - m.leading_zeros() as i32) + 55;
    let k = (want - (128 - a.leading_zeros() as i32)).max(0);
    let a = a << k;
    let q = a / m;
    round_to_f64(q, exp - k, a - q * m != 0)
}

/// A correctly rounded quotient or NaN, as [`checked_quotient`] gives it:
/// the plain one, or the dispatcher's that takes the CPU's fused
/// multiply-add (`kernels::checked_quotient`), chosen by the caller.
pub(crate) type Quotient = fn(f64, f64, f64, f64) -> f64;

/// `a/d · 2^exp`, correctly rounded, by `quotient` (a [`checked_quotient`];
/// the dispatcher's, with the CPU's fused multiply-add where it has one,
/// for reads outside the compiled kernels: baseline code has it only as a
/// call), or `None` where that does not serve: `a` of `2^104` or more, `d`
/// or `exp` out of [`quick_quotient_fits`]'s range, or the quotient near a
/// rounding boundary.
#[inline]
pub(crate) fn quick_quotient(a: u128, d: u64, exp: i32, quotient: Quotient) -> Option<f64> {
    if a >> 104 != 0 || !quick_quotient_fits(d, exp) {
        return None;
    }
    // Each below 2^52: converted as signed integers, one instruction each
    // (an unsigned 64-bit one takes a test and a branch on baseline x86-64).
    let (high, low) = ((a >> 52) as i64, (a as u64 & ((1 << 52) - 1)) as i64);
    let d = d as i64 as f64;
    let q = quotient(high as f64, low as f64, d, 1.0 / d);
    (!q.is_nan()).then(|| q * pow2(exp))
}

/// Whether [`checked_quotient`] serves `D/d·2^exp` for every `0 < D <
/// 2^104`: `d` below `2^52`, and every such quotient, between `2^-52` and
/// `2^104`, a normal number once scaled by `2^exp` (so that the scaling is
/// exact).
#[inline]
pub(crate) fn quick_quotient_fits(d: u64, exp: i32) -> bool {
    d > 0 && d < 1 << 52 && exp - 52 >= -1022 && exp + 105 <= 1023
}

/// `D/d` for `D = a·2^52 + b` (integers `0 ≤ a, b < 2^52`), `d` an integer
/// below `2^52` and `inv_d = fl(1/d)`: correctly rounded (to nearest, ties
/// to even), or NaN when it must come from the integers
/// ([`quotient_to_f64`]). No branch, so that it vectorises.
///
/// `D` is the exact pair `s + t` (`Fast2Sum`); `q = fl(s·inv_d)` is within
/// two ulps of `s/d`; `r = s − q·d` (by a fused multiply-add with `FMA`,
/// else by Dekker's exact product, `q·d = p + e`, and `(s − p) − e`, the
/// first difference exact) and `δ = (r + t)·inv_d` make `q + δ` within
/// `2^-50·(|δ| + ulp)` of `D/d`, less than `2^-44` of half an ulp of `m =
/// fl(q + δ)`. With `g = q + δ − m` (exact), `m` is the correct rounding
/// of `D/d` unless `q + δ` lies that close to a rounding boundary: unless
/// `|g|` is that close to half an ulp of `m` (or to a quarter, below a
/// power of two). Those quotients, about three in `2^44` on random data,
/// are NaN; an exact tie, whose `q + δ` is exact, is among them.
#[inline(always)]
#[allow(
    clippy::inline_always,
    clippy::needless_bitwise_bool,
    reason = "inlined into the series' `#[target_feature]` loops and free of \
              branches, so that it vectorises there"
)]
pub(crate) fn checked_quotient<const FMA: bool>(a: f64, b: f64, d: f64, inv_d: f64) -> f64 {
    // s + t = D exactly: a·2^52 is a multiple of 2^52, b below it.
    let high = a * pow2(52);
    let s = high + b;
    let t = (high - s) + b;
    let q = s * inv_d;
    let r = if FMA {
        Real::mul_add(-q, d, s)
    } else {
        let (qh, ql) = veltkamp(q);
        let (dh, dl) = veltkamp(d);
        let p = q * d;
        let e = ((qh * dh - p) + qh * dl + ql * dh) + ql * dl;
        (s - p) - e
    };
    let delta = (r + t) * inv_d;
    let m = q + delta;
    let g = delta - (m - q);
    // Half an ulp of m, and the error bound: |δ| is at most two ulps of
    // q, eight halves of m, so 2^-50·(|δ| + ulp) < 2^-44·half.
    let half = f64::from_bits(m.to_bits() & 0x7ff0_0000_0000_0000) * pow2(-53);
    let slack = half * pow2(-44);
    let near = (g.abs() >= half - slack) | ((g.abs() - 0.5 * half).abs() <= slack);
    if near & (m != 0.0) { f64::NAN } else { m }
}

/// `x` as `h + l`, `h` with at most 26 significant bits (Veltkamp's
/// split), for `|x|` below `2^995`.
#[inline]
fn veltkamp(x: f64) -> (f64, f64) {
    let c = 134_217_729.0 * x;
    let h = c - (c - x);
    (h, x - h)
}

/// `a/m · 2^exp` for `m > 0`, correctly rounded (to nearest, ties to
/// even; subnormal results too), +∞ when too large.
pub(crate) fn quotient_to_f64(a: U256, m: u64, exp: i32) -> f64 {
    if a[2] == 0 && a[3] == 0 {
        small_quotient_to_f64((u128::from(a[1]) << 64) | u128::from(a[0]), m, exp)
    } else {
        wide_quotient_to_f64(a, m, exp)
    }
}

/// [`quotient_to_f64`] for any `a`, by four 128-bit divisions.
fn wide_quotient_to_f64(a: U256, m: u64, exp: i32) -> f64 {
    let bits = a
        .iter()
        .rposition(|&limb| limb != 0)
        .map_or(0, |i| 64 * i as i32 + 64 - a[i].leading_zeros() as i32);
    if bits == 0 {
        return 0.0;
    }
    // Scaled so that the quotient has at least 55 bits (the remainder then
    // only breaks ties); a shifted `a` is below 2^119.
    let k = (119 - bits).max(0);
    let (q, r) = div_small(shift_left(a, k as u32), m);
    let hi = (u128::from(q[3]) << 64) | u128::from(q[2]);
    let lo = (u128::from(q[1]) << 64) | u128::from(q[0]);
    if hi == 0 {
        return round_to_f64(lo, exp - k, r != 0);
    }
    let shift = hi.leading_zeros();
    let (top, below) = if shift == 0 {
        (hi, lo)
    } else {
        ((hi << shift) | (lo >> (128 - shift)), lo << shift)
    };
    round_to_f64(top, 128 - shift as i32 + exp - k, below != 0 || r != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn quotients_are_correctly_rounded() {
        let q = |a: u64, m: u64, exp: i32| quotient_to_f64([a, 0, 0, 0], m, exp);
        assert_eq!(q(1, 3, 0), 1.0 / 3.0);
        assert_eq!(q(10, 4, 0), 2.5);
        assert_eq!(q(2, 9, 0), 2.0 / 9.0);
        // (2^53 + 1)/2: a tie between 2^52 and 2^52 + 1, to even.
        let tie = shift_left([(1 << 53) + 1, 0, 0, 0], 0);
        assert_eq!(quotient_to_f64(tie, 2, 0), 4_503_599_627_370_496.0);
        // Below the normal range: 2^-1074 / 3 rounds to 0, 2·2^-1074 / 3
        // up to 2^-1074.
        assert_eq!(q(1, 3, -1074), 0.0);
        assert_eq!(q(2, 3, -1074), pow2(-1074));
        // A 200-bit dividend: 2^200 / 3.
        let big = shift_left([1, 0, 0, 0], 200);
        assert_eq!(quotient_to_f64(big, 3, -200), 1.0 / 3.0);
        assert_eq!(q(1, 1, 1024), f64::INFINITY);
    }

    /// Marsaglia's xorshift64 from `state` (not 0).
    fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// `checked_quotient`'s value where it gives one, else the integers',
    /// for both ways to its remainder; and how many it gave.
    fn checked(big_d: u128, d: u64) -> (f64, usize) {
        let exact = quotient_to_f64([big_d as u64, (big_d >> 64) as u64, 0, 0], d, 0);
        let (a, b) = (
            (big_d >> 52) as f64,
            (big_d as u64 & ((1 << 52) - 1)) as f64,
        );
        let inv = 1.0 / d as f64;
        let mut given = 0;
        for v in [
            checked_quotient::<true>(a, b, d as f64, inv),
            checked_quotient::<false>(a, b, d as f64, inv),
        ] {
            if !v.is_nan() {
                assert_eq!(v.to_bits(), exact.to_bits(), "{big_d}/{d}");
                given += 1;
            }
        }
        (exact, given)
    }

    #[test]
    fn checked_quotients_are_correctly_rounded_on_ties_and_near_them() {
        // D/d halfway between two floats: m·d for m an odd integer of 54
        // bits; and one off either side.
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15_u64);
        let mut ties = 0;
        for _ in 0..20_000 {
            let d = (next() >> (14 + next() % 36)).max(1);
            let m = u128::from((next() >> 10) | (1 << 53) | 1);
            let tie = m * u128::from(d);
            if tie >> 104 != 0 {
                continue;
            }
            ties += 1;
            for big_d in [tie - 1, tie, tie + 1] {
                checked(big_d, d);
            }
            // A tie goes to the neighbour with an even significand (the
            // floats there are the even integers): m − 1 when m ≡ 1 mod 4.
            let (v, _) = checked(tie, d);
            assert_eq!(v as u128, if m & 2 == 0 { m - 1 } else { m + 1 });
        }
        assert!(ties > 10_000);
    }

    #[test]
    fn checked_quotients_answer_on_random_values() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d_u64);
        let mut given = 0;
        for _ in 0..200_000 {
            let d = (next() >> (12 + next() % 52)).max(1);
            let big_d = ((u128::from(next()) << 40) | u128::from(next())) >> (next() % 104);
            given += checked(big_d & ((1 << 104) - 1), d).1;
        }
        // Both ways answer all but a few (exact quotients of one or two
        // bits' worth are not ties, and random ones are rarely near one).
        assert!(given > 399_000, "{given}");
    }

    #[test]
    fn means_are_the_integer_quotients_correctly_rounded() {
        let mut next = xorshift(0x6a09_e667_f3bc_c908);
        for i in 0..100_000 {
            let count = (next() >> (32 + next() % 32)).max(1) as u32;
            let a = ((u128::from(next()) << 64) | u128::from(next())) >> (2 + next() % 126);
            // Every fifth a tie: an odd integer of 54 bits times the count.
            let a = if i % 5 == 0 {
                u128::from((next() >> 10) | (1 << 53) | 1) * u128::from(count)
            } else {
                a
            };
            let base = (next() % 2000) as i32 - 1000;
            let sum = if next().is_multiple_of(2) {
                a as i128
            } else {
                -(a as i128)
            };
            let want = small_quotient_to_f64(a, u64::from(count), base);
            let want = if sum < 0 { -want } else { want };
            let got = rounded_mean(sum, count, base, checked_quotient::<false>);
            let fused = rounded_mean(sum, count, base, checked_quotient::<true>);
            assert_eq!(got.to_bits(), fused.to_bits());
            assert_eq!(got.to_bits(), want.to_bits(), "{sum}/{count}·2^{base}");
        }
    }

    #[test]
    fn one_division_reads_what_four_read() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15_u64);
        for i in 0..100_000 {
            let m = (next() >> (next() % 64)).max(1);
            let a = ((u128::from(next()) << 64) | u128::from(next())) >> (next() % 128);
            // Every fifth a tie: an odd multiple of m/2 of 54 bits or more.
            let a = if i % 5 == 0 {
                let odd = u128::from((next() >> 10) | (1 << 53) | 1);
                odd.checked_mul(u128::from(m)).unwrap_or(a)
            } else {
                a
            };
            let exp = (next() % 2200) as i32 - 1100;
            let words = [a as u64, (a >> 64) as u64, 0, 0];
            let (one, four) = (
                small_quotient_to_f64(a, m, exp),
                wide_quotient_to_f64(words, m, exp),
            );
            assert_eq!(one.to_bits(), four.to_bits(), "{a}/{m}·2^{exp}");
        }
    }

    #[test]
    fn squares_of_wide_integers_are_exact() {
        let a = u128::MAX >> 2;
        let s = square(a);
        // (2^126 − 1)² = 2^252 − 2^127 + 1.
        assert_eq!(s, [1, 0x8000_0000_0000_0000, u64::MAX, (1 << 60) - 1]);
    }
}
