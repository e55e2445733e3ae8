//! The accumulator of many groups for the statistics read from exact
//! sums: `Σx` and `Σx²` (mean, variance, standard deviation: each group's
//! values in an [`ExactSums`]), and `Σxy` beside those of each column
//! (covariance, correlation: an [`ExactCoSums`]). One column's in a flat
//! vector, a cache line a group; two columns' in a [`GroupedCoSums`],
//! which keeps each group's latest rows in narrower integers (two cache
//! lines a row touches, not three).
//!
//! A row is one integer update of its group's sums: no buffer, no
//! rounding, nothing on the heap. The sums hold every value whose binade
//! lies within 94 bits of the group's others (all of `1e9 + U(0, 1)`, an
//! outlier of `1e15` among them); the rest (a NaN, an infinity, `1e300`
//! after `1e-300`) and the states merged in from other partitions go to
//! the group's [`Partial`], made the first time it is needed, as every
//! row goes in [`StatGroupsAccumulator`](super::groups) (a state of one
//! row, as partial aggregation skipped sends every row, is taken as that
//! row, into the sums when they hold it). A group's
//! statistic is its exact sums, read once (the mean and `M2` correctly
//! rounded), merged with its `Partial`'s.
//!
//! So a group's result no longer depends on how its rows were split into
//! batches, and the partial states a partition sends are as exact as an
//! `f64` state can be; only the final merge of the partitions' states
//! rounds.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, Float64Array};
use datafusion::common::Result;
use datafusion::logical_expr::{EmitTo, GroupsAccumulator};
use momenta::{ExactCoSums, ExactSums, GroupedCoSums};

use super::groups::{invalid, row_states};
use super::partial::{Partial, RUN_ROWS, one_row};
use super::{Function, Statistic, state};
use crate::input;

/// Every group's exact sums: one column's (a vector of [`ExactSums`]) or
/// two's ([`GroupedCoSums`]).
pub(super) trait Engine: Default + Send + Sync + 'static {
    /// One group's sums, as its statistic is read from them.
    type Sums;
    /// Makes it `groups` groups long (new groups empty).
    fn resize(&mut self, groups: usize);
    /// Takes the row `(x, y)` (`y` unused for one column) into `group`,
    /// a group below the length, or returns `false` and changes nothing
    /// that can be read.
    fn add(&mut self, group: usize, x: f64, y: f64) -> bool;
    /// Each of `rows` into its group's sums, `refused(i)` for a row they
    /// refuse (the core crate's `add_by_group`).
    ///
    /// # Errors
    ///
    /// A row or group out of range.
    fn add_by_group(
        &mut self,
        groups: &[usize],
        columns: (&[f64], &[f64]),
        rows: impl Iterator<Item = usize>,
        refused: impl FnMut(usize),
    ) -> Result<(), momenta::Error>;
    /// The sums of the groups `emit_to` names, taken out.
    fn take(&mut self, emit_to: EmitTo) -> Vec<Self::Sums>;
    /// How many rows a group's sums hold.
    fn count(sums: &Self::Sums) -> u64;
    /// The bytes held on the heap.
    fn heap_bytes(&self) -> usize;
}

impl Engine for Vec<ExactSums> {
    type Sums = ExactSums;
    fn resize(&mut self, groups: usize) {
        self.resize_with(groups, ExactSums::default);
    }
    #[inline]
    fn add(&mut self, group: usize, x: f64, _: f64) -> bool {
        self.get_mut(group).is_some_and(|sums| sums.add(x))
    }
    fn add_by_group(
        &mut self,
        groups: &[usize],
        (xs, _): (&[f64], &[f64]),
        rows: impl Iterator<Item = usize>,
        refused: impl FnMut(usize),
    ) -> Result<(), momenta::Error> {
        ExactSums::add_by_group(self, groups, xs, rows, refused)
    }
    fn take(&mut self, emit_to: EmitTo) -> Vec<ExactSums> {
        emit_to.take_needed(self)
    }
    fn count(sums: &ExactSums) -> u64 {
        sums.count()
    }
    fn heap_bytes(&self) -> usize {
        self.capacity() * size_of::<ExactSums>()
    }
}

impl Engine for GroupedCoSums {
    type Sums = ExactCoSums;
    fn resize(&mut self, groups: usize) {
        GroupedCoSums::resize(self, groups);
    }
    #[inline]
    fn add(&mut self, group: usize, x: f64, y: f64) -> bool {
        GroupedCoSums::add(self, group, x, y).unwrap_or(false)
    }
    fn add_by_group(
        &mut self,
        groups: &[usize],
        (xs, ys): (&[f64], &[f64]),
        rows: impl Iterator<Item = usize>,
        refused: impl FnMut(usize),
    ) -> Result<(), momenta::Error> {
        GroupedCoSums::add_by_group(self, groups, xs, ys, rows, refused)
    }
    fn take(&mut self, emit_to: EmitTo) -> Vec<ExactCoSums> {
        match emit_to {
            EmitTo::All => self.take_first(self.len()),
            EmitTo::First(n) => self.take_first(n),
        }
    }
    fn count(sums: &ExactCoSums) -> u64 {
        sums.count()
    }
    fn heap_bytes(&self) -> usize {
        GroupedCoSums::heap_bytes(self)
    }
}

