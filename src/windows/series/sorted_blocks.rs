//! A quantile of every full window of a series, by sorting blocks of the
//! series once (Suomela's median filter, "Median filtering is equivalent
//! to sorting", 2014, for any rank).
//!
//! Cut the series into blocks of `window` values. Every full window is the
//! end of one block `A` and the start of the next, `B`: sliding it by one
//! removes `A`'s next value and adds `B`'s next. Each block is sorted once
//! (O(window · log window), a sort per `window` values) and kept as a
//! doubly linked list in sorted order. `A`'s list loses its values in the
//! order they leave; `B`'s list is built whole, then emptied in reverse
//! order of arrival, so that each arrival is the exact undoing of a removal
//! (Knuth's dancing links): O(1) each. Two cursors, one per list, split
//! the window into the `r` smallest values and the rest; each slide moves
//! them by a step or two. The `r`-th smallest value is then the least of
//! the two cursors, and the next one beside it.
//!
//! Values are compared as the integer keys of the push path's order
//! (`−0.0 < +0.0`), ties broken by position, so the values read at each
//! rank are the push path's bit for bit. Only full windows of a stretch
//! without NaN come here; the other windows go through [`super::sorted`].

use alloc::vec;
use alloc::vec::Vec;

use super::extremes::{key, value};
use crate::Float;
use crate::windows::interpolation::lerp;

/// One block's values as a doubly linked list in sorted order, over local
/// indices `0..len` and a sentinel `len` (the list's head and tail).
struct Block {
    keys: Vec<i64>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The sentinel's index, the number of values.
    end: u32,
}

impl Block {
    /// The block of `values`, all linked in sorted order.
    fn new<F: Float>(values: &[F]) -> Self {
        let keys: Vec<i64> = values.iter().map(|&x| key(x)).collect();
        let len = keys.len();
        let end = u32::try_from(len).unwrap_or(u32::MAX);
        let mut order: Vec<(i64, u32)> = keys.iter().copied().zip(0..end).collect();
        order.sort_unstable();
        let mut next = vec![end; len + 1];
        let mut prev = vec![end; len + 1];
        let mut last = end;
        for &(_, i) in &order {
            if let Some(n) = next.get_mut(last as usize) {
                *n = i;
            }
            if let Some(p) = prev.get_mut(i as usize) {
                *p = last;
            }
            last = i;
        }
        if let Some(n) = next.get_mut(last as usize) {
            *n = end;
        }
        if let Some(p) = prev.get_mut(len) {
            *p = last;
        }
        Self {
            keys,
            next,
            prev,
            end,
        }
    }

    #[inline]
    fn key(&self, i: u32) -> i64 {
        self.keys.get(i as usize).copied().unwrap_or(i64::MAX)
    }

    #[inline]
    fn next(&self, i: u32) -> u32 {
        self.next.get(i as usize).copied().unwrap_or(self.end)
    }

    #[inline]
    fn prev(&self, i: u32) -> u32 {
        self.prev.get(i as usize).copied().unwrap_or(self.end)
    }

    /// Whether `a` comes before `b` in this list's order (`b` may be the
    /// sentinel, which comes after everything).
    #[inline]
    fn before(&self, a: u32, b: u32) -> bool {
        b == self.end || (self.key(a), a) < (self.key(b), b)
    }

    /// Unlinks `i`, keeping its own links for [`relink`](Self::relink).
    #[inline]
    fn unlink(&mut self, i: u32) {
        let (p, n) = (self.prev(i), self.next(i));
        if let Some(x) = self.next.get_mut(p as usize) {
            *x = n;
        }
        if let Some(x) = self.prev.get_mut(n as usize) {
            *x = p;
        }
    }

    /// Links `i` back where it was: the exact undoing of the last
    /// [`unlink`](Self::unlink) still in force.
    #[inline]
    fn relink(&mut self, i: u32) {
        let (p, n) = (self.prev(i), self.next(i));
        if let Some(x) = self.next.get_mut(p as usize) {
            *x = i;
        }
        if let Some(x) = self.prev.get_mut(n as usize) {
            *x = i;
        }
    }

    /// Empties the list in reverse order of the values' positions, so that
    /// relinking them in order rebuilds it.
    fn unwind(&mut self) {
        for i in (0..self.end).rev() {
            self.unlink(i);
        }
    }
}

/// The window as the unremoved values of `a` and the relinked values of
/// `b`, split by a cursor in each list into the `rank` smallest and the
/// rest (each cursor is the first of the rest in its list, or its
/// sentinel).
struct Split {
    a: Block,
    b: Block,
    /// The cursors.
    pa: u32,
    pb: u32,
    /// How many of the smallest are in each list.
    sa: usize,
    sb: usize,
}

impl Split {
    /// Whether `a`'s value `i` comes before `b`'s value `j` (ties: `a`'s
    /// values are older).
    #[inline]
    fn a_before_b(&self, i: u32, j: u32) -> bool {
        j == self.b.end || (i != self.a.end && self.a.key(i) <= self.b.key(j))
    }

