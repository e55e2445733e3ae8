//! The one adapter between momenta's mergeable statistics and DataFusion's
//! aggregate functions.
//!
//! A statistic joins through [`Statistic`] (its inputs, its slice kernel,
//! one row's update, its merge and its `to_parts` fields); a SQL function
//! through [`Function`] (its name and which value of the statistic it
//! returns). Everything else — the function's signature and state fields,
//! the accumulator for one group ([`accumulator`]) and for many
//! ([`groups`]; for the statistics with [`FROM_EXACT`](Statistic::FROM_EXACT),
//! the mean, variance and covariance families, [`exact_groups`], whose
//! groups keep exact integer sums in one flat vector and leave what those
//! refuse to the per-group states of [`partial`]), the state columns
//! ([`state`]) — is written here once, for every statistic, so that no two
//! functions can drift apart.

mod accumulator;
mod exact_groups;
mod groups;
mod partial;
mod state;
#[cfg(test)]
mod tests;

use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{Result, not_impl_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::format_state_name;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, GroupsAccumulator, Signature, Volatility,
};

use crate::input;

/// A mergeable momenta statistic, seen by the adapter.
///
/// Its state travels between DataFusion's partial and final stages (and
/// between Ballista's executors) as one `UInt64` column `count` and one
/// `Float64` column per name in [`PARTS`](Statistic::PARTS): the fields of
/// the statistic's `to_parts`, lossless, so that a state rebuilt from its
/// columns goes on bit for bit as the original would.
pub(crate) trait Statistic: Clone + Debug + Default + Send + Sync + 'static {
    /// Arguments per row: 1 (`x`), or 2 (`x, y` or `x, weight`).
    const ARITY: usize;
    /// The `f64` fields of `to_parts` after `count`, in their order.
    const PARTS: &'static [&'static str];

    /// The number of rows taken in.
    fn count(&self) -> u64;

    /// Whether it is the state of no rows at all, which a merge skips.
    /// (A weighted statistic counts only positive weights, and a NaN with
    /// weight 0 is a state of count 0 that is not empty.)
    fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// The statistic of whole columns with every row present (`columns`
    /// has [`ARITY`](Statistic::ARITY) slices of one length): the core
    /// crate's slice kernel.
    ///
    /// # Errors
    ///
    /// An invalid row (a negative weight, say), with momenta's message.
    fn from_columns(columns: &[&[f64]]) -> Result<Self, momenta::Error>;

    /// Checks a row before it is buffered for [`from_columns`]: what
    /// `from_columns` would refuse (a weight that is negative, say). Most
    /// statistics take any row.
    ///
    /// # Errors
    ///
    /// As [`from_columns`](Statistic::from_columns).
    ///
    /// [`from_columns`]: Statistic::from_columns
    fn check_row(_x: f64, _y: f64) -> Result<(), momenta::Error> {
        Ok(())
    }

    /// The row `(x, y)` a state of one row was made of, as far as its
    /// fields tell (the adapter checks that pushing it gives the state back
    /// bit for bit before it uses it); `y` is 0 for a statistic of one
    /// argument.
    fn as_row(&self) -> Option<(f64, f64)>;

    /// Takes in one row (`y` is unused by statistics of one argument).
    ///
    /// # Errors
    ///
    /// As [`from_columns`](Statistic::from_columns); an error changes
    /// nothing.
    fn push_row(&mut self, x: f64, y: f64) -> Result<(), momenta::Error>;

    /// How the statistic is read from exact sums, when it can be: then
    /// `GROUP BY` keeps each group's rows in them.
    const FROM_EXACT: Option<ReadExact<Self>> = None;

    /// Merges another state into this one (Chan's formulas).
    fn merge(&mut self, other: &Self);

    /// Writes the `f64` fields of `to_parts` into `parts` (of length
    /// `PARTS.len()`).
    fn write_parts(&self, parts: &mut [f64]);

    /// Rebuilds a state from `count` and the `f64` fields of `to_parts`.
    ///
    /// # Errors
    ///
    /// A state that `from_parts` rejects (a negative M2, say).
    fn from_parts(count: u64, parts: &[f64]) -> Result<Self, momenta::Error>;
}

/// How a statistic is read from the exact sums of its rows: for the
/// statistics of one column read from `Σx`, `Σx²` (mean, variance), or
/// of two read from those and `Σxy` (covariance, correlation).
///
/// Reading fails only on fields the statistic's `from_parts` rejects.
pub(crate) enum ReadExact<S> {
    /// From [`momenta::ExactSums`].
    One(fn(&momenta::ExactSums) -> Result<S, momenta::Error>),
    /// From [`momenta::ExactCoSums`].
    Two(fn(&momenta::ExactCoSums) -> Result<S, momenta::Error>),
}

/// One SQL aggregate function over a [`Statistic`].
pub(crate) trait Function: Debug + Send + Sync + 'static {
    /// The statistic it accumulates.
    type Stat: Statistic;
    /// The value it returns: `None` is SQL's NULL.
    fn evaluate(stat: &Self::Stat) -> Option<f64>;
}

/// A SQL aggregate function: its names and the statistic behind it.
pub(crate) struct Aggregate<F> {
    name: String,
    aliases: Vec<String>,
    signature: Signature,
    function: PhantomData<fn() -> F>,
}

impl<F: Function> Aggregate<F> {
    /// The function `name`, also called by each of `aliases`.
    pub(crate) fn udaf(name: &str, aliases: &[&str]) -> Arc<AggregateUDF> {
        Arc::new(AggregateUDF::from(Self {
            name: name.to_owned(),
            aliases: aliases.iter().map(|&a| a.to_owned()).collect(),
            signature: Signature::user_defined(Volatility::Immutable),
            function: PhantomData,
        }))
    }
}

impl<F> Debug for Aggregate<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Aggregate")
            .field("name", &self.name)
            .field("aliases", &self.aliases)
            .finish_non_exhaustive()
    }
}

// Two functions are the same when their names and statistics are.
impl<F> PartialEq for Aggregate<F> {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.aliases == other.aliases
    }
}

impl<F> Eq for Aggregate<F> {}

impl<F> Hash for Aggregate<F> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.aliases.hash(state);
    }
}

impl<F: Function> AggregateUDFImpl for Aggregate<F> {
    fn name(&self) -> &str {
        &self.name
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        input::coerce_numbers(&self.name, F::Stat::ARITY, arg_types)
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        let count = Field::new(
            format_state_name(args.name, "count"),
            DataType::UInt64,
            true,
        );
        let parts = F::Stat::PARTS
            .iter()
            .map(|part| Field::new(format_state_name(args.name, part), DataType::Float64, true));
        Ok(std::iter::once(count).chain(parts).map(Arc::new).collect())
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if args.is_distinct {
            return not_impl_err!("{}(DISTINCT …) is not supported", self.name);
        }
        Ok(Box::new(accumulator::StatAccumulator::<F>::default()))
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        !args.is_distinct
    }

    fn create_groups_accumulator(
        &self,
        _args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        Ok(match F::Stat::FROM_EXACT {
            Some(ReadExact::One(read)) => Box::new(exact_groups::ExactGroupsAccumulator::<
                F,
                Vec<momenta::ExactSums>,
            >::new(read)),
            Some(ReadExact::Two(read)) => Box::new(exact_groups::ExactGroupsAccumulator::<
                F,
                momenta::GroupedCoSums,
            >::new(read)),
            None => Box::new(groups::StatGroupsAccumulator::<F>::default()),
        })
    }
}
