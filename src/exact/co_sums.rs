//! Σx, Σy, Σx², Σy² and Σxy of pairs of finite `f64`, kept exactly in
//! integers: [`ExactSums`] for each column, and the cross sum
//! `Σxy / 2^(base_x + base_y)` in 256 bits, two's complement.
//!
//! Each column keeps its own base, so `x` near 1e9 and `y` near 1e-3 are
//! both held at their own resolution. A column's values are below
//! `2^94·2^base`, so each product is below `2^188` and the cross sum of
//! up to 2³² − 1 pairs below `2^220`; at read, `n·Σxy − Σx·Σy` (which is
//! `n` times the co-moment, scaled) is below `2^253` in magnitude, and its
//! sign is the top bit of the 256-bit result.

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "limbs of 256-bit integers, and a count below 2^32"
)]

use crate::exact::sums::ExactSums;
use crate::kernels::exact_arith::{U256, mul_small, quotient_to_f64, shift_left, sub};

/// `a·b` for `a, b < 2^128`.
fn mul_wide(a: u128, b: u128) -> U256 {
    let a = [a as u64, (a >> 64) as u64];
    let b = [b as u64, (b >> 64) as u64];
    let mut out = [0_u64; 4];
    for (i, &ai) in a.iter().enumerate() {
        let mut carry = 0_u128;
        for (j, &bj) in b.iter().enumerate() {
            let t = u128::from(ai) * u128::from(bj) + u128::from(out[i + j]) + carry;
            out[i + j] = t as u64;
            carry = t >> 64;
        }
        out[i + 2] = carry as u64;
    }
    out
}

/// `−a` modulo 2^256.
pub(crate) fn negate(a: U256) -> U256 {
    sub([0; 4], a)
}

/// `a + b` modulo 2^256.
fn add(a: U256, b: U256) -> U256 {
    let mut out = [0; 4];
    let mut carry = false;
    for i in 0..4 {
        let (s, c1) = a[i].overflowing_add(b[i]);
        let (s, c2) = s.overflowing_add(u64::from(carry));
        out[i] = s;
        carry = c1 || c2;
    }
    out
}

/// `a + p` modulo 2^256, `p` sign-extended: the fast route's cross term,
/// as two 128-bit additions with a carry (four instructions).
#[inline]
fn add_i128(a: U256, p: i128) -> U256 {
    let low = u128::from(a[0]) | u128::from(a[1]) << 64;
    let high = u128::from(a[2]) | u128::from(a[3]) << 64;
    let (low, carry) = low.overflowing_add(p as u128);
    // The sign extension of `p` is all ones or all zeros.
    let high = high
        .wrapping_add((p >> 127) as u128)
        .wrapping_add(u128::from(carry));
    [
        low as u64,
        (low >> 64) as u64,
        high as u64,
        (high >> 64) as u64,
    ]
}

/// `a·b` for integers below 2^127 in magnitude, two's complement.
fn signed_product(a: i128, b: i128) -> U256 {
    let p = mul_wide(a.unsigned_abs(), b.unsigned_abs());
    if (a < 0) == (b < 0) { p } else { negate(p) }
}

