//! `momenta_skewness`, `momenta_skewness_pop`, `momenta_kurtosis`,
//! `momenta_kurtosis_pop`: the shape of one column's distribution, from
//! [`Skewness`] and [`Kurtosis`], in both conventions:
//!
//! | function | statistic | peers |
//! |---|---|---|
//! | `momenta_skewness` (`_samp`) | G1, adjusted; NULL below 3 rows | pandas `.skew()`, scipy `skew(bias=False)`, DuckDB `skewness` |
//! | `momenta_skewness_pop` | g1 = m₃/m₂^1.5 | scipy `skew()`, Spark `skewness` |
//! | `momenta_kurtosis` (`_samp`) | G2, excess, adjusted; NULL below 4 rows | pandas `.kurt()`, scipy `kurtosis(bias=False)`, DuckDB `kurtosis` |
//! | `momenta_kurtosis_pop` | g2 = m₄/m₂² − 3, excess | scipy `kurtosis()`, Spark `kurtosis`, DuckDB `kurtosis_pop` |
//!
//! All four are NULL when the variance is 0.

use std::sync::Arc;

use datafusion::logical_expr::AggregateUDF;
use momenta::{Kurtosis, KurtosisParts, Merge, Skewness, SkewnessParts};

use crate::aggregate::{Aggregate, Function, Statistic};

impl Statistic for Skewness<f64> {
    const ARITY: usize = 1;
    const PARTS: &'static [&'static str] = &["shift", "offset", "m2", "m3"];

    fn count(&self) -> u64 {
        Skewness::count(self)
    }

    fn from_columns(columns: &[&[f64]]) -> Result<Self, momenta::Error> {
        Ok(Skewness::from_slice(columns[0]))
    }

    fn as_row(&self) -> Option<(f64, f64)> {
        Some((self.mean()?, 0.0))
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
        parts.copy_from_slice(&[p.shift, p.offset, p.m2, p.m3]);
    }

    fn from_parts(count: u64, p: &[f64]) -> Result<Self, momenta::Error> {
        Skewness::from_parts(SkewnessParts {
            count,
            shift: p[0],
            offset: p[1],
            m2: p[2],
            m3: p[3],
        })
    }
}

impl Statistic for Kurtosis<f64> {
    const ARITY: usize = 1;
    const PARTS: &'static [&'static str] = &["shift", "offset", "m2", "m3", "m4"];

    fn count(&self) -> u64 {
        Kurtosis::count(self)
    }

    fn from_columns(columns: &[&[f64]]) -> Result<Self, momenta::Error> {
        Ok(Kurtosis::from_slice(columns[0]))
    }

    fn as_row(&self) -> Option<(f64, f64)> {
        Some((self.mean()?, 0.0))
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
        parts.copy_from_slice(&[p.shift, p.offset, p.m2, p.m3, p.m4]);
    }

    fn from_parts(count: u64, p: &[f64]) -> Result<Self, momenta::Error> {
        Kurtosis::from_parts(KurtosisParts {
            count,
            shift: p[0],
            offset: p[1],
            m2: p[2],
            m3: p[3],
            m4: p[4],
        })
    }
}

/// Sample skewness G1 (pandas `.skew()`).
#[derive(Debug)]
pub(crate) struct SkewnessSamp;

impl Function for SkewnessSamp {
    type Stat = Skewness<f64>;
    fn evaluate(s: &Skewness<f64>) -> Option<f64> {
        s.sample_skewness()
    }
}

/// Population skewness g1 (scipy `skew()`).
#[derive(Debug)]
pub(crate) struct SkewnessPop;

impl Function for SkewnessPop {
    type Stat = Skewness<f64>;
    fn evaluate(s: &Skewness<f64>) -> Option<f64> {
        s.skewness()
    }
}

/// Sample excess kurtosis G2 (pandas `.kurt()`).
#[derive(Debug)]
pub(crate) struct KurtosisSamp;

impl Function for KurtosisSamp {
    type Stat = Kurtosis<f64>;
    fn evaluate(k: &Kurtosis<f64>) -> Option<f64> {
        k.sample_kurtosis()
    }
}

/// Population excess kurtosis g2 (scipy `kurtosis()`).
#[derive(Debug)]
pub(crate) struct KurtosisPop;

impl Function for KurtosisPop {
    type Stat = Kurtosis<f64>;
    fn evaluate(k: &Kurtosis<f64>) -> Option<f64> {
        k.kurtosis()
    }
}

pub(crate) fn functions() -> Vec<Arc<AggregateUDF>> {
    vec![
        Aggregate::<SkewnessSamp>::udaf("momenta_skewness", &["momenta_skewness_samp"]),
        Aggregate::<SkewnessPop>::udaf("momenta_skewness_pop", &[]),
        Aggregate::<KurtosisSamp>::udaf("momenta_kurtosis", &["momenta_kurtosis_samp"]),
        Aggregate::<KurtosisPop>::udaf("momenta_kurtosis_pop", &[]),
    ]
}
