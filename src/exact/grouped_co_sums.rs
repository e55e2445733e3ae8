//! The exact co-sums of many groups at once: a `GROUP BY`'s
//! [`ExactCoSums`], with each group's latest rows in a narrower form.
//!
//! A row's update of an [`ExactCoSums`] writes eighteen words in three
//! cache lines: the 256-bit sums of squares and products need their
//! carries. A run of rows whose values are multiples of a coarser power of
//! two, below `2^56` times it, needs less: their squares and products are
//! below `2^112`, so `2^15` of them fit 128-bit sums with no carry out.
//! So each group has a *pending* part beside its [`ExactCoSums`]: a count,
//! `Σx`, `Σy`, `Σx²`, `Σy²` and `Σxy` of its latest rows, in integers of
//! that coarser grid (eleven words in two cache lines), added into the
//! group's sums (shifted to their grid, exactly) when a row does not fit,
//! when `2^15` rows are pending, or when the sums are read. The sums that
//! come out are the integers a loop of [`ExactCoSums::add`] gives, so they
//! read the same bits, and the same rows are refused.
//!
//! The pending grid is chosen from the row that set it: two bits below
//! the last bit of a full 53-bit mantissa at the row's binade, so that
//! values up to a binade larger or two binades smaller fit too; never
//! finer than the group's sums, nor so coarse that its values leave
//! their range. A group whose rows keep
//! leaving the grid (values spread over many binades) stops using it
//! after a few short runs and adds each row to its sums, as before.

#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "integers below 2^56 and their products, in two's complement"
)]

use alloc::vec::Vec;

use crate::exact::grouped::by_group;
use crate::kernels::exact_arith::{LIMIT, parts};
use crate::kernels::{is_whole_below, truncate_i64};
use crate::{Error, ExactCoSums};

/// A pending value is below `2^BITS` in magnitude on its grid.
const BITS: i32 = 56;

/// `2^BITS`, the bound of a pending value's magnitude on its grid.
#[allow(clippy::cast_precision_loss, reason = "a power of two")]
const REACH: f64 = (1_u64 << BITS) as f64;

/// The most rows pending: each square and product is below
/// `2^(2·BITS)`, so this many of them sum below `2^127`.
const MAX_PENDING: u32 = 1 << (127 - 2 * BITS);

/// The pending count of a group with no grid: every row goes to its sums.
const NO_GRID: u32 = u32::MAX;

/// A run shorter than this, ended by a row off the grid, is a miss.
const SHORT_RUN: u32 = 16;

/// After this many misses a group stops using a grid.
const MAX_MISSES: u32 = 8;

/// One column's pending grid: values `v·2^base`, `|v| < 2^BITS`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Grid {
    /// `2^-base` when a normal `f64`, else 0 (then only zeros fit).
    scale: f64,
    /// The grid's exponent.
    base: i32,
}

impl Grid {
    /// The grid for a column whose sums are at `sums_base`, aimed at
    /// `x`: `2^(top − 55)` for `x` below `2^top`, so that `x` takes 55 of
    /// the 56 bits (values a binade larger fit too, and values resolved
    /// two bits finer than `x`); the sums' own base for a zero or a value
    /// that is not finite.
    fn aimed(sums_base: i32, x: f64) -> Self {
        let (_, m, e) = parts(x);
        if m == 0 || !x.is_finite() {
            return Self::within(sums_base, sums_base);
        }
        Self::within(e + (64 - m.leading_zeros() as i32) - (BITS - 1), sums_base)
    }

    /// The grid `2^base`, moved into the range a column whose sums are at
    /// `sums_base` allows: no finer than the sums' base, nor so coarse
    /// that a value on it leaves the sums' range (`2^(sums_base +
    /// LIMIT)`).
    fn within(base: i32, sums_base: i32) -> Self {
        let base = base.clamp(sums_base, sums_base + LIMIT - BITS);
        Self {
            scale: crate::ExactSums::scale_for(base),
            base,
        }
    }

