//! Arrow input columns as `f64` values: which types a function takes, how
//! each converts, and which rows are present.
//!
//! Every conversion rounds at most once, to the nearest `f64`:
//!
//! - `Float64` is used in place; `Float32` and `Float16` widen exactly;
//! - integers of up to 32 bits convert exactly; `Int64` and `UInt64`
//!   convert exactly up to 2⁵³ in magnitude and are rounded to the nearest
//!   `f64` above (the statistics are then exact for the rounded values);
//! - a decimal `v` of scale `s` becomes the `f64` nearest to `v·10⁻ˢ`,
//!   rounded once (not `v` rounded, then divided by `10ˢ` rounded).

use std::borrow::Cow;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use datafusion::arrow::buffer::BooleanBuffer;
use datafusion::arrow::datatypes::{
    DataType, Decimal32Type, Decimal64Type, Decimal128Type, Decimal256Type, Float16Type,
    Float32Type, Float64Type, Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type,
    UInt32Type, UInt64Type, i256,
};
use datafusion::common::{Result, exec_err, plan_err};

/// The type a function asks DataFusion to cast an argument of type `t`
/// to before it sees it: numbers stay as they are (each is converted
/// exactly here), a dictionary is unpacked, `NULL` becomes `Float64`;
/// anything else is a planning error naming the function and the type.
pub(crate) fn coerce_number(function: &str, t: &DataType) -> Result<DataType> {
    match t {
        DataType::Null => Ok(DataType::Float64),
        DataType::Dictionary(_, value) => coerce_number(function, value),
        t if is_number(t) => Ok(t.clone()),
        t => plan_err!("{function} takes numeric arguments, got {t}"),
    }
}

/// The argument types `function` is called with, checked for their
/// number (`arity`) and each coerced by [`coerce_number`].
pub(crate) fn coerce_numbers(
    function: &str,
    arity: usize,
    types: &[DataType],
) -> Result<Vec<DataType>> {
    if types.len() != arity {
        let plural = if arity == 1 { "" } else { "s" };
        return plan_err!(
            "{function} takes {arity} argument{plural}, got {}",
            types.len()
        );
    }
    types.iter().map(|t| coerce_number(function, t)).collect()
}

fn is_number(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Float16
            | DataType::Float32
            | DataType::Float64
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
    )
}

/// The values of a numeric column as `f64`, borrowed when it is
/// `Float64`. The values at null slots are whatever the column holds
/// there; [`present_rows`] says which rows count.
pub(crate) fn values(array: &ArrayRef) -> Result<Cow<'_, [f64]>> {
    fn widen<T, F>(array: &ArrayRef, f: F) -> Cow<'static, [f64]>
    where
        T: datafusion::arrow::datatypes::ArrowPrimitiveType,
        F: Fn(T::Native) -> f64,
    {
        Cow::Owned(
            array
                .as_primitive::<T>()
                .values()
                .iter()
                .map(|&v| f(v))
                .collect(),
        )
    }
    Ok(match array.data_type() {
        DataType::Float64 => Cow::Borrowed(array.as_primitive::<Float64Type>().values()),
        DataType::Float32 => widen::<Float32Type, _>(array, f64::from),
        DataType::Float16 => widen::<Float16Type, _>(array, f64::from),
        DataType::Int8 => widen::<Int8Type, _>(array, f64::from),
        DataType::Int16 => widen::<Int16Type, _>(array, f64::from),
        DataType::Int32 => widen::<Int32Type, _>(array, f64::from),
        #[allow(
            clippy::cast_precision_loss,
            reason = "rounds to nearest above 2⁵³, documented"
        )]
        DataType::Int64 => widen::<Int64Type, _>(array, |v| v as f64),
        DataType::UInt8 => widen::<UInt8Type, _>(array, f64::from),
        DataType::UInt16 => widen::<UInt16Type, _>(array, f64::from),
        DataType::UInt32 => widen::<UInt32Type, _>(array, f64::from),
        #[allow(
            clippy::cast_precision_loss,
            reason = "rounds to nearest above 2⁵³, documented"
        )]
        DataType::UInt64 => widen::<UInt64Type, _>(array, |v| v as f64),
        DataType::Decimal32(_, s) => {
            let s = *s;
            widen::<Decimal32Type, _>(array, |v| decimal_to_f64(i128::from(v), s))
        }
        DataType::Decimal64(_, s) => {
            let s = *s;
            widen::<Decimal64Type, _>(array, |v| decimal_to_f64(i128::from(v), s))
        }
        DataType::Decimal128(_, s) => {
            let s = *s;
            widen::<Decimal128Type, _>(array, |v| decimal_to_f64(v, s))
        }
        DataType::Decimal256(_, s) => {
            let s = *s;
            widen::<Decimal256Type, _>(array, |v| decimal256_to_f64(v, s))
        }
        t => return exec_err!("momenta: not a numeric column: {t}"),
    })
}

