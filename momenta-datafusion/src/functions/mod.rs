//! The SQL aggregate functions, one file per family: each names its
//! functions, says which statistic they accumulate (whose `to_parts`
//! fields are their state) and which value of it each returns. The work
//! is in [`crate::aggregate`], once for all of them.

pub(crate) mod covariance;
pub(crate) mod mean;
pub(crate) mod min_max;
pub(crate) mod shape;
pub(crate) mod variance;
pub(crate) mod weighted;