    /// `x` on the grid and `true` when it is a multiple of `2^base`
    /// below `2^(base + BITS)` in magnitude; else `false` (the integer is
    /// then meaningless), for the caller to test both columns at once.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "the hot loop's test")]
    fn fast(self, x: f64) -> (i64, bool) {
        // A power of two: exact unless it leaves the normal range, which
        // the test refuses (an infinity, a fraction, a 0). A zero is on
        // every grid, but the test leaves it out, with the products that
        // underflowed to 0: `x` itself tells them apart.
        let v = x * self.scale;
        #[allow(
            clippy::needless_bitwise_bool,
            clippy::float_cmp,
            reason = "no branch inside the hot loop's test"
        )]
        let fits = is_whole_below(v, REACH) | (x == 0.0);
        (truncate_i64(v), fits)
    }
}

/// A group's latest rows on its grids: two cache lines.
#[derive(Clone, Debug, PartialEq)]
#[repr(C, align(64))]
struct Pending {
    /// How many rows; [`NO_GRID`] when the group has none.
    count: u32,
    /// Runs ended early by a row off the grid.
    misses: u32,
    x: Grid,
    y: Grid,
    sum_x: i128,
    sum_y: i128,
    squares_x: u128,
    squares_y: u128,
    cross: i128,
}

impl Default for Pending {
    fn default() -> Self {
        Self {
            count: NO_GRID,
            misses: 0,
            x: Grid::default(),
            y: Grid::default(),
            sum_x: 0,
            sum_y: 0,
            squares_x: 0,
            squares_y: 0,
            cross: 0,
        }
    }
}

impl Pending {
    /// Takes the row when both values are on the grids and room is left.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "the hot loop's body")]
    fn add(&mut self, x: f64, y: f64) -> bool {
        let ((ix, x_fits), (iy, y_fits)) = (self.x.fast(x), self.y.fast(y));
        // The three tests at once (`&`, not `&&`): the two columns' run
        // side by side.
        if !((self.count < MAX_PENDING) & x_fits & y_fits) {
            return false;
        }
        let (ix, iy) = (i128::from(ix), i128::from(iy));
        self.count += 1;
        self.sum_x += ix;
        self.sum_y += iy;
        self.squares_x += (ix * ix) as u128;
        self.squares_y += (iy * iy) as u128;
        self.cross += ix * iy;
        true
    }

    /// Moves the pending rows into `sums` (at their grids, exactly) and
    /// empties the count.
    fn flush_into(&mut self, sums: &mut ExactCoSums) {
        if self.count == NO_GRID || self.count == 0 {
            return;
        }
        let shift = |grid: Grid, base: i32| (grid.base - base) as u32;
        let (dx, dy) = (
            shift(self.x, sums.x().base()),
            shift(self.y, sums.y().base()),
        );
        sums.add_shifted(
            self.count,
            (self.sum_x, self.squares_x, dx),
            (self.sum_y, self.squares_y, dy),
            self.cross,
        );
        self.count = 0;
        self.sum_x = 0;
        self.sum_y = 0;
        self.squares_x = 0;
        self.squares_y = 0;
        self.cross = 0;
    }

    /// `sums` with these pending rows added in (both left as they are).
    fn read(&self, sums: &ExactCoSums) -> ExactCoSums {
        let mut read = sums.clone();
        self.clone().flush_into(&mut read);
        read
    }

    /// A row that did not fit (or the first): into `sums` after the
    /// pending rows, then new grids aimed at it.
    fn add_slow(&mut self, sums: &mut ExactCoSums, x: f64, y: f64) -> bool {
        let had_grid = self.count != NO_GRID;
        if had_grid && self.count < SHORT_RUN {
            self.misses += 1;
        }
        self.flush_into(sums);
        let taken = sums.add(x, y);
        if self.misses >= MAX_MISSES || !room_for_a_run(sums) {
            self.count = NO_GRID;
            return taken;
        }
        let (bx, by) = (sums.x().base(), sums.y().base());
        if taken || !had_grid {
            self.x = Grid::aimed(bx, if taken { x } else { f64::NAN });
            self.y = Grid::aimed(by, if taken { y } else { f64::NAN });
        } else {
            // A refused row (a NaN) keeps the grids, within the bases it
            // may have lowered.
            self.keep_grids_within(sums);
        }
        self.count = 0;
        taken
    }

