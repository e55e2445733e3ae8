//! `MinMax` on every route: the zero and NaN rules, f32 and f64 input,
//! thread counts, parts and serde.

use crate::support::{BLOCK_F64, SplitMix, in_pool};
use momenta::{Merge, MinMax, MinMaxParts};

/// The extremes by push, slice, parallel slice and merges of single
/// values, as bits (NaN as `None`, to compare NaN states).
fn routes(xs: &[f64]) -> Vec<(&'static str, MinMax<f64>)> {
    let mut merged = MinMax::new();
    for &x in xs {
        merged.merge(&MinMax::from_slice(&[x]));
    }
    let mut reversed = MinMax::new();
    xs.iter().rev().for_each(|&x| reversed.push(x));
    vec![
        ("push", xs.iter().collect()),
        ("reversed", reversed),
        ("slice", MinMax::from_slice(xs)),
        ("par", MinMax::par_from_slice(xs)),
        ("merge", merged),
    ]
}

fn bits(m: &MinMax<f64>) -> (u64, Option<u64>, Option<u64>) {
    let b = |x: Option<f64>| x.map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() });
    (m.count(), b(m.min()), b(m.max()))
}

#[test]
fn minus_zero_is_below_plus_zero_on_every_route() {
    let mut rng = SplitMix(1);
    for n in [2, 17, BLOCK_F64, 3 * BLOCK_F64 + 5] {
        for &(a, b) in &[(0.0, -0.0), (-0.0, 0.0)] {
            // Zeros only, the two signs at random places.
            let mut xs = vec![a; n];
            let at = (rng.next_u64() % n as u64) as usize;
            xs[at] = b;
            for (how, m) in routes(&xs) {
                assert_eq!(
                    m.min().unwrap().to_bits(),
                    (-0.0_f64).to_bits(),
                    "{how} n {n}"
                );
                assert_eq!(m.max().unwrap().to_bits(), 0.0_f64.to_bits(), "{how} n {n}");
                assert_eq!(m.range(), Some(0.0));
            }
        }
    }
    let only_minus = MinMax::<f64>::from_slice(&[-0.0; 40]);
    assert!(only_minus.max().unwrap().is_sign_negative());
    let only_plus = MinMax::<f32>::from_slice(&[0.0_f32; 40]);
    assert!(only_plus.min().unwrap().is_sign_positive());
}

#[test]
fn nan_propagates_unlike_f64_min() {
    let mut rng = SplitMix(2);
    for n in [1, 5, BLOCK_F64, 20_000] {
        let mut xs: Vec<f64> = (0..n).map(|_| rng.signed_unit()).collect();
        let at = (rng.next_u64() % n as u64) as usize;
        xs[at] = f64::NAN;
        for (how, m) in routes(&xs) {
            assert!(
                m.min().unwrap().is_nan() && m.max().unwrap().is_nan(),
                "{how} n {n}"
            );
            assert!(m.range().unwrap().is_nan());
        }
        // What f64::min would have said: the NaN dropped.
        let folded = xs.iter().fold(f64::INFINITY, |a, &b| a.min(b));
        assert!(!folded.is_nan());
    }
}

#[test]
fn every_route_agrees_bit_for_bit_on_random_data() {
    let mut rng = SplitMix(3);
    for n in [1, 31, 4095, 4097, 50_000] {
        let mut xs: Vec<f64> = (0..n).map(|_| 1e3 * rng.signed_unit()).collect();
        xs[n / 2] = f64::NEG_INFINITY.max(-1e300);
        let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let all = routes(&xs);
        for (how, m) in &all {
            assert_eq!((m.min(), m.max()), (Some(lo), Some(hi)), "{how} n {n}");
            assert_eq!(bits(m), bits(&all[0].1), "{how}");
        }
        let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let m = MinMax::<f32>::from_slice(&xs);
        assert_eq!((m.min(), m.max()), (Some(lo as f32), Some(hi as f32)));
        assert_eq!(MinMax::<f32>::from_slice(&xs32), m);
        let wide = MinMax::<f64>::from_slice(&xs32);
        assert_eq!(wide.min(), Some(f64::from(lo as f32)));
    }
}

