//! pandas' five `interpolation` options of a rolling quantile, bit for bit
//! on a real-looking series with ties and on a hostile one (an outlier of
//! 1e9 entering and leaving, −1e8, a level change from 1e6 to −2.5e6),
//! and every option against a naive sort on data with infinities, zeros of
//! both signs and NaN.

use crate::pandas_quantiles as pd;
use crate::support::SplitMix;
use momenta::{Interpolation, MovingQuantile, NanPolicy};

const ALL: [Interpolation; 5] = [
    Interpolation::Linear,
    Interpolation::Lower,
    Interpolation::Higher,
    Interpolation::Nearest,
    Interpolation::Midpoint,
];

/// A random walk read to the nearest 1/4 plus a reading error of 0 to 7
/// quarters: many ties in every window. The recording script's recipe
/// (Python's `round` rounds halfway to even).
pub fn real() -> Vec<f64> {
    let mut r = SplitMix(31);
    let mut walk = 0.0;
    (0..2000)
        .map(|_| {
            walk += r.signed_unit();
            20.0 + (walk * 4.0_f64).round_ties_even() / 4.0 + (r.next_u64() >> 61) as f64 * 0.25
        })
        .collect()
}

/// Values 1e6 + k/8 (k < 9, ties), then −2.5e6 + k/8 from the 1000th; an
/// outlier of 1e9 every 250 values from the 17th and of −1e8 every 333
/// from the 5th.
pub fn hostile() -> Vec<f64> {
    let mut r = SplitMix(8);
    (0..2000)
        .map(|i| {
            let level = if i < 1000 { 1e6 } else { -2.5e6 };
            let k = r.next_u64();
            let mut x = level + ((k >> 40) % 9) as f64 * 0.125;
            if i % 250 == 17 {
                x = 1e9;
            }
            if i % 333 == 5 {
                x = -1e8;
            }
            x
        })
        .collect()
}

#[test]
fn the_generators_match_the_recording_script() {
    assert_eq!(&real()[..4], &[22.0, 21.75, 21.5, 21.75]);
    assert_eq!(
        &hostile()[..4],
        &[1000000.125, 1000001.0, 1000000.875, 1000000.5]
    );
}

/// Runs a window over `xs` with each option; checks every recorded output
/// bit for bit and returns the share of outputs where each option differs
/// from `Linear`.
fn check(xs: &[f64], window: usize, q: f64, recorded: [&[f64]; 5], name: &str) -> [f64; 5] {
    let mut outputs: Vec<Vec<f64>> = Vec::new();
    for (how, want) in ALL.into_iter().zip(recorded) {
        let mut m = MovingQuantile::new(window, q)
            .unwrap()
            .with_interpolation(how);
        let got: Vec<f64> = xs.iter().map(|&x| m.push(x)).collect();
        for (k, &w) in want.iter().enumerate() {
            let i = k * pd::STEP;
            assert_eq!(
                got[i].to_bits(),
                w.to_bits(),
                "{name} window {window} q {q} {how:?} at {i}: {} vs pandas {w}",
                got[i]
            );
        }
        assert_eq!(want.len(), xs.len().div_ceil(pd::STEP));
        outputs.push(got);
    }
    let mut share = [0.0; 5];
    for (s, out) in share.iter_mut().zip(&outputs) {
        let differ = out.iter().zip(&outputs[0]).filter(|(a, b)| a != b).count();
        *s = differ as f64 / xs.len() as f64;
    }
    eprintln!("{name} window {window} q {q}: share differing from linear {share:?}");
    share
}

#[test]
fn every_interpolation_equals_pandas_bit_for_bit_on_a_series_with_ties() {
    let xs = real();
    let a = check(
        &xs,
        10,
        0.3,
        [
            &pd::R_LINEAR_10_03,
            &pd::R_LOWER_10_03,
            &pd::R_HIGHER_10_03,
            &pd::R_NEAREST_10_03,
            &pd::R_MIDPOINT_10_03,
        ],
        "real",
    );
    // pandas: 67.95 % of the outputs of lower, higher, nearest differ from
    // linear's, 67.9 % of midpoint's.
    assert_eq!(a, [0.0, 0.6795, 0.6795, 0.6795, 0.679]);
    // Rank 2.5 once full: nearest rounds to the even rank (2), midpoint is
    // linear there.
    let b = check(
        &xs,
        5,
        0.625,
        [
            &pd::R_LINEAR_5_0625,
            &pd::R_LOWER_5_0625,
            &pd::R_HIGHER_5_0625,
            &pd::R_NEAREST_5_0625,
            &pd::R_MIDPOINT_5_0625,
        ],
        "real",
    );
    assert_eq!(b, [0.0, 0.7895, 0.7895, 0.7895, 0.001]);
}

