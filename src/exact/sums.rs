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
//! read from the exact integers, each rounding once ([`ExactSums::mean`],
//! [`ExactSums::variance`]: an integer division with its remainder, then
//! the rounding), so they depend only on the values in the set, never on
//! the order they came in or on what went through before.
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
//! A value whose `x/2^base` is an integer in the `i64` range takes the
//! fast route: one multiplication by `2^-base` (exact: a power of two)
//! and one conversion to `i64`, checked by converting back, then `i128`
//! sums of the value and of its square (at most `2^126`). Every other value
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

#[cfg(feature = "serde")]
use crate::kernels::exact_arith::U256;
use crate::kernels::exact_arith::{
    LIMIT, bit_length, mul_small, parts, pow2, quick_quotient, quotient_to_f64, rounded_mean,
    scale2, square, sub,
};

/// `of_values` keeps the values below `2^(base + SMALL)` when it can, so
/// that they take the fast route (`ExactSums::small`).
const SMALL: i32 = 62;

/// The most values the sums hold (see the module doc).
const MAX_COUNT: u32 = u32::MAX;

/// The finest base a set of finite values takes: [`ExactSums::base_for`]
/// puts the finest bit (at least `2^-1074`) at most `(LIMIT − 1)/2` bits
/// above the base, and a lowered base (`lower_base_for`) goes at most as
/// far below the value that lowered it.
#[cfg(feature = "serde")]
pub(crate) const MIN_BASE: i32 = -1074 - (LIMIT - 1) / 2;

/// The coarsest: one bit at `2^1023`, centred in the `LIMIT` bits.
#[cfg(feature = "serde")]
pub(crate) const MAX_BASE: i32 = 1023 - (LIMIT - 1) / 2;

/// `Some(0)` for a zero, `None` for a value whose product by the scale
/// underflowed to 0 (kept off the fast route's straight line: a zero is
/// rare, and the test cost the route a tenth of its instructions).
#[cold]
#[inline(never)]
fn zero_of(x: f64) -> Option<i64> {
    (x == 0.0).then_some(0)
}

/// `i²` for an `i64`, at most `2^126` (`(−2^63)²`): one signed 64 × 64 →
/// 128-bit multiplication.
#[inline]
fn square64(i: i64) -> i128 {
    i128::from(i) * i128::from(i)
}

