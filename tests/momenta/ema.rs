//! Exponential averages: `Ema` and `EwVariance` against closed forms, exact
//! fractions and the reference vectors; convention equivalence, bias
//! correction, accuracy on offset data, checkpoints and properties.

use crate::support::SplitMix;
use momenta::{Accumulator, Ema, ErrorKind, EwVariance, Momentum};
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// Deterministic uniform values in [0, 1).
fn uniform(n: usize, seed: u64) -> Vec<f64> {
    SplitMix(seed).vec(n, 0.0, 1.0)
}

/// The weights of an average seeded by its first value, after `n` values
/// with a constant weight `alpha` for the new value: β^(n−1) for the first,
/// α·β^(n−i) for the i-th (i ≥ 2). They sum to 1.
fn seeded_weights(n: usize, alpha: f64) -> Vec<f64> {
    let beta = 1.0 - alpha;
    (1..=n)
        .map(|i| {
            let age = (n - i) as i32;
            if i == 1 {
                beta.powi(age)
            } else {
                alpha * beta.powi(age)
            }
        })
        .collect()
}

/// Σ wᵢxᵢ and Σ wᵢ(xᵢ − μ)², the weighted mean and variance in closed form.
fn weighted(xs: &[f64], ws: &[f64]) -> (f64, f64) {
    let mean: f64 = xs.iter().zip(ws).map(|(x, w)| w * x).sum();
    let var = xs.iter().zip(ws).map(|(x, w)| w * (x - mean).powi(2)).sum();
    (mean, var)
}

fn ulps(a: f64, b: f64) -> f64 {
    (a - b).abs() / (f64::EPSILON * a.abs().max(b.abs()))
}

// ---------------------------------------------------------------- Ema

#[test]
fn quarter_factor_matches_the_closed_form_exactly() {
    // Dyadic data and α = 1/4: every term 3^k·x/4^(k+1) and every step of
    // the recurrence is exact in f64, so equality is exact.
    let xs = [8.0, -4.0, 16.0, 0.0, 2.0, 10.0, -6.0, 1.0];
    for momentum in [Momentum::Factor(0.25), Momentum::Decay(0.75)] {
        let mut e = Ema::new(momentum).unwrap();
        for n in 1..=xs.len() {
            e.push(xs[n - 1]);
            let (expected, _) = weighted(&xs[..n], &seeded_weights(n, 0.25));
            assert_eq!(e.value(), Some(expected), "{momentum:?} after {n}");
            assert_eq!(e.count(), n as u64);
        }
    }
}

#[test]
fn initial_value_decays_in_closed_form() {
    // r_n = β^n·v0 + Σ α·β^(n−i)·x_i, with v0 = 1 (a BatchNorm running var).
    let xs = [4.0, 0.0, -8.0, 2.0, 6.0];
    let (alpha, beta) = (0.5_f64, 0.5_f64);
    let mut e = Ema::with_initial(1.0, Momentum::Factor(alpha)).unwrap();
    assert_eq!(e.value(), Some(1.0));
    assert_eq!(e.count(), 0);
    for n in 1..=xs.len() {
        e.push(xs[n - 1]);
        let mut expected = beta.powi(n as i32);
        for (i, x) in xs[..n].iter().enumerate() {
            expected += alpha * beta.powi((n - 1 - i) as i32) * x;
        }
        assert_eq!(e.value(), Some(expected));
    }
}

#[test]
fn f32_averages_are_exact_on_dyadic_data() {
    let mut e = Ema::new(Momentum::Decay(0.5_f32)).unwrap();
    e.extend_from_slice(&[1.0, 2.0, 4.0]);
    // 1 → 1.5 → 2.75
    assert_eq!(e.value(), Some(2.75_f32));
}

#[test]
fn an_average_passing_through_zero_does_not_restart() {
    let mut e = Ema::new(Momentum::Factor(0.5)).unwrap();
    e.push(2.0);
    e.push(-2.0);
    assert_eq!(e.value(), Some(0.0));
    e.push(4.0);
    assert_eq!(e.value(), Some(2.0)); // a restart would give 4

    let mut e = Ema::new(Momentum::Decay(0.75)).unwrap();
    e.push(0.0);
    e.push(8.0);
    assert_eq!(e.value(), Some(2.0)); // a restart would give 8
    assert_eq!(e.count(), 2);

    let mut e = Ema::new(Momentum::Cumulative).unwrap();
    e.extend_from_slice(&[0.0, 0.0, 6.0]);
    assert_eq!(e.value(), Some(2.0));
}

#[test]
fn cumulative_mode_is_the_running_mean_v10() {
    // V10: batch means 3, 5, 10 → 6, whatever the initial value.
    for start in [None, Some(0.0), Some(1.0), Some(123.0)] {
        let mut e = match start {
            None => Ema::new(Momentum::Cumulative).unwrap(),
            Some(v0) => Ema::with_initial(v0, Momentum::Cumulative).unwrap(),
        };
        for (x, mean) in [(3.0, 3.0), (5.0, 4.0), (10.0, 6.0)] {
            e.push(x);
            assert_eq!(e.value(), Some(mean), "start {start:?}");
        }
    }
}

#[test]
fn cumulative_mode_matches_exact_fractions() {
    let xs = [4.0, 8.0, 0.0, 12.0, -4.0, 7.0, 1.0];
    let mut e = Ema::with_initial(-50.0, Momentum::Cumulative).unwrap();
    let mut sum = 0.0;
    for (i, &x) in xs.iter().enumerate() {
        e.push(x);
        sum += x;
        let exact = sum / (i + 1) as f64;
        assert!(ulps(e.value().unwrap(), exact) <= 4.0, "after {}", i + 1);
    }
}

