//! How every serialized state writes its floats: so that any value it can
//! hold — NaN with its sign, ±∞, subnormals, `MAX` — reads back as the same
//! bits in any format.
//!
//! - **Binary formats** (postcard, bincode, MPI's transport: those whose
//!   serializer is not human-readable) get the float itself, which they
//!   store bit for bit.
//! - **Human-readable formats** (JSON, YAML, TOML, RON) get a string: the
//!   shortest decimal that reads back as the same value (`"0.1"`,
//!   `"1e300"`, `"-0.0"`), `"inf"`, `"-inf"`, `"NaN"`, `"-NaN"`, or, for a
//!   NaN with another payload, its bits (`"NaN(0x7ff8000000000001)"`). A
//!   string, because a number cannot do it: `serde_json` writes NaN and ±∞
//!   as `null`, which no reader can tell apart, and `serde_json` with its
//!   default features parses a number to within an ulp only (its
//!   `float_roundtrip` feature fixes that, but a user who writes `cargo
//!   add serde_json` does not have it). The string is read by Rust's own
//!   parser, which rounds correctly, in the value's own type.
//!
//! On the way in, a human-readable format may also give a number (state
//! written before this form, or by hand): it is taken as the format read
//! it. A `null` is refused with a message that says why.

use core::fmt;
use core::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};
use serde::ser::Serializer;

use crate::Float;

/// A float that serializes losslessly (see the module documentation).
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub(crate) struct Exact<F>(pub(crate) F);

/// The text of `x`: shortest round-trip decimal, infinities, or NaN with
/// its sign and, unless it is the default NaN, its bits.
struct Text<F>(F);

impl<F: Float> fmt::Display for Text<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if !x.is_nan() {
            // Debug is the shortest decimal that parses back to `x`, with an
            // exponent for very large and very small values.
            return write!(f, "{x:?}");
        }
        let quiet = F::nan().bits();
        let negative_quiet = (-F::nan()).bits();
        match x.bits() {
            b if b == quiet => f.write_str("NaN"),
            b if b == negative_quiet => f.write_str("-NaN"),
            b => write!(f, "NaN({b:#x})"),
        }
    }
}

/// Reads what [`Text`] writes (and whatever Rust's float parser reads).
fn parse<F: Float>(text: &str) -> Option<F> {
    match text {
        "NaN" => Some(F::nan()),
        "-NaN" => Some(-F::nan()),
        _ => match text
            .strip_prefix("NaN(0x")
            .and_then(|t| t.strip_suffix(')'))
        {
            Some(hex) => u64::from_str_radix(hex, 16)
                .ok()
                .and_then(F::from_bits)
                .filter(|x| x.is_nan()),
            None => F::parse(text),
        },
    }
}

impl<F: Float> serde::Serialize for Exact<F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(&Text(self.0))
        } else if core::mem::size_of::<F>() == core::mem::size_of::<f32>() {
            // Exact: `F` is `f32`.
            #[allow(clippy::cast_possible_truncation, reason = "F is f32 here")]
            serializer.serialize_f32(self.0.as_f64() as f32)
        } else {
            serializer.serialize_f64(self.0.as_f64())
        }
    }
}

/// Takes a float as a human-readable format gives it.
struct ExactVisitor<F>(PhantomData<F>);

impl<F: Float> Visitor<'_> for ExactVisitor<F> {
    type Value = Exact<F>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a float, as a string such as \"0.1\", \"-inf\" or \"NaN\", or a number")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        parse(text).map(Exact).ok_or_else(|| {
            E::custom(format_args!(
                "cannot read {text:?} as {}",
                core::any::type_name::<F>()
            ))
        })
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Self::Value, E> {
        Ok(Exact(F::from_f64(x)))
    }

    fn visit_f32<E: de::Error>(self, x: f32) -> Result<Self::Value, E> {
        Ok(Exact(F::from_f64(f64::from(x))))
    }

    #[allow(clippy::cast_precision_loss, reason = "as the format's reader would")]
    fn visit_i64<E: de::Error>(self, x: i64) -> Result<Self::Value, E> {
        Ok(Exact(F::from_f64(x as f64)))
    }

    fn visit_u64<E: de::Error>(self, x: u64) -> Result<Self::Value, E> {
        Ok(Exact(F::from_count(x)))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(E::custom(
            "a null where a float belongs: serde_json writes NaN and ±∞ as null, \
             which cannot be told apart; this crate writes every float as a string \
             (\"NaN\", \"inf\", …) in human-readable formats",
        ))
    }
}

impl<'de, F: Float> serde::Deserialize<'de> for Exact<F> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(ExactVisitor(PhantomData))
        } else if core::mem::size_of::<F>() == core::mem::size_of::<f32>() {
            let x = <f32 as serde::Deserialize>::deserialize(deserializer)?;
            Ok(Self(F::from_f64(f64::from(x))))
        } else {
            let x = <f64 as serde::Deserialize>::deserialize(deserializer)?;
            Ok(Self(F::from_f64(x)))
        }
    }
}

/// `#[serde(with = "crate::checkpoint::float")]` for a field of type `F`.
pub(crate) fn serialize<F: Float, S: Serializer>(x: &F, serializer: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&Exact(*x), serializer)
}

/// `#[serde(with = "crate::checkpoint::float")]` for a field of type `F`.
pub(crate) fn deserialize<'de, F: Float, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<F, D::Error> {
    <Exact<F> as serde::Deserialize>::deserialize(deserializer).map(|x| x.0)
}

