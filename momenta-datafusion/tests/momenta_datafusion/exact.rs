//! Every aggregate against exact rational references, at 1, 2 and 8
//! target partitions, ungrouped and grouped, with partial aggregation run
//! and skipped.
//!
//! The data sit on binary grids (`base + k·2⁻ᵇ` with integer `k`), so the
//! exact sums of the `k` fit in `i128`, and the exact statistic is a ratio
//! of integers evaluated in double-double: nothing in a reference is
//! rounded at the precision of the result. Each test prints its
//! measurements next to DataFusion's built-in (`cargo test -- --nocapture`).

use std::collections::BTreeMap;

use momenta_datafusion::datafusion;

use datafusion::arrow::array::{Float64Array, Int64Array};

use crate::common::{by_key, context, dd, rel, row, sci, table, ulps_apart};
use crate::support::{Dd, SplitMix};

/// `n` values `base + k·2^-bits`, `k` uniform in `[0, 2^bits)`.
fn grid(n: usize, base: f64, bits: u32, seed: u64) -> (Vec<f64>, Vec<i128>) {
    let mut rng = SplitMix(seed);
    let ks: Vec<i128> = (0..n)
        .map(|_| i128::from(rng.next_u64() >> (64 - bits)))
        .collect();
    let scale = 2f64.powi(-(bits as i32));
    let xs = ks.iter().map(|&k| base + k as f64 * scale).collect();
    (xs, ks)
}

/// Exact sums of integers: count, Σk, Σk².
#[derive(Clone, Copy, Default)]
struct Sums {
    n: i128,
    s1: i128,
    s2: i128,
}

impl Sums {
    fn add(&mut self, k: i128) {
        self.n += 1;
        self.s1 += k;
        self.s2 += k * k;
    }

    /// The population variance of `k·2^-bits`: (nΣk² − (Σk)²)/(n²·4^bits).
    fn var_pop(&self, bits: u32) -> Dd {
        dd(self.n * self.s2 - self.s1 * self.s1)
            .div(dd(self.n * self.n))
            .scale(2f64.powi(-2 * bits as i32))
    }

    /// The sample variance: (nΣk² − (Σk)²)/(n(n − 1)·4^bits).
    fn var_samp(&self, bits: u32) -> Dd {
        dd(self.n * self.s2 - self.s1 * self.s1)
            .div(dd(self.n * (self.n - 1)))
            .scale(2f64.powi(-2 * bits as i32))
    }
}