/// [`GroupsAccumulator`] over a statistic read from exact sums
/// ([`Statistic::FROM_EXACT`]), the groups' sums in an `E`.
pub(super) struct ExactGroupsAccumulator<F: Function, E: Engine> {
    /// How a group's statistic is read from its sums.
    read: fn(&E::Sums) -> Result<F::Stat, momenta::Error>,
    /// Each group's rows that the integer sums hold.
    exact: E,
    /// Each group's other rows and merged states, once it has any.
    rest: Vec<Option<Box<Partial<F::Stat>>>>,
    /// How many groups have a `rest` (for [`GroupsAccumulator::size`]).
    with_rest: usize,
    /// The rows of the batch being taken in that the sums refused.
    refused: Vec<usize>,
}

impl<F: Function, E: Engine> ExactGroupsAccumulator<F, E> {
    /// No groups yet; each read by `read`.
    pub(super) fn new(read: fn(&E::Sums) -> Result<F::Stat, momenta::Error>) -> Self {
        Self {
            read,
            exact: E::default(),
            rest: Vec::new(),
            with_rest: 0,
            refused: Vec::new(),
        }
    }
}

/// The group's `Partial`, made when it has none.
fn rest_of<'a, S: Statistic>(
    rest: &'a mut Option<Box<Partial<S>>>,
    with_rest: &mut usize,
) -> &'a mut Partial<S> {
    rest.get_or_insert_with(|| {
        *with_rest += 1;
        Box::default()
    })
}

impl<F: Function, E: Engine> ExactGroupsAccumulator<F, E> {
    fn resize(&mut self, total_num_groups: usize) {
        self.exact.resize(total_num_groups);
        self.rest.resize_with(total_num_groups, || None);
    }

    /// The statistics of the groups `emit_to` names, taken out.
    fn take_totals(&mut self, emit_to: EmitTo) -> Result<Vec<F::Stat>> {
        let exact = self.exact.take(emit_to);
        let rest = emit_to.take_needed(&mut self.rest);
        self.with_rest -= rest.iter().filter(|r| r.is_some()).count();
        exact
            .iter()
            .zip(rest)
            .map(|(sums, rest)| total::<_, E>(self.read, sums, rest.map(|r| *r)))
            .collect()
    }
}

/// A group's statistic: its exact sums' merged with its `Partial`'s.
/// Without exact values, the `Partial`'s alone, so that a state merged
/// into an empty accumulator reads back the same bits.
fn total<S: Statistic, E: Engine>(
    read: fn(&E::Sums) -> Result<S, momenta::Error>,
    sums: &E::Sums,
    rest: Option<Partial<S>>,
) -> Result<S> {
    let rest = rest
        .map(Partial::into_total)
        .transpose()
        .map_err(|e| invalid(&e))?;
    if E::count(sums) == 0 {
        return Ok(rest.unwrap_or_default());
    }
    let mut total = read(sums).map_err(|e| invalid(&e))?;
    if let Some(rest) = rest.filter(|r| !r.is_empty()) {
        total.merge(&rest);
    }
    Ok(total)
}

impl<F: Function, E: Engine> GroupsAccumulator for ExactGroupsAccumulator<F, E> {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.resize(total_num_groups);
        let arity = F::Stat::ARITY;
        let (columns, present) = input::columns(values, arity, opt_filter)?;
        let (xs, ys): (&[f64], &[f64]) = (&columns[0], &columns[arity - 1]);
        let mut refused = std::mem::take(&mut self.refused);
        let refuse = |i| refused.push(i);
        let taken = match &present {
            None => {
                self.exact
                    .add_by_group(group_indices, (xs, ys), 0..group_indices.len(), refuse)
            }
            Some(p) => self
                .exact
                .add_by_group(group_indices, (xs, ys), p.set_indices(), refuse),
        };
        // The rows the sums refused, kept as the other accumulator keeps
        // every row (after the others: the sums hold them in no order).
        let kept = refused.iter().try_for_each(|&i| {
            rest_of(&mut self.rest[group_indices[i]], &mut self.with_rest)
                .push_row(xs[i], ys[i])
                .map_err(|e| invalid(&e))
        });
        refused.clear();
        self.refused = refused;
        taken.map_err(|e| invalid(&e))?;
        kept
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        total_num_groups: usize,
    ) -> Result<()> {
        self.resize(total_num_groups);
        let states = state::StateRows::new::<F::Stat>(values)?;
        for (i, &g) in group_indices.iter().enumerate().take(states.len()) {
            let Some(other) = states.get::<F::Stat>(i)? else {
                continue;
            };
            // A state of one row (every row is one when partial
            // aggregation is skipped) is that row.
            if let Some((x, y)) = one_row(&other)
                && self.exact.add(g, x, y)
            {
                continue;
            }
            rest_of(&mut self.rest[g], &mut self.with_rest)
                .merge_state(other)
                .map_err(|e| invalid(&e))?;
        }
        Ok(())
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let totals = self.take_totals(emit_to)?;
        let values: Float64Array = totals.iter().map(F::evaluate).collect();
        Ok(Arc::new(values))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let totals = self.take_totals(emit_to)?;
        Ok(state::columns(totals.iter()))
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        row_states::<F::Stat>(values, opt_filter)
    }

    fn size(&self) -> usize {
        // A group's `Partial` holds a run of rows and a few pieces: it is
        // counted so, to keep the size O(1) to compute.
        let partial =
            size_of::<Partial<F::Stat>>() + 2 * size_of::<F::Stat>() + RUN_ROWS * size_of::<f64>();
        self.exact.heap_bytes()
            + self.rest.capacity() * size_of::<Option<Box<Partial<F::Stat>>>>()
            + self.with_rest * partial
            + self.refused.capacity() * size_of::<usize>()
    }
}
