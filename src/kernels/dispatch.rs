//! Runtime choice between the portable kernels and the AVX2/FMA ones.
//!
//! A default build targets baseline x86-64 (SSE2, no FMA), where
//! `f64::mul_add` is a library call. The AVX2/FMA kernels are compiled for
//! those features with `#[target_feature]` and chosen at run time when the
//! CPU has them. The decision is made once and cached. Without `std` there
//! is no feature detection, and the portable kernels run (unless the build
//! itself already targets AVX2 and FMA, in which case they are the same
//! code compiled for those features).

/// Which compiled version of the kernels to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// Plain Rust for the build's target features; always available.
    Portable,
    /// Compiled with AVX2 and FMA enabled.
    ///
    /// Invariant: a value of this variant only exists after [`detect`] has
    /// found both features on the running CPU; the kernels rely on it.
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    Avx2Fma,
}

/// The fastest path this CPU supports.
#[inline]
pub(crate) fn detect() -> Path {
    #[cfg(all(feature = "std", target_arch = "x86_64"))]
    {
        use core::sync::atomic::{AtomicU8, Ordering};
        const UNKNOWN: u8 = 0;
        const PORTABLE: u8 = 1;
        const AVX2_FMA: u8 = 2;
        static CACHE: AtomicU8 = AtomicU8::new(UNKNOWN);
        match CACHE.load(Ordering::Relaxed) {
            PORTABLE => Path::Portable,
            AVX2_FMA => Path::Avx2Fma,
            _ => {
                let fast =
                    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
                CACHE.store(if fast { AVX2_FMA } else { PORTABLE }, Ordering::Relaxed);
                if fast { Path::Avx2Fma } else { Path::Portable }
            }
        }
    }
    #[cfg(not(all(feature = "std", target_arch = "x86_64")))]
    {
        Path::Portable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_is_stable() {
        assert_eq!(detect(), detect());
    }
}
