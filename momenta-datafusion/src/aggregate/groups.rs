//! The accumulator of many groups (`GROUP BY`): every group's statistic
//! in one vector, each batch sorted out by group in two passes.
//!
//! A group with many rows in a batch (at least [`RUN_ROWS`]) has them
//! gathered into one run and taken by the core crate's slice kernel, as
//! an ungrouped aggregate takes a whole batch; a group with a few buffers
//! them until it has a run's worth. Either way the pieces end up in
//! the group's [`Partial`], so that GROUP BY 4 and GROUP BY 10⁵ round
//! like the ungrouped aggregate, not like a chain of 10⁶ pushes (which
//! on `1e9 + U(0, 1)` is 400 ulps off).

use std::borrow::Cow;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, BooleanArray, Float64Array};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::common::{Result, exec_datafusion_err};
use datafusion::logical_expr::{EmitTo, GroupsAccumulator};

use super::partial::{Partial, RUN_ROWS};
use super::{Function, Statistic, state};
use crate::input;

/// [`GroupsAccumulator`] over the statistic of `F`.
pub(super) struct StatGroupsAccumulator<F: Function> {
    groups: Vec<Partial<F::Stat>>,
    /// Each group's rows in the batch being taken in; 0 between batches.
    rows: Vec<u32>,
    /// For a group gathered into one run: where its next row goes.
    cursor: Vec<u32>,
    /// The groups with rows in the batch being taken in.
    touched: Vec<usize>,
    /// The gathered runs, one buffer per argument.
    gathered: [Vec<f64>; 2],
}

impl<F: Function> Default for StatGroupsAccumulator<F> {
    fn default() -> Self {
        Self {
            groups: Vec::new(),
            rows: Vec::new(),
            cursor: Vec::new(),
            touched: Vec::new(),
            gathered: [Vec::new(), Vec::new()],
        }
    }
}

/// Calls `f` with each present row's index, in order.
#[inline]
pub(super) fn for_each_row(
    present: Option<&BooleanBuffer>,
    rows: usize,
    f: impl FnMut(usize) -> Result<()>,
) -> Result<()> {
    match present {
        None => (0..rows).try_for_each(f),
        Some(p) => p.set_indices().try_for_each(f),
    }
}

/// momenta's error as DataFusion's.
pub(super) fn invalid(e: &momenta::Error) -> datafusion::error::DataFusionError {
    exec_datafusion_err!("{e}")
}

/// Each present row's state, as columns (`convert_to_state`: the path
/// when partial aggregation is skipped).
pub(super) fn row_states<S: Statistic>(
    values: &[ArrayRef],
    opt_filter: Option<&BooleanArray>,
) -> Result<Vec<ArrayRef>> {
    let arity = S::ARITY;
    let (columns, present) = input::columns(values, arity, opt_filter)?;
    let (xs, ys) = (&columns[0], &columns[arity - 1]);
    let mut states = vec![S::default(); xs.len()];
    for_each_row(present.as_ref(), xs.len(), |i| {
        states[i].push_row(xs[i], ys[i]).map_err(|e| invalid(&e))
    })?;
    Ok(state::columns(states.iter()))
}

impl<F: Function> StatGroupsAccumulator<F> {
    fn resize(&mut self, total_num_groups: usize) {
        self.groups.resize_with(total_num_groups, Partial::default);
        self.rows.resize(total_num_groups, 0);
        self.cursor.resize(total_num_groups, 0);
    }

    /// The three passes of `update_batch`; the per-batch counts are left
    /// non-zero on an error, which `update_batch` clears.
    fn take_batch(
        &mut self,
        columns: &[Cow<'_, [f64]>],
        group_indices: &[usize],
        present: Option<&BooleanBuffer>,
    ) -> Result<()> {
        let arity = F::Stat::ARITY;
        let xs: &[f64] = &columns[0];
        let ys: &[f64] = &columns[arity - 1];
        // 1. Count each group's rows.
        for_each_row(present, group_indices.len(), |i| {
            let g = group_indices[i];
            if self.rows[g] == 0 {
                self.touched.push(g);
            }
            self.rows[g] += 1;
            Ok(())
        })?;
        // 2. Give each large group a run of the gathering buffers.
        let mut end = 0_u32;
        for &g in &self.touched {
            if self.rows[g] as usize >= RUN_ROWS {
                self.cursor[g] = end;
                end += self.rows[g];
            }
        }
        for buffer in &mut self.gathered[..arity] {
            buffer.resize(end as usize, 0.0);
        }
        // 3. Push each small group's rows, gather each large group's.
        let (groups, rows, cursor) = (&mut self.groups, &self.rows, &mut self.cursor);
        let [gx, gy] = &mut self.gathered;
        for_each_row(present, group_indices.len(), |i| {
            let g = group_indices[i];
            if (rows[g] as usize) < RUN_ROWS {
                groups[g].push_row(xs[i], ys[i]).map_err(|e| invalid(&e))
            } else {
                let at = cursor[g] as usize;
                gx[at] = xs[i];
                if arity == 2 {
                    gy[at] = ys[i];
                }
                cursor[g] += 1;
                Ok(())
            }
        })?;
        // 4. Take each run through the slice kernel.
        for &g in &self.touched {
            let n = self.rows[g];
            if n as usize >= RUN_ROWS {
                let run = (self.cursor[g] - n) as usize..self.cursor[g] as usize;
                let x = &self.gathered[0][run.clone()];
                let y = if arity == 2 {
                    &self.gathered[1][run]
                } else {
                    x
                };
                let piece = F::Stat::from_columns(&[x, y][..arity]).map_err(|e| invalid(&e))?;
                self.groups[g].add(piece);
            }
        }
        Ok(())
    }
}

impl<F: Function> GroupsAccumulator for StatGroupsAccumulator<F> {
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
        let taken = self.take_batch(&columns, group_indices, present.as_ref());
        for &g in &self.touched {
            self.rows[g] = 0;
        }
        self.touched.clear();
        taken
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
            if let Some(other) = states.get::<F::Stat>(i)? {
                self.groups[g].merge_state(other).map_err(|e| invalid(&e))?;
            }
        }
        Ok(())
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let emitted = emit_to.take_needed(&mut self.groups);
        let values = emitted
            .into_iter()
            .map(|group| group.into_total().map(|s| F::evaluate(&s)))
            .collect::<Result<Float64Array, _>>()
            .map_err(|e| invalid(&e))?;
        Ok(Arc::new(values))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        let emitted = emit_to.take_needed(&mut self.groups);
        let totals = emitted
            .into_iter()
            .map(Partial::into_total)
            .collect::<Result<Vec<F::Stat>, _>>()
            .map_err(|e| invalid(&e))?;
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
        // Each group's stack of pieces is counted as two pieces (it holds
        // a few), so that the size is O(1) to compute.
        self.groups.capacity() * (size_of::<Partial<F::Stat>>() + 2 * size_of::<F::Stat>())
            + (self.rows.capacity() + self.cursor.capacity()) * size_of::<u32>()
            + self.touched.capacity() * size_of::<usize>()
            + self
                .gathered
                .iter()
                .map(|g| g.capacity() * 8)
                .sum::<usize>()
    }
}
