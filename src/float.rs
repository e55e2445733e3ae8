//! The one numeric bound of the crate.

mod sealed {
    /// Seals [`Float`](super::Float) and [`Element`](super::Element), and
    /// hands the kernels a typed view of a slice: they are written for
    /// exactly these types.
    pub trait Sealed: Sized {
        /// `xs` as the slice of the concrete type it is.
        fn elements(xs: &[Self]) -> Elements<'_>;

        /// `xs` as the mutable slice of the concrete type it is: what the
        /// kernels that write a slice of this type (a normalization's
        /// output) need.
        fn elements_mut(xs: &mut [Self]) -> ElementsMut<'_>;
    }

    /// A slice of one of the element types, by type.
    #[derive(Clone, Copy, Debug)]
    pub enum Elements<'a> {
        /// A slice of `f32`.
        F32(&'a [f32]),
        /// A slice of `f64`.
        F64(&'a [f64]),
        /// A slice of IEEE half precision.
        #[cfg(feature = "half")]
        F16(&'a [half::f16]),
        /// A slice of bfloat16.
        #[cfg(feature = "half")]
        Bf16(&'a [half::bf16]),
    }

    /// A mutable slice of one of the element types, by type.
    #[derive(Debug)]
    pub enum ElementsMut<'a> {
        /// A slice of `f32`.
        F32(&'a mut [f32]),
        /// A slice of `f64`.
        F64(&'a mut [f64]),
        /// A slice of IEEE half precision.
        #[cfg(feature = "half")]
        F16(&'a mut [half::f16]),
        /// A slice of bfloat16.
        #[cfg(feature = "half")]
        Bf16(&'a mut [half::bf16]),
    }

    impl Sealed for f32 {
        #[inline]
        fn elements(xs: &[f32]) -> Elements<'_> {
            Elements::F32(xs)
        }

        #[inline]
        fn elements_mut(xs: &mut [f32]) -> ElementsMut<'_> {
            ElementsMut::F32(xs)
        }
    }

    impl Sealed for f64 {
        #[inline]
        fn elements(xs: &[f64]) -> Elements<'_> {
            Elements::F64(xs)
        }

        #[inline]
        fn elements_mut(xs: &mut [f64]) -> ElementsMut<'_> {
            ElementsMut::F64(xs)
        }
    }

    #[cfg(feature = "half")]
    impl Sealed for half::f16 {
        #[inline]
        fn elements(xs: &[half::f16]) -> Elements<'_> {
            Elements::F16(xs)
        }

        #[inline]
        fn elements_mut(xs: &mut [half::f16]) -> ElementsMut<'_> {
            ElementsMut::F16(xs)
        }
    }

    #[cfg(feature = "half")]
    impl Sealed for half::bf16 {
        #[inline]
        fn elements(xs: &[half::bf16]) -> Elements<'_> {
            Elements::Bf16(xs)
        }

        #[inline]
        fn elements_mut(xs: &mut [half::bf16]) -> ElementsMut<'_> {
            ElementsMut::Bf16(xs)
        }
    }

    /// Seals [`Float`](super::Float), and gives the serialized forms what
    /// they need to write a value exactly: its bits, and the correctly
    /// rounded parse of its own type (an `f32` read as an `f64` and then
    /// narrowed could round twice).
    pub trait Bits: Sized + Copy {
        /// The bits, widened to `u64` (zero-extended).
        fn bits(self) -> u64;
        /// The value of these bits, if they fit the type's width.
        fn from_bits(bits: u64) -> Option<Self>;
        /// A decimal (or `inf`, `NaN`) rounded to nearest in this type.
        fn parse(text: &str) -> Option<Self>;
    }

    impl Bits for f32 {
        fn bits(self) -> u64 {
            u64::from(self.to_bits())
        }
        fn from_bits(bits: u64) -> Option<Self> {
            u32::try_from(bits).ok().map(f32::from_bits)
        }
        fn parse(text: &str) -> Option<Self> {
            text.parse().ok()
        }
    }

    impl Bits for f64 {
        fn bits(self) -> u64 {
            self.to_bits()
        }
        fn from_bits(bits: u64) -> Option<Self> {
            Some(f64::from_bits(bits))
        }
        fn parse(text: &str) -> Option<Self> {
            text.parse().ok()
        }
    }
}

