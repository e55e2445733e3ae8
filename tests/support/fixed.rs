//! Exact sums of any finite `f64` values in fixed point: every finite
//! double is `m · 2^e` with an integer `m` and `e ≥ −1074`, so the sum of a
//! few of them is an integer multiple of `2⁻¹⁰⁷⁴` below `2¹⁰³⁰`, kept here
//! in two's complement over little-endian `u64` limbs. Integer arithmetic
//! only: an independent reference for the floating-point sums under test.

/// Limbs: 36 × 64 = 2304 bits, room for `2¹⁰²⁴ · 2¹⁰⁷⁴` times a few
/// hundred values, and the sign.
const LIMBS: usize = 36;

/// `Σ x · 2¹⁰⁷⁴`, exactly, in two's complement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedSum {
    limbs: [u64; LIMBS],
}

impl Default for FixedSum {
    fn default() -> Self {
        Self { limbs: [0; LIMBS] }
    }
}

/// `(m, e)` with `|x| = m · 2^(e − 1074)`, `e ≥ 0`, from the bits of a
/// finite `x`.
fn decompose(x: f64) -> (u64, u32) {
    let raw = x.to_bits();
    let field = ((raw >> 52) & 0x7ff) as u32;
    let fraction = raw & ((1 << 52) - 1);
    if field == 0 {
        (fraction, 0)
    } else {
        (fraction | (1 << 52), field - 1)
    }
}

/// `2^e` for a normal power (`−1022 ≤ e ≤ 1023`), from its bits.
pub fn pow2(e: i32) -> f64 {
    assert!((-1022..=1023).contains(&e), "{e}");
    f64::from_bits(((e + 1023) as u64) << 52)
}

impl FixedSum {
    /// The exact sum of `xs`, all finite.
    pub fn of(xs: impl IntoIterator<Item = f64>) -> Self {
        let mut s = Self::default();
        for x in xs {
            s.add(x);
        }
        s
    }

    /// Adds a finite `x` exactly.
    pub fn add(&mut self, x: f64) {
        assert!(x.is_finite(), "{x}");
        let (m, e) = decompose(x);
        // m · 2^e spread over the limbs at bit e.
        let (limb, bit) = ((e / 64) as usize, e % 64);
        let wide = u128::from(m) << bit;
        let mut part = [0_u64; LIMBS];
        part[limb] = wide as u64;
        if limb + 1 < LIMBS {
            part[limb + 1] = (wide >> 64) as u64;
        }
        if x < 0.0 {
            self.sub_limbs(&part);
        } else {
            self.add_limbs(&part);
        }
    }

    fn add_limbs(&mut self, part: &[u64; LIMBS]) {
        let mut carry = false;
        for (a, &b) in self.limbs.iter_mut().zip(part) {
            let (s, c1) = a.overflowing_add(b);
            let (s, c2) = s.overflowing_add(u64::from(carry));
            *a = s;
            carry = c1 || c2;
        }
    }

    fn sub_limbs(&mut self, part: &[u64; LIMBS]) {
        let mut borrow = false;
        for (a, &b) in self.limbs.iter_mut().zip(part) {
            let (s, b1) = a.overflowing_sub(b);
            let (s, b2) = s.overflowing_sub(u64::from(borrow));
            *a = s;
            borrow = b1 || b2;
        }
    }

    /// Whether the sum is negative (the top bit of two's complement).
    pub fn is_negative(&self) -> bool {
        self.limbs[LIMBS - 1] >> 63 == 1
    }

    /// The magnitude, as limbs.
    fn magnitude(&self) -> [u64; LIMBS] {
        if !self.is_negative() {
            return self.limbs;
        }
        let mut m = Self::default();
        m.sub_limbs(&self.limbs);
        m.limbs
    }

    /// The sum times `2^(−k)`, correctly rounded to `f64` (to nearest,
    /// ties to even; ±∞ beyond the largest double).
    pub fn to_f64_scaled(&self, k: u32) -> f64 {
        let mag = self.magnitude();
        let bit = |i: usize| (mag[i / 64] >> (i % 64)) & 1 == 1;
        let Some(top) = (0..LIMBS * 64).rev().find(|&i| bit(i)) else {
            return 0.0;
        };
        // The value is N · 2^(−1074 − k), N's top bit at `top`. The
        // result's ulp is 2^(−1074) at least: keep the bits from `low` up.
        let k = k as usize;
        let low_limit = k; // bit k of N is worth 2^-1074 after scaling.
        let low = top.saturating_sub(52).max(low_limit);
        if low > top + 1 {
            // Below half the smallest subnormal... or exactly in between:
            // decided by the bits below.
            return if self.is_negative() { -0.0 } else { 0.0 };
        }
        let mut m: u64 = 0;
        for i in (low..=top).rev() {
            m = (m << 1) | u64::from(bit(i));
        }
        // Round on the bits below `low`.
        if low > 0 {
            let half = bit(low - 1);
            let sticky = (0..low - 1).any(bit);
            if half && (sticky || m & 1 == 1) {
                m += 1;
            }
        }
        // Value = m · 2^(low − 1074 − k).
        let mut e = low as i64 - 1074 - k as i64;
        let mut v = m as f64; // exact: m ≤ 2^53
        while e > 900 {
            v *= pow2(900);
            e -= 900;
        }
        while e < -900 {
            v *= pow2(-900);
            e += 900;
        }
        v *= pow2(e as i32);
        if self.is_negative() { -v } else { v }
    }

    /// The sum, correctly rounded to `f64`.
    pub fn to_f64(&self) -> f64 {
        self.to_f64_scaled(0)
    }
}
