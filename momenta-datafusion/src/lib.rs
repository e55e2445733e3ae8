//! momenta's exact, mergeable statistics as DataFusion aggregate and
//! window functions.
//!
//! DataFusion's own `var_pop`, `stddev`, `covar` and `corr` lose digits on
//! data far from zero and change with the number of partitions (its
//! grouped `corr` can leave `[−1, 1]`). The functions here keep every
//! group's state as momenta keeps it — a shift taken from the data, the
//! offset of the mean from it, the centred sums — and merge partitions with
//! Chan's formulas, so a query returns what the exact arithmetic would, to
//! within a few units in the last place, on one core, in many partitions
//! and on a Ballista cluster alike.
//!
//! ```
//! use momenta_datafusion::datafusion::prelude::*;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> momenta_datafusion::datafusion::error::Result<()> {
//! let ctx = SessionContext::new();
//! momenta_datafusion::register_all(&ctx);
//! let df = ctx
//!     .sql("SELECT momenta_var_pop(x) AS v FROM (VALUES (1e16), (1e16 + 2)) AS t(x)")
//!     .await?;
//! let batches = df.collect().await?;
//! let v = batches[0].column(0).as_any()
//!     .downcast_ref::<momenta_datafusion::datafusion::arrow::array::Float64Array>()
//!     .unwrap()
//!     .value(0);
//! assert_eq!(v, 1.0); // DataFusion's var_pop says 2
//! # Ok(())
//! # }
//! ```
//!
//! # The functions
//!
//! Aggregates (each has a `GroupsAccumulator`: every group's state in one
//! vector, rows sorted out by group a batch at a time):
//!
//! | family | functions |
//! |---|---|
//! | variance | `momenta_var_pop`, `momenta_var_samp` (`momenta_var`), `momenta_stddev_pop`, `momenta_stddev_samp` (`momenta_stddev`) |
//! | covariance | `momenta_covar_pop`, `momenta_covar_samp` (`momenta_covar`), `momenta_corr` |
//! | shape | `momenta_skewness` (G1), `momenta_skewness_pop` (g1), `momenta_kurtosis` (G2), `momenta_kurtosis_pop` (g2) |
//! | weighted | `momenta_weighted_mean(x, w)`, `momenta_weighted_var_pop`/`_samp`/`_reliability(x, w)`, and `_stddev_` of each |
//! | mean, extremes | `momenta_mean` (`momenta_avg`), `momenta_min`, `momenta_max`, `momenta_range` |
//!
//! They take any numeric column: floats, integers (`Int64`/`UInt64`
//! beyond 2⁵³ are rounded to the nearest `f64`) and decimals (converted
//! to the nearest `f64`, rounded once), and return `Float64`. NULL rows
//! are skipped; a function returns NULL where SQL expects it (no rows,
//! `var_samp` of one row, `corr` of a constant column); NaN and ±∞
//! propagate; `|corr| ≤ 1`. `f(DISTINCT x)` works where DataFusion
//! rewrites it to a `GROUP BY x` (one distinct argument in the query);
//! otherwise it is an error saying so.
//!
//! Window functions (`OVER (PARTITION BY … ORDER BY …)`), for what cannot
//! be merged or retracted; each row's value is the core crate's push loop
//! over the partition's rows in order, bit for bit:
//!
//! | family | functions |
//! |---|---|
//! | exponential (pandas `ewm`) | `momenta_ewm_mean`, `_var`, `_var_pop`, `_std`, `_std_pop` `(x, alpha [, adjust])`; `momenta_ewm_cov`, `_cov_pop`, `_corr` `(x, y, alpha [, adjust])` |
//! | exponential, irregular rows | each of those with `_by`: `(x [, y], t, half_life [, adjust])`, the past decaying by `2^(−Δt/half_life)` |
//! | moving (the last `w` rows) | `momenta_moving_mean`, `_var`, `_var_pop`, `_std`, `_std_pop`, `_min`, `_max`, `_median` `(x, w)`; `momenta_moving_quantile(x, w, q)` |
//!
//! A NULL keeps its place (a gap, as pandas' `ignore_na=False`; a place
//! in the window), or with `IGNORE NULLS` takes none.
//!
//! [`register_all_with_builtin_names`] also registers the variance and
//! covariance families under DataFusion's names (`var_pop`, `var`,
//! `var_samp`, `stddev`, `stddev_pop`, `covar_pop`, `covar_samp`, `corr`,
//! …), so that existing SQL gets exact answers unchanged.
//!
//! # Distributed: Ballista
//!
//! A function's state is plain `UInt64` and `Float64` columns (its
//! `to_parts` fields), which Ballista ships between stages like any other
//! data; the functions need no codec. Executors look functions up by name
//! in their own registry, so a cluster's scheduler and executors must be
//! built with them: [`register_in`] fills a scheduler's session state, and
//! with the feature `ballista`, `ballista::function_registry` is an
//! executor's registry.

#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![warn(clippy::pedantic)]
#![cfg_attr(
    test,
    allow(
        clippy::float_cmp,
        clippy::cast_possible_truncation,
        reason = "unit tests compare floats exactly on purpose"
    )
)]

mod aggregate;
#[cfg(feature = "ballista")]
pub mod ballista;
mod functions;
mod input;
mod window;

use std::sync::Arc;

use datafusion::error::Result;
use datafusion::execution::FunctionRegistry;
use datafusion::logical_expr::{AggregateUDF, WindowUDF};
use datafusion::prelude::SessionContext;