    /// After a merge changed `sums` (their bases may have moved), with
    /// nothing pending: the grids moved within the sums' range, or none
    /// when a full run no longer has room.
    fn refit(&mut self, sums: &ExactCoSums) {
        if self.count == NO_GRID {
            return;
        }
        debug_assert_eq!(self.count, 0, "flushed before the merge");
        if room_for_a_run(sums) {
            self.keep_grids_within(sums);
        } else {
            self.count = NO_GRID;
        }
    }

    /// The grids kept, each moved into the range its column of `sums`
    /// allows (after the sums' bases moved).
    fn keep_grids_within(&mut self, sums: &ExactCoSums) {
        self.x = Grid::within(self.x.base, sums.x().base());
        self.y = Grid::within(self.y.base, sums.y().base());
    }
}

/// Whether `sums` can have a grid: it needs their bases (a row in), and
/// room for a full run of pending rows.
fn room_for_a_run(sums: &ExactCoSums) -> bool {
    sums.count() > 0 && sums.count() <= u64::from(u32::MAX - MAX_PENDING)
}

/// The exact co-sums of many groups: what a vector of [`ExactCoSums`]
/// gives, group by group, bit for bit, taken in faster.
///
/// A `GROUP BY` of a covariance or a correlation keeps one
/// [`ExactCoSums`] a group and adds each row to its group's. Here each
/// group also keeps its latest rows in narrower integers (sums of
/// squares and products in 128 bits where [`ExactCoSums`] needs 256),
/// added into its [`ExactCoSums`] exactly when they would overflow, when a
/// row does not fit them, or when the sums are read. A row of `1e9 +
/// U(0, 1)` by 10³ groups took 0.71–0.73 of the time it takes in a
/// vector of [`ExactCoSums`] (5.5–6.2 ns against 9.6–10.6; the median of
/// 12 alternated runs, three runs, on an AMD EPYC 7003 guest). Memory:
/// 128 bytes a group beside the 192 of its [`ExactCoSums`].
///
/// ```
/// use momenta::{ExactCoSums, GroupedCoSums};
///
/// let mut groups = GroupedCoSums::new();
/// groups.resize(2);
/// let keys = [0, 1, 0, 1, 0];
/// let (xs, ys) = ([1.0, 10.0, 2.0, f64::NAN, 3.0], [2.0, 5.0, 4.0, 1.0, 6.0]);
/// let mut refused = Vec::new();
/// groups.add_by_group(&keys, &xs, &ys, 0..5, |i| refused.push(i))?;
/// assert_eq!(refused, [3]);
/// let first = groups.sums(0).expect("two groups");
/// assert_eq!(first.count(), 3);
/// assert_eq!(first.to_covariance().correlation(), Some(1.0));
///
/// // The same sums as adding the rows one by one.
/// let mut one = ExactCoSums::new();
/// for i in [0, 2, 4] {
///     assert!(one.add(xs[i], ys[i]));
/// }
/// assert_eq!(first, one);
/// # Ok::<(), momenta::Error>(())
/// ```
///
/// With the `serde` feature the groups serialize as each group's
/// [`ExactCoSums`], its pending rows added in (`{"groups": [...]}`), and
/// restore to groups that read the same sums and take the same rows.
///
/// ```
/// # #[cfg(feature = "serde")]
/// # {
/// let mut groups = momenta::GroupedCoSums::new();
/// groups.resize(2);
/// groups.add(1, 3.0, 1.0).unwrap();
/// let json = serde_json::to_string(&groups).unwrap();
/// let back: momenta::GroupedCoSums = serde_json::from_str(&json).unwrap();
/// assert_eq!(back.len(), 2);
/// assert_eq!(back.sums(1), groups.sums(1));
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct GroupedCoSums {
    pending: Vec<Pending>,
    sums: Vec<ExactCoSums>,
}