#[test]
fn span_and_half_life_constructors() {
    // span 3 → α = 2/(3+1) = 1/2; span 7 → α = 1/4.
    let xs = [1.0, 2.0, 3.0];
    let mut e = Ema::new(Momentum::from_span(3.0).unwrap()).unwrap();
    e.extend_from_slice(&xs);
    assert_eq!(e.value(), Some(2.25)); // 1 → 1.5 → 2.25
    let mut e = Ema::new(Momentum::from_span(7.0).unwrap()).unwrap();
    e.extend_from_slice(&[8.0, 0.0]);
    assert_eq!(e.value(), Some(6.0));

    // half-life 1 → β = 1/2.
    let mut e = Ema::new(Momentum::from_half_life(1.0).unwrap()).unwrap();
    e.extend_from_slice(&xs);
    assert_eq!(e.value(), Some(2.25));
    // half-life h: the seed's weight halves every h updates.
    for h in [2_u32, 3, 10] {
        let mut e = Ema::new(Momentum::<f64>::from_half_life(f64::from(h)).unwrap()).unwrap();
        e.push(1.0);
        for _ in 0..h {
            e.push(0.0);
        }
        assert!((e.value().unwrap() - 0.5).abs() < 1e-15, "half-life {h}");
        for _ in 0..h {
            e.push(0.0);
        }
        assert!((e.value().unwrap() - 0.25).abs() < 1e-15, "half-life {h}");
    }
    assert!(Momentum::<f64>::from_span(0.0).is_err());
    assert!(Momentum::<f64>::from_half_life(-1.0).is_err());
}

#[test]
fn conventions_agree_bit_for_bit_when_the_complement_is_exact() {
    let xs: Vec<f64> = uniform(2000, 1).iter().map(|u| 100.0 * u - 30.0).collect();
    let builds: [fn(Momentum<f64>) -> Ema<f64>; 3] = [
        |m| Ema::new(m).unwrap(),
        |m| Ema::with_initial(1.0, m).unwrap(),
        |m| Ema::with_initial(0.0, m).unwrap().with_bias_correction(),
    ];
    for build in builds {
        let mut keras = build(Momentum::Decay(0.75));
        let mut torch = build(Momentum::Factor(0.25));
        for &x in &xs {
            keras.push(x);
            torch.push(x);
            assert_eq!(
                keras.value().unwrap().to_bits(),
                torch.value().unwrap().to_bits()
            );
        }
    }
}

#[test]
fn conventions_agree_within_ulps_when_the_complement_rounds() {
    // 1 − 0.99 ≠ 0.01 in f64: the weights differ in the last bit, and
    // Factor(0.01)'s weights 0.01 + fl(0.99) sum to 1 − 9e-18, a bias of
    // 9e-18/0.01 ≈ 4 ulps. On top, each average carries its own rounding
    // noise, a random walk damped by 0.99 over ~100 steps: several ulps.
    let xs: Vec<f64> = uniform(5000, 2).iter().map(|u| 10.0 * u + 5.0).collect();
    let mut keras = Ema::new(Momentum::Decay(0.99)).unwrap();
    let mut torch = Ema::new(Momentum::Factor(0.01)).unwrap();
    let mut worst = 0.0_f64;
    for &x in &xs {
        keras.push(x);
        torch.push(x);
        worst = worst.max(ulps(keras.value().unwrap(), torch.value().unwrap()));
    }
    assert!(worst <= 16.0, "{worst} ulps apart");
}

#[test]
fn bias_correction_recovers_a_constant_at_every_step() {
    for c in [1.0, 3.7, -1234.5678, 1e-300, 6.02e23] {
        let mut m = Ema::with_initial(0.0, Momentum::Decay(0.9))
            .unwrap()
            .with_bias_correction();
        assert_eq!(m.value(), None, "t = 0 has no data");
        for t in 1..=2000 {
            m.push(c);
            let v = m.value().unwrap();
            assert!(ulps(v, c) <= 4.0, "c = {c}, t = {t}: {v}");
        }
    }
}

#[test]
fn bias_corrected_value_is_the_normalised_weighted_mean() {
    // Zero start, α = 1/2: r_t = Σ 2^-(t−i+1)·x_i, divided by 1 − 2^-t.
    let xs = [8.0, -4.0, 2.0, 6.0];
    let mut m = Ema::with_initial(0.0, Momentum::Factor(0.5))
        .unwrap()
        .with_bias_correction();
    for t in 1..=xs.len() {
        m.push(xs[t - 1]);
        let mut num = 0.0;
        let mut den = 0.0;
        for (i, x) in xs[..t].iter().enumerate() {
            let w = 0.5_f64.powi((t - i) as i32);
            num += w * x;
            den += w;
        }
        assert_eq!(m.value(), Some(num / den), "t = {t}");
    }
}

#[test]
fn bias_correction_is_a_no_op_where_the_weights_sum_to_one() {
    let xs: Vec<f64> = uniform(50, 3);
    for momentum in [Momentum::Factor(0.3), Momentum::Cumulative] {
        let mut plain = Ema::new(momentum).unwrap();
        let mut corrected = Ema::new(momentum).unwrap().with_bias_correction();
        plain.extend_from_slice(&xs);
        corrected.extend_from_slice(&xs);
        assert_eq!(plain.value(), corrected.value());
    }
    // Cumulative from an initial value: the first push takes all the weight.
    let mut m = Ema::with_initial(0.0, Momentum::Cumulative)
        .unwrap()
        .with_bias_correction();
    m.extend_from_slice(&[3.0, 5.0, 10.0]);
    assert_eq!(m.value(), Some(6.0));
}

#[test]
fn invalid_momenta_are_errors_naming_the_value() {
    let err = Ema::<f64>::new(Momentum::Factor(1.5)).unwrap_err();
    assert_eq!(err.to_string(), "momentum must be in [0, 1], got 1.5");
    assert!(matches!(
        err.kind(),
        ErrorKind::InvalidParameter {
            name: "momentum",
            ..
        }
    ));
    let err = Ema::with_initial(0.0_f64, Momentum::Decay(-0.25)).unwrap_err();
    assert_eq!(err.to_string(), "momentum must be in [0, 1], got -0.25");
    assert!(Ema::<f32>::new(Momentum::Decay(f32::NAN)).is_err());
    assert!(Ema::<f64>::new(Momentum::Factor(f64::INFINITY)).is_err());
    let err = EwVariance::<f64>::new(Momentum::Decay(1.5)).unwrap_err();
    assert_eq!(err.to_string(), "momentum must be in [0, 1], got 1.5");
    assert!(EwVariance::<f32>::new(Momentum::Factor(f32::NAN)).is_err());
    // The ends of the interval are allowed.
    assert!(Ema::<f64>::new(Momentum::Factor(0.0)).is_ok());
    assert!(Ema::<f64>::new(Momentum::Decay(1.0)).is_ok());
}

