//! Values and pairs from raw bits (NaN payloads, ±∞, subnormals, MAX)
//! into `ExactSums` and `ExactCoSums`, one by one and by groups, and into
//! a `GroupedCoSums`.
//!
//! After the run: a refused value changed no reading; the count is the
//! number taken; the accepted values, taken again in reverse order (when
//! that order takes them all), read the same bits; `add_by_group` equals
//! a loop of `add`; the mean lies in [min, max] of the values taken, the
//! variances are not negative and within Popoviciu's bound (max − min)²/4,
//! `|co-moment| ≤ √(M2x·M2y)` (with room for an M2 that underflows);
//! `to_variance` and `to_covariance` restore from their parts; and on
//! values of moderate size the readings agree with `Variance` to within
//! its rounding; the groups' sums merged read as the values they took,
//! added into one set, and a refused merge changes nothing.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use momenta::{Covariance, ExactCoSums, ExactSums, GroupedCoSums, Variance};

#[derive(Arbitrary, Debug)]
struct Input {
    /// Raw bits, some of them scaled into a narrow range (the common case
    /// beside the hostile one).
    values: Vec<(u64, u64, bool)>,
    groups: u8,
}

/// A value from raw bits, or near 1e9 when `tame`.
fn value(bits: u64, tame: bool) -> f64 {
    if tame {
        1e9 + (bits >> 11) as f64 / (1_u64 << 53) as f64
    } else {
        f64::from_bits(bits)
    }
}

fn readings(s: &ExactSums) -> [u64; 4] {
    let b = |v: Option<f64>| v.map_or(u64::MAX - 1, f64::to_bits);
    [
        b(s.mean()),
        s.m2().to_bits(),
        b(s.population_variance()),
        b(s.sample_variance()),
    ]
}

fn co_readings(s: &ExactCoSums) -> [u64; 9] {
    let [a, b, c, d] = readings(s.x());
    let [e, f, g, h] = readings(s.y());
    [a, b, c, d, e, f, g, h, s.comoment().to_bits()]
}

/// Every part merged into one, in order: `None` when a merge was refused
/// (each refusal checked to change nothing).
fn merge_all<T: Clone + Default + PartialEq + core::fmt::Debug>(
    parts: &[T],
    merge: fn(&mut T, &T) -> bool,
) -> Option<T> {
    let mut merged = T::default();
    let mut all = true;
    for part in parts {
        let before = merged.clone();
        if !merge(&mut merged, part) {
            assert_eq!(merged, before, "a refused merge changed the sums");
            all = false;
        }
    }
    all.then_some(merged)
}

