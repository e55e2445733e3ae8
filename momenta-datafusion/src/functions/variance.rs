//! `momenta_var_pop`, `momenta_var_samp`, `momenta_stddev_pop`,
//! `momenta_stddev_samp`: one column's variance and standard deviation,
//! from [`Variance`].

use std::sync::Arc;

use datafusion::logical_expr::AggregateUDF;
use momenta::{Merge, Variance, VarianceParts};

use crate::aggregate::{Aggregate, Function, ReadExact, Statistic};

impl Statistic for Variance<f64> {
    const ARITY: usize = 1;
    const PARTS: &'static [&'static str] = &["shift", "offset", "m2"];

    fn count(&self) -> u64 {
        Variance::count(self)
    }

    fn from_columns(columns: &[&[f64]]) -> Result<Self, momenta::Error> {
        Ok(Variance::from_slice(columns[0]))
    }

    fn as_row(&self) -> Option<(f64, f64)> {
        Some((self.mean()?, 0.0))
    }

    fn push_row(&mut self, x: f64, _: f64) -> Result<(), momenta::Error> {
        self.push(x);
        Ok(())
    }

    const FROM_EXACT: Option<ReadExact<Self>> = Some(ReadExact::One(|sums| Ok(sums.to_variance())));

    fn merge(&mut self, other: &Self) {
        Merge::merge(self, other);
    }

    fn write_parts(&self, parts: &mut [f64]) {
        let p = self.to_parts();
        parts.copy_from_slice(&[p.shift, p.offset, p.m2]);
    }

    fn from_parts(count: u64, p: &[f64]) -> Result<Self, momenta::Error> {
        Variance::from_parts(VarianceParts {
            count,
            shift: p[0],
            offset: p[1],
            m2: p[2],
        })
    }
}

/// `var_pop`: `Σ(x − x̄)²/n`; NULL without rows.
#[derive(Debug)]
pub(crate) struct VarPop;

impl Function for VarPop {
    type Stat = Variance<f64>;
    fn evaluate(v: &Variance<f64>) -> Option<f64> {
        v.population_variance()
    }
}

/// `var_samp`: `Σ(x − x̄)²/(n − 1)`; NULL below two rows.
#[derive(Debug)]
pub(crate) struct VarSamp;

impl Function for VarSamp {
    type Stat = Variance<f64>;
    fn evaluate(v: &Variance<f64>) -> Option<f64> {
        v.sample_variance()
    }
}

/// `stddev_pop`: the square root of `var_pop`.
#[derive(Debug)]
pub(crate) struct StddevPop;

impl Function for StddevPop {
    type Stat = Variance<f64>;
    fn evaluate(v: &Variance<f64>) -> Option<f64> {
        v.population_variance().map(f64::sqrt)
    }
}

/// `stddev_samp`: the square root of `var_samp`.
#[derive(Debug)]
pub(crate) struct StddevSamp;

impl Function for StddevSamp {
    type Stat = Variance<f64>;
    fn evaluate(v: &Variance<f64>) -> Option<f64> {
        v.sample_variance().map(f64::sqrt)
    }
}

pub(crate) fn functions() -> Vec<Arc<AggregateUDF>> {
    vec![
        Aggregate::<VarPop>::udaf("momenta_var_pop", &["momenta_var_population"]),
        Aggregate::<VarSamp>::udaf(
            "momenta_var_samp",
            &["momenta_var", "momenta_var_sample", "momenta_variance"],
        ),
        Aggregate::<StddevPop>::udaf("momenta_stddev_pop", &[]),
        Aggregate::<StddevSamp>::udaf("momenta_stddev_samp", &["momenta_stddev"]),
    ]
}

/// DataFusion's names (and aliases) of the same functions.
pub(crate) fn builtin_names() -> Vec<Arc<AggregateUDF>> {
    vec![
        Aggregate::<VarPop>::udaf("var_pop", &["var_population"]),
        Aggregate::<VarSamp>::udaf("var", &["var_samp", "var_sample"]),
        Aggregate::<StddevPop>::udaf("stddev_pop", &[]),
        Aggregate::<StddevSamp>::udaf("stddev", &["stddev_samp"]),
    ]
}
