//! The serialized form every count window shares: its length, its values
//! oldest first, and its options (every field always written, so formats
//! that are not self-describing read it back; the options may be absent
//! on the way in, for state written before they existed). Whatever a window derives from its
//! values (sums, deques, ordered sets) is recomputed on the way in, so a
//! restored window cannot hold inconsistent structures.

use alloc::vec::Vec;

use super::policy::{Policy, default_min_periods};
use super::ring::Ring;
use crate::NanPolicy;
use crate::{Error, Float};

/// A count window as serialized.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WindowState<F> {
    pub(crate) window: usize,
    pub(crate) values: Vec<F>,
    #[serde(default)]
    pub(crate) nan_policy: NanPolicy,
    #[serde(default = "default_min_periods")]
    pub(crate) min_periods: usize,
}

/// A moving quantile as serialized: a window and its `q`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QuantileState<F> {
    pub(crate) window: usize,
    pub(crate) q: f64,
    pub(crate) values: Vec<F>,
    #[serde(default)]
    pub(crate) nan_policy: NanPolicy,
    #[serde(default = "default_min_periods")]
    pub(crate) min_periods: usize,
}

impl<F> WindowState<F> {
    /// The policy, after checking that the values fit in the window.
    pub(crate) fn checked_policy(&self) -> Result<Policy, Error> {
        if self.values.len() > self.window {
            return Err(Error::state(alloc::format!(
                "window of {} holds {} values",
                self.window,
                self.values.len()
            )));
        }
        let policy = Policy {
            nan: self.nan_policy,
            ..Policy::default()
        };
        policy.with_min_periods(self.min_periods, Some(self.window))
    }
}

impl<F> From<QuantileState<F>> for (WindowState<F>, f64) {
    fn from(s: QuantileState<F>) -> Self {
        let QuantileState {
            window,
            q,
            values,
            nan_policy,
            min_periods,
        } = s;
        (
            WindowState {
                window,
                values,
                nan_policy,
                min_periods,
            },
            q,
        )
    }
}

/// Serializes a count window as a [`WindowState`], or as a
/// [`QuantileState`] when there is a `q`.
pub(crate) fn serialize<F: Float + serde::Serialize, Z: serde::Serializer>(
    serializer: Z,
    ring: &Ring<F>,
    q: Option<f64>,
    policy: Policy,
) -> Result<Z::Ok, Z::Error> {
    use serde::ser::SerializeStruct;

    /// The values oldest first, without copying them.
    struct Values<'a, F>(&'a Ring<F>);

    impl<F: Float + serde::Serialize> serde::Serialize for Values<'_, F> {
        fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
            serializer.collect_seq(self.0.iter())
        }
    }

    let (name, fields) = match q {
        Some(_) => ("QuantileState", 5),
        None => ("WindowState", 4),
    };
    let mut state = serializer.serialize_struct(name, fields)?;
    state.serialize_field("window", &ring.window())?;
    if let Some(q) = q {
        state.serialize_field("q", &q)?;
    }
    state.serialize_field("values", &Values(ring))?;
    state.serialize_field("nan_policy", &policy.nan)?;
    state.serialize_field("min_periods", &policy.min_periods)?;
    state.end()
}