/// The DataFusion this crate is built with (55.2): use it, and the
/// versions of Arrow and DataFusion always agree with the functions'.
///
/// ```
/// use momenta_datafusion::datafusion::prelude::SessionContext;
///
/// let ctx = SessionContext::new();
/// momenta_datafusion::register_all(&ctx);
/// ```
pub use datafusion;

/// Every aggregate function under its `momenta_` name (and aliases).
///
/// ```
/// let names: Vec<String> = momenta_datafusion::aggregate_functions()
///     .iter()
///     .map(|f| f.name().to_owned())
///     .collect();
/// assert!(names.contains(&"momenta_corr".to_owned()));
/// ```
#[must_use]
pub fn aggregate_functions() -> Vec<Arc<AggregateUDF>> {
    [
        functions::variance::functions(),
        functions::covariance::functions(),
        functions::shape::functions(),
        functions::weighted::functions(),
        functions::mean::functions(),
        functions::min_max::functions(),
    ]
    .concat()
}

/// The variance and covariance families under DataFusion's built-in names
/// and aliases: `var_pop` (`var_population`), `var` (`var_samp`,
/// `var_sample`), `stddev_pop`, `stddev` (`stddev_samp`), `covar_pop`,
/// `covar_samp` (`covar`) and `corr`. Registered, they replace the
/// built-ins in SQL (and in [`FunctionRegistry::udaf`] look-ups; the
/// DataFrame helpers of `datafusion::functions_aggregate::expr_fn` call the
/// built-ins directly).
///
/// [`FunctionRegistry::udaf`]: https://docs.rs/datafusion-expr/55.2.0/datafusion_expr/registry/trait.FunctionRegistry.html#tymethod.udaf
///
/// ```
/// let names: Vec<String> = momenta_datafusion::builtin_name_functions()
///     .iter()
///     .map(|f| f.name().to_owned())
///     .collect();
/// assert!(names.contains(&"var_pop".to_owned()));
/// ```
#[must_use]
pub fn builtin_name_functions() -> Vec<Arc<AggregateUDF>> {
    [
        functions::variance::builtin_names(),
        functions::covariance::builtin_names(),
    ]
    .concat()
}

/// Every window function: the exponentially weighted `momenta_ewm_*` and
/// the moving-window `momenta_moving_*`.
///
/// ```
/// let names: Vec<String> = momenta_datafusion::window_functions()
///     .iter()
///     .map(|f| f.name().to_owned())
///     .collect();
/// assert!(names.contains(&"momenta_ewm_mean_by".to_owned()));
/// ```
#[must_use]
pub fn window_functions() -> Vec<Arc<WindowUDF>> {
    window::functions()
}

/// Registers every function (aggregates and window functions) under its
/// `momenta_` name.
///
/// ```
/// use momenta_datafusion::datafusion::execution::FunctionRegistry;
/// use momenta_datafusion::datafusion::prelude::SessionContext;
///
/// let ctx = SessionContext::new();
/// momenta_datafusion::register_all(&ctx);
/// assert!(ctx.udaf("momenta_kurtosis").is_ok());
/// ```
pub fn register_all(ctx: &SessionContext) {
    for f in aggregate_functions() {
        ctx.register_udaf(f.as_ref().clone());
    }
    for f in window_functions() {
        ctx.register_udwf(f.as_ref().clone());
    }
}

/// [`register_all`], and the variance and covariance families under
/// DataFusion's names too ([`builtin_name_functions`]), which then replace
/// the built-ins: `SELECT var_pop(x) FROM t` runs momenta's.
///
/// ```
/// use momenta_datafusion::datafusion::execution::FunctionRegistry;
/// use momenta_datafusion::datafusion::prelude::SessionContext;
///
/// let ctx = SessionContext::new();
/// momenta_datafusion::register_all_with_builtin_names(&ctx);
/// assert!(ctx.udaf("stddev").is_ok());
/// ```
pub fn register_all_with_builtin_names(ctx: &SessionContext) {
    register_all(ctx);
    for f in builtin_name_functions() {
        ctx.register_udaf(f.as_ref().clone());
    }
}

/// Registers every function in a [`FunctionRegistry`] — a `SessionState`
/// before a Ballista scheduler or executor is started with it, say — under
/// its `momenta_` names, and under DataFusion's names as well when
/// `builtin_names` is true.
///
/// [`FunctionRegistry`]: https://docs.rs/datafusion-expr/55.2.0/datafusion_expr/registry/trait.FunctionRegistry.html
///
/// # Errors
///
/// What the registry returns (DataFusion's `SessionState` never fails).
///
/// ```
/// use momenta_datafusion::datafusion::execution::SessionStateBuilder;
///
/// let mut state = SessionStateBuilder::new().with_default_features().build();
/// momenta_datafusion::register_in(&mut state, false)?;
/// assert!(state.aggregate_functions().contains_key("momenta_var_pop"));
/// # Ok::<(), momenta_datafusion::datafusion::error::DataFusionError>(())
/// ```
pub fn register_in(registry: &mut dyn FunctionRegistry, builtin_names: bool) -> Result<()> {
    for f in aggregate_functions() {
        registry.register_udaf(f)?;
    }
    for f in window_functions() {
        registry.register_udwf(f)?;
    }
    if builtin_names {
        for f in builtin_name_functions() {
            registry.register_udaf(f)?;
        }
    }
    Ok(())
}
