//! The parameters of a normalization pass (`affine.rs`): what the pass
//! reads per entry and per value, and how it writes and reads ahead. Apart
//! from the passes so that the instruction-set layer, which compiles them,
//! takes them from below and the passes call down into it.

/// The parameters of a normalization pass, three slices of one length:
/// the mean's high part `hi`, the `scale` and the `offset` of
/// `(x − hi)·scale + offset`. (A slice longer than the others is read
/// only as far as the shortest.)
#[derive(Clone, Copy, Debug)]
pub(crate) struct Affine<'a> {
    pub(crate) hi: &'a [f64],
    pub(crate) scale: &'a [f64],
    pub(crate) offset: &'a [f64],
}

impl Affine<'_> {
    /// The number of entries: the shortest slice's length.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.hi.len().min(self.scale.len()).min(self.offset.len())
    }
}

/// The factor `γ` and term `β` applied after the run's own parameters,
/// each by position within the run (a layer norm's, whose γ and β vary
/// along the row), each absent or at least a run long.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PerValue<'a> {
    pub(crate) gamma: Option<&'a [f64]>,
    pub(crate) beta: Option<&'a [f64]>,
}

/// How a pass writes and reads ahead: `stream`, its output past the
/// caches (see [`streams`](super::affine::streams)); `ahead`, when not 0, the distance in bytes at
/// which it asks for the input's next cache lines while it reads these
/// (a chunked caller's chunk length: the next chunk comes into cache while
/// this one is worked, spread over the pass rather than asked for at
/// once).
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(
    not(all(feature = "std", target_arch = "x86_64")),
    allow(dead_code, reason = "only the AVX2 loops stream and read ahead")
)]
pub(crate) struct Pass {
    pub(crate) stream: bool,
    pub(crate) ahead: usize,
}
