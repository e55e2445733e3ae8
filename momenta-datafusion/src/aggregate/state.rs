//! A statistic's state as Arrow columns and scalars, and back: `count`
//! as `UInt64`, then the `f64` fields of `to_parts` as `Float64`.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, Float64Array, UInt64Array};
use datafusion::arrow::datatypes::{Float64Type, UInt64Type};
use datafusion::common::{Result, ScalarValue, exec_datafusion_err, exec_err};

use super::Statistic;

/// The widest `to_parts`: `Covariance`'s seven `f64` fields.
pub(super) const MAX_PARTS: usize = 8;

/// The state of `stat` as scalars, for [`Accumulator::state`].
///
/// [`Accumulator::state`]: datafusion::logical_expr::Accumulator::state
pub(super) fn scalars<S: Statistic>(stat: &S) -> Vec<ScalarValue> {
    let mut parts = [0.0; MAX_PARTS];
    let parts = &mut parts[..S::PARTS.len()];
    stat.write_parts(parts);
    std::iter::once(ScalarValue::UInt64(Some(stat.count())))
        .chain(parts.iter().map(|&p| ScalarValue::Float64(Some(p))))
        .collect()
}

/// The states of `stats` as columns, one row each.
pub(super) fn columns<'a, S: Statistic>(
    stats: impl ExactSizeIterator<Item = &'a S>,
) -> Vec<ArrayRef> {
    let rows = stats.len();
    let mut counts = Vec::with_capacity(rows);
    let mut columns: Vec<Vec<f64>> = S::PARTS.iter().map(|_| Vec::with_capacity(rows)).collect();
    let mut parts = [0.0; MAX_PARTS];
    let parts = &mut parts[..S::PARTS.len()];
    for stat in stats {
        counts.push(stat.count());
        stat.write_parts(parts);
        for (column, &p) in columns.iter_mut().zip(parts.iter()) {
            column.push(p);
        }
    }
    std::iter::once(Arc::new(UInt64Array::from(counts)) as ArrayRef)
        .chain(
            columns
                .into_iter()
                .map(|c| Arc::new(Float64Array::from(c)) as ArrayRef),
        )
        .collect()
}

/// State columns as they arrive in `merge_batch`, read row by row.
pub(super) struct StateRows<'a> {
    counts: &'a UInt64Array,
    parts: Vec<&'a Float64Array>,
}

impl<'a> StateRows<'a> {
    /// Checks that `columns` are `count` and the statistic's parts.
    pub(super) fn new<S: Statistic>(columns: &'a [ArrayRef]) -> Result<Self> {
        if columns.len() != 1 + S::PARTS.len() {
            return exec_err!(
                "momenta: a state has {} columns, got {}",
                1 + S::PARTS.len(),
                columns.len()
            );
        }
        let counts = columns[0]
            .as_primitive_opt::<UInt64Type>()
            .ok_or_else(|| exec_datafusion_err!("momenta: the count column is not UInt64"))?;
        let parts = columns[1..]
            .iter()
            .map(|c| {
                c.as_primitive_opt::<Float64Type>()
                    .ok_or_else(|| exec_datafusion_err!("momenta: a state column is not Float64"))
            })
            .collect::<Result<_>>()?;
        Ok(Self { counts, parts })
    }

    /// The state in row `i`, or `None` when it is empty (or NULL):
    /// merging it would change nothing.
    pub(super) fn get<S: Statistic>(&self, i: usize) -> Result<Option<S>> {
        if self.counts.is_null(i) {
            return Ok(None);
        }
        let count = self.counts.value(i);
        let mut parts = [0.0; MAX_PARTS];
        let parts = &mut parts[..S::PARTS.len()];
        for (p, column) in parts.iter_mut().zip(&self.parts) {
            *p = column.value(i);
        }
        let stat = S::from_parts(count, parts)
            .map_err(|e| exec_datafusion_err!("momenta: invalid state: {e}"))?;
        Ok((!stat.is_empty()).then_some(stat))
    }

    /// The number of rows.
    pub(super) fn len(&self) -> usize {
        self.counts.len()
    }
}
