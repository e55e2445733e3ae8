//! rayon integration for the mergeable accumulators: `FromParallelIterator`
//! and `ParallelExtend`, written once.
//!
//! A parallel iterator is folded into one accumulator per rayon job, and the
//! jobs' accumulators are reduced with [`Merge`] (rayon's "fold, then
//! reduce"). Inside a job, values are gathered into a small buffer that goes
//! through the accumulator's slice path, so the blocked kernels do the work
//! rather than one update per value.
//!
//! How rayon splits an iterator depends on the number of threads and on
//! work stealing, so these results are equal up to rounding, not bit for
//! bit, across runs. For bit-for-bit reproducible reductions of a slice,
//! use `par_from_slice` ([`Mean::par_from_slice`](crate::Mean::par_from_slice),
//! [`Variance::par_from_slice`](crate::Variance::par_from_slice)).

use crate::{Accumulator, Float, Merge};
use alloc::vec::Vec;
use rayon::iter::{IntoParallelIterator, ParallelIterator};

/// Values gathered before they are handed to the accumulator's slice path.
const BUFFER: usize = 1024;

/// An accumulator with a buffer in front of it.
struct Buffered<A, F> {
    acc: A,
    buf: Vec<F>,
}

impl<A: Accumulator<F> + Default, F: Float> Buffered<A, F> {
    fn new() -> Self {
        Self {
            acc: A::default(),
            buf: Vec::with_capacity(BUFFER),
        }
    }

    #[inline]
    fn push(mut self, x: F) -> Self {
        self.buf.push(x);
        if self.buf.len() >= BUFFER {
            self.acc.extend_from_slice(&self.buf);
            self.buf.clear();
        }
        self
    }

    fn finish(mut self) -> A {
        self.acc.extend_from_slice(&self.buf);
        self.acc
    }
}

/// Folds a parallel iterator into one accumulator per job and merges them.
pub(crate) fn collect<A, F, I>(iter: I) -> A
where
    A: Accumulator<F> + Merge + Default + Send,
    F: Float,
    I: IntoParallelIterator<Item = F>,
{
    iter.into_par_iter()
        .fold(Buffered::<A, F>::new, Buffered::push)
        .map(Buffered::finish)
        .reduce(A::default, |mut a, b| {
            a.merge(&b);
            a
        })
}

/// Implements `FromParallelIterator` and `ParallelExtend` (by value and by
/// reference) for a mergeable accumulator `$ty<F>`, through [`collect`].
macro_rules! impl_parallel {
    ($ty:ident) => {
        impl<F: $crate::Float> rayon::iter::FromParallelIterator<F> for $crate::$ty<F> {
            fn from_par_iter<I>(iter: I) -> Self
            where
                I: rayon::iter::IntoParallelIterator<Item = F>,
            {
                $crate::parallel::threads::collect(iter)
            }
        }

        impl<'a, F: $crate::Float> rayon::iter::FromParallelIterator<&'a F> for $crate::$ty<F> {
            fn from_par_iter<I>(iter: I) -> Self
            where
                I: rayon::iter::IntoParallelIterator<Item = &'a F>,
            {
                use rayon::iter::ParallelIterator;
                $crate::parallel::threads::collect(iter.into_par_iter().copied())
            }
        }

        impl<F: $crate::Float> rayon::iter::ParallelExtend<F> for $crate::$ty<F> {
            fn par_extend<I>(&mut self, iter: I)
            where
                I: rayon::iter::IntoParallelIterator<Item = F>,
            {
                let other: Self = $crate::parallel::threads::collect(iter);
                $crate::Merge::merge(self, &other);
            }
        }

        impl<'a, F: $crate::Float> rayon::iter::ParallelExtend<&'a F> for $crate::$ty<F> {
            fn par_extend<I>(&mut self, iter: I)
            where
                I: rayon::iter::IntoParallelIterator<Item = &'a F>,
            {
                use rayon::iter::ParallelIterator;
                let other: Self = $crate::parallel::threads::collect(iter.into_par_iter().copied());
                $crate::Merge::merge(self, &other);
            }
        }
    };
}

impl_parallel!(Mean);
impl_parallel!(Variance);
impl_parallel!(Skewness);
impl_parallel!(Kurtosis);
impl_parallel!(MinMax);

#[cfg(test)]
mod tests {
    use crate::{Mean, Variance};
    use rayon::prelude::*;

    #[test]
    fn collect_and_extend_match_exact_values() {
        // 0..n: mean (n − 1)/2, population variance (n² − 1)/12, all exact
        // enough in f64 for n = 10⁵.
        let n = 100_000_u32;
        let xs: alloc::vec::Vec<f64> = (0..n).map(f64::from).collect();
        let nf = f64::from(n);
        let v: Variance<f64> = xs.par_iter().collect();
        assert_eq!(v.count(), u64::from(n));
        assert!((v.mean().unwrap() - (nf - 1.0) / 2.0).abs() < 1e-9);
        let var = (nf * nf - 1.0) / 12.0;
        assert!((v.population_variance().unwrap() / var - 1.0).abs() < 1e-13);
        let m: Mean<f64> = xs.par_iter().copied().collect();
        assert!((m.mean().unwrap() - (nf - 1.0) / 2.0).abs() < 1e-9);

        let mut v = Variance::<f64>::from_slice(&[-1.0, 1.0]);
        v.par_extend(xs.par_iter().map(|&x| x * 0.0));
        assert_eq!(v.count(), u64::from(n) + 2);
        assert!((v.population_variance().unwrap() - 2.0 / (nf + 2.0)).abs() < 1e-15);
        let mut m = Mean::<f32>::new();
        m.par_extend(&[1.0_f32, 2.0, 3.0][..]);
        assert_eq!(m.mean(), Some(2.0));
        let empty: Variance<f32> = alloc::vec::Vec::<f32>::new().into_par_iter().collect();
        assert_eq!(empty, Variance::new());
    }
}
