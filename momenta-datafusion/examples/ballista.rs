//! momenta's functions on a Ballista cluster.
//!
//! ```text
//! cargo run --release -p momenta-datafusion --features ballista --example ballista
//! ```
//!
//! starts a standalone cluster in this process (a scheduler and an
//! executor talking gRPC, shuffling Arrow IPC between the query's stages),
//! writes 8 Parquet files of values near 1e9, and runs the same grouped
//! query on the cluster and in one DataFusion process: the exact functions
//! agree to the bit, DataFusion's `var_pop` is off in the 8th digit.
//!
//! A real cluster's processes are built with the functions in their
//! registries, which is what the other modes show: a scheduler, an
//! executor, and a client that runs the same demo on them.
//!
//! ```text
//! cargo run --release -p momenta-datafusion --features ballista --example ballista -- scheduler 50050 &
//! cargo run --release -p momenta-datafusion --features ballista --example ballista -- executor localhost:50050 50051 &
//! cargo run --release -p momenta-datafusion --features ballista --example ballista -- client localhost:50050
//! ```
//!
//! And any query, as the `sql` example takes it, on a standalone cluster
//! (or, with `--scheduler HOST:PORT`, on a running one), printed as CSV
//! with a header:
//!
//! ```text
//! cargo run --release -p momenta-datafusion --features ballista --example ballista -- \
//!     --partitions 8 --table t=data/parquet_dir \
//!     "SELECT g, momenta_var_pop(x), var_pop(x) FROM t GROUP BY g ORDER BY g"
//! ```

use std::fs::File;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use ballista_executor::executor_process::{ExecutorProcessConfig, start_executor_process};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use momenta_datafusion::datafusion;

use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use datafusion::arrow::util::pretty::print_batches;
use datafusion::error::Result;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};

mod common;

const USAGE: &str = "usage: ballista [standalone | scheduler PORT | executor HOST:PORT PORT | client HOST:PORT]\n   or: ballista [--scheduler HOST:PORT] [--partitions N] [--builtin-names] --table NAME=PATH [--table NAME=PATH …] \"QUERY\"";

/// A session state with momenta's functions (and, with `builtin_names`,
/// the exact ones under DataFusion's names): what a scheduler plans
/// with, and what a standalone executor runs with.
fn state_with_functions(config: SessionConfig, builtin_names: bool) -> Result<SessionState> {
    let mut state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    momenta_datafusion::register_in(&mut state, builtin_names)?;
    Ok(state)
}

/// A scheduler whose sessions know momenta's functions.
async fn scheduler(port: u16) -> Result<(), Box<dyn std::error::Error>> {
    let config = SchedulerConfig {
        bind_port: port,
        ..SchedulerConfig::default()
    }
    .with_override_session_builder(Arc::new(|config| state_with_functions(config, false)));
    let cluster = BallistaCluster::new_from_config(&config).await?;
    let address: SocketAddr = format!("0.0.0.0:{port}").parse()?;
    start_server(cluster, address, Arc::new(config)).await?;
    Ok(())
}

/// An executor whose function registry holds momenta's functions (by
/// every name and alias a plan may use).
async fn executor(scheduler: &str, port: u16) -> Result<(), Box<dyn std::error::Error>> {
    let (host, scheduler_port) = scheduler
        .rsplit_once(':')
        .ok_or("the scheduler is HOST:PORT")?;
    let registry = momenta_datafusion::ballista::function_registry(false);
    let config = ExecutorProcessConfig {
        scheduler_host: host.to_owned(),
        scheduler_port: scheduler_port.parse()?,
        port,
        grpc_port: port + 1,
        override_function_registry: Some(Arc::new(registry)),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config)).await?;
    Ok(())
}

