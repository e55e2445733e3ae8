//! Per-channel statistics of an `ndarray` view along any axis (feature
//! `ndarray`).

use alloc::borrow::Cow;
use alloc::vec::Vec;

use ndarray::{Array, ArrayBase, Axis, Data, Dimension, RemoveAxis};

use super::{AffineGrads, Backward, BatchStats, Layout};
use crate::moments::Moments;
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

/// The elements of `array` in its logical (row-major) order, copied (for
/// an array not in standard layout, whose memory is not that order).
fn standard<S, D, A>(array: &ArrayBase<A, D>) -> Vec<S>
where
    S: Element,
    D: Dimension,
    A: Data<Elem = S>,
{
    array.iter().copied().collect()
}

/// The elements of `array` in logical order: its memory in place when it
/// is in standard layout, else a copy.
fn in_order<S, D, A>(array: &ArrayBase<A, D>) -> Cow<'_, [S]>
where
    S: Element,
    D: Dimension,
    A: Data<Elem = S>,
{
    array
        .as_slice()
        .map_or_else(|| Cow::Owned(standard(array)), Cow::Borrowed)
}

/// The layout of an array whose axis 0 holds the samples and
/// `channel_axis` the channels, in logical order: `[N, P, C, inner]` with
/// `P` the product of the axes between and `inner` of those after.
fn layout_of(shape: &[usize], channel_axis: Axis) -> Result<Layout, Error> {
    let axis = channel_axis.index();
    if axis == 0 || axis >= shape.len() {
        return Err(Error::parameter(
            "axis",
            axis as f64,
            "an axis of the array after the samples' axis 0",
        ));
    }
    let product = |axes: &[usize]| {
        axes.iter()
            .try_fold(1_usize, |acc, &len| acc.checked_mul(len))
            .ok_or_else(|| Error::from(ErrorKind::Overflow { what: "array" }))
    };
    Layout::with_samples(
        shape[0],
        product(&shape[1..axis])?,
        shape[axis],
        product(&shape[axis + 1..])?,
    )
}

/// Checks that `dy` has the shape of `x`.
fn same_shape(x: &[usize], dy: &[usize]) -> Result<(), Error> {
    if x.len() != dy.len() {
        return Err(Error::length("gradient axes", x.len(), dy.len()));
    }
    match x.iter().zip(dy).find(|(a, b)| a != b) {
        Some((&a, &b)) => Err(Error::length("gradient axis", a, b)),
        None => Ok(()),
    }
}

/// An output array of `like`'s shape in standard layout.
fn shaped<F, D: Dimension>(like: D, values: Vec<F>) -> Result<Array<F, D>, Error> {
    let len = values.len();
    Array::from_shape_vec(like, values).map_err(|_| Error::length("output", len, len))
}