/// The mean and variance of `f64` values from exact integer sums: the
/// same bits whatever order the values come in.
///
/// It keeps `Σx` and `Σx²` as integers (a 128-bit and a 256-bit one,
/// scaled by a power of two), so taking a value in never rounds. The mean
/// and the variances are read correctly rounded (one integer division,
/// one rounding): on `1e9 + U(0, 1)`, where a float accumulator loses
/// half its digits to cancellation, they are as exact as on `U(0, 1)`.
///
/// The integers hold values whose binades span at most 94 bits (`1e9 +
/// U(0, 1)` spans 53; `1e15` beside it, 73), and up to 2³² − 1 of them.
/// A value they cannot hold (`1e300` after `1e-300`, a NaN, an infinity,
/// the 2³²-th value) is refused: [`add`](Self::add) returns `false` and
/// the sums are unchanged, and the caller keeps that value another way
/// (in a [`Variance`](crate::Variance), say, merged with
/// [`to_variance`](Self::to_variance) at the end). The sums of two sets
/// [`merge`](Self::merge) into those of their union, exactly. It needs no
/// `std`.
///
/// ```
/// use momenta::ExactSums;
///
/// let mut sums = ExactSums::new();
/// for x in [1e9 + 0.25, 1e9 + 0.5, 1e9 + 0.75] {
///     assert!(sums.add(x));
/// }
/// assert_eq!(sums.count(), 3);
/// assert_eq!(sums.mean(), Some(1e9 + 0.5));
/// assert_eq!(sums.population_variance(), Some(0.125 / 3.0));
/// assert_eq!(sums.sample_variance(), Some(0.0625));
/// // Values too far apart for the integers are refused, not rounded.
/// assert!(!sums.add(1e300));
/// assert!(!sums.add(f64::NAN));
/// assert_eq!(sums.count(), 3);
/// ```
///
/// # Checkpoints
///
/// With the `serde` feature the sums serialize as their integers: the
/// count, the base, and `Σx/2^base` and `Σx²/2^(2·base)` as decimal
/// strings (they reach 220 bits, beyond any format's integers). Restored,
/// they are the same sums: every read gives the same bits and every later
/// value is taken or refused alike. Integers that no set of finite values
/// could leave (a variance below zero, a value beyond the 94 bits, a base
/// no finite value has) are refused with the bound they break.
///
/// ```
/// # #[cfg(feature = "serde")]
/// # {
/// use momenta::ExactSums;
///
/// let mut sums = ExactSums::new();
/// for x in [1.0, 2.0, 3.0] {
///     sums.add(x);
/// }
/// let json = serde_json::to_string(&sums).unwrap();
/// let mut back: ExactSums = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, sums);
/// assert_eq!(back.add(4.0), sums.add(4.0));
/// assert_eq!(back.sample_variance(), Some(5.0 / 3.0));
///
/// // Σx² below (Σx)²/n: no values have these sums.
/// let broken = r#"{"count":3,"base":0,"sum":"6","squares":"11"}"#;
/// let e = serde_json::from_str::<ExactSums>(broken).unwrap_err();
/// assert!(e.to_string().contains("squares must be at least sum²/count"));
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
// One cache line: a `GROUP BY` keeps a vector of them.
#[repr(align(64))]
pub struct ExactSums {
    /// How many values.
    count: u32,
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
    /// No values.
    ///
    /// ```
    /// let sums = momenta::ExactSums::new();
    /// assert_eq!(sums.count(), 0);
    /// assert_eq!(sums.mean(), None);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How many values it holds.
    ///
    /// ```
    /// let mut sums = momenta::ExactSums::new();
    /// assert!(sums.add(2.5));
    /// assert_eq!(sums.count(), 1);
    /// ```
    #[must_use]
    #[inline]
    pub fn count(&self) -> u64 {
        u64::from(self.count)
    }

    /// Takes in `x`, exactly; or returns `false` and changes nothing that
    /// can be read when the integers cannot hold it: `x` is not finite,
    /// its binade and those of the values held span more than 94 bits, or
    /// 2³² − 1 values are held already.
    ///
    /// A value resolved finer than those before it (`1e-12` after `1.0`)
    /// moves the integers' scale down when they have the room, so values
    /// near zero are taken; only values too large for the scale the
    /// others set (`1e30` after `1.0`) or too far apart are refused.
    ///
    /// ```
    /// let mut sums = momenta::ExactSums::new();
    /// assert!(sums.add(1.0));
    /// assert!(sums.add(1e-12));
    /// assert!(!sums.add(1e30));
    /// assert!(!sums.add(f64::INFINITY));
    /// assert_eq!(sums.count(), 2);
    /// ```
    #[inline]
    pub fn add(&mut self, x: f64) -> bool {
        // Only the fast route inlines: a caller's loop (a `GROUP BY`'s)
        // stays small enough to be inlined whole.
        self.add_fast(x) || self.add_off_the_fast_route(x)
    }

    /// [`add`](Self::add) for a value the fast route did not take.
    #[inline(never)]
    fn add_off_the_fast_route(&mut self, x: f64) -> bool {
        self.add_fitting_wide(x)
            || ((self.rebase_zeros_for(x) || self.lower_base_for(x) > 0) && self.add_fitting(x))
    }

    /// Moves the base of a set that holds only zeros (`Σx² = 0`: nothing
    /// to keep) to the one a set of `x` alone would take; returns whether
    /// it moved. Zeros fit every base: without this, zeros held first
    /// refused any value far from 1 (`1e-30`, `1e30`).
    pub(crate) fn rebase_zeros_for(&mut self, x: f64) -> bool {
        // `zeros_at` checks that only zeros are held.
        if self.count == 0 || !x.is_finite() || x == 0.0 {
            return false;
        }
        self.zeros_at(Self::of_one(x).base)
    }

