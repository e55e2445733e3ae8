//! `momenta_weighted_mean(x, w)` and the weighted variances and standard
//! deviations, from [`WeightedMean`] and [`WeightedVariance`]. A weight
//! must be finite and ≥ 0 (anything else fails the query, naming the
//! weight); a row counts when both values are present. Every function is
//! NULL while Σw = 0.
//!
//! | function | divisor | weights |
//! |---|---|---|
//! | `momenta_weighted_var_pop` (`momenta_weighted_var`) | Σw | any |
//! | `momenta_weighted_var_samp` | Σw − 1; NULL while Σw ≤ 1 | frequency (counts) |
//! | `momenta_weighted_var_reliability` | Σw − Σw²/Σw; NULL below two positive weights | reliability |
//!
//! and `momenta_weighted_stddev_pop` (`momenta_weighted_stddev`), `_samp`,
//! `_reliability`, their square roots.

use std::sync::Arc;

use datafusion::logical_expr::AggregateUDF;
use momenta::{Merge, WeightedMean, WeightedMeanParts, WeightedVariance, WeightedVarianceParts};

use crate::aggregate::{Aggregate, Function, Statistic};

impl Statistic for WeightedMean<f64> {
    const ARITY: usize = 2;
    const PARTS: &'static [&'static str] = &["total_weight", "shift", "offset"];

    fn count(&self) -> u64 {
        WeightedMean::count(self)
    }

    fn is_empty(&self) -> bool {
        self.to_parts() == WeightedMeanParts::default()
    }

    fn from_columns(columns: &[&[f64]]) -> Result<Self, momenta::Error> {
        WeightedMean::from_slices(columns[0], columns[1])
    }

    fn check_row(x: f64, w: f64) -> Result<(), momenta::Error> {
        WeightedMean::new().push(x, w)
    }

    fn as_row(&self) -> Option<(f64, f64)> {
        Some((self.mean()?, self.total_weight()))
    }

    fn push_row(&mut self, x: f64, w: f64) -> Result<(), momenta::Error> {
        self.push(x, w)
    }

    fn merge(&mut self, other: &Self) {
        Merge::merge(self, other);
    }

    fn write_parts(&self, parts: &mut [f64]) {
        let p = self.to_parts();
        parts.copy_from_slice(&[p.total_weight, p.shift, p.offset]);
    }

    fn from_parts(count: u64, p: &[f64]) -> Result<Self, momenta::Error> {
        WeightedMean::from_parts(WeightedMeanParts {
            count,
            total_weight: p[0],
            shift: p[1],
            offset: p[2],
        })
    }
}

impl Statistic for WeightedVariance<f64> {
    const ARITY: usize = 2;
    const PARTS: &'static [&'static str] = &[
        "total_weight",
        "reliability_divisor",
        "shift",
        "offset",
        "m2",
    ];

    fn count(&self) -> u64 {
        WeightedVariance::count(self)
    }

    fn is_empty(&self) -> bool {
        self.to_parts() == WeightedVarianceParts::default()
    }

    fn from_columns(columns: &[&[f64]]) -> Result<Self, momenta::Error> {
        WeightedVariance::from_slices(columns[0], columns[1])
    }

    fn check_row(x: f64, w: f64) -> Result<(), momenta::Error> {
        WeightedMean::new().push(x, w)
    }

    fn as_row(&self) -> Option<(f64, f64)> {
        Some((self.mean()?, self.total_weight()))
    }

    fn push_row(&mut self, x: f64, w: f64) -> Result<(), momenta::Error> {
        self.push(x, w)
    }

    fn merge(&mut self, other: &Self) {
        Merge::merge(self, other);
    }

    fn write_parts(&self, parts: &mut [f64]) {
        let p = self.to_parts();
        parts.copy_from_slice(&[
            p.total_weight,
            p.reliability_divisor,
            p.shift,
            p.offset,
            p.m2,
        ]);
    }

    fn from_parts(count: u64, p: &[f64]) -> Result<Self, momenta::Error> {
        WeightedVariance::from_parts(WeightedVarianceParts {
            count,
            total_weight: p[0],
            reliability_divisor: p[1],
            shift: p[2],
            offset: p[3],
            m2: p[4],
        })
    }
}

/// `Σwx/Σw`.
#[derive(Debug)]
pub(crate) struct Mean;

impl Function for Mean {
    type Stat = WeightedMean<f64>;
    fn evaluate(m: &WeightedMean<f64>) -> Option<f64> {
        m.mean()
    }
}

/// `Σw(x − x̄)²/Σw`.
#[derive(Debug)]
pub(crate) struct VarPop;

impl Function for VarPop {
    type Stat = WeightedVariance<f64>;
    fn evaluate(v: &WeightedVariance<f64>) -> Option<f64> {
        v.population_variance()
    }
}

/// `Σw(x − x̄)²/(Σw − 1)`: frequency weights.
#[derive(Debug)]
pub(crate) struct VarSamp;

impl Function for VarSamp {
    type Stat = WeightedVariance<f64>;
    fn evaluate(v: &WeightedVariance<f64>) -> Option<f64> {
        v.sample_variance()
    }
}

/// `Σw(x − x̄)²/(Σw − Σw²/Σw)`: reliability weights.
#[derive(Debug)]
pub(crate) struct VarReliability;

impl Function for VarReliability {
    type Stat = WeightedVariance<f64>;
    fn evaluate(v: &WeightedVariance<f64>) -> Option<f64> {
        v.reliability_variance()
    }
}

/// The square root of [`VarPop`].
#[derive(Debug)]
pub(crate) struct StddevPop;

impl Function for StddevPop {
    type Stat = WeightedVariance<f64>;
    fn evaluate(v: &WeightedVariance<f64>) -> Option<f64> {
        v.population_variance().map(f64::sqrt)
    }
}

/// The square root of [`VarSamp`].
#[derive(Debug)]
pub(crate) struct StddevSamp;

impl Function for StddevSamp {
    type Stat = WeightedVariance<f64>;
    fn evaluate(v: &WeightedVariance<f64>) -> Option<f64> {
        v.sample_variance().map(f64::sqrt)
    }
}

/// The square root of [`VarReliability`].
#[derive(Debug)]
pub(crate) struct StddevReliability;

impl Function for StddevReliability {
    type Stat = WeightedVariance<f64>;
    fn evaluate(v: &WeightedVariance<f64>) -> Option<f64> {
        v.reliability_variance().map(f64::sqrt)
    }
}

pub(crate) fn functions() -> Vec<Arc<AggregateUDF>> {
    vec![
        Aggregate::<Mean>::udaf("momenta_weighted_mean", &["momenta_weighted_avg"]),
        Aggregate::<VarPop>::udaf("momenta_weighted_var_pop", &["momenta_weighted_var"]),
        Aggregate::<VarSamp>::udaf("momenta_weighted_var_samp", &[]),
        Aggregate::<VarReliability>::udaf("momenta_weighted_var_reliability", &[]),
        Aggregate::<StddevPop>::udaf("momenta_weighted_stddev_pop", &["momenta_weighted_stddev"]),
        Aggregate::<StddevSamp>::udaf("momenta_weighted_stddev_samp", &[]),
        Aggregate::<StddevReliability>::udaf("momenta_weighted_stddev_reliability", &[]),
    ]
}
