//! How a reduction's work is spread over threads: the one thing in which a
//! sequential and a parallel reduction differ.
//!
//! Every kernel entry point has one body, written against [`Schedule`]. The
//! reduction tree is fixed by the data's shape (each range of leaves is
//! split at its midpoint), and a parallel schedule only runs subtrees of
//! that same tree on rayon's threads, so the result is bit-for-bit the
//! sequential one whatever the number of threads.

use alloc::vec::Vec;

/// Where the subtrees of a reduction run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Schedule {
    /// On the calling thread.
    Sequential,
    /// Forked onto rayon's threads down to a grain.
    #[cfg(feature = "rayon")]
    Parallel,
}

/// The midpoint at which the reduction tree splits `lo..hi`.
#[inline]
fn split(lo: usize, hi: usize) -> usize {
    lo + (hi - lo) / 2
}

/// Reduces the leaves `lo..hi` (non-empty) with the fixed tree.
fn tree<T>(lo: usize, hi: usize, leaf: &impl Fn(usize) -> T, merge: &impl Fn(&mut T, T)) -> T {
    if hi - lo <= 1 {
        return leaf(lo);
    }
    let mid = split(lo, hi);
    let mut left = tree(lo, mid, leaf, merge);
    merge(&mut left, tree(mid, hi, leaf, merge));
    left
}

/// [`tree`] with the subtrees above `grain` leaves forked onto rayon's
/// threads. Same tree, same result.
#[cfg(feature = "rayon")]
fn par_tree<T: Send>(
    lo: usize,
    hi: usize,
    grain: usize,
    leaf: &(impl Fn(usize) -> T + Sync),
    merge: &(impl Fn(&mut T, T) + Sync),
) -> T {
    if hi - lo <= grain.max(1) {
        return tree(lo, hi, leaf, merge);
    }
    let mid = split(lo, hi);
    let (mut left, right) = rayon::join(
        || par_tree(lo, mid, grain, leaf, merge),
        || par_tree(mid, hi, grain, leaf, merge),
    );
    merge(&mut left, right);
    left
}

/// A step of [`walk`].
pub(crate) enum Step {
    /// Leaf `i`.
    Leaf(usize),
    /// The merge of the last two results, the later into the earlier.
    Merge,
}

/// The steps of [`tree`] over the leaves `lo..hi` (non-empty) in the order
/// it takes them, for reductions that keep their partial results on
/// stacks of their own: each leaf, and a merge after each pair of
/// subtrees.
pub(crate) fn walk(lo: usize, hi: usize, step: &mut impl FnMut(Step)) {
    if hi - lo <= 1 {
        step(Step::Leaf(lo));
        return;
    }
    let mid = split(lo, hi);
    walk(lo, mid, step);
    walk(mid, hi, step);
    step(Step::Merge);
}

impl Schedule {
    /// This schedule when a piece of work of `len` values is worth
    /// spreading (at least `grain`), else [`Schedule::Sequential`].
    #[inline]
    pub(crate) fn at_least(self, len: usize, grain: usize) -> Self {
        if len >= grain {
            self
        } else {
            Schedule::Sequential
        }
    }

    /// Reduces the leaves `lo..hi` (non-empty) with the fixed tree; a
    /// parallel schedule stops forking below `grain` leaves.
    #[cfg_attr(
        not(feature = "rayon"),
        allow(unused_variables, reason = "only the parallel schedule has a grain")
    )]
    pub(crate) fn tree<T: Send>(
        self,
        lo: usize,
        hi: usize,
        grain: usize,
        leaf: &(impl Fn(usize) -> T + Sync),
        merge: &(impl Fn(&mut T, T) + Sync),
    ) -> T {
        match self {
            Schedule::Sequential => tree(lo, hi, leaf, merge),
            #[cfg(feature = "rayon")]
            Schedule::Parallel => par_tree(lo, hi, grain, leaf, merge),
        }
    }

    /// `f(i)` for `i` in `0..n`, in order.
    pub(crate) fn map<T: Send>(self, n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
        match self {
            Schedule::Sequential => (0..n).map(f).collect(),
            #[cfg(feature = "rayon")]
            Schedule::Parallel => {
                use rayon::prelude::*;
                (0..n).into_par_iter().map(f).collect()
            }
        }
    }

    /// `f(i, chunk)` for the `i`-th chunk of `size` elements of `xs`.
    pub(crate) fn for_each_chunk<T: Send>(
        self,
        xs: &mut [T],
        size: usize,
        f: impl Fn(usize, &mut [T]) + Sync + Send,
    ) {
        match self {
            Schedule::Sequential => xs.chunks_mut(size).enumerate().for_each(|(i, c)| f(i, c)),
            #[cfg(feature = "rayon")]
            Schedule::Parallel => {
                use rayon::prelude::*;
                xs.par_chunks_mut(size)
                    .enumerate()
                    .for_each(|(i, c)| f(i, c));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;

    #[test]
    fn a_walk_takes_the_steps_of_the_tree() {
        for n in 1..70 {
            let tree = tree(0, n, &|i| format!("{i}"), &|a: &mut String, b: String| {
                *a = format!("({a} {b})")
            });
            let mut stack: Vec<String> = Vec::new();
            walk(0, n, &mut |s| match s {
                Step::Leaf(i) => stack.push(format!("{i}")),
                Step::Merge => {
                    let b = stack.pop().unwrap();
                    let a = stack.pop().unwrap();
                    stack.push(format!("({a} {b})"));
                }
            });
            assert_eq!(stack, [tree], "{n} leaves");
        }
    }
}
