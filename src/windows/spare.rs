//! Memory that follows what a time window holds.
//!
//! A time window keeps every sample of its span, so its queues grow with
//! a burst of samples; a vector or a deque keeps its capacity when it
//! empties again, so the burst's memory would stay for as long as the
//! window lives. [`release_spare`] gives back the spare room once a queue
//! holds less than a quarter of its capacity, keeping twice what it holds:
//! the queue must then lose half of what it holds before the rule applies
//! again, so the copy of what it holds costs O(1) a removal, amortized.
//! Small queues (up to [`KEEP`]) are left alone, so a steady window never
//! reallocates.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

/// Room that is never given back: a window's steady state stays below.
const KEEP: usize = 64;

/// A queue whose spare room can be given back.
pub(crate) trait Spare {
    /// How many values it holds.
    fn held(&self) -> usize;
    /// How many it has room for.
    fn room(&self) -> usize;
    /// Keeps room for at least `n`.
    fn shrink_room(&mut self, n: usize);
}

/// Both queues by their own methods of the same names.
macro_rules! spare {
    ($($queue:ident),*) => {$(
        impl<T> Spare for $queue<T> {
            #[inline]
            fn held(&self) -> usize {
                self.len()
            }
            #[inline]
            fn room(&self) -> usize {
                self.capacity()
            }
            fn shrink_room(&mut self, n: usize) {
                self.shrink_to(n);
            }
        }
    )*};
}

spare!(Vec, VecDeque);

/// Gives back `queue`'s spare room when it holds less than a quarter of
/// it (and the room is above [`KEEP`]), keeping room for twice what it
/// holds, at least [`KEEP`].
#[inline]
pub(crate) fn release_spare(queue: &mut impl Spare) {
    let room = queue.room();
    if room > KEEP && room / 4 > queue.held() {
        shrink(queue);
    }
}

/// The shrink itself, out of the push's way.
#[cold]
#[inline(never)]
fn shrink(queue: &mut impl Spare) {
    queue.shrink_room((2 * queue.held()).max(KEEP));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drained_queue_gives_back_its_room_and_a_steady_one_keeps_it() {
        let mut q: VecDeque<u64> = (0..100_000).collect();
        q.drain(..99_990);
        release_spare(&mut q);
        assert!(q.capacity() < 100, "{}", q.capacity());
        assert_eq!(
            q.iter().copied().collect::<Vec<_>>(),
            (99_990..100_000).collect::<Vec<_>>()
        );
        // Half full: kept.
        let mut v: Vec<u64> = Vec::with_capacity(1000);
        v.extend(0..400);
        release_spare(&mut v);
        assert_eq!(v.capacity(), 1000);
        // A quarter: kept; below it, twice what it holds.
        v.truncate(250);
        release_spare(&mut v);
        assert_eq!(v.capacity(), 1000);
        v.truncate(249);
        release_spare(&mut v);
        assert!((498..1000).contains(&v.capacity()), "{}", v.capacity());
        assert_eq!(v, (0..249).collect::<Vec<_>>());
        // Small rooms are never touched.
        let mut small: Vec<u64> = Vec::with_capacity(KEEP);
        release_spare(&mut small);
        assert_eq!(small.capacity(), KEEP);
    }
}