#[test]
fn infinities_and_extremes() {
    for (how, m) in routes(&[1.0, f64::INFINITY, -f64::MAX, f64::MAX]) {
        assert_eq!(
            (m.min(), m.max()),
            (Some(-f64::MAX), Some(f64::INFINITY)),
            "{how}"
        );
    }
    for (how, m) in routes(&[-f64::MAX, f64::MAX]) {
        assert_eq!(m.range(), Some(f64::INFINITY), "{how}");
    }
    let inf = MinMax::<f64>::from_slice(&[f64::INFINITY; 3]);
    assert!(inf.range().unwrap().is_nan());
    let tiny = MinMax::<f64>::from_slice(&[5e-324, -5e-324, 0.0]);
    assert_eq!((tiny.min(), tiny.max()), (Some(-5e-324), Some(5e-324)));
    // f64 values beyond f32's range round to ±∞ in a MinMax<f32>.
    let m = MinMax::<f32>::from_slice(&[1e300, -1e300]);
    assert_eq!(
        (m.min(), m.max()),
        (Some(f32::NEG_INFINITY), Some(f32::INFINITY))
    );
    assert_eq!(MinMax::<f64>::from_slice::<f64>(&[]).min(), None);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let xs = SplitMix(4).vec(1 << 20, -5.0, 10.0);
    let m = MinMax::<f64>::from_slice(&xs);
    for threads in [1, 2, 16] {
        let p = in_pool(threads, || MinMax::<f64>::par_from_slice(&xs));
        assert_eq!(bits(&p), bits(&m), "{threads} threads");
    }
}

#[test]
fn parts_round_trip_and_reject_corrupt_state() {
    for xs in [&[1.0, -2.0, 3.5][..], &[f64::NAN, 1.0], &[-0.0, 0.0], &[]] {
        let m = MinMax::<f64>::from_slice(xs);
        let back = MinMax::<f64>::from_parts(m.to_parts()).unwrap();
        assert_eq!(bits(&back), bits(&m));
        let mut a = back.clone();
        let mut b = m.clone();
        a.push(0.5);
        b.push(0.5);
        assert_eq!(bits(&a), bits(&b));
    }
    let bad = [
        (
            MinMaxParts {
                count: 0,
                min: 1.0,
                max: 1.0,
            },
            "count is 0",
        ),
        (
            MinMaxParts {
                count: 0,
                min: -0.0,
                max: 0.0,
            },
            "count is 0",
        ),
        (
            MinMaxParts {
                count: 2,
                min: 3.0,
                max: 1.0,
            },
            "must not be above max",
        ),
        (
            MinMaxParts {
                count: 2,
                min: 0.0,
                max: -0.0,
            },
            "must not be above max",
        ),
        (
            MinMaxParts {
                count: 2,
                min: f64::NAN,
                max: 1.0,
            },
            "both be NaN",
        ),
    ];
    for (parts, why) in bad {
        let err = MinMax::<f64>::from_parts(parts).unwrap_err().to_string();
        assert!(err.contains(why), "{parts:?}: {err}");
    }
    let err = MinMax::<f32>::from_parts(MinMaxParts {
        count: 1,
        min: 0.1,
        max: 0.1,
    });
    assert!(
        err.unwrap_err()
            .to_string()
            .contains("representable in f32")
    );
}

#[cfg(feature = "serde")]
#[test]
fn serde_form_is_the_documented_fixture() {
    let m = MinMax::<f64>::from_slice(&[2.5, -1.0, 0.0]);
    let json = r#"{"count":3,"min":"-1.0","max":"2.5"}"#;
    assert_eq!(serde_json::to_string(&m).unwrap(), json);
    assert_eq!(serde_json::from_str::<MinMax<f64>>(json).unwrap(), m);
    let legacy = r#"{"count":3,"min":-1.0,"max":2.5}"#;
    assert_eq!(serde_json::from_str::<MinMax<f64>>(legacy).unwrap(), m);
    assert_eq!(
        serde_json::to_string(&MinMax::<f32>::new()).unwrap(),
        r#"{"count":0,"min":"0.0","max":"0.0"}"#
    );
    let err =
        serde_json::from_str::<MinMax<f64>>(r#"{"count":3,"min":4.0,"max":2.5}"#).unwrap_err();
    assert!(
        err.to_string()
            .contains("min 4.0 must not be above max 2.5"),
        "{err}"
    );
}
