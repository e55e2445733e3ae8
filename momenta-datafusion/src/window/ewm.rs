//! Exponentially weighted statistics, pandas' `ewm`, from [`Ema`],
//! [`EwVariance`] and [`EwCovariance`]:
//!
//! - `momenta_ewm_mean(x, alpha [, adjust])`, `momenta_ewm_var`,
//!   `momenta_ewm_var_pop`, `momenta_ewm_std`, `momenta_ewm_std_pop`;
//! - `momenta_ewm_cov(x, y, alpha [, adjust])`, `momenta_ewm_cov_pop`,
//!   `momenta_ewm_corr`;
//! - and each with `_by` for irregular rows: `momenta_ewm_mean_by(x, t,
//!   half_life [, adjust])`, where the past decays by `2^(−Δt/half_life)`
//!   over the time Δt between rows (`t` a number, a timestamp or a date;
//!   `half_life` in `t`'s unit for a number, seconds or an `INTERVAL` for
//!   a timestamp or date).
//!
//! `alpha` is the weight of the new value (pandas' `alpha`); `adjust`
//! (default `true`, as pandas) picks pandas' adjusted weights, `false` the
//! recursive ones. `_var`, `_std` and `_cov` are pandas' defaults
//! (`bias=False`); `_pop` is `bias=True`.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Array};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, exec_datafusion_err, plan_datafusion_err, plan_err};
use datafusion::logical_expr::function::{PartitionEvaluatorArgs, WindowUDFFieldArgs};
use datafusion::logical_expr::{
    PartitionEvaluator, Signature, Volatility, WindowUDF, WindowUDFImpl,
};
use momenta::{Ema, EwCovariance, EwVariance, Momentum, NanPolicy};

use super::{coerce_half_life, coerce_time, constant, constant_bool, constant_f64, times};
use crate::input;

/// What a function returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Output {
    Mean,
    Var,
    VarPop,
    Std,
    StdPop,
    Cov,
    CovPop,
    Corr,
}

impl Output {
    /// Value columns: `x`, or `x, y`.
    fn columns(self) -> usize {
        match self {
            Self::Cov | Self::CovPop | Self::Corr => 2,
            _ => 1,
        }
    }
}

/// One exponentially weighted window function.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Ewm {
    name: String,
    output: Output,
    /// `_by`: a time column and a half-life instead of `alpha`.
    timed: bool,
    signature: Signature,
}

pub(crate) fn functions() -> Vec<Arc<WindowUDF>> {
    let outputs = [
        ("mean", Output::Mean),
        ("var", Output::Var),
        ("var_pop", Output::VarPop),
        ("std", Output::Std),
        ("std_pop", Output::StdPop),
        ("cov", Output::Cov),
        ("cov_pop", Output::CovPop),
        ("corr", Output::Corr),
    ];
    outputs
        .into_iter()
        .flat_map(|(suffix, output)| {
            [false, true].map(|timed| {
                let by = if timed { "_by" } else { "" };
                Arc::new(WindowUDF::from(Ewm {
                    name: format!("momenta_ewm_{suffix}{by}"),
                    output,
                    timed,
                    signature: Signature::user_defined(Volatility::Immutable),
                }))
            })
        })
        .collect()
}

impl Ewm {
    /// Columns before the constants: the values, and the time.
    fn columns(&self) -> usize {
        self.output.columns() + usize::from(self.timed)
    }
}

impl WindowUDFImpl for Ewm {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let k = self.columns();
        if arg_types.len() != k + 1 && arg_types.len() != k + 2 {
            let params = if self.timed { "t, half_life" } else { "alpha" };
            let values = if self.output.columns() == 2 {
                "x, y"
            } else {
                "x"
            };
            return plan_err!(
                "{}({values}, {params} [, adjust]) takes {} or {} arguments, got {}",
                self.name,
                k + 1,
                k + 2,
                arg_types.len()
            );
        }
        let values = self.output.columns();
        arg_types
            .iter()
            .enumerate()
            .map(|(i, t)| match i {
                i if i < values => input::coerce_number(&self.name, t),
                i if i < k => coerce_time(&self.name, t),
                i if i == k && self.timed => Ok(coerce_half_life(t)),
                i if i == k => Ok(DataType::Float64),
                _ => Ok(DataType::Boolean),
            })
            .collect()
    }

    fn field(&self, args: WindowUDFFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(Field::new(args.name(), DataType::Float64, true)))
    }

    fn partition_evaluator(
        &self,
        args: PartitionEvaluatorArgs,
    ) -> Result<Box<dyn PartitionEvaluator>> {
        let k = self.columns();
        let exprs = args.input_exprs();
        let param = constant(&self.name, exprs, k)?;
        let momentum = if self.timed {
            let time = args
                .input_fields()
                .get(k - 1)
                .map_or(DataType::Float64, |f| f.data_type().clone());
            let h = super::half_life_in_unit(&self.name, &param, &time)?;
            Momentum::from_half_life(h)
        } else {
            Momentum::Factor(constant_f64(&self.name, "alpha", &param)?).validate()
        }
        .map_err(|e| plan_datafusion_err!("{}: {e}", self.name))?;
        let adjust = if exprs.len() > k + 1 {
            constant_bool(&self.name, "adjust", &constant(&self.name, exprs, k + 1)?)?
        } else {
            true
        };
        let policy = if args.ignore_nulls() {
            NanPolicy::Skip
        } else {
            NanPolicy::Gap
        };
        let evaluator = EwmEvaluator {
            name: self.name.clone(),
            output: self.output,
            timed: self.timed,
            momentum,
            adjust,
            policy,
        };
        // Fails here, at planning, on what the statistic refuses.
        evaluator.statistic()?;
        Ok(Box::new(evaluator))
    }
}

