//! Helpers shared by the fuzz targets: what the targets remember about the
//! values they fed, NaN-aware comparisons, and serde round trips.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Bit-exact equality of two floats, except that every NaN equals every NaN.
/// `0.0` and `-0.0` differ.
pub trait Same: Copy {
    /// `true` when `self` and `other` are the same value.
    fn same(self, other: Self) -> bool;
}

impl Same for f64 {
    fn same(self, other: Self) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
}

impl Same for f32 {
    fn same(self, other: Self) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
}

impl Same for u64 {
    fn same(self, other: Self) -> bool {
        self == other
    }
}

impl Same for usize {
    fn same(self, other: Self) -> bool {
        self == other
    }
}

impl<T: Same> Same for Option<T> {
    fn same(self, other: Self) -> bool {
        match (self, other) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same(b),
            _ => false,
        }
    }
}

/// What a target knows about the values it fed an accumulator since the
/// last reset.
#[derive(Clone, Debug)]
pub struct Seen {
    /// How many values (saturating).
    pub count: u64,
    /// The smallest value (`+∞` when none).
    pub min: f64,
    /// The largest value (`−∞` when none).
    pub max: f64,
    /// The largest magnitude (0 when none).
    pub max_abs: f64,
    /// Every value is finite and below `limit` in magnitude.
    pub tame: bool,
    limit: f64,
}

impl Seen {
    /// Nothing seen yet; values of magnitude `limit` or more are not tame.
    pub fn new(limit: f64) -> Self {
        Self {
            count: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            max_abs: 0.0,
            tame: true,
            limit,
        }
    }

    /// One more value.
    pub fn add(&mut self, x: f64) {
        self.count = self.count.saturating_add(1);
        self.note(x);
    }

    fn note(&mut self, x: f64) {
        if x.is_nan() || x.abs() >= self.limit {
            self.tame = false;
        }
        if !x.is_nan() {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
            self.max_abs = self.max_abs.max(x.abs());
        }
    }

    /// Several more values.
    pub fn add_all(&mut self, xs: impl IntoIterator<Item = f64>) {
        for x in xs {
            self.add(x);
        }
    }

    /// The values of `other` too (a merge).
    pub fn absorb(&mut self, other: &Seen) {
        self.count = self.count.saturating_add(other.count);
        self.tame &= other.tame;
        if other.count > 0 {
            self.note(other.min);
            self.note(other.max);
        }
    }

    /// Forgets every value.
    pub fn reset(&mut self) {
        *self = Self::new(self.limit);
    }

    /// `m` lies in `[min, max]`, widened on each side by `rel · max_abs +
    /// abs` (`abs`: a few of the float type's smallest subnormals).
    pub fn brackets(&self, m: f64, rel: f64, abs: f64) -> bool {
        let slack = rel * self.max_abs + abs;
        m >= self.min - slack && m <= self.max + slack
    }

    /// Popoviciu's bound on the variance of values in `[min, max]`,
    /// `(max − min)²/4`, widened by `rel · max_abs² + abs`.
    pub fn variance_bound(&self, rel: f64, abs: f64) -> f64 {
        let half = (self.max - self.min) / 2.0;
        half * half + rel * self.max_abs * self.max_abs + abs
    }
}

/// Serializes `value`, restores it from JSON and from CBOR, checks that
/// both restore the same state, and returns the CBOR copy.
///
/// Every state restores from both: `same` compares what the caller can
/// observe, NaN-aware, and the JSON text of each copy must equal the
/// original's, field for field (JSON carries every float as an exact
/// string, NaN and ±∞ included).
pub fn round_trip<T, S>(value: &T, same: S) -> T
where
    T: Serialize + DeserializeOwned + core::fmt::Debug,
    S: Fn(&T, &T) -> bool,
{
    let json = serde_json::to_string(value).expect("serializing to JSON never fails");
    let back: T = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("JSON round trip of {value:?} failed: {e}: {json}"));
    assert!(same(value, &back), "JSON changed {value:?} into {back:?}");
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    let mut cbor = Vec::new();
    ciborium::into_writer(value, &mut cbor).expect("serializing to CBOR never fails");
    let back: T = ciborium::from_reader(cbor.as_slice())
        .unwrap_or_else(|e| panic!("CBOR round trip of {value:?} failed: {e}"));
    assert!(same(value, &back), "CBOR changed {value:?} into {back:?}");
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        json,
        "CBOR changed a field"
    );
    back
}
