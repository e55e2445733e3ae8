//! One group's statistic while it is being accumulated: rows taken by the
//! slice kernel a run at a time, and pieces of comparable sizes merged
//! like a balanced tree.
//!
//! A group's rows arrive in pieces — a batch's rows (through the slice
//! kernel), a partition's state — and merging them one after the other
//! into one total is a chain: every merge rounds at the scale of the
//! whole, and the errors grow with the square root of the number of
//! pieces (on `1e12 + U(0, 1)`, 10⁶ rows in batches of 8192, the chain's
//! variance was up to 7 ulps from the exact value; a balanced tree stays
//! within 2). So the pieces are kept on a stack whose sizes at least
//! double from the top down, as a binary counter keeps its bits: a new
//! piece first absorbs every piece on top that is no larger than itself
//! (by the power of two below its count), so that only pieces of
//! comparable size meet. The stack holds at most 64 pieces (one per power
//! of two of the count), and in practice a few.
//!
//! Rows that arrive a few at a time (a group with 8 rows in a batch, a
//! state of one row when partial aggregation is skipped) wait in a buffer
//! of [`RUN_ROWS`] rows, which the slice kernel then takes as one piece:
//! pushed one by one instead, 64 values near 1e9 came out up to 6 ulps
//! from their exact variance, against 2 through the kernel.
//!
//! States merged in from other partitions arrive in whatever order the
//! partitions finish, which would make the last bits of a result change
//! from run to run. So they wait (up to [`PENDING_STATES`] per group) and
//! are taken in a fixed order — by their count, then their fields' bits —
//! whatever the order they came in: a group's final merge of up to 16
//! partitions' states gives the same bits every run, on one machine or on
//! a cluster.

use super::Statistic;
use super::state::MAX_PARTS;

/// Rows a group buffers before the slice kernel takes them as a piece.
pub(super) const RUN_ROWS: usize = 32;

/// Fewer buffered rows than this are pushed one by one rather than taken
/// by the kernel, whose short-slice path rounds more: on 10 values near
/// 1e9 it came within 2 ulps of the exact variance 97 % of the time and
/// 5 ulps at worst, pushing 99.9 % and 3 ulps (from 16 values on, the
/// kernel is the closer).
const KERNEL_ROWS: usize = 16;

/// States from other partitions a group holds back before it takes them
/// in (in the fixed order); beyond, it takes them in arrival order, 16 at
/// a time. It bounds what a group holds when partial aggregation is
/// skipped and every row arrives as a state of its own.
pub(super) const PENDING_STATES: usize = 16;

/// A group's statistic as buffered rows and pieces of comparable sizes.
#[derive(Clone, Debug)]
pub(super) struct Partial<S> {
    /// States merged in, not yet taken (fewer than [`PENDING_STATES`]).
    pending: Vec<S>,
    /// Rows not yet taken: `x`, and `y` for a statistic of two columns.
    xs: Vec<f64>,
    ys: Vec<f64>,
    /// Pieces, largest at the bottom; each at least twice the size of the
    /// one above it, by the power of two below the count.
    closed: Vec<S>,
}

impl<S> Default for Partial<S> {
    fn default() -> Self {
        Self {
            pending: Vec::new(),
            xs: Vec::new(),
            ys: Vec::new(),
            closed: Vec::new(),
        }
    }
}

/// The power of two at or below `count` (0 for 0: a state of no counted
/// rows that is not empty, such as a NaN of weight 0).
fn level(count: u64) -> u32 {
    count.max(1).ilog2()
}

impl<S: Statistic> Partial<S> {
    /// Adds one row.
    ///
    /// # Errors
    ///
    /// The statistic's error for an invalid row; nothing changes then.
    #[inline]
    pub(super) fn push_row(&mut self, x: f64, y: f64) -> Result<(), momenta::Error> {
        S::check_row(x, y)?;
        self.xs.push(x);
        if S::ARITY == 2 {
            self.ys.push(y);
        }
        if self.xs.len() >= RUN_ROWS {
            self.take_rows()?;
        }
        Ok(())
    }

    /// The buffered rows, through the slice kernel (or pushed, when they
    /// are few), as a piece.
    #[cold]
    fn take_rows(&mut self) -> Result<(), momenta::Error> {
        let piece = if self.xs.len() >= KERNEL_ROWS {
            S::from_columns(&[self.xs.as_slice(), self.ys.as_slice()][..S::ARITY])?
        } else {
            let mut piece = S::default();
            let ys = if S::ARITY == 2 { &self.ys } else { &self.xs };
            for (&x, &y) in self.xs.iter().zip(ys) {
                piece.push_row(x, y)?;
            }
            piece
        };
        self.xs.clear();
        self.ys.clear();
        self.add(piece);
        Ok(())
    }