/// Powers of ten that `f64` holds exactly: 10⁰ … 10²².
const EXACT_POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `v·10⁻ˢ` rounded once to the nearest `f64`.
///
/// When `v` and `10^|s|` are both exact in `f64` (|v| ≤ 2⁵³, |s| ≤ 22)
/// one IEEE division or multiplication rounds once; otherwise the decimal
/// text is parsed, which Rust rounds correctly.
pub(crate) fn decimal_to_f64(v: i128, scale: i8) -> f64 {
    const EXACT: i128 = 1 << 53;
    let power = EXACT_POWERS_OF_TEN.get(usize::from(scale.unsigned_abs()));
    match power {
        #[allow(clippy::cast_precision_loss, reason = "|v| ≤ 2⁵³: exact")]
        Some(&p) if (-EXACT..=EXACT).contains(&v) => {
            if scale >= 0 {
                v as f64 / p
            } else {
                v as f64 * p
            }
        }
        _ => parse_decimal(&v.to_string(), scale),
    }
}

fn decimal256_to_f64(v: i256, scale: i8) -> f64 {
    match v.to_i128() {
        Some(v) => decimal_to_f64(v, scale),
        None => parse_decimal(&v.to_string(), scale),
    }
}

/// The digits of an integer times `10⁻ˢ`, as the nearest `f64`.
fn parse_decimal(digits: &str, scale: i8) -> f64 {
    // "123e-2" is the text of 1.23; Rust's parser rounds it correctly, and
    // the exponent of any i8 scale is within its range (beyond it the
    // result is 0 or ∞, as the value is).
    format!("{digits}e{}", -i32::from(scale))
        .parse()
        .unwrap_or(f64::NAN)
}

/// An aggregate's argument columns as `f64`.
pub(crate) type Columns<'a> = Vec<Cow<'a, [f64]>>;

/// The first `arity` columns of `arguments` as `f64` ([`values`]) and the
/// rows that count ([`present_rows`]): what an aggregate takes from a
/// batch.
pub(crate) fn columns<'a>(
    arguments: &'a [ArrayRef],
    arity: usize,
    filter: Option<&BooleanArray>,
) -> Result<(Columns<'a>, Option<BooleanBuffer>)> {
    let inputs = &arguments[..arity];
    let columns = inputs.iter().map(values).collect::<Result<_>>()?;
    Ok((columns, present_rows(inputs, filter)))
}

/// The rows that count: those where every input is non-null and the
/// filter (if any) is true. `None` means every row.
pub(crate) fn present_rows(
    inputs: &[ArrayRef],
    filter: Option<&BooleanArray>,
) -> Option<BooleanBuffer> {
    let mut mask: Option<BooleanBuffer> = None;
    let mut and = |b: &BooleanBuffer| {
        mask = Some(match mask.take() {
            Some(m) => &m & b,
            None => b.clone(),
        });
    };
    for a in inputs {
        if let Some(nulls) = a.logical_nulls()
            && nulls.null_count() > 0
        {
            and(nulls.inner());
        }
    }
    if let Some(f) = filter {
        and(f.values());
        if let Some(nulls) = f.nulls()
            && nulls.null_count() > 0
        {
            and(nulls.inner());
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_round_once() {
        // 0.1 as the decimal 1 of scale 1 is the f64 nearest 0.1.
        assert_eq!(decimal_to_f64(1, 1), 0.1);
        assert_eq!(decimal_to_f64(-123_456, 3), -123.456);
        assert_eq!(decimal_to_f64(5, -3), 5000.0);
        // 2⁵³ + 1 at scale 0 is not exact in f64: the parse path rounds it
        // to even, as the integer conversion does.
        assert_eq!(decimal_to_f64((1 << 53) + 1, 0), 9_007_199_254_740_992.0);
        // 38 digits at scale 38: 0.12345678901234567890123456789012345678.
        let v = 12_345_678_901_234_567_890_123_456_789_012_345_678_i128;
        assert_eq!(
            decimal_to_f64(v, 38),
            "0.12345678901234567890123456789012345678"
                .parse::<f64>()
                .unwrap()
        );
        // A scale past 22 with a small value: the parse path.
        assert_eq!(decimal_to_f64(3, 30), "3e-30".parse::<f64>().unwrap());
        assert_eq!(
            decimal256_to_f64(i256::from_i128(i128::MAX) * i256::from_i128(10), 2),
            "17014118346046923173168730371588410572.70"
                .parse::<f64>()
                .unwrap()
        );
    }
}
