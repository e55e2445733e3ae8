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

use alloc::vec::Vec;

use crate::Float;
use crate::kernels::sorted_keys::{key, lerp, value};

/// The indices `0..end` of `keys` in the order of `(key, index)`.
///
/// When the keys span less than `2^(64 − b)` for indices of `b` bits (a
/// block of a thousand values of `1e6 + U(0, 1)` spans about `2^33`),
/// each is sorted as one `u64`, its distance from the least key above
/// its index: half the bytes of a pair and one comparison, where the
/// pairs' sort took about a third of the series' time.
fn sorted_order(keys: &[i64], end: u32) -> Vec<u32> {
    let bits = 32 - end.leading_zeros();
    let (Some(&lo), Some(&hi)) = (keys.iter().min(), keys.iter().max()) else {
        return Vec::new();
    };
    let span = hi.abs_diff(lo);
    // `bits` is 1 to 32 (the keys are not empty), so the shift is in range.
    if span >> (64 - bits) == 0 {
        let mask = (1_u64 << bits) - 1;
        let mut packed: Vec<u64> = keys
            .iter()
            .zip(0..end)
            .map(|(&k, i)| (k.abs_diff(lo) << bits) | u64::from(i))
            .collect();
        packed.sort_unstable();
        #[allow(
            clippy::cast_possible_truncation,
            reason = "masked to the index's bits"
        )]
        return packed.iter().map(|&p| (p & mask) as u32).collect();
    }
    let mut pairs: Vec<(i64, u32)> = keys.iter().copied().zip(0..end).collect();
    pairs.sort_unstable();
    pairs.into_iter().map(|(_, i)| i).collect()
}

/// A value of a block: its key and its neighbours in sorted order (one
/// place in memory for the three, which each step of a cursor reads
/// together).
#[derive(Clone, Copy)]
struct Node {
    key: i64,
    next: u32,
    prev: u32,
}

/// One block's values as a doubly linked list in sorted order, over local
/// indices `0..len` and a sentinel `len` (the list's head and tail, whose
/// key is above every value's).
struct Block {
    nodes: Vec<Node>,
    /// The sentinel's index, the number of values.
    end: u32,
}

impl Block {
    /// The block of `values`, all linked in sorted order.
    fn new<F: Float>(values: &[F]) -> Self {
        let end = u32::try_from(values.len()).unwrap_or(u32::MAX);
        let keys: Vec<i64> = values.iter().map(|&x| key(x)).collect();
        let order = sorted_order(&keys, end);
        let mut block = Self {
            nodes: keys
                .iter()
                .map(|&key| Node {
                    key,
                    next: end,
                    prev: end,
                })
                .chain([Self::sentinel(end)])
                .collect(),
            end,
        };
        let mut last = end;
        for i in order {
            block.join(last, i);
            last = i;
        }
        block.join(last, end);
        block
    }

    /// The sentinel of a block of `end` values (its key above every
    /// value's): also what a read past the nodes gives.
    fn sentinel(end: u32) -> Node {
        Node {
            key: i64::MAX,
            next: end,
            prev: end,
        }
    }

    #[inline]
    fn node(&self, i: u32) -> Node {
        self.nodes
            .get(i as usize)
            .copied()
            .unwrap_or(Self::sentinel(self.end))
    }

    /// Links `b` after `a`.
    #[inline]
    fn join(&mut self, a: u32, b: u32) {
        if let Some(x) = self.nodes.get_mut(a as usize) {
            x.next = b;
        }
        if let Some(x) = self.nodes.get_mut(b as usize) {
            x.prev = a;
        }
    }

    #[inline]
    fn key(&self, i: u32) -> i64 {
        self.node(i).key
    }

    #[inline]
    fn next(&self, i: u32) -> u32 {
        self.node(i).next
    }

    #[inline]
    fn prev(&self, i: u32) -> u32 {
        self.node(i).prev
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
        let Node { next, prev, .. } = self.node(i);
        self.join(prev, next);
    }

    /// Links `i` back where it was: the exact undoing of the last
    /// [`unlink`](Self::unlink) still in force.
    #[inline]
    fn relink(&mut self, i: u32) {
        let Node { next, prev, .. } = self.node(i);
        self.join(prev, i);
        self.join(i, next);
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
    use alloc::vec;

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
    fn the_packed_order_is_the_pairs_order() {
        // Keys spanning just below and just above what the packed sort
        // takes for 1000 indices (10 bits: spans below 2^54), from the
        // least key to the greatest, with ties; and one key.
        let mut rng = SplitMix(11);
        for (lo, span) in [
            (-5_i64, 1_u64 << 20),
            (1 << 40, (1 << 54) - 1),
            (-(1 << 60), 1 << 54),
            (i64::MIN, u64::MAX),
            (7, 0),
        ] {
            let keys: Vec<i64> = (0..1000)
                .map(|i| match i {
                    0 => lo,
                    1 => lo.wrapping_add_unsigned(span),
                    _ if i % 3 == 0 => lo.wrapping_add_unsigned(span / 2),
                    _ => lo.wrapping_add_unsigned(rng.next_u64() % span.saturating_add(1).max(1)),
                })
                .collect();
            let mut pairs: Vec<(i64, u32)> = keys.iter().copied().zip(0..).collect();
            pairs.sort_unstable();
            let want: Vec<u32> = pairs.iter().map(|&(_, i)| i).collect();
            assert_eq!(sorted_order(&keys, 1000), want, "span {span}");
        }
        assert_eq!(sorted_order(&[3], 1), [0]);
        assert!(sorted_order(&[], 0).is_empty());
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
