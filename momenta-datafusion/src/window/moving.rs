//! Statistics of the last `w` rows (the current one included), in `ORDER
//! BY` order, from [`MovingAverage`], [`MovingVariance`],
//! [`MovingMinMax`] and [`MovingQuantile`]:
//!
//! - `momenta_moving_mean(x, w)`, `momenta_moving_var(x, w)` (sample),
//!   `momenta_moving_var_pop`, `momenta_moving_std` (sample),
//!   `momenta_moving_std_pop`, `momenta_moving_min`, `momenta_moving_max`;
//! - `momenta_moving_quantile(x, w, q)` (pandas' `rolling(w,
//!   min_periods=1).quantile(q)`, linear interpolation) and
//!   `momenta_moving_median(x, w)`.
//!
//! The first rows have a partial window (pandas' `min_periods=1`). The
//! windows' running sums never drift: row 10⁸ is as exact as row 10.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Array};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, plan_datafusion_err, plan_err};
use datafusion::logical_expr::function::{PartitionEvaluatorArgs, WindowUDFFieldArgs};
use datafusion::logical_expr::{
    PartitionEvaluator, Signature, Volatility, WindowUDF, WindowUDFImpl,
};
use momenta::{MovingAverage, MovingMinMax, MovingQuantile, MovingVariance, NanPolicy};

use super::{constant, constant_f64, constant_window};
use crate::input;

/// What a function returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Output {
    Mean,
    Var,
    VarPop,
    Std,
    StdPop,
    Min,
    Max,
    Quantile,
    Median,
}

/// One moving-window function.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Moving {
    name: String,
    output: Output,
    signature: Signature,
}

pub(crate) fn functions() -> Vec<Arc<WindowUDF>> {
    [
        ("mean", Output::Mean),
        ("var", Output::Var),
        ("var_pop", Output::VarPop),
        ("std", Output::Std),
        ("std_pop", Output::StdPop),
        ("min", Output::Min),
        ("max", Output::Max),
        ("quantile", Output::Quantile),
        ("median", Output::Median),
    ]
    .into_iter()
    .map(|(suffix, output)| {
        Arc::new(WindowUDF::from(Moving {
            name: format!("momenta_moving_{suffix}"),
            output,
            signature: Signature::user_defined(Volatility::Immutable),
        }))
    })
    .collect()
}

impl WindowUDFImpl for Moving {
    fn name(&self) -> &str {
        &self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let (arity, usage) = match self.output {
            Output::Quantile => (3, "(x, w, q)"),
            _ => (2, "(x, w)"),
        };
        if arg_types.len() != arity {
            return plan_err!(
                "{}{usage} takes {arity} arguments, got {}",
                self.name,
                arg_types.len()
            );
        }
        Ok(vec![
            input::coerce_number(&self.name, &arg_types[0])?,
            DataType::Int64,
            DataType::Float64,
        ]
        .into_iter()
        .take(arity)
        .collect())
    }

    fn field(&self, args: WindowUDFFieldArgs) -> Result<FieldRef> {
        Ok(Arc::new(Field::new(args.name(), DataType::Float64, true)))
    }

    fn partition_evaluator(
        &self,
        args: PartitionEvaluatorArgs,
    ) -> Result<Box<dyn PartitionEvaluator>> {
        let exprs = args.input_exprs();
        let window = constant_window(&self.name, &constant(&self.name, exprs, 1)?)?;
        let q = match self.output {
            Output::Quantile => constant_f64(&self.name, "q", &constant(&self.name, exprs, 2)?)?,
            _ => 0.5,
        };
        let evaluator = MovingEvaluator {
            name: self.name.clone(),
            output: self.output,
            window,
            q,
            ignore_nulls: args.ignore_nulls(),
        };
        // Fails here, at planning, on what the statistic refuses.
        evaluator.statistic()?;
        Ok(Box::new(evaluator))
    }
}

/// A function's evaluator for one partition.
#[derive(Debug)]
struct MovingEvaluator {
    name: String,
    output: Output,
    window: usize,
    q: f64,
    /// `IGNORE NULLS`: a NULL row takes no place in the window.
    ignore_nulls: bool,
}

/// The statistic behind a function.
enum Stat {
    Mean(MovingAverage<f64>),
    Var(MovingVariance<f64>),
    MinMax(MovingMinMax<f64>),
    Quantile(MovingQuantile<f64>),
}

impl MovingEvaluator {
    /// The window, with NaN skipped: a NULL is pushed as a NaN that takes
    /// its place and counts for nothing; a NaN value is tracked apart.
    fn statistic(&self) -> Result<Stat> {
        let (w, skip) = (self.window, NanPolicy::Skip);
        let stat = match self.output {
            Output::Mean => MovingAverage::new(w).map(|s| Stat::Mean(s.with_nan_policy(skip))),
            Output::Var | Output::VarPop | Output::Std | Output::StdPop => {
                MovingVariance::new(w).map(|s| Stat::Var(s.with_nan_policy(skip)))
            }
            Output::Min | Output::Max => {
                MovingMinMax::new(w).map(|s| Stat::MinMax(s.with_nan_policy(skip)))
            }
            Output::Quantile | Output::Median => {
                MovingQuantile::new(w, self.q).map(|s| Stat::Quantile(s.with_nan_policy(skip)))
            }
        };
        stat.map_err(|e| plan_datafusion_err!("{}: {e}", self.name))
    }
}

impl Stat {
    fn push(&mut self, x: f64) {
        match self {
            Self::Mean(s) => {
                s.push(x);
            }
            Self::Var(s) => s.push(x),
            Self::MinMax(s) => s.push(x),
            Self::Quantile(s) => {
                s.push(x);
            }
        }
    }

    fn read(&self, output: Output) -> Option<f64> {
        match (self, output) {
            (Self::Mean(s), _) => s.mean(),
            (Self::Var(s), Output::Var) => s.sample_variance(),
            (Self::Var(s), Output::Std) => s.sample_std_dev(),
            (Self::Var(s), Output::StdPop) => s.population_std_dev(),
            (Self::Var(s), _) => s.population_variance(),
            (Self::MinMax(s), Output::Min) => s.min(),
            (Self::MinMax(s), _) => s.max(),
            (Self::Quantile(s), _) => s.quantile(),
        }
    }
}

impl PartitionEvaluator for MovingEvaluator {
    fn evaluate_all(&mut self, values: &[ArrayRef], num_rows: usize) -> Result<ArrayRef> {
        let xs = input::values(&values[0])?;
        let present = input::present_rows(&values[..1], None);
        let mut stat = self.statistic()?;
        // Places taken in the window so far, and that of the last NaN.
        let mut pushed = 0_usize;
        let mut last_nan: Option<usize> = None;
        let mut out = Vec::with_capacity(num_rows);
        for (i, &x) in xs.iter().enumerate().take(num_rows) {
            if present.as_ref().is_none_or(|p| p.value(i)) {
                if x.is_nan() {
                    last_nan = Some(pushed);
                }
                stat.push(x);
                pushed += 1;
            } else if !self.ignore_nulls {
                stat.push(f64::NAN);
                pushed += 1;
            }
            let nan_in_window = last_nan.is_some_and(|k| pushed - k <= self.window);
            out.push(if nan_in_window {
                Some(f64::NAN)
            } else {
                stat.read(self.output)
            });
        }
        Ok(Arc::new(Float64Array::from(out)))
    }
}
