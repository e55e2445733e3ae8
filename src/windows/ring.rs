//! A fixed-window ring buffer that allocates only for the values it holds.

use alloc::vec::Vec;

/// The last `window` values pushed, oldest first.
///
/// Memory grows with the values actually pushed, never past `window`
/// elements and never to more than about twice the number held, so a window
/// of `usize::MAX` costs nothing up front. Once full, the buffer never
/// allocates again: each push overwrites the oldest value in place.
#[derive(Clone, Debug)]
pub(crate) struct Ring<F> {
    /// The values; once `buf.len() == window`, `buf[head]` is the oldest.
    buf: Vec<F>,
    /// Index of the oldest value when full; 0 while filling.
    head: usize,
    /// The most values held, at least 1.
    window: usize,
}

/// The smallest reservation while filling, so tiny windows don't reallocate
/// on every one of their first pushes.
const MIN_GROWTH: usize = 8;

impl<F: Copy> Ring<F> {
    /// An empty buffer; `window` must be at least 1 (the callers check).
    pub(crate) fn new(window: usize) -> Self {
        debug_assert!(window >= 1);
        Self {
            buf: Vec::new(),
            head: 0,
            window,
        }
    }

    pub(crate) fn window(&self) -> usize {
        self.window
    }

    pub(crate) fn len(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn is_full(&self) -> bool {
        self.buf.len() == self.window
    }

    /// The position of the oldest value once full: how many values have
    /// been pushed into the full ring since it last wrapped (0 while
    /// filling).
    pub(crate) fn head(&self) -> usize {
        self.head
    }

    /// When the oldest value's position is below `end`, which is below the
    /// window, puts `x` in its place and returns it; otherwise changes
    /// nothing and returns `None`. The position never wraps here, so a
    /// caller can tell the wrap, which [`push`](Self::push) does, from
    /// every other push.
    #[inline]
    pub(crate) fn replace_below(&mut self, end: usize, x: F) -> Option<F> {
        if self.head >= end {
            return None;
        }
        let oldest = core::mem::replace(self.buf.get_mut(self.head)?, x);
        self.head += 1;
        Some(oldest)
    }

    /// When the ring is full, puts `x` in place of the oldest value and
    /// returns that; otherwise changes nothing and returns `None`.
    #[inline]
    pub(crate) fn replace_oldest(&mut self, x: F) -> Option<F> {
        if self.buf.len() < self.window {
            return None;
        }
        // Full: `head < buf.len()` by the invariant, so `get_mut` succeeds.
        let oldest = self
            .buf
            .get_mut(self.head)
            .map(|slot| core::mem::replace(slot, x));
        self.head += 1;
        if self.head == self.buf.len() {
            self.head = 0;
        }
        oldest
    }

    /// Appends `x` and returns the value it pushes out, if the buffer was
    /// full.
    #[inline]
    pub(crate) fn push(&mut self, x: F) -> Option<F> {
        if self.buf.len() < self.window {
            if self.buf.len() == self.buf.capacity() {
                self.grow();
            }
            self.buf.push(x);
            return None;
        }
        self.replace_oldest(x)
    }

    /// Doubles the capacity (at least [`MIN_GROWTH`]) without passing the
    /// window.
    /// The values a run of [`replace_below`](Self::replace_below)`(end, ·)`
    /// calls would replace, oldest first: empty unless the ring is full and
    /// its head is below `end`.
    #[inline]
    pub(crate) fn run_below(&self, end: usize) -> &[F] {
        if self.buf.len() < self.window {
            return &[];
        }
        self.buf.get(self.head..end).unwrap_or(&[])
    }

    /// Writes `xs` over the oldest values, as one
    /// [`replace_below`](Self::replace_below) call per value would: `xs` is
    /// at most as long as the last [`run_below`](Self::run_below) (longer
    /// input is cut there).
    #[inline]
    pub(crate) fn overwrite_run(&mut self, xs: &[F]) {
        let end = self.head.saturating_add(xs.len()).min(self.buf.len());
        if let Some(slots) = self.buf.get_mut(self.head..end) {
            let n = slots.len();
            slots.copy_from_slice(xs.get(..n).unwrap_or(&[]));
            self.head = end;
        }
    }

    /// What pushing every value of `xs` in order would leave: the last
    /// `window` values, with the head where those pushes would have left
    /// it. O(min(len, window)) once the ring is full.
    pub(crate) fn extend(&mut self, xs: &[F]) {
        let room = self.window - self.buf.len();
        let (fill, rest) = xs.split_at(room.min(xs.len()));
        for &x in fill {
            self.push(x);
        }
        if rest.is_empty() {
            return;
        }
        // Full: value `t` of `rest` lands at `(head + t) mod window`; only
        // the last `window` of them stay.
        let window = self.window;
        let skip = rest.len().saturating_sub(window);
        let k = skip % window;
        let mut slot = if self.head >= window - k {
            self.head - (window - k)
        } else {
            self.head + k
        };
        for &x in rest.get(skip..).unwrap_or(&[]) {
            if let Some(s) = self.buf.get_mut(slot) {
                *s = x;
            }
            slot += 1;
            if slot == window {
                slot = 0;
            }
        }
        self.head = slot;
    }

    #[cold]
    fn grow(&mut self) {
        let len = self.buf.len();
        let additional = len.max(MIN_GROWTH).min(self.window - len);
        self.buf.reserve_exact(additional);
    }

    /// The values oldest first, as two slices (the second may be empty).
    pub(crate) fn as_slices(&self) -> (&[F], &[F]) {
        let (newer, older) = self.buf.split_at(self.head);
        (older, newer)
    }

    /// The values, oldest first.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = F> + '_ {
        let (older, newer) = self.as_slices();
        older.iter().chain(newer).copied()
    }

