//! `Covariance` against exact rational arithmetic (values recorded from
//! Python's `fractions` and numpy on the same SplitMix data), on every
//! path; its laws with quickcheck; hostile input; checkpoints.

use crate::support::{BLOCK_F64, SplitMix, compensated_sum, rel};
use momenta::{Covariance, CovarianceParts, ErrorKind, Merge};
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// x = 1e9 + u, y = −3e6 + (u/2 + v), u and v from SplitMix(42) in turn:
/// the means are 10⁹ and 10⁷ times the spreads.
fn data() -> (Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix(42);
    (0..20_000)
        .map(|_| {
            let (u, v) = (rng.unit(), rng.unit());
            (1e9 + u, -3e6 + (0.5 * u + v))
        })
        .unzip()
}

// Exact (Python fractions, rounded once).
const POPULATION: f64 = 0.042_561_743_220_919_25;
const SAMPLE: f64 = 0.042_563_871_414_489_966;
const CORRELATION: f64 = 0.457_857_848_047_908_86;
const MEAN_X: f64 = 1_000_000_000.500_022_8;
const MEAN_Y: f64 = -2_999_999.247_583_774;
// numpy 2: np.cov(x, y)[0, 1] and np.corrcoef(x, y)[0, 1] — two-pass, so
// within 1e-13 of the exact values; momenta is closer.
const NUMPY_SAMPLE: f64 = 0.042_563_871_414_490_01;
const NUMPY_CORRELATION: f64 = 0.457_857_848_047_852_84;

fn check(c: &Covariance<f64>, tol: f64, route: &str) {
    assert_eq!(c.count(), 20_000, "{route}");
    let p = rel(c.population_covariance().unwrap(), POPULATION);
    let s = rel(c.sample_covariance().unwrap(), SAMPLE);
    let r = rel(c.correlation().unwrap(), CORRELATION);
    assert!(
        p <= tol && s <= tol && r <= tol,
        "{route}: {p:e} {s:e} {r:e}"
    );
    assert!(rel(c.mean_x().unwrap(), MEAN_X) <= 1e-16, "{route}");
    assert!(rel(c.mean_y().unwrap(), MEAN_Y) <= 1e-15, "{route}");
}

#[test]
fn every_path_keeps_the_digits_of_a_large_offset() {
    let (xs, ys) = data();
    assert!(rel(NUMPY_SAMPLE, SAMPLE) < 1e-13 && rel(NUMPY_CORRELATION, CORRELATION) < 1e-12);
    let mut pushed = Covariance::new();
    xs.iter().zip(&ys).for_each(|(&x, &y)| pushed.push(x, y));
    check(&pushed, 1e-12, "push");
    let mut merged = Covariance::new();
    for (cx, cy) in xs.chunks(777).zip(ys.chunks(777)) {
        let mut part = Covariance::new();
        cx.iter().zip(cy).for_each(|(&x, &y)| part.push(x, y));
        merged.merge(&part);
    }
    check(&merged, 1e-12, "merge");
    check(&Covariance::from_slices(&xs, &ys).unwrap(), 1e-14, "slices");
    check(
        &Covariance::par_from_slices(&xs, &ys).unwrap(),
        1e-14,
        "par",
    );
}

#[test]
fn threads_do_not_change_a_bit() {
    let (xs, ys) = data();
    let xs: Vec<f64> = xs.iter().cycle().take(300_000).copied().collect();
    let ys: Vec<f64> = ys.iter().cycle().take(300_000).copied().collect();
    let one = Covariance::<f64>::from_slices(&xs, &ys).unwrap();
    for threads in [1, 2, 16] {
        let par = crate::support::in_pool(threads, || Covariance::<f64>::par_from_slices(&xs, &ys));
        assert_eq!(par.unwrap().to_parts(), one.to_parts(), "{threads} threads");
    }
}

#[test]
fn exact_on_binary_fractions() {
    // x = k·2⁻²⁰ + 1e6, y = −(k mod 7)·2⁻¹⁰: exact integer sums in i128.
    let mut rng = SplitMix(3);
    let ks: Vec<i64> = (0..10_000).map(|_| rng.k20()).collect();
    let xs: Vec<f64> = ks.iter().map(|&k| 1e6 + k as f64 / 1048576.0).collect();
    let ys: Vec<f64> = ks
        .iter()
        .map(|&k| -((k.rem_euclid(7)) as f64) / 1024.0)
        .collect();
    let n = ks.len() as i128;
    let (mut sa, mut sb, mut sab) = (0i128, 0i128, 0i128);
    for &k in &ks {
        let (a, b) = (i128::from(k), -i128::from(k.rem_euclid(7)));
        sa += a;
        sb += b;
        sab += a * b;
    }
    // C = (n·Σab − Σa·Σb) / (n · 2^30).
    let exact = (n * sab - sa * sb) as f64 / n as f64 / 2f64.powi(30);
    let mut pushed = Covariance::new();
    xs.iter().zip(&ys).for_each(|(&x, &y)| pushed.push(x, y));
    let sliced = Covariance::<f64>::from_slices(&xs, &ys).unwrap();
    let f32s = Covariance::<f64>::from_slices(
        &xs.iter().map(|&x| (x - 1e6) as f32).collect::<Vec<_>>(),
        &ys.iter().map(|&y| y as f32).collect::<Vec<_>>(),
    )
    .unwrap();
    for (c, tol) in [(pushed, 1e-12), (sliced, 1e-14), (f32s, 1e-14)] {
        let got = c.population_covariance().unwrap() * n as f64;
        assert!(rel(got, exact) <= tol, "{got} vs {exact}");
    }
}