/// A function's evaluator for one partition.
#[derive(Debug)]
struct EwmEvaluator {
    name: String,
    output: Output,
    timed: bool,
    momentum: Momentum<f64>,
    adjust: bool,
    /// What a NULL row is: `Gap` (a missing sample) or `Skip`.
    policy: NanPolicy,
}

/// The statistic behind a function.
enum Stat {
    Mean(Ema<f64>),
    Var(EwVariance<f64>),
    Cov(EwCovariance<f64>),
}

impl EwmEvaluator {
    fn statistic(&self) -> Result<Stat> {
        let (m, adjust, policy) = (self.momentum, self.adjust, self.policy);
        let stat = match self.output {
            Output::Mean => if adjust {
                Ema::adjusted(m)
            } else {
                Ema::new(m)
            }
            .map(|s| Stat::Mean(s.with_nan_policy(policy))),
            Output::Var | Output::VarPop | Output::Std | Output::StdPop => if adjust {
                EwVariance::adjusted(m)
            } else {
                EwVariance::new(m)
            }
            .map(|s| Stat::Var(s.with_nan_policy(policy))),
            Output::Cov | Output::CovPop | Output::Corr => if adjust {
                EwCovariance::adjusted(m)
            } else {
                EwCovariance::new(m)
            }
            .map(|s| Stat::Cov(s.with_nan_policy(policy))),
        };
        stat.map_err(|e| plan_datafusion_err!("{}: {e}", self.name))
    }
}

impl Stat {
    fn push(&mut self, x: f64, y: f64) {
        match self {
            Self::Mean(s) => s.push(x),
            Self::Var(s) => s.push(x),
            Self::Cov(s) => s.push(x, y),
        }
    }

    fn push_at(&mut self, t: f64, x: f64, y: f64) -> Result<(), momenta::Error> {
        match self {
            Self::Mean(s) => s.push_at(t, x),
            Self::Var(s) => s.push_at(t, x),
            Self::Cov(s) => s.push_at(t, x, y),
        }
    }

    fn read(&self, output: Output) -> Option<f64> {
        match (self, output) {
            (Self::Mean(s), _) => s.value(),
            (Self::Var(s), Output::Var) => s.unbiased_variance(),
            (Self::Var(s), Output::Std) => s.unbiased_variance().map(f64::sqrt),
            (Self::Var(s), Output::StdPop) => s.std_dev(),
            (Self::Var(s), _) => s.variance(),
            (Self::Cov(s), Output::Cov) => s.unbiased_covariance(),
            (Self::Cov(s), Output::Corr) => s.correlation(),
            (Self::Cov(s), _) => s.covariance(),
        }
    }
}

impl PartitionEvaluator for EwmEvaluator {
    fn evaluate_all(&mut self, values: &[ArrayRef], num_rows: usize) -> Result<ArrayRef> {
        let columns = self.output.columns();
        let xs = input::values(&values[0])?;
        let ys = if columns == 2 {
            Some(input::values(&values[1])?)
        } else {
            None
        };
        let ys: &[f64] = ys.as_deref().unwrap_or(&xs);
        let ts = if self.timed {
            Some(times(&values[columns])?)
        } else {
            None
        };
        let present = input::present_rows(&values[..columns + usize::from(self.timed)], None);
        let mut stat = self.statistic()?;
        let mut nan_seen = false;
        let mut out = Vec::with_capacity(num_rows);
        for i in 0..num_rows {
            if present.as_ref().is_none_or(|p| p.value(i)) {
                let (x, y) = (xs[i], ys[i]);
                if x.is_nan() || y.is_nan() {
                    // A NaN value propagates: every later row reads NaN.
                    nan_seen = true;
                } else if let Some(ts) = &ts {
                    stat.push_at(ts[i], x, y)
                        .map_err(|e| exec_datafusion_err!("{}: {e}", self.name))?;
                } else {
                    stat.push(x, y);
                }
            } else if ts.is_none() {
                // A NULL: a missing sample (or, IGNORE NULLS, nothing). On
                // a clock the next row's time step covers it either way.
                stat.push(f64::NAN, f64::NAN);
            }
            out.push(if nan_seen {
                Some(f64::NAN)
            } else {
                stat.read(self.output)
            });
        }
        Ok(Arc::new(Float64Array::from(out)))
    }
}
