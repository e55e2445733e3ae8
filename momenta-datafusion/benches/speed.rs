//! The exact aggregates against DataFusion's built-ins: 10⁷ rows of
//! `1e9 + U(0, 1)` in memory, ungrouped and `GROUP BY` 10³ and 10⁵ keys.
//! The two queries of a pair run alternately (A B, B A, A B …) and each
//! keeps its best time, so that both see the same machine; beside the
//! ratio of the best times stands the median of each round's ratio (a
//! pair run back to back finds the machine in one state, where the best
//! times of a noisy machine may come from two).
//!
//! ```text
//! cargo bench -p momenta-datafusion --bench speed
//! ```
//!
//! `MOMENTA_BENCH_ROUNDS` sets the rounds (default 7);
//! `MOMENTA_BENCH_ONLY=corr` runs only the queries whose row label holds
//! that text (`"GROUP BY 10^5"`, `"var_pop, ungrouped"`);
//! `MOMENTA_BENCH_SIDE=momenta` (or `builtin`) runs only that query of
//! each pair, for a profiler to see one side at a time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use momenta_datafusion::datafusion;

use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};

const ROWS: usize = 10_000_000;
const BATCH: usize = 8192;

fn table(partitions: usize) -> MemTable {
    let mut seed = 7_u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 11
    };
    #[allow(clippy::cast_precision_loss, reason = "53-bit integers")]
    let x: Vec<f64> = (0..ROWS)
        .map(|_| 1e9 + next() as f64 / (1_u64 << 53) as f64)
        .collect();
    #[allow(clippy::cast_possible_wrap, reason = "small keys")]
    let mut keys = |n: u64| -> Vec<i64> { (0..ROWS).map(|_| (next() % n) as i64).collect() };
    let (g3, g5) = (keys(1_000), keys(100_000));
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Float64, false),
        Field::new("g3", DataType::Int64, false),
        Field::new("g5", DataType::Int64, false),
    ]));
    let columns: [ArrayRef; 3] = [
        Arc::new(Float64Array::from(x)),
        Arc::new(Int64Array::from(g3)),
        Arc::new(Int64Array::from(g5)),
    ];
    let per_partition = ROWS.div_ceil(partitions);
    let partitions = (0..partitions)
        .map(|p| {
            let (start, end) = (p * per_partition, ((p + 1) * per_partition).min(ROWS));
            (start..end)
                .step_by(BATCH)
                .map(|at| {
                    let len = BATCH.min(end - at);
                    let arrays = columns.iter().map(|c| c.slice(at, len)).collect();
                    RecordBatch::try_new(Arc::clone(&schema), arrays).unwrap()
                })
                .collect()
        })
        .collect();
    MemTable::try_new(schema, partitions).unwrap()
}

async fn time(ctx: &SessionContext, sql: &str) -> Duration {
    let start = Instant::now();
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let elapsed = start.elapsed();
    std::hint::black_box(batches);
    elapsed
}

#[tokio::main]
async fn main() {
    let rounds: usize = std::env::var("MOMENTA_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7)
        .max(1);
    let alone = std::env::var("MOMENTA_BENCH_SIDE").ok();
    if let Some(side) = alone.as_deref()
        && side != "momenta"
        && side != "builtin"
    {
        eprintln!("MOMENTA_BENCH_SIDE is `momenta` or `builtin`, not `{side}`");
        std::process::exit(2);
    }
    let partitions = std::thread::available_parallelism().map_or(1, usize::from);
    let ctx = SessionContext::new_with_config(
        SessionConfig::new()
            .with_target_partitions(partitions)
            .with_batch_size(BATCH),
    );
    momenta_datafusion::register_all(&ctx);
    ctx.register_table("t", Arc::new(table(partitions)))
        .unwrap();
    println!(
        "10^7 rows of 1e9 + U(0, 1), {partitions} partitions, best of {rounds} alternate runs"
    );
    if alone.is_some() {
        println!("| query | side | best time |");
        println!("|---|---|---|");
    } else {
        println!(
            "| query | momenta | DataFusion | built-in / momenta, best times | the same, median of the pairs |"
        );
        println!("|---|---|---|---|---|");
    }
    let cases = [
        ("var_pop", "", ""),
        ("var_pop", "g3, ", " GROUP BY g3"),
        ("var_pop", "g5, ", " GROUP BY g5"),
        ("stddev", "g3, ", " GROUP BY g3"),
        ("covar_pop", "", ""),
        ("corr", "g3, ", " GROUP BY g3"),
        ("corr", "g5, ", " GROUP BY g5"),
    ];
    let only = std::env::var("MOMENTA_BENCH_ONLY").unwrap_or_default();
    for (function, key, group_by) in cases {
        let label = if group_by.is_empty() {
            format!("{function}, ungrouped")
        } else if key.starts_with("g3") {
            format!("{function}, GROUP BY 10^3")
        } else {
            format!("{function}, GROUP BY 10^5")
        };
        if !label.contains(&only) {
            continue;
        }
        let args = if function.starts_with("co") {
            "x, x + 1"
        } else {
            "x"
        };
        let ours = format!("SELECT {key}momenta_{function}({args}) FROM t{group_by}");
        let theirs = format!("SELECT {key}{function}({args}) FROM t{group_by}");
        if let Some(alone) = alone.as_deref() {
            let sql = if alone == "builtin" { &theirs } else { &ours };
            let mut best = Duration::MAX;
            for _ in 0..rounds {
                best = best.min(time(&ctx, sql).await);
            }
            println!(
                "| {label} | {alone} alone | {:.1} ms |",
                best.as_secs_f64() * 1e3
            );
            continue;
        }
        let (mut a, mut b) = (Duration::MAX, Duration::MAX);
        let mut ratios = Vec::with_capacity(rounds);
        for round in 0..rounds {
            // Each goes first every other round: neither always finds the
            // machine as the other left it.
            let (ta, tb) = if round % 2 == 0 {
                let ta = time(&ctx, &ours).await;
                (ta, time(&ctx, &theirs).await)
            } else {
                let tb = time(&ctx, &theirs).await;
                (time(&ctx, &ours).await, tb)
            };
            (a, b) = (a.min(ta), b.min(tb));
            ratios.push(tb.as_secs_f64() / ta.as_secs_f64());
        }
        ratios.sort_by(f64::total_cmp);
        println!(
            "| {label} | {:.1} ms | {:.1} ms | {:.2} | {:.2} |",
            a.as_secs_f64() * 1e3,
            b.as_secs_f64() * 1e3,
            b.as_secs_f64() / a.as_secs_f64(),
            ratios[ratios.len() / 2]
        );
    }
}
