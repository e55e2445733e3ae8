//! The two traits every accumulator shares, and their tuple bundles.

/// A statistic that takes values one at a time, in constant space.
///
/// Every accumulator also has inherent `push` and `extend_from_slice`
/// methods, so the trait is only needed in generic code and for tuple
/// bundles: a tuple `(A, B)`, `(A, B, C)` or `(A, B, C, D)` of accumulators
/// of the same input type is itself an accumulator that feeds each value to
/// every member, so several statistics go through the data in one pass.
///
/// [`Mean<f64>`](crate::Mean) and [`Variance<f64>`](crate::Variance) are
/// also `Accumulator<f32>`, so a bundle of them takes `f32` data and keeps
/// `f64` statistics:
///
/// ```
/// use momenta::{Accumulator, Mean, Variance};
/// let mut stats = (Mean::<f64>::new(), Variance::<f64>::new());
/// stats.extend_from_slice(&[0.5_f32, 1.5, 2.5]);
/// stats.push(3.5_f32);
/// assert_eq!(stats.0.mean(), Some(2.0));
/// assert_eq!(stats.1.population_variance(), Some(1.25));
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

/// Values per chunk when a tuple bundle walks a slice: every member reads
/// the chunk while it is still in L1 cache, so the data is read from memory
/// once.
const BUNDLE_CHUNK: usize = 2048;

macro_rules! tuple_impls {
    ($($name:ident $idx:tt),+) => {
        impl<F: Copy, $($name: Accumulator<F>),+> Accumulator<F> for ($($name,)+) {
            #[inline]
            fn push(&mut self, x: F) {
                $(self.$idx.push(x);)+
            }

            fn extend_from_slice(&mut self, xs: &[F]) {
                for chunk in xs.chunks(BUNDLE_CHUNK) {
                    $(self.$idx.extend_from_slice(chunk);)+
                }
            }
        }

        impl<$($name: Merge),+> Merge for ($($name,)+) {
            fn merge(&mut self, other: &Self) {
                $(self.$idx.merge(&other.$idx);)+
            }
        }
    };
}

tuple_impls!(A 0, B 1);
tuple_impls!(A 0, B 1, C 2);
tuple_impls!(A 0, B 1, C 2, D 3);

/// Implements `Accumulator`, `Extend` (by value and by reference) and, for
/// types with a `Default`, `FromIterator`, from the type's inherent `push`
/// and `extend_from_slice`. One definition keeps every accumulator's std
/// traits identical.
macro_rules! impl_accumulator {
    ($ty:ident) => {
        impl<F: $crate::Float> $crate::Accumulator<F> for $ty<F> {
            #[inline]
            fn push(&mut self, x: F) {
                $ty::push(self, x);
            }

            fn extend_from_slice(&mut self, xs: &[F]) {
                $ty::extend_from_slice(self, xs);
            }
        }

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
        }
    };
    ($ty:ident, from_iter) => {
        impl_accumulator!($ty);

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
}
pub(crate) use impl_accumulator;
