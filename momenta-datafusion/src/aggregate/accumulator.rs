//! The accumulator of one group (an aggregate without `GROUP BY`, or any
//! aggregate DataFusion does not run grouped): each batch goes through the
//! core crate's slice kernel, and the batches' statistics and the states
//! merged in are kept as a [`Partial`].

use datafusion::arrow::array::ArrayRef;
use datafusion::common::{Result, ScalarValue, exec_datafusion_err};
use datafusion::logical_expr::Accumulator;

use super::partial::Partial;
use super::{Function, Statistic, state};
use crate::input;

/// [`Accumulator`] over the statistic of `F`.
#[derive(Debug)]
pub(super) struct StatAccumulator<F: Function> {
    stat: Partial<F::Stat>,
    /// The present rows of a batch with missing ones, one buffer per
    /// argument, kept between batches.
    scratch: [Vec<f64>; 2],
}

impl<F: Function> Default for StatAccumulator<F> {
    fn default() -> Self {
        Self {
            stat: Partial::default(),
            scratch: [Vec::new(), Vec::new()],
        }
    }
}

impl<F: Function> StatAccumulator<F> {
    fn total(&self) -> Result<F::Stat> {
        self.stat.total().map_err(|e| exec_datafusion_err!("{e}"))
    }
}

/// The statistic of one batch's rows: every present row of `values`.
pub(super) fn of_batch<S: Statistic>(
    values: &[ArrayRef],
    scratch: &mut [Vec<f64>; 2],
) -> Result<S> {
    let arity = S::ARITY;
    let (columns, present) = input::columns(values, arity, None)?;
    let stat = match present {
        None => {
            let slices: Vec<&[f64]> = columns.iter().map(AsRef::as_ref).collect();
            S::from_columns(&slices)
        }
        Some(present) => {
            for (buffer, column) in scratch.iter_mut().zip(&columns) {
                buffer.clear();
                buffer.extend(present.set_indices().map(|i| column[i]));
            }
            let slices: Vec<&[f64]> = scratch[..arity].iter().map(Vec::as_slice).collect();
            S::from_columns(&slices)
        }
    };
    stat.map_err(|e| exec_datafusion_err!("{e}"))
}

impl<F: Function> Accumulator for StatAccumulator<F> {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let batch = of_batch::<F::Stat>(values, &mut self.scratch)?;
        self.stat.add(batch);
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let rows = state::StateRows::new::<F::Stat>(states)?;
        for i in 0..rows.len() {
            if let Some(other) = rows.get::<F::Stat>(i)? {
                self.stat
                    .merge_state(other)
                    .map_err(|e| exec_datafusion_err!("{e}"))?;
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(state::scalars(&self.total()?))
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(F::evaluate(&self.total()?)))
    }

    fn size(&self) -> usize {
        size_of_val(self)
            + self.stat.heap_size()
            + self.scratch.iter().map(|s| s.capacity() * 8).sum::<usize>()
    }
}