    /// A set of zeros only, moved to `base`; whether it moved.
    pub(crate) fn zeros_at(&mut self, base: i32) -> bool {
        if base == self.base || self.squares_lo != 0 || self.squares_hi != 0 {
            return false;
        }
        self.base = base;
        self.scale = Self::scale_for(base);
        true
    }

    /// Takes in every value of `other`, exactly: the sums of the union of
    /// the two sets, for a reduction over threads, processes or machines.
    /// Or returns `false` and changes nothing when the union does not fit
    /// the integers: its binades span more than 94 bits, or it holds more
    /// than 2³² − 1 values. All or nothing: a set whose values could be
    /// taken one by one in part is refused as a whole.
    ///
    /// The statistics of the merged sums are those of the union, bit for
    /// bit whatever the order of the merges and of the values in them
    /// (they are read from the exact integers). The base may differ from
    /// that of the values added one by one into one set.
    ///
    /// ```
    /// use momenta::ExactSums;
    ///
    /// let (mut left, mut right, mut all) = (ExactSums::new(), ExactSums::new(), ExactSums::new());
    /// for (i, x) in [1e9 + 0.25, 3.0, 1e9 + 0.5, -7.5, 1e9].into_iter().enumerate() {
    ///     if i % 2 == 0 { left.add(x) } else { right.add(x) };
    ///     all.add(x);
    /// }
    /// assert!(left.merge(&right));
    /// assert_eq!(left.count(), 5);
    /// assert_eq!(left.mean(), all.mean());
    /// assert_eq!(left.sample_variance(), all.sample_variance());
    ///
    /// // 1e300 beside 1e-300 spans too many binades: refused, unchanged.
    /// let (mut tiny, mut huge) = (ExactSums::new(), ExactSums::new());
    /// tiny.add(1e-300);
    /// huge.add(1e300);
    /// assert!(!tiny.merge(&huge));
    /// assert_eq!(tiny.mean(), Some(1e-300));
    /// ```
    #[must_use = "a refused merge changes nothing: keep the other sums another way"]
    pub fn merge(&mut self, other: &Self) -> bool {
        if other.count == 0 {
            return true;
        }
        if self.count == 0 {
            *self = other.clone();
            return true;
        }
        let Some(count) = self.count.checked_add(other.count) else {
            return false;
        };
        let mut other = other.clone();
        // Zeros alone take the other set's base; otherwise both go to the
        // finer of the two, when the coarser set's values stay below
        // 2^LIMIT units there.
        if !self.zeros_at(other.base) {
            other.zeros_at(self.base);
        }
        let k = self.base - other.base;
        if k > 0 {
            if k > self.room() {
                return false;
            }
            self.lower_base_by(k);
        } else if k < 0 {
            if -k > other.room() {
                return false;
            }
            other.lower_base_by(-k);
        }
        self.count = count;
        self.sum += other.sum;
        let (lo, carry) = self.squares_lo.overflowing_add(other.squares_lo);
        self.squares_lo = lo;
        self.squares_hi += other.squares_hi + u128::from(carry);
        true
    }