/// The statistics, output and backward pass of a layer over an array whose
/// axis 0 holds the samples and another axis the channels, as methods of
/// each layer with a channel axis.
macro_rules! channel_arrays {
    ($layer:ident, $name:literal, $ctor:expr) => {
        impl<F: Float> super::$layer<F> {
            #[doc = concat!("The statistics of ", $name, " over an `ndarray` array or view (feature")]
            /// `ndarray`) of any dimension whose axis 0 holds the samples and
            /// `channel_axis` the channels: PyTorch's `(N, C, …)` takes
            /// `Axis(1)`, a channels-last `(N, H, W, C)` array `Axis(3)`. An
            /// array in standard layout is read in place; any other (a
            /// permuted or strided view) is copied once into logical order.
            ///
            /// # Errors
            ///
            /// [`ErrorKind::InvalidParameter`] naming `axis` when
            /// `channel_axis` is 0 or not an axis of the array; otherwise
            /// as the slice method.
            ///
            /// ```
            /// use ndarray::{Array4, Axis};
            #[doc = concat!("use momenta::norm::{", stringify!($layer), ", Layout};")]
            /// let x = Array4::from_shape_fn((2, 4, 3, 3), |(n, c, h, w)| (n + c * h + w) as f32);
            #[doc = concat!("let layer = ", $ctor, ";")]
            /// let s = layer.statistics_array(&x, Axis(1))?;
            /// let flat = layer.statistics(x.as_slice().unwrap(), Layout::nchw(2, 4, 3, 3)?)?;
            /// assert_eq!(s, flat);
            /// # Ok::<(), momenta::Error>(())
            /// ```
            pub fn statistics_array<S, D, A>(
                &self,
                x: &ArrayBase<A, D>,
                channel_axis: Axis,
            ) -> Result<BatchStats<F>, Error>
            where
                S: Element,
                D: Dimension,
                A: Data<Elem = S>,
            {
                let layout = layout_of(x.shape(), channel_axis)?;
                match x.as_slice() {
                    Some(xs) => self.statistics(xs, layout),
                    None => self.statistics(&standard(x), layout),
                }
            }

            #[doc = concat!("Normalizes an `ndarray` array or view with ", $name, " (feature")]
            /// `ndarray`; axes as in `statistics_array`), `γ` and `β` per
            /// channel, into a new array of the same shape in standard
            /// layout, each value computed in `f64` and rounded once to `F`;
            /// returns it with the statistics.
            ///
            /// # Errors
            ///
            /// As `statistics_array` and the slice method `normalize_into`.
            ///
            /// ```
            /// use ndarray::{Array4, Axis};
            #[doc = concat!("use momenta::norm::", stringify!($layer), ";")]
            /// // A channels-last (N, H, W, C) array, channels on axis 3.
            /// let x = Array4::from_shape_fn((2, 3, 3, 4), |(n, h, w, c)| (n + c * h + w) as f64);
            #[doc = concat!("let layer = ", $ctor, ";")]
            /// let (y, stats) = layer.normalize_array(&x, Axis(3), None, None)?;
            /// assert_eq!(y.shape(), x.shape());
            /// assert!(stats.count() > 0);
            /// # Ok::<(), momenta::Error>(())
            /// ```
            pub fn normalize_array<S, D, A>(
                &self,
                x: &ArrayBase<A, D>,
                channel_axis: Axis,
                gamma: Option<&[F]>,
                beta: Option<&[F]>,
            ) -> Result<(Array<F, D>, BatchStats<F>), Error>
            where
                S: Element,
                D: Dimension,
                A: Data<Elem = S>,
            {
                let layout = layout_of(x.shape(), channel_axis)?;
                let mut out = alloc::vec![F::zero(); layout.len()];
                let stats = match x.as_slice() {
                    Some(xs) => self.normalize_into(xs, layout, gamma, beta, &mut out)?,
                    None => self.normalize_into(&standard(x), layout, gamma, beta, &mut out)?,
                };
                Ok((shaped(x.raw_dim(), out)?, stats))
            }

            #[doc = concat!("The backward pass of ", $name, " over `ndarray` arrays or views (feature")]
            /// `ndarray`; axes as in `statistics_array`): `x` the forward
            /// pass's input, `dy` the output gradient (of `x`'s shape),
            /// `stats` the forward pass's statistics. Returns `dx` (a new
            /// array in standard layout, rounded once to `F`) and `dγ`, `dβ`.
            ///
            /// # Errors
            ///
            /// As `statistics_array` and the slice method `backward`, and
            /// [`ErrorKind::LengthMismatch`] naming `gradient axes` or
            /// `gradient axis` when `dy`'s shape differs from `x`'s.
            ///
            /// ```
            /// use ndarray::{Array3, Axis};
            #[doc = concat!("use momenta::norm::", stringify!($layer), ";")]
            /// let x = Array3::from_shape_fn((2, 4, 5), |(n, c, l)| (n * 7 + c * l) as f64);
            /// let dy = Array3::from_shape_fn((2, 4, 5), |(n, c, l)| (n + c + l) as f64 % 3.0 - 1.0);
            #[doc = concat!("let layer = ", $ctor, ";")]
            /// let stats = layer.statistics_array(&x, Axis(1))?;
            /// let (dx, grads) = layer.backward_array(&x, &dy, Axis(1), &stats, None)?;
            /// assert_eq!((dx.shape(), grads.bias.len()), (x.shape(), 4));
            /// # Ok::<(), momenta::Error>(())
            /// ```
            pub fn backward_array<S, D, A, B>(
                &self,
                x: &ArrayBase<A, D>,
                dy: &ArrayBase<B, D>,
                channel_axis: Axis,
                stats: &BatchStats<F>,
                gamma: Option<&[F]>,
            ) -> Result<(Array<F, D>, AffineGrads<F>), Error>
            where
                S: Element,
                D: Dimension,
                A: Data<Elem = S>,
                B: Data<Elem = S>,
            {
                same_shape(x.shape(), dy.shape())?;
                let layout = layout_of(x.shape(), channel_axis)?;
                let (xs, gs) = (in_order(x), in_order(dy));
                let mut pass = Backward::new(&xs, &gs, layout, stats);
                if let Some(g) = gamma {
                    pass = pass.with_gamma(g);
                }
                let mut dx = alloc::vec![F::zero(); layout.len()];
                let grads = self.backward(&pass, &mut dx)?;
                Ok((shaped(x.raw_dim(), dx)?, grads))
            }
        }
    };
}

channel_arrays!(BatchNorm, "batch normalization", "BatchNorm::<f64>::new()");
channel_arrays!(
    GroupNorm,
    "group normalization",
    "GroupNorm::<f64>::new(2)?"
);
channel_arrays!(
    InstanceNorm,
    "instance normalization",
    "InstanceNorm::<f64>::new()"
);