    /// A ring that holds `values`, oldest first, with the oldest at
    /// position `head` once full (`head` is 0 while it fills): the ring a
    /// [`head`](Self::head) and an [`iter`](Self::iter) came from. `None`
    /// when they do not fit the window.
    #[cfg(feature = "serde")]
    pub(crate) fn from_values(window: usize, mut values: Vec<F>, head: usize) -> Option<Self> {
        let fits = match values.len() {
            n if n == window => head < window,
            n => n < window && head == 0,
        };
        if !fits || window == 0 {
            return None;
        }
        values.rotate_right(head);
        Some(Self {
            buf: values,
            head,
            window,
        })
    }

    /// Forgets every value, keeping the allocation.
    pub(crate) fn clear(&mut self) {
        self.buf.clear();
        self.head = 0;
    }

    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.buf.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn contents(r: &Ring<i32>) -> Vec<i32> {
        r.iter().collect()
    }

    #[test]
    fn keeps_the_last_window_values_oldest_first() {
        let mut r = Ring::new(3);
        assert_eq!(r.push(1), None);
        assert_eq!(r.push(2), None);
        assert!(!r.is_full());
        assert_eq!(r.push(3), None);
        assert!(r.is_full());
        assert_eq!(contents(&r), vec![1, 2, 3]);
        assert_eq!(r.push(4), Some(1));
        assert_eq!(r.push(5), Some(2));
        assert_eq!(contents(&r), vec![3, 4, 5]);
        assert_eq!(r.as_slices(), (&[3][..], &[4, 5][..]));
        assert_eq!(r.push(6), Some(3));
        assert_eq!(r.as_slices(), (&[4, 5, 6][..], &[][..]));
        assert_eq!(r.iter().rev().collect::<Vec<_>>(), vec![6, 5, 4]);
        assert_eq!(r.len(), 3);
    }

    #[test]
    fn extend_leaves_what_pushing_one_by_one_leaves() {
        for window in 1..7 {
            for before in 0..9 {
                for n in 0..20 {
                    let mut pushed = Ring::new(window);
                    let mut extended = Ring::new(window);
                    for x in 0..before {
                        pushed.push(x);
                        extended.push(x);
                    }
                    let xs: Vec<i32> = (100..100 + n).collect();
                    for &x in &xs {
                        pushed.push(x);
                    }
                    extended.extend(&xs);
                    assert_eq!(extended.as_slices(), pushed.as_slices());
                    assert_eq!(extended.head(), pushed.head());
                }
            }
        }
    }

    #[test]
    fn a_run_replaces_the_oldest_values_as_replace_below_does() {
        let mut a = Ring::new(5);
        for x in 0..7 {
            a.push(x);
        }
        let mut b = a.clone();
        assert_eq!(a.run_below(4), &[2, 3][..]);
        assert!(a.run_below(1).is_empty());
        a.overwrite_run(&[10, 11]);
        b.replace_below(4, 10);
        b.replace_below(4, 11);
        assert_eq!((a.as_slices(), a.head()), (b.as_slices(), b.head()));
        assert!(Ring::<i32>::new(3).run_below(2).is_empty());
    }

    #[test]
    fn window_one_always_holds_the_latest() {
        let mut r = Ring::new(1);
        assert_eq!(r.push(7), None);
        for x in 8..20 {
            assert_eq!(r.push(x), Some(x - 1));
            assert_eq!(contents(&r), vec![x]);
        }
    }

    #[cfg(feature = "serde")]
    #[test]
    fn from_values_rebuilds_the_ring_a_head_and_values_came_from() {
        let mut r = Ring::new(4);
        for x in 0..11 {
            r.push(x);
            let back = Ring::from_values(4, contents(&r), r.head()).unwrap();
            assert_eq!(back.as_slices(), r.as_slices());
            assert_eq!(back.head(), r.head());
        }
        assert!(Ring::from_values(4, vec![1, 2], 1).is_none());
        assert!(Ring::from_values(2, vec![1, 2, 3], 0).is_none());
        assert!(Ring::from_values(2, vec![1, 2], 2).is_none());
        assert!(Ring::<i32>::from_values(0, vec![], 0).is_none());
    }

    #[test]
    fn clear_forgets_and_refills_in_order() {
        let mut r = Ring::new(2);
        for x in 0..5 {
            r.push(x);
        }
        r.clear();
        assert_eq!(r.len(), 0);
        assert_eq!(r.push(10), None);
        assert_eq!(r.push(11), None);
        assert_eq!(r.push(12), Some(10));
        assert_eq!(contents(&r), vec![11, 12]);
    }

    #[test]
    fn capacity_follows_the_values_not_the_window() {
        let mut r = Ring::new(usize::MAX);
        assert_eq!(r.capacity(), 0);
        for x in 0..1000 {
            r.push(x);
            assert!(r.capacity() <= 2 * r.len() + MIN_GROWTH);
        }
        assert_eq!(r.len(), 1000);
        assert!(!r.is_full());

        let mut r = Ring::new(10);
        for x in 0..100 {
            r.push(x);
            assert!(r.capacity() <= 10);
        }
        assert_eq!(contents(&r), (90..100).collect::<Vec<_>>());
    }
}
