//! Statistics across machines: an all-reduce of any mergeable statistic over
//! an MPI communicator (feature `mpi`, through the rsmpi `mpi` crate).
//!
//! Data-parallel training and distributed data pipelines keep one
//! statistic per process — a [`Variance`](crate::Variance) of a shard, the
//! [`BatchStats`](crate::batchnorm::BatchStats) of a worker's part of the
//! batch — and need the statistic of the whole on every process.
//! [`all_merge`] does that exactly:
//!
//! - each rank's statistic travels as its whole serialized state (the
//!   `f64` shift, offset and M2, never a mean rounded to `f32`), encoded
//!   with `postcard`, which keeps every bit, NaN and ±∞ included;
//! - the states are gathered on every rank (`MPI_Allgatherv`) and merged
//!   there in rank order with [`Merge`] — Chan's formula for the
//!   moments, not an average of means — so unequal counts per rank are
//!   weighted correctly;
//! - every rank merges the same states in the same order, so every rank
//!   ends with the same bits, whatever reduction tree the MPI library would
//!   have used for `MPI_Allreduce`.
//!
//! The gathered states are small (a count and three `f64` per channel), so
//! gathering them all costs the same as a reduction would for the sizes
//! statistics have.
//!
//! # Running it
//!
//! Build with `--features mpi` against an MPI library (OpenMPI or MPICH, with
//! its development headers, and libclang for the bindings), then start one
//! process per rank with the launcher: `mpirun -np 4 target/release/...`.
//! On a cluster, the same binary goes to every node and the launcher (or the
//! batch system: `srun` under Slurm) places the ranks; nothing here depends
//! on where they run. `examples/mpi_sync_batchnorm.rs` is a complete
//! program.

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use ::mpi::Count;
use ::mpi::datatype::PartitionMut;
use ::mpi::traits::CommunicatorCollectives;
use serde::Serialize;
use serde::de::DeserializeOwned;

#[cfg(doc)]
use crate::ErrorKind;
use crate::{Error, Merge};

/// Every rank's statistic, in rank order, on every rank.
///
/// The building block of [`all_merge`], for callers that want to inspect
/// or merge the states themselves (with
/// [`BatchStats::try_merge`](crate::batchnorm::BatchStats::try_merge), say,
/// to report ranks whose channel counts disagree).
///
/// ```no_run
/// use momenta::Variance;
/// use mpi::traits::Communicator;
///
/// let universe = mpi::initialize().expect("MPI starts once");
/// let world = universe.world();
/// let local = Variance::<f64>::from_slice(&[f64::from(world.rank()); 3]);
/// let all = momenta::mpi::all_gather(&world, &local)?;
/// assert_eq!(all.len(), usize::try_from(world.size()).unwrap_or(0));
/// # Ok::<(), momenta::Error>(())
/// ```
///
/// # Errors
///
/// [`ErrorKind::Transport`] when a serialized statistic, or all of them
/// together, exceed what an MPI count (`i32`) addresses, when the statistic
/// does not serialize, or when a rank's state does not decode or fails the
/// type's validation (a corrupt or mismatched peer); the message names the
/// rank.
pub fn all_gather<C, T>(comm: &C, local: &T) -> Result<Vec<T>, Error>
where
    C: CommunicatorCollectives,
    T: Serialize + DeserializeOwned,
{
    let bytes = postcard::to_allocvec(local)
        .map_err(|e| Error::transport(format!("the statistic does not serialize: {e}")))?;
    let len = Count::try_from(bytes.len()).map_err(|_| {
        Error::transport(format!(
            "a statistic of {} bytes exceeds an MPI count",
            bytes.len()
        ))
    })?;
    let ranks = usize::try_from(comm.size()).unwrap_or(0);
    let mut lens: Vec<Count> = vec![0; ranks];
    comm.all_gather_into(&len, &mut lens[..]);
    let mut displs: Vec<Count> = Vec::with_capacity(ranks);
    let mut total: Count = 0;
    for &l in &lens {
        displs.push(total);
        total = total
            .checked_add(l)
            .ok_or_else(|| Error::transport("the gathered statistics exceed an MPI count"))?;
    }
    let mut buf = vec![0_u8; usize::try_from(total).unwrap_or(0)];
    {
        let mut partition = PartitionMut::new(&mut buf[..], lens.clone(), &displs[..]);
        comm.all_gather_varcount_into(&bytes[..], &mut partition);
    }
    lens.iter()
        .zip(&displs)
        .enumerate()
        .map(|(rank, (&len, &start))| {
            let start = usize::try_from(start).unwrap_or(0);
            let len = usize::try_from(len).unwrap_or(0);
            let state = buf.get(start..start + len).unwrap_or(&[]);
            postcard::from_bytes(state).map_err(|e| {
                Error::transport(format!("the statistic of rank {rank} does not decode: {e}"))
            })
        })
        .collect()
}

/// The statistic of every rank's data, on every rank: each rank's state
/// gathered and merged in rank order (see the module documentation).
///
/// Every rank gets the same bits. For [`BatchStats`](crate::batchnorm::BatchStats)
/// whose channel counts differ between ranks the merge is poisoned, as
/// [`Merge`] for them documents, and a running update from it is an `Err`;
/// [`all_gather`] and `try_merge` name the ranks instead.
///
/// ```no_run
/// use momenta::batchnorm::{BatchStats, BnConfig, Layout, RunningStats};
///
/// let universe = mpi::initialize().expect("MPI starts once");
/// let world = universe.world();
/// let shard: Vec<f32> = vec![0.5; 2 * 3 * 4 * 4]; // this rank's images
/// let local = BatchStats::<f32>::compute(&shard, Layout::nchw(2, 3, 4, 4)?)?;
/// let batch = momenta::mpi::all_merge(&world, &local)?;
/// let mut running = RunningStats::new(3, BnConfig::pytorch());
/// running.update(&batch)?; // the same on every rank
/// # Ok::<(), momenta::Error>(())
/// ```
///
/// # Errors
///
/// As [`all_gather`]; and [`ErrorKind::Transport`] for a communicator
/// without ranks.
pub fn all_merge<C, T>(comm: &C, local: &T) -> Result<T, Error>
where
    C: CommunicatorCollectives,
    T: Merge + Serialize + DeserializeOwned,
{
    let mut states = all_gather(comm, local)?.into_iter();
    let mut merged = states
        .next()
        .ok_or_else(|| Error::transport("a communicator without ranks has no statistic"))?;
    for state in states {
        merged.merge(&state);
    }
    Ok(merged)
}