impl GroupedCoSums {
    /// No groups.
    ///
    /// ```
    /// let groups = momenta::GroupedCoSums::new();
    /// assert!(groups.is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How many groups.
    ///
    /// ```
    /// let mut groups = momenta::GroupedCoSums::new();
    /// groups.resize(3);
    /// assert_eq!(groups.len(), 3);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.sums.len()
    }

    /// Whether it has no groups.
    ///
    /// ```
    /// let mut groups = momenta::GroupedCoSums::new();
    /// assert!(groups.is_empty());
    /// groups.resize(1);
    /// assert!(!groups.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// Makes it `groups` groups long: new groups are empty, groups past
    /// the new length are dropped.
    ///
    /// ```
    /// let mut groups = momenta::GroupedCoSums::new();
    /// groups.resize(4);
    /// assert_eq!(groups.sums(3).map(|s| s.count()), Some(0));
    /// groups.resize(2);
    /// assert_eq!(groups.sums(3), None);
    /// ```
    pub fn resize(&mut self, groups: usize) {
        self.pending.resize_with(groups, Pending::default);
        self.sums.resize_with(groups, ExactCoSums::default);
    }

    /// Adds the pair `(x, y)` to `group`'s sums, as [`ExactCoSums::add`]
    /// does: `Ok(false)`, and nothing changed, for a pair the sums refuse.
    ///
    /// # Errors
    ///
    /// `group` not below [`len`](Self::len)
    /// ([`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)).
    ///
    /// ```
    /// let mut groups = momenta::GroupedCoSums::new();
    /// groups.resize(1);
    /// assert_eq!(groups.add(0, 1.0, 2.0), Ok(true));
    /// assert_eq!(groups.add(0, f64::INFINITY, 2.0), Ok(false));
    /// assert!(groups.add(1, 1.0, 2.0).is_err());
    /// ```
    pub fn add(&mut self, group: usize, x: f64, y: f64) -> Result<bool, Error> {
        match self.pending.get_mut(group) {
            Some(pending) => Ok(pending.add(x, y) || self.add_slow(group, x, y)?),
            None => Err(no_group(group)),
        }
    }

    /// Adds each row's pair to its group's sums: `(xs[i], ys[i])` to
    /// group `groups[i]` for each row `i` of `rows` in order, as
    /// [`add`](Self::add) would one by one; `refused(i)` is called for
    /// each row whose pair its group's sums refuse, for the caller to keep
    /// another way. With many groups it asks the memory for the pending
    /// sums of the group 16 rows on while it takes a row, as
    /// [`ExactCoSums::add_by_group`] does (the same loop).
    ///
    /// # Errors
    ///
    /// A row beyond `groups`, `xs` or `ys`, or a group beyond
    /// [`len`](Self::len)
    /// ([`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)):
    /// the rows before it are taken, none after.
    ///
    /// ```
    /// let mut groups = momenta::GroupedCoSums::new();
    /// groups.resize(2);
    /// groups.add_by_group(&[1, 1], &[1.0, 2.0], &[4.0, 2.0], 0..2, |_| {})?;
    /// assert_eq!(groups.sums(1).map(|s| s.comoment()), Some(-1.0));
    /// assert!(groups.add_by_group(&[2], &[1.0], &[1.0], 0..1, |_| {}).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn add_by_group(
        &mut self,
        groups: &[usize],
        xs: &[f64],
        ys: &[f64],
        rows: impl IntoIterator<Item = usize>,
        refused: impl FnMut(usize),
    ) -> Result<(), Error> {
        let n = groups.len().min(xs.len()).min(ys.len());
        let (groups, xs, ys) = (&groups[..n], &xs[..n], &ys[..n]);
        let sums = &mut self.sums;
        by_group(
            &mut self.pending,
            groups,
            rows,
            |pending, i| {
                let (x, y) = (xs[i], ys[i]);
                pending.add(x, y)
                    || sums
                        .get_mut(groups[i])
                        .is_some_and(|sums| pending.add_slow(sums, x, y))
            },
            refused,
        )
    }

    /// `group`'s sums, its pending rows included; `None` past the last
    /// group.
    ///
    /// ```
    /// let mut groups = momenta::GroupedCoSums::new();
    /// groups.resize(1);
    /// groups.add(0, 3.0, 1.0)?;
    /// assert_eq!(groups.sums(0).map(|s| s.x().mean()), Some(Some(3.0)));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    #[must_use]
    pub fn sums(&self, group: usize) -> Option<ExactCoSums> {
        Some(self.pending.get(group)?.read(self.sums.get(group)?))
    }

    /// Takes out the first `n` groups' sums (all of them when `n` is past
    /// the last); the groups after them become groups `0, 1, …`.
    ///
    /// ```
    /// let mut groups = momenta::GroupedCoSums::new();
    /// groups.resize(3);
    /// groups.add(2, 1.0, 1.0)?;
    /// let first = groups.take_first(2);
    /// assert_eq!(first.len(), 2);
    /// assert_eq!(groups.len(), 1);
    /// assert_eq!(groups.sums(0).map(|s| s.count()), Some(1));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn take_first(&mut self, n: usize) -> Vec<ExactCoSums> {
        let n = n.min(self.len());
        self.pending
            .drain(..n)
            .zip(self.sums.drain(..n))
            .map(|(mut pending, mut sums)| {
                pending.flush_into(&mut sums);
                sums
            })
            .collect()
    }

    /// Merges `other`'s groups into these, group by group: group `g` of
    /// `other` into group `g` here, as [`ExactCoSums::merge`] does (these
    /// grow to `other`'s length first). A group whose merge
    /// [`ExactCoSums::merge`] refuses is left as it was and `refused(g)`
    /// is called, for the caller to keep `other`'s
    /// [`sums`](Self::sums) of it another way. A merged group reads as
    /// one group fed the rows of both sides would, and takes or refuses
    /// later rows as that group would.
    ///
    /// For a `GROUP BY` run on several threads or machines, each over the
    /// same numbering of the groups.
    ///
    /// ```
    /// use momenta::GroupedCoSums;
    ///
    /// let (mut a, mut b) = (GroupedCoSums::new(), GroupedCoSums::new());
    /// a.resize(1);
    /// b.resize(2);
    /// a.add_by_group(&[0, 0], &[1.0, 2.0], &[2.0, 4.0], 0..2, |_| {})?;
    /// b.add_by_group(&[0, 1], &[3.0, 1e-300], &[6.0, 1.0], 0..2, |_| {})?;
    /// let mut refused = Vec::new();
    /// a.merge(&b, |g| refused.push(g));
    /// assert!(refused.is_empty());
    /// assert_eq!(a.len(), 2);
    /// let first = a.sums(0).expect("two groups");
    /// assert_eq!((first.count(), first.x().mean()), (3, Some(2.0)));
    /// assert_eq!(first.to_covariance().correlation(), Some(1.0));
    ///
    /// // 1e300 lies too far from 1e-300 for one set of exact sums.
    /// let mut far = GroupedCoSums::new();
    /// far.resize(2);
    /// far.add(1, 1e300, 1.0)?;
    /// a.merge(&far, |g| refused.push(g));
    /// assert_eq!(refused, [1]);
    /// assert_eq!(a.sums(1).map(|s| s.count()), Some(1));
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn merge(&mut self, other: &Self, mut refused: impl FnMut(usize)) {
        if other.len() > self.len() {
            self.resize(other.len());
        }
        let mine = self.pending.iter_mut().zip(&mut self.sums);
        let theirs = other.pending.iter().zip(&other.sums);
        for (g, ((pending, sums), (their_pending, their_sums))) in mine.zip(theirs).enumerate() {
            // Rows are pending only in a group whose sums hold a row (the
            // one that set its grids): a group with empty sums is empty,
            // skipped before anything is copied.
            if their_sums.count() == 0 {
                continue;
            }
            let theirs = their_pending.read(their_sums);
            pending.flush_into(sums);
            if sums.merge(&theirs) {
                pending.refit(sums);
            } else {
                refused(g);
            }
        }
    }

    /// The bytes it holds on the heap.
    ///
    /// ```
    /// let mut groups = momenta::GroupedCoSums::new();
    /// groups.resize(10);
    /// assert!(groups.heap_bytes() >= 10 * size_of::<momenta::ExactCoSums>());
    /// ```
    #[must_use]
    pub fn heap_bytes(&self) -> usize {
        self.pending.capacity() * size_of::<Pending>()
            + self.sums.capacity() * size_of::<ExactCoSums>()
    }

    /// Groups holding `sums`, none pending.
    #[cfg(feature = "serde")]
    pub(crate) fn from_sums(sums: Vec<ExactCoSums>) -> Self {
        Self {
            pending: alloc::vec![Pending::default(); sums.len()],
            sums,
        }
    }

    /// [`Pending::add_slow`] for `group`.
    #[inline(never)]
    fn add_slow(&mut self, group: usize, x: f64, y: f64) -> Result<bool, Error> {
        match (self.pending.get_mut(group), self.sums.get_mut(group)) {
            (Some(pending), Some(sums)) => Ok(pending.add_slow(sums, x, y)),
            _ => Err(no_group(group)),
        }
    }
}

