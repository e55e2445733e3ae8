//! The checkpoint form of the exact sums ([`ExactSums`], [`ExactCoSums`],
//! [`GroupedCoSums`]): their integers as they are, so that a restored set
//! reads the same bits and takes or refuses the same values as the saved
//! one.
//!
//! Each integer is a decimal string (`"-12345678901234567890123"`): the
//! sums reach 220 bits, beyond any format's integers (TOML's stop at 64,
//! JSON readers' often at 53). On the way in every bound the integers of
//! a set of finite `f64` keep is checked, so that a read can neither
//! overflow nor go wrong: the base lies where the bases of finite values
//! lie, every value below `2^94` units, `Σx²` at least `(Σx)²/n`
//! (Cauchy–Schwarz, so the variance is not negative) and equal to it for
//! one value, and for pairs the cross sum within Cauchy–Schwarz too.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use crate::Error;
use crate::exact::co_sums::ExactCoSums;
use crate::exact::grouped_co_sums::GroupedCoSums;
use crate::exact::sums::ExactSums;
use crate::kernels::exact_arith::U256;

/// An [`ExactSums`] as saved.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExactSumsState {
    /// How many values.
    count: u32,
    /// Every value is a multiple of `2^base`.
    base: i32,
    /// `Σx / 2^base`, in decimal.
    sum: String,
    /// `Σx² / 2^(2·base)`, in decimal.
    squares: String,
}

/// An [`ExactCoSums`] as saved.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExactCoSumsState {
    x: ExactSumsState,
    y: ExactSumsState,
    /// `Σxy / 2^(base_x + base_y)`, in decimal.
    cross: String,
}

/// A [`GroupedCoSums`] as saved: each group's sums, its pending rows
/// added in.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GroupedCoSumsState {
    groups: Vec<ExactCoSumsState>,
}

// The types are written and read through their states here, so that the
// types' own files do not name the checkpoint form (which names them).
impl serde::Serialize for ExactSums {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ExactSumsState::from(self.clone()).serialize(serializer)
    }
}

impl serde::Serialize for ExactCoSums {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        ExactCoSumsState::from(self.clone()).serialize(serializer)
    }
}

/// Each group's sums, read one at a time (not a clone of all the groups).
impl serde::Serialize for GroupedCoSums {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        GroupedCoSumsState::from(self).serialize(serializer)
    }
}

crate::checkpoint::path::restore_from!([] ExactSums, ExactSumsState);
crate::checkpoint::path::restore_from!([] ExactCoSums, ExactCoSumsState);
crate::checkpoint::path::restore_from!([] GroupedCoSums, GroupedCoSumsState);

impl From<ExactSums> for ExactSumsState {
    fn from(sums: ExactSums) -> Self {
        let (count, base, sum, squares) = sums.integers();
        Self {
            count,
            base,
            sum: format!("{sum}"),
            squares: decimal(squares, false),
        }
    }
}

impl TryFrom<ExactSumsState> for ExactSums {
    type Error = Error;

    fn try_from(state: ExactSumsState) -> Result<Self, Error> {
        let sum = state.sum.parse::<i128>().map_err(|_| {
            Error::state(format!(
                "sum must be a decimal integer, got {:?}",
                state.sum
            ))
        })?;
        let Some((squares, false)) = parse(&state.squares) else {
            return Err(Error::state(format!(
                "squares must be a decimal integer of at most 77 digits, not negative, got {:?}",
                state.squares
            )));
        };
        ExactSums::from_integers(state.count, state.base, sum, squares).map_err(Error::state)
    }
}

impl From<ExactCoSums> for ExactCoSumsState {
    fn from(sums: ExactCoSums) -> Self {
        let (x, y, cross) = sums.into_parts();
        let negative = cross[3] >> 63 != 0;
        let magnitude = if negative {
            crate::exact::co_sums::negate(cross)
        } else {
            cross
        };
        Self {
            x: x.into(),
            y: y.into(),
            cross: decimal(magnitude, negative),
        }
    }
}

impl TryFrom<ExactCoSumsState> for ExactCoSums {
    type Error = Error;

