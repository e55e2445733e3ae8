//! Synchronized BatchNorm: several workers each compute the statistics of
//! their shard of the batch, send them as plain data (`to_parts`: the count
//! and three `f64` vectors, what an MPI all-gather or a socket carries),
//! the statistics are rebuilt (`from_parts`) and merged, and one set of
//! running statistics is updated — with the same result as a single worker
//! seeing the whole batch. The exchange is lossless, also for `f32`.
//!
//! Run with `cargo run --example sync_batchnorm`.

use std::sync::mpsc;
use std::thread;

use momenta::batchnorm::{BatchStats, BatchStatsParts, BnConfig, Layout, RunningStats};

/// A small deterministic generator (splitmix64), uniform in [0, 1).
fn uniform(state: &mut u64) -> f32 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 40) as f32 / (1u32 << 24) as f32
}

fn main() -> Result<(), momenta::Error> {
    // A batch of 12 images, 4 channels, 8 × 8 pixels, NCHW, channel c
    // centred on c + 1.
    let (n, c, h, w) = (12, 4, 8, 8);
    let mut seed = 2024;
    let data: Vec<f32> = (0..n * c * h * w)
        .map(|i| ((i / (h * w)) % c) as f32 + 1.0 + 3.0 * uniform(&mut seed))
        .collect();
    let config = BnConfig::<f32>::pytorch();

    // Uneven shards: 5, 4 and 3 images.
    let shards = [0..5, 5..9, 9..12];
    let per_image = c * h * w;
    let (tx, rx) = mpsc::channel();
    thread::scope(|s| {
        for (rank, images) in shards.iter().cloned().enumerate() {
            let tx = tx.clone();
            let shard = &data[images.start * per_image..images.end * per_image];
            s.spawn(move || {
                let layout = Layout::nchw(images.len(), c, h, w)?;
                let stats = BatchStats::<f32>::compute(shard, layout)?;
                // Plain data, as it would cross a process boundary.
                let msg: (usize, BatchStatsParts) = (rank, stats.to_parts());
                tx.send(msg).ok();
                Ok::<(), momenta::Error>(())
            });
        }
    });
    drop(tx);

    let mut messages: Vec<_> = rx.iter().collect();
    messages.sort_by_key(|m| m.0);
    let received = messages
        .into_iter()
        .map(|(rank, parts)| Ok((rank, BatchStats::<f32>::from_parts(parts)?)))
        .collect::<Result<Vec<_>, momenta::Error>>()?;
    let mut merged = BatchStats::<f32>::new(c);
    for (rank, stats) in &received {
        println!(
            "rank {rank}: n = {:>3}, mean = {:.5?}",
            stats.count(),
            stats.mean()
        );
        merged.try_merge(stats)?;
    }
    let mut synced = RunningStats::new(c, config);
    synced.update(&merged)?;

    // The same batch on one worker.
    let whole = BatchStats::<f32>::compute(&data, Layout::nchw(n, c, h, w)?)?;
    let mut single = RunningStats::new(c, config);
    single.update(&whole)?;

    println!(
        "\nmerged:       n = {}, mean = {:.6?}",
        merged.count(),
        merged.mean()
    );
    println!(
        "single batch: n = {}, mean = {:.6?}",
        whole.count(),
        whole.mean()
    );
    println!("merged variance       {:.6?}", merged.variance());
    println!("single-batch variance {:.6?}", whole.variance());
    println!("\nrunning mean (synced)  {:.7?}", synced.mean());
    println!("running mean (single)  {:.7?}", single.mean());
    println!("running var  (synced)  {:.7?}", synced.var());
    println!("running var  (single)  {:.7?}", single.var());
    let worst = synced
        .var()
        .iter()
        .zip(single.var())
        .chain(synced.mean().iter().zip(single.mean()))
        .map(|(a, b)| ((a - b) / b).abs())
        .fold(0.0_f32, f32::max);
    println!("largest relative difference: {worst:e}");
    println!("bit-identical: {}", synced == single);

    // The porting bug: averaging per-rank means and variances with equal
    // weights, which ignores the shard sizes and the spread of the means.
    let per_rank: Vec<&BatchStats<f32>> = received.iter().map(|(_, s)| s).collect();
    let naive: Vec<f32> = (0..c)
        .map(|ch| per_rank.iter().map(|s| s.variance()[ch]).sum::<f32>() / per_rank.len() as f32)
        .collect();
    println!("\nequal-weight average of per-rank variances (wrong): {naive:.6?}");
    Ok(())
}
