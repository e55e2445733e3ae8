//! The minimum and maximum of every window of a series, by van Herk and
//! Gil-Werman's blocks.
//!
//! Cut the slice into blocks of `window` values, and let the values the
//! window held before the slice be one more block in front. A window that
//! ends at `p` starts at `a = p − window + 1`: either `a` is the start of
//! `p`'s block, and the window is that block up to `p`, or the window is
//! the end of the previous block from `a` and the start of `p`'s block up
//! to `p`. So its extreme is that of one suffix of the previous block and
//! one prefix of this one: with every block's suffix extremes (a backward
//! pass) and the running prefix extreme (the forward pass that writes the
//! outputs), three comparisons a value whatever the window.
//!
//! Values are compared as integer keys in the order the push path's
//! blocks use (`−0.0 < +0.0`: [`key`]), so each output is the very value
//! the push path would report, bit for bit. NaN never takes part: it stands
//! for the order's identity and is counted apart, and the NaN policy and
//! `min_periods` decide from the counts, as for the push path.

use alloc::vec;
use alloc::vec::Vec;

use crate::Float;
use crate::kernels::sorted_keys::{key, value};
use crate::windows::policy::Policy;

/// Which statistic of the window a series reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    Min,
    Max,
    Range,
}

/// The extremes of a stretch of values, as keys (also the push path's
/// blocks', `windows/block_extrema.rs`).
pub(crate) trait Extremes: Copy {
    /// The extremes of no value: the order's identities.
    const EMPTY: Self;
    /// The extremes of one value; NaN takes no part.
    fn of<F: Float>(x: F) -> Self;
    /// The extremes of one value that is not NaN.
    fn of_number<F: Float>(x: F) -> Self;
    /// The extremes of both stretches.
    fn with(self, other: Self) -> Self;
    /// The statistic, from the extremes of a window that holds a value.
    fn read<F: Float>(self) -> F;
}

/// The key of `x`, or `identity` for NaN.
#[inline]
fn key_or<F: Float>(x: F, identity: i64) -> i64 {
    if x.is_nan() { identity } else { key(x) }
}

/// The least key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Low(pub(crate) i64);

impl Extremes for Low {
    const EMPTY: Self = Self(i64::MAX);
    #[inline]
    fn of<F: Float>(x: F) -> Self {
        Self(key_or(x, i64::MAX))
    }
    #[inline]
    fn of_number<F: Float>(x: F) -> Self {
        Self(key(x))
    }
    #[inline]
    fn with(self, other: Self) -> Self {
        Self(self.0.min(other.0))
    }
    #[inline]
    fn read<F: Float>(self) -> F {
        value(self.0)
    }
}

/// The greatest key.
#[derive(Clone, Copy, Debug)]
pub(crate) struct High(pub(crate) i64);

impl Extremes for High {
    const EMPTY: Self = Self(i64::MIN);
    #[inline]
    fn of<F: Float>(x: F) -> Self {
        Self(key_or(x, i64::MIN))
    }
    #[inline]
    fn of_number<F: Float>(x: F) -> Self {
        Self(key(x))
    }
    #[inline]
    fn with(self, other: Self) -> Self {
        Self(self.0.max(other.0))
    }
    #[inline]
    fn read<F: Float>(self) -> F {
        value(self.0)
    }
}

/// Both, for the range `max − min`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Both(pub(crate) Low, pub(crate) High);

impl Extremes for Both {
    const EMPTY: Self = Self(Low::EMPTY, High::EMPTY);
    #[inline]
    fn of<F: Float>(x: F) -> Self {
        Self(Low::of(x), High::of(x))
    }
    #[inline]
    fn of_number<F: Float>(x: F) -> Self {
        let k = key(x);
        Self(Low(k), High(k))
    }
    #[inline]
    fn with(self, other: Self) -> Self {
        Self(self.0.with(other.0), self.1.with(other.1))
    }
    #[inline]
    fn read<F: Float>(self) -> F {
        self.1.read::<F>() - self.0.read()
    }
}

/// Writes into `out[i]` the statistic `which` of the window ending at
/// `xs[i]`, of `window` values, in a series whose earlier values are
/// `before` (oldest first, as the ring holds them: every value since the
/// window was last empty, up to `window`), under `policy`: what the push
/// path's `min`, `max` or `range` reads after each push, bit for bit.
pub(crate) fn series<F: Float>(
    before: (&[F], &[F]),
    xs: &[F],
    window: usize,
    policy: Policy,
    which: Which,
    out: &mut [F],
) {
    match which {
        Which::Min => blocks::<F, Low>(before, xs, window, policy, out),
        Which::Max => blocks::<F, High>(before, xs, window, policy, out),
        Which::Range => blocks::<F, Both>(before, xs, window, policy, out),
    }
}