/// The co-moment, means and variances of pairs of `f64` from exact
/// integer sums: the same bits whatever order the pairs come in.
///
/// The pair's counterpart of [`ExactSums`]: each column in exact sums of
/// its own (at its own scale: `x` near 1e9 beside `y` near 1e-3 loses
/// nothing), and `Σxy` exactly, so that the covariance and correlation
/// are read from exact integers, rounding at the end only. A pair either
/// column cannot hold (see [`ExactSums`]) is refused as a whole:
/// [`add`](Self::add) returns `false`, and the caller keeps it another
/// way, merging at the end with [`to_covariance`](Self::to_covariance).
///
/// ```
/// use momenta::ExactCoSums;
///
/// let mut sums = ExactCoSums::new();
/// for (x, y) in [(1e9 + 1.0, 2.0), (1e9 + 2.0, 4.0), (1e9 + 3.0, 7.0)] {
///     assert!(sums.add(x, y));
/// }
/// assert_eq!(sums.count(), 3);
/// // Σ(x − x̄)(y − ȳ) = (−1)(−7/3) + 0 + (1)(8/3) = 5.
/// assert_eq!(sums.comoment(), 5.0);
/// assert_eq!(sums.to_covariance().sample_covariance(), Some(2.5));
/// assert!(!sums.add(f64::NAN, 1.0));
/// assert_eq!(sums.count(), 3);
/// ```
///
/// With the `serde` feature the sums serialize as each column's (see
/// [`ExactSums`]) and `Σxy/2^(base_x + base_y)` as a decimal string, and
/// restore to the same sums; a cross sum beyond Cauchy–Schwarz is refused.
///
/// ```
/// # #[cfg(feature = "serde")]
/// # {
/// let mut sums = momenta::ExactCoSums::new();
/// for (x, y) in [(1.0, 2.0), (2.0, 4.0), (3.0, 7.0)] {
///     sums.add(x, y);
/// }
/// let back: momenta::ExactCoSums =
///     serde_json::from_str(&serde_json::to_string(&sums).unwrap()).unwrap();
/// assert_eq!(back, sums);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExactCoSums {
    x: ExactSums,
    y: ExactSums,
    /// `Σ(x/2^base_x)(y/2^base_y)`, two's complement.
    cross: U256,
}

impl ExactCoSums {
    /// No pairs.
    ///
    /// ```
    /// let sums = momenta::ExactCoSums::new();
    /// assert_eq!(sums.count(), 0);
    /// assert_eq!(sums.comoment(), 0.0);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How many pairs it holds.
    ///
    /// ```
    /// let mut sums = momenta::ExactCoSums::new();
    /// assert!(sums.add(1.0, 2.0));
    /// assert_eq!(sums.count(), 1);
    /// ```
    #[must_use]
    pub fn count(&self) -> u64 {
        self.x.count()
    }

    /// The exact sums of the `x` column.
    ///
    /// ```
    /// let mut sums = momenta::ExactCoSums::new();
    /// assert!(sums.add(1.0, 10.0) && sums.add(3.0, 30.0));
    /// assert_eq!(sums.x().mean(), Some(2.0));
    /// ```
    #[must_use]
    pub fn x(&self) -> &ExactSums {
        &self.x
    }

    /// The exact sums of the `y` column.
    ///
    /// ```
    /// let mut sums = momenta::ExactCoSums::new();
    /// assert!(sums.add(1.0, 10.0) && sums.add(3.0, 30.0));
    /// assert_eq!(sums.y().mean(), Some(20.0));
    /// ```
    #[must_use]
    pub fn y(&self) -> &ExactSums {
        &self.y
    }

