//! The minimum and maximum of every window of a series, by van Herk and
//! Gil-Werman's blocks.
//!
//! Cut the values into blocks of `window`, counted from the first value
//! the series can see. A window that ends at `p` starts at
//! `a = p − window + 1`: either `a` is the start of `p`'s block, and the
//! window is that block up to `p`, or the window is the end of the previous
//! block from `a` and the start of `p`'s block up to `p`. So its extreme is
//! that of one suffix of the previous block and one prefix of this one:
//! with every block's suffix extremes (a backward pass) and the running
//! prefix extreme (the forward pass that writes the outputs), three
//! comparisons a value whatever the window.
//!
//! Values are compared as integer keys in the order the push path's
//! deques use (`−0.0 < +0.0`: [`key`]), so each output is the very value
//! the deques would report, bit for bit. NaN never takes part: it stands
//! for the order's identity and is counted apart, and the NaN policy and
//! `min_periods` decide from the counts, as for the push path.

use alloc::vec;

use crate::Float;
use crate::windows::policy::Policy;

/// `x`'s place in the order `−∞ < … < −0.0 < +0.0 < … < +∞` as an integer
/// (its bits, with the magnitude bits of a negative value flipped):
/// `key(a) < key(b)` exactly when `a` is below `b` in that order. Not for
/// NaN.
#[inline]
pub(crate) fn key<F: Float>(x: F) -> i64 {
    flip(x.as_f64().to_bits().cast_signed())
}

/// The value whose [`key`] is `k`.
#[inline]
pub(crate) fn value<F: Float>(k: i64) -> F {
    F::from_f64(f64::from_bits(flip(k).cast_unsigned()))
}

/// Flips the low 63 bits of a negative number: its own inverse.
#[inline]
fn flip(bits: i64) -> i64 {
    bits ^ ((bits >> 63).cast_unsigned() >> 1).cast_signed()
}

/// Which statistic of the window a series reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    Min,
    Max,
    Range,
}

/// The window's extremes as keys: the least and the greatest, or the
/// identities (`i64::MAX`, `i64::MIN`) while it holds no value.
#[derive(Clone, Copy)]
struct Pair {
    low: i64,
    high: i64,
}

impl Pair {
    const EMPTY: Self = Self {
        low: i64::MAX,
        high: i64::MIN,
    };

    /// The pair of one value (the identities for NaN).
    #[inline]
    fn of<F: Float>(x: F) -> Self {
        if x.is_nan() {
            Self::EMPTY
        } else {
            let k = key(x);
            Self { low: k, high: k }
        }
    }

    #[inline]
    fn with(self, other: Self) -> Self {
        Self {
            low: self.low.min(other.low),
            high: self.high.max(other.high),
        }
    }
}

/// Writes into `out[i]` the statistic `which` of the window ending at
/// `xs[i]`, of `window` values, in a series whose earlier values are
/// `before` (oldest first; the values in the window before the first of
/// `xs`, all of them since it was last empty), under `policy`: what the
/// push path's `min`, `max` or `range` reads after each push, bit for bit.
pub(crate) fn series<F: Float>(
    before: (&[F], &[F]),
    xs: &[F],
    window: usize,
    policy: Policy,
    which: Which,
    out: &mut [F],
) {
    let (b0, b1) = before;
    let known = b0.len() + b1.len();
    // The values the series sees, by position: `before`, then `xs`.
    let at = |p: usize| -> F {
        let x = if p < b0.len() {
            b0.get(p)
        } else if p < known {
            b1.get(p - b0.len())
        } else {
            xs.get(p - known)
        };
        x.copied().unwrap_or_else(F::nan)
    };
    let total = known + xs.len();
    let block = window.min(total).max(1);
    let mut suffix = vec![Pair::EMPTY; block];
    // NaN in the window ending at the current position.
    let mut nans = 0_usize;
    let mut start = 0;
    while start < total {
        let end = total.min(start.saturating_add(block));
        let mut prefix = Pair::EMPTY;
        for p in start..end {
            let x = at(p);
            prefix = prefix.with(Pair::of(x));
            nans += usize::from(x.is_nan());
            // The window is `a..=p`, `a = p + 1 − window` (0 while filling).
            let len = window.min(p + 1);
            if p + 1 > window && at(p - window).is_nan() {
                nans -= 1;
            }
            if p < known {
                continue;
            }
            let a = p + 1 - len;
            let extremes = if a >= start {
                prefix
            } else {
                // `a` is in the previous block, whose suffixes start at
                // `start − block`.
                suffix
                    .get(a + block - start)
                    .map_or(prefix, |s| s.with(prefix))
            };
            let counted = policy.counted(len, nans);
            let y = if !policy.ready(counted) || (nans > 0 && !policy.skips_nan()) {
                F::nan()
            } else {
                match which {
                    Which::Min => value(extremes.low),
                    Which::Max => value(extremes.high),
                    Which::Range => value::<F>(extremes.high) - value(extremes.low),
                }
            };
            if let Some(slot) = out.get_mut(p - known) {
                *slot = y;
            }
        }
        // This block's suffixes, for the windows that end in the next.
        if end < total {
            let mut acc = Pair::EMPTY;
            for p in (start..end).rev() {
                acc = acc.with(Pair::of(at(p)));
                if let Some(slot) = suffix.get_mut(p - start) {
                    *slot = acc;
                }
            }
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_order_with_negative_zero_below_positive_zero() {
        let xs = [
            f64::NEG_INFINITY,
            -f64::MAX,
            -1.0,
            -f64::MIN_POSITIVE,
            -5e-324,
            -0.0,
            0.0,
            5e-324,
            1.0,
            f64::MAX,
            f64::INFINITY,
        ];
        for pair in xs.windows(2) {
            assert!(key(pair[0]) < key(pair[1]), "{pair:?}");
        }
        for &x in &xs {
            assert_eq!(value::<f64>(key(x)).to_bits(), x.to_bits());
            let y = x as f32;
            assert_eq!(value::<f32>(key(y)).to_bits(), y.to_bits());
        }
    }
}
