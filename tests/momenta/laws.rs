//! The laws of `Merge` and `Accumulator`, checked with quickcheck on the
//! mergeable accumulators and their tuple bundles.

use momenta::{Accumulator, Mean, Merge, Variance};
use quickcheck::{Arbitrary, Gen, QuickCheck};

/// Cases per law: 10 000 with `MOMENTA_LONG_TESTS` (CI), 1000 by default.
/// Each case is cheap; this keeps the whole file within seconds in the
/// debug profile while still exploring widely.
fn cases() -> u64 {
    crate::support::long::size(10_000, 1000)
}

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
        .tests(cases())
        .max_tests(cases() * 10)
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

/// A slice for the bundles' slice paths, by its recipe (so that a failing
/// case prints in a line): up to three of the kernels' blocks of 65536
/// values, in a hostile layout, after a short prefix taken in first.
#[derive(Clone, Debug)]
struct Slab {
    len: usize,
    layout: u8,
    seed: u64,
    prefix: usize,
    window: usize,
}

impl Arbitrary for Slab {
    fn arbitrary(g: &mut Gen) -> Self {
        let block = 65536;
        let any = usize::from(u16::arbitrary(g)) * 3;
        let len = *g
            .choose(&[
                0,
                1,
                4097,
                block,
                block + 1,
                2 * block,
                2 * block + 7,
                3 * block,
                any,
            ])
            .unwrap_or(&0);
        Slab {
            len,
            layout: u8::arbitrary(g) % 7,
            seed: u64::arbitrary(g),
            prefix: *g.choose(&[0, 1, 5, 100]).unwrap_or(&0),
            window: *g.choose(&[1, 1000, 70_000, 300_000]).unwrap_or(&1),
        }
    }
}

impl Slab {
    /// The prefix and the slice.
    fn data(&self) -> (Vec<f64>, Vec<f64>) {
        let mut rng = crate::support::SplitMix(self.seed);
        let n = self.prefix + self.len;
        let mut xs: Vec<f64> = match self.layout {
            // Plain data, far from zero or not.
            0 => rng.vec(n, -250.5, 3.0),
            1 => rng.vec(n, 1e6, 1.0),
            // An outlier first.
            2 => {
                let mut xs = rng.vec(n, 0.0, 1.0);
                if let Some(x) = xs.get_mut(self.prefix) {
                    *x = -1e12;
                }
                xs
            }
            // A level change partway.
            3 => (0..n)
                .map(|i| if 3 * i < n { 0.0 } else { 1e8 } + rng.unit())
                .collect(),
            // Huge values, whose squares overflow.
            4 => (0..n).map(|_| 1e300 * rng.signed_unit()).collect(),
            // An outlier at the head of every 4096 values.
            5 => (0..n)
                .map(|i| if i % 4096 == 0 { 1e6 } else { rng.unit() })
                .collect(),
            // A NaN or an infinity somewhere.
            _ => {
                let mut xs = rng.vec(n, 5.0, 1.0);
                if n > 0 {
                    let at = (rng.next_u64() % n as u64) as usize;
                    xs[at] = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY][at % 3];
                }
                xs
            }
        };
        let slice = xs.split_off(self.prefix);
        (xs, slice)
    }
}

/// The bundle `($make, …)` fed `$prefix` then `$xs` through its slice
/// path, against each member fed the same alone: the same state, bit for
/// bit (the derived `Debug` prints every field's shortest round-trip
/// form).
macro_rules! as_alone {
    ($prefix:expr, $xs:expr, $($make:expr),+) => {{
        let mut bundle = ($($make,)+);
        bundle.extend_from_slice($prefix);
        bundle.extend_from_slice($xs);
        let alone = ($(
            {
                let mut m = $make;
                m.extend_from_slice($prefix);
                m.extend_from_slice($xs);
                m
            },
        )+);
        let (got, want) = (format!("{bundle:?}"), format!("{alone:?}"));
        if got != want {
            eprintln!("bundle {got}\nalone  {want}");
        }
        got == want
    }};
}

/// `<$ty>::from_slice` and `par_from_slice` against each member's own
/// `from_slice`, bit for bit.
macro_rules! built_as_alone {
    ($xs:expr, $($member:ty),+) => {{
        use momenta::FromSlice;
        let built = <($($member,)+)>::from_slice($xs);
        let par = <($($member,)+)>::par_from_slice($xs);
        let alone = ($(<$member>::from_slice($xs),)+);
        let (got, par, want) = (format!("{built:?}"), format!("{par:?}"), format!("{alone:?}"));
        if got != want || par != want {
            eprintln!("built {got}\npar   {par}\nalone {want}");
        }
        got == want && par == want
    }};
}

/// Issue 24: a bundle's `extend_from_slice` gives every member the bits
/// its own gives it (the kernels' members walked together block by block,
/// the others fed the whole slice), from empty and non-empty states, on
/// `f64` and `f32` data; a bundle of the kernels' members built by
/// `from_slice` or `par_from_slice` is its members' `from_slice`.
///
/// Each case spans up to three of the kernels' blocks of 65536 values and
/// takes a few tenths of a second in the debug profile, so the law takes
/// 100 cases (10 without `MOMENTA_LONG_TESTS`) rather than the file's
/// 10 000.
#[test]
fn bundles_give_each_member_its_own_bits() {
    use momenta::{Ema, Kurtosis, MinMax, Momentum, MovingAverage, MovingVariance, Skewness};
    fn law(s: Slab) -> bool {
        let (prefix, xs) = s.data();
        let (prefix32, xs32): (Vec<f32>, Vec<f32>) = (
            prefix.iter().map(|&x| x as f32).collect(),
            xs.iter().map(|&x| x as f32).collect(),
        );
        let w = s.window;
        let ema = || Ema::<f64>::new(Momentum::Factor(0.1)).unwrap();
        as_alone!(
            &prefix[..],
            &xs[..],
            Mean::<f64>::new(),
            Variance::<f64>::new(),
            Skewness::<f64>::new(),
            Kurtosis::<f64>::new()
        ) && as_alone!(
            &prefix32[..],
            &xs32[..],
            Kurtosis::<f64>::new(),
            MinMax::<f64>::new()
        ) && as_alone!(
            &prefix32[..],
            &xs32[..],
            Variance::<f32>::new(),
            MinMax::<f32>::new(),
            MovingAverage::<f32>::new(w).unwrap()
        ) && as_alone!(
            &prefix[..],
            &xs[..],
            MovingVariance::<f64>::new(w).unwrap(),
            Variance::<f64>::new(),
            ema(),
            MinMax::<f64>::new()
        ) && as_alone!(
            &prefix[..],
            &xs[..],
            (Mean::<f64>::new(), MinMax::<f64>::new()),
            Variance::<f64>::new()
        ) && as_alone!(
            &prefix[..],
            &xs[..],
            MovingAverage::<f64>::new(w).unwrap(),
            Variance::<f64>::new()
        ) && built_as_alone!(
            &xs[..],
            Mean<f64>,
            Variance<f64>,
            Skewness<f64>,
            Kurtosis<f64>
        ) && built_as_alone!(&xs32[..], Kurtosis<f64>, MinMax<f32>)
            && built_as_alone!(&xs32[..], (Mean<f64>, MinMax<f64>), Variance<f32>)
    }
    let cases = crate::support::long::size(100, 10);
    QuickCheck::new()
        .tests(cases)
        .max_tests(cases * 10)
        .quickcheck(law as fn(Slab) -> bool);
}
