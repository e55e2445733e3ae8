//! The serialized forms the windows share: a count window's length, its
//! values oldest first, and its options (every field always written, so
//! formats that are not self-describing read it back; the options may be
//! absent on the way in, for state written before they existed).
//!
//! What a window derives from its values alone — extremes, ordered sets,
//! the count of non-finite values — is recomputed on the way in, so a
//! restored window cannot hold inconsistent structures. Running sums are
//! not such a thing: they carry the roundings of every value that went
//! through them, so a window taken afresh from its values would round
//! differently from the one that was saved. `TimeWindow`, and the count
//! windows of sums (`MovingAverage`, `MovingVariance`, `MovingStats`)
//! while off their exact sums, therefore carry their sums as they are
//! ([`EngineState`], [`SumsState`]), and the way in checks them against
//! the values (within the rounding the sums can hold) before the window
//! continues bit for bit as the saved one would have. On the exact sums a
//! count window carries only their mark: the sums taken afresh from the
//! values are exactly the same.

use alloc::vec::Vec;

use super::interpolation::Interpolation;
use super::policy::{Policy, default_min_periods};
use super::ring::Ring;
use crate::NanPolicy;
use crate::checkpoint::float::Exact;
use crate::{Error, Float};

/// A count window as serialized.
#[derive(serde::Deserialize)]
#[serde(bound = "F: Float")]
#[serde(deny_unknown_fields)]
pub(crate) struct WindowState<F> {
    pub(crate) window: usize,
    #[serde(with = "crate::checkpoint::float::seq")]
    pub(crate) values: Vec<F>,
    #[serde(default)]
    pub(crate) nan_policy: NanPolicy,
    #[serde(default = "default_min_periods")]
    pub(crate) min_periods: usize,
}

/// A count window with running sums (`MovingAverage`, `MovingVariance`,
/// `MovingStats`) as serialized: a [`WindowState`] and its engine. The engine is absent
/// in state written before it was carried; the sums are then taken afresh
/// from the values.
#[derive(serde::Deserialize)]
#[serde(bound = "F: Float")]
#[serde(deny_unknown_fields)]
pub(crate) struct SumsWindowState<F> {
    pub(crate) window: usize,
    #[serde(with = "crate::checkpoint::float::seq")]
    pub(crate) values: Vec<F>,
    #[serde(default)]
    pub(crate) nan_policy: NanPolicy,
    #[serde(default = "default_min_periods")]
    pub(crate) min_periods: usize,
    #[serde(default)]
    pub(crate) engine: Option<EngineState<F>>,
}

/// Where a count window stands between the refreshes of its sums, and the
/// sums.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
#[serde(deny_unknown_fields)]
pub(crate) struct EngineState<F> {
    /// The pushes into the full window since its head last wrapped (0
    /// while it fills): the position of the oldest value in the ring.
    pub(crate) head: usize,
    /// The pushes into the full window since the sums were last taken
    /// afresh, counted at each wrap.
    pub(crate) since_refresh: usize,
    /// The value that set the shift is leaving: the next finite value
    /// takes it over.
    pub(crate) rebase_pending: bool,
    pub(crate) sums: SumsState<F>,
}

/// A window's running sums as they are: the compensated sum of the values
/// minus a shift, and M2 where the window keeps it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
#[serde(deny_unknown_fields)]
pub(crate) struct SumsState<F> {
    #[serde(with = "crate::checkpoint::float")]
    pub(crate) shift: F,
    #[serde(with = "crate::checkpoint::float")]
    pub(crate) hi: F,
    #[serde(with = "crate::checkpoint::float")]
    pub(crate) lo: F,
    #[serde(with = "crate::checkpoint::float")]
    pub(crate) lo_churn: F,
    #[serde(with = "crate::checkpoint::float")]
    pub(crate) scale: F,
    pub(crate) m2: Option<M2State<F>>,
}

/// M2 as a window keeps it: the value, the magnitude of its updates since
/// it was last computed afresh, and the power of two its deviations are
/// brought down by.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(bound = "F: Float")]
#[serde(deny_unknown_fields)]
pub(crate) struct M2State<F> {
    #[serde(with = "crate::checkpoint::float")]
    pub(crate) value: F,
    #[serde(with = "crate::checkpoint::float")]
    pub(crate) churn: F,
    #[serde(with = "crate::checkpoint::float")]
    pub(crate) scale: F,
}

