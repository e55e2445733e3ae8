//! The tuple bundles' slice paths.
//!
//! A tuple's `extend_from_slice` gives every member the bits its own
//! `extend_from_slice` would give it. The members that reduce a slice by
//! the blocked kernels (`Mean`, `Variance`, `Skewness`, `Kurtosis`,
//! `MinMax`: those whose `block_walker` is `Some`) go through a slice of
//! more than one block together, block by block: each block is read from
//! memory once, by the first of them, and from cache by the others, and
//! each member merges its blocks' leaves in the fixed tree it would build
//! alone ([`walk_blocks`] takes that tree's steps in order). The
//! other members (the windows, the exponential averages, any accumulator
//! of the caller's, a nested tuple) take the whole slice after, one after
//! another; so do all members of a slice of one block, which stays in
//! cache for the next.
//!
//! The chunked walk it replaces (every member fed slices of 2048 values in
//! turn) merged those chunks one after another into each member: the
//! variance of `(Kurtosis<f64>, MinMax<f64>)` over 2²² `f32` values was
//! 3.0e-15 off where `Kurtosis` alone gets the nearest `f64`. It was not
//! faster either. Over 64 MiB of `f32` or `f64` on an AMD EPYC (2 cores,
//! KVM; the three timed alternately, best of 11 in thread CPU time), against
//! the members called one after another: `(Kurtosis, MinMax)` took
//! 0.70–0.74 of their time by blocks, 1.13–1.21 in chunks; `(Mean,
//! Variance, Kurtosis, MinMax)` 0.52–0.63 by blocks, 0.76–0.89 in chunks.

use super::{BlockStep, Schedule, blocks, reduce_blocks, walk_blocks};
use crate::accumulator::{BlockWalker, Walk};
use crate::{Accumulator, Merge};
use alloc::boxed::Box;
use alloc::vec::Vec;

// The walker's type and its steps are the core's (`accumulator.rs`, whose
// trait returns one); the kernels build it and drive it.
impl<'a, F: 'a> BlockWalker<'a, F> {
    /// The walker of `member`, whose slice path reduces blocks.
    pub(crate) fn new<M: FromSlice<F> + 'a>(member: &'a mut M) -> Self {
        Self(Box::new(Stacked {
            member,
            stack: Vec::new(),
        }))
    }
}

/// A member and its partial results, the latest last.
struct Stacked<'a, M: FromSlice<F>, F> {
    member: &'a mut M,
    stack: Vec<M::Leaf>,
}

impl<M: FromSlice<F>, F> Walk<F> for Stacked<'_, M, F> {
    fn leaf(&mut self, block: &[F]) {
        self.stack.push(M::leaf(block));
    }

    fn merge(&mut self) {
        if let (Some(b), Some(a)) = (self.stack.pop(), self.stack.last_mut()) {
            M::merge_leaves(a, b);
        }
    }

    fn finish(&mut self) {
        if let Some(root) = self.stack.pop() {
            self.member.absorb_root(root);
        }
    }
}

