//! Ballista: what a cluster's processes need (feature `ballista`).
//!
//! This module exists only with the feature `ballista`
//! (`momenta-datafusion = { version = "0.1", features = ["ballista"] }`),
//! which also builds Ballista's client, scheduler and executor crates.
//!
//! A Ballista plan names its functions, and each process looks the names
//! up in its own registry: the scheduler in the session state its session
//! builder makes (fill it with [`register_in`](crate::register_in)), each
//! executor in the [`BallistaFunctionRegistry`] it is started with
//! ([`function_registry`]). The functions' states are plain `UInt64` and
//! `Float64` columns, so no extension codec is needed.
//!
//! [`BallistaFunctionRegistry`]: https://docs.rs/ballista-core/55.0.0/ballista_core/registry/struct.BallistaFunctionRegistry.html

use std::sync::Arc;

use ballista_core::registry::BallistaFunctionRegistry;

/// Ballista's default registry with every momenta function added under
/// its name and aliases: an executor's `override_function_registry`.
///
/// With `builtin_names`, the variance and covariance families also take
/// DataFusion's names ([`builtin_name_functions`](crate::builtin_name_functions));
/// the scheduler's session builder must then register them the same way.
///
/// ```
/// let registry = momenta_datafusion::ballista::function_registry(false);
/// assert!(registry.aggregate_functions.contains_key("momenta_var"));
/// assert!(registry.window_functions.contains_key("momenta_ewm_mean"));
/// ```
#[must_use]
pub fn function_registry(builtin_names: bool) -> BallistaFunctionRegistry {
    let mut registry = BallistaFunctionRegistry::default();
    let mut aggregates = crate::aggregate_functions();
    if builtin_names {
        aggregates.extend(crate::builtin_name_functions());
    }
    for f in aggregates {
        for name in std::iter::once(f.name()).chain(f.aliases().iter().map(String::as_str)) {
            registry
                .aggregate_functions
                .insert(name.to_owned(), Arc::clone(&f));
        }
    }
    for f in crate::window_functions() {
        registry.window_functions.insert(f.name().to_owned(), f);
    }
    registry
}