    fn try_from(state: ExactCoSumsState) -> Result<Self, Error> {
        let within = |e: Error, column: &str| Error::state(format!("{column}.{}", reason(&e)));
        let x = ExactSums::try_from(state.x).map_err(|e| within(e, "x"))?;
        let y = ExactSums::try_from(state.y).map_err(|e| within(e, "y"))?;
        let Some((magnitude, negative)) = parse(&state.cross) else {
            return Err(Error::state(format!(
                "cross must be a decimal integer of at most 77 digits, got {:?}",
                state.cross
            )));
        };
        // Beyond 2^254 the two's complement below would alias a small
        // number; far beyond the bound `from_parts` checks anyway.
        if magnitude[3] >> 62 != 0 {
            return Err(Error::state("cross must be below count·2^188 in magnitude"));
        }
        let cross = if negative {
            crate::exact::co_sums::negate(magnitude)
        } else {
            magnitude
        };
        ExactCoSums::from_parts(x, y, cross).map_err(Error::state)
    }
}

impl From<&GroupedCoSums> for GroupedCoSumsState {
    fn from(groups: &GroupedCoSums) -> Self {
        Self {
            groups: (0..groups.len())
                .filter_map(|g| groups.sums(g))
                .map(ExactCoSumsState::from)
                .collect(),
        }
    }
}

impl TryFrom<GroupedCoSumsState> for GroupedCoSums {
    type Error = Error;

    fn try_from(state: GroupedCoSumsState) -> Result<Self, Error> {
        let sums = state
            .groups
            .into_iter()
            .enumerate()
            .map(|(g, s)| {
                ExactCoSums::try_from(s)
                    .map_err(|e| Error::state(format!("groups[{g}].{}", reason(&e))))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(GroupedCoSums::from_sums(sums))
    }
}

/// The reason of an invalid-state error (its whole text otherwise).
fn reason(e: &Error) -> String {
    match e.kind() {
        crate::ErrorKind::InvalidState { reason } => reason.clone(),
        _ => format!("{e}"),
    }
}

/// `magnitude` in decimal, with a minus sign when `negative` (and it is
/// not zero).
fn decimal(magnitude: U256, negative: bool) -> String {
    // Nineteen digits at a time, least significant first.
    const CHUNK: u64 = 10_000_000_000_000_000_000;
    let mut chunks = Vec::new();
    let mut rest = magnitude;
    loop {
        let (q, r) = crate::kernels::exact_arith::div_small(rest, CHUNK);
        chunks.push(r);
        rest = q;
        if rest == [0; 4] {
            break;
        }
    }
    let mut text = String::new();
    if negative && magnitude != [0; 4] {
        text.push('-');
    }
    let mut chunks = chunks.into_iter().rev();
    // Writing to a `String` cannot fail.
    if let Some(first) = chunks.next() {
        let _ = write!(text, "{first}");
    }
    for chunk in chunks {
        let _ = write!(text, "{chunk:019}");
    }
    text
}

/// A decimal integer of at most 77 digits (below `10^77 < 2^256`), with
/// an optional sign: its magnitude and whether it is negative; `None` for
/// anything else.
fn parse(text: &str) -> Option<(U256, bool)> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if digits.is_empty() || digits.len() > 77 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: U256 = [0; 4];
    for b in digits.bytes() {
        let tenfold = crate::kernels::exact_arith::mul_small(value, 10);
        value = crate::kernels::exact_arith::add_small(tenfold, u64::from(b - b'0'));
    }
    Some((value, negative && value != [0; 4]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_read_back_as_the_integers_they_write() {
        let cases: [U256; 5] = [
            [0; 4],
            [7, 0, 0, 0],
            [u64::MAX, u64::MAX, 0, 0],
            [1, 2, 3, 4],
            // About 2^252: 76 digits.
            [u64::MAX, u64::MAX, u64::MAX, (1 << 60) - 1],
        ];
        for n in cases {
            for negative in [false, true] {
                let text = decimal(n, negative);
                assert_eq!(parse(&text), Some((n, negative && n != [0; 4])), "{text}");
            }
        }
        assert_eq!(
            decimal([u64::MAX, u64::MAX, 0, 0], false),
            format!("{}", u128::MAX)
        );
        assert_eq!(
            decimal([10_000_000_000_000_000_000, 0, 0, 0], true),
            "-10000000000000000000"
        );
        assert_eq!(parse("+42"), Some(([42, 0, 0, 0], false)));
        assert_eq!(parse("-0"), Some(([0; 4], false)));
        for bad in ["", "-", "1.5", "1e3", " 1", "0x10", &"9".repeat(78)] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        assert!(parse(&"9".repeat(77)).is_some());
    }
}
