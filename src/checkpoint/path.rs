//! Restores that say where they failed.
//!
//! A state's fields are read by serde's derived code, which reports what
//! it could not read ("cannot read \"x2\" as f64") but not where it was.
//! Every accumulator reads its state through [`restore`], which hands the
//! derived code a deserializer that keeps the path it is at (the field
//! names, the element indices) and puts the path of the innermost failure
//! in front of the error: `engine.sums.m2.value: cannot read "x2" as f64`.
//!
//! The wrapper only watches: every call is forwarded to the format's own
//! deserializer with the same arguments, so a state reads exactly as the
//! derived code reads it. The path costs a few pushes and pops per field;
//! a restore is not a hot path.
//!
//! Only human-readable formats (JSON, YAML, TOML, RON) are read through it.
//! A binary format's data names no fields, and some of them (postcard)
//! keep no message in a custom error: a path would replace their precise
//! error ("unexpected end of input") with a vague one. They read the state
//! directly, as before.

use alloc::{format, string::String, vec::Vec};
use core::{cell::RefCell, fmt, fmt::Write as _};

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

/// Reads a `State` (through the path-keeping deserializer when the format
/// is human-readable) and turns it into `T` with `T::try_from`, whose error (the state's own validation, which
/// names the fields it checks) is passed on as the format's error.
pub(crate) fn restore<'de, State, T, D>(deserializer: D) -> Result<T, D::Error>
where
    State: de::Deserialize<'de>,
    T: TryFrom<State>,
    T::Error: fmt::Display,
    D: Deserializer<'de>,
{
    let state = if deserializer.is_human_readable() {
        let track = Track::default();
        State::deserialize(Tracked {
            inner: deserializer,
            track: &track,
        })
        .map_err(|e| track.locate(e))?
    } else {
        State::deserialize(deserializer)?
    };
    T::try_from(state).map_err(de::Error::custom)
}

/// Implements `Deserialize` for an accumulator through [`restore`] from
/// its state type: `restore_from!([F: Float] Variance<F>, Moments<F>);`.
macro_rules! restore_from {
    ([$($generics:tt)*] $ty:ty, $state:ty) => {
        impl<'de, $($generics)*> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                crate::checkpoint::path::restore::<$state, Self, D>(deserializer)
            }
        }
    };
}
pub(crate) use restore_from;

/// One step of a path: a field's name or an element's index.
enum Step {
    Field(String),
    Index(usize),
}

/// Where the reader is, and where it first failed.
#[derive(Default)]
struct Track {
    /// The steps from the root to the value being read.
    path: RefCell<Vec<Step>>,
    /// The last map key read, waiting for its value.
    key: RefCell<Option<String>>,
    /// The path of the innermost failure, taken as it happened.
    failed: RefCell<Option<String>>,
}

impl Track {
    /// Enters a step, runs `read`, leaves the step; a failure inside is
    /// located here unless a deeper step already located it.
    fn within<T, E>(&self, step: Step, read: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        self.path.borrow_mut().push(step);
        let result = read();
        if result.is_err() {
            self.note_failure();
        }
        self.path.borrow_mut().pop();
        result
    }

    /// Records the current path as the failure's, once.
    fn note_failure(&self) {
        let mut failed = self.failed.borrow_mut();
        if failed.is_none() {
            let path = self.path.borrow();
            let mut text = String::new();
            for step in path.iter() {
                match step {
                    Step::Field(name) => {
                        if !text.is_empty() {
                            text.push('.');
                        }
                        text.push_str(name);
                    }
                    Step::Index(i) => {
                        let _ = write!(text, "[{i}]");
                    }
                }
            }
            *failed = Some(text);
        }
    }

    /// The error, with the failure's path in front when it has one.
    fn locate<E: de::Error>(&self, error: E) -> E {
        match self.failed.borrow().as_deref() {
            Some(path) if !path.is_empty() => E::custom(format_args!("{path}: {error}")),
            _ => error,
        }
    }
}

