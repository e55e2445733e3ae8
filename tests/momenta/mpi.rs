//! The MPI transport in a single process (MPI's singleton mode, without a
//! launcher): gathering and merging one rank's statistic gives it back
//! bit for bit, NaN states included. The multi-rank behaviour — unequal
//! shards, equality with one process fed everything, mismatched channel
//! counts — is checked by `examples/mpi_sync_batchnorm.rs` under
//! `mpirun -np 4` in CI.

#![cfg(feature = "mpi")]

use momenta::batchnorm::{BatchStats, Layout};
use momenta::{Mean, Variance};

#[test]
fn one_rank_gets_its_own_statistics_back_bit_for_bit() {
    let universe = mpi::initialize().expect("MPI initializes once per process");
    let world = universe.world();

    let v = Variance::<f32>::from_slice(&[1e4_f32, 1e4 + 0.01, 1e4 + 0.02, f32::NAN]);
    let back = momenta::mpi::all_merge(&world, &v).expect("one rank");
    assert_eq!(back.to_parts().count, 4);
    assert_eq!(
        back.to_parts().shift.to_bits(),
        v.to_parts().shift.to_bits()
    );
    assert!(back.mean().unwrap().is_nan());

    let m = Mean::<f64>::from_slice(&[0.1, 0.2, 0.3]);
    assert_eq!(momenta::mpi::all_merge(&world, &m).expect("one rank"), m);

    let xs: Vec<f32> = (0..2 * 3 * 4)
        .map(|i| 100.0 + (i % 7) as f32 / 8.0)
        .collect();
    let b =
        BatchStats::<f32>::compute(&xs, Layout::nchw(2, 3, 2, 2).expect("small")).expect("fits");
    let all = momenta::mpi::all_gather(&world, &b).expect("one rank");
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].to_parts(), b.to_parts());
}
