//! Checkpoint and restore of the core accumulators: a round trip continues
//! bit for bit, and corrupt state is rejected with a message.
#![cfg(feature = "serde")]

use crate::support::SplitMix;
use momenta::{Mean, Merge, Variance};

fn data(n: usize, seed: u64) -> Vec<f64> {
    SplitMix(seed).vec(n, 1e6, 1.0)
}

#[test]
fn variance_round_trip_continues_bit_for_bit() {
    let xs = data(1000, 7);
    let (first, rest) = xs.split_at(617);
    let mut live = Variance::<f64>::new();
    first.iter().for_each(|&x| live.push(x));
    let json = serde_json::to_string(&live).unwrap();
    let mut restored: Variance<f64> = serde_json::from_str(&json).unwrap();
    assert_eq!(restored, live);
    for &x in rest {
        live.push(x);
        restored.push(x);
    }
    assert_eq!(restored, live);
    assert_eq!(
        restored.population_variance().unwrap().to_bits(),
        live.population_variance().unwrap().to_bits()
    );
}

#[test]
fn mean_round_trip_continues_bit_for_bit() {
    let xs = data(300, 9);
    let mut live: Mean<f32> = xs.iter().map(|&x| x as f32).take(100).collect();
    let mut restored: Mean<f32> =
        serde_json::from_str(&serde_json::to_string(&live).unwrap()).unwrap();
    for &x in &xs[100..] {
        live.push(x as f32);
        restored.push(x as f32);
    }
    assert_eq!(restored, live);
    let mut merged = restored.clone();
    merged.merge(&live);
    assert_eq!(merged.count(), 600);
}

#[test]
fn corrupt_state_is_rejected_with_a_reason() {
    let bad = [
        (
            r#"{"count":3,"shift":1.0,"offset":0.0,"m2":-1.0}"#,
            "m2 must be non-negative",
        ),
        (
            r#"{"count":0,"shift":1.0,"offset":0.0,"m2":0.0}"#,
            "count is 0",
        ),
        (
            r#"{"count":1,"shift":1.0,"offset":0.0,"m2":2.0}"#,
            "m2 must be 0 when count is 1",
        ),
        (r#"{"count":2,"shift":1.0,"offset":0.0}"#, "missing field"),
    ];
    for (json, why) in bad {
        let err = serde_json::from_str::<Variance<f64>>(json)
            .unwrap_err()
            .to_string();
        assert!(err.contains(why), "{json}: {err}");
    }
    let err = serde_json::from_str::<Mean<f64>>(r#"{"count":0,"mean":5.0}"#).unwrap_err();
    assert!(
        err.to_string().contains("count is 0 but mean is 5"),
        "{err}"
    );
}