#[test]
fn unequal_lengths_are_an_error() {
    let e = Covariance::<f64>::from_slices(&[1.0, 2.0, 3.0], &[1.0]).unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::LengthMismatch {
            what: "ys",
            expected: 3,
            actual: 1
        }
    );
    assert!(Covariance::<f64>::par_from_slices(&[1.0], &[]).is_err());
    let mut c = Covariance::<f64>::from_slices(&[1.0], &[2.0]).unwrap();
    assert!(c.extend_from_slices(&[1.0], &[2.0, 3.0]).is_err());
    assert_eq!(c.count(), 1);
}

#[test]
fn hostile_values() {
    const MAX: f64 = f64::MAX;
    let routes = |xs: &[f64], ys: &[f64]| {
        let pushed: Covariance<f64> = xs.iter().copied().zip(ys.iter().copied()).collect();
        let mut merged = Covariance::new();
        for (&x, &y) in xs.iter().zip(ys) {
            merged.merge(&Covariance::from_slices(&[x], &[y]).unwrap());
        }
        [pushed, Covariance::from_slices(xs, ys).unwrap(), merged]
    };
    // Empty: None everywhere.
    for c in routes(&[], &[]) {
        assert_eq!(
            (c.mean_x(), c.population_covariance(), c.correlation()),
            (None, None, None)
        );
    }
    // One pair: no sample statistics, no correlation.
    for c in routes(&[1.0], &[2.0]) {
        assert_eq!(c.population_covariance(), Some(0.0));
        assert_eq!((c.sample_covariance(), c.correlation()), (None, None));
    }
    // NaN in x: x's statistics and the covariance are NaN, y's are not.
    for c in routes(&[1.0, f64::NAN, 3.0], &[1.0, 2.0, 4.0]) {
        assert!(c.mean_x().unwrap().is_nan() && c.population_covariance().unwrap().is_nan());
        assert!(c.correlation().unwrap().is_nan());
        assert!((c.sample_variance_y().unwrap() - 7.0 / 3.0).abs() < 1e-15);
    }
    // An infinity: the mean is the infinity, the co-moment NaN.
    for c in routes(&[1.0, 2.0], &[f64::INFINITY, 1.0]) {
        assert_eq!(c.mean_y(), Some(f64::INFINITY));
        assert!(c.sample_covariance().unwrap().is_nan());
    }
    // Near f64::MAX: representable means stay finite; a covariance too
    // large to represent is ±∞, never NaN.
    for (i, c) in routes(&[MAX, -MAX], &[MAX, -MAX]).iter().enumerate() {
        assert_eq!(c.mean_x(), Some(0.0), "route {i}");
        assert_eq!(c.population_covariance(), Some(f64::INFINITY), "route {i}");
    }
    for (i, c) in routes(&[MAX, -MAX], &[-MAX, MAX]).iter().enumerate() {
        assert_eq!(
            c.population_covariance(),
            Some(f64::NEG_INFINITY),
            "route {i}"
        );
    }
    // Subnormals are ordinary numbers.
    let tiny = f64::from_bits(1);
    for c in routes(&[0.0, tiny, 0.0, tiny], &[tiny, 0.0, tiny, 0.0]) {
        assert!(c.population_covariance().unwrap() <= 0.0);
    }
    // Constant y: no correlation.
    assert_eq!(routes(&[1.0, 2.0, 3.0], &[5.0; 3])[1].correlation(), None);
}