/// Walks `xs` (longer than a block) through the members that have a
/// walker, when there are at least two of them, and returns which
/// members it fed; the others still have to take `xs`.
pub(crate) fn walk<F, const N: usize>(
    xs: &[F],
    walkers: [Option<BlockWalker<'_, F>>; N],
) -> [bool; N] {
    let fed = walkers.each_ref().map(Option::is_some);
    if fed.iter().filter(|&&f| f).count() < 2 {
        return [false; N];
    }
    let mut walkers: Vec<BlockWalker<'_, F>> = walkers.into_iter().flatten().collect();
    walk_blocks(xs, |step| match step {
        BlockStep::Block(block) => walkers.iter_mut().for_each(|w| w.0.leaf(block)),
        BlockStep::Merge => walkers.iter_mut().for_each(|w| w.0.merge()),
    });
    for w in &mut walkers {
        w.0.finish();
    }
    fed
}

/// Whether a bundle's slice of `len` values is worth a joint walk: it
/// spans more than one block. (One block fits in cache, where reading
/// it once per member costs little, and the walk only adds its
/// bookkeeping.)
pub(crate) fn spans_blocks(len: usize) -> bool {
    blocks(len) > 1
}

/// Statistics computed from a whole slice by the blocked kernels, on one
/// thread or on rayon's: [`Mean`](crate::Mean),
/// [`Variance`](crate::Variance), [`Skewness`](crate::Skewness),
/// [`Kurtosis`](crate::Kurtosis), [`MinMax`](crate::MinMax), and tuples
/// of two to four of them (tuples included).
///
/// A slice is cut into fixed blocks and their statistics merged in a fixed
/// tree, so [`par_from_slice`](FromSlice::par_from_slice) gives bit for
/// bit what [`from_slice`](FromSlice::from_slice) gives, whatever the
/// number of threads. A tuple goes through the slice once, block by block,
/// and every member gets exactly the bits it gets alone.
///
/// The members' own `from_slice` and `par_from_slice` take the same
/// arguments and need no import; the trait is what tuples have them
/// through, and what generic code names. The trait is sealed: the crate's
/// kernels are what implement it.
///
/// # Example
///
/// ```
/// use momenta::{FromSlice, Kurtosis, MinMax};
///
/// let xs: Vec<f32> = (0..200_000).map(|i| (i % 1000) as f32 / 8.0).collect();
/// let (k, m) = <(Kurtosis<f64>, MinMax<f32>)>::from_slice(&xs);
/// assert_eq!(k, Kurtosis::from_slice(&xs));
/// assert_eq!(m, MinMax::from_slice(&xs));
/// # #[cfg(feature = "rayon")]
/// assert_eq!((k, m), <(Kurtosis<f64>, MinMax<f32>)>::par_from_slice(&xs));
/// ```
pub trait FromSlice<S>: Default + sealed::Sealed {
    /// The statistics of `xs`.
    ///
    /// ```
    /// use momenta::{FromSlice, Mean, Variance};
    /// let (m, v) = <(Mean<f64>, Variance<f64>)>::from_slice(&[1.0_f32, 2.0, 3.0, 6.0]);
    /// assert_eq!(m.mean(), Some(3.0));
    /// assert_eq!(v.population_variance(), Some(3.5));
    /// ```
    #[must_use]
    fn from_slice(xs: &[S]) -> Self
    where
        S: Sync,
    {
        let mut stats = Self::default();
        let root = reduce_blocks(Schedule::Sequential, xs, Self::leaf, Self::merge_leaves);
        if let Some(root) = root {
            stats.absorb_root(root);
        }
        stats
    }

    /// The statistics of `xs` on every rayon thread: bit for bit
    /// [`from_slice`](FromSlice::from_slice)'s, whatever the number of
    /// threads (feature `rayon`).
    ///
    /// ```
    /// use momenta::{FromSlice, Mean, MinMax};
    /// let xs: Vec<f64> = (0..300_000).map(|i| f64::from(i % 5)).collect();
    /// let both = <(Mean<f64>, MinMax<f64>)>::par_from_slice(&xs);
    /// assert_eq!(both, <(Mean<f64>, MinMax<f64>)>::from_slice(&xs));
    /// assert_eq!((both.0.mean(), both.1.max()), (Some(2.0), Some(4.0)));
    /// ```
    #[cfg(feature = "rayon")]
    #[must_use]
    fn par_from_slice(xs: &[S]) -> Self
    where
        S: Sync,
    {
        let mut stats = Self::default();
        let root = reduce_blocks(Schedule::Parallel, xs, Self::leaf, Self::merge_leaves);
        if let Some(root) = root {
            stats.absorb_root(root);
        }
        stats
    }

    /// Not part of the API: a block's partial result.
    #[doc(hidden)]
    type Leaf: Send;

    /// Not part of the API: the partial result of one block.
    #[doc(hidden)]
    fn leaf(block: &[S]) -> Self::Leaf;

    /// Not part of the API: merges `b`, the later blocks', into `a`.
    #[doc(hidden)]
    fn merge_leaves(a: &mut Self::Leaf, b: Self::Leaf);

    /// Not part of the API: takes a whole slice's result in, as
    /// `extend_from_slice` does.
    #[doc(hidden)]
    fn absorb_root(&mut self, root: Self::Leaf);
}

/// Seals [`FromSlice`].
mod sealed {
    /// Implemented by the crate's slice statistics and tuples of them.
    pub trait Sealed {}
}
pub(crate) use sealed::Sealed;

macro_rules! tuple_impls {
    ($($name:ident $idx:tt),+) => {
        impl<F: Copy, $($name: Accumulator<F>),+> Accumulator<F> for ($($name,)+) {
            #[inline]
            fn push(&mut self, x: F) {
                $(self.$idx.push(x);)+
            }

            fn extend_from_slice(&mut self, xs: &[F]) {
                // Which members the walk fed (none, for a slice of one
                // block: the walkers are not even built).
                let fed = if spans_blocks(xs.len()) {
                    walk(xs, [$(self.$idx.block_walker(),)+])
                } else {
                    [$($idx,)+].map(|_| false)
                };
                $(
                    if !fed[$idx] {
                        self.$idx.extend_from_slice(xs);
                    }
                )+
            }
        }

        impl<$($name: Merge),+> Merge for ($($name,)+) {
            fn merge(&mut self, other: &Self) {
                $(self.$idx.merge(&other.$idx);)+
            }
        }

        impl<$($name: sealed::Sealed),+> sealed::Sealed for ($($name,)+) {}

        impl<S, $($name: FromSlice<S>),+> FromSlice<S> for ($($name,)+) {
            type Leaf = ($($name::Leaf,)+);

            #[inline]
            fn leaf(block: &[S]) -> Self::Leaf {
                ($($name::leaf(block),)+)
            }

            #[inline]
            fn merge_leaves(a: &mut Self::Leaf, b: Self::Leaf) {
                $($name::merge_leaves(&mut a.$idx, b.$idx);)+
            }

            fn absorb_root(&mut self, root: Self::Leaf) {
                $(self.$idx.absorb_root(root.$idx);)+
            }
        }
    };
}

tuple_impls!(A 0, B 1);
tuple_impls!(A 0, B 1, C 2);
tuple_impls!(A 0, B 1, C 2, D 3);
