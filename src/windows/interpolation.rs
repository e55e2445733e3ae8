//! How a quantile between two values of a window is read: pandas' five
//! `interpolation` options.

use crate::Float;
use crate::kernels::sorted_keys::lerp;

/// Which value a quantile takes when its rank `h = q·(m − 1)` falls
/// between two of the `m` sorted values, `lo = v⌊h⌋` and `hi = v⌊h⌋₊₁`:
/// pandas' `rolling(…).quantile(q, interpolation=…)` and numpy's
/// `quantile(…, method=…)` of the same names. When `h` is whole every
/// option gives `v_h`.
///
/// | variant | value | pandas |
/// |---|---|---|
/// | `Linear` (default) | `lo + (hi − lo)·(h − ⌊h⌋)` | `"linear"` |
/// | `Lower` | `lo` | `"lower"` |
/// | `Higher` | `hi` | `"higher"` |
/// | `Nearest` | the nearer of the two; at exactly halfway the one of even rank (`lo` when ⌊h⌋ is even, as `round` does) | `"nearest"` |
/// | `Midpoint` | `(lo + hi)/2` | `"midpoint"` |
///
/// Each is evaluated as pandas does, so on finite data the result is
/// pandas' to the bit — except that `Midpoint` and `Linear` do not
/// overflow where the exact answer is finite (pandas' `(lo + hi)/2` is +∞
/// for `lo = hi = 1e308`). Towards an infinity the limits apply: `Linear`
/// and `Midpoint` from a finite value to `+∞` give `+∞`, from `−∞` to `+∞`
/// NaN.
///
/// # Example
///
/// ```
/// use momenta::{Interpolation, MovingQuantile};
///
/// // Five values, q = 0.3: rank 1.2, between 2 and 3.
/// let xs = [5.0, 1.0, 4.0, 2.0, 3.0];
/// let mut got = Vec::new();
/// for how in [
///     Interpolation::Linear,
///     Interpolation::Lower,
///     Interpolation::Higher,
///     Interpolation::Nearest,
///     Interpolation::Midpoint,
/// ] {
///     let mut q = MovingQuantile::new(5, 0.3)?.with_interpolation(how);
///     q.extend_from_slice(&xs);
///     got.push(q.quantile().unwrap());
/// }
/// // pandas: pd.Series(xs).rolling(5).quantile(0.3, interpolation=…)
/// assert_eq!(got, [2.2, 2.0, 3.0, 2.0, 2.5]);
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Interpolation {
    /// `lo + (hi − lo)·fraction`: pandas' and numpy's default.
    #[default]
    Linear,
    /// The lower of the two values.
    Lower,
    /// The higher of the two values.
    Higher,
    /// The nearer of the two; halfway, the one of even rank.
    Nearest,
    /// Halfway between the two.
    Midpoint,
}

impl Interpolation {
    /// The quantile at rank `idx + frac` (`0 < frac < 1`) between `lo`,
    /// the value of rank `idx`, and `hi`, the next (`lo ≤ hi`).
    #[inline]
    #[allow(clippy::float_cmp, reason = "pandas' test: exactly halfway")]
    pub(crate) fn between<F: Float>(self, lo: F, hi: F, idx: usize, frac: f64) -> F {
        match self {
            Self::Linear => lerp(lo, hi, frac),
            Self::Lower => lo,
            Self::Higher => hi,
            Self::Nearest => {
                // pandas: `round` with ties to the even rank.
                if frac < 0.5 || (frac == 0.5 && idx.is_multiple_of(2)) {
                    lo
                } else {
                    hi
                }
            }
            Self::Midpoint => midpoint(lo, hi),
        }
    }
}

/// `(lo + hi)/2` as pandas computes it wherever the sum is finite (or an
/// operand is not), else `lo/2 + hi/2`, which is finite.
fn midpoint<F: Float>(lo: F, hi: F) -> F {
    let two = F::one() + F::one();
    let sum = lo + hi;
    if sum.is_finite() || !lo.is_finite() || !hi.is_finite() {
        sum / two
    } else {
        lo / two + hi / two
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_follows_the_limits_at_infinities() {
        assert_eq!(lerp(1.0, 3.0, 0.25), 1.5);
        assert_eq!(lerp(f64::NEG_INFINITY, 2.0, 0.5), f64::NEG_INFINITY);
        assert_eq!(lerp(2.0, f64::INFINITY, 0.5), f64::INFINITY);
        assert_eq!(lerp(f64::INFINITY, f64::INFINITY, 0.5), f64::INFINITY);
        assert!(lerp(f64::NEG_INFINITY, f64::INFINITY, 0.5).is_nan());
        assert_eq!(lerp(-f64::MAX, f64::MAX, 0.5), 0.0);
        assert_eq!(lerp(f64::INFINITY, f64::INFINITY, 0.0), f64::INFINITY);
        assert!((midpoint(1e308, 1.7e308) - 1.35e308_f64).abs() < 1e293);
        assert_eq!(midpoint(-f64::MAX, f64::MAX), 0.0);
        assert_eq!(midpoint(2.0, f64::INFINITY), f64::INFINITY);
        assert!(midpoint(f64::NEG_INFINITY, f64::INFINITY).is_nan());
    }

    #[test]
    fn nearest_rounds_halfway_to_the_even_rank() {
        let n = Interpolation::Nearest;
        assert_eq!(n.between(1.0, 2.0, 0, 0.5), 1.0);
        assert_eq!(n.between(2.0, 3.0, 1, 0.5), 3.0);
        assert_eq!(n.between(3.0, 4.0, 2, 0.5), 3.0);
        assert_eq!(n.between(3.0, 4.0, 2, 0.4999), 3.0);
        assert_eq!(n.between(3.0, 4.0, 2, 0.5001), 4.0);
    }
}
