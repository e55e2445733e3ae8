//! Runs one SQL query over CSV and Parquet files with momenta's functions
//! registered, and prints the result as CSV with a header.
//!
//! ```text
//! cargo run -p momenta-datafusion --example sql -- \
//!     --table trips=data/trips.parquet \
//!     "SELECT vendor, momenta_var_pop(fare), var_pop(fare) FROM trips GROUP BY vendor"
//! ```
//!
//! Options:
//!
//! - `--table NAME=PATH` (repeatable): a `.csv` file (with a header), or a
//!   `.parquet` file or a directory of them;
//! - `--partitions N`: DataFusion's target partitions (default: the
//!   number of cores);
//! - `--builtin-names`: also register the exact functions under
//!   DataFusion's names, so that `var_pop`, `stddev`, `corr`, … are
//!   momenta's.
//!
//! Every float is printed as the shortest decimal that reads back as the
//! same `f64`.

use std::process::ExitCode;

use momenta_datafusion::datafusion;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::csv::WriterBuilder;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::{CsvReadOptions, ParquetReadOptions, SessionConfig, SessionContext};

const USAGE: &str = "usage: sql [--partitions N] [--builtin-names] --table NAME=PATH [--table NAME=PATH …] \"QUERY\"";

struct Args {
    tables: Vec<(String, String)>,
    partitions: Option<usize>,
    builtin_names: bool,
    query: String,
}

fn parse(mut args: impl Iterator<Item = String>) -> std::result::Result<Args, String> {
    let mut tables = Vec::new();
    let mut partitions = None;
    let mut builtin_names = false;
    let mut query = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--table" => {
                let spec = args.next().ok_or("--table needs NAME=PATH")?;
                let (name, path) = spec
                    .split_once('=')
                    .ok_or_else(|| format!("--table needs NAME=PATH, got {spec}"))?;
                tables.push((name.to_owned(), path.to_owned()));
            }
            "--partitions" => {
                let n = args.next().ok_or("--partitions needs a number")?;
                partitions =
                    Some(n.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                        format!("--partitions must be a positive number, got {n}")
                    })?);
            }
            "--builtin-names" => builtin_names = true,
            "-h" | "--help" => return Err(USAGE.to_owned()),
            q if query.is_none() && !q.starts_with("--") => query = Some(q.to_owned()),
            other => return Err(format!("unexpected argument {other}\n{USAGE}")),
        }
    }
    let query = query.ok_or_else(|| USAGE.to_owned())?;
    Ok(Args {
        tables,
        partitions,
        builtin_names,
        query,
    })
}

async fn run(args: Args) -> Result<()> {
    let mut config = SessionConfig::new();
    if let Some(n) = args.partitions {
        config = config.with_target_partitions(n);
    }
    let ctx = SessionContext::new_with_config(config);
    if args.builtin_names {
        momenta_datafusion::register_all_with_builtin_names(&ctx);
    } else {
        momenta_datafusion::register_all(&ctx);
    }
    for (name, path) in &args.tables {
        if path.to_ascii_lowercase().ends_with(".csv") {
            ctx.register_csv(name, path, CsvReadOptions::new()).await?;
        } else if path.to_ascii_lowercase().ends_with(".parquet")
            || std::path::Path::new(path).is_dir()
        {
            ctx.register_parquet(name, path, ParquetReadOptions::default())
                .await?;
        } else {
            return Err(DataFusionError::Plan(format!(
                "{path}: a table is a .csv or .parquet file, or a directory of .parquet files"
            )));
        }
    }
    let df = ctx.sql(&args.query).await?;
    let schema = df.schema().inner().clone();
    let mut batches = df.collect().await?;
    if batches.is_empty() {
        // No rows: the header alone.
        batches.push(RecordBatch::new_empty(schema));
    }
    let mut writer = WriterBuilder::new()
        .with_header(true)
        .build(std::io::stdout().lock());
    for batch in &batches {
        writer.write(batch)?;
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