/// 8 Parquet files of `(g, x)`, 10⁶ rows of `x = 1e9 + u`, `u` uniform
/// in [0, 1) on a grid of 2⁻²³.
fn write_files(dir: &Path) -> Result<()> {
    let mut seed = 42_u64;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 41
    };
    for file in 0..8 {
        let rows = 125_000;
        let g: Vec<i64> = (0..rows).map(|_| (next() % 4) as i64).collect();
        #[allow(clippy::cast_precision_loss, reason = "23-bit integers")]
        let x: Vec<f64> = (0..rows)
            .map(|_| 1e9 + next() as f64 / f64::from(1 << 23))
            .collect();
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("g", Arc::new(Int64Array::from(g))),
            ("x", Arc::new(Float64Array::from(x))),
        ];
        let batch = RecordBatch::try_from_iter(columns)?;
        let mut writer = ArrowWriter::try_new(
            File::create(dir.join(format!("part-{file}.parquet")))?,
            batch.schema(),
            None,
        )?;
        writer.write(&batch)?;
        writer.close()?;
    }
    Ok(())
}

const QUERY: &str = "SELECT g, momenta_var_pop(x) AS exact_var_pop, var_pop(x) AS datafusion_var_pop, \
     momenta_kurtosis(x) AS kurtosis FROM t GROUP BY g ORDER BY g";

/// The demo: the cluster's answer and one process's. `scheduler` is the
/// address of a running scheduler, or `None` for a standalone cluster in
/// this process.
async fn demo(scheduler: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("momenta-ballista-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    write_files(&dir)?;
    let path = dir
        .to_str()
        .ok_or("a temporary directory with a UTF-8 name")?;

    // A standalone executor finds the functions in the state it starts
    // with; the client's context comes back from Ballista with its
    // functions reset, so they are registered on it as well.
    let config = SessionConfig::new_with_ballista().with_target_partitions(8);
    let state = state_with_functions(config, false)?;
    let cluster = match scheduler {
        None => SessionContext::standalone_with_state(state).await?,
        Some(at) => SessionContext::remote_with_state(&format!("df://{at}"), state).await?,
    };
    momenta_datafusion::register_all(&cluster);
    cluster
        .register_parquet("t", path, ParquetReadOptions::default())
        .await?;
    let distributed = cluster.sql(QUERY).await?.collect().await?;
    println!("Ballista, 8 Parquet files:");
    print_batches(&distributed)?;

    // One process reads each partition's files as planned, as Ballista's
    // isolated tasks do (DataFusion 55 otherwise lets an idle partition
    // take a sibling's files, and what each partial state holds changes
    // from run to run).
    let mut config = SessionConfig::new().with_target_partitions(8);
    config
        .options_mut()
        .execution
        .enable_file_stream_work_stealing = false;
    let local = SessionContext::new_with_config(config);
    momenta_datafusion::register_all(&local);
    local
        .register_parquet("t", path, ParquetReadOptions::default())
        .await?;
    let one_process = local.sql(QUERY).await?.collect().await?;
    println!("One DataFusion process:");
    print_batches(&one_process)?;
    let same = distributed
        .iter()
        .zip(&one_process)
        .all(|(a, b)| a.column(1) == b.column(1) && a.column(3) == b.column(3));
    println!("exact functions bit for bit the same: {same}");
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// Runs one query on a cluster (standalone, or the scheduler's) and
/// prints it as CSV.
async fn query(q: common::Query) -> Result<(), Box<dyn std::error::Error>> {
    let mut config = SessionConfig::new_with_ballista();
    if let Some(n) = q.partitions {
        config = config.with_target_partitions(n);
    }
    let state = state_with_functions(config, q.builtin_names)?;
    let ctx = match &q.scheduler {
        None => SessionContext::standalone_with_state(state).await?,
        Some(at) => SessionContext::remote_with_state(&format!("df://{at}"), state).await?,
    };
    // The client's functions were reset by Ballista: registered again.
    if q.builtin_names {
        momenta_datafusion::register_all_with_builtin_names(&ctx);
    } else {
        momenta_datafusion::register_all(&ctx);
    }
    common::register_tables(&ctx, &q.tables).await?;
    common::print_csv(&ctx, &q.sql).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] | ["standalone"] => demo(None).await,
        ["client", scheduler_at] => demo(Some(scheduler_at)).await,
        ["scheduler", port] => scheduler(port.parse()?).await,
        ["executor", scheduler_at, port] => executor(scheduler_at, port.parse()?).await,
        _ => query(common::parse(args.into_iter(), USAGE, true)?).await,
    }
}
