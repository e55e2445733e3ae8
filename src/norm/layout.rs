//! A row-major tensor seen as `[outer, channels, inner]`.

use crate::Error;
use crate::error::ErrorKind;

/// The shape of a row-major tensor seen as `[outer, channels, inner]`: the
/// channel axis, everything before it folded into `outer`, everything after
/// it into `inner`.
///
/// | tensor | outer | channels | inner |
/// |---|---|---|---|
/// | `(N, C)` — [`nc`](Layout::nc) | N | C | 1 |
/// | `(N, C, L)` — [`ncl`](Layout::ncl) | N | C | L |
/// | `(N, C, H, W)` — [`nchw`](Layout::nchw) | N | C | H·W |
/// | `(N, H, W, C)` — [`nhwc`](Layout::nhwc) | N·H·W | C | 1 |
///
/// It also remembers the number of samples N ([`samples`](Layout::samples)),
/// which folding loses for channels-last tensors and which the per-sample
/// layers ([`GroupNorm`](super::GroupNorm),
/// [`InstanceNorm`](super::InstanceNorm)) need; two layouts are equal when
/// all four agree.
///
/// Every constructor checks that the element count `outer · channels ·
/// inner` fits in `usize` and returns an [`Error`] otherwise, so a `Layout`
/// value is always valid and [`len`](Layout::len) cannot overflow. Whether a
/// slice has that length is checked by every function that takes one, and a
/// mismatch is an `Error`, never a panic. Zero-sized dimensions are allowed
/// (an empty tensor).
///
/// # Example
///
/// ```
/// use momenta::norm::Layout;
///
/// let l = Layout::nhwc(2, 3, 4, 5)?;
/// assert_eq!((l.outer(), l.channels(), l.inner()), (24, 5, 1));
/// assert_eq!(l.len(), 120);
/// assert_eq!(l.count_per_channel(), 24);
/// assert!(Layout::nchw(usize::MAX, 2, 1, 1).is_err());
/// # Ok::<(), momenta::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    outer: usize,
    channels: usize,
    inner: usize,
    /// N: `outer` is a multiple of it (or both are 0).
    samples: usize,
}

fn mul(a: usize, b: usize) -> Result<usize, Error> {
    a.checked_mul(b).ok_or_else(|| {
        Error::from(ErrorKind::Overflow {
            what: "tensor element count",
        })
    })
}