    /// Adds a piece: a batch's statistic. An empty one is skipped.
    pub(super) fn add(&mut self, mut piece: S) {
        if piece.is_empty() {
            return;
        }
        while let Some(top) = self.closed.last()
            && level(top.count()) <= level(piece.count())
        {
            let mut larger = self.closed.pop().unwrap_or_default();
            larger.merge(&piece);
            piece = larger;
        }
        self.closed.push(piece);
    }

    /// Merges in a state from another partition: held back, and taken in
    /// with the others in a fixed order.
    ///
    /// # Errors
    ///
    /// As [`push_row`](Self::push_row), for a state of one row taken as
    /// that row.
    pub(super) fn merge_state(&mut self, state: S) -> Result<(), momenta::Error> {
        self.pending.push(state);
        if self.pending.len() >= PENDING_STATES {
            let mut pending = std::mem::take(&mut self.pending);
            let taken = self.take_in(&mut pending);
            // The buffer is kept for the next states.
            self.pending = pending;
            taken?;
        }
        Ok(())
    }

    /// Takes in `states` in the fixed order and empties it. A state of one
    /// row joins the buffered rows as that row (partial aggregation
    /// skipped sends every row so).
    fn take_in(&mut self, states: &mut Vec<S>) -> Result<(), momenta::Error> {
        // Equal keys are equal states, so an unstable sort (which needs
        // no buffer) gives the one order.
        states.sort_unstable_by_key(order_key);
        for state in states.drain(..) {
            match one_row(&state) {
                Some((x, y)) => self.push_row(x, y)?,
                None => self.add(state),
            }
        }
        Ok(())
    }

    /// The statistic of everything taken in: the pieces merged from the
    /// smallest to the largest.
    ///
    /// # Errors
    ///
    /// As [`push_row`](Self::push_row).
    pub(super) fn total(&self) -> Result<S, momenta::Error> {
        if self.pending.is_empty() && self.xs.is_empty() {
            return Ok(self.merged());
        }
        self.clone().into_total()
    }

    /// [`total`](Self::total) of a group that is done with: its held-back
    /// states and rows are taken in where they are, with no copy.
    ///
    /// # Errors
    ///
    /// As [`push_row`](Self::push_row).
    pub(super) fn into_total(mut self) -> Result<S, momenta::Error> {
        let mut pending = std::mem::take(&mut self.pending);
        self.take_in(&mut pending)?;
        if !self.xs.is_empty() {
            self.take_rows()?;
        }
        Ok(self.merged())
    }

    /// The pieces merged, from the smallest to the largest.
    fn merged(&self) -> S {
        let mut total = S::default();
        for piece in self.closed.iter().rev() {
            let mut larger = piece.clone();
            larger.merge(&total);
            total = larger;
        }
        total
    }

    /// The bytes it holds beyond its own size.
    pub(super) fn heap_size(&self) -> usize {
        (self.closed.capacity() + self.pending.capacity()) * size_of::<S>()
            + (self.xs.capacity() + self.ys.capacity()) * size_of::<f64>()
    }
}

/// The row a state of one row stands for, when pushing that row gives the
/// same state bit for bit.
pub(super) fn one_row<S: Statistic>(state: &S) -> Option<(f64, f64)> {
    if state.count() != 1 {
        return None;
    }
    let (x, y) = state.as_row()?;
    let mut pushed = S::default();
    pushed.push_row(x, y).ok()?;
    let (mut a, mut b) = ([0.0; MAX_PARTS], [0.0; MAX_PARTS]);
    state.write_parts(&mut a[..S::PARTS.len()]);
    pushed.write_parts(&mut b[..S::PARTS.len()]);
    (a.map(f64::to_bits) == b.map(f64::to_bits)).then_some((x, y))
}

/// The fixed order states are taken in: by count, then by the bits of
/// their fields (any total order would do; this one is cheap and puts
/// the small states first).
fn order_key<S: Statistic>(state: &S) -> (u64, [u64; MAX_PARTS]) {
    let mut parts = [0.0; MAX_PARTS];
    state.write_parts(&mut parts[..S::PARTS.len()]);
    (state.count(), parts.map(f64::to_bits))
}
