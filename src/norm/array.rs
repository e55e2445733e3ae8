//! Per-channel statistics of an `ndarray` view along any axis (feature
//! `ndarray`).

use alloc::vec::Vec;

use ndarray::{ArrayBase, Axis, Data, Dimension, RemoveAxis};

use super::{BatchStats, Layout};
use crate::cumulative::moments::Moments;
use crate::{Element, Error, ErrorKind, Float};

/// Values read per kernel call when a channel is not one contiguous run.
const CHUNK: usize = 4096;

/// How a contiguous array's memory looks from its channel axis:
/// `[outer, channels, inner]`, and whether the channel axis runs backwards.
struct Contiguous {
    layout: Layout,
    reversed: bool,
}

/// The `[outer, channels, inner]` view of an array whose elements fill one
/// slice (in some order of the axes, some possibly reversed), or `None`.
///
/// In memory the axes run from the largest stride to the smallest; the
/// elements of one channel sit at `o·(C·inner) + c·inner + i`, with `o`
/// combining the axes slower than the channel axis and `i` the faster
/// ones. Axes of length 1 have any stride and are left out.
fn contiguous(shape: &[usize], strides: &[isize], axis: usize) -> Option<Contiguous> {
    let channels = *shape.get(axis)?;
    let channel_stride = strides.get(axis)?.unsigned_abs();
    let mut inner = 1_usize;
    let mut outer = 1_usize;
    for (k, (&len, &stride)) in shape.iter().zip(strides).enumerate() {
        if k == axis || len == 1 {
            continue;
        }
        if channels > 1 && stride.unsigned_abs() < channel_stride {
            inner = inner.checked_mul(len)?;
        } else {
            outer = outer.checked_mul(len)?;
        }
    }
    if channels > 1 && channel_stride != inner {
        return None;
    }
    let reversed = channels > 1 && strides.get(axis).is_some_and(|&s| s < 0);
    Some(Contiguous {
        layout: Layout::new(outer, channels, inner).ok()?,
        reversed,
    })
}

impl<F: Float> BatchStats<F> {
    /// The statistics of every index along `axis` of an `ndarray` array or
    /// view of any dimension: `axis` is the channel axis (1 for NCHW, 3 for
    /// NHWC, the last for per-column statistics of a matrix), and each
    /// channel's values are all the elements with that index.
    ///
    /// When the array's elements fill one slice — standard or Fortran
    /// order, permuted or reversed axes — the data are read in place by
    /// the same kernels as [`compute`](BatchStats::compute) (zero-copy);
    /// any other strides (a slice with a step, a sub-view) are read channel
    /// by channel through a small buffer. Either way the statistics are
    /// accurate to `f64` (the order in which values are added may differ,
    /// and with it the last bits).
    ///
    /// ```
    /// use momenta::norm::{BatchStats, Layout};
    /// use ndarray::{Array4, Axis};
    ///
    /// // NCHW, 2 images, 3 channels, 2 × 2 pixels.
    /// let x = Array4::from_shape_fn((2, 3, 2, 2), |(n, c, h, w)| (c * 10 + n + h + w) as f32);
    /// let s = BatchStats::<f64>::compute_axis(&x, Axis(1))?;
    /// let flat = BatchStats::<f64>::compute(x.as_slice().unwrap(), Layout::nchw(2, 3, 2, 2)?)?;
    /// assert_eq!(s.mean(), flat.mean());
    ///
    /// // The same data seen as NHWC through permuted axes: no copy.
    /// let nhwc = x.view().permuted_axes([0, 2, 3, 1]);
    /// assert_eq!(BatchStats::<f64>::compute_axis(&nhwc, Axis(3))?.mean(), flat.mean());
    ///
    /// // Every other image: strided, read channel by channel.
    /// let every_other = x.slice(ndarray::s![..;2, .., .., ..]);
    /// assert_eq!(BatchStats::<f64>::compute_axis(&every_other, Axis(1))?.count(), 4);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorKind::InvalidParameter`] naming `axis` when `axis` is not an
    /// axis of the array; [`ErrorKind::Overflow`] when the element count
    /// overflows `usize`.
    pub fn compute_axis<S, D, A>(array: &ArrayBase<A, D>, axis: Axis) -> Result<Self, Error>
    where
        S: Element,
        D: RemoveAxis,
        A: Data<Elem = S>,
    {
        let shape = array.shape();
        if axis.index() >= shape.len() {
            return Err(Error::parameter(
                "axis",
                axis.index() as f64,
                "an axis of the array",
            ));
        }
        let channels = shape[axis.index()];
        let per_channel = shape
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != axis.index())
            .try_fold(1_u64, |acc, (_, &len)| acc.checked_mul(len as u64))
            .ok_or_else(|| Error::from(ErrorKind::Overflow { what: "array" }))?;
        if let (Some(xs), Some(view)) = (
            array.as_slice_memory_order(),
            contiguous(shape, array.strides(), axis.index()),
        ) {
            let mut stats = Self::compute(xs, view.layout)?;
            if view.reversed {
                stats = stats.reversed();
            }
            return Ok(stats);
        }
        let moments: Vec<Moments<f64>> = (0..channels)
            .map(|c| channel_of(&array.index_axis(axis, c)))
            .collect();
        Ok(Self::from_moments(per_channel, moments))
    }

    /// The channels in reverse order.
    fn reversed(&self) -> Self {
        let mut moments = self.moments().to_vec();
        moments.reverse();
        Self::from_moments(self.count(), moments)
    }
}

/// The moments of every element of a view of any strides, through the
/// slice kernel a buffer at a time (or in place where a row is contiguous).
fn channel_of<S, D, A>(view: &ArrayBase<A, D>) -> Moments<f64>
where
    S: Element,
    D: Dimension,
    A: Data<Elem = S>,
{
    if let Some(xs) = view.as_slice_memory_order() {
        return crate::kernels::moments(xs);
    }
    let mut total = Moments::default();
    let mut buf: Vec<S> = Vec::with_capacity(CHUNK);
    for &x in view {
        buf.push(x);
        if buf.len() == CHUNK {
            total.merge(&crate::kernels::moments(&buf));
            buf.clear();
        }
    }
    total.merge(&crate::kernels::moments(&buf));
    total
}
