//! Distributed: a Ballista 55 standalone cluster (scheduler and executor
//! in this process, gRPC and Arrow IPC between them, the plan cut into a
//! partial stage and a final one with a shuffle between) runs the
//! functions over 8 Parquet files, and every result has the bits of the
//! same query in one DataFusion process, within 1e-14 of the exact value.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use ballista::prelude::{SessionConfigExt, SessionContextExt};
use momenta_datafusion::datafusion;

use datafusion::arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use datafusion::execution::SessionStateBuilder;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};

use crate::common::{by_key, dd, rel, row};
use crate::support::SplitMix;

/// Writes 8 Parquet files of `(g, x, y)`: 10⁶ rows of `x = 1e9 +
/// k·2⁻²³`, `y = 1e9 + (k + e)·2⁻²⁴`, `g` one of 4 keys; and returns the
/// exact `n²·var_pop(x)·4²³` as an integer, for all rows and by key.
fn write_files(dir: &Path) -> ([i128; 3], [[i128; 3]; 4]) {
    let mut rng = SplitMix(31);
    let mut sums = [[0_i128; 3]; 5];
    for file in 0..8 {
        let rows = 125_000;
        let mut g = Vec::with_capacity(rows);
        let mut x = Vec::with_capacity(rows);
        let mut y = Vec::with_capacity(rows);
        for _ in 0..rows {
            let key = (rng.next_u64() % 4) as i64;
            let k = i128::from(rng.next_u64() >> 41);
            let e = i128::from(rng.next_u64() >> 41);
            g.push(key);
            x.push(1e9 + k as f64 * 2f64.powi(-23));
            y.push(1e9 + (k + e) as f64 * 2f64.powi(-24));
            for s in [key as usize, 4] {
                sums[s][0] += 1;
                sums[s][1] += k;
                sums[s][2] += k * k;
            }
        }
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("g", Arc::new(Int64Array::from(g))),
            ("x", Arc::new(Float64Array::from(x))),
            ("y", Arc::new(Float64Array::from(y))),
        ];
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let out = File::create(dir.join(format!("part-{file}.parquet"))).unwrap();
        let mut writer = ArrowWriter::try_new(out, batch.schema(), None).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
    }
    let all = sums[4];
    (all, [sums[0], sums[1], sums[2], sums[3]])
}

/// The exact population variance of `x` from its sums of `k`.
fn exact_var(s: &[i128; 3]) -> crate::support::Dd {
    dd(s[0] * s[2] - s[1] * s[1])
        .div(dd(s[0] * s[0]))
        .scale(2f64.powi(-46))
}

const UNGROUPED: &str = "SELECT momenta_var_pop(x), momenta_stddev_samp(x), momenta_corr(x, y), \
     momenta_skewness(x), momenta_kurtosis(x), momenta_weighted_mean(x, y - 1e9), var_pop(x) FROM t";
const GROUPED: &str = "SELECT g, momenta_var_pop(x), momenta_stddev_samp(x), momenta_corr(x, y), \
     momenta_skewness(x), momenta_kurtosis(x), momenta_weighted_mean(x, y - 1e9), var_pop(x) FROM t GROUP BY g";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standalone_cluster_gives_the_bits_of_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let (all, groups) = write_files(dir.path());
    let path = dir.path().to_str().unwrap();

    // One process, 8 partitions: one per file. DataFusion 55 lets an idle
    // partition read files planned for another (work stealing), which
    // changes what each partial state holds from run to run and moves an
    // ill-conditioned result (a skewness near 0) by a few ulps; Ballista
    // runs each partition as a task of its own, as planned. So the process
    // to compare with reads as planned too.
    let mut config = SessionConfig::new().with_target_partitions(8);
    config
        .options_mut()
        .execution
        .enable_file_stream_work_stealing = false;
    let local = SessionContext::new_with_config(config);
    momenta_datafusion::register_all(&local);
    local
        .register_parquet("t", path, ParquetReadOptions::default())
        .await
        .unwrap();
    let want = row(&local, UNGROUPED).await;
    let want_grouped = by_key(&local, GROUPED).await;

    // The cluster: the executor finds functions by name in the registry
    // of the state it starts with, so they are registered there; the
    // client's context comes back from `upgrade_for_ballista` with its
    // functions reset, so they are registered again on it.
    let mut state = SessionStateBuilder::new()
        .with_config(SessionConfig::new_with_ballista().with_target_partitions(8))
        .with_default_features()
        .build();
    momenta_datafusion::register_in(&mut state, false).unwrap();
    let cluster = SessionContext::standalone_with_state(state).await.unwrap();
    momenta_datafusion::register_all(&cluster);
    cluster
        .register_parquet("t", path, ParquetReadOptions::default())
        .await
        .unwrap();

    // The plan really is distributed: stages with shuffles between them.
    let plan = crate::common::batches(&cluster, &format!("EXPLAIN {GROUPED}")).await;
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&plan)
        .unwrap()
        .to_string();
    assert!(
        text.contains("distributed_plan") && text.contains("ShuffleWriterExec"),
        "{text}"
    );

    let got = row(&cluster, UNGROUPED).await;
    let got_grouped = by_key(&cluster, GROUPED).await;
    eprintln!(
        "Ballista, 8 Parquet files: var_pop momenta {:.1e}, built-in {:.1e}",
        rel(got[0].unwrap(), exact_var(&all)),
        rel(got[6].unwrap(), exact_var(&all))
    );
    for j in 0..6 {
        assert_eq!(
            got[j].map(f64::to_bits),
            want[j].map(f64::to_bits),
            "column {j}: {got:?} {want:?}"
        );
    }
    assert!(rel(got[0].unwrap(), exact_var(&all)) <= 1e-14);
    assert_eq!(got_grouped.len(), 4);
    for (g, v) in &got_grouped {
        for j in 0..6 {
            assert_eq!(
                v[j].map(f64::to_bits),
                want_grouped[g][j].map(f64::to_bits),
                "group {g}, column {j}"
            );
        }
        let e = rel(v[0].unwrap(), exact_var(&groups[*g as usize]));
        eprintln!(
            "  group {g}: momenta {e:.1e}, built-in {:.1e}",
            rel(v[6].unwrap(), exact_var(&groups[*g as usize]))
        );
        assert!(e <= 1e-14);
    }
}