#[test]
fn getters_and_reset() {
    let mut e = Ema::with_initial(1.0, Momentum::Decay(0.9)).unwrap();
    assert_eq!(e.momentum(), Momentum::Decay(0.9));
    e.extend_from_slice(&[5.0, 6.0]);
    e.reset();
    assert_eq!(e, Ema::with_initial(1.0, Momentum::Decay(0.9)).unwrap());
    let mut e = Ema::new(Momentum::Factor(0.5))
        .unwrap()
        .with_bias_correction();
    e.extend_from_slice(&[5.0, 6.0]);
    e.reset();
    assert_eq!(
        e,
        Ema::new(Momentum::Factor(0.5))
            .unwrap()
            .with_bias_correction()
    );
    assert_eq!(e.value(), None);
    e.push(7.0);
    assert_eq!(e.value(), Some(7.0)); // seeded again, not blended with 0
}

#[test]
fn trait_impls_agree_with_inherent_methods() {
    fn feed<A: Accumulator<f64>>(a: &mut A, xs: &[f64]) {
        a.extend_from_slice(&xs[..2]);
        for &x in &xs[2..] {
            a.push(x);
        }
    }
    let xs = [2.0, 4.0, 8.0, 0.0];
    let mut by_trait = (
        Ema::new(Momentum::Factor(0.5)).unwrap(),
        EwVariance::new(Momentum::Factor(0.5)).unwrap(),
    );
    feed(&mut by_trait, &xs);
    let mut ema = Ema::new(Momentum::Factor(0.5)).unwrap();
    ema.extend(xs);
    let mut ew = EwVariance::new(Momentum::Factor(0.5)).unwrap();
    ew.extend(&xs);
    assert_eq!(by_trait.0, ema);
    assert_eq!(by_trait.1, ew);
    assert_eq!(ema.value(), Some(2.75));

    fn assert_send_sync<T: Send + Sync + Clone + core::fmt::Debug + PartialEq>() {}
    assert_send_sync::<Ema<f32>>();
    assert_send_sync::<EwVariance<f64>>();
}

// ---------------------------------------------------------- EwVariance

#[test]
fn ew_variance_matches_the_closed_form_exactly() {
    // α = 1/2 on small integers: weights 2^-k, every quantity dyadic and
    // short, so the closed form Σ wᵢ(xᵢ − μ)² and the recurrence are exact.
    let xs = [3.0, 7.0, -1.0, 4.0, 4.0, 10.0, 0.0];
    for momentum in [Momentum::Factor(0.5), Momentum::Decay(0.5)] {
        let mut ew = EwVariance::new(momentum).unwrap();
        assert_eq!((ew.mean(), ew.variance(), ew.std_dev()), (None, None, None));
        for n in 1..=xs.len() {
            ew.push(xs[n - 1]);
            let (mean, var) = weighted(&xs[..n], &seeded_weights(n, 0.5));
            assert_eq!(ew.mean(), Some(mean), "{momentum:?} after {n}");
            assert_eq!(ew.variance(), Some(var), "{momentum:?} after {n}");
            assert_eq!(ew.std_dev(), Some(var.sqrt()));
            assert_eq!(ew.count(), n as u64);
        }
    }
}

#[test]
fn ew_variance_with_quarter_factor_matches_the_closed_form() {
    let xs: Vec<f64> = uniform(300, 4).iter().map(|u| 20.0 * u - 7.0).collect();
    let mut ew = EwVariance::new(Momentum::Factor(0.25)).unwrap();
    for n in 1..=xs.len() {
        ew.push(xs[n - 1]);
        let (mean, var) = weighted(&xs[..n], &seeded_weights(n, 0.25));
        assert!((ew.mean().unwrap() - mean).abs() <= 1e-14 * 20.0);
        assert!(
            (ew.variance().unwrap() - var).abs() <= 1e-13 * var,
            "after {n}"
        );
    }
}

