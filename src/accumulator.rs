//! The two traits every accumulator shares. Their tuple bundles are in
//! `kernels::bundle`: a bundle's slice path is a joint blocked reduction.

/// A statistic that takes values one at a time, in constant space.
///
/// Every accumulator also has inherent `push` and `extend_from_slice`
/// methods, so the trait is only needed in generic code and for tuple
/// bundles: a tuple `(A, B)`, `(A, B, C)` or `(A, B, C, D)` of accumulators
/// of the same input type is itself an accumulator that feeds each value to
/// every member.
///
/// A tuple's `extend_from_slice` gives each member exactly the state the
/// member's own `extend_from_slice` would give it, bit for bit. The
/// members whose slice path is the blocked kernels (`Mean`, `Variance`,
/// `Skewness`, `Kurtosis`, `MinMax`) go through a slice longer than one
/// block (65536 values) together, block by block, so memory is read once
/// for all of them; the others (windows, exponential averages, your own
/// accumulators) then take the whole slice in turn.
///
/// [`Mean<f64>`](crate::Mean), [`Variance<f64>`](crate::Variance),
/// [`Skewness<f64>`](crate::Skewness), [`Kurtosis<f64>`](crate::Kurtosis)
/// and [`MinMax<f64>`](crate::MinMax) are also `Accumulator<f32>` (every
/// `f32` is an `f64` exactly), so a bundle of them takes `f32` data and
/// keeps `f64` statistics:
///
/// ```
/// use momenta::{Accumulator, Mean, MinMax, Variance};
/// let mut stats = (Mean::<f64>::new(), Variance::<f64>::new(), MinMax::<f64>::new());
/// stats.extend_from_slice(&[0.5_f32, 1.5, 2.5]);
/// stats.push(3.5_f32);
/// assert_eq!(stats.0.mean(), Some(2.0));
/// assert_eq!(stats.1.population_variance(), Some(1.25));
/// assert_eq!((stats.2.min(), stats.2.max()), (Some(0.5), Some(3.5)));
/// ```
///
/// # Example
///
/// ```
/// use momenta::{Accumulator, Mean, MovingAverage, Variance};
///
/// let mut bundle = (Mean::new(), Variance::new(), MovingAverage::new(2).unwrap());
/// bundle.extend_from_slice(&[1.0, 2.0, 3.0, 6.0]);
///
/// let (mean, var, window) = &bundle;
/// assert_eq!(mean.mean(), Some(3.0));
/// assert_eq!(var.sample_variance(), Some(14.0 / 3.0));
/// assert_eq!(window.mean(), Some(4.5));
/// ```
pub trait Accumulator<F> {
    /// Adds one value.
    fn push(&mut self, x: F);

    /// Adds every value of `xs`, in order.
    ///
    /// The result equals pushing them one by one, up to rounding: slice
    /// paths may use faster, more accurate blocked kernels.
    fn extend_from_slice(&mut self, xs: &[F]);

    /// Not part of the API: this accumulator's side of a tuple's walk
    /// through a slice block by block, for the accumulators whose slice
    /// path reduces blocks; `None` for the others.
    #[doc(hidden)]
    fn block_walker(&mut self) -> Option<BlockWalker<'_, F>> {
        None
    }
}

/// A member's side of a joint walk through a slice: what
/// [`Accumulator::block_walker`] returns. A public type that nothing
/// outside the crate can name or build: the kernels build it
/// (`kernels::bundle`, for the types whose slice path reduces blocks) and
/// drive it through a tuple's slice.
pub struct BlockWalker<'a, F>(pub(crate) alloc::boxed::Box<dyn Walk<F> + 'a>);

/// The steps of a walk, behind `dyn`: a bundle's members have
/// different leaves.
pub(crate) trait Walk<F> {
    /// The next block's leaf.
    fn leaf(&mut self, block: &[F]);
    /// Merges the last two partial results.
    fn merge(&mut self);
    /// Takes the whole slice's result into the member.
    fn finish(&mut self);
}