/// The element types the slice and per-channel kernels read: `f32`, `f64`
/// and, with the `half` feature, `half::f16` and `half::bf16`.
///
/// Every statistic of a slice (`Variance::from_slice`, `Mean::from_slice`,
/// `BatchStats::compute`, …) takes `&[S]` for any `S: Element` and widens
/// each value exactly to `f64` before it is used: half-precision tensors
/// get `f64`-accurate statistics, with no copy to a wider type first. The
/// trait is sealed.
///
/// # Example
///
/// ```
/// use momenta::{Element, Variance};
///
/// fn spread<S: Element>(xs: &[S]) -> Option<f64> {
///     Variance::<f64>::from_slice(xs).population_std_dev()
/// }
///
/// assert_eq!(spread(&[1.0_f32, 3.0]), Some(1.0));
/// assert_eq!(Element::widen(0.5_f32), 0.5_f64);
/// ```
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The value as an `f64`, exactly (every element type widens without
    /// rounding).
    ///
    /// ```
    /// use momenta::Element;
    /// assert_eq!(Element::widen(f32::MAX), f64::from(f32::MAX));
    /// ```
    fn widen(self) -> f64;

    /// `x` rounded once to the nearest value of this type (ties to even):
    /// how every output of an `f64` computation is written to a slice of
    /// this type. Too large for the type is ±∞; NaN stays NaN.
    ///
    /// For `half::f16` and `half::bf16` this is the correctly rounded
    /// narrowing of the `f64` itself. (The `half` crate's `from_f64`
    /// goes through `f32` where the CPU has F16C, or drops the `f64`'s
    /// low 32 bits otherwise, and so rounds twice: `1 + 2⁻¹¹ + 2⁻⁴⁰`,
    /// above the midpoint of two `f16`, becomes the midpoint and then
    /// the even neighbour 1.)
    ///
    /// ```
    /// use momenta::Element;
    /// assert_eq!(<f32 as Element>::narrow(0.1), 0.1_f32);
    /// assert_eq!(<f64 as Element>::narrow(0.1), 0.1);
    /// ```
    fn narrow(x: f64) -> Self;
}

impl Element for f32 {
    #[inline]
    fn widen(self) -> f64 {
        f64::from(self)
    }

    #[inline]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "rounding to nearest is the documented behaviour"
    )]
    fn narrow(x: f64) -> Self {
        x as f32
    }
}

impl Element for f64 {
    #[inline]
    fn widen(self) -> f64 {
        self
    }

    #[inline]
    fn narrow(x: f64) -> Self {
        x
    }
}

#[cfg(feature = "half")]
impl Element for half::f16 {
    #[inline]
    fn widen(self) -> f64 {
        f64::from(f16_bits_to_f32(self.to_bits()))
    }

    #[inline]
    fn narrow(x: f64) -> Self {
        half::f16::from_bits(narrow_bits(x, 10, -14, 15))
    }
}

#[cfg(feature = "half")]
impl Element for half::bf16 {
    #[inline]
    fn widen(self) -> f64 {
        // bfloat16 is the upper half of an f32.
        f64::from(f32::from_bits(u32::from(self.to_bits()) << 16))
    }

    #[inline]
    fn narrow(x: f64) -> Self {
        half::bf16::from_bits(narrow_bits(x, 7, -126, 127))
    }
}

/// The bits of `x` rounded once, to nearest with ties to even, to a
/// 16-bit binary format with `man` mantissa bits and normal exponents
/// `emin..=emax` (IEEE half: 10, −14, 15; bfloat16: 7, −126, 127).
///
/// The value is `M·2^(e − 52)` with `M` the `f64`'s 53-bit significand;
/// its multiple of the format's quantum `2^(max(e, emin) − man)` is `M`
/// shifted right by `s = 52 − man + max(emin − e, 0)`, rounded on the bits
/// shifted out. The format's bits are then `(max(e, emin) − emin) · 2^man`
/// plus that multiple: a multiple that reaches `2^(man + 1)` carries into
/// the exponent by itself, and past the largest exponent into ∞.
#[cfg(feature = "half")]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    reason = "bit fields of known width"
)]
fn narrow_bits(x: f64, man: u32, emin: i32, emax: i32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 48) & 0x8000) as u16;
    let field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1_u64 << 52) - 1);
    let inf = (((emax - emin + 2) as u32) << man) as u16;
    if field == 0x7ff {
        if frac == 0 {
            return sign | inf;
        }
        // A quiet NaN, with the payload's leading bits.
        let payload = (frac >> (52 - man)) as u16;
        return sign | inf | (1 << (man - 1)) | payload;
    }
    if field == 0 {
        // Zero, or an f64 subnormal: far below half the smallest value.
        return sign;
    }
    let e = field - 1023;
    if e > emax {
        return sign | inf;
    }
    let significand = frac | (1_u64 << 52);
    let shift = (52 - man as i32 + (emin - e).max(0)) as u32;
    if shift >= 64 {
        return sign;
    }
    let mut q = significand >> shift;
    let rest = significand & ((1_u64 << shift) - 1);
    let half = 1_u64 << (shift - 1);
    if rest > half || (rest == half && q & 1 == 1) {
        q += 1;
    }
    let out = ((((e.max(emin) - emin) as u64) << man) + q).min(u64::from(inf));
    sign | out as u16
}