/// A deserializer (`inner`) that reports the path to `track`.
struct Tracked<'t, D> {
    inner: D,
    track: &'t Track,
}

/// A visitor whose maps, sequences, options and enums are read through
/// [`Tracked`] in turn. `fields` names a struct's fields, for formats that
/// give a struct as a sequence.
struct TrackedVisitor<'t, V> {
    inner: V,
    track: &'t Track,
    fields: &'static [&'static str],
}

/// Forwards every `deserialize_*` method of [`Deserializer`] to `self.inner`
/// with the visitor wrapped by `$wrap`.
macro_rules! forward_deserializer {
    (@plain $wrap:expr; $($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
                let wrap = $wrap;
                self.inner.$method(wrap(visitor, self.track, &[]))
            }
        )*
    };
    ($wrap:expr) => {
        forward_deserializer!(@plain $wrap;
            deserialize_any deserialize_bool deserialize_i8 deserialize_i16
            deserialize_i32 deserialize_i64 deserialize_i128 deserialize_u8
            deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
            deserialize_f32 deserialize_f64 deserialize_char deserialize_str
            deserialize_string deserialize_bytes deserialize_byte_buf
            deserialize_option deserialize_unit deserialize_seq deserialize_map
            deserialize_identifier deserialize_ignored_any);

        fn deserialize_unit_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            let wrap = $wrap;
            self.inner.deserialize_unit_struct(name, wrap(visitor, self.track, &[]))
        }

        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            let wrap = $wrap;
            self.inner.deserialize_newtype_struct(name, wrap(visitor, self.track, &[]))
        }

        fn deserialize_tuple<V: Visitor<'de>>(
            self,
            len: usize,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            let wrap = $wrap;
            self.inner.deserialize_tuple(len, wrap(visitor, self.track, &[]))
        }

        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            len: usize,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            let wrap = $wrap;
            self.inner.deserialize_tuple_struct(name, len, wrap(visitor, self.track, &[]))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            fields: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            let wrap = $wrap;
            self.inner.deserialize_struct(name, fields, wrap(visitor, self.track, fields))
        }

        fn deserialize_enum<V: Visitor<'de>>(
            self,
            name: &'static str,
            variants: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            let wrap = $wrap;
            self.inner.deserialize_enum(name, variants, wrap(visitor, self.track, &[]))
        }

        fn is_human_readable(&self) -> bool {
            self.inner.is_human_readable()
        }
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Tracked<'_, D> {
    type Error = D::Error;

    forward_deserializer!(|inner, track, fields| TrackedVisitor {
        inner,
        track,
        fields
    });
}

/// Forwards the scalar `visit_*` methods of [`Visitor`] to `self.inner`
/// unchanged.
macro_rules! forward_scalars {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
                self.inner.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for TrackedVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_scalars!(
        visit_bool: bool, visit_i8: i8, visit_i16: i16, visit_i32: i32, visit_i64: i64,
        visit_i128: i128, visit_u8: u8, visit_u16: u16, visit_u32: u32, visit_u64: u64,
        visit_u128: u128, visit_f32: f32, visit_f64: f64, visit_char: char,
        visit_str: &str, visit_borrowed_str: &'de str, visit_string: String,
        visit_bytes: &[u8], visit_borrowed_bytes: &'de [u8], visit_byte_buf: Vec<u8>,
    );

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_some(Tracked {
            inner: d,
            track: self.track,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.visit_newtype_struct(Tracked {
            inner: d,
            track: self.track,
        })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_seq(TrackedSeq {
            inner: seq,
            track: self.track,
            fields: self.fields,
            index: 0,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_map(TrackedMap {
            inner: map,
            track: self.track,
        })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_enum(TrackedEnum {
            inner: data,
            track: self.track,
        })
    }
}

/// A seed whose value is read through [`Tracked`].
struct TrackedSeed<'t, S> {
    inner: S,
    track: &'t Track,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for TrackedSeed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.deserialize(Tracked {
            inner: d,
            track: self.track,
        })
    }
}

