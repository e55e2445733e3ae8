//! The crate's error type.

use alloc::string::String;
use core::fmt;

/// An invalid argument or state, with a message that names the value and the
/// rule it breaks.
///
/// Every fallible constructor and method of the crate returns this type;
/// nothing panics on bad input. Inspect [`Error::kind`] to react to a
/// particular case; the [`Display`](core::fmt::Display) text is lowercase and
/// meant for people.
///
/// # Example
///
/// ```
/// use momenta::{Ema, ErrorKind, Momentum};
///
/// let err = Ema::<f64>::new(Momentum::Factor(1.5)).unwrap_err();
/// assert_eq!(err.to_string(), "momentum must be in [0, 1], got 1.5");
/// assert!(matches!(err.kind(), ErrorKind::InvalidParameter { name: "momentum", .. }));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    kind: ErrorKind,
}

/// What went wrong; the payload carries the offending values.
///
/// New kinds may be added in minor releases.
///
/// # Example
///
/// ```
/// use momenta::{ErrorKind, MovingAverage};
///
/// let err = MovingAverage::<f64>::new(0).unwrap_err();
/// assert_eq!(err.kind(), &ErrorKind::InvalidWindow { window: 0 });
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A numeric parameter lies outside its domain, e.g. a momentum of 1.5.
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value that was given.
        value: f64,
        /// The rule it breaks, phrased to follow "must be", e.g. "in [0, 1]".
        rule: &'static str,
    },
    /// A window length of zero.
    InvalidWindow {
        /// The window that was given.
        window: usize,
    },
    /// A slice or vector whose length does not match what the call needs.
    LengthMismatch {
        /// What was measured, e.g. "data" or "running mean".
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A size computation (such as a tensor's element count) overflows `usize`.
    Overflow {
        /// What overflowed.
        what: &'static str,
    },
    /// Too few values to compute a statistic the caller asked for.
    TooFewValues {
        /// The minimum number of values.
        needed: u64,
        /// The number available.
        actual: u64,
    },
    /// Deserialized or restored state that breaks an invariant.
    InvalidState {
        /// Which invariant, in words.
        reason: String,
    },
    /// An exchange between processes failed: a message too large for the
    /// transport, or a peer's state that does not decode or validate.
    Transport {
        /// What went wrong, naming the peer where there is one.
        reason: String,
    },
}

impl Error {
    /// The kind of error, with the values involved.
    ///
    /// ```
    /// use momenta::{ErrorKind, Momentum, Ema};
    /// let err = Ema::<f32>::new(Momentum::Decay(f32::NAN)).unwrap_err();
    /// assert!(matches!(err.kind(), ErrorKind::InvalidParameter { .. }));
    /// ```
    #[must_use]
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    pub(crate) fn parameter(name: &'static str, value: f64, rule: &'static str) -> Self {
        Self::from(ErrorKind::InvalidParameter { name, value, rule })
    }

    pub(crate) fn length(what: &'static str, expected: usize, actual: usize) -> Self {
        Self::from(ErrorKind::LengthMismatch {
            what,
            expected,
            actual,
        })
    }

    #[cfg_attr(
        not(feature = "mpi"),
        allow(dead_code, reason = "only the transports build these")
    )]
    pub(crate) fn transport(reason: impl Into<String>) -> Self {
        Self::from(ErrorKind::Transport {
            reason: reason.into(),
        })
    }

    pub(crate) fn state(reason: impl Into<String>) -> Self {
        Self::from(ErrorKind::InvalidState {
            reason: reason.into(),
        })
    }
}

impl From<ErrorKind> for Error {
    fn from(kind: ErrorKind) -> Self {
        Self { kind }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::InvalidParameter { name, value, rule } => {
                write!(f, "{name} must be {rule}, got {value}")
            }
            ErrorKind::InvalidWindow { window } => {
                write!(f, "window must be at least 1, got {window}")
            }
            ErrorKind::LengthMismatch {
                what,
                expected,
                actual,
            } => {
                write!(f, "{what} must have length {expected}, got {actual}")
            }
            ErrorKind::Overflow { what } => write!(f, "{what} overflows usize"),
            ErrorKind::TooFewValues { needed, actual } => write!(
                f,
                "expected at least {needed} values per channel, got {actual}"
            ),
            ErrorKind::InvalidState { reason } => write!(f, "invalid state: {reason}"),
            ErrorKind::Transport { reason } => write!(f, "transport: {reason}"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}

/// Checks a momentum-like parameter: finite and in `[0, 1]`.
pub(crate) fn check_unit_interval(name: &'static str, value: f64) -> Result<(), Error> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(Error::parameter(name, value, "in [0, 1]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn messages_name_the_value_and_the_rule() {
        let e = check_unit_interval("momentum", 1.5).unwrap_err();
        assert_eq!(e.to_string(), "momentum must be in [0, 1], got 1.5");
        let e = check_unit_interval("momentum", f64::NAN).unwrap_err();
        assert_eq!(e.to_string(), "momentum must be in [0, 1], got NaN");
        assert_eq!(
            Error::length("data", 12, 11).to_string(),
            "data must have length 12, got 11"
        );
        assert_eq!(
            Error::from(ErrorKind::InvalidWindow { window: 0 }).to_string(),
            "window must be at least 1, got 0"
        );
    }

    #[test]
    fn unit_interval_accepts_its_ends() {
        assert!(check_unit_interval("m", 0.0).is_ok());
        assert!(check_unit_interval("m", 1.0).is_ok());
        assert!(check_unit_interval("m", -0.0).is_ok());
        assert!(check_unit_interval("m", -1e-300).is_err());
        assert!(check_unit_interval("m", f64::INFINITY).is_err());
    }
}