/// An IEEE half-precision value (its bits) as the `f32` it equals, exactly:
/// the exponent re-biased from 15 to 127 for normal numbers, subnormals
/// scaled from their integer mantissa, and ±∞ and NaN kept (the NaN
/// payload moves with the mantissa).
#[cfg(feature = "half")]
#[inline]
pub(crate) fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    // Exponent and mantissa, moved to their f32 positions.
    let rest = u32::from(h & 0x7fff) << 13;
    let exponent = rest & 0x0f80_0000;
    let magnitude = if exponent == 0x0f80_0000 {
        f32::from_bits(rest | 0x7f80_0000)
    } else if exponent == 0 {
        // 0 or subnormal: the mantissa times 2⁻²⁴, exact in f32.
        f32::from(h & 0x03ff) * f32::from_bits(0x3380_0000)
    } else {
        f32::from_bits(rest + 0x3800_0000)
    };
    f32::from_bits(magnitude.to_bits() | sign)
}

pub(crate) use sealed::Elements;
#[cfg(all(feature = "std", target_arch = "x86_64"))]
pub(crate) use sealed::ElementsMut;

/// The floating-point types the accumulators work in: `f32` and `f64`.
///
/// This is the crate's single numeric bound, so generic code needs one
/// where-clause: `F: Float`. It extends [`num_traits::Float`] (which is
/// available without `std` through `libm`) with exact conversions to and from
/// `f64`, which the slice kernels use: they accumulate in `f64` whatever the
/// element type is.
///
/// The trait is sealed: the kernels are written for exactly these two types.
///
/// # Example
///
/// ```
/// use momenta::{Float, Mean};
///
/// fn average<F: Float>(xs: &[F]) -> Option<F> {
///     let mut m = Mean::<F>::new();
///     for &x in xs {
///         m.push(x);
///     }
///     m.mean()
/// }
///
/// assert_eq!(average(&[1.0_f32, 2.0, 3.0]), Some(2.0));
/// assert_eq!(average::<f64>(&[]), None);
/// ```
pub trait Float:
    num_traits::Float
    + core::fmt::Debug
    + core::fmt::Display
    + Default
    + Send
    + Sync
    + 'static
    + Element
    + sealed::Bits
{
    /// Converts from `f64`, rounding to nearest (exact for `f64`).
    ///
    /// ```
    /// use momenta::Float;
    /// assert_eq!(<f32 as Float>::from_f64(0.5), 0.5_f32);
    /// ```
    fn from_f64(x: f64) -> Self;

    /// Converts to `f64`, which is exact for both `f32` and `f64`.
    ///
    /// ```
    /// use momenta::Float;
    /// assert_eq!(Float::as_f64(0.25_f32), 0.25_f64);
    /// ```
    fn as_f64(self) -> f64;

    /// Converts a count to this type, rounding to nearest.
    ///
    /// ```
    /// use momenta::Float;
    /// assert_eq!(<f64 as Float>::from_count(3), 3.0);
    /// ```
    fn from_count(n: u64) -> Self;
}

impl Float for f32 {
    #[inline]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "rounding to nearest is the documented behaviour"
    )]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline]
    fn as_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn from_count(n: u64) -> Self {
        n as f32
    }
}

impl Float for f64 {
    #[inline]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline]
    fn as_f64(self) -> f64 {
        self
    }
    #[inline]
    fn from_count(n: u64) -> Self {
        n as f64
    }
}