#[test]
fn every_interpolation_equals_pandas_bit_for_bit_through_outliers_and_a_level_change() {
    let xs = hostile();
    // Median of 20: rank 9.5, odd, so nearest rounds up.
    check(
        &xs,
        20,
        0.5,
        [
            &pd::H_LINEAR_20_05,
            &pd::H_LOWER_20_05,
            &pd::H_HIGHER_20_05,
            &pd::H_NEAREST_20_05,
            &pd::H_MIDPOINT_20_05,
        ],
        "hostile",
    );
    check(
        &xs,
        7,
        0.25,
        [
            &pd::H_LINEAR_7_025,
            &pd::H_LOWER_7_025,
            &pd::H_HIGHER_7_025,
            &pd::H_NEAREST_7_025,
            &pd::H_MIDPOINT_7_025,
        ],
        "hostile",
    );
}

/// The naive quantile under `how`: sort the non-NaN values (−0 below +0),
/// rank `q·(m − 1)`, pick or interpolate; towards an infinity, the limit.
pub(crate) fn naive(window: &[f64], q: f64, how: Interpolation) -> Option<f64> {
    let mut v: Vec<f64> = window.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let h = q * (v.len() - 1) as f64;
    let i = h.floor() as usize;
    let frac = h - i as f64;
    if frac == 0.0 {
        return Some(v[i]);
    }
    let (lo, hi) = (v[i], v[i + 1]);
    Some(match how {
        Interpolation::Lower => lo,
        Interpolation::Higher => hi,
        Interpolation::Nearest if frac < 0.5 || (frac == 0.5 && i.is_multiple_of(2)) => lo,
        Interpolation::Nearest => hi,
        Interpolation::Midpoint if (lo + hi).is_finite() || !(lo.is_finite() && hi.is_finite()) => {
            (lo + hi) / 2.0
        }
        Interpolation::Midpoint => lo / 2.0 + hi / 2.0,
        _ => match (lo.is_finite(), hi.is_finite()) {
            (true, true) if (hi - lo).is_finite() => lo + (hi - lo) * frac,
            (true, true) => lo * (1.0 - frac) + hi * frac,
            _ => lo + hi,
        },
    })
}

pub(crate) fn bits(x: Option<f64>) -> Option<u64> {
    x.map(|x| {
        if x.is_nan() {
            f64::NAN.to_bits()
        } else {
            x.to_bits()
        }
    })
}

#[test]
fn every_interpolation_follows_a_naive_sort_on_hostile_data() {
    let mut r = SplitMix(41);
    let specials = [
        1e9,
        -1e8,
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MAX,
        -f64::MAX,
        1.0,
    ];
    let xs: Vec<f64> = (0..3000)
        .map(|i| {
            let k = r.next_u64();
            if i % 400 < 10 {
                f64::NAN
            } else if k.is_multiple_of(6) {
                specials[(k >> 8) as usize % specials.len()]
            } else {
                ((k >> 40) % 5) as f64 - 2.0
            }
        })
        .collect();
    let mut checked = 0;
    for (window, q) in [
        (1, 0.5),
        (2, 0.5),
        (4, 0.5),
        (5, 0.125),
        (9, 0.3),
        (30, 0.9),
        // Past 32 the sorted array finds places by binary search.
        (33, 0.5),
        (100, 0.77),
    ] {
        for how in ALL {
            for policy in [NanPolicy::Propagate, NanPolicy::Skip] {
                let mut m = MovingQuantile::new(window, q)
                    .unwrap()
                    .with_interpolation(how)
                    .with_nan_policy(policy);
                for (i, &x) in xs.iter().enumerate() {
                    let pushed = m.push(x);
                    let w = &xs[(i + 1).saturating_sub(window)..=i];
                    let want = if policy == NanPolicy::Propagate && w.iter().any(|x| x.is_nan()) {
                        Some(f64::NAN)
                    } else {
                        naive(w, q, how)
                    };
                    assert_eq!(
                        bits(m.quantile()),
                        bits(want),
                        "{how:?} q {q} at {i} of {w:?}"
                    );
                    assert_eq!(bits(Some(pushed)), bits(Some(want.unwrap_or(f64::NAN))));
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 8 * 5 * 2 * 3000);
}

#[cfg(feature = "serde")]
#[test]
fn the_interpolation_is_saved_and_older_states_read_linear() {
    let mut m = MovingQuantile::new(4, 0.5)
        .unwrap()
        .with_interpolation(Interpolation::Nearest);
    m.extend_from_slice(&[1.0, 2.0, 3.0, 4.0]);
    let json = serde_json::to_string(&m).unwrap();
    assert!(json.contains(r#""interpolation":"Nearest""#), "{json}");
    let back: MovingQuantile<f64> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, m);
    assert_eq!(back.quantile(), Some(3.0)); // rank 1.5: odd, up
    let old: MovingQuantile<f64> =
        serde_json::from_str(r#"{"window":4,"q":0.5,"values":[1.0,2.0,3.0,4.0]}"#).unwrap();
    assert_eq!(old.interpolation(), Interpolation::Linear);
    assert_eq!(old.quantile(), Some(2.5));
}