    /// Moves the cursors until the smallest are `rank` values, all before
    /// the rest.
    #[inline]
    fn settle(&mut self, rank: usize) {
        while self.sa + self.sb > rank {
            // The greater of the two lists' last small values becomes
            // large.
            let (la, lb) = (self.a.prev(self.pa), self.b.prev(self.pb));
            if self.sb == 0 || (self.sa > 0 && !self.a_before_b(la, lb)) {
                self.pa = la;
                self.sa -= 1;
            } else {
                self.pb = lb;
                self.sb -= 1;
            }
        }
        while self.sa + self.sb < rank {
            // The lesser of the two lists' first large values becomes
            // small.
            if self.a_before_b(self.pa, self.pb) {
                self.pa = self.a.next(self.pa);
                self.sa += 1;
            } else {
                self.pb = self.b.next(self.pb);
                self.sb += 1;
            }
        }
        // Exchange across the lists while a small value is above a large.
        loop {
            let la = self.a.prev(self.pa);
            if self.sa > 0 && self.pb != self.b.end && !self.a_before_b(la, self.pb) {
                self.pa = la;
                self.pb = self.b.next(self.pb);
                self.sa -= 1;
                self.sb += 1;
                continue;
            }
            let lb = self.b.prev(self.pb);
            if self.sb > 0 && self.pa != self.a.end && self.a_before_b(self.pa, lb) {
                self.pb = lb;
                self.pa = self.a.next(self.pa);
                self.sb -= 1;
                self.sa += 1;
                continue;
            }
            break;
        }
    }

    /// Slides the window: `a`'s value `i` leaves, `b`'s value `j` enters.
    #[inline]
    fn slide(&mut self, i: u32, j: u32) {
        if self.pa == i {
            self.pa = self.a.next(i);
        } else if self.a.before(i, self.pa) {
            self.sa -= 1;
        }
        self.a.unlink(i);
        self.b.relink(j);
        if self.b.before(j, self.pb) {
            self.sb += 1;
        }
    }

    /// The smallest of the large values, and the one after it.
    #[inline]
    fn at_rank(&self) -> (i64, i64) {
        let (ka, kb) = (self.a.key(self.pa), self.b.key(self.pb));
        if self.a_before_b(self.pa, self.pb) {
            (ka, kb.min(self.a.key(self.a.next(self.pa))))
        } else {
            (kb, ka.min(self.b.key(self.b.next(self.pb))))
        }
    }
}

/// Writes into `out[i]` the quantile at `(idx, frac)` (the rank of the
/// quantile among `window` values, as `rank` gives it) of the window
/// ending at value `i + window − 1` of `head` then `tail`: every full
/// window of a stretch without NaN.
pub(crate) fn series<F: Float>(
    head: &[F],
    tail: &[F],
    window: usize,
    (idx, frac): (usize, f64),
    out: &mut [F],
) {
    let w = window;
    let total = head.len() + tail.len();
    if w == 0 || total < w || u32::try_from(w).is_err() {
        return;
    }
    let read = |s: &Split| -> F {
        let (lo, hi) = s.at_rank();
        if frac == 0.0 {
            value(lo)
        } else {
            lerp(value(lo), value(hi), frac)
        }
    };
    // Block `j`: values `j·w..(j + 1)·w` of `head` then `tail`, gathered
    // when they straddle the two.
    let mut gathered: Vec<F> = Vec::new();
    let mut block = |j: usize| -> Option<Block> {
        let start = j.checked_mul(w)?;
        if start >= total {
            return None;
        }
        let end = total.min(start + w);
        if start >= head.len() {
            return tail
                .get(start - head.len()..end - head.len())
                .map(Block::new);
        }
        gathered.clear();
        gathered.extend(head.iter().chain(tail).skip(start).take(end - start));
        Some(Block::new(&gathered))
    };
    let Some(a) = block(0) else {
        return;
    };
    let mut split = Split {
        pa: a.end,
        pb: 0,
        sa: w,
        sb: 0,
        b: Block::new::<F>(&[]),
        a,
    };
    split.pb = split.b.end;
    split.settle(idx);
    let mut outs = out.iter_mut();
    if let Some(slot) = outs.next() {
        *slot = read(&split);
    }
    let mut j = 1;
    while let Some(mut b) = block(j) {
        j += 1;
        b.unwind();
        let len = b.end;
        split.b = b;
        split.pb = split.b.end;
        split.sb = 0;
        for t in 0..len {
            split.slide(t, t);
            split.settle(idx);
            if let Some(slot) = outs.next() {
                *slot = read(&split);
            }
        }
        if (len as usize) < w {
            break;
        }
        // `b` is the window now: it becomes `a`, whose cursor it keeps.
        split.a = core::mem::replace(&mut split.b, Block::new::<F>(&[]));
        split.pa = split.pb;
        split.sa = split.sb;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::SplitMix;
    use crate::windows::ordered::rank;

    /// The quantile of every full window, by sorting each window afresh.
    fn naive(values: &[f64], window: usize, q: f64) -> Vec<f64> {
        values
            .windows(window)
            .map(|w| {
                let mut keys: Vec<i64> = w.iter().map(|&x| key(x)).collect();
                keys.sort_unstable();
                let (idx, frac) = rank(q, window);
                let lo: f64 = value(keys[idx]);
                if frac == 0.0 {
                    lo
                } else {
                    lerp(lo, value(keys[idx + 1]), frac)
                }
            })
            .collect()
    }

    #[test]
    fn every_rank_of_every_window_is_the_sorted_windows() {
        let mut rng = SplitMix(5);
        // Few distinct values (many ties), signed zeros, and a cut between
        // `head` and `tail` anywhere.
        let values: Vec<f64> = (0..700)
            .map(|_| match rng.next_u64() % 6 {
                0 => 0.0,
                1 => -0.0,
                2 => f64::INFINITY,
                _ => (rng.next_u64() % 9) as f64 - 4.0,
            })
            .collect();
        for window in [1, 2, 3, 5, 8, 33, 100, 700] {
            for q in [0.0, 0.25, 0.5, 0.9, 1.0] {
                let want = naive(&values, window, q);
                for cut in [0, 1, window / 2, 350] {
                    let mut got = vec![f64::NAN; want.len()];
                    series(
                        &values[..cut],
                        &values[cut..],
                        window,
                        rank(q, window),
                        &mut got,
                    );
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&want), "window {window}, q {q}, cut {cut}");
                }
            }
        }
    }
}