/// The configurations every accuracy test runs: (partitions, skip partial
/// aggregation).
const SETUPS: [(usize, bool); 6] = [
    (1, false),
    (2, false),
    (8, false),
    (1, true),
    (2, true),
    (8, true),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variance_of_1e9_plus_uniform_ungrouped_and_by_4_groups() {
    let n = 1_000_000;
    let bits = 23;
    let (xs, ks) = grid(n, 1e9, bits, 1);
    let mut rng = SplitMix(2);
    let gs: Vec<i64> = (0..n).map(|_| (rng.next_u64() % 4) as i64).collect();
    let mut all = Sums::default();
    let mut groups = [Sums::default(); 4];
    for (&k, &g) in ks.iter().zip(&gs) {
        all.add(k);
        groups[g as usize].add(k);
    }
    let mut results: Vec<Vec<f64>> = Vec::new();
    for (partitions, skip) in SETUPS {
        let ctx = context(partitions, skip);
        table(
            &ctx,
            "t",
            &[
                ("g", crate::common::col(Int64Array::from(gs.clone()))),
                ("x", crate::common::col(Float64Array::from(xs.clone()))),
            ],
            partitions,
        );
        let r = row(
            &ctx,
            "SELECT momenta_var_pop(x), momenta_var_samp(x), momenta_stddev_pop(x), \
             momenta_stddev_samp(x), var_pop(x) FROM t",
        )
        .await;
        let [pop, samp, sd_pop, sd_samp, builtin] =
            [r[0], r[1], r[2], r[3], r[4]].map(Option::unwrap);
        let errors = [
            rel(pop, all.var_pop(bits)),
            rel(samp, all.var_samp(bits)),
            rel(sd_pop, all.var_pop(bits).sqrt()),
            rel(sd_samp, all.var_samp(bits).sqrt()),
        ];
        eprintln!(
            "var 1e9+U(0,1) 10^6, {partitions} partitions, skip partial {skip}: \
             momenta {:.1e} (var_samp {:.1e}, stddev {:.1e} {:.1e}), built-in {:.1e}",
            errors[0],
            errors[1],
            errors[2],
            errors[3],
            rel(builtin, all.var_pop(bits))
        );
        for e in errors {
            assert!(e <= 1e-14, "{partitions} partitions: {errors:?}");
        }
        let grouped = by_key(
            &ctx,
            "SELECT g, momenta_var_pop(x), momenta_var_samp(x), var_pop(x) FROM t GROUP BY g",
        )
        .await;
        let mut worst = (0.0_f64, 0.0_f64);
        let mut bits_of_run = vec![pop, samp, sd_pop, sd_samp];
        for (g, v) in &grouped {
            let exact = &groups[*g as usize];
            let e = rel(v[0].unwrap(), exact.var_pop(bits))
                .max(rel(v[1].unwrap(), exact.var_samp(bits)));
            worst = (
                worst.0.max(e),
                worst.1.max(rel(v[2].unwrap(), exact.var_pop(bits))),
            );
            bits_of_run.extend([v[0].unwrap(), v[1].unwrap()]);
        }
        eprintln!(
            "  GROUP BY 4: momenta ≤ {:.1e}, built-in ≤ {:.1e}",
            worst.0, worst.1
        );
        assert!(
            worst.0 <= 1e-14,
            "GROUP BY 4 at {partitions} partitions: {worst:?}"
        );
        results.push(bits_of_run);
    }
    // The partition count and the path (partial aggregation or not) move
    // each result by at most 2 ulps.
    for (j, r) in results.iter().enumerate().skip(1) {
        for (i, (a, b)) in r.iter().zip(&results[0]).enumerate() {
            assert!(
                ulps_apart(*a, *b) <= 2,
                "setup {j}, value {i}: {a:e} against {b:e}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variance_by_100000_groups() {
    let n = 1_000_000;
    let bits = 23;
    let (xs, ks) = grid(n, 1e9, bits, 3);
    let gs: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 100_000).collect();
    let mut groups = vec![Sums::default(); 100_000];
    for (&k, &g) in ks.iter().zip(&gs) {
        groups[g as usize].add(k);
    }
    let mut first: Option<BTreeMap<i64, Vec<Option<f64>>>> = None;
    for (partitions, skip) in SETUPS {
        let ctx = context(partitions, skip);
        table(
            &ctx,
            "t",
            &[
                ("g", crate::common::col(Int64Array::from(gs.clone()))),
                ("x", crate::common::col(Float64Array::from(xs.clone()))),
            ],
            partitions,
        );
        let grouped = by_key(
            &ctx,
            "SELECT g, momenta_var_pop(x), momenta_var_samp(x), var_pop(x) FROM t GROUP BY g",
        )
        .await;
        assert_eq!(grouped.len(), 100_000);
        let (mut worst, mut builtin) = (0.0_f64, 0.0_f64);
        for (g, v) in &grouped {
            let exact = &groups[*g as usize];
            worst = worst
                .max(rel(v[0].unwrap(), exact.var_pop(bits)))
                .max(rel(v[1].unwrap(), exact.var_samp(bits)));
            builtin = builtin.max(rel(v[2].unwrap(), exact.var_pop(bits)));
        }
        eprintln!(
            "var GROUP BY 10^5, {partitions} partitions, skip partial {skip}: momenta ≤ {worst:.1e}, built-in ≤ {builtin:.1e}"
        );
        assert!(
            worst <= 1e-14,
            "{partitions} partitions, skip {skip}: {worst:e}"
        );
        if let Some(first) = &first {
            // Groups of 10 rows: 1 partition reads each group's exact
            // sums once; 2 and 8 merge partial states of a few values
            // each (each read from exact sums, correctly rounded): within
            // 2 ulps of the one-partition result, most of them equal.
            // Skipped partial aggregation sends every row alone, and the
            // rows go back into the exact sums: the same bits.
            let mut moved = [0_usize; 10];
            for (g, v) in &grouped {
                for (a, b) in v[..2].iter().zip(&first[g][..2]) {
                    moved[(ulps_apart(a.unwrap(), b.unwrap()) as usize).min(9)] += 1;
                }
            }
            eprintln!("  results moved from 1 partition by 0, 1, …, 9 or more ulps: {moved:?}");
            assert!(moved[3..].iter().all(|&m| m == 0), "{moved:?}");
            if skip {
                assert_eq!(moved[0], 2 * grouped.len(), "{moved:?}");
            }
        } else {
            first = Some(grouped);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn covariance_and_correlation_by_4_groups() {
    let n = 1_000_000;
    let mut rng = SplitMix(4);
    // x = 1e9 + kx·2⁻²³ and y = 1e9 + (c·kx + (8 − c)·ke)·2⁻²³ with
    // kx, ke < 2²⁰ and c = 1, 3, 5, 7 by group: four correlations from
    // 0.14 to 0.99, and every value exact in f64.
    let mut kx = Vec::with_capacity(n);
    let mut ky = Vec::with_capacity(n);
    let mut gs = Vec::with_capacity(n);
    for _ in 0..n {
        let g = (rng.next_u64() % 4) as i64;
        let c = 2 * i128::from(g) + 1;
        let (a, e) = (
            i128::from(rng.next_u64() >> 44),
            i128::from(rng.next_u64() >> 44),
        );
        kx.push(a);
        ky.push(c * a + (8 - c) * e);
        gs.push(g);
    }
    let scale = 2f64.powi(-23);
    let xs: Vec<f64> = kx.iter().map(|&k| 1e9 + k as f64 * scale).collect();
    let ys: Vec<f64> = ky.iter().map(|&k| 1e9 + k as f64 * scale).collect();
    // Exact centred sums per group (index 4: all rows).
    let mut sums = [[0_i128; 6]; 5];
    for i in 0..n {
        for s in [gs[i] as usize, 4] {
            let t = &mut sums[s];
            t[0] += 1;
            t[1] += kx[i];
            t[2] += ky[i];
            t[3] += kx[i] * kx[i];
            t[4] += ky[i] * ky[i];
            t[5] += kx[i] * ky[i];
        }
    }
    // n²·cov, n²·var_x, n²·var_y as exact integers.
    let centred = |t: &[i128; 6]| {
        (
            t[0] * t[5] - t[1] * t[2],
            t[0] * t[3] - t[1] * t[1],
            t[0] * t[4] - t[2] * t[2],
        )
    };
    let exact_corr = |t: &[i128; 6]| {
        let (cxy, cxx, cyy) = centred(t);
        dd(cxy).div(dd(cxx).mul(dd(cyy)).sqrt())
    };
    let exact_covar_pop = |t: &[i128; 6]| {
        let (cxy, _, _) = centred(t);
        dd(cxy).div(dd(t[0] * t[0])).scale(2f64.powi(-46))
    };
    let exact_covar_samp = |t: &[i128; 6]| {
        let (cxy, _, _) = centred(t);
        dd(cxy).div(dd(t[0] * (t[0] - 1))).scale(2f64.powi(-46))
    };
    for g in 0..4 {
        eprintln!(
            "exact corr of group {g}: {:.6}",
            exact_corr(&sums[g]).to_f64()
        );
    }
    for (partitions, skip) in SETUPS {
        let ctx = context(partitions, skip);
        table(
            &ctx,
            "t",
            &[
                ("g", crate::common::col(Int64Array::from(gs.clone()))),
                ("x", crate::common::col(Float64Array::from(xs.clone()))),
                ("y", crate::common::col(Float64Array::from(ys.clone()))),
            ],
            partitions,
        );
        let r = row(
            &ctx,
            "SELECT momenta_corr(x, y), momenta_covar_pop(x, y), momenta_covar_samp(x, y), corr(x, y) FROM t",
        )
        .await;
        let e = [
            rel(r[0].unwrap(), exact_corr(&sums[4])),
            rel(r[1].unwrap(), exact_covar_pop(&sums[4])),
            rel(r[2].unwrap(), exact_covar_samp(&sums[4])),
        ];
        eprintln!(
            "corr/covar ungrouped, {partitions} partitions, skip {skip}: momenta {}, built-in corr {:.1e}",
            sci(&e),
            rel(r[3].unwrap(), exact_corr(&sums[4]))
        );
        assert!(e[0] <= 1e-13 && e[1] <= 1e-14 && e[2] <= 1e-14, "{e:?}");
        let grouped = by_key(
            &ctx,
            "SELECT g, momenta_corr(x, y), momenta_covar_pop(x, y), momenta_covar_samp(x, y), corr(x, y) \
             FROM t GROUP BY g",
        )
        .await;
        let mut builtin = Vec::new();
        for (g, v) in &grouped {
            let t = &sums[*g as usize];
            let e = [
                rel(v[0].unwrap(), exact_corr(t)),
                rel(v[1].unwrap(), exact_covar_pop(t)),
                rel(v[2].unwrap(), exact_covar_samp(t)),
            ];
            assert!(v[0].unwrap().abs() <= 1.0);
            assert!(
                e[0] <= 1e-13 && e[1] <= 1e-14 && e[2] <= 1e-14,
                "group {g}: {e:?}"
            );
            builtin.push(v[3]);
        }
        eprintln!("  GROUP BY 4: momenta within bounds; built-in corr {builtin:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skewness_and_kurtosis() {
    // x = 1e6 + k/256 with k = ⌊r²/256⌋, r < 256: skewed, on a grid, 10⁵
    // rows, so that the exact power sums of k fit in i128.
    let n = 100_000;
    let mut rng = SplitMix(5);
    let ks: Vec<i128> = (0..n)
        .map(|_| {
            let r = i128::from(rng.next_u64() >> 56);
            r * r / 256
        })
        .collect();
    let xs: Vec<f64> = ks.iter().map(|&k| 1e6 + k as f64 / 256.0).collect();
    let gs: Vec<i64> = (0..n as i64).map(|i| i % 4).collect();
    // Power sums per group (index 4: all rows).
    let mut s = [[0_i128; 5]; 5];
    for (i, &k) in ks.iter().enumerate() {
        for t in [gs[i] as usize, 4] {
            let mut p = 1;
            for j in 0..5 {
                s[t][j] += p;
                p *= k;
            }
        }
    }
    // Central moments times powers of n, exact: n²·M2/n = nS2 − S1², …
    let shape = |t: &[i128; 5]| {
        let (n, s1, s2, s3, s4) = (t[0], t[1], t[2], t[3], t[4]);
        let c2 = n * s2 - s1 * s1; // n²·μ2
        let c3 = n * n * s3 - 3 * n * s1 * s2 + 2 * s1 * s1 * s1; // n³·μ3
        let c4 =
            n * n * n * s4 - 4 * n * n * s1 * s3 + 6 * n * s1 * s1 * s2 - 3 * s1 * s1 * s1 * s1; // n⁴·μ4
        let nn = dd(n);
        // g1 = μ3/μ2^1.5 = c3/(n³) / (c2/n²)^1.5 = c3 / c2^1.5 (the n cancel).
        let c2d = dd(c2);
        let g1 = dd(c3).div(c2d.mul(c2d.sqrt()));
        // g2 = μ4/μ2² − 3 = c4/c2² − 3.
        let g2 = dd(c4).div(c2d.mul(c2d)).add(Dd::new(-3.0));
        // G1 = g1·√(n(n−1))/(n − 2); G2 = ((n+1)g2 + 6)(n−1)/((n−2)(n−3)).
        let big_g1 = g1.mul(dd(n * (n - 1)).sqrt()).div(dd(n - 2));
        let big_g2 = nn
            .add(Dd::new(1.0))
            .mul(g2)
            .add(Dd::new(6.0))
            .mul(dd(n - 1))
            .div(dd((n - 2) * (n - 3)));
        [big_g1, g1, big_g2, g2]
    };
    for (partitions, skip) in SETUPS {
        let ctx = context(partitions, skip);
        table(
            &ctx,
            "t",
            &[
                ("g", crate::common::col(Int64Array::from(gs.clone()))),
                ("x", crate::common::col(Float64Array::from(xs.clone()))),
            ],
            partitions,
        );
        let sql = "momenta_skewness(x), momenta_skewness_pop(x), momenta_kurtosis(x), momenta_kurtosis_pop(x)";
        let r = row(&ctx, &format!("SELECT {sql} FROM t")).await;
        let exact = shape(&s[4]);
        let e: Vec<f64> = (0..4).map(|j| rel(r[j].unwrap(), exact[j])).collect();
        eprintln!(
            "skewness G1 g1, kurtosis G2 g2, {partitions} partitions, skip {skip}: {}",
            sci(&e)
        );
        assert!(e.iter().all(|&e| e <= 1e-12), "{e:?}");
        let grouped = by_key(&ctx, &format!("SELECT g, {sql} FROM t GROUP BY g")).await;
        for (g, v) in &grouped {
            let exact = shape(&s[*g as usize]);
            for j in 0..4 {
                let e = rel(v[j].unwrap(), exact[j]);
                assert!(e <= 1e-12, "group {g}, statistic {j}: {e:e}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weighted_and_plain_means_and_variances() {
    let n = 1_000_000;
    let bits = 23;
    let (xs, ks) = grid(n, 1e9, bits, 6);
    let mut rng = SplitMix(7);
    let ws: Vec<i128> = (0..n)
        .map(|_| i128::from(rng.next_u64() % 16 + 1))
        .collect();
    let gs: Vec<i64> = (0..n as i64).map(|i| (i * 31) % 4).collect();
    // Σw, Σw², Σwk, Σwk², and the count and Σk, per group (4: all).
    let mut s = [[0_i128; 6]; 5];
    for i in 0..n {
        for t in [gs[i] as usize, 4] {
            let (w, k) = (ws[i], ks[i]);
            s[t][0] += w;
            s[t][1] += w * w;
            s[t][2] += w * k;
            s[t][3] += w * k * k;
            s[t][4] += 1;
            s[t][5] += k;
        }
    }
    let unit = 2f64.powi(-(bits as i32));
    let exact = |t: &[i128; 6]| {
        let (w, w2, s1, s2) = (t[0], t[1], t[2], t[3]);
        let c = dd(w * s2 - s1 * s1).scale(unit * unit); // W²·var_pop
        // 1e9·W·2^23 + Σwk over W·2^23.
        let mean = dd(1_000_000_000 * w * (1 << 23) + s1).div(dd(w * (1 << 23)));
        let plain_mean = dd(1_000_000_000 * t[4] * (1 << 23) + t[5]).div(dd(t[4] * (1 << 23)));
        [
            mean,
            c.div(dd(w * w)),
            c.div(dd(w * (w - 1))),
            c.div(dd(w * w - w2)),
            plain_mean,
        ]
    };
    for (partitions, skip) in SETUPS {
        let ctx = context(partitions, skip);
        table(
            &ctx,
            "t",
            &[
                ("g", crate::common::col(Int64Array::from(gs.clone()))),
                ("x", crate::common::col(Float64Array::from(xs.clone()))),
                (
                    "w",
                    crate::common::col(Int64Array::from(
                        ws.iter().map(|&w| w as i64).collect::<Vec<_>>(),
                    )),
                ),
            ],
            partitions,
        );
        let sql = "momenta_weighted_mean(x, w), momenta_weighted_var_pop(x, w), \
                   momenta_weighted_var_samp(x, w), momenta_weighted_var_reliability(x, w), momenta_mean(x)";
        let r = row(&ctx, &format!("SELECT {sql} FROM t")).await;
        let reference = exact(&s[4]);
        let e: Vec<f64> = (0..5).map(|j| rel(r[j].unwrap(), reference[j])).collect();
        eprintln!(
            "weighted mean, var pop/samp/reliability, mean: {partitions} partitions, skip {skip}: {}",
            sci(&e)
        );
        assert!(e.iter().all(|&e| e <= 1e-14), "{e:?}");
        let grouped = by_key(&ctx, &format!("SELECT g, {sql} FROM t GROUP BY g")).await;
        for (g, v) in &grouped {
            let reference = exact(&s[*g as usize]);
            for j in 0..5 {
                let e = rel(v[j].unwrap(), reference[j]);
                assert!(e <= 1e-14, "group {g}, statistic {j}: {e:e}");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integers_near_1e12_give_the_same_bits_every_run() {
    // 1e12 + k for k < 10⁶: var_pop = (n² − 1)/12 exactly.
    let n: i128 = 1_000_000;
    let xs: Vec<f64> = (0..n).map(|k| 1e12 + k as f64).collect();
    let exact = dd(n * n - 1).div(Dd::new(12.0));
    let mut seen = Vec::new();
    for run in 0..3 {
        let ctx = context(8, false);
        table(
            &ctx,
            "t",
            &[("x", crate::common::col(Float64Array::from(xs.clone())))],
            8,
        );
        let r = row(&ctx, "SELECT momenta_var_pop(x), var_pop(x) FROM t").await;
        eprintln!(
            "1e12 + k, 8 partitions, run {run}: momenta {:.1e}, built-in {:.1e}",
            rel(r[0].unwrap(), exact),
            rel(r[1].unwrap(), exact)
        );
        assert!(rel(r[0].unwrap(), exact) <= 1e-14);
        seen.push(r[0].unwrap().to_bits());
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skipped_partial_aggregation_goes_through_convert_to_state() {
    // The setups with `skip` really skip: DataFusion counts the rows it
    // sent on as states of their own.
    let n = 100_000;
    let (xs, _) = grid(n, 1e9, 23, 8);
    let gs: Vec<i64> = (0..n as i64).map(|i| i % 50_000).collect();
    let ctx = context(2, true);
    table(
        &ctx,
        "t",
        &[
            ("g", crate::common::col(Int64Array::from(gs))),
            ("x", crate::common::col(Float64Array::from(xs))),
        ],
        2,
    );
    let plan = crate::common::batches(
        &ctx,
        "EXPLAIN ANALYZE SELECT g, momenta_var_pop(x) FROM t GROUP BY g",
    )
    .await;
    let text = datafusion::arrow::util::pretty::pretty_format_batches(&plan)
        .unwrap()
        .to_string();
    let skipped: u64 = text
        .split("skipped_aggregation_rows=")
        .skip(1)
        .filter_map(|s| {
            s.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert!(skipped > 0, "{text}");
}