/// `x` as an `F`, if `F` holds it exactly (NaN and ±∞ included): how
/// `from_parts` takes back the `f64` fields `to_parts` gave out.
pub(crate) fn exactly<F: Float>(name: &str, x: f64) -> Result<F, crate::Error> {
    let y = F::from_f64(x);
    if y.as_f64().to_bits() == x.to_bits() || x.is_nan() {
        Ok(y)
    } else {
        Err(crate::Error::state(alloc::format!(
            "{name} must be representable in {}, got {x}",
            core::any::type_name::<F>()
        )))
    }
}

/// The smaller of `a` and `b` as IEEE 754-2019 `minimum` defines it: NaN
/// if either is NaN, and −0.0 below +0.0. Unlike `f64::min` (which drops a
/// NaN and may return either zero) it is commutative and associative to
/// the bit, so a reduction gives one answer in any order.
#[inline]
pub(crate) fn minimum<F: Float>(a: F, b: F) -> F {
    if a < b {
        a
    } else if b < a {
        b
    } else if a == b {
        // Equal: the same number, or zeros of either sign.
        if a.is_sign_negative() { a } else { b }
    } else {
        F::nan()
    }
}

/// The larger of `a` and `b` as IEEE 754-2019 `maximum` defines it: NaN if
/// either is NaN, and +0.0 above −0.0.
#[inline]
pub(crate) fn maximum<F: Float>(a: F, b: F) -> F {
    if a > b {
        a
    } else if b > a {
        b
    } else if a == b {
        if a.is_sign_positive() { a } else { b }
    } else {
        F::nan()
    }
}

/// `max(x, 0)` that lets NaN through (`f64::max` would turn NaN into 0).
#[inline]
pub(crate) fn clamp_non_negative<F: Float>(x: F) -> F {
    if x < F::zero() { F::zero() } else { x }
}

/// The z-score `(x − mean)/sd` every `z_score` method gives: `None` when
/// `sd` is 0 (no spread to measure against), NaN when `sd` is.
#[inline]
pub(crate) fn z_score<F: Float>(x: F, mean: F, sd: F) -> Option<F> {
    (sd != F::zero()).then(|| (x - mean) / sd)
}

/// Knuth's TwoSum: `(s, e)` with `s = fl(a + b)` and `s + e = a + b`
/// exactly, whatever the magnitudes (barring overflow).
#[inline]
pub(crate) fn two_sum<F: Float>(a: F, b: F) -> (F, F) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_are_exact_where_they_should_be() {
        assert_eq!(Float::as_f64(f32::MAX), f64::from(f32::MAX));
        assert_eq!(<f32 as Float>::from_f64(1.0 + f64::EPSILON), 1.0_f32);
        assert_eq!(<f64 as Float>::from_count(1 << 53), 9_007_199_254_740_992.0);
    }

    #[test]
    fn minimum_and_maximum_order_zeros_and_keep_nan() {
        assert_eq!(minimum(0.0, -0.0_f64).to_bits(), (-0.0_f64).to_bits());
        assert_eq!(minimum(-0.0, 0.0_f64).to_bits(), (-0.0_f64).to_bits());
        assert_eq!(maximum(0.0, -0.0_f64).to_bits(), 0.0_f64.to_bits());
        assert_eq!(maximum(-0.0, 0.0_f32).to_bits(), 0.0_f32.to_bits());
        assert!(minimum(f64::NAN, 1.0).is_nan() && minimum(1.0, f64::NAN).is_nan());
        assert!(maximum(f32::NAN, 1.0).is_nan() && maximum(1.0, f32::NAN).is_nan());
        assert_eq!((minimum(1.0, 2.0), maximum(1.0, 2.0)), (1.0, 2.0));
        assert_eq!(minimum(f64::NEG_INFINITY, -f64::MAX), f64::NEG_INFINITY);
    }

    #[test]
    fn clamp_keeps_nan_and_drops_negatives() {
        assert!(clamp_non_negative(f64::NAN).is_nan());
        assert_eq!(clamp_non_negative(-1e-300_f64), 0.0);
        assert_eq!(clamp_non_negative(2.5_f32), 2.5);
    }

    #[test]
    fn two_sum_keeps_the_rounding_error() {
        assert_eq!(two_sum(1e16_f64, 1.0), (1e16, 1.0));
        assert_eq!(two_sum(1.0_f64, 1e16), (1e16, 1.0));
        assert_eq!(two_sum(0.5_f32, 0.25), (0.75, 0.0));
    }
}