#[test]
fn cumulative_ew_variance_is_the_population_variance() {
    // Population variance of each prefix as an exact fraction:
    // (n·Σx² − (Σx)²) / n², with integer numerator and denominator.
    let xs = [2_i64, 4, 4, 4, 5, 5, 7, 9, -3, 11, 0];
    let mut ew = EwVariance::new(Momentum::Cumulative).unwrap();
    let (mut s1, mut s2) = (0_i64, 0_i64);
    for (i, &x) in xs.iter().enumerate() {
        ew.push(x as f64);
        let n = i as i64 + 1;
        s1 += x;
        s2 += x * x;
        let exact = (n * s2 - s1 * s1) as f64 / (n * n) as f64;
        let mean = s1 as f64 / n as f64;
        let got = ew.variance().unwrap();
        assert!(
            got == exact || ulps(got, exact) <= 8.0,
            "n = {n}: {got} vs {exact}"
        );
        assert!(ulps(ew.mean().unwrap(), mean) <= 4.0 || mean == 0.0);
    }
    // The full set: mean 5, variance 4 after the first eight values.
    let mut ew = EwVariance::new(Momentum::Cumulative).unwrap();
    ew.extend_from_slice(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
    assert_eq!(ew.mean(), Some(5.0));
    assert!(ulps(ew.variance().unwrap(), 4.0) <= 4.0);
}

/// The textbook estimator this type replaces: EMAs of x and x², then
/// E[x²] − E[x]².
fn naive_ew_variance(xs: &[f64], alpha: f64) -> f64 {
    let mut m1 = Ema::new(Momentum::Factor(alpha)).unwrap();
    let mut m2 = Ema::new(Momentum::Factor(alpha)).unwrap();
    for &x in xs {
        m1.push(x);
        m2.push(x * x);
    }
    m2.value().unwrap() - m1.value().unwrap().powi(2)
}

#[test]
fn large_offset_keeps_its_digits_where_the_naive_formula_fails() {
    // 1e6 + U(−1, 1): the mean is 1e6 times the spread. The reference is
    // the closed form on the data minus 1e6, which that subtraction leaves
    // exact (Sterbenz), computed with weights in closed form.
    let noise: Vec<f64> = uniform(2000, 5).iter().map(|u| 2.0 * u - 1.0).collect();
    let xs: Vec<f64> = noise.iter().map(|e| 1e6 + e).collect();
    let shifted: Vec<f64> = xs.iter().map(|x| x - 1e6).collect();
    let alpha = 0.05;
    let mut ew = EwVariance::new(Momentum::Factor(alpha)).unwrap();
    let mut worst = 0.0_f64;
    let mut worst_naive = 0.0_f64;
    for n in 1..=xs.len() {
        ew.push(xs[n - 1]);
        if n % 100 != 0 {
            continue;
        }
        let (mean, var) = weighted(&shifted[..n], &seeded_weights(n, alpha));
        let got = ew.variance().unwrap();
        worst = worst.max((got - var).abs() / var);
        assert!((ew.mean().unwrap() - (1e6 + mean)).abs() <= 1e-15 * 1e6);
        let naive = naive_ew_variance(&xs[..n], alpha);
        worst_naive = worst_naive.max((naive - var).abs() / var);
    }
    assert!(worst <= 1e-12, "EwVariance: {worst:e} relative error");
    assert!(
        worst_naive > 1e-6,
        "E[x²] − E[x]² should lose digits here, error {worst_naive:e}"
    );
}

#[test]
fn f32_offset_data_v8() {
    // V8: 1000 + [0.1, 0.2, 0.3, 0.4] in f32; the exact population variance
    // of those f32 values is 0.01250305213. E[x²] − E[x]² in f32 gives 0.
    let xs: Vec<f32> = [0.1_f32, 0.2, 0.3, 0.4]
        .iter()
        .map(|d| 1000.0 + d)
        .collect();
    let mut ew = EwVariance::new(Momentum::Cumulative).unwrap();
    ew.extend_from_slice(&xs);
    let got = f64::from(ew.variance().unwrap());
    assert!(
        (got - 0.012_503_052_13).abs() <= 1.2e-7 * 0.0125,
        "{got} vs 0.01250305213"
    );
}

#[test]
fn ew_variance_reset_and_edge_momenta() {
    let mut ew = EwVariance::new(Momentum::Decay(0.9)).unwrap();
    ew.extend_from_slice(&[1.0, 2.0]);
    ew.reset();
    assert_eq!(ew, EwVariance::new(Momentum::Decay(0.9)).unwrap());
    assert_eq!(ew.variance(), None);
    // Weight 0 for new values: the first value stays, the variance 0.
    let mut frozen = EwVariance::new(Momentum::Factor(0.0)).unwrap();
    frozen.extend_from_slice(&[3.0, 100.0, -7.0]);
    assert_eq!((frozen.mean(), frozen.variance()), (Some(3.0), Some(0.0)));
}

// ------------------------------------------- a shift that follows the mean

/// The plain recursion pandas evaluates for `ewm(alpha, adjust=False)`:
/// mean ← (1 − α)·mean + α·x; var ← (1 − α)·(var + α·(x − mean_old)²).
fn naive_recursion(xs: &[f64], alpha: f64) -> Vec<(f64, f64)> {
    let (mut mean, mut var) = (xs[0], 0.0);
    let mut out = vec![(mean, var)];
    for &x in &xs[1..] {
        let d = x - mean;
        mean = (1.0 - alpha) * mean + alpha * x;
        var = (1.0 - alpha) * (var + alpha * d * d);
        out.push((mean, var));
    }
    out
}

fn ew_run(xs: &[f64], momentum: Momentum<f64>) -> Vec<(f64, f64)> {
    let mut ew = EwVariance::new(momentum).unwrap();
    xs.iter()
        .map(|&x| {
            ew.push(x);
            (ew.mean().unwrap(), ew.variance().unwrap())
        })
        .collect()
}

/// The largest mean error (absolute) and variance error (relative) of
/// `got` against `reference`, over the last `last` entries.
fn worst_errors(got: &[(f64, f64)], reference: &[(f64, f64)], last: usize) -> (f64, f64) {
    let (got, reference) = (
        &got[got.len() - last..],
        &reference[reference.len() - last..],
    );
    got.iter()
        .zip(reference)
        .fold((0.0_f64, 0.0_f64), |(em, ev), (g, r)| {
            (em.max((g.0 - r.0).abs()), ev.max(((g.1 - r.1) / r.1).abs()))
        })
}

/// 1e12 first, then `n` values 1 ± 1e-3 (the same numbers as
/// `[1e12] + [0.999 + 0.002·u for u in splitmix(1)]` in Python).
fn outlier_first(n: usize) -> Vec<f64> {
    let mut xs = vec![1e12];
    xs.extend(SplitMix(1).vec(n, 1.0 - 1e-3, 2e-3));
    xs
}

/// 1000 values 1e9 + U(0, 1), then `n` values U(−1, 1), from one generator.
fn level_then_zero(n: usize) -> Vec<f64> {
    let mut g = SplitMix(2);
    let mut xs = g.vec(1000, 1e9, 1.0);
    xs.extend(g.vec(n, -1.0, 2.0));
    xs
}

#[test]
fn ew_variance_recovers_its_digits_after_an_outlier_first() {
    // Reference: the same accumulator started 1000 values after the
    // outlier, where its weight 0.9^1000·1e12 ≈ 1e-34 is far below an ulp
    // of the result; by the end (10⁶ values, 10⁵ without
    // `MOMENTA_LONG_TESTS`) the two starts differ by 0.9^99000 or less = 0.
    // The plain f64 recursion is checked against the same reference.
    let xs = outlier_first(crate::support::long::size(1_000_000, 100_000));
    for momentum in [Momentum::Factor(0.1), Momentum::Decay(0.9)] {
        let got = ew_run(&xs, momentum);
        let reference = ew_run(&xs[1001..], momentum);
        let (mean_err, var_err) = worst_errors(&got, &reference, 500);
        // The shift left at 1e12 gave 3.8e-4 and 91 %.
        assert!(mean_err <= 1e-15, "{momentum:?}: mean off by {mean_err:e}");
        assert!(
            var_err <= 1e-12,
            "{momentum:?}: variance off by {var_err:e}"
        );
        let (naive_mean, naive_var) = worst_errors(&naive_recursion(&xs, 0.1), &reference, 500);
        assert!(
            naive_mean <= 1e-15 && naive_var <= 1e-11,
            "{naive_mean:e} {naive_var:e}"
        );
    }
}

#[test]
fn ew_variance_follows_a_level_down_to_zero() {
    // 1e9 for 1000 values, then data around 0: the old level's weight is
    // 0.9^1000 ≈ 1e-46 after another 1000 values, so an accumulator started
    // there is the reference for the last 500 of 10⁶ (of 10⁵ without
    // `MOMENTA_LONG_TESTS`).
    let xs = level_then_zero(crate::support::long::size(1_000_000, 100_000));
    let got = ew_run(&xs, Momentum::Factor(0.1));
    let reference = ew_run(&xs[2000..], Momentum::Factor(0.1));
    let (mean_err, var_err) = worst_errors(&got, &reference, 500);
    // The shift left at 1e9 gave 5.3e-7 and 6.2e-7.
    assert!(mean_err <= 1e-15, "mean off by {mean_err:e}");
    assert!(var_err <= 1e-14, "variance off by {var_err:e}");
}

#[test]
fn ew_variance_after_an_outlier_matches_pandas() {
    // Final values after 2000 values (plus the lead-in), α = 0.1:
    // pandas 3.1 `ewm(alpha=0.1, adjust=False)` `.mean()` and
    // `.var(bias=True)` in f64, and the same recursion in 40-digit
    // arithmetic (mpmath) on the same f64 inputs, rounded to f64.
    let cases = [
        // (data, pandas mean, pandas var, exact mean, exact var)
        (
            outlier_first(2000),
            0.999_874_851_606_606_9,
            3.402_851_980_431_564_7e-7,
            0.999_874_851_606_606_6,
            3.402_851_980_431_227_5e-7,
        ),
        (
            level_then_zero(2000),
            0.030_214_144_732_597_66,
            0.343_061_232_288_294,
            0.030_214_144_732_597_68,
            0.343_061_232_288_293_9,
        ),
    ];
    for (xs, pandas_mean, pandas_var, exact_mean, exact_var) in cases {
        let mut ew = EwVariance::new(Momentum::Factor(0.1)).unwrap();
        ew.extend_from_slice(&xs);
        let (mean, var) = (ew.mean().unwrap(), ew.variance().unwrap());
        // pandas is within 3e-16 and 4.6e-13 (relative) of the exact values.
        assert!((mean - exact_mean).abs() <= 1e-15, "{mean} vs {exact_mean}");
        assert!(
            ((var - exact_var) / exact_var).abs() <= 1e-12,
            "{var} vs {exact_var}"
        );
        assert!(
            (mean - pandas_mean).abs() <= 1e-15,
            "{mean} vs pandas {pandas_mean}"
        );
        assert!(((var - pandas_var) / pandas_var).abs() <= 2e-12);
    }
}

/// Double-double arithmetic for a reference with ~32 digits.
#[derive(Clone, Copy)]
struct Dd(f64, f64);

impl Dd {
    fn add(self, o: Dd) -> Dd {
        let s = self.0 + o.0;
        let b = s - self.0;
        let e = (self.0 - (s - b)) + (o.0 - b) + self.1 + o.1;
        let hi = s + e;
        Dd(hi, e - (hi - s))
    }
    fn mul(self, o: Dd) -> Dd {
        let p = self.0 * o.0;
        let e = self.0.mul_add(o.0, -p) + self.0 * o.1 + self.1 * o.0;
        let hi = p + e;
        Dd(hi, e - (hi - p))
    }
    fn neg(self) -> Dd {
        Dd(-self.0, -self.1)
    }
}

/// The recursion of `naive_recursion` in double-double, with weights α and
/// 1 − α both exact (α dyadic).
fn dd_recursion(xs: &[f64], alpha: f64) -> Vec<(f64, f64)> {
    let (a, b) = (Dd(alpha, 0.0), Dd(1.0 - alpha, 0.0));
    let (mut mean, mut var) = (Dd(xs[0], 0.0), Dd(0.0, 0.0));
    let mut out = vec![(xs[0], 0.0)];
    for &x in &xs[1..] {
        let d = Dd(x, 0.0).add(mean.neg());
        mean = mean.add(a.mul(d));
        var = b.mul(var.add(a.mul(d.mul(d))));
        out.push((mean.0, var.0));
    }
    out
}

/// Sequences that move a level by orders of magnitude, in several orders.
fn hostile_orders(seed: u64) -> Vec<Vec<f64>> {
    let mut g = SplitMix(seed);
    let levels = [0.0, 1.0, -3.0, 1e3, 1e6, -1e8, 1e9, 1e12, 1e-3];
    let spreads = [1e-3, 1.0, 1e2];
    let mut out = Vec::new();
    for _ in 0..4 {
        let mut xs = Vec::new();
        for _ in 0..1 + g.next_u64() % 4 {
            let level = levels[(g.next_u64() % levels.len() as u64) as usize];
            let spread = spreads[(g.next_u64() % spreads.len() as u64) as usize];
            let len = 1 + (g.next_u64() % 300) as usize;
            xs.extend(g.vec(len, level - spread / 2.0, spread));
        }
        out.push(xs);
    }
    let mut sorted = SplitMix(seed).vec(600, 0.0, 1.0);
    sorted
        .iter_mut()
        .for_each(|u| *u = (40.0 * *u - 10.0).exp());
    sorted.sort_by(f64::total_cmp);
    out.push(sorted.clone());
    sorted.reverse();
    out.push(sorted);
    out
}

#[test]
fn ew_variance_is_as_accurate_as_the_plain_recursion_in_any_order() {
    // Against a double-double reference, in blocks of 50 pushes: the
    // accumulator's worst error is within a small factor of the plain f64
    // recursion's (rounding noise differs from run to run), plus a floor of
    // a few ulps of the block's mean. The shift left at the first value
    // fails this by factors up to 1e11.
    let mut worst = (0.0_f64, 0.0_f64);
    for seed in 0..60 {
        for xs in hostile_orders(seed) {
            for alpha in [0.5, 0.25, 0.125, 1.0 / 64.0] {
                let reference = dd_recursion(&xs, alpha);
                let got = ew_run(&xs, Momentum::Factor(alpha));
                let naive = naive_recursion(&xs, alpha);
                for start in (1..xs.len()).step_by(50) {
                    let end = (start + 50).min(xs.len());
                    let block = start..end;
                    let err = |run: &[(f64, f64)]| {
                        block.clone().fold((0.0_f64, 0.0_f64), |(em, ev), k| {
                            let (m, v) = reference[k];
                            let ev_k = if v == 0.0 {
                                run[k].1.abs()
                            } else {
                                ((run[k].1 - v) / v).abs()
                            };
                            (em.max((run[k].0 - m).abs()), ev.max(ev_k))
                        })
                    };
                    let scale = block
                        .clone()
                        .fold(0.0_f64, |s, k| s.max(reference[k].0.abs()));
                    let (ours, plain) = (err(&got), err(&naive));
                    let mean_ratio = ours.0 / (plain.0 + 4.0 * f64::EPSILON * scale);
                    let var_ratio = ours.1 / (plain.1 + 16.0 * f64::EPSILON);
                    worst = (worst.0.max(mean_ratio), worst.1.max(var_ratio));
                    assert!(
                        mean_ratio <= 8.0 && var_ratio <= 8.0,
                        "seed {seed}, α = {alpha}, pushes {block:?}: mean {:e} vs {:e}, \
                         variance {:e} vs {:e}",
                        ours.0,
                        plain.0,
                        ours.1,
                        plain.1
                    );
                }
            }
        }
    }
    eprintln!(
        "worst ratios to the plain recursion: mean {:.2}, variance {:.2}",
        worst.0, worst.1
    );
}

#[test]
fn weight_one_on_the_new_value_is_the_same_in_both_conventions() {
    // Decay(0) ≡ Factor(1): each push replaces the average, even a NaN or
    // ±∞ one; Decay(1) ≡ Factor(0): the first value stays, and a NaN
    // pushed later propagates in both.
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let xs = [1.0, bad, 2.0];
        for momentum in [Momentum::Decay(0.0), Momentum::Factor(1.0)] {
            let mut e = Ema::new(momentum).unwrap();
            e.extend_from_slice(&xs);
            assert_eq!(e.value(), Some(2.0), "{momentum:?} after {bad}");
            let mut e = Ema::with_initial(0.0, momentum).unwrap();
            e.extend_from_slice(&xs);
            assert_eq!(e.value(), Some(2.0), "{momentum:?} after {bad}");
            let mut ew = EwVariance::new(momentum).unwrap();
            ew.extend_from_slice(&xs);
            assert_eq!(
                (ew.mean(), ew.variance()),
                (Some(2.0), Some(0.0)),
                "{momentum:?}"
            );
        }
    }
    let xs = [3.0, f64::NAN, 5.0];
    for momentum in [Momentum::Decay(1.0), Momentum::Factor(0.0)] {
        let mut e = Ema::new(momentum).unwrap();
        e.extend_from_slice(&xs[..1]);
        assert_eq!(e.value(), Some(3.0));
        e.extend_from_slice(&xs[1..]);
        assert!(e.value().unwrap().is_nan(), "{momentum:?}");
        let mut ew = EwVariance::new(momentum).unwrap();
        ew.extend_from_slice(&xs);
        assert!(ew.mean().unwrap().is_nan(), "{momentum:?}");
    }
}

