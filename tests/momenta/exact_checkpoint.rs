//! Checkpoints of the exact sums (`ExactSums`, `ExactCoSums`,
//! `GroupedCoSums`): saved after every prefix of a hostile stream, through
//! JSON and postcard, restored, and fed the rest, they equal the sums that
//! were never saved (the same integers, so the same bits at every read)
//! and take or refuse the same values; and a state no set of values could
//! leave is refused with the bound it breaks.
#![cfg(feature = "serde")]

use momenta::{ExactCoSums, ExactSums, GroupedCoSums};
use quickcheck::{Arbitrary, Gen, QuickCheck};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Values a stream draws from besides ordinary ones: values the sums
/// refuse (NaN, ±∞, too far from the rest) and values that make them
/// lower their base or take the wide route.
const HOSTILE: [f64; 12] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    -f64::MAX,
    5e-324,
    1e300,
    -1e-300,
    1e15,
    0.0,
    -0.0,
    1e-30,
];

#[derive(Clone, Debug)]
struct Rows(Vec<(usize, f64, f64)>);

fn value(g: &mut Gen) -> f64 {
    if u8::arbitrary(g) % 5 == 0 {
        *g.choose(&HOSTILE).unwrap()
    } else {
        // 1e9 + U(0, 1) on a grid of 2^-20, and its negative.
        let u = f64::from(u32::arbitrary(g) % (1 << 20)) / f64::from(1 << 20);
        if bool::arbitrary(g) {
            1e9 + u
        } else {
            -3.0 - u
        }
    }
}

impl Arbitrary for Rows {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = usize::arbitrary(g) % 40;
        Self(
            (0..n)
                .map(|_| (usize::arbitrary(g) % 3, value(g), value(g)))
                .collect(),
        )
    }
}

fn via_json<T: Serialize + DeserializeOwned>(t: &T) -> T {
    serde_json::from_str(&serde_json::to_string(t).unwrap()).unwrap()
}

fn via_postcard<T: Serialize + DeserializeOwned>(t: &T) -> T {
    postcard::from_bytes(&postcard::to_allocvec(t).unwrap()).unwrap()
}

/// Every prefix saved both ways continues as the sums never saved.
fn checkpoints_continue(rows: Rows) -> bool {
    let rows = rows.0;
    for cut in 0..=rows.len() {
        let (done, rest) = rows.split_at(cut);
        let mut one = ExactSums::new();
        let mut two = ExactCoSums::new();
        let mut groups = GroupedCoSums::new();
        groups.resize(3);
        for &(g, x, y) in done {
            one.add(x);
            two.add(x, y);
            groups.add(g, x, y).unwrap();
        }
        for json in [true, false] {
            let (mut one_back, mut two_back, mut groups_back) = if json {
                (via_json(&one), via_json(&two), via_json(&groups))
            } else {
                (
                    via_postcard(&one),
                    via_postcard(&two),
                    via_postcard(&groups),
                )
            };
            let (mut one, mut two, mut groups) = (one.clone(), two.clone(), groups.clone());
            assert_eq!(one_back, one);
            assert_eq!(two_back, two);
            for &(g, x, y) in rest {
                assert_eq!(one_back.add(x), one.add(x), "{x}");
                assert_eq!(two_back.add(x, y), two.add(x, y), "{x}, {y}");
                assert_eq!(
                    groups_back.add(g, x, y),
                    groups.add(g, x, y),
                    "{g}: {x}, {y}"
                );
                assert_eq!(one_back, one);
                assert_eq!(two_back, two);
            }
            assert_eq!(
                one_back.mean().map(f64::to_bits),
                one.mean().map(f64::to_bits)
            );
            assert_eq!(one_back.m2().to_bits(), one.m2().to_bits());
            assert_eq!(two_back.comoment().to_bits(), two.comoment().to_bits());
            assert_eq!(groups_back.len(), groups.len());
            for g in 0..3 {
                assert_eq!(groups_back.sums(g), groups.sums(g), "group {g}");
            }
        }
    }
    true
}

/// 300 cases with `MOMENTA_LONG_TESTS` (CI), 60 by default: each saves
/// at every position of its rows.
#[test]
fn exact_sums_checkpoints_continue_bit_for_bit() {
    QuickCheck::new()
        .tests(crate::support::long::size(300, 60))
        .quickcheck(checkpoints_continue as fn(Rows) -> bool);
}

