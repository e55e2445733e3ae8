//! Long-run drift: a moving window fed for ever must keep the exact mean of
//! its last `window` values, to within a few ulps, and a non-negative
//! variance.
//!
//! The data are `1e6 + k/2^20` for random 20-bit `k`: exact in `f64`, so the
//! test keeps the exact window sums Σk and Σk² in `i128` and compares every
//! single push against the exact rational mean. `1e6 < 2^20`, so every mean
//! lies in `[2^19, 2^20)` where one ulp is `2^-33`, and `mean·2^33` is an
//! integer: the error in ulps is `|mean·2^33·n − (Σx·2^20)·2^13| / n`, exact
//! integer arithmetic throughout.
//!
//! The 10⁸-push run takes about 30 s in the debug profile, so it is ignored
//! by default (`cargo test --test momenta window_drift -- --ignored` runs it); the
//! 10⁷-push run (about 3 s) runs with `MOMENTA_LONG_TESTS` (as CI sets it),
//! 10⁶ pushes without; so does the 10⁶-push run of two more windows, at
//! 2·10⁵ pushes without.

use std::collections::VecDeque;

use crate::support::SplitMix;
use momenta::{MovingAverage, MovingVariance};

const OFFSET: i128 = 1_000_000;
const FRAC_BITS: u32 = 20;

struct Worst {
    /// Largest error of the moving mean, in ulps of the mean.
    mean_ulps: f64,
    /// Largest relative error of the population variance.
    var_rel: f64,
}

/// Pushes `pushes` values into a `MovingAverage` and a `MovingVariance`
/// over `window` and checks each push against the exact window.
fn run(pushes: u64, window: usize, seed: u64) -> Worst {
    let mut rng = SplitMix(seed);
    let mut avg = MovingAverage::<f64>::new(window).unwrap();
    let mut var = MovingVariance::<f64>::new(window).unwrap();
    let mut ks: VecDeque<i128> = VecDeque::with_capacity(window);
    let (mut sum_k, mut sum_k2) = (0_i128, 0_i128);
    let scale = f64::from(1u32 << FRAC_BITS);
    let mut worst = Worst {
        mean_ulps: 0.0,
        var_rel: 0.0,
    };
    for i in 0..pushes {
        let k = (rng.next_u64() >> (64 - FRAC_BITS)) as i128;
        let x = OFFSET as f64 + k as f64 / scale;
        let mean = avg.push(x);
        var.push(x);

        ks.push_back(k);
        sum_k += k;
        sum_k2 += k * k;
        if ks.len() > window {
            let old = ks.pop_front().unwrap();
            sum_k -= old;
            sum_k2 -= old * old;
        }
        let n = ks.len() as i128;

        // Mean: exact comparison in units of 2^-33.
        assert!((524_288.0..1_048_576.0).contains(&mean), "push {i}: {mean}");
        let got = (mean * 2f64.powi(33)) as i128; // exact: an integer < 2^53
        let want_times_n = ((OFFSET << FRAC_BITS) * n + sum_k) << (33 - FRAC_BITS);
        let ulps = (got * n - want_times_n).abs() as f64 / n as f64;
        worst.mean_ulps = worst.mean_ulps.max(ulps);
        assert!(ulps <= 1.0, "push {i}: mean {mean} is {ulps} ulps off");

        // Variance: never negative, and close to the exact value
        // (n·Σk² − (Σk)²) / (n²·2^40).
        let pop = var.population_variance().unwrap();
        assert!(pop >= 0.0, "push {i}: negative variance {pop}");
        let exact = (n * sum_k2 - sum_k * sum_k) as f64 / ((n * n) as f64 * scale * scale);
        if exact > 0.0 {
            let rel = (pop - exact).abs() / exact;
            worst.var_rel = worst.var_rel.max(rel);
            assert!(rel <= 1e-12, "push {i}: variance {pop} vs exact {exact}");
        } else {
            assert_eq!(pop, 0.0, "push {i}");
        }
    }
    assert_eq!(avg.len(), window.min(pushes as usize));
    worst
}

#[test]
fn ten_million_pushes_do_not_drift_window_1000() {
    let pushes = crate::support::long::size(10_000_000, 1_000_000);
    let w = run(pushes, 1000, 1);
    eprintln!(
        "{pushes} pushes, window 1000: worst mean error {} ulps, worst variance error {:e}",
        w.mean_ulps, w.var_rel
    );
}

#[test]
fn a_million_pushes_do_not_drift_small_and_large_windows() {
    let pushes = crate::support::long::size(1_000_000, 200_000);
    for window in [7, 100_000] {
        let w = run(pushes, window, 2);
        eprintln!(
            "{pushes} pushes, window {window}: worst mean error {} ulps, worst variance error {:e}",
            w.mean_ulps, w.var_rel
        );
    }
}

#[test]
#[ignore = "10^8 pushes take about 30 s in the debug profile; run with --ignored"]
fn hundred_million_pushes_do_not_drift() {
    let w = run(100_000_000, 1000, 3);
    eprintln!(
        "10^8 pushes, window 1000: worst mean error {} ulps, worst variance error {:e}",
        w.mean_ulps, w.var_rel
    );
}