#[test]
fn conventions_agree_bit_for_bit_at_every_exact_parameter() {
    // Decay(d) and Factor(1 − d) where 1 − d is exact, endpoints included,
    // on data with NaN and ±∞ in it.
    let mut xs: Vec<f64> = uniform(300, 11).iter().map(|u| 50.0 * u - 20.0).collect();
    xs[100] = f64::NAN;
    xs[200] = f64::INFINITY;
    for d in [0.0, 0.25, 0.5, 0.75, 0.9375, 1.0] {
        let (keras, torch) = (Momentum::Decay(d), Momentum::Factor(1.0 - d));
        for start in [0, 101, 201] {
            let mut a = Ema::new(keras).unwrap();
            let mut b = Ema::new(torch).unwrap();
            let mut c = EwVariance::new(keras).unwrap();
            let mut e = EwVariance::new(torch).unwrap();
            for &x in &xs[start..] {
                a.push(x);
                b.push(x);
                c.push(x);
                e.push(x);
                let bits = |v: Option<f64>| v.map(f64::to_bits);
                assert_eq!(bits(a.value()), bits(b.value()), "decay {d}");
                assert_eq!(bits(c.mean()), bits(e.mean()), "decay {d}");
                assert_eq!(bits(c.variance()), bits(e.variance()), "decay {d}");
            }
        }
    }
}

