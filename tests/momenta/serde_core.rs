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
        err.to_string().contains("count is 0 but mean is 5.0"),
        "{err}"
    );
}

#[test]
fn parts_round_trip_and_continue_bit_for_bit() {
    let xs = data(500, 13);
    let narrow: Vec<f32> = xs.iter().map(|&x| x as f32).collect();

    // f32: the parts are f64 but hold every bit of the f32 state.
    let mut live = Variance::<f32>::new();
    narrow[..200].iter().for_each(|&x| live.push(x));
    let mut rebuilt = Variance::<f32>::from_parts(live.to_parts()).unwrap();
    assert_eq!(rebuilt, live);
    let tail = Variance::<f32>::from_slice(&narrow[400..]);
    for &x in &narrow[200..400] {
        live.push(x);
        rebuilt.push(x);
    }
    live.merge(&tail);
    rebuilt.merge(&tail);
    assert_eq!(rebuilt.to_parts(), live.to_parts());

    // f64, and Mean of both types.
    let v = Variance::<f64>::from_slice(&xs);
    assert_eq!(Variance::<f64>::from_parts(v.to_parts()).unwrap(), v);
    let mut m32: Mean<f32> = narrow[..100].iter().collect();
    let mut back = Mean::<f32>::from_parts(m32.to_parts()).unwrap();
    for &x in &narrow[100..] {
        m32.push(x);
        back.push(x);
    }
    assert_eq!(
        back.mean().unwrap().to_bits(),
        m32.mean().unwrap().to_bits()
    );

    // The parts are plain serde data.
    let json = serde_json::to_string(&v.to_parts()).unwrap();
    let parts: momenta::VarianceParts = serde_json::from_str(&json).unwrap();
    assert_eq!(Variance::<f64>::from_parts(parts).unwrap(), v);
}

#[test]
fn nan_and_infinite_states_round_trip_through_parts() {
    for xs in [
        vec![1.0, f64::NAN, 2.0],
        vec![1.0, f64::INFINITY],
        vec![f64::NEG_INFINITY, f64::INFINITY],
    ] {
        let v: Variance<f64> = xs.iter().collect();
        let back = Variance::<f64>::from_parts(v.to_parts()).unwrap();
        let bits = |v: &Variance<f64>| {
            let p = v.to_parts();
            (
                p.count,
                p.shift.to_bits(),
                p.offset.to_bits(),
                p.m2.to_bits(),
            )
        };
        assert_eq!(bits(&back), bits(&v));
        let m: Mean<f32> = xs.iter().map(|&x| x as f32).collect();
        let back = Mean::<f32>::from_parts(m.to_parts()).unwrap();
        assert_eq!(back.mean().unwrap().to_bits(), m.mean().unwrap().to_bits());
    }
}

#[test]
fn invalid_parts_are_rejected_with_a_reason() {
    use momenta::{MeanParts, VarianceParts};
    let parts = |count, shift, offset, m2| VarianceParts {
        count,
        shift,
        offset,
        m2,
    };
    let bad = [
        (
            parts(3, 1.0, 0.0, -1.0),
            "m2 must be non-negative, got -1.0",
        ),
        (
            parts(0, 1.0, 0.0, 0.0),
            "count is 0 but the moments are not",
        ),
        (
            parts(0, 0.0, 0.5, 0.0),
            "count is 0 but the moments are not",
        ),
        (parts(1, 1.0, 0.0, 2.0), "m2 must be 0 when count is 1"),
    ];
    for (p, why) in bad {
        let err = Variance::<f64>::from_parts(p).unwrap_err().to_string();
        assert_eq!(err, format!("invalid state: {why}"));
    }
    // Parts of an f64 state do not fit an f32 accumulator.
    let err = Variance::<f32>::from_parts(parts(2, 0.1, 0.0, 0.5)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid state: shift must be representable in f32, got 0.1"
    );
    assert!(Variance::<f32>::from_parts(parts(2, 0.5, 0.25, 0.5)).is_ok());
    let err = Mean::<f64>::from_parts(MeanParts {
        count: 0,
        mean: 5.0,
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "invalid state: count is 0 but mean is 5.0");
}

/// The serialized forms are stable from this version: these strings are
/// the committed fixtures, derived by hand from the state each type keeps
/// (for `[1, 3]`: the shift is the first value 1, the offset of the mean
/// from it 1, and M2 = (1 − 2)² + (3 − 2)² = 2). A change that breaks them
/// breaks every stored checkpoint.
#[test]
fn serialized_forms_match_the_committed_fixtures() {
    use momenta::batchnorm::{BatchStats, Layout};
    let v = Variance::<f64>::from_slice(&[1.0, 3.0]);
    let fixture = r#"{"count":2,"shift":"1.0","offset":"1.0","m2":"2.0"}"#;
    assert_eq!(serde_json::to_string(&v).unwrap(), fixture);
    assert_eq!(serde_json::from_str::<Variance<f64>>(fixture).unwrap(), v);
    // The earlier form, floats as numbers, still restores.
    let legacy = r#"{"count":2,"shift":1.0,"offset":1.0,"m2":2.0}"#;
    assert_eq!(serde_json::from_str::<Variance<f64>>(legacy).unwrap(), v);

    let m = Mean::<f64>::from_slice(&[1.0, 3.0]);
    let fixture = r#"{"count":2,"mean":"2.0"}"#;
    assert_eq!(serde_json::to_string(&m).unwrap(), fixture);
    assert_eq!(serde_json::from_str::<Mean<f64>>(fixture).unwrap(), m);
    let legacy = r#"{"count":2,"mean":2.0}"#;
    assert_eq!(serde_json::from_str::<Mean<f64>>(legacy).unwrap(), m);

    // Channels [1, 3] and [2, 4]: each shifted by its first value.
    let b = BatchStats::<f64>::compute(&[1.0, 2.0, 3.0, 4.0], Layout::nc(2, 2).unwrap()).unwrap();
    let fixture = r#"{"count":2,"shift":["1.0","2.0"],"offset":["1.0","1.0"],"m2":["2.0","2.0"],"poisoned":false}"#;
    assert_eq!(serde_json::to_string(&b).unwrap(), fixture);
    assert_eq!(serde_json::from_str::<BatchStats<f64>>(fixture).unwrap(), b);
    let legacy =
        r#"{"count":2,"shift":[1.0,2.0],"offset":[1.0,1.0],"m2":[2.0,2.0],"poisoned":false}"#;
    assert_eq!(serde_json::from_str::<BatchStats<f64>>(legacy).unwrap(), b);
    // The serialized form is the plain parts.
    assert_eq!(serde_json::to_string(&b.to_parts()).unwrap(), fixture);
}
