//! What [`Skewness`](crate::Skewness) and [`Kurtosis`](crate::Kurtosis)
//! share: every method but their own statistics and parts, written once.
//! Both are a [`HigherMoments`](crate::moments::higher_moments::HigherMoments) in a
//! field named `moments`; the macro's doc examples name the type they are
//! generated for.

/// Implements `Default`, the constructors, `push`, the slice paths, count,
/// mean, variances, both skewnesses, `reset`, `Merge`, `FromSlice`, and
/// (through `impl_accumulator!`) `Accumulator`, `Extend` and
/// `FromIterator` for `$ty<F>`, a struct `{ moments: HigherMoments<F,
/// $fourth> }`.
macro_rules! shape_statistics {
    ($ty:ident, $fourth:literal) => {
        impl<F: $crate::Float> Default for $ty<F> {
            fn default() -> Self {
                Self::new()
            }
        }

        impl<F: $crate::Float> $ty<F> {
            /// An empty accumulator.
            ///
            /// ```
            #[doc = concat!("let s = momenta::", stringify!($ty), "::<f64>::new();")]
            /// assert_eq!((s.count(), s.mean(), s.skewness()), (0, None, None));
            /// ```
            #[must_use]
            pub fn new() -> Self {
                Self {
                    moments: $crate::moments::higher_moments::HigherMoments::default(),
                }
            }

            /// Statistics of a slice of `f32` or `f64`, computed by the
            /// blocked kernels in `f64`.
            ///
            /// ```
            #[doc = concat!("let s = momenta::", stringify!($ty), "::<f64>::from_slice(&[1.0_f32, 2.0, 3.0, 10.0]);")]
            /// assert!(s.skewness().unwrap() > 1.0);
            /// ```
            #[must_use]
            pub fn from_slice<S: $crate::Element>(xs: &[S]) -> Self {
                Self {
                    moments: $crate::kernels::higher_moments(xs).cast(),
                }
            }

            /// Statistics of a slice of `f32` or `f64` on every rayon
            /// thread: the same blocks and merge tree as `from_slice`, so
            /// the result is bit-for-bit the same on 1, 2 or 16 threads.
            ///
            /// ```
            #[doc = concat!("use momenta::", stringify!($ty), ";")]
            /// let xs: Vec<f64> = (0..100_000).map(|i| f64::from(i % 7).powi(2)).collect();
            #[doc = concat!("let s = ", stringify!($ty), "::<f64>::par_from_slice(&xs);")]
            #[doc = concat!("assert_eq!(s, ", stringify!($ty), "::from_slice(&xs));")]
            /// ```
            #[cfg(feature = "rayon")]
            #[must_use]
            pub fn par_from_slice<S: $crate::Element>(xs: &[S]) -> Self {
                Self {
                    moments: $crate::kernels::par_higher_moments(xs).cast(),
                }
            }

            /// Adds one value.
            ///
            /// ```
            #[doc = concat!("let mut s = momenta::", stringify!($ty), "::new();")]
            /// for x in [1.0, 2.0, 6.0] {
            ///     s.push(x);
            /// }
            /// assert!(s.skewness().unwrap() > 0.0);
            /// ```
            #[inline]
            pub fn push(&mut self, x: F) {
                self.moments.push(x);
            }

            /// Adds every value of a slice of `f32` or `f64`, through the
            /// kernels.
            ///
            /// ```
            #[doc = concat!("let mut s = momenta::", stringify!($ty), "::<f64>::new();")]
            /// s.extend_from_slice(&[1.0_f64, 2.0]);
            /// s.extend_from_slice(&[6.0_f32]);
            /// assert_eq!(s.count(), 3);
            /// ```
            pub fn extend_from_slice<S: $crate::Element>(&mut self, xs: &[S]) {
                let root = $crate::kernels::HigherLeaf($crate::kernels::higher_moments(xs));
                $crate::FromSlice::<S>::absorb_root(self, root);
            }

            /// The number of values pushed. It saturates at `u64::MAX`
            /// (which only merges or restored state can reach).
            ///
            /// ```
            #[doc = concat!("let s = momenta::", stringify!($ty), "::<f32>::from_slice(&[1.0_f32; 5]);")]
            /// assert_eq!(s.count(), 5);
            /// ```
            #[must_use]
            pub fn count(&self) -> u64 {
                self.moments.base.count
            }

            /// The mean, or `None` when empty.
            ///
            /// ```
            #[doc = concat!("let s = momenta::", stringify!($ty), "::<f64>::from_slice(&[1.0, 4.0]);")]
            /// assert_eq!(s.mean(), Some(2.5));
            /// ```
            #[must_use]
            pub fn mean(&self) -> Option<F> {
                self.moments.base.mean()
            }

            /// The population (biased) variance Σ(x − x̄)²/n, or `None`
            /// when empty.
            ///
            /// ```
            #[doc = concat!("let s = momenta::", stringify!($ty), "::<f64>::from_slice(&[1.0, 3.0]);")]
            /// assert_eq!(s.population_variance(), Some(1.0));
            /// ```
            #[must_use]
            pub fn population_variance(&self) -> Option<F> {
                self.moments.base.variance(0)
            }

            /// The sample (unbiased) variance Σ(x − x̄)²/(n − 1), or `None`
            /// below two values.
            ///
            /// ```
            #[doc = concat!("let s = momenta::", stringify!($ty), "::<f64>::from_slice(&[1.0, 3.0]);")]
            /// assert_eq!(s.sample_variance(), Some(2.0));
            /// ```
            #[must_use]
            pub fn sample_variance(&self) -> Option<F> {
                self.moments.base.variance(1)
            }

            /// The skewness g1 = m3/m2^1.5 (mₚ = Σ(x − x̄)ᵖ/n), as
            /// `scipy.stats.skew(x)` computes it; `None` when empty or when
            /// the variance is 0.
            ///
            /// ```
            #[doc = concat!("use momenta::", stringify!($ty), ";")]
            #[doc = concat!("let s = ", stringify!($ty), "::<f64>::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 9.0]);")]
            /// assert!((s.skewness().unwrap() - 0.8714212528966688).abs() < 1e-15);
            #[doc = concat!("assert_eq!(", stringify!($ty), "::<f64>::from_slice(&[1.0]).skewness(), None);")]
            /// ```
            #[must_use]
            pub fn skewness(&self) -> Option<F> {
                self.moments.skewness()
            }

            /// The adjusted Fisher–Pearson skewness
            /// G1 = g1·√(n(n − 1))/(n − 2), as `scipy.stats.skew(x,
            /// bias=False)` and pandas' `Series.skew()` compute it; `None`
            /// below three values or when the variance is 0.
            ///
            /// ```
            #[doc = concat!("use momenta::", stringify!($ty), ";")]
            #[doc = concat!("let s = ", stringify!($ty), "::<f64>::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 9.0]);")]
            /// assert!((s.sample_skewness().unwrap() - 1.193242693252299).abs() < 1e-14);
            #[doc = concat!("assert_eq!(", stringify!($ty), "::<f64>::from_slice(&[1.0, 2.0]).sample_skewness(), None);")]
            /// ```
            #[must_use]
            pub fn sample_skewness(&self) -> Option<F> {
                self.moments.sample_skewness()
            }

            /// Forgets every value.
            ///
            /// ```
            #[doc = concat!("let mut s = momenta::", stringify!($ty), "::<f64>::from_slice(&[1.0, 2.0]);")]
            /// s.reset();
            /// assert_eq!(s.count(), 0);
            /// ```
            pub fn reset(&mut self) {
                *self = Self::new();
            }
        }

        impl<F: $crate::Float> $crate::Merge for $ty<F> {
            /// Pébay's pairwise formulas on the two sides' moments.
            ///
            /// ```
            #[doc = concat!("use momenta::{Merge, ", stringify!($ty), "};")]
            #[doc = concat!("let mut a = ", stringify!($ty), "::<f64>::from_slice(&[1.0, 2.0, 3.0]);")]
            #[doc = concat!("a.merge(&", stringify!($ty), "::from_slice(&[4.0, 5.0, 9.0]));")]
            /// assert!((a.skewness().unwrap() - 0.8714212528966688).abs() < 1e-15);
            /// ```
            fn merge(&mut self, other: &Self) {
                self.moments.merge(&other.moments);
            }
        }

        impl<F: $crate::Float> $crate::kernels::Sealed for $ty<F> {}

        impl<F: $crate::Float, S: $crate::Element> $crate::FromSlice<S> for $ty<F> {
            type Leaf = $crate::kernels::HigherLeaf<$fourth>;

            #[inline]
            fn leaf(block: &[S]) -> Self::Leaf {
                $crate::kernels::HigherLeaf($crate::kernels::block_higher_moments(block))
            }

            #[inline]
            fn merge_leaves(a: &mut Self::Leaf, b: Self::Leaf) {
                a.0.merge(&b.0);
            }

            fn absorb_root(&mut self, root: Self::Leaf) {
                self.moments.merge(&root.0.cast());
            }
        }

        $crate::accumulator::impl_accumulator!($ty, from_iter);
        $crate::accumulator::impl_accumulator!($ty, f32_into_f64);
    };
}
pub(crate) use shape_statistics;