/// An accumulator whose state can absorb another's, as if the other's values
/// had been pushed into it.
///
/// # Laws
///
/// For accumulators `a`, `b`, `c` of one type and any values:
///
/// - **identity**: merging an empty accumulator changes nothing, and merging
///   into an empty one yields a copy of the other;
/// - **sequential equivalence**: pushing `xs` into `a`, `ys` into `b`, then
///   `a.merge(&b)` gives the statistics of pushing `xs` then `ys` into one
///   accumulator, up to rounding;
/// - **associativity**: `(a ⊕ b) ⊕ c` equals `a ⊕ (b ⊕ c)`, up to rounding.
///
/// These laws are what make parallel reduction correct: fold each chunk into
/// its own accumulator, then reduce with `merge`.
///
/// # Example
///
/// ```
/// use momenta::{Merge, Variance};
///
/// let mut left = Variance::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0]);
/// let right = Variance::from_slice(&[10.0, 11.0, 12.0]);
/// left.merge(&right);
/// assert_eq!(left.count(), 8);
/// assert_eq!(left.mean(), Some(6.0));
/// assert_eq!(left.population_variance(), Some(16.5));
/// ```
pub trait Merge {
    /// Absorbs `other`, as if its values had been pushed into `self`.
    fn merge(&mut self, other: &Self);
}

/// Implements `Accumulator`, `Extend` (by value and by reference) and, for
/// types with a `Default`, `FromIterator`, from the type's inherent `push`
/// and `extend_from_slice`. One definition keeps every accumulator's std
/// traits identical.
macro_rules! impl_accumulator {
    ($ty:ident) => {
        $crate::accumulator::impl_accumulator!(@accumulator $ty {});
        $crate::accumulator::impl_accumulator!(@extend $ty);
    };
    // A type whose slice path reduces blocks, through `FromSlice`: it
    // joins a tuple's walk by blocks, and collects from iterators.
    ($ty:ident, from_iter) => {
        $crate::accumulator::impl_accumulator!(@accumulator $ty {
            fn block_walker(&mut self) -> Option<$crate::accumulator::BlockWalker<'_, F>> {
                Some($crate::accumulator::BlockWalker::new(self))
            }
        });
        $crate::accumulator::impl_accumulator!(@extend $ty);

        impl<F: $crate::Float> core::iter::FromIterator<F> for $ty<F> {
            fn from_iter<I: IntoIterator<Item = F>>(iter: I) -> Self {
                let mut acc = Self::default();
                core::iter::Extend::extend(&mut acc, iter);
                acc
            }
        }

        impl<'a, F: $crate::Float> core::iter::FromIterator<&'a F> for $ty<F> {
            fn from_iter<I: IntoIterator<Item = &'a F>>(iter: I) -> Self {
                let mut acc = Self::default();
                core::iter::Extend::extend(&mut acc, iter);
                acc
            }
        }
    };
    // `f32` data into the `f64` accumulator of a type whose
    // `extend_from_slice` takes either float, so that a bundle of `f64`
    // accumulators takes `f32` data (exactly: every `f32` is an `f64`).
    ($ty:ident, f32_into_f64) => {
        impl $crate::Accumulator<f32> for $ty<f64> {
            #[inline]
            fn push(&mut self, x: f32) {
                $ty::push(self, f64::from(x));
            }

            fn extend_from_slice(&mut self, xs: &[f32]) {
                $ty::extend_from_slice(self, xs);
            }

            fn block_walker(&mut self) -> Option<$crate::accumulator::BlockWalker<'_, f32>> {
                Some($crate::accumulator::BlockWalker::new(self))
            }
        }
    };
    (@accumulator $ty:ident { $($walker:tt)* }) => {
        impl<F: $crate::Float> $crate::Accumulator<F> for $ty<F> {
            // Always: a forwarding shim, which a caller's inliner may
            // otherwise count at the size of the push it forwards to and
            // leave as a call (`EwVariance` through generic code ran at
            // 6.5 ns a push as a call, 2.4 inlined).
            #[inline(always)]
            #[allow(clippy::inline_always, reason = "measured: see the comment")]
            fn push(&mut self, x: F) {
                $ty::push(self, x);
            }

            fn extend_from_slice(&mut self, xs: &[F]) {
                $ty::extend_from_slice(self, xs);
            }

            $($walker)*
        }
    };
    (@extend $ty:ident) => {
        impl<F: $crate::Float> core::iter::Extend<F> for $ty<F> {
            fn extend<I: IntoIterator<Item = F>>(&mut self, iter: I) {
                for x in iter {
                    $ty::push(self, x);
                }
            }
        }

        impl<'a, F: $crate::Float> core::iter::Extend<&'a F> for $ty<F> {
            fn extend<I: IntoIterator<Item = &'a F>>(&mut self, iter: I) {
                for &x in iter {
                    $ty::push(self, x);
                }
            }
        }
    };
}
pub(crate) use impl_accumulator;
