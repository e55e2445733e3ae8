#![doc = "Streaming statistics: mergeable mean, variance and moving averages, and BatchNorm statistics."]
#![no_std]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod accumulator;
mod error;
mod float;
mod kernels;
mod mean;
mod moments;
mod momentum;
#[cfg(feature = "rayon")]
mod parallel;
mod variance;

pub use accumulator::{Accumulator, Merge};
pub use error::{Error, ErrorKind};
pub use float::Float;
pub use mean::Mean;
pub use momentum::Momentum;
pub use variance::Variance;

#[cfg(feature = "bench-internals")]
#[doc(hidden)]
pub use kernels::bench as __bench;