/// A sequence whose elements are located by index, or by field name when
/// the sequence is a struct.
struct TrackedSeq<'t, A> {
    inner: A,
    track: &'t Track,
    fields: &'static [&'static str],
    index: usize,
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for TrackedSeq<'_, A> {
    type Error = A::Error;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Self::Error> {
        let step = match self.fields.get(self.index) {
            Some(name) => Step::Field(String::from(*name)),
            None => Step::Index(self.index),
        };
        self.index += 1;
        let track = self.track;
        track.within(step, || {
            self.inner
                .next_element_seed(TrackedSeed { inner: seed, track })
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A map whose values are located by their key.
struct TrackedMap<'t, A> {
    inner: A,
    track: &'t Track,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TrackedMap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        *self.track.key.borrow_mut() = None;
        let key = self.inner.next_key_seed(KeySeed {
            inner: seed,
            track: self.track,
        });
        if key.is_err() {
            self.track.note_failure();
        }
        key
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        let name = self
            .track
            .key
            .borrow_mut()
            .take()
            .unwrap_or_else(|| String::from("?"));
        let track = self.track;
        track.within(Step::Field(name), || {
            self.inner
                .next_value_seed(TrackedSeed { inner: seed, track })
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A map key's seed: the key is read as the derived code asks, and its
/// text (or number) kept as the name of the value that follows.
struct KeySeed<'t, S> {
    inner: S,
    track: &'t Track,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.inner.deserialize(KeyDeserializer {
            inner: d,
            track: self.track,
        })
    }
}

/// The deserializer of a map key, which notes the key it gives.
struct KeyDeserializer<'t, D> {
    inner: D,
    track: &'t Track,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KeyDeserializer<'_, D> {
    type Error = D::Error;

    forward_deserializer!(
        |inner, track, _fields: &'static [&'static str]| KeyVisitor { inner, track }
    );
}

/// Notes the key, then gives it to the derived code's visitor.
struct KeyVisitor<'t, V> {
    inner: V,
    track: &'t Track,
}

impl<V> KeyVisitor<'_, V> {
    fn note(&self, key: impl fmt::Display) {
        *self.track.key.borrow_mut() = Some(format!("{key}"));
    }
}

/// `visit_*` methods of a key's visitor that note the key and forward it.
macro_rules! noting_keys {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
                self.note(&v);
                self.inner.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for KeyVisitor<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    noting_keys!(
        visit_bool: bool, visit_i8: i8, visit_i16: i16, visit_i32: i32, visit_i64: i64,
        visit_i128: i128, visit_u8: u8, visit_u16: u16, visit_u32: u32, visit_u64: u64,
        visit_u128: u128, visit_char: char, visit_str: &str,
        visit_borrowed_str: &'de str, visit_string: String,
    );

    forward_scalars!(
        visit_f32: f32, visit_f64: f64, visit_bytes: &[u8],
        visit_borrowed_bytes: &'de [u8], visit_byte_buf: Vec<u8>,
    );
}

/// An enum whose variant's content is read through [`Tracked`].
struct TrackedEnum<'t, A> {
    inner: A,
    track: &'t Track,
}

impl<'de, 't, A: EnumAccess<'de>> EnumAccess<'de> for TrackedEnum<'t, A> {
    type Error = A::Error;
    type Variant = TrackedVariant<'t, A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), Self::Error> {
        let (value, variant) = self.inner.variant_seed(seed)?;
        Ok((
            value,
            TrackedVariant {
                inner: variant,
                track: self.track,
            },
        ))
    }
}

/// A variant's content, read through [`Tracked`].
struct TrackedVariant<'t, A> {
    inner: A,
    track: &'t Track,
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for TrackedVariant<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), Self::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        self.inner.newtype_variant_seed(TrackedSeed {
            inner: seed,
            track: self.track,
        })
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.inner.tuple_variant(
            len,
            TrackedVisitor {
                inner: visitor,
                track: self.track,
                fields: &[],
            },
        )
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.inner.struct_variant(
            fields,
            TrackedVisitor {
                inner: visitor,
                track: self.track,
                fields,
            },
        )
    }
}
