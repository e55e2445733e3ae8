//! Sessions, tables and queries the tests share, and the exact
//! references' arithmetic.

use std::collections::BTreeMap;
use std::sync::Arc;

use momenta_datafusion::datafusion;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{Field, Float64Type, Int64Type, Schema};
use datafusion::datasource::MemTable;
use datafusion::prelude::{SessionConfig, SessionContext};

use crate::support::Dd;

/// Rows per batch, DataFusion's default.
pub const BATCH: usize = 8192;

/// A session with `partitions` target partitions and the functions
/// registered; with `skip_partial`, partial aggregation is skipped from
/// the first batch on (every row goes to the final stage as its own
/// state, through `convert_to_state`).
pub fn context(partitions: usize, skip_partial: bool) -> SessionContext {
    let mut config = SessionConfig::new()
        .with_target_partitions(partitions)
        .with_batch_size(BATCH);
    if skip_partial {
        let execution = &mut config.options_mut().execution;
        execution.skip_partial_aggregation_probe_rows_threshold = 0;
        execution.skip_partial_aggregation_probe_ratio_threshold = 0.0;
    }
    let ctx = SessionContext::new_with_config(config);
    momenta_datafusion::register_all(&ctx);
    ctx
}

/// Registers an in-memory table of `columns`, its rows cut into
/// `partitions` contiguous partitions of batches of [`BATCH`] rows.
pub fn table(ctx: &SessionContext, name: &str, columns: &[(&str, ArrayRef)], partitions: usize) {
    let schema = Arc::new(Schema::new(
        columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    ));
    let rows = columns[0].1.len();
    let per_partition = rows.div_ceil(partitions).max(1);
    let mut data = Vec::new();
    for p in 0..partitions {
        let start = (p * per_partition).min(rows);
        let end = ((p + 1) * per_partition).min(rows);
        let mut batches = Vec::new();
        let mut at = start;
        while at < end {
            let len = BATCH.min(end - at);
            let arrays = columns.iter().map(|(_, a)| a.slice(at, len)).collect();
            batches.push(RecordBatch::try_new(Arc::clone(&schema), arrays).unwrap());
            at += len;
        }
        data.push(batches);
    }
    let table = MemTable::try_new(schema, data).unwrap();
    ctx.register_table(name, Arc::new(table)).unwrap();
}

/// The result of `sql`.
pub async fn batches(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// Float64 column `c` of `batches`, NULL as `None`.
pub fn floats(batches: &[RecordBatch], c: usize) -> Vec<Option<f64>> {
    batches
        .iter()
        .flat_map(|b| {
            let a = b.column(c).as_primitive::<Float64Type>();
            (0..a.len())
                .map(|i| a.is_valid(i).then(|| a.value(i)))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The one row of an ungrouped query, every column a Float64.
pub async fn row(ctx: &SessionContext, sql: &str) -> Vec<Option<f64>> {
    let b = batches(ctx, sql).await;
    let columns = b[0].num_columns();
    (0..columns).map(|c| floats(&b, c)[0]).collect()
}

/// A grouped query's rows by key: the first column an Int64 key, the
/// others Float64.
pub async fn by_key(ctx: &SessionContext, sql: &str) -> BTreeMap<i64, Vec<Option<f64>>> {
    let b = batches(ctx, sql).await;
    let mut out = BTreeMap::new();
    for batch in &b {
        let keys = batch.column(0).as_primitive::<Int64Type>();
        for i in 0..batch.num_rows() {
            let values = (1..batch.num_columns())
                .map(|c| {
                    let a = batch.column(c).as_primitive::<Float64Type>();
                    a.is_valid(i).then(|| a.value(i))
                })
                .collect();
            out.insert(keys.value(i), values);
        }
    }
    out
}

/// An integer as a double-double: exact below 2¹⁰⁶.
pub fn dd(v: i128) -> Dd {
    let hi = v as f64;
    Dd::new(hi).add(Dd::new((v - hi as i128) as f64))
}

/// `|got − exact| / |exact|`, the difference taken in double-double.
pub fn rel(got: f64, exact: Dd) -> f64 {
    exact.distance(got, exact.to_f64().abs())
}

/// How many floats lie between `a` and `b` (of one sign).
pub fn ulps_apart(a: f64, b: f64) -> u64 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
}

/// A column of Arrow data.
pub fn col<A: Array + 'static>(a: A) -> ArrayRef {
    Arc::new(a)
}

/// Relative errors, two digits each.
pub fn sci(errors: &[f64]) -> String {
    let parts: Vec<String> = errors.iter().map(|e| format!("{e:.1e}")).collect();
    parts.join(" ")
}