// ------------------------------------------------------------------ serde

#[cfg(feature = "serde")]
mod checkpoints {
    use super::*;

    fn round_trip<T>(live: &T) -> T
    where
        T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + core::fmt::Debug,
    {
        let json = serde_json::to_string(live).unwrap();
        let restored: T = serde_json::from_str(&json).unwrap();
        assert_eq!(&restored, live, "{json}");
        restored
    }

    #[test]
    fn ema_round_trip_continues_bit_for_bit() {
        let xs: Vec<f64> = uniform(500, 6).iter().map(|u| 1e3 * u - 300.0).collect();
        let (first, rest) = xs.split_at(211);
        let builds: [fn() -> Ema<f64>; 4] = [
            || Ema::new(Momentum::Factor(0.1)).unwrap(),
            || Ema::with_initial(1.0, Momentum::Decay(0.99)).unwrap(),
            || {
                Ema::with_initial(0.0, Momentum::Decay(0.999))
                    .unwrap()
                    .with_bias_correction()
            },
            || Ema::with_initial(5.0, Momentum::Cumulative).unwrap(),
        ];
        for build in builds {
            // Before any push, and after some.
            let empty = build();
            let _ = round_trip(&empty);
            let mut live = build();
            live.extend_from_slice(first);
            let mut restored = round_trip(&live);
            for &x in rest {
                live.push(x);
                restored.push(x);
                assert_eq!(
                    live.value().unwrap().to_bits(),
                    restored.value().unwrap().to_bits()
                );
            }
            assert_eq!(restored, live);
        }
    }