impl<F: Float> super::LayerNorm<F> {
    /// The statistics of every row of an `ndarray` array or view (feature
    /// `ndarray`): the rows are its elements in logical order, `features`
    /// at a time — PyTorch's `normalized_shape`, the product of the
    /// trailing axes. An array in standard layout is read in place, any
    /// other copied once into logical order.
    ///
    /// # Errors
    ///
    /// As [`statistics`](super::LayerNorm::statistics).
    ///
    /// ```
    /// use ndarray::Array3;
    /// use momenta::norm::LayerNorm;
    /// // (batch, tokens, d) = (2, 3, 4): six rows of 4.
    /// let x = Array3::from_shape_fn((2, 3, 4), |(b, t, d)| (b + t * d) as f32);
    /// let ln = LayerNorm::<f64>::new(4)?;
    /// assert_eq!(ln.statistics_array(&x)?.channels(), 6);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn statistics_array<S, D, A>(&self, x: &ArrayBase<A, D>) -> Result<BatchStats<F>, Error>
    where
        S: Element,
        D: Dimension,
        A: Data<Elem = S>,
    {
        match x.as_slice() {
            Some(xs) => self.statistics(xs),
            None => self.statistics(&standard(x)),
        }
    }

    /// Normalizes every row of an `ndarray` array or view (feature
    /// `ndarray`; rows as in [`statistics_array`](super::LayerNorm::statistics_array)),
    /// `γ` and `β` element by element in the logical order of the trailing
    /// axes, into a new array of the same shape, each value computed in
    /// `f64` and rounded once to `F`; returns it with the statistics.
    ///
    /// # Errors
    ///
    /// As [`normalize_into`](super::LayerNorm::normalize_into).
    ///
    /// ```
    /// use ndarray::Array2;
    /// use momenta::norm::LayerNorm;
    /// let x = Array2::from_shape_vec((2, 2), vec![1.0, 3.0, 10.0, 30.0]).unwrap();
    /// let ln = LayerNorm::<f64>::new(2)?.with_eps(0.0)?;
    /// // The transposed view: rows (1, 10) and (3, 30).
    /// let (y, _) = ln.normalize_array(&x.t(), None, None)?;
    /// assert_eq!(y.as_slice().unwrap(), &[-1.0, 1.0, -1.0, 1.0]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn normalize_array<S, D, A>(
        &self,
        x: &ArrayBase<A, D>,
        gamma: Option<&[F]>,
        beta: Option<&[F]>,
    ) -> Result<(Array<F, D>, BatchStats<F>), Error>
    where
        S: Element,
        D: Dimension,
        A: Data<Elem = S>,
    {
        let layout = self.rows_layout(x.len())?;
        let mut out = alloc::vec![F::zero(); x.len()];
        let stats = match x.as_slice() {
            Some(xs) => self.normalize_into(xs, layout, gamma, beta, &mut out)?,
            None => self.normalize_into(&standard(x), layout, gamma, beta, &mut out)?,
        };
        Ok((shaped(x.raw_dim(), out)?, stats))
    }

    /// The backward pass over `ndarray` arrays or views (feature
    /// `ndarray`; rows as in [`statistics_array`](super::LayerNorm::statistics_array)):
    /// `dx` as a new array of `x`'s shape, and `dγ`, `dβ` in the logical
    /// order of the trailing axes.
    ///
    /// # Errors
    ///
    /// As [`backward`](super::LayerNorm::backward), and
    /// [`ErrorKind::LengthMismatch`] naming `gradient axes` or `gradient
    /// axis` when `dy`'s shape differs from `x`'s.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use momenta::norm::LayerNorm;
    /// let x = Array2::from_shape_vec((2, 3), vec![1.0, 2.0, 6.0, 0.0, 0.0, 3.0]).unwrap();
    /// let dy = Array2::from_shape_vec((2, 3), vec![0.5, -1.0, 0.25, 1.0, 1.0, 1.0]).unwrap();
    /// let ln = LayerNorm::<f64>::new(3)?;
    /// let stats = ln.statistics_array(&x)?;
    /// let (dx, grads) = ln.backward_array(&x, &dy, &stats, Some(&[1.0, 2.0, 0.5]))?;
    /// assert_eq!(grads.bias, vec![1.5, 0.0, 1.25]);
    /// assert_eq!(dx.shape(), &[2, 3]);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn backward_array<S, D, A, B>(
        &self,
        x: &ArrayBase<A, D>,
        dy: &ArrayBase<B, D>,
        stats: &BatchStats<F>,
        gamma: Option<&[F]>,
    ) -> Result<(Array<F, D>, AffineGrads<F>), Error>
    where
        S: Element,
        D: Dimension,
        A: Data<Elem = S>,
        B: Data<Elem = S>,
    {
        same_shape(x.shape(), dy.shape())?;
        let layout = self.rows_layout(x.len())?;
        let (xs, gs) = (in_order(x), in_order(dy));
        let mut pass = Backward::new(&xs, &gs, layout, stats);
        if let Some(g) = gamma {
            pass = pass.with_gamma(g);
        }
        let mut dx = alloc::vec![F::zero(); x.len()];
        let grads = self.backward(&pass, &mut dx)?;
        Ok((shaped(x.raw_dim(), dx)?, grads))
    }
}
