//! What the `sql` and `ballista` examples share: their command line
//! (`--table NAME=PATH … "QUERY"`), registering the tables, and printing
//! a result as CSV.

use momenta_datafusion::datafusion;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::csv::WriterBuilder;
use datafusion::error::{DataFusionError, Result};
use datafusion::prelude::{CsvReadOptions, ParquetReadOptions, SessionContext};

/// A query and the tables it reads.
pub struct Query {
    /// `(NAME, PATH)` of each `--table`.
    pub tables: Vec<(String, String)>,
    /// `--partitions N`: DataFusion's target partitions.
    pub partitions: Option<usize>,
    /// `--builtin-names`: the exact functions under DataFusion's names too.
    pub builtin_names: bool,
    /// `--scheduler HOST:PORT` (the `ballista` example only).
    pub scheduler: Option<String>,
    /// The SQL.
    pub sql: String,
}

/// Parses `--table NAME=PATH`, `--partitions N`, `--builtin-names`,
/// `--scheduler HOST:PORT` (when `scheduler` is allowed) and the query;
/// an error is the message to print.
pub fn parse(
    mut args: impl Iterator<Item = String>,
    usage: &str,
    scheduler_allowed: bool,
) -> std::result::Result<Query, String> {
    let mut q = Query {
        tables: Vec::new(),
        partitions: None,
        builtin_names: false,
        scheduler: None,
        sql: String::new(),
    };
    let mut sql = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--table" => {
                let spec = args.next().ok_or("--table needs NAME=PATH")?;
                let (name, path) = spec
                    .split_once('=')
                    .ok_or_else(|| format!("--table needs NAME=PATH, got {spec}"))?;
                q.tables.push((name.to_owned(), path.to_owned()));
            }
            "--partitions" => {
                let n = args.next().ok_or("--partitions needs a number")?;
                q.partitions =
                    Some(n.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                        format!("--partitions must be a positive number, got {n}")
                    })?);
            }
            "--builtin-names" => q.builtin_names = true,
            "--scheduler" if scheduler_allowed => {
                q.scheduler = Some(args.next().ok_or("--scheduler needs HOST:PORT")?);
            }
            "-h" | "--help" => return Err(usage.to_owned()),
            s if sql.is_none() && !s.starts_with("--") => sql = Some(s.to_owned()),
            other => return Err(format!("unexpected argument {other}\n{usage}")),
        }
    }
    q.sql = sql.ok_or_else(|| usage.to_owned())?;
    Ok(q)
}

/// Registers each table: a `.csv` file (with a header) or a `.parquet`
/// file, or a directory of either (by the extension of its files).
pub async fn register_tables(ctx: &SessionContext, tables: &[(String, String)]) -> Result<()> {
    for (name, path) in tables {
        let kind = if std::path::Path::new(path).is_dir() {
            let mut kinds = std::fs::read_dir(path)?
                .filter_map(|entry| Some(extension(&entry.ok()?.file_name().to_string_lossy())))
                .filter(|e| e == "csv" || e == "parquet");
            kinds.next().unwrap_or_default()
        } else {
            extension(path)
        };
        match kind.as_str() {
            "csv" => ctx.register_csv(name, path, CsvReadOptions::new()).await?,
            "parquet" => {
                ctx.register_parquet(name, path, ParquetReadOptions::default())
                    .await?;
            }
            _ => {
                return Err(DataFusionError::Plan(format!(
                    "{path}: a table is a .csv or .parquet file, or a directory of them"
                )));
            }
        }
    }
    Ok(())
}

/// A file name's extension, in lower case.
fn extension(path: &str) -> String {
    path.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default()
}

/// Runs `sql` and prints the result to standard output as CSV with a
/// header (the header alone when there are no rows). Arrow's CSV writer
/// prints each float as the shortest decimal that reads back as the same
/// `f64`.
pub async fn print_csv(ctx: &SessionContext, sql: &str) -> Result<()> {
    let df = ctx.sql(sql).await?;
    let schema = df.schema().inner().clone();
    let mut batches = df.collect().await?;
    if batches.is_empty() {
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