    /// The mean, correctly rounded (to nearest, ties to even); `None`
    /// without values.
    ///
    /// ```
    /// let mut sums = momenta::ExactSums::new();
    /// for x in [1.0 + f64::EPSILON, 1.0, 1.0] {
    ///     assert!(sums.add(x));
    /// }
    /// // 1 + ε/3 is nearer 1 than 1 + ε.
    /// assert_eq!(sums.mean(), Some(1.0));
    /// ```
    #[must_use]
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.mean_or_zero())
    }

    /// `Σ(x − x̄)²`, correctly rounded (0 for fewer than two values).
    ///
    /// ```
    /// let mut sums = momenta::ExactSums::new();
    /// for x in [1e16, 1e16 + 2.0] {
    ///     assert!(sums.add(x));
    /// }
    /// assert_eq!(sums.m2(), 2.0);
    /// ```
    #[must_use]
    pub fn m2(&self) -> f64 {
        self.variance(1)
    }

    /// `Σ(x − x̄)²/n`, correctly rounded; `None` without values.
    ///
    /// ```
    /// let mut sums = momenta::ExactSums::new();
    /// for x in [1.0, 2.0, 3.0, 4.0] {
    ///     assert!(sums.add(x));
    /// }
    /// assert_eq!(sums.population_variance(), Some(1.25));
    /// ```
    #[must_use]
    pub fn population_variance(&self) -> Option<f64> {
        (self.count > 0).then(|| self.variance(u64::from(self.count)))
    }

    /// `Σ(x − x̄)²/(n − 1)`, correctly rounded; `None` below two
    /// values.
    ///
    /// ```
    /// let mut sums = momenta::ExactSums::new();
    /// for x in [1.0, 2.0, 3.0, 4.0] {
    ///     assert!(sums.add(x));
    /// }
    /// assert_eq!(sums.sample_variance(), Some(5.0 / 3.0));
    /// ```
    #[must_use]
    pub fn sample_variance(&self) -> Option<f64> {
        (self.count > 1).then(|| self.variance(u64::from(self.count - 1)))
    }

    /// The same values as a [`Variance`](crate::Variance), to merge with
    /// values kept another way: its `M2` correctly rounded, and its mean as
    /// the correctly rounded mean plus what rounding took off it (within `ε`
    /// of that), so that merges, whose result turns on the differences of
    /// the means, see the mean to about 106 bits.
    ///
    /// ```
    /// use momenta::{ExactSums, Merge, Variance};
    ///
    /// let mut sums = ExactSums::new();
    /// assert!(sums.add(1.0) && sums.add(3.0));
    /// let mut all = sums.to_variance();
    /// all.merge(&Variance::from_slice(&[5.0]));
    /// assert_eq!(all.mean(), Some(3.0));
    /// assert_eq!(all.sample_variance(), Some(4.0));
    /// ```
    #[must_use]
    pub fn to_variance(&self) -> crate::Variance<f64> {
        let parts = crate::VarianceParts {
            count: u64::from(self.count),
            shift: self.mean_or_zero(),
            offset: self.mean_residual(),
            m2: self.m2(),
        };
        // The parts of finite exact sums are always valid: a finite mean,
        // and an M2 that is not negative (it may be +∞ when the values
        // span the whole range of f64, which `from_parts` takes too).
        crate::Variance::from_parts(parts).unwrap_or_default()
    }

    /// The exact mean minus its correct rounding, `(S − n·m/2^base)/n ·
    /// 2^base` for the rounded mean `m`, rounded twice. The integer is
    /// exact: with `m/2^base` an integer (`k = 0`), both terms are below
    /// 2^126; else `m`, and so `S`, are small enough beside `2^base` that
    /// `S·2^k` stays below `2^(32 + 54)`.
    fn mean_residual(&self) -> f64 {
        let m = self.mean_or_zero();
        if self.count == 0 || m == 0.0 {
            return scale2(self.sum as f64 / f64::from(self.count.max(1)), self.base);
        }
        let (negative, mant, e) = parts(m);
        let low = e + mant.trailing_zeros() as i32;
        let k = (self.base - low).max(0);
        let whole = i128::from(mant >> (low - e)) << (low - (self.base - k));
        let whole = if negative { -whole } else { whole };
        let r = (self.sum << k) - i128::from(self.count) * whole;
        scale2(r as f64 / f64::from(self.count), self.base - k)
    }

    /// `2^-base` when that is a normal `f64`, else 0 (no fast route).
    pub(crate) fn scale_for(base: i32) -> f64 {
        if (-1022..=1023).contains(&-base) {
            pow2(-base)
        } else {
            0.0
        }
    }

    /// Lowers the base so that `x`, resolved finer than `2^base`, is a
    /// multiple of it, when every value held stays below `2^LIMIT` at the
    /// new base; halfway into the room left, so that later finer values
    /// fit too. Returns by how many bits it moved the base (0: it did
    /// not).
    #[inline(never)]
    pub(crate) fn lower_base_for(&mut self, x: f64) -> u32 {
        let (_, m, e) = parts(x);
        if self.count == 0 || m == 0 || !x.is_finite() {
            return 0;
        }
        let need = self.base - (e + m.trailing_zeros() as i32);
        let room = self.room();
        if need <= 0 || need > room {
            return 0;
        }
        let k = need + (room - need) / 2;
        self.lower_base_by(k);
        k as u32
    }

    /// How many bits the base can go down with every value held still
    /// below `2^LIMIT` units: each is below `2^((q_bits + 1)/2)` units,
    /// its square being at most `Q`.
    pub(crate) fn room(&self) -> i32 {
        let q_bits = if self.squares_hi == 0 {
            128 - self.squares_lo.leading_zeros() as i32
        } else {
            256 - self.squares_hi.leading_zeros() as i32
        };
        LIMIT - (q_bits + 1) / 2
    }

    /// The same sums at a base `k` bits finer, `0 < k ≤` [`room`](Self::room).
    pub(crate) fn lower_base_by(&mut self, k: i32) {
        // |S| ≤ n·max stays below 2^(32 + LIMIT) = 2^126, Q below 2^220.
        self.sum <<= k;
        let t = (2 * k) as u32;
        if t < 128 {
            self.squares_hi = (self.squares_hi << t) | (self.squares_lo >> (128 - t));
            self.squares_lo <<= t;
        } else {
            self.squares_hi = self.squares_lo << (t - 128);
            self.squares_lo = 0;
        }
        self.base -= k;
        self.scale = Self::scale_for(self.base);
    }

    /// `x / 2^base`, an integer below `2^LIMIT` in magnitude, when `x` is
    /// finite and fits the present base; else `None`.
    #[inline]
    pub(crate) fn integer(&self, x: f64) -> Option<i128> {
        if let Some(i) = self.small(x) {
            return Some(i128::from(i));
        }
        if !x.is_finite() {
            return None;
        }
        let (negative, m, s) = self.scaled(x)?;
        let v = i128::from(m) << s;
        Some(if negative { -v } else { v })
    }

    /// Whether it holds as many values as it can.
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.count == MAX_COUNT
    }

    /// Takes in a value as its [`integer`](Self::integer), in a set that
    /// is neither empty (its base is set) nor full.
    #[inline]
    pub(crate) fn push_integer(&mut self, v: i128) {
        if let Ok(i) = i64::try_from(v) {
            self.push_fast(i);
            return;
        }
        self.count += 1;
        self.sum += v;
        let [a, b, c, d] = square(v.unsigned_abs());
        let lo = (u128::from(b) << 64) | u128::from(a);
        let hi = (u128::from(d) << 64) | u128::from(c);
        self.plus((0, lo, hi));
    }

    /// The base: every value is `x = v·2^base` for an integer `v`.
    #[inline]
    pub(crate) fn base(&self) -> i32 {
        self.base
    }

    /// `Σx / 2^base`.
    #[inline]
    pub(crate) fn sum(&self) -> i128 {
        self.sum
    }

    /// The count, the base, `Σx / 2^base` and `Σx² / 2^(2·base)`: the
    /// integers a checkpoint keeps.
    #[cfg(feature = "serde")]
    pub(crate) fn integers(&self) -> (u32, i32, i128, U256) {
        let q = [
            self.squares_lo as u64,
            (self.squares_lo >> 64) as u64,
            self.squares_hi as u64,
            (self.squares_hi >> 64) as u64,
        ];
        (self.count, self.base, self.sum, q)
    }

    /// The sums of [`integers`](Self::integers), or the bound they break:
    /// no values and all zero, or a base of a set of finite values (see
    /// [`MIN_BASE`]), every value below `2^LIMIT` units (`|S| < n·2^LIMIT`,
    /// `Q < n·2^(2·LIMIT)`), and `n·Q ≥ S²` (equal for one value).
    #[cfg(feature = "serde")]
    pub(crate) fn from_integers(
        count: u32,
        base: i32,
        sum: i128,
        squares: U256,
    ) -> Result<Self, alloc::string::String> {
        if count == 0 {
            if base != 0 || sum != 0 || squares != [0; 4] {
                return Err("an empty set's base, sum and squares must be 0".into());
            }
            return Ok(Self::default());
        }
        if !(MIN_BASE..=MAX_BASE).contains(&base) {
            return Err(alloc::format!(
                "base must be between {MIN_BASE} and {MAX_BASE} (the bases of sets of finite \
                 values), got {base}"
            ));
        }
        if sum.unsigned_abs() >= u128::from(count) << LIMIT {
            return Err(alloc::format!(
                "sum must be below count·2^{LIMIT} in magnitude (each value below 2^{LIMIT} units)"
            ));
        }
        // Q < n·2^(2·LIMIT) = n·2^188: its top 128 bits below n·2^60.
        let top = u128::from(squares[2]) | (u128::from(squares[3]) << 64);
        if top >= u128::from(count) << (2 * LIMIT - 128) {
            return Err(alloc::format!(
                "squares must be below count·2^{} (each square below 2^{0})",
                2 * LIMIT
            ));
        }
        // Both below 2^252: a difference with its top bit set is negative.
        let d = sub(
            mul_small(squares, u64::from(count)),
            square(sum.unsigned_abs()),
        );
        if d[3] >> 63 != 0 {
            return Err("squares must be at least sum²/count (a variance is not negative)".into());
        }
        if count == 1 && d != [0; 4] {
            return Err("the squares of one value must be its sum squared".into());
        }
        Ok(Self {
            count,
            base,
            sum,
            squares_lo: u128::from(squares[0]) | (u128::from(squares[1]) << 64),
            squares_hi: u128::from(squares[2]) | (u128::from(squares[3]) << 64),
            scale: Self::scale_for(base),
        })
    }

    /// `x / 2^base` when it is an integer in the `i64` range (the
    /// fast route: a multiplication by a power of two and a conversion,
    /// both exact when the check passes), else `None`.
    #[inline]
    pub(crate) fn small(&self, x: f64) -> Option<i64> {
        let i = crate::kernels::exact_i64(x * self.scale)?;
        if i == 0 {
            return zero_of(x);
        }
        Some(i)
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

    /// Adds `x` at the present base, or returns `false` and changes
    /// nothing when it does not fit there (see the module doc) or is not
    /// finite.
    #[inline]
    pub(crate) fn add_fitting(&mut self, x: f64) -> bool {
        self.add_fast(x) || self.add_fitting_wide(x)
    }

    /// Adds `x` by the fast route, or returns `false` and changes nothing
    /// when the route does not take it.
    #[inline]
    fn add_fast(&mut self, x: f64) -> bool {
        self.fast(x).map(|i| self.push_fast(i)).is_some()
    }

    /// `x / 2^base` when the fast route takes `x`: the set is neither
    /// empty nor full, and `x/2^base` is an integer in the `i64` range.
    #[inline]
    pub(crate) fn fast(&self, x: f64) -> Option<i64> {
        if self.takes_fast() {
            self.small(x)
        } else {
            None
        }
    }

    /// Whether the fast route may take a value: the set is neither empty
    /// nor full.
    #[inline]
    pub(crate) fn takes_fast(&self) -> bool {
        self.count.wrapping_sub(1) < MAX_COUNT - 1
    }

    /// Takes in `count` values whose sums, divided by `2^(base + shift)`,
    /// are `sum` and `squares` (values on a grid `shift` bits coarser
    /// than the base, each within the set's range, in a set neither
    /// empty nor filled past [`MAX_COUNT`] by them): `shift` at most
    /// `LIMIT − 56`, so `sum·2^shift` stays an `i128` and
    /// `squares·2^(2·shift)` below `2^204`.
    pub(crate) fn add_shifted(&mut self, count: u32, sum: i128, squares: u128, shift: u32) {
        debug_assert!(
            i64::from(shift) <= i64::from(LIMIT) - 56 && self.count.checked_add(count).is_some()
        );
        self.count += count;
        self.sum += sum << shift;
        let t = 2 * shift;
        let (lo, hi) = if t == 0 {
            (squares, 0)
        } else {
            (squares << t, squares >> (128 - t))
        };
        self.plus((0, lo, hi));
    }

    /// Takes in a value as [`fast`](Self::fast) gave it.
    #[inline]
    pub(crate) fn push_fast(&mut self, i: i64) {
        self.count += 1;
        self.sum += i128::from(i);
        let (lo, carry) = self.squares_lo.overflowing_add(square64(i) as u128);
        self.squares_lo = lo;
        self.squares_hi += u128::from(carry);
    }

    /// [`add_fitting`](Self::add_fitting) off the fast route.
    #[inline(never)]
    fn add_fitting_wide(&mut self, x: f64) -> bool {
        if !x.is_finite() {
            return false;
        }
        if self.count == 0 {
            // An empty set takes any base: the one `of_values` would pick.
            *self = Self::of_one(x);
            return true;
        }
        if self.count == MAX_COUNT {
            return false;
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
        // One test after the other, each branching off on its own (a pair
        // of options tested together kept both tests' flags alive).
        if let Some(a) = self.small(new)
            && let Some(b) = self.small(old)
        {
            self.sum += i128::from(a) - i128::from(b);
            // Both squares are at most 2^126: so is their difference.
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
        // At most `MAX_COUNT` (= u32::MAX) values.
        let Ok(count) = u32::try_from(count) else {
            return None;
        };
        let base = Self::base_for(low, top)?;
        let mut sums = Self {
            count,
            base,
            scale: Self::scale_for(base),
            ..Self::default()
        };
        for x in values() {
            sums.plus(Self::terms(sums.scaled(x)?));
        }
        Some(sums)
    }

    /// The base `of_values` picks for values whose set bits lie in
    /// `[2^low, 2^top)` (`top = i32::MIN` for zeros only), or `None` when
    /// they span more than `LIMIT` bits.
    #[inline]
    fn base_for(low: i32, top: i32) -> Option<i32> {
        if top == i32::MIN {
            return Some(0);
        }
        let span = top - low;
        if span > LIMIT {
            return None;
        }
        let halfway = low - (LIMIT - span) / 2;
        Some(if span <= SMALL {
            // Every value on the fast route, with room below.
            halfway.max(top - SMALL)
        } else {
            halfway
        })
    }

    /// The sums of the one finite value `x`, at the base `of_values`
    /// would pick for it (without its two passes).
    fn of_one(x: f64) -> Self {
        let (_, m, e) = parts(x);
        let (low, top) = if m == 0 {
            (i32::MAX, i32::MIN)
        } else {
            (e + m.trailing_zeros() as i32, e + bit_length(m))
        };
        // One value spans at most 53 bits.
        let base = Self::base_for(low, top).unwrap_or(0);
        let mut sums = Self {
            count: 1,
            base,
            scale: Self::scale_for(base),
            ..Self::default()
        };
        if let Some(taken) = sums.scaled(x) {
            sums.plus(Self::terms(taken));
        }
        sums
    }

    /// The mean `Σx/n`, correctly rounded (to nearest, ties to even);
    /// +0 for an empty set.
    pub(crate) fn mean_or_zero(&self) -> f64 {
        rounded_mean(
            self.sum,
            self.count,
            self.base,
            crate::kernels::checked_quotient,
        )
    }

    /// `Σ(x − x̄)² / divisor` for `0 < divisor ≤ n`: `D = n·Q − S²`,
    /// exact, divided by `n·divisor` (below 2^64) and scaled by
    /// `2^(2·base)`, correctly rounded; +∞ when too large for an `f64`.
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
        let d = sub(
            mul_small(q, u64::from(self.count)),
            square(self.sum.unsigned_abs()),
        );
        let (divisor, exp) = (u64::from(self.count) * divisor, 2 * self.base);
        let quick = (d[3] == 0 && d[2] == 0)
            .then(|| {
                let a = (u128::from(d[1]) << 64) | u128::from(d[0]);
                quick_quotient(a, divisor, exp, crate::kernels::checked_quotient)
            })
            .flatten();
        quick.unwrap_or_else(|| quotient_to_f64(d, divisor, exp))
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
    fn adds_removes_and_replaces_back_to_the_same_integers() {
        let xs = [1e9 + 0.25, 1e9 + 0.5, -3.0, 1e9 + 0.125];
        let mut s = of(&xs[..2]).unwrap();
        assert!(s.add_fitting(xs[2]));
        assert!(s.replace(xs[0], xs[3]));
        s.remove(xs[2]);
        let fresh = of(&[xs[1], xs[3]]).unwrap();
        assert_eq!(s.mean_or_zero().to_bits(), fresh.mean_or_zero().to_bits());
        assert_eq!(s.variance(2).to_bits(), fresh.variance(2).to_bits());
        // A window too fine for the fast route takes the wide one.
        let tiny = 1.0 / 1_180_591_620_717_411_303_424.0; // 2^-70
        let mut w = of(&[1.0, 2.0, tiny]).unwrap();
        assert!(w.small(2.0).is_none());
        assert!(w.add_fitting(3.0));
        w.remove(1.0);
        assert!(w.replace(tiny, 5.0));
        assert_eq!(w.mean_or_zero(), 10.0 / 3.0);
        assert_eq!(w.variance(2), 7.0 / 3.0); // M2 = 14/3
        assert_eq!(s.mean_or_zero(), 1e9 + 0.3125);
        assert_eq!(s.variance(2), 0.1875 * 0.1875);
    }

    #[test]
    fn values_too_far_apart_are_refused() {
        assert!(of(&[1e300, 1e-300]).is_none());
        assert!(of(&[1.0, 5e-324]).is_none());
        let mut s = of(&[1.0, 2.0]).unwrap();
        assert!(!s.add_fitting(1e30));
        assert!(!s.replace(1.0, 1e-30));
        assert_eq!(s, of(&[1.0, 2.0]).unwrap());
        assert!(of(&[f64::MAX, -f64::MAX]).is_some());
        assert!(of(&[5e-324, 1e-310]).is_some());
    }

    #[test]
    fn the_mean_is_correctly_rounded() {
        // (1 + 2^-52) + 1 + 1: the exact mean 1 + 2^-52/3 rounds to 1.
        let s = of(&[1.0 + f64::EPSILON, 1.0, 1.0]).unwrap();
        assert_eq!(s.mean_or_zero(), 1.0);
        // 2^-1074 and 0: the mean 2^-1075 is a tie, to even 0.
        assert_eq!(of(&[5e-324, 0.0]).unwrap().mean_or_zero(), 0.0);
        assert_eq!(of(&[f64::MAX, f64::MAX]).unwrap().mean_or_zero(), f64::MAX);
        assert_eq!(
            of(&[-f64::MAX, -f64::MAX]).unwrap().mean_or_zero(),
            -f64::MAX
        );
        let v: Vec<f64> = (0..7).map(|i| 0.1 * f64::from(i)).collect();
        assert!(of(&v).unwrap().mean_or_zero() > 0.0);
    }

    #[test]
    fn a_variance_too_large_is_infinite() {
        let s = of(&[f64::MAX, -f64::MAX]).unwrap();
        assert_eq!(s.mean_or_zero(), 0.0);
        assert_eq!(s.variance(2), f64::INFINITY);
    }
}
