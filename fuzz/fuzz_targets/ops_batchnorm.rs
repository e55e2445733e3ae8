//! BatchNorm on tensors decoded from bytes: per-channel statistics in both
//! layouts and on the parallel path, shard merges, running updates in every
//! convention, normalization and checkpoints.
//!
//! Checks: nothing panics; a slice of the wrong length is an error;
//! NCHW and NHWC of the same values, sequential and parallel, give the same
//! statistics; merging two shards gives the statistics of the whole (on
//! finite, moderate data); variances are never negative; a running update
//! fails exactly when the convention needs more values than the batch has,
//! and then changes nothing; normalized outputs of finite, moderate data
//! are finite.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use momenta::batchnorm::{BatchStats, BnConfig, Layout, RunningStats};
use momenta::{Merge, Momentum};

#[derive(Arbitrary, Debug)]
struct Input {
    n: u8,
    c: u8,
    hw: u8,
    cut: u8,
    preset: u8,
    momentum: u16,
    eps_exp: u8,
    values: Vec<f64>,
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * scale.max(1.0)
}

fn same(a: &BatchStats<f64>, b: &BatchStats<f64>, scale: f64) -> bool {
    a.count() == b.count()
        && a.mean()
            .iter()
            .zip(b.mean())
            .all(|(x, y)| close(*x, *y, scale))
        && a.variance()
            .iter()
            .zip(b.variance())
            .all(|(x, y)| close(*x, y, scale * scale))
}

fuzz_target!(|input: Input| {
    let (n, c, hw) = (
        usize::from(input.n % 9),
        usize::from(input.c % 7),
        usize::from(input.hw % 9) + 1,
    );
    let len = n * c * hw;
    if input.values.is_empty() {
        return;
    }
    let xs: Vec<f64> = input.values.iter().cycle().take(len).copied().collect();
    let moderate = xs.iter().all(|x| x.is_finite() && x.abs() < 1e100);
    let scale = xs.iter().fold(1.0_f64, |m, x| m.max(x.abs()));

    let nchw = Layout::nchw(n, c, hw, 1).expect("small shapes fit");
    // The wrong length is an error, never a panic.
    assert!(BatchStats::<f64>::compute(&xs[..len.saturating_sub(1)], nchw).is_err() || len == 0);
    let stats = BatchStats::<f64>::compute(&xs, nchw).expect("the length matches");
    for v in stats.variance().iter().chain(&stats.unbiased_variance()) {
        assert!(!(*v < 0.0), "negative variance {v}");
    }
    let par = BatchStats::<f64>::par_compute(&xs, nchw).expect("the length matches");
    // NaN-aware, bit-for-bit: the Debug text shows every field.
    assert_eq!(
        format!("{par:?}"),
        format!("{stats:?}"),
        "the parallel path differs"
    );

    // The same values channels-last.
    let mut nhwc = vec![0.0; len];
    for i in 0..n {
        for ch in 0..c {
            for p in 0..hw {
                nhwc[(i * hw + p) * c + ch] = xs[(i * c + ch) * hw + p];
            }
        }
    }
    let last = BatchStats::<f64>::compute(&nhwc, Layout::nhwc(n, hw, 1, c).expect("fits"))
        .expect("matches");
    if moderate {
        assert!(
            same(&stats, &last, scale),
            "NCHW {stats:?} vs NHWC {last:?}"
        );
    }

    // Two shards merge into the whole.
    let k = usize::from(input.cut) % (n + 1);
    let (a, b) = xs.split_at(k * c * hw);
    let mut left =
        BatchStats::<f64>::compute(a, Layout::nchw(k, c, hw, 1).expect("fits")).expect("matches");
    let right = BatchStats::<f64>::compute(b, Layout::nchw(n - k, c, hw, 1).expect("fits"))
        .expect("matches");
    left.merge(&right);
    if moderate {
        assert!(
            same(&left, &stats, scale),
            "merged {left:?} vs whole {stats:?}"
        );
    }

    // Running statistics in the chosen convention.
    let m = f64::from(input.momentum) / f64::from(u16::MAX);
    let config = match input.preset % 5 {
        0 => BnConfig::pytorch(),
        1 => BnConfig::keras(),
        2 => BnConfig::tf_fused(),
        3 => BnConfig::pytorch()
            .with_momentum(Momentum::Cumulative)
            .expect("valid"),
        _ => match BnConfig::cudnn(m) {
            Ok(config) => config,
            Err(_) => return,
        },
    };
    let eps = 10f64.powi(-i32::from(input.eps_exp % 12));
    let config = config.with_eps(eps).unwrap_or(config);
    let mut running = RunningStats::new(c, config);
    let before = running.clone();
    let needed = config.correction().min_count().max(1);
    match running.update(&stats) {
        Ok(()) => assert!(stats.count() >= needed),
        Err(_) => {
            assert!(
                stats.count() < needed,
                "update failed with {} values",
                stats.count()
            );
            assert_eq!(running, before, "a failed update changed the state");
        }
    }
    for v in running.var() {
        assert!(!(*v < 0.0), "negative running variance {v}");
    }

    // Normalize in both modes; finite moderate data give finite outputs.
    let mut out = vec![0.0; len];
    if let Ok(()) = stats.normalize(&xs, nchw, eps, None, None, &mut out) {
        if moderate {
            assert!(
                out.iter().all(|y| y.is_finite()),
                "train-mode normalize gave {out:?}"
            );
        }
    }
    let _ = running.normalize(&xs, nchw, None, None, &mut out);

    // Checkpoints restore to the same state.
    let json = serde_json::to_string(&running).expect("serializes");
    if let Ok(back) = serde_json::from_str::<RunningStats<f64>>(&json) {
        assert_eq!(serde_json::to_string(&back).expect("serializes"), json);
    }
});