#[test]
fn outliers_first_and_at_every_block_start_keep_accuracy() {
    // An outlier at the start of every kernel block, then a level change.
    let mut rng = SplitMix(11);
    let n = 5 * BLOCK_F64;
    let mut xs: Vec<f64> = (0..n).map(|_| 1e6 + rng.unit()).collect();
    let mut ys: Vec<f64> = xs.iter().map(|x| 2.0 * x + rng.unit()).collect();
    for b in (0..n).step_by(BLOCK_F64) {
        xs[b] = 1e12;
        ys[b] = -1e12;
    }
    for y in &mut ys[3 * BLOCK_F64..] {
        *y += 1e8;
    }
    // Two-pass reference with compensated sums: small spread relative to
    // the outliers, the outliers dominate. (Plain sums of 163 840 terms
    // carry about 1e-12 of rounding themselves here.)
    let mx = compensated_sum(xs.iter().copied()) / n as f64;
    let my = compensated_sum(ys.iter().copied()) / n as f64;
    let c = compensated_sum(xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my))) / n as f64;
    let pushed: Covariance<f64> = xs.iter().copied().zip(ys.iter().copied()).collect();
    let sliced = Covariance::<f64>::from_slices(&xs, &ys).unwrap();
    for v in [pushed, sliced] {
        assert!(rel(v.population_covariance().unwrap(), c) < 1e-12, "{v:?}");
    }
}

#[test]
fn counts_near_u64_max_saturate() {
    let mut c = Covariance::<f64>::from_slices(&[1.0, 3.0], &[2.0, 6.0]).unwrap();
    for _ in 0..70 {
        let copy = c.clone();
        c.merge(&copy);
    }
    assert_eq!(c.count(), u64::MAX);
    assert!((c.population_covariance().unwrap() - 2.0).abs() < 1e-12);
    assert_eq!(c.correlation(), Some(1.0));
}

#[test]
fn parts_and_serde_round_trip_bit_for_bit() {
    let (xs, ys) = data();
    let mut live = Covariance::<f64>::new();
    xs[..5000]
        .iter()
        .zip(&ys)
        .for_each(|(&x, &y)| live.push(x, y));
    let mut restored = Covariance::from_parts(live.to_parts()).unwrap();
    #[cfg(feature = "serde")]
    let mut from_json: Covariance<f64> =
        serde_json::from_str(&serde_json::to_string(&live).unwrap()).unwrap();
    for (&x, &y) in xs[5000..].iter().zip(&ys[5000..]) {
        live.push(x, y);
        restored.push(x, y);
        #[cfg(feature = "serde")]
        from_json.push(x, y);
    }
    let part = Covariance::from_slices(&xs[..99], &ys[..99]).unwrap();
    live.merge(&part);
    restored.merge(&part);
    assert_eq!(restored.to_parts(), live.to_parts());
    #[cfg(feature = "serde")]
    {
        from_json.merge(&part);
        assert_eq!(from_json, live);
    }
    // NaN and ∞ states round-trip too.
    let nan = Covariance::<f32>::from_slices(&[1.0_f32, f32::NAN], &[2.0, f32::INFINITY]).unwrap();
    let back = Covariance::<f32>::from_parts(nan.to_parts()).unwrap();
    assert_eq!(
        back.to_parts().m2_x.to_bits(),
        nan.to_parts().m2_x.to_bits()
    );
}

#[test]
fn corrupt_parts_are_rejected_with_a_reason() {
    let good = Covariance::<f64>::from_slices(&[1.0, 2.0], &[3.0, 5.0])
        .unwrap()
        .to_parts();
    let cases = [
        (
            CovarianceParts { m2_x: -1.0, ..good },
            "m2 must be non-negative",
        ),
        (CovarianceParts { count: 0, ..good }, "count is 0"),
        (
            CovarianceParts {
                comoment: 3.0,
                ..good
            },
            "must not exceed",
        ),
        (
            CovarianceParts {
                count: 1,
                m2_x: 0.0,
                m2_y: 0.0,
                ..good
            },
            "co-moment must be 0",
        ),
    ];
    for (parts, why) in cases {
        let e = Covariance::<f64>::from_parts(parts)
            .unwrap_err()
            .to_string();
        assert!(e.contains(why), "{parts:?}: {e}");
    }
    let e = Covariance::<f32>::from_parts(CovarianceParts {
        shift_x: 0.1,
        ..good
    })
    .unwrap_err();
    assert!(e.to_string().contains("shift_x"), "{e}");
}

/// The serde form is stable: this JSON is what this version writes.
#[cfg(feature = "serde")]
#[test]
fn serde_form_is_the_committed_fixture() {
    const FIXTURE: &str = r#"{"count":3,"shift_x":"1.0","offset_x":"1.0","m2_x":"2.0","shift_y":"4.0","offset_y":"-2.0","m2_y":"8.0","comoment":"-4.0"}"#;
    const LEGACY: &str = r#"{"count":3,"shift_x":1.0,"offset_x":1.0,"m2_x":2.0,"shift_y":4.0,"offset_y":-2.0,"m2_y":8.0,"comoment":-4.0}"#;
    let c = Covariance::<f64>::from_slices(&[1.0, 2.0, 3.0], &[4.0, 2.0, 0.0]).unwrap();
    assert_eq!(serde_json::to_string(&c).unwrap(), FIXTURE);
    let back: Covariance<f64> = serde_json::from_str(FIXTURE).unwrap();
    assert_eq!(back, c);
    assert_eq!(back.correlation(), Some(-1.0));
    assert_eq!(serde_json::from_str::<Covariance<f64>>(LEGACY).unwrap(), c);
    let bad = FIXTURE.replace("\"m2_y\":\"8.0\"", "\"m2_y\":\"-8.0\"");
    assert_ne!(bad, FIXTURE);
    assert!(serde_json::from_str::<Covariance<f64>>(&bad).is_err());
}