    /// Takes in every pair of `other`, exactly: the sums of the union of
    /// the two sets, for a reduction over threads, processes or machines;
    /// or returns `false` and changes nothing when either column of the
    /// union does not fit its integers (as [`ExactSums::merge`] says). The
    /// statistics of the merged sums are those of the union, bit for bit,
    /// whatever the order of the merges.
    ///
    /// ```
    /// use momenta::ExactCoSums;
    ///
    /// let pairs = [(1e9 + 1.0, 2e-3), (1e9 + 2.0, 4e-3), (1e9 + 3.0, 7e-3), (1e9, 0.0)];
    /// let (mut left, mut right, mut all) = (ExactCoSums::new(), ExactCoSums::new(), ExactCoSums::new());
    /// for (i, &(x, y)) in pairs.iter().enumerate() {
    ///     if i < 2 { left.add(x, y) } else { right.add(x, y) };
    ///     all.add(x, y);
    /// }
    /// assert!(left.merge(&right));
    /// assert_eq!(left.comoment(), all.comoment());
    /// assert_eq!(
    ///     left.to_covariance().correlation(),
    ///     all.to_covariance().correlation()
    /// );
    /// ```
    #[must_use = "a refused merge changes nothing: keep the other sums another way"]
    pub fn merge(&mut self, other: &Self) -> bool {
        if other.count() == 0 {
            return true;
        }
        if self.count() == 0 {
            *self = other.clone();
            return true;
        }
        if u32::try_from(self.count() + other.count()).is_err() {
            return false;
        }
        // Worked on copies, so that a refusal changes nothing.
        let (mut mine, mut other) = (self.clone(), other.clone());
        // A column of zeros takes the other side's base (its cross sum is
        // 0); then each column at the finer of its two bases: how far each
        // side's goes down, checked on all four before anything changes.
        for (mine, theirs) in [(&mut mine.x, &mut other.x), (&mut mine.y, &mut other.y)] {
            if !mine.zeros_at(theirs.base()) {
                theirs.zeros_at(mine.base());
            }
        }
        let down = |a: &ExactSums, b: &ExactSums| (a.base() - b.base()).max(0);
        let (mine_x, mine_y) = (down(&mine.x, &other.x), down(&mine.y, &other.y));
        let (other_x, other_y) = (down(&other.x, &mine.x), down(&other.y, &mine.y));
        if mine_x > mine.x.room()
            || mine_y > mine.y.room()
            || other_x > other.x.room()
            || other_y > other.y.room()
        {
            return false;
        }
        mine.lower_bases_by(mine_x, mine_y);
        other.lower_bases_by(other_x, other_y);
        // At equal bases, and the count checked above: both are taken.
        let taken = mine.x.merge(&other.x) && mine.y.merge(&other.y);
        debug_assert!(taken, "columns at one base, counts in range");
        mine.cross = add(mine.cross, other.cross);
        *self = mine;
        true
    }

    /// Both columns' bases `kx` and `ky` bits finer (each within its
    /// room), the cross sum with them.
    fn lower_bases_by(&mut self, kx: i32, ky: i32) {
        if kx > 0 {
            self.x.lower_base_by(kx);
        }
        if ky > 0 {
            self.y.lower_base_by(ky);
        }
        if kx + ky > 0 {
            self.cross = shift_left(self.cross, (kx + ky) as u32);
        }
    }

