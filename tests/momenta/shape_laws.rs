//! The laws of `Merge` and `Accumulator` for `Skewness`, `Kurtosis` and
//! `MinMax`, 10 000 quickcheck cases each (1000 without
//! `MOMENTA_LONG_TESTS`), on the data of `laws.rs` (offsets up to 1e9 over
//! spreads down to 1e-3).

use crate::laws::{Data, check, pushed};
use momenta::{Kurtosis, Merge, MinMax, Skewness};

/// Skewness and kurtosis are scale-free: routes agree to 1e-9 of their
/// size (at least 1), and are `None` together.
fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0) || a == b,
        _ => false,
    }
}

fn same_shape(a: &Kurtosis<f64>, b: &Kurtosis<f64>) -> bool {
    a.count() == b.count()
        && close(a.skewness(), b.skewness())
        && close(a.sample_skewness(), b.sample_skewness())
        && close(a.kurtosis(), b.kurtosis())
        && close(a.sample_kurtosis(), b.sample_kurtosis())
}

fn same_skew(a: &Skewness<f64>, b: &Skewness<f64>) -> bool {
    a.count() == b.count()
        && close(a.skewness(), b.skewness())
        && close(a.sample_skewness(), b.sample_skewness())
}

/// MinMax is exact: the same bits on every route.
fn same_extremes(a: &MinMax<f64>, b: &MinMax<f64>) -> bool {
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    a.count() == b.count() && bits(a.min()) == bits(b.min()) && bits(a.max()) == bits(b.max())
}

#[test]
fn merge_equals_sequential_push() {
    fn law(a: Data, b: Data) -> bool {
        let all: Vec<f64> = a.0.iter().chain(&b.0).copied().collect();
        let mut k: Kurtosis<f64> = pushed(&a.0);
        k.merge(&pushed(&b.0));
        let mut s: Skewness<f64> = pushed(&a.0);
        s.merge(&pushed(&b.0));
        let mut m: MinMax<f64> = pushed(&a.0);
        m.merge(&pushed(&b.0));
        same_shape(&k, &pushed(&all))
            && same_skew(&s, &pushed(&all))
            && same_extremes(&m, &pushed(&all))
    }
    check(law as fn(Data, Data) -> bool);
}

#[test]
fn merge_is_associative() {
    fn law(a: Data, b: Data, c: Data) -> bool {
        fn both<T: Merge + Clone>(a: &T, b: &T, c: &T) -> (T, T) {
            let mut left = a.clone();
            left.merge(b);
            left.merge(c);
            let mut bc = b.clone();
            bc.merge(c);
            let mut right = a.clone();
            right.merge(&bc);
            (left, right)
        }
        let k = |d: &Data| Kurtosis::<f64>::from_slice(&d.0);
        let (kl, kr) = both(&k(&a), &k(&b), &k(&c));
        let s = |d: &Data| Skewness::<f64>::from_slice(&d.0);
        let (sl, sr) = both(&s(&a), &s(&b), &s(&c));
        let m = |d: &Data| MinMax::<f64>::from_slice(&d.0);
        let (ml, mr) = both(&m(&a), &m(&b), &m(&c));
        same_shape(&kl, &kr) && same_skew(&sl, &sr) && same_extremes(&ml, &mr)
    }
    check(law as fn(Data, Data, Data) -> bool);
}

#[test]
fn from_slice_equals_pushing_one_by_one() {
    fn law(a: Data) -> bool {
        let mut ext = Kurtosis::<f64>::new();
        ext.extend_from_slice(&a.0);
        same_shape(&Kurtosis::from_slice(&a.0), &pushed(&a.0))
            && same_shape(&ext, &pushed(&a.0))
            && same_skew(&Skewness::from_slice(&a.0), &pushed(&a.0))
            && same_extremes(&MinMax::from_slice(&a.0), &pushed(&a.0))
            && same_extremes(&a.0.iter().collect(), &pushed(&a.0))
    }
    check(law as fn(Data) -> bool);
}

#[test]
fn empty_is_the_identity_of_merge() {
    fn law(a: Data) -> bool {
        fn identity<T: Merge + Clone + Default + PartialEq>(v: &T) -> bool {
            let mut left = T::default();
            left.merge(v);
            let mut right = v.clone();
            right.merge(&T::default());
            left == *v && right == *v
        }
        identity(&Kurtosis::<f64>::from_slice(&a.0))
            && identity(&Skewness::<f64>::from_slice(&a.0))
            && identity(&MinMax::<f64>::from_slice(&a.0))
    }
    check(law as fn(Data) -> bool);
}

#[test]
fn tuple_bundles_feed_every_member() {
    fn law(a: Data) -> bool {
        use momenta::Accumulator;
        let mut bundle = (
            MinMax::<f64>::new(),
            Kurtosis::<f64>::new(),
            Skewness::<f64>::new(),
        );
        bundle.extend_from_slice(&a.0);
        same_extremes(&bundle.0, &pushed(&a.0))
            && same_shape(&bundle.1, &pushed(&a.0))
            && same_skew(&bundle.2, &pushed(&a.0))
    }
    check(law as fn(Data) -> bool);
}
