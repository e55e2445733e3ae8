//! A failed restore names the field it failed at and the value it could
//! not read. Each state is written by the crate, one field is spoiled by
//! hand, and the error must point at that field.
#![cfg(feature = "serde")]

use momenta::{
    EwVariance, Mean, MinMax, Momentum, MovingQuantile, MovingVariance, TimeWindow, Variance,
};
use serde::de::DeserializeOwned;

/// The error of restoring `json` as `T`; panics if it restores.
fn restore_error<T: DeserializeOwned>(json: &str) -> String {
    match serde_json::from_str::<T>(json) {
        Ok(_) => panic!("restored from a spoiled state: {json}"),
        Err(e) => e.to_string(),
    }
}

/// `json` with its one occurrence of `from` replaced by `to`.
fn spoil(json: &str, from: &str, to: &str) -> String {
    assert_eq!(json.matches(from).count(), 1, "{from} in {json}");
    json.replacen(from, to, 1)
}

/// A moving variance's state with compensated sums (as a window off the
/// exact sums keeps them, or as one was saved before the windows moved
/// onto them): `1e-300` beside `1.0` spans more binades than the exact
/// sums hold, and the window stays on the compensated sums until its head
/// next wraps, after the `1e-300` has left.
fn compensated_json() -> String {
    let mut w = MovingVariance::<f64>::new(4).unwrap();
    for x in [1e-300, 1.0, 2.0, 4.0, 3.0] {
        w.push(x);
    }
    let json = serde_json::to_string(&w).unwrap();
    assert!(json.contains("\"m2\":{\"value\":"), "{json}");
    json
}

/// The `"name":"…"` text of a float field of `json`.
fn float_field(json: &str, name: &str) -> String {
    let key = format!("\"{name}\":\"");
    let at = json.find(&key).expect("the field");
    let end = at + key.len() + json[at + key.len()..].find('"').unwrap() + 1;
    json[at..end].to_string()
}

fn variance_json() -> String {
    let mut v = Variance::<f64>::new();
    v.push(1.0);
    v.push(2.0);
    serde_json::to_string(&v).unwrap()
}

#[test]
fn a_float_that_is_not_one_names_its_field_and_its_text() {
    let json = variance_json();
    let e = restore_error::<Variance<f64>>(&spoil(&json, "\"m2\":\"0.5\"", "\"m2\":\"half\""));
    assert!(e.starts_with("m2: "), "{e}");
    assert!(e.contains("\"half\""), "{e}");
}

#[test]
fn a_count_of_the_wrong_type_names_its_field() {
    let json = variance_json();
    let e = restore_error::<Variance<f64>>(&spoil(&json, "\"count\":2", "\"count\":\"two\""));
    assert!(e.starts_with("count: "), "{e}");
    assert!(e.contains("\"two\""), "{e}");
}

#[test]
fn a_null_float_names_its_field() {
    let mut m = Mean::<f64>::new();
    m.push(3.0);
    let json = serde_json::to_string(&m).unwrap();
    let e = restore_error::<Mean<f64>>(&spoil(&json, "\"3.0\"", "null"));
    assert!(e.starts_with("mean: "), "{e}");
    assert!(e.contains("null"), "{e}");
}

#[test]
fn an_element_of_a_window_is_named_by_its_index() {
    let mut w = MovingVariance::<f64>::new(4).unwrap();
    for x in [1.0, 2.0, 4.0] {
        w.push(x);
    }
    let json = serde_json::to_string(&w).unwrap();
    let e = restore_error::<MovingVariance<f64>>(&spoil(
        &json,
        "[\"1.0\",\"2.0\",\"4.0\"]",
        "[\"1.0\",\"2.0\",\"four\"]",
    ));
    assert!(e.starts_with("values[2]: "), "{e}");
    assert!(e.contains("\"four\""), "{e}");
}

#[test]
fn a_nested_field_is_named_by_its_whole_path() {
    let json = compensated_json();
    // The m2 the window keeps, inside its sums, inside its engine.
    let at = json.find("\"m2\":{\"value\":").expect("the window's m2");
    let end = at + json[at..].find(',').unwrap();
    let spoiled = format!("{}\"m2\":{{\"value\":[1]{}", &json[..at], &json[end..]);
    let e = restore_error::<MovingVariance<f64>>(&spoiled);
    assert!(e.starts_with("engine.sums.m2.value: "), "{e}");
}

#[test]
fn a_missing_field_names_the_struct_that_misses_it() {
    let json = compensated_json();
    let spoiled = spoil(&json, &format!("{},", float_field(&json, "hi")), "");
    let err = restore_error::<MovingVariance<f64>>(&spoiled);
    assert!(err.starts_with("engine.sums: "), "{err}");
    assert!(err.contains("missing field `hi`"), "{err}");
}

#[test]
fn an_unknown_field_is_refused_where_it_stands() {
    let mut t = TimeWindow::<f64>::new(10.0).unwrap();
    t.push_at(0.0, 1.0).unwrap();
    let json = serde_json::to_string(&t).unwrap();
    let at = json.find("\"engine\":{").expect("the time window's engine") + "\"engine\":{".len();
    let spoiled = format!("{}\"extra\":1,{}", &json[..at], &json[at..]);
    let err = restore_error::<TimeWindow<f64>>(&spoiled);
    assert!(err.starts_with("engine: "), "{err}");
    assert!(err.contains("extra"), "{err}");
}

#[test]
fn a_value_its_validation_refuses_is_named_with_its_field_and_shortest_form() {
    // A window's sum far from its values: named by its place and shown in
    // the shortest form that reads back (not 301 digits).
    let json = compensated_json();
    let spoiled = spoil(&json, &float_field(&json, "hi"), "\"hi\":\"1e300\"");
    let e = restore_error::<MovingVariance<f64>>(&spoiled);
    assert!(e.contains("engine.sums"), "{e}");
    assert!(e.contains("1e300"), "{e}");
    assert!(!e.contains("000000000000"), "{e}");

    let mut m = MinMax::<f64>::new();
    m.push(-1.0);
    m.push(3.0);
    let json = serde_json::to_string(&m).unwrap();
    let e = restore_error::<MinMax<f64>>(&spoil(&json, "\"-1.0\"", "\"4e200\""));
    assert!(e.contains("min 4e200"), "{e}");
}

#[test]
fn a_restore_that_succeeds_is_unchanged_by_the_path_keeping() {
    // The path-keeping reader only watches: every state reads back equal.
    let mut q = MovingQuantile::<f64>::new(3, 0.5).unwrap();
    for x in [5.0, f64::NAN, -2.0, 7.0] {
        q.push(x);
    }
    let json = serde_json::to_string(&q).unwrap();
    let back: MovingQuantile<f64> = serde_json::from_str(&json).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    let mut e = EwVariance::<f64>::new(Momentum::Factor(0.25)).unwrap();
    e.push(1.0);
    e.push(4.0);
    let json = serde_json::to_string(&e).unwrap();
    let back: EwVariance<f64> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, e);
}

#[test]
fn binary_formats_keep_their_own_errors() {
    // postcard's data names no fields; its error for a short buffer stays
    // the precise one it gives.
    let bytes = postcard::to_allocvec(&{
        let mut v = Variance::<f64>::new();
        v.push(1.0);
        v.push(2.0);
        v
    })
    .unwrap();
    let short = &bytes[..bytes.len() - 1];
    let e = postcard::from_bytes::<Variance<f64>>(short).unwrap_err();
    assert_eq!(e, postcard::Error::DeserializeUnexpectedEnd);
}