    /// Takes in the pair `(x, y)` exactly; or returns `false` and changes
    /// nothing that can be read when either column cannot hold its value
    /// (as [`ExactSums::add`] says).
    ///
    /// ```
    /// let mut sums = momenta::ExactCoSums::new();
    /// assert!(sums.add(1e9, 1e-3));
    /// assert!(sums.add(1e9 + 0.5, 2e-3));
    /// assert!(!sums.add(1e300, 1.0));
    /// assert!(!sums.add(1.0, f64::INFINITY));
    /// assert_eq!(sums.count(), 2);
    /// ```
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "the fast route inside `add_by_group`'s loop: inlined, a \
                  GROUP BY of `corr` ran 1.3 times as fast"
    )]
    pub fn add(&mut self, x: f64, y: f64) -> bool {
        // Both columns always hold as many values (a pair goes into both
        // or neither): one count says for both.
        if self.x.takes_fast()
            && let Some(ix) = self.x.small(x)
            && let Some(iy) = self.y.small(y)
        {
            self.x.push_fast(ix);
            self.y.push_fast(iy);
            // At most 2^126 in magnitude: an i128.
            self.cross = add_i128(self.cross, i128::from(ix) * i128::from(iy));
            return true;
        }
        self.add_wide(x, y)
    }

    /// [`add`](Self::add) off the fast route.
    #[inline(never)]
    fn add_wide(&mut self, x: f64, y: f64) -> bool {
        if self.count() == 0 {
            if !(x.is_finite() && y.is_finite()) {
                return false;
            }
            // An empty set takes any finite value, at the base it picks.
            if !(self.x.add_fitting(x) && self.y.add_fitting(y)) {
                *self = Self::default();
                return false;
            }
            self.cross = signed_product(self.x.sum(), self.y.sum());
            return true;
        }
        if self.x.is_full() {
            return false;
        }
        let (ix, iy) = if let (Some(ix), Some(iy)) = (self.x.integer(x), self.y.integer(y)) {
            (ix, iy)
        } else {
            self.lower_bases_for(x, y);
            let (Some(ix), Some(iy)) = (self.x.integer(x), self.y.integer(y)) else {
                return false;
            };
            (ix, iy)
        };
        self.x.push_integer(ix);
        self.y.push_integer(iy);
        self.cross = add(self.cross, signed_product(ix, iy));
        true
    }

    /// Takes in `count` pairs from their sums on grids coarser than the
    /// bases: each column's `(Σ, Σ², shift)` as
    /// [`ExactSums::add_shifted`] takes them, and `cross`, their
    /// `Σxy` on the two grids.
    pub(crate) fn add_shifted(
        &mut self,
        count: u32,
        (sum_x, squares_x, shift_x): (i128, u128, u32),
        (sum_y, squares_y, shift_y): (i128, u128, u32),
        cross: i128,
    ) {
        self.x.add_shifted(count, sum_x, squares_x, shift_x);
        self.y.add_shifted(count, sum_y, squares_y, shift_y);
        let extend = (cross >> 127) as u64;
        let wide = [cross as u64, (cross >> 64) as u64, extend, extend];
        self.cross = add(self.cross, shift_left(wide, shift_x + shift_y));
    }

    /// Moves each column's base down for its value when it can (the cross
    /// sum's scale moves with them).
    #[inline(never)]
    fn lower_bases_for(&mut self, x: f64, y: f64) {
        // A column of zeros moves to any base: its cross sum is 0.
        self.x.rebase_zeros_for(x);
        self.y.rebase_zeros_for(y);
        let k = self.x.lower_base_for(x) + self.y.lower_base_for(y);
        if k > 0 {
            self.cross = shift_left(self.cross, k);
        }
    }

    /// The co-moment `Σ(x − x̄)(y − ȳ)`, correctly rounded (0 below two
    /// pairs): `(n·Σxy − Σx·Σy)/n`, from exact integers.
    ///
    /// ```
    /// let mut sums = momenta::ExactCoSums::new();
    /// for (x, y) in [(1.0, 3.0), (2.0, 2.0), (3.0, 1.0)] {
    ///     assert!(sums.add(x, y));
    /// }
    /// assert_eq!(sums.comoment(), -2.0);
    /// ```
    #[must_use]
    pub fn comoment(&self) -> f64 {
        let n = self.count();
        if n < 2 {
            return 0.0;
        }
        let d = sub(
            mul_small(self.cross, n),
            signed_product(self.x.sum(), self.y.sum()),
        );
        let negative = d[3] >> 63 != 0;
        let magnitude = if negative { negate(d) } else { d };
        let c = quotient_to_f64(magnitude, n, self.x.base() + self.y.base());
        if negative { -c } else { c }
    }

    /// The same pairs as a [`Covariance`](crate::Covariance), to merge
    /// with pairs kept another way: each column as
    /// [`ExactSums::to_variance`] gives it, and the co-moment correctly
    /// rounded.
    ///
    /// ```
    /// use momenta::{Covariance, ExactCoSums, Merge};
    ///
    /// let mut sums = ExactCoSums::new();
    /// assert!(sums.add(1.0, 1.0) && sums.add(2.0, 3.0));
    /// let mut all = sums.to_covariance();
    /// all.merge(&Covariance::from_slices(&[3.0], &[5.0])?);
    /// assert_eq!(all.correlation(), Some(1.0));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn to_covariance(&self) -> crate::Covariance<f64> {
        // Exact sums read correctly rounded meet Cauchy–Schwarz within the
        // room `from_parts` leaves for rounding.
        self.checked_covariance().unwrap_or_default()
    }

    /// [`to_covariance`](Self::to_covariance), or the error of
    /// `Covariance::from_parts` when the sums break Cauchy–Schwarz (which
    /// the sums of pairs never do).
    fn checked_covariance(&self) -> Result<crate::Covariance<f64>, crate::Error> {
        let (x, y) = (
            self.x.to_variance().to_parts(),
            self.y.to_variance().to_parts(),
        );
        let parts = crate::CovarianceParts {
            count: self.count(),
            shift_x: x.shift,
            offset_x: x.offset,
            m2_x: x.m2,
            shift_y: y.shift,
            offset_y: y.offset,
            m2_y: y.m2,
            comoment: self.comoment(),
        };
        crate::Covariance::from_parts(parts)
    }

    /// The two columns' sums and the cross sum: what a checkpoint keeps.
    #[cfg(feature = "serde")]
    pub(crate) fn into_parts(self) -> (ExactSums, ExactSums, U256) {
        (self.x, self.y, self.cross)
    }

    /// The sums of [`into_parts`](Self::into_parts), or the bound they
    /// break: as many values in both columns, each product below
    /// `2^(2·LIMIT)` units, the cross sum of one pair the product of its
    /// sums, and of more the co-moment within Cauchy–Schwarz of the two
    /// variances.
    #[cfg(feature = "serde")]
    pub(crate) fn from_parts(
        x: ExactSums,
        y: ExactSums,
        cross: U256,
    ) -> Result<Self, alloc::string::String> {
        let magnitude = if cross[3] >> 63 == 0 {
            cross
        } else {
            negate(cross)
        };
        let n = x.count();
        if n != y.count() {
            return Err(alloc::format!(
                "x and y must hold as many values, got {n} and {}",
                y.count()
            ));
        }
        if n == 0 {
            return if magnitude == [0; 4] {
                Ok(Self::default())
            } else {
                Err("an empty set's cross sum must be 0".into())
            };
        }
        // |Σxy| < n·2^188: its top 128 bits below n·2^60.
        let top = u128::from(magnitude[2]) | (u128::from(magnitude[3]) << 64);
        if top >= u128::from(n) << (2 * crate::kernels::exact_arith::LIMIT - 128) {
            return Err("cross must be below count·2^188 in magnitude".into());
        }
        let sums = Self { x, y, cross };
        if n == 1 && cross != signed_product(sums.x.sum(), sums.y.sum()) {
            return Err("the cross sum of one pair must be the product of its sums".into());
        }
        if n >= 2
            && let Err(e) = sums.checked_covariance()
        {
            return Err(alloc::format!("cross: {e}"));
        }
        Ok(sums)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_products_and_shifts_are_exact() {
        let a = (1_u128 << 100) + 3;
        let b = (1_u128 << 90) + 5;
        // (2^100 + 3)(2^90 + 5) = 2^190 + 5·2^100 + 3·2^90 + 15.
        let p = mul_wide(a, b);
        let want = add(
            add(shift_left([1, 0, 0, 0], 190), shift_left([5, 0, 0, 0], 100)),
            add(shift_left([3, 0, 0, 0], 90), [15, 0, 0, 0]),
        );
        assert_eq!(p, want);
        assert_eq!(add(signed_product(-2, 3), [6, 0, 0, 0]), [0; 4]);
        assert_eq!(shift_left([u64::MAX, 0, 0, 0], 64), [0, u64::MAX, 0, 0]);
        assert_eq!(shift_left([1, 0, 0, 0], 255), [0, 0, 0, 1 << 63]);
    }

    #[test]
    fn a_negative_comoment_reads_negative() {
        let mut s = ExactCoSums::new();
        for (x, y) in [(1e9 + 0.5, -1e-3), (1e9 + 1.5, -3e-3)] {
            assert!(s.add(x, y));
        }
        // (−0.5)(1e-3) + (0.5)(−1e-3) = −1e-3, to the values' roundings.
        let c = s.comoment();
        assert!((c + 1e-3).abs() < 1e-15, "{c}");
    }
}
