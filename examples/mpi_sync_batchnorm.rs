//! Synchronized BatchNorm across processes with MPI: every rank holds its
//! own part of each training batch (unequal parts: rank r has 1 + 2r
//! images), computes its per-channel statistics, and `momenta::mpi::all_merge`
//! gives every rank the statistics of the whole batch — exactly, Chan's
//! merge of the ranks' `f64` states. Each rank normalizes its images with
//! them and updates its running statistics; in the backward pass each rank
//! sums its gradients (`GradSums`), the sums are all-reduced the same way,
//! and each rank's input gradient is checked against one process's. At the
//! end the program checks that every rank's running statistics equal those
//! of a single process fed the concatenated batches.
//!
//! ```sh
//! cargo build --release --features mpi --example mpi_sync_batchnorm
//! mpirun -np 4 target/release/examples/mpi_sync_batchnorm
//! ```
//!
//! (As root, OpenMPI also wants `--allow-run-as-root`; on a machine with
//! fewer cores than ranks, `--oversubscribe`.)

use momenta::batchnorm::{BatchStats, BnConfig, GradSums, Layout, RunningStats};
use momenta::{Merge, Variance};
use mpi::traits::Communicator;

const CHANNELS: usize = 3;
const SIDE: usize = 4;
const STEPS: u64 = 20;

/// A small deterministic generator (splitmix64), uniform in [0, 1).
fn uniform(state: &mut u64) -> f32 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 40) as f32 / (1u32 << 24) as f32
}

/// Images of `rank` in training step `step`, NCHW: channel c is centred
/// on 100·(c + 1) with a spread of 1, so the mean is 100 times the spread.
fn shard(step: u64, rank: usize) -> (Vec<f32>, Layout) {
    let images = 1 + 2 * rank;
    let mut seed = step * 1_000 + rank as u64;
    let per_channel = SIDE * SIDE;
    let xs = (0..images * CHANNELS * per_channel)
        .map(|i| 100.0 * ((i / per_channel) % CHANNELS + 1) as f32 + uniform(&mut seed))
        .collect();
    let layout = Layout::nchw(images, CHANNELS, SIDE, SIDE).expect("a small tensor");
    (xs, layout)
}

/// The gradient of the loss with respect to the layer's output on a
/// rank's images: any values will do.
fn upstream(step: u64, rank: usize, len: usize) -> Vec<f32> {
    let mut seed = 7_777 + step * 1_000 + rank as u64;
    (0..len).map(|_| uniform(&mut seed) - 0.5).collect()
}

fn main() -> Result<(), momenta::Error> {
    let universe = mpi::initialize().expect("MPI is initialized once");
    let world = universe.world();
    let rank = usize::try_from(world.rank()).expect("ranks are non-negative");
    let ranks = usize::try_from(world.size()).expect("sizes are positive");

    let config = BnConfig::<f32>::pytorch();
    let mut running = RunningStats::new(CHANNELS, config);
    // What one process would compute from the concatenated batches.
    let mut single = RunningStats::new(CHANNELS, config);
    let mut normalized = Variance::<f64>::new();

    for step in 0..STEPS {
        // This rank's part: statistics, exchanged and merged.
        let (xs, layout) = shard(step, rank);
        let local = BatchStats::<f32>::compute(&xs, layout)?;
        let batch = momenta::mpi::all_merge(&world, &local)?;
        running.update(&batch)?;

        // Training-mode normalization of this rank's images with the
        // statistics of the whole batch.
        let mut y = vec![0.0_f32; xs.len()];
        batch.normalize(&xs, layout, config.eps(), None, None, &mut y)?;
        normalized.merge(&Variance::from_slice(&y));

        // Backward: this rank's gradient sums about the merged statistics,
        // all-reduced like them, then this rank's input gradient.
        let dy = upstream(step, rank, xs.len());
        let local_sums = GradSums::compute(&xs, &dy, layout, &batch)?;
        let sums = momenta::mpi::all_merge(&world, &local_sums)?;
        let mut dx = vec![0.0_f32; xs.len()];
        sums.grad_input(&xs, &dy, layout, &batch, config.eps(), None, &mut dx)?;

        // The reference: every rank's images in one tensor, in one process.
        let mut all = Vec::new();
        let mut all_dy = Vec::new();
        let mut images = 0;
        let mut mine = 0..0;
        for r in 0..ranks {
            let (xs, layout) = shard(step, r);
            if r == rank {
                mine = all.len()..all.len() + xs.len();
            }
            all_dy.extend(upstream(step, r, xs.len()));
            all.extend_from_slice(&xs);
            images += layout.outer();
        }
        let whole_layout = Layout::nchw(images, CHANNELS, SIDE, SIDE)?;
        let whole = BatchStats::<f32>::compute(&all, whole_layout)?;
        let whole_sums = GradSums::compute(&all, &all_dy, whole_layout, &whole)?;
        let mut whole_dx = vec![0.0_f32; all.len()];
        whole_sums.grad_input(
            &all,
            &all_dy,
            whole_layout,
            &whole,
            config.eps(),
            None,
            &mut whole_dx,
        )?;
        for (a, b) in dx.iter().zip(&whole_dx[mine]) {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "step {step}: dx {a} vs {b}"
            );
        }
        assert_eq!(batch.mean(), whole.mean(), "step {step}: batch means");
        assert_eq!(
            batch.variance(),
            whole.variance(),
            "step {step}: batch variances"
        );
        single.update(&whole)?;
    }

    // Normalized outputs over every rank: mean 0, variance 1 (up to eps).
    let everything = momenta::mpi::all_merge(&world, &normalized)?;
    let (mean, var) = (
        everything.mean().unwrap_or(f64::NAN),
        everything.population_variance().unwrap_or(f64::NAN),
    );
    assert!(
        mean.abs() < 1e-5 && (var - 1.0).abs() < 1e-3,
        "normalized: mean {mean}, variance {var}"
    );

    // A rank whose tensor has a different channel count poisons the merge:
    // the statistics read NaN and a running update from them is an error,
    // on every rank, instead of a silently wrong average.
    let channels = if rank == 0 { CHANNELS - 1 } else { CHANNELS };
    let odd = BatchStats::<f32>::compute(&vec![1.0; 2 * channels], Layout::nc(2, channels)?)?;
    let mismatched = momenta::mpi::all_merge(&world, &odd)?;
    if ranks > 1 {
        assert!(
            mismatched.is_poisoned(),
            "mismatched channel counts must poison"
        );
        assert!(
            RunningStats::new(CHANNELS, config)
                .update(&mismatched)
                .is_err()
        );
    }

    assert_eq!(running.mean(), single.mean(), "rank {rank}: running means");
    assert_eq!(
        running.var(),
        single.var(),
        "rank {rank}: running variances"
    );
    if rank == 0 {
        println!("{ranks} ranks, {STEPS} steps, unequal shards (1, 3, 5, … images)");
        println!("running mean     {:?}", running.mean());
        println!("running variance {:?}", running.var());
        println!("normalized outputs over all ranks: mean {mean:.2e}, variance {var:.6}");
        println!("equal to one process fed the concatenated batches: yes");
        println!("input gradients from the all-reduced gradient sums: those of one process");
        println!("a rank with another channel count: the merge is poisoned, the update refused");
    }
    Ok(())
}
