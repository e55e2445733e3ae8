//! `momenta_covar_pop`, `momenta_covar_samp`, `momenta_corr`: two columns'
//! covariance and Pearson correlation, from [`Covariance`]. A row counts
//! when both values are present.

use std::sync::Arc;

use datafusion::logical_expr::AggregateUDF;
use momenta::{Covariance, CovarianceParts, Merge};

use crate::aggregate::{Aggregate, Function, ReadExact, Statistic};

impl Statistic for Covariance<f64> {
    const ARITY: usize = 2;
    const PARTS: &'static [&'static str] = &[
        "shift_x", "offset_x", "m2_x", "shift_y", "offset_y", "m2_y", "comoment",
    ];

    fn count(&self) -> u64 {
        Covariance::count(self)
    }

    fn from_columns(columns: &[&[f64]]) -> Result<Self, momenta::Error> {
        Covariance::from_slices(columns[0], columns[1])
    }

    fn as_row(&self) -> Option<(f64, f64)> {
        Some((self.mean_x()?, self.mean_y()?))
    }

    fn push_row(&mut self, x: f64, y: f64) -> Result<(), momenta::Error> {
        self.push(x, y);
        Ok(())
    }

    const FROM_EXACT: Option<ReadExact<Self>> =
        Some(ReadExact::Two(|sums| Ok(sums.to_covariance())));

    fn merge(&mut self, other: &Self) {
        Merge::merge(self, other);
    }

    fn write_parts(&self, parts: &mut [f64]) {
        let p = self.to_parts();
        parts.copy_from_slice(&[
            p.shift_x, p.offset_x, p.m2_x, p.shift_y, p.offset_y, p.m2_y, p.comoment,
        ]);
    }

    fn from_parts(count: u64, p: &[f64]) -> Result<Self, momenta::Error> {
        Covariance::from_parts(CovarianceParts {
            count,
            shift_x: p[0],
            offset_x: p[1],
            m2_x: p[2],
            shift_y: p[3],
            offset_y: p[4],
            m2_y: p[5],
            comoment: p[6],
        })
    }
}

/// `covar_pop`: `Σ(x − x̄)(y − ȳ)/n`; NULL without rows.
#[derive(Debug)]
pub(crate) struct CovarPop;

impl Function for CovarPop {
    type Stat = Covariance<f64>;
    fn evaluate(c: &Covariance<f64>) -> Option<f64> {
        c.population_covariance()
    }
}

/// `covar_samp`: `Σ(x − x̄)(y − ȳ)/(n − 1)`; NULL below two rows.
#[derive(Debug)]
pub(crate) struct CovarSamp;

impl Function for CovarSamp {
    type Stat = Covariance<f64>;
    fn evaluate(c: &Covariance<f64>) -> Option<f64> {
        c.sample_covariance()
    }
}

/// `corr`: Pearson's r, within [−1, 1]; NULL below two rows or when a
/// column is constant.
#[derive(Debug)]
pub(crate) struct Corr;

impl Function for Corr {
    type Stat = Covariance<f64>;
    fn evaluate(c: &Covariance<f64>) -> Option<f64> {
        c.correlation()
    }
}

pub(crate) fn functions() -> Vec<Arc<AggregateUDF>> {
    vec![
        Aggregate::<CovarPop>::udaf("momenta_covar_pop", &[]),
        Aggregate::<CovarSamp>::udaf("momenta_covar_samp", &["momenta_covar"]),
        Aggregate::<Corr>::udaf("momenta_corr", &[]),
    ]
}

/// DataFusion's names (and aliases) of the same functions.
pub(crate) fn builtin_names() -> Vec<Arc<AggregateUDF>> {
    vec![
        Aggregate::<CovarPop>::udaf("covar_pop", &[]),
        Aggregate::<CovarSamp>::udaf("covar_samp", &["covar"]),
        Aggregate::<Corr>::udaf("corr", &[]),
    ]
}