impl Layout {
    /// The general form: `outer` blocks, each of `channels` rows of `inner`
    /// contiguous values; each block is a sample.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Overflow`] when `outer · channels · inner` overflows
    /// `usize`.
    ///
    /// ```
    /// use momenta::norm::Layout;
    /// let l = Layout::new(2, 3, 4)?;
    /// assert_eq!(l, Layout::ncl(2, 3, 4)?);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn new(outer: usize, channels: usize, inner: usize) -> Result<Self, Error> {
        mul(mul(outer, channels)?, inner)?;
        Ok(Self {
            outer,
            channels,
            inner,
            samples: outer,
        })
    }

    /// `(N, C)`: a batch of feature vectors (`BatchNorm1d` on 2-D input).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Overflow`] when `n · c` overflows `usize`.
    ///
    /// ```
    /// let l = momenta::norm::Layout::nc(3, 4)?;
    /// assert_eq!((l.outer(), l.channels(), l.inner()), (3, 4, 1));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn nc(n: usize, c: usize) -> Result<Self, Error> {
        Self::new(n, c, 1)
    }

    /// `(N, C, L)`: channels first with one spatial axis (`BatchNorm1d` on
    /// 3-D input).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Overflow`] when `n · c · l` overflows `usize`.
    ///
    /// ```
    /// let l = momenta::norm::Layout::ncl(4, 3, 4)?;
    /// assert_eq!(l.count_per_channel(), 16);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn ncl(n: usize, c: usize, l: usize) -> Result<Self, Error> {
        Self::new(n, c, l)
    }

    /// `(N, C, H, W)`: channels first (PyTorch's default).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Overflow`] when `n · c · h · w` overflows `usize`.
    ///
    /// ```
    /// let l = momenta::norm::Layout::nchw(2, 5, 3, 4)?;
    /// assert_eq!((l.outer(), l.channels(), l.inner()), (2, 5, 12));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn nchw(n: usize, c: usize, h: usize, w: usize) -> Result<Self, Error> {
        Self::new(n, c, mul(h, w)?)
    }

    /// `(N, H, W, C)`: channels last (TensorFlow's and Keras' default).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Overflow`] when `n · h · w · c` overflows `usize`.
    ///
    /// ```
    /// let l = momenta::norm::Layout::nhwc(2, 1, 2, 3)?;
    /// assert_eq!((l.outer(), l.channels(), l.inner()), (4, 3, 1));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn nhwc(n: usize, h: usize, w: usize, c: usize) -> Result<Self, Error> {
        let mut layout = Self::new(mul(mul(n, h)?, w)?, c, 1)?;
        layout.samples = n;
        Ok(layout)
    }

    /// `(N, L, C)`: channels last with one spatial axis (Keras' `Conv1D`
    /// output, a sequence of feature vectors).
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Overflow`] when `n · l · c` overflows `usize`.
    ///
    /// ```
    /// let l = momenta::norm::Layout::nlc(2, 5, 3)?;
    /// assert_eq!((l.outer(), l.channels(), l.inner(), l.samples()), (10, 3, 1, 2));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn nlc(n: usize, l: usize, c: usize) -> Result<Self, Error> {
        Self::nhwc(n, l, 1, c)
    }

    /// `[samples, positions, channels, inner]`: each sample is `positions`
    /// blocks of `channels` rows of `inner` values (an array's axes before
    /// and after its channel axis).
    #[cfg(feature = "ndarray")]
    pub(super) fn with_samples(
        samples: usize,
        positions: usize,
        channels: usize,
        inner: usize,
    ) -> Result<Self, Error> {
        let mut layout = Self::new(mul(samples, positions)?, channels, inner)?;
        layout.samples = samples;
        Ok(layout)
    }

    /// The number of samples N: the first axis of every named layout, and
    /// `outer` for [`new`](Layout::new).
    ///
    /// ```
    /// use momenta::norm::Layout;
    /// assert_eq!(Layout::nhwc(2, 3, 4, 5)?.samples(), 2);
    /// assert_eq!(Layout::nchw(2, 3, 4, 5)?.samples(), 2);
    /// // Folded by hand, the same memory is 24 samples of 5 values.
    /// assert_eq!(Layout::nc(24, 5)?.samples(), 24);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn samples(&self) -> usize {
        self.samples
    }

    /// Positions per sample, `outer / samples`: H·W for NHWC, 1 for NCHW
    /// (0 for an empty tensor).
    pub(super) fn positions(&self) -> usize {
        self.outer.checked_div(self.samples).unwrap_or(0)
    }

    /// The number of blocks before the channel axis.
    ///
    /// ```
    /// assert_eq!(momenta::norm::Layout::nchw(2, 3, 4, 5)?.outer(), 2);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn outer(&self) -> usize {
        self.outer
    }

    /// The number of channels.
    ///
    /// ```
    /// assert_eq!(momenta::norm::Layout::nhwc(2, 3, 4, 5)?.channels(), 5);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn channels(&self) -> usize {
        self.channels
    }

    /// The number of contiguous values of one channel in one block.
    ///
    /// ```
    /// assert_eq!(momenta::norm::Layout::nchw(2, 3, 4, 5)?.inner(), 20);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn inner(&self) -> usize {
        self.inner
    }

    /// The element count `outer · channels · inner` (checked at
    /// construction, so it cannot overflow).
    ///
    /// ```
    /// assert_eq!(momenta::norm::Layout::nc(3, 4)?.len(), 12);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.outer * self.channels * self.inner
    }

    /// Whether the tensor has no elements.
    ///
    /// ```
    /// assert!(momenta::norm::Layout::nc(0, 4)?.is_empty());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of values of each channel, `outer · inner` — the `n` of
    /// the BatchNorm formulas.
    ///
    /// ```
    /// assert_eq!(momenta::norm::Layout::nchw(16, 2, 3, 3)?.count_per_channel(), 144);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn count_per_channel(&self) -> u64 {
        // Exact whenever channels ≥ 1 (then outer · inner ≤ len); with no
        // channels nothing is counted and the product saturates.
        (self.outer as u64).saturating_mul(self.inner as u64)
    }

    /// Checks that a slice of length `len` holds this tensor.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::LengthMismatch`] naming `data` when `len` differs from
    /// [`Layout::len`].
    ///
    /// ```
    /// let l = momenta::norm::Layout::nc(3, 4)?;
    /// assert!(l.check(12).is_ok());
    /// assert_eq!(l.check(11).unwrap_err().to_string(), "data must have length 12, got 11");
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn check(&self, len: usize) -> Result<(), Error> {
        if len == self.len() {
            Ok(())
        } else {
            Err(Error::length("data", self.len(), len))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_constructors_fold_the_axes() {
        let l = Layout::nchw(2, 3, 4, 5).unwrap();
        assert_eq!((l.outer, l.channels, l.inner), (2, 3, 20));
        let l = Layout::nhwc(2, 3, 4, 5).unwrap();
        assert_eq!((l.outer, l.channels, l.inner), (24, 5, 1));
        let l = Layout::nc(7, 2).unwrap();
        assert_eq!((l.outer, l.channels, l.inner), (7, 2, 1));
        assert_eq!(Layout::nhwc(2, 3, 4, 5).unwrap().positions(), 12);
        assert_eq!(Layout::nchw(2, 3, 4, 5).unwrap().positions(), 1);
        assert_eq!(Layout::nhwc(0, 3, 4, 5).unwrap().positions(), 0);
        assert_eq!(Layout::nhwc(2, 0, 4, 5).unwrap().positions(), 0);
    }

    #[test]
    fn overflow_is_an_error_in_every_constructor() {
        let big = usize::MAX / 2 + 1;
        assert!(Layout::new(big, 2, 1).is_err());
        assert!(Layout::new(1, big, 2).is_err());
        assert!(Layout::nc(big, 2).is_err());
        assert!(Layout::ncl(2, 1, big).is_err());
        assert!(Layout::nchw(1, 1, big, 2).is_err());
        assert!(Layout::nhwc(big, 2, 1, 0).is_err());
        // A zero dimension makes the product 0, but a partial product
        // that overflows is still rejected.
        assert!(Layout::nhwc(0, big, 2, 3).is_ok());
        assert_eq!(Layout::new(usize::MAX, 1, 1).unwrap().len(), usize::MAX);
    }

    #[test]
    fn check_names_the_lengths() {
        let l = Layout::ncl(2, 3, 4).unwrap();
        assert!(l.check(24).is_ok());
        let e = l.check(25).unwrap_err();
        assert_eq!(
            e.kind(),
            &ErrorKind::LengthMismatch {
                what: "data",
                expected: 24,
                actual: 25
            }
        );
    }
}
