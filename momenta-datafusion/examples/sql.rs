//! Runs one SQL query over CSV and Parquet files with momenta's functions
//! registered, and prints the result as CSV with a header.
//!
//! ```text
//! cargo run --release -p momenta-datafusion --example sql -- \
//!     --table trips=data/trips.parquet \
//!     "SELECT vendor, momenta_var_pop(fare), var_pop(fare) FROM trips GROUP BY vendor"
//! ```
//!
//! Options:
//!
//! - `--table NAME=PATH` (repeatable): a `.csv` file (with a header) or a
//!   `.parquet` file, by its extension, or a directory of either;
//! - `--partitions N`: DataFusion's target partitions (default: the
//!   number of cores);
//! - `--builtin-names`: also register the exact functions under
//!   DataFusion's names, so that `var_pop`, `stddev`, `corr`, … are
//!   momenta's.
//!
//! Every float is printed as the shortest decimal that reads back as the
//! same `f64`. Any statement DataFusion runs will do, `COPY (SELECT …) TO
//! 'out.parquet'` included (which is how a CSV file becomes Parquet).

use std::process::ExitCode;

use momenta_datafusion::datafusion;

use datafusion::error::Result;
use datafusion::prelude::{SessionConfig, SessionContext};

mod common;

const USAGE: &str = "usage: sql [--partitions N] [--builtin-names] --table NAME=PATH [--table NAME=PATH …] \"QUERY\"";

async fn run(q: common::Query) -> Result<()> {
    let mut config = SessionConfig::new();
    if let Some(n) = q.partitions {
        config = config.with_target_partitions(n);
    }
    let ctx = SessionContext::new_with_config(config);
    if q.builtin_names {
        momenta_datafusion::register_all_with_builtin_names(&ctx);
    } else {
        momenta_datafusion::register_all(&ctx);
    }
    common::register_tables(&ctx, &q.tables).await?;
    common::print_csv(&ctx, &q.sql).await
}

#[tokio::main]
async fn main() -> ExitCode {
    let query = match common::parse(std::env::args().skip(1), USAGE, false) {
        Ok(q) => q,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(query).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
