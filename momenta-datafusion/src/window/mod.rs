//! momenta's streaming statistics as DataFusion window functions: what
//! cannot be merged or retracted (exponential weights, windows of the last
//! `w` rows) runs over each partition's rows in `ORDER BY` order, one push
//! per row, exactly as the core crate's push loop does.
//!
//! The shared parts are here: reading a function's constant arguments,
//! time columns, and the row loop that gives NULL and NaN their SQL
//! meaning. The two families are [`ewm`] and [`moving`].
//!
//! NULL and NaN. A NULL is a missing row: by default it keeps its place
//! (an exponential average decays the past over it, as pandas'
//! `ignore_na=False`; a window of `w` rows counts it), and with `IGNORE
//! NULLS` it is left out altogether. A NaN is a value: it propagates, as
//! everywhere in momenta (an exponential statistic is NaN from then on, a
//! window while the NaN is in it). A row's result is NULL where the
//! statistic has no value yet.

pub(crate) mod ewm;
pub(crate) mod moving;

use std::any::Any;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray};
use datafusion::arrow::datatypes::{
    DataType, Date32Type, Date64Type, IntervalUnit, TimeUnit, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use datafusion::common::{Result, ScalarValue, plan_datafusion_err, plan_err};
use datafusion::logical_expr::WindowUDF;
use datafusion::physical_expr::expressions::Literal;
use datafusion::physical_plan::PhysicalExpr;

use crate::input;

/// Every window function.
pub(crate) fn functions() -> Vec<Arc<WindowUDF>> {
    [ewm::functions(), moving::functions()].concat()
}

/// The constant value of argument `i` of `function`.
fn constant(function: &str, exprs: &[Arc<dyn PhysicalExpr>], i: usize) -> Result<ScalarValue> {
    let expr = exprs
        .get(i)
        .ok_or_else(|| plan_datafusion_err!("{function}: argument {} is missing", i + 1))?;
    let any: &dyn Any = expr.as_ref();
    if let Some(literal) = any.downcast_ref::<Literal>() {
        Ok(literal.value().clone())
    } else {
        plan_err!(
            "{function}: argument {} must be a constant, got {expr}",
            i + 1
        )
    }
}

/// A constant number, by name (`alpha`, `q`, …).
fn constant_f64(function: &str, name: &str, value: &ScalarValue) -> Result<f64> {
    let v = match value.cast_to(&DataType::Float64)? {
        ScalarValue::Float64(Some(v)) => Some(v),
        _ => None,
    };
    v.ok_or_else(|| plan_datafusion_err!("{function}: {name} must be a number, got {value}"))
}

/// A constant count of rows `w ≥ 1`.
fn constant_window(function: &str, value: &ScalarValue) -> Result<usize> {
    let w = match value.cast_to(&DataType::Int64) {
        Ok(ScalarValue::Int64(Some(w))) => usize::try_from(w).ok().filter(|&w| w >= 1),
        _ => None,
    };
    w.ok_or_else(|| {
        plan_datafusion_err!(
            "{function}: the window must be a whole number of rows ≥ 1, got {value}"
        )
    })
}

/// A constant boolean (`adjust`).
fn constant_bool(function: &str, name: &str, value: &ScalarValue) -> Result<bool> {
    match value {
        ScalarValue::Boolean(Some(b)) => Ok(*b),
        v => plan_err!("{function}: {name} must be true or false, got {v}"),
    }
}

/// The type a time argument is taken as: numbers as numbers (in their
/// own unit), timestamps and dates as they are.
fn coerce_time(function: &str, t: &DataType) -> Result<DataType> {
    match t {
        DataType::Timestamp(..) | DataType::Date32 | DataType::Date64 => Ok(t.clone()),
        DataType::Dictionary(_, v) => coerce_time(function, v),
        t => input::coerce_number(function, t).map_err(|_| {
            plan_datafusion_err!(
                "{function}: a time must be a number, a timestamp or a date, got {t}"
            )
        }),
    }
}

/// Nanoseconds per unit of a temporal time column, `None` for a number
/// (whose unit is the caller's).
fn nanos_per_unit(t: &DataType) -> Option<f64> {
    match t {
        DataType::Timestamp(TimeUnit::Second, _) => Some(1e9),
        DataType::Timestamp(TimeUnit::Millisecond, _) | DataType::Date64 => Some(1e6),
        DataType::Timestamp(TimeUnit::Microsecond, _) => Some(1e3),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => Some(1.0),
        DataType::Date32 => Some(86_400e9),
        _ => None,
    }
}

/// A half-life in the unit of a time column of type `time`: a positive
/// number (seconds for a temporal column, the column's own unit for a
/// number) or, for a temporal column, an interval of fixed length.
fn half_life_in_unit(function: &str, value: &ScalarValue, time: &DataType) -> Result<f64> {
    let per_unit = nanos_per_unit(time);
    #[allow(clippy::cast_precision_loss, reason = "a duration in ns, rounded once")]
    let nanos = match value {
        ScalarValue::IntervalMonthDayNano(Some(i)) if i.months == 0 => {
            Some(f64::from(i.days) * 86_400e9 + i.nanoseconds as f64)
        }
        ScalarValue::IntervalDayTime(Some(i)) => {
            Some(f64::from(i.days) * 86_400e9 + f64::from(i.milliseconds) * 1e6)
        }
        ScalarValue::IntervalMonthDayNano(_) | ScalarValue::IntervalYearMonth(_) => {
            return plan_err!(
                "{function}: a half-life must be a fixed length of time, not months: got {value}"
            );
        }
        _ => None,
    };
    let h = match (nanos, per_unit) {
        (Some(ns), Some(per_unit)) => ns / per_unit,
        (Some(_), None) => {
            return plan_err!(
                "{function}: an interval half-life needs a timestamp or date column, the time column is {time}"
            );
        }
        (None, Some(per_unit)) => constant_f64(function, "the half-life", value)? * 1e9 / per_unit,
        (None, None) => constant_f64(function, "the half-life", value)?,
    };
    Ok(h)
}

/// The type a half-life argument is taken as: an interval as it is, any
/// other value as `Float64`.
fn coerce_half_life(t: &DataType) -> DataType {
    match t {
        DataType::Interval(IntervalUnit::MonthDayNano | IntervalUnit::DayTime) => t.clone(),
        _ => DataType::Float64,
    }
}

/// A time column as `f64`: numbers as they are; timestamps and dates in
/// their own unit, counted from the partition's first row (the
/// differences are exact up to 2⁵³ units, 104 days in nanoseconds), so
/// that a half-life converted to the same unit decays by the exact
/// elapsed time.
fn times(array: &ArrayRef) -> Result<Vec<f64>> {
    use datafusion::arrow::array::Array;
    // The first present row: a NULL's slot holds any value.
    let first = (0..array.len()).find(|&i| array.is_valid(i)).unwrap_or(0);
    let from_i64 = |values: &[i64]| -> Vec<f64> {
        let origin = values.get(first).copied().unwrap_or(0);
        #[allow(clippy::cast_precision_loss, reason = "exact up to 2⁵³ units")]
        values
            .iter()
            .map(|&v| v.wrapping_sub(origin) as f64)
            .collect()
    };
    Ok(match array.data_type() {
        DataType::Timestamp(TimeUnit::Second, _) => {
            from_i64(array.as_primitive::<TimestampSecondType>().values())
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            from_i64(array.as_primitive::<TimestampMillisecondType>().values())
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            from_i64(array.as_primitive::<TimestampMicrosecondType>().values())
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            from_i64(array.as_primitive::<TimestampNanosecondType>().values())
        }
        DataType::Date64 => from_i64(array.as_primitive::<Date64Type>().values()),
        DataType::Date32 => {
            let values = array.as_primitive::<Date32Type>().values();
            let origin = values.get(first).copied().unwrap_or(0);
            values
                .iter()
                .map(|&v| f64::from(v) - f64::from(origin))
                .collect()
        }
        _ => input::values(array)?.into_owned(),
    })
}