    #[test]
    fn ew_variance_round_trip_continues_bit_for_bit() {
        let xs: Vec<f64> = uniform(500, 7).iter().map(|u| 1e6 + u).collect();
        let mut live = EwVariance::new(Momentum::Decay(0.97)).unwrap();
        let _ = round_trip(&live);
        live.extend_from_slice(&xs[..123]);
        let mut restored = round_trip(&live);
        for &x in &xs[123..] {
            live.push(x);
            restored.push(x);
        }
        assert_eq!(restored, live);
        assert_eq!(
            restored.variance().unwrap().to_bits(),
            live.variance().unwrap().to_bits()
        );
    }

    #[test]
    fn corrupt_ema_state_is_rejected() {
        let good = r#"{"momentum":{"Factor":0.1},"initial":null,"value":2.0,"count":3,"residual":0.0,"bias_correction":false}"#;
        assert!(serde_json::from_str::<Ema<f64>>(good).is_ok());
        let bad = [
            (
                r#"{"momentum":{"Factor":1.5},"initial":null,"value":2.0,"count":3,"residual":0.0,"bias_correction":false}"#,
                "momentum must be in [0, 1], got 1.5",
            ),
            (
                r#"{"momentum":{"Decay":-0.5},"initial":0.0,"value":0.0,"count":0,"residual":1.0,"bias_correction":false}"#,
                "momentum must be in [0, 1], got -0.5",
            ),
            (
                r#"{"momentum":{"Factor":0.1},"initial":null,"value":2.0,"count":0,"residual":1.0,"bias_correction":false}"#,
                "count is 0",
            ),
            (
                r#"{"momentum":{"Factor":0.1},"initial":null,"value":null,"count":3,"residual":0.0,"bias_correction":false}"#,
                "no value",
            ),
            (
                r#"{"momentum":{"Factor":0.1},"initial":1.0,"value":null,"count":3,"residual":0.5,"bias_correction":false}"#,
                "has a value",
            ),
            (
                r#"{"momentum":{"Factor":0.1},"initial":1.0,"value":2.0,"count":0,"residual":1.0,"bias_correction":false}"#,
                "differs from the initial value",
            ),
            (
                r#"{"momentum":{"Factor":0.1},"initial":0.0,"value":2.0,"count":3,"residual":1.5,"bias_correction":true}"#,
                "residual weight must be in [0, 1]",
            ),
            (
                r#"{"momentum":{"Factor":0.1},"initial":null,"value":2.0,"count":3,"residual":0.5,"bias_correction":false}"#,
                "no weight left",
            ),
            (
                r#"{"momentum":"Cumulative","initial":4.0,"value":2.0,"count":3,"residual":0.5,"bias_correction":false}"#,
                "no weight left",
            ),
        ];
        for (json, reason) in bad {
            let err = serde_json::from_str::<Ema<f64>>(json).unwrap_err();
            assert!(err.to_string().contains(reason), "{json}: {err}");
        }
    }

    #[test]
    fn residual_weight_must_match_the_momentum_and_count() {
        // Decay(0.5) from 0, one push of 8: average 4, residual 0.5, and
        // the bias-corrected value 4 / (1 − 0.5) = 8.
        let good = r#"{"momentum":{"Decay":0.5},"initial":0.0,"value":4.0,"count":1,"residual":0.5,"bias_correction":true}"#;
        let e: Ema<f64> = serde_json::from_str(good).unwrap();
        assert_eq!(e.value(), Some(8.0));
        for residual in ["0.9", "0.25", "0.0", "0.5000001"] {
            let bad = good.replace("\"residual\":0.5", &format!("\"residual\":{residual}"));
            let err = serde_json::from_str::<Ema<f64>>(&bad).unwrap_err();
            assert!(err.to_string().contains("does not match"), "{bad}: {err}");
        }
        // 0.5^2000 is far below the smallest normal number: the product is
        // flushed to 0, and 0 is the only residual that fits.
        let flushed = good.replace("\"count\":1", "\"count\":2000");
        assert!(
            serde_json::from_str::<Ema<f64>>(
                &flushed.replace("\"residual\":0.5", "\"residual\":0.0")
            )
            .is_ok()
        );
        assert!(serde_json::from_str::<Ema<f64>>(&flushed).is_err());
        // Weight 1 for the new value leaves nothing of the start.
        let replaced = r#"{"momentum":{"Factor":1.0},"initial":0.0,"value":4.0,"count":1,"residual":0.0,"bias_correction":false}"#;
        assert!(serde_json::from_str::<Ema<f64>>(replaced).is_ok());
        let kept = replaced.replace("\"residual\":0.0", "\"residual\":0.5");
        assert!(serde_json::from_str::<Ema<f64>>(&kept).is_err());
    }

    /// Pushes `n` values and checks that the state passes validation at
    /// checkpoints, every push around the step where βᵗ reaches the
    /// smallest normal number (where the product is flushed to 0).
    ///
    /// Without `MOMENTA_LONG_TESTS`: the first 200 pushes (not 1000) and
    /// those within 300 of the flush (not 3000) are checked, and the
    /// pushes stop at 10⁵ or just past the flush if it comes before `n`.
    fn states_pass<F>(momentum: Momentum<F>, n: u64)
    where
        F: momenta::Float + serde::Serialize + serde::de::DeserializeOwned,
    {
        let beta = momentum.decay(1).as_f64();
        let flush = (F::min_positive_value().as_f64().ln() / beta.ln()) as u64;
        let (first, near) = crate::support::long::size((1000, 3000), (200, 300));
        let short = if flush < n {
            (flush + near).max(100_000)
        } else {
            100_000
        };
        let n = crate::support::long::size(n, short.min(n));
        let mut e = Ema::with_initial(F::zero(), momentum)
            .unwrap()
            .with_bias_correction();
        let one = F::one();
        for t in 1..=n {
            e.push(one);
            if t < first || t % 997 == 0 || t.abs_diff(flush) < near || t == n {
                let json = serde_json::to_string(&e).unwrap();
                let back: Result<Ema<F>, _> = serde_json::from_str(&json);
                assert!(back.is_ok(), "{momentum:?} after {t}: {json}");
            }
        }
    }