/// A moving quantile as serialized: a window, its `q` and how it reads a
/// rank between two values.
#[derive(serde::Deserialize)]
#[serde(bound = "F: Float")]
#[serde(deny_unknown_fields)]
pub(crate) struct QuantileState<F> {
    pub(crate) window: usize,
    #[serde(with = "crate::checkpoint::float")]
    pub(crate) q: f64,
    #[serde(with = "crate::checkpoint::float::seq")]
    pub(crate) values: Vec<F>,
    #[serde(default)]
    pub(crate) nan_policy: NanPolicy,
    #[serde(default = "default_min_periods")]
    pub(crate) min_periods: usize,
    /// Absent in state saved before it existed: `Linear`.
    #[serde(default)]
    pub(crate) interpolation: Interpolation,
}

impl<F> WindowState<F> {
    /// The policy, after checking that the values fit in the window.
    pub(crate) fn checked_policy(&self) -> Result<Policy, Error> {
        if self.values.len() > self.window {
            return Err(Error::state(alloc::format!(
                "window of {:?} holds {:?} values",
                self.window,
                self.values.len()
            )));
        }
        let policy = Policy {
            nan: self.nan_policy,
            ..Policy::default()
        };
        policy.with_min_periods(self.min_periods, self.window)
    }
}

impl<F> From<SumsWindowState<F>> for (WindowState<F>, Option<EngineState<F>>) {
    fn from(s: SumsWindowState<F>) -> Self {
        let SumsWindowState {
            window,
            values,
            nan_policy,
            min_periods,
            engine,
        } = s;
        (
            WindowState {
                window,
                values,
                nan_policy,
                min_periods,
            },
            engine,
        )
    }
}

impl<F> From<QuantileState<F>> for (WindowState<F>, f64, Interpolation) {
    fn from(s: QuantileState<F>) -> Self {
        let QuantileState {
            window,
            q,
            values,
            nan_policy,
            min_periods,
            interpolation,
        } = s;
        (
            WindowState {
                window,
                values,
                nan_policy,
                min_periods,
            },
            q,
            interpolation,
        )
    }
}

/// What a count window writes beside its values and options.
pub(crate) enum Extra<'a, F> {
    /// Nothing: [`WindowState`].
    None,
    /// Its `q` and interpolation: [`QuantileState`].
    Quantile(f64, Interpolation),
    /// Its engine: [`SumsWindowState`].
    Engine(&'a EngineState<F>),
}

/// Serializes a count window as a [`WindowState`], a [`QuantileState`] or
/// a [`SumsWindowState`].
pub(crate) fn serialize<F: Float, Z: serde::Serializer>(
    serializer: Z,
    ring: &Ring<F>,
    extra: &Extra<'_, F>,
    policy: Policy,
) -> Result<Z::Ok, Z::Error> {
    use serde::ser::SerializeStruct;

    /// The values oldest first, without copying them.
    struct Values<'a, F>(&'a Ring<F>);

    impl<F: Float> serde::Serialize for Values<'_, F> {
        fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
            serializer.collect_seq(self.0.iter().map(Exact))
        }
    }

    let (name, fields) = match extra {
        Extra::None => ("WindowState", 4),
        Extra::Quantile(..) => ("QuantileState", 6),
        Extra::Engine(_) => ("SumsWindowState", 5),
    };
    let mut state = serializer.serialize_struct(name, fields)?;
    state.serialize_field("window", &ring.window())?;
    if let Extra::Quantile(q, _) = extra {
        state.serialize_field("q", &Exact(*q))?;
    }
    state.serialize_field("values", &Values(ring))?;
    state.serialize_field("nan_policy", &policy.nan)?;
    state.serialize_field("min_periods", &policy.min_periods)?;
    if let Extra::Quantile(_, how) = extra {
        state.serialize_field("interpolation", how)?;
    }
    if let Extra::Engine(engine) = extra {
        state.serialize_field("engine", &Some(engine))?;
    }
    state.end()
}
