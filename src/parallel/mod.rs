//! Statistics across threads and processes: any mergeable accumulator
//! folded over a rayon parallel iterator (`threads`, feature `rayon`)
//! and all-reduced over an MPI communicator (`mpi`, feature `mpi`, the
//! public `momenta::mpi`).
//!
//! Both sit above every family: they only need [`Merge`](crate::Merge)
//! (and, for MPI, the serialized state), so a new mergeable type takes
//! part in both without a line here.

#[cfg(feature = "mpi")]
pub mod mpi;
#[cfg(feature = "rayon")]
pub(crate) mod threads;