#[derive(Clone, Debug)]
struct Pairs(Vec<(f64, f64)>);

impl Arbitrary for Pairs {
    fn arbitrary(g: &mut Gen) -> Self {
        let ox = *g.choose(&[0.0, 1.0, -250.5, 1e6, 1e9]).unwrap_or(&0.0);
        let oy = *g.choose(&[0.0, -3.0, 1e6]).unwrap_or(&0.0);
        let raw: Vec<(i16, i16)> = Arbitrary::arbitrary(g);
        Pairs(
            raw.into_iter()
                .map(|(a, b)| (ox + f64::from(a) / 64.0, oy + f64::from(b) / 16.0))
                .collect(),
        )
    }
    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(Pairs))
    }
}

fn same(a: &Covariance<f64>, b: &Covariance<f64>, p: &[(f64, f64)]) -> bool {
    let close = |p: Option<f64>, q: Option<f64>, scale: f64| match (p, q) {
        (None, None) => true,
        (Some(p), Some(q)) => p == q || (p - q).abs() <= 1e-9 * scale,
        _ => false,
    };
    let range = |f: fn(&(f64, f64)) -> f64| {
        let lo = p.iter().map(f).fold(f64::INFINITY, f64::min);
        let hi = p.iter().map(f).fold(f64::NEG_INFINITY, f64::max);
        let mag = p.iter().map(|v| f(v).abs()).fold(0.0, f64::max);
        (hi - lo, mag)
    };
    let ((sx, mx), (sy, my)) = (range(|v| v.0), range(|v| v.1));
    a.count() == b.count()
        && close(a.mean_x(), b.mean_x(), mx)
        && close(a.mean_y(), b.mean_y(), my)
        && close(
            a.population_covariance(),
            b.population_covariance(),
            sx * sy,
        )
        && close(a.sample_variance_x(), b.sample_variance_x(), sx * sx)
        && close(a.correlation(), b.correlation(), 1e3)
}

fn pushed(p: &[(f64, f64)]) -> Covariance<f64> {
    p.iter().collect()
}

fn slices(p: &[(f64, f64)]) -> Covariance<f64> {
    let (xs, ys): (Vec<f64>, Vec<f64>) = p.iter().copied().unzip();
    Covariance::from_slices(&xs, &ys).unwrap()
}

fn quick<T: quickcheck::Testable>(law: T) {
    // 10 000 cases with `MOMENTA_LONG_TESTS` (CI), 1000 by default.
    let cases = crate::support::long::size(10_000, 1000);
    QuickCheck::new()
        .tests(cases)
        .max_tests(cases * 10)
        .quickcheck(law);
}

#[test]
fn merge_equals_sequential_push() {
    fn law(a: Pairs, b: Pairs) -> bool {
        let all: Vec<_> = a.0.iter().chain(&b.0).copied().collect();
        let mut m = pushed(&a.0);
        m.merge(&pushed(&b.0));
        same(&m, &pushed(&all), &all)
    }
    quick(law as fn(Pairs, Pairs) -> bool);
}

#[test]
fn merge_is_associative_and_empty_is_its_identity() {
    fn law(a: Pairs, b: Pairs, c: Pairs) -> bool {
        let all: Vec<_> = a.0.iter().chain(&b.0).chain(&c.0).copied().collect();
        let (ca, cb, cc) = (slices(&a.0), slices(&b.0), slices(&c.0));
        let mut left = ca.clone();
        left.merge(&cb);
        left.merge(&cc);
        let mut bc = cb;
        bc.merge(&cc);
        let mut right = ca.clone();
        right.merge(&bc);
        let mut id = Covariance::new();
        id.merge(&ca);
        let mut id2 = ca.clone();
        id2.merge(&Covariance::new());
        same(&left, &right, &all) && id == ca && id2 == ca
    }
    quick(law as fn(Pairs, Pairs, Pairs) -> bool);
}

#[test]
fn from_slices_equals_pushing_and_parts_round_trip() {
    fn law(a: Pairs) -> bool {
        let p = pushed(&a.0);
        same(&slices(&a.0), &p, &a.0) && Covariance::from_parts(p.to_parts()) == Ok(p)
    }
    quick(law as fn(Pairs) -> bool);
}
