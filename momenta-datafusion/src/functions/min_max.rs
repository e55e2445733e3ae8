//! `momenta_min`, `momenta_max`, `momenta_range`, from [`MinMax`]. Unlike
//! SQL's `min`/`max`, which order NaN above every number, a NaN makes all
//! three NaN (momenta's policy: NaN propagates).

use std::sync::Arc;

use datafusion::logical_expr::AggregateUDF;
use momenta::{Merge, MinMax, MinMaxParts};

use crate::aggregate::{Aggregate, Function, Statistic};

impl Statistic for MinMax<f64> {
    const ARITY: usize = 1;
    const PARTS: &'static [&'static str] = &["min", "max"];

    fn count(&self) -> u64 {
        MinMax::count(self)
    }

    fn from_columns(columns: &[&[f64]]) -> Result<Self, momenta::Error> {
        Ok(MinMax::from_slice(columns[0]))
    }

    fn as_row(&self) -> Option<(f64, f64)> {
        Some((self.min()?, 0.0))
    }

    fn push_row(&mut self, x: f64, _: f64) -> Result<(), momenta::Error> {
        self.push(x);
        Ok(())
    }

    fn merge(&mut self, other: &Self) {
        Merge::merge(self, other);
    }

    fn write_parts(&self, parts: &mut [f64]) {
        let p = self.to_parts();
        parts.copy_from_slice(&[p.min, p.max]);
    }

    fn from_parts(count: u64, p: &[f64]) -> Result<Self, momenta::Error> {
        MinMax::from_parts(MinMaxParts {
            count,
            min: p[0],
            max: p[1],
        })
    }
}

/// The smallest value; NaN if any value is NaN.
#[derive(Debug)]
pub(crate) struct Min;

impl Function for Min {
    type Stat = MinMax<f64>;
    fn evaluate(m: &MinMax<f64>) -> Option<f64> {
        m.min()
    }
}

/// The largest value; NaN if any value is NaN.
#[derive(Debug)]
pub(crate) struct Max;

impl Function for Max {
    type Stat = MinMax<f64>;
    fn evaluate(m: &MinMax<f64>) -> Option<f64> {
        m.max()
    }
}

/// `max − min`; NaN if any value is NaN.
#[derive(Debug)]
pub(crate) struct Range;

impl Function for Range {
    type Stat = MinMax<f64>;
    fn evaluate(m: &MinMax<f64>) -> Option<f64> {
        m.range()
    }
}

pub(crate) fn functions() -> Vec<Arc<AggregateUDF>> {
    vec![
        Aggregate::<Min>::udaf("momenta_min", &[]),
        Aggregate::<Max>::udaf("momenta_max", &[]),
        Aggregate::<Range>::udaf("momenta_range", &[]),
    ]
}