#[test]
fn the_bases_at_either_end_of_the_doubles_restore() {
    // The finest base (one subnormal, its one bit centred in the 94) and
    // the coarsest (2^1023 alone), and values that span the whole range.
    for xs in [
        vec![5e-324],
        vec![8.98846567431158e307],
        vec![f64::MAX, -f64::MAX],
        vec![1e-300, 5e-324],
        vec![0.0, -0.0],
    ] {
        let mut sums = ExactSums::new();
        for &x in &xs {
            assert!(sums.add(x), "{x}");
        }
        assert_eq!(via_json(&sums), sums, "{xs:?}");
        assert_eq!(via_postcard(&sums), sums, "{xs:?}");
    }
    let base = |x: f64| {
        let mut sums = ExactSums::new();
        sums.add(x);
        let json = serde_json::to_value(&sums).unwrap();
        json["base"].as_i64().unwrap()
    };
    assert_eq!(base(5e-324), -1120);
    assert_eq!(base(8.98846567431158e307), 977);
}

/// The error of restoring `json` as `T`; panics if it restores.
fn refused<T: DeserializeOwned>(json: &str) -> String {
    match serde_json::from_str::<T>(json) {
        Ok(_) => panic!("restored from a broken state: {json}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn states_no_values_could_leave_are_refused_with_the_bound_they_break() {
    let one = |count: u32, base: i32, sum: &str, squares: &str| {
        format!(r#"{{"count":{count},"base":{base},"sum":"{sum}","squares":"{squares}"}}"#)
    };
    // The state of [1, 2, 3] at base 0 reads as such.
    let ok: ExactSums = serde_json::from_str(&one(3, 0, "6", "14")).unwrap();
    assert_eq!(
        (ok.count(), ok.mean(), ok.sample_variance()),
        (3, Some(2.0), Some(1.0))
    );
    for (json, want) in [
        (
            one(0, 0, "1", "0"),
            "an empty set's base, sum and squares must be 0",
        ),
        (
            one(3, -1121, "6", "14"),
            "base must be between -1120 and 977",
        ),
        (one(3, 978, "6", "14"), "base must be between -1120 and 977"),
        (
            one(1, 0, &(1_u128 << 94).to_string(), "0"),
            "sum must be below count·2^94 in magnitude",
        ),
        (
            one(1, 0, "1", &"1".repeat(60)),
            "squares must be below count·2^188",
        ),
        (one(3, 0, "6", "11"), "squares must be at least sum²/count"),
        (
            one(1, 0, "3", "10"),
            "the squares of one value must be its sum squared",
        ),
        (
            one(2, 0, "3x", "5"),
            r#"sum must be a decimal integer, got "3x""#,
        ),
        (one(2, 0, "3", "-5"), "squares must be a decimal integer"),
        (
            one(2, 0, "3", &"9".repeat(78)),
            "squares must be a decimal integer",
        ),
    ] {
        let e = refused::<ExactSums>(&json);
        assert!(e.contains(want), "{json}: {e}");
    }
    let pair = |x: &str, y: &str, cross: &str| format!(r#"{{"x":{x},"y":{y},"cross":"{cross}"}}"#);
    // x = [1, 2, 3], y = [2, 4, 6]: Σxy = 28, correlation 1.
    let (x, y) = (one(3, 0, "6", "14"), one(3, 0, "12", "56"));
    let ok: ExactCoSums = serde_json::from_str(&pair(&x, &y, "28")).unwrap();
    assert_eq!(ok.to_covariance().correlation(), Some(1.0));
    let anti: ExactCoSums = serde_json::from_str(&pair(&x, &y, "20")).unwrap();
    assert_eq!(anti.comoment(), -4.0);
    for (json, want) in [
        (
            pair(&x, &one(2, 0, "6", "20"), "28"),
            "x and y must hold as many values, got 3 and 2",
        ),
        // Σxy = 29: a co-moment of 5 beside variances whose product is 16.
        (pair(&x, &y, "29"), "cross: "),
        (pair(&x, &y, "19"), "cross: "),
        (
            pair(&one(1, 0, "2", "4"), &one(1, 0, "3", "9"), "7"),
            "the cross sum of one pair",
        ),
        (
            pair(&one(0, 0, "0", "0"), &one(0, 0, "0", "0"), "1"),
            "an empty set's cross sum",
        ),
        (
            pair(&one(3, 0, "6", "11"), &y, "28"),
            "x.squares must be at least",
        ),
        (pair(&x, &y, "2.5"), "cross must be a decimal integer"),
    ] {
        let e = refused::<ExactCoSums>(&json);
        assert!(e.contains(want), "{json}: {e}");
    }
    let e = refused::<GroupedCoSums>(&format!(
        r#"{{"groups":[{},{}]}}"#,
        pair(&x, &y, "28"),
        pair(&x, &y, "29")
    ));
    assert!(e.contains("groups[1].cross: "), "{e}");
}