/// [`series`] for the extremes `E`.
fn blocks<F: Float, E: Extremes>(
    before: (&[F], &[F]),
    xs: &[F],
    window: usize,
    policy: Policy,
    out: &mut [F],
) {
    let lead: Vec<F> = before.0.iter().chain(before.1).copied().collect();
    let known = lead.len();
    let mut nans = lead.iter().filter(|x| x.is_nan()).count();
    // NaN anywhere: count them for every window and ask the policy; none:
    // every window past the first `window − known` is full and ready.
    let calm = nans == 0 && !any_nan(xs);
    // The suffix extremes of the previous block: first the values before
    // the slice, then each block of the slice in turn.
    let mut suffix = vec![E::EMPTY; window.min(xs.len().max(known)).max(1)];
    let mut acc = E::EMPTY;
    for (slot, &x) in suffix.iter_mut().zip(&lead).rev() {
        acc = acc.with(E::of(x));
        *slot = acc;
    }
    let mut previous = known;
    let mut start = 0;
    while start < xs.len() {
        let end = xs.len().min(start.saturating_add(window));
        let (Some(block), Some(outs)) = (xs.get(start..end), out.get_mut(start..end)) else {
            return;
        };
        if calm && previous == window {
            // Every window is full and ready: the one ending at the block's
            // `j`-th value starts at the previous block's `j + 1`-th.
            let mut prefix = E::EMPTY;
            let suffixes = suffix.get(1..).unwrap_or(&[]).iter().copied();
            let mut suffixes = suffixes.chain(core::iter::once(E::EMPTY));
            for (slot, &x) in outs.iter_mut().zip(block) {
                prefix = prefix.with(E::of_number(x));
                let s = suffixes.next().unwrap_or(E::EMPTY);
                *slot = s.with(prefix).read();
            }
        } else {
            let mut prefix = E::EMPTY;
            for (j, (&x, slot)) in block.iter().zip(outs).enumerate() {
                let p = start + j;
                prefix = prefix.with(E::of(x));
                // The window is `a..=p` (`a = p + 1 − window`): the
                // previous block's suffix from `a` (from its first value
                // while the window is not yet full), then this block's
                // prefix.
                let from = (j + 1 + previous).checked_sub(window);
                let extremes = match from {
                    Some(i) if i >= previous => prefix,
                    _ => suffix
                        .get(from.unwrap_or(0))
                        .map_or(prefix, |s| s.with(prefix)),
                };
                let len = window.min(known + p + 1);
                if calm {
                    *slot = if policy.ready(len) {
                        extremes.read()
                    } else {
                        F::nan()
                    };
                    continue;
                }
                nans += usize::from(x.is_nan());
                // The value that just left, `window` before `x`.
                let left = match p.checked_sub(window) {
                    Some(i) => xs.get(i),
                    None => (known + p).checked_sub(window).and_then(|i| lead.get(i)),
                };
                if left.is_some_and(|v| v.is_nan()) {
                    nans -= 1;
                }
                let counted = policy.counted(len, nans);
                *slot = if !policy.ready(counted) || (nans > 0 && !policy.skips_nan()) {
                    F::nan()
                } else {
                    extremes.read()
                };
            }
        }
        // This block's suffixes, for the windows that end in the next.
        if end < xs.len() {
            let mut acc = E::EMPTY;
            if calm {
                for (slot, &x) in suffix.iter_mut().zip(block).rev() {
                    acc = acc.with(E::of_number(x));
                    *slot = acc;
                }
            } else {
                for (slot, &x) in suffix.iter_mut().zip(block).rev() {
                    acc = acc.with(E::of(x));
                    *slot = acc;
                }
            }
        }
        previous = end - start;
        start = end;
    }
}

/// Whether any value is NaN: a fold without an early exit, which the
/// compiler vectorizes, a chunk at a time.
pub(crate) fn any_nan<F: Float>(xs: &[F]) -> bool {
    xs.chunks(256)
        .any(|c| c.iter().fold(false, |nan, x| nan | x.is_nan()))
}