fuzz_target!(|input: Input| {
    let pairs: Vec<(f64, f64)> = input
        .values
        .iter()
        .map(|&(x, y, tame)| (value(x, tame), value(y, tame)))
        .collect();
    let mut sums = ExactSums::new();
    let mut co = ExactCoSums::new();
    let mut taken = Vec::new();
    let mut taken_pairs = Vec::new();
    for &(x, y) in &pairs {
        let before = readings(&sums);
        if sums.add(x) {
            assert!(x.is_finite());
            taken.push(x);
        } else {
            assert_eq!(readings(&sums), before, "a refused {x:e} changed a reading");
        }
        let before = co_readings(&co);
        if co.add(x, y) {
            assert!(x.is_finite() && y.is_finite());
            taken_pairs.push((x, y));
        } else {
            assert_eq!(co_readings(&co), before, "a refused pair changed a reading");
        }
    }
    assert_eq!(sums.count(), taken.len() as u64);
    assert_eq!(co.count(), taken_pairs.len() as u64);

    // Any order: the same bits.
    let mut again = ExactSums::new();
    if taken.iter().rev().all(|&x| again.add(x)) {
        assert_eq!(readings(&again), readings(&sums));
    }
    let mut co_again = ExactCoSums::new();
    if taken_pairs.iter().rev().all(|&(x, y)| co_again.add(x, y)) {
        assert_eq!(co_readings(&co_again), co_readings(&co));
    }

    // By groups: a loop of `add`, group by group.
    let groups = usize::from(input.groups % 4) + 1;
    let keys: Vec<usize> = (0..pairs.len()).map(|i| (i * 7 + i / 3) % groups).collect();
    let (xs, ys): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
    let mut by = vec![ExactSums::new(); groups];
    let mut one = vec![ExactSums::new(); groups];
    let mut refused = Vec::new();
    ExactSums::add_by_group(&mut by, &keys, &xs, 0..pairs.len(), |i| refused.push(i))
        .expect("rows and groups in range");
    let mut refused_one = Vec::new();
    for (i, (&g, &x)) in keys.iter().zip(&xs).enumerate() {
        if !one[g].add(x) {
            refused_one.push(i);
        }
    }
    assert_eq!(by, one);
    assert_eq!(refused, refused_one);
    let mut co_by = vec![ExactCoSums::new(); groups];
    let mut co_one = vec![ExactCoSums::new(); groups];
    ExactCoSums::add_by_group(&mut co_by, &keys, &xs, &ys, 0..pairs.len(), |_| {})
        .expect("rows and groups in range");
    let mut co_refused = Vec::new();
    for (i, (&g, (&x, &y))) in keys.iter().zip(xs.iter().zip(&ys)).enumerate() {
        if !co_one[g].add(x, y) {
            co_refused.push(i);
        }
    }
    assert_eq!(co_by, co_one);
    // The same rows in a `GroupedCoSums`, cut in two slices with one
    // `add` between.
    let mut grouped = GroupedCoSums::new();
    grouped.resize(groups);
    let mut grouped_refused = Vec::new();
    let cut = pairs.len() / 2;
    grouped
        .add_by_group(&keys, &xs, &ys, 0..cut, |i| grouped_refused.push(i))
        .expect("rows and groups in range");
    if cut < pairs.len() {
        if !grouped
            .add(keys[cut], xs[cut], ys[cut])
            .expect("a group in range")
        {
            grouped_refused.push(cut);
        }
        grouped
            .add_by_group(&keys, &xs, &ys, cut + 1..pairs.len(), |i| {
                grouped_refused.push(i)
            })
            .expect("rows and groups in range");
    }
    assert_eq!(grouped_refused, co_refused);
    assert_eq!(grouped.take_first(groups), co_one);
    // Each half of the rows in its own `GroupedCoSums`, merged, then the
    // rows once more: what a vector of `ExactCoSums` does group by group.
    let (mut first, mut second) = (GroupedCoSums::new(), GroupedCoSums::new());
    first.resize(groups);
    second.resize(groups);
    first
        .add_by_group(&keys, &xs, &ys, 0..cut, |_| {})
        .expect("rows and groups in range");
    second
        .add_by_group(&keys, &xs, &ys, cut..pairs.len(), |_| {})
        .expect("rows and groups in range");
    let (mut first_one, mut second_one) = (
        vec![ExactCoSums::new(); groups],
        vec![ExactCoSums::new(); groups],
    );
    for i in 0..pairs.len() {
        let half = if i < cut {
            &mut first_one
        } else {
            &mut second_one
        };
        half[keys[i]].add(xs[i], ys[i]);
    }
    let mut merge_refused = Vec::new();
    first.merge(&second, |g| merge_refused.push(g));
    let want: Vec<usize> = (0..groups)
        .filter(|&g| !first_one[g].merge(&second_one[g]))
        .collect();
    assert_eq!(merge_refused, want, "grouped merges refused otherwise");
    let mut again_refused = Vec::new();
    first
        .add_by_group(&keys, &xs, &ys, 0..pairs.len(), |i| again_refused.push(i))
        .expect("rows and groups in range");
    let want: Vec<usize> = (0..pairs.len())
        .filter(|&i| !first_one[keys[i]].add(xs[i], ys[i]))
        .collect();
    assert_eq!(again_refused, want, "rows after a grouped merge");
    assert_eq!(first.take_first(groups), first_one);

    // Merges: the groups' sums merged into one read as the values they
    // took, added one by one into one set (when that set takes them all);
    // a refused merge changes nothing.
    let merged = merge_all(&one, ExactSums::merge);
    let took: Vec<f64> = (0..pairs.len())
        .filter(|i| !refused_one.contains(i))
        .map(|i| xs[i])
        .collect();
    let mut whole = ExactSums::new();
    if let Some(merged) = merged
        && took.iter().all(|&x| whole.add(x))
    {
        assert_eq!(
            readings(&merged),
            readings(&whole),
            "merged sums read otherwise"
        );
    }
    let co_merged = merge_all(&co_one, ExactCoSums::merge);
    let mut co_whole = ExactCoSums::new();
    let co_took = (0..pairs.len()).filter(|i| !co_refused.contains(i));
    if let Some(co_merged) = co_merged
        && co_took.into_iter().all(|i| co_whole.add(xs[i], ys[i]))
    {
        assert_eq!(
            co_readings(&co_merged),
            co_readings(&co_whole),
            "merged pairs read otherwise"
        );
    }

    // Bounds.
    if let Some(mean) = sums.mean() {
        let lo = taken.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = taken.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert!(
            lo <= mean && mean <= hi,
            "mean {mean:e} outside [{lo:e}, {hi:e}]"
        );
        let m2 = sums.m2();
        assert!(m2 >= 0.0);
        let spread = hi - lo;
        if spread.is_finite() && spread * spread < f64::MAX / 4.0 {
            let bound = spread * spread / 4.0 * (1.0 + 1e-15) + f64::MIN_POSITIVE;
            let var = sums.population_variance().unwrap_or(0.0);
            assert!(
                var <= bound,
                "variance {var:e} beyond (max − min)²/4 = {bound:e}"
            );
        }
        let v = sums.to_variance();
        assert_eq!(v.count(), sums.count());
        assert_eq!(
            Variance::<f64>::from_parts(v.to_parts())
                .ok()
                .map(|r| r.to_parts()),
            Some(v.to_parts())
        );
        // Moderate values: the compensated accumulator agrees.
        if taken
            .iter()
            .all(|x| x.abs() < 1e100 && (*x == 0.0 || x.abs() > 1e-100))
        {
            let reference = Variance::<f64>::from_slice(&taken);
            let (a, b) = (reference.mean().unwrap(), mean);
            assert!(
                (a - b).abs() <= 1e-12 * (a.abs() + spread),
                "mean {b:e} vs {a:e}"
            );
            let (a, b) = (
                reference.population_variance().unwrap(),
                sums.population_variance().unwrap(),
            );
            assert!(
                (a - b).abs() <= 1e-9 * a + 1e-15 * spread * spread + 1e-300,
                "variance {b:e} vs {a:e}"
            );
        }
    }
    if co.count() > 1 {
        let (mx, my, c) = (co.x().m2(), co.y().m2(), co.comoment());
        if mx.is_finite() && my.is_finite() {
            // An M2 of tiny deviations underflows before the co-moment
            // does (2.9e-308 beside 3.2e-319 paired with −2.3e77: M2x is
            // 4e-616, read 0, the co-moment −3.4e-231): each M2 gets the
            // room `Covariance::from_parts` gives, the smallest normal
            // number per pair.
            let room = f64::MIN_POSITIVE * co.count() as f64;
            let bound = (mx + room).sqrt() * (my + room).sqrt() * (1.0 + 1e-15);
            assert!(
                c.abs() <= bound,
                "co-moment {c:e} beyond √(M2x·M2y) = {bound:e}"
            );
        }
        let cov = co.to_covariance();
        assert_eq!(cov.count(), co.count());
        assert!(Covariance::<f64>::from_parts(cov.to_parts()).is_ok());
        if let Some(r) = cov.correlation() {
            assert!(r.is_nan() || r.abs() <= 1.0, "correlation {r}");
        }
    }
});