/// The error for a group past the last.
#[cold]
fn no_group(group: usize) -> Error {
    Error::parameter("group", group as f64, "less than the number of groups")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_part_is_two_cache_lines() {
        assert_eq!(size_of::<Pending>(), 128);
    }

    #[test]
    fn the_grid_takes_its_multiples_below_its_reach_only() {
        let grid = Grid {
            scale: 4.0,
            base: -2,
        };
        let reach = 2.0_f64.powi(BITS - 2);
        let cases = [
            (0.0, Some(0)),
            (-0.0, Some(0)),
            (0.25, Some(1)),
            (-0.75, Some(-3)),
            (0.125, None),
            // The largest floats below the reach: 2^56 − 8 on the grid.
            (reach - 2.0, Some((1 << BITS) - 8)),
            (-(reach - 2.0), Some(8 - (1 << BITS))),
            (reach, None),
            (-reach, None),
            (1e-320, None),
            (f64::NAN, None),
            (f64::INFINITY, None),
        ];
        for (x, want) in cases {
            let (i, fits) = grid.fast(x);
            assert_eq!(fits.then_some(i), want, "{x:e}");
        }
        // A grid coarser than 1: the smallest float is not on it, though
        // its product by the scale underflows to 0.
        let coarse = Grid {
            scale: 0.0625,
            base: 4,
        };
        for (x, want) in [
            (5e-324, None),
            (-0.0, Some(0)),
            (48.0, Some(3)),
            (8.0, None),
        ] {
            let (i, fits) = coarse.fast(x);
            assert_eq!(fits.then_some(i), want, "{x:e} on 2^4");
        }
    }

    #[test]
    fn a_grid_stays_within_the_sums_range() {
        // Aimed at a value far above the sums' resolution: as coarse as
        // the range allows, no coarser.
        let g = Grid::aimed(-100, 1e300);
        assert_eq!(g.base, -100 + LIMIT - BITS);
        // Aimed at a value finer than the sums: the sums' own base.
        assert_eq!(Grid::aimed(0, 1e-10).base, 0);
        // 1.5 = 3·2^-1, top 1: the grid is 2^-54.
        assert_eq!(Grid::aimed(-80, 1.5).base, 1 - (BITS - 1));
        assert_eq!(Grid::aimed(-80, f64::NAN).base, -80);
    }
}
