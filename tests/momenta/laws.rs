//! The laws of `Merge` and `Accumulator`, checked with quickcheck on the
//! mergeable accumulators and their tuple bundles.

use momenta::{Accumulator, Mean, Merge, Variance};
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// Cases per law. Each case is cheap; this keeps the whole file well under a
/// second in the debug profile while still exploring widely.
const CASES: u64 = 10_000;

/// Finite data with an offset that may dwarf its spread.
#[derive(Clone, Debug)]
pub(crate) struct Data(pub(crate) Vec<f64>);

impl Arbitrary for Data {
    fn arbitrary(g: &mut Gen) -> Self {
        let offset = *g.choose(&[0.0, 1.0, -250.5, 1e6, 1e9]).unwrap_or(&0.0);
        let scale = *g.choose(&[1.0, 1e-3, 1e3]).unwrap_or(&1.0);
        let raw: Vec<i16> = Arbitrary::arbitrary(g);
        Data(
            raw.into_iter()
                .map(|k| offset + scale * f64::from(k) / 64.0)
                .collect(),
        )
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Self>> {
        Box::new(self.0.shrink().map(Data))
    }
}

/// A tolerance relative to the size of the data: merges and kernels may
/// round differently from push-by-push, by a few ulps of the magnitudes
/// involved.
fn close(a: Option<f64>, b: Option<f64>, scale: f64) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * scale.max(1e-300) || a == b,
        _ => false,
    }
}

fn magnitude(xs: &[f64]) -> f64 {
    xs.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}

fn spread(xs: &[f64]) -> f64 {
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        });
    if xs.is_empty() { 0.0 } else { hi - lo }
}

pub(crate) fn pushed<A: Accumulator<f64> + Default>(xs: &[f64]) -> A {
    let mut a = A::default();
    for &x in xs {
        a.push(x);
    }
    a
}

fn same_variance(a: &Variance<f64>, b: &Variance<f64>, xs: &[f64]) -> bool {
    let s = spread(xs);
    a.count() == b.count()
        && close(a.mean(), b.mean(), magnitude(xs))
        && close(a.population_variance(), b.population_variance(), s * s)
        && close(a.sample_variance(), b.sample_variance(), s * s)
}

fn same_mean(a: &Mean<f64>, b: &Mean<f64>, xs: &[f64]) -> bool {
    a.count() == b.count() && close(a.mean(), b.mean(), magnitude(xs))
}

pub(crate) fn check<T: quickcheck::Testable>(law: T) {
    QuickCheck::new()
        .tests(CASES)
        .max_tests(CASES * 10)
        .quickcheck(law);
}

#[test]
fn merge_equals_sequential_push() {
    fn law(a: Data, b: Data) -> bool {
        let all: Vec<f64> = a.0.iter().chain(&b.0).copied().collect();
        let mut v: Variance<f64> = pushed(&a.0);
        v.merge(&pushed(&b.0));
        let mut m: Mean<f64> = pushed(&a.0);
        m.merge(&pushed(&b.0));
        same_variance(&v, &pushed(&all), &all) && same_mean(&m, &pushed(&all), &all)
    }
    check(law as fn(Data, Data) -> bool);
}

#[test]
fn merge_is_associative() {
    fn law(a: Data, b: Data, c: Data) -> bool {
        let all: Vec<f64> = a.0.iter().chain(&b.0).chain(&c.0).copied().collect();
        let (va, vb, vc) = (
            Variance::<f64>::from_slice(&a.0),
            Variance::<f64>::from_slice(&b.0),
            Variance::<f64>::from_slice(&c.0),
        );
        let mut left = va.clone();
        left.merge(&vb);
        left.merge(&vc);
        let mut bc = vb;
        bc.merge(&vc);
        let mut right = va;
        right.merge(&bc);

        let (ma, mb, mc) = (
            Mean::<f64>::from_slice(&a.0),
            Mean::<f64>::from_slice(&b.0),
            Mean::<f64>::from_slice(&c.0),
        );
        let mut mleft = ma.clone();
        mleft.merge(&mb);
        mleft.merge(&mc);
        let mut mbc = mb;
        mbc.merge(&mc);
        let mut mright = ma;
        mright.merge(&mbc);
        same_variance(&left, &right, &all) && same_mean(&mleft, &mright, &all)
    }
    check(law as fn(Data, Data, Data) -> bool);
}

#[test]
fn empty_is_the_identity_of_merge() {
    fn law(a: Data) -> bool {
        let v = Variance::<f64>::from_slice(&a.0);
        let mut left = Variance::new();
        left.merge(&v);
        let mut right = v.clone();
        right.merge(&Variance::new());
        let m = Mean::<f64>::from_slice(&a.0);
        let mut mleft = Mean::new();
        mleft.merge(&m);
        let mut mright = m.clone();
        mright.merge(&Mean::new());
        left == v && right == v && mleft == m && mright == m
    }
    check(law as fn(Data) -> bool);
}

#[test]
fn from_slice_equals_pushing_one_by_one() {
    fn law(a: Data) -> bool {
        let mut ext = Variance::<f64>::new();
        ext.extend_from_slice(&a.0);
        same_variance(&Variance::from_slice(&a.0), &pushed(&a.0), &a.0)
            && same_variance(&ext, &pushed(&a.0), &a.0)
            && same_mean(&Mean::from_slice(&a.0), &pushed(&a.0), &a.0)
            && same_variance(&a.0.iter().collect(), &pushed(&a.0), &a.0)
    }
    check(law as fn(Data) -> bool);
}

#[test]
fn tuple_bundles_equal_their_parts() {
    fn law(a: Data, b: Data) -> bool {
        let all: Vec<f64> = a.0.iter().chain(&b.0).copied().collect();
        // Push one by one, and through the bundle's slice path, then merge.
        let mut bundle = (Mean::<f64>::new(), Variance::<f64>::new());
        for &x in &a.0 {
            bundle.push(x);
        }
        let mut other = (Mean::<f64>::new(), Variance::<f64>::new());
        other.extend_from_slice(&b.0);
        bundle.merge(&other);
        same_mean(&bundle.0, &pushed(&all), &all) && same_variance(&bundle.1, &pushed(&all), &all)
    }
    check(law as fn(Data, Data) -> bool);
}

#[test]
fn bundles_of_three_and_four_feed_every_member() {
    let xs: Vec<f64> = (0..5000).map(|i| f64::from(i % 97) - 40.0).collect();
    let mut b3 = (
        Mean::<f64>::new(),
        Variance::<f64>::new(),
        Mean::<f64>::new(),
    );
    b3.extend_from_slice(&xs);
    let mut b4 = (
        Variance::<f64>::new(),
        Mean::<f64>::new(),
        Variance::<f64>::new(),
        Mean::<f64>::new(),
    );
    for &x in &xs {
        b4.push(x);
    }
    let v = Variance::<f64>::from_slice(&xs);
    assert!(same_variance(&b3.1, &v, &xs));
    assert!(same_variance(&b4.0, &v, &xs) && same_variance(&b4.2, &v, &xs));
    assert_eq!(b3.0.count(), 5000);
    assert_eq!(b3.2.count(), 5000);
    assert_eq!(b4.3.count(), 5000);
}