/// `#[serde(with = "crate::checkpoint::float::option")]` for an `Option<F>`.
pub(crate) mod option {
    use super::{Deserializer, Exact, Float, Serializer};

    #[allow(clippy::ref_option, reason = "the signature serde's `with` calls")]
    pub(crate) fn serialize<F: Float, S: Serializer>(
        x: &Option<F>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&x.map(Exact), serializer)
    }

    pub(crate) fn deserialize<'de, F: Float, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<F>, D::Error> {
        let x: Option<Exact<F>> = serde::Deserialize::deserialize(deserializer)?;
        Ok(x.map(|x| x.0))
    }
}

/// `#[serde(with = "crate::checkpoint::float::seq")]` for a `Vec<F>`.
pub(crate) mod seq {
    use alloc::vec::Vec;

    use super::{Deserializer, Exact, Float, Serializer};

    pub(crate) fn serialize<F: Float, S: Serializer>(
        xs: &[F],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(xs.iter().map(|&x| Exact(x)))
    }

    pub(crate) fn deserialize<'de, F: Float, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Vec<F>, D::Error> {
        let xs: Vec<Exact<F>> = serde::Deserialize::deserialize(deserializer)?;
        Ok(xs.into_iter().map(|x| x.0).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;
    use alloc::vec::Vec;

    fn text<F: Float>(x: F) -> alloc::string::String {
        Text(x).to_string()
    }

    #[test]
    fn the_text_is_the_shortest_decimal_or_names_the_value() {
        assert_eq!(text(0.1_f64), "0.1");
        assert_eq!(text(0.1_f32), "0.1");
        assert_eq!(text(1e300_f64), "1e300");
        assert_eq!(text(-0.0_f64), "-0.0");
        assert_eq!(text(5e-324_f64), "5e-324");
        assert_eq!(text(f64::MAX), "1.7976931348623157e308");
        assert_eq!(text(f64::NEG_INFINITY), "-inf");
        assert_eq!(text(f64::NAN), "NaN");
        assert_eq!(text(-f64::NAN), "-NaN");
        assert_eq!(
            text(f64::from_bits(0x7ff0_0000_0000_0001)),
            "NaN(0x7ff0000000000001)"
        );
        assert_eq!(text(f32::from_bits(0xffc0_0001)), "NaN(0xffc00001)");
    }

    #[test]
    fn every_text_parses_back_to_the_same_bits() {
        let f64s = [
            0.0,
            -0.0,
            0.1,
            1e6 + 0.885_623_992_7,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff4_0000_dead_beef),
        ];
        for x in f64s {
            let back: f64 = parse(&text(x)).unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{x:?}");
        }
        let f32s = [
            0.1_f32,
            1e-45,
            f32::MAX,
            -f32::NAN,
            f32::from_bits(0x7f80_0001),
        ];
        for x in f32s {
            let back: f32 = parse(&text(x)).unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{x:?}");
        }
    }

    #[test]
    fn parsing_refuses_what_is_not_a_float_of_the_type() {
        assert_eq!(parse::<f64>("one"), None);
        assert_eq!(parse::<f64>("NaN(0x1)"), None); // not a NaN's bits
        assert_eq!(parse::<f32>("NaN(0x7ff8000000000001)"), None); // too wide
        assert_eq!(parse::<f64>("NaN(0xzz)"), None);
        // An f32 is parsed as an f32, not rounded twice through an f64:
        // 1 + 2⁻²⁴ + 2⁻⁶⁰ is above the midpoint of 1 and the next f32, but
        // as an f64 it is the midpoint, which ties to 1.
        let text = "1.00000005960464477625798673798840354720596224069595336914062";
        let twice: f64 = text.parse().unwrap();
        assert_eq!(twice as f32, 1.0);
        assert_eq!(parse::<f32>(text), Some(1.0 + f32::EPSILON));
    }

    #[test]
    fn json_carries_strings_and_binary_formats_the_floats() {
        #[derive(Debug, serde::Serialize, serde::Deserialize)]
        struct S {
            #[serde(with = "super::seq")]
            xs: Vec<f64>,
            #[serde(with = "super::option")]
            o: Option<f32>,
        }
        let xs = vec![1.5_f64, f64::NAN, f64::NEG_INFINITY];
        let s = S { xs, o: Some(0.25) };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"xs":["1.5","NaN","-inf"],"o":"0.25"}"#);
        let back: S = serde_json::from_str(&json).unwrap();
        assert_eq!(back.xs[0], 1.5);
        assert!(back.xs[1].is_nan() && back.xs[2] == f64::NEG_INFINITY);
        let bytes = postcard::to_allocvec(&s).unwrap();
        // Three f64s, one f32: stored as they are.
        assert!(bytes.len() >= 3 * 8 + 4);
        let back: S = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.o, Some(0.25));
        // Numbers still read; null does not.
        let old: S = serde_json::from_str(r#"{"xs":[1.5,2],"o":null}"#).unwrap();
        assert_eq!((old.xs, old.o), (vec![1.5, 2.0], None));
        let e = serde_json::from_str::<S>(r#"{"xs":[null],"o":null}"#).unwrap_err();
        assert!(e.to_string().contains("serde_json writes NaN"), "{e}");
        let e = serde_json::from_str::<S>(r#"{"xs":["1.5x"],"o":null}"#).unwrap_err();
        assert!(
            e.to_string().contains(r#"cannot read "1.5x" as f64"#),
            "{e}"
        );
    }
}