    #[test]
    fn residuals_from_real_pushes_always_pass() {
        for d in [
            0.5,
            0.9,
            0.99,
            0.999,
            0.9999,
            0.99999,
            0.999_999,
            1.0 - 1e-9,
            1.0,
        ] {
            states_pass(Momentum::Decay(d), 1_000_000);
        }
        for a in [0.1, 0.3, 1e-3, 1e-7] {
            states_pass(Momentum::Factor(a), 1_000_000);
        }
        for d in [0.9_f32, 0.999, 0.99999, 0.999_999] {
            states_pass(Momentum::Decay(d), 1_000_000);
        }
        states_pass(Momentum::Factor(1e-3_f32), 200_000);
    }

    #[test]
    fn corrupt_ew_variance_state_is_rejected() {
        let good =
            r#"{"momentum":{"Decay":0.9},"count":2,"shift":1.0,"offset":0.1,"variance":0.09}"#;
        assert!(serde_json::from_str::<EwVariance<f64>>(good).is_ok());
        let bad = [
            (
                r#"{"momentum":{"Decay":1.5},"count":2,"shift":1.0,"offset":0.1,"variance":0.09}"#,
                "momentum must be in [0, 1], got 1.5",
            ),
            (
                r#"{"momentum":{"Decay":0.9},"count":2,"shift":1.0,"offset":0.1,"variance":-0.09}"#,
                "variance must be non-negative",
            ),
            (
                r#"{"momentum":{"Decay":0.9},"count":0,"shift":1.0,"offset":0.0,"variance":0.0}"#,
                "count is 0",
            ),
            (
                r#"{"momentum":{"Decay":0.9},"count":1,"shift":1.0,"offset":0.0,"variance":2.0}"#,
                "variance must be 0 when count is 1",
            ),
        ];
        for (json, reason) in bad {
            let err = serde_json::from_str::<EwVariance<f64>>(json).unwrap_err();
            assert!(err.to_string().contains(reason), "{json}: {err}");
        }
    }
}

// ------------------------------------------------------------- properties

/// A momentum parameter in [0, 1], with the ends and values near them
/// represented.
#[derive(Clone, Debug)]
pub(crate) struct Unit(pub(crate) f64);

impl Arbitrary for Unit {
    fn arbitrary(g: &mut Gen) -> Self {
        let k = u32::arbitrary(g);
        let special = [0.0, 1.0, 0.5, 0.9, 0.99, 0.999, 0.1, 0.01, 1e-9, 1.0 - 1e-9];
        if k % 4 == 0 {
            Unit(*g.choose(&special).unwrap_or(&0.5))
        } else {
            Unit(f64::from(k) / f64::from(u32::MAX))
        }
    }
}

/// Finite data with an offset that may dwarf its spread.
#[derive(Clone, Debug)]
struct Data(Vec<f64>);

impl Arbitrary for Data {
    fn arbitrary(g: &mut Gen) -> Self {
        let offset = *g.choose(&[0.0, -3.5, 1e6, 1e9]).unwrap_or(&0.0);
        let scale = *g.choose(&[1.0, 1e-3, 1e3, 1e100]).unwrap_or(&1.0);
        let raw: Vec<i32> = Arbitrary::arbitrary(g);
        Data(
            raw.into_iter()
                .map(|k| offset + scale * f64::from(k) / 4096.0)
                .collect(),
        )
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(Data))
    }
}

fn check<T: quickcheck::Testable>(property: T) {
    // 2000 cases with `MOMENTA_LONG_TESTS` (CI), 500 by default.
    let cases = crate::support::long::size(2000, 500);
    QuickCheck::new()
        .tests(cases)
        .max_tests(cases * 10)
        .quickcheck(property);
}

#[test]
fn decay_and_factor_conventions_agree() {
    fn property(beta: Unit, data: Data) -> bool {
        let xs = &data.0;
        let beta = beta.0;
        let mut keras = Ema::new(Momentum::Decay(beta)).unwrap();
        let mut torch = Ema::new(Momentum::Factor(1.0 - beta)).unwrap();
        let scale = xs.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        xs.iter().all(|&x| {
            keras.push(x);
            torch.push(x);
            let (a, b) = (keras.value().unwrap(), torch.value().unwrap());
            a == b || (a - b).abs() <= 8.0 * f64::EPSILON * scale
        })
    }
    check(property as fn(Unit, Data) -> bool);
}

#[test]
fn ew_variance_is_never_negative() {
    fn property(beta: Unit, data: Data, cumulative: bool) -> bool {
        let momentum = if cumulative {
            Momentum::Cumulative
        } else {
            Momentum::Decay(beta.0)
        };
        let mut ew = EwVariance::new(momentum).unwrap();
        data.0.iter().all(|&x| {
            ew.push(x);
            let v = ew.variance().unwrap();
            v >= 0.0 && v.is_finite()
        })
    }
    check(property as fn(Unit, Data, bool) -> bool);
}

#[test]
fn ew_variance_mean_agrees_with_ema() {
    fn property(beta: Unit, data: Data) -> bool {
        let mut ew = EwVariance::new(Momentum::Decay(beta.0)).unwrap();
        let mut ema = Ema::new(Momentum::Decay(beta.0)).unwrap();
        let scale = data.0.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        data.0.iter().all(|&x| {
            ew.push(x);
            ema.push(x);
            let (a, b) = (ew.mean().unwrap(), ema.value().unwrap());
            (a - b).abs() <= 1e-12 * scale
        })
    }
    check(property as fn(Unit, Data) -> bool);
}
