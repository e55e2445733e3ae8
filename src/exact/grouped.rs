//! Whole columns into many groups' exact sums at once: the inner loop of
//! a `GROUP BY`, for [`ExactSums`] and [`ExactCoSums`].
//!
//! A row's group is a random place in memory: with many groups the sums
//! outgrow the caches, and a loop that waits for each row's sums runs at
//! the memory's latency. So while it takes a row, the loop asks for the
//! sums of the group [`AHEAD`] rows on (a prefetch, which never faults),
//! and the memory serves many rows at once. On 10⁵ groups of `1e9 + U(0,
//! 1)` (6.4 MB of sums) this took a row from 30–70 ns to 8–15 ns on an
//! AMD EPYC 7003 guest. Sums that outgrow the L1 cache gain too: on 10³
//! groups (64 KB of [`ExactSums`], 192 KB of [`ExactCoSums`]) the rows
//! went from 4.0–4.1 ns to 3.9–4.0, and from 10.6–12.0 ns to 9.6–9.9. The
//! loop asks only when the sums are larger than [`PREFETCH_BYTES`]. It
//! asks for every cache line of a group's sums, and it asks on every CPU:
//! the slice kernels leave prefetching to AMD's hardware prefetcher, which
//! follows streams but cannot guess the next group. (When this loop
//! followed their choice, on the same guest 10⁵ groups took 16–22 ns/row
//! for [`ExactSums`] and 94–104 for [`ExactCoSums`], against 8 and 28 with
//! the requests.)

use crate::kernels::prefetch_line;
use crate::{Error, ExactCoSums, ExactSums};

/// How many rows ahead the loop asks for a group's sums.
const AHEAD: usize = 16;

/// The bytes of a cache line.
const LINE: usize = 64;

/// The sums' size from which the loop asks ahead: the L1 data cache of
/// the CPUs it was measured on.
const PREFETCH_BYTES: usize = 32 * 1024;

/// Asks for every cache line of the sums at `sums` (an [`ExactCoSums`]
/// spans three). A hint, which never faults: `sums` need not point into
/// the slice.
#[inline(always)]
#[allow(clippy::inline_always, reason = "a hint inside the hot loop")]
fn ask_for<E>(sums: *const E) {
    let start = sums.cast::<u8>();
    for offset in (0..size_of::<E>()).step_by(LINE) {
        prefetch_line::<true, u8>(start.wrapping_add(offset));
    }
}

/// `add(sums[groups[i]], i)` for each row `i` of `rows`, `refused(i)`
/// where it returns `false` (the loop of every `add_by_group`, and of
/// [`GroupedCoSums`](crate::GroupedCoSums)).
pub(crate) fn by_group<E>(
    sums: &mut [E],
    groups: &[usize],
    rows: impl IntoIterator<Item = usize>,
    mut add: impl FnMut(&mut E, usize) -> bool,
    mut refused: impl FnMut(usize),
) -> Result<(), Error> {
    let ask = size_of_val(sums) > PREFETCH_BYTES;
    let start = sums.as_ptr();
    for i in rows {
        let &g = groups
            .get(i)
            .ok_or_else(|| Error::parameter("row", i as f64, "a row of the columns"))?;
        if ask && let Some(&ahead) = groups.get(i + AHEAD) {
            // Unchecked: a group past the last is found out when its row
            // comes, and the hint cannot fault.
            ask_for(start.wrapping_add(ahead));
        }
        let sums = sums
            .get_mut(g)
            .ok_or_else(|| Error::parameter("group", g as f64, "less than the number of sums"))?;
        if !add(sums, i) {
            refused(i);
        }
    }
    Ok(())
}

impl ExactSums {
    /// Adds each row's value to its group's sums: `xs[i]` to
    /// `sums[groups[i]]` for each row `i` of `rows` in order, as
    /// [`add`](Self::add) would one by one; `refused(i)` is called for
    /// each row whose value its group's sums refuse (a NaN, an infinity,
    /// a value too far from the group's others), for the caller to keep
    /// another way.
    ///
    /// With many groups it is faster than a loop of `add`: while it takes
    /// a row it asks the memory for the sums of the group 16 rows on.
    ///
    /// # Errors
    ///
    /// A row beyond `groups` or `xs`, or a group beyond `sums`
    /// ([`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)):
    /// the rows before it are taken, none after.
    ///
    /// ```
    /// use momenta::ExactSums;
    ///
    /// let mut sums = vec![ExactSums::new(); 2];
    /// let (groups, xs) = ([0, 1, 0, 1, 0], [1.0, 10.0, 3.0, f64::NAN, 5.0]);
    /// let mut refused = Vec::new();
    /// ExactSums::add_by_group(&mut sums, &groups, &xs, 0..5, |i| refused.push(i))?;
    /// assert_eq!(sums[0].mean(), Some(3.0));
    /// assert_eq!(sums[1].count(), 1);
    /// assert_eq!(refused, [3]);
    /// assert!(ExactSums::add_by_group(&mut sums, &[2], &[1.0], 0..1, |_| {}).is_err());
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn add_by_group(
        sums: &mut [ExactSums],
        groups: &[usize],
        xs: &[f64],
        rows: impl IntoIterator<Item = usize>,
        refused: impl FnMut(usize),
    ) -> Result<(), Error> {
        let xs = &xs[..xs.len().min(groups.len())];
        by_group(
            sums,
            &groups[..xs.len()],
            rows,
            |s, i| s.add(xs[i]),
            refused,
        )
    }
}

impl ExactCoSums {
    /// Adds each row's pair to its group's sums: `(xs[i], ys[i])` to
    /// `sums[groups[i]]` for each row `i` of `rows` in order, as
    /// [`add`](Self::add) would one by one; `refused(i)` is called for
    /// each row whose pair its group's sums refuse, for the caller to
    /// keep another way. With many groups it asks for the sums of the
    /// group 16 rows on while it takes a row, as
    /// [`ExactSums::add_by_group`] does. A
    /// [`GroupedCoSums`](crate::GroupedCoSums) gives the same sums
    /// faster, at 128 more bytes a group.
    ///
    /// # Errors
    ///
    /// A row beyond `groups`, `xs` or `ys`, or a group beyond `sums`
    /// ([`ErrorKind::InvalidParameter`](crate::ErrorKind::InvalidParameter)):
    /// the rows before it are taken, none after.
    ///
    /// ```
    /// use momenta::ExactCoSums;
    ///
    /// let mut sums = vec![ExactCoSums::new(); 2];
    /// let groups = [0, 0, 1, 0];
    /// let (xs, ys) = ([1.0, 2.0, 5.0, 3.0], [2.0, 4.0, 1.0, 6.0]);
    /// ExactCoSums::add_by_group(&mut sums, &groups, &xs, &ys, 0..4, |_| {})?;
    /// assert_eq!(sums[0].to_covariance().correlation(), Some(1.0));
    /// assert_eq!(sums[1].count(), 1);
    /// # Ok::<(), momenta::Error>(())
    /// ```
    pub fn add_by_group(
        sums: &mut [ExactCoSums],
        groups: &[usize],
        xs: &[f64],
        ys: &[f64],
        rows: impl IntoIterator<Item = usize>,
        refused: impl FnMut(usize),
    ) -> Result<(), Error> {
        let n = groups.len().min(xs.len()).min(ys.len());
        let (xs, ys) = (&xs[..n], &ys[..n]);
        by_group(
            sums,
            &groups[..n],
            rows,
            |s, i| s.add(xs[i], ys[i]),
            refused,
        )
    }
}
