//! `momenta_mean` (`momenta_avg`), from [`Mean`]: the mean of one column,
//! finite wherever it is representable (4000 rows of 1e306 have mean
//! 1e306, where a sum overflows).

use std::sync::Arc;

use datafusion::logical_expr::AggregateUDF;
use momenta::{Mean, MeanParts, Merge};

use crate::aggregate::{Aggregate, Function, ReadExact, Statistic};

impl Statistic for Mean<f64> {
    const ARITY: usize = 1;
    const PARTS: &'static [&'static str] = &["mean"];

    fn count(&self) -> u64 {
        Mean::count(self)
    }

    fn from_columns(columns: &[&[f64]]) -> Result<Self, momenta::Error> {
        Ok(Mean::from_slice(columns[0]))
    }

    fn as_row(&self) -> Option<(f64, f64)> {
        Some((self.mean()?, 0.0))
    }

    fn push_row(&mut self, x: f64, _: f64) -> Result<(), momenta::Error> {
        self.push(x);
        Ok(())
    }

    const FROM_EXACT: Option<ReadExact<Self>> = Some(ReadExact::One(|sums| {
        Mean::from_parts(MeanParts {
            count: sums.count(),
            mean: sums.mean().unwrap_or(0.0),
        })
    }));

    fn merge(&mut self, other: &Self) {
        Merge::merge(self, other);
    }

    fn write_parts(&self, parts: &mut [f64]) {
        parts[0] = self.to_parts().mean;
    }

    fn from_parts(count: u64, p: &[f64]) -> Result<Self, momenta::Error> {
        Mean::from_parts(MeanParts { count, mean: p[0] })
    }
}

/// `Σx/n`; NULL without rows.
#[derive(Debug)]
pub(crate) struct Avg;

impl Function for Avg {
    type Stat = Mean<f64>;
    fn evaluate(m: &Mean<f64>) -> Option<f64> {
        m.mean()
    }
}

pub(crate) fn functions() -> Vec<Arc<AggregateUDF>> {
    vec![Aggregate::<Avg>::udaf("momenta_mean", &["momenta_avg"])]
}
