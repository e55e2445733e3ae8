//! `ExactSums`: mean and variance against exact rational arithmetic, the
//! same bits in any order, refusals that change nothing.

use momenta::{ExactCoSums, ExactSums, GroupedCoSums, Merge, Variance};
use std::sync::atomic::{AtomicUsize, Ordering};

use quickcheck::{QuickCheck, TestResult};

use crate::support::SplitMix;

fn sums_of(xs: &[f64]) -> (ExactSums, usize) {
    let mut s = ExactSums::new();
    let taken = xs.iter().filter(|&&x| s.add(x)).count();
    (s, taken)
}

/// The readouts, as bits (NaN-free: `None` as a sentinel).
fn bits(s: &ExactSums) -> [u64; 4] {
    let b = |v: Option<f64>| v.map_or(u64::MAX, f64::to_bits);
    [
        b(s.mean()),
        s.m2().to_bits(),
        b(s.population_variance()),
        b(s.sample_variance()),
    ]
}

/// `p / q` rounded twice (p and q) and divided: within 1.5 ε of exact.
fn ratio(p: i128, q: i128) -> f64 {
    p as f64 / q as f64
}

fn within_eps(got: f64, want: f64, eps: f64) -> bool {
    (got - want).abs() <= eps * f64::EPSILON * want.abs()
}

#[test]
fn the_variance_of_a_large_offset_is_exact_to_an_epsilon() {
    // x = (2^50 + k)/2^20, k < 2^20: about 1.07e9 + U(0, 1), where a float
    // accumulator cancels 30 of its 53 bits. Exactly, with K = Σk, and
    // K2 = Σk²: M2 = (n·K2 − K²)/(n·2^40).
    let mut rng = SplitMix(0x5eed_e8ac);
    for n in [2_usize, 3, 10, 1000, 100_000] {
        let ks: Vec<i128> = (0..n).map(|_| i128::from(rng.next_u64() >> 44)).collect();
        let xs: Vec<f64> = ks
            .iter()
            .map(|&k| ((1_i128 << 50) + k) as f64 / 1_048_576.0)
            .collect();
        let (s, taken) = sums_of(&xs);
        assert_eq!(taken, n);
        let (nn, sk, sk2) = (
            n as i128,
            ks.iter().sum::<i128>(),
            ks.iter().map(|k| k * k).sum::<i128>(),
        );
        let m2 = ratio(nn * sk2 - sk * sk, nn << 40);
        // The reference is within 1.5 ε, the sums within ε.
        assert!(within_eps(s.m2(), m2, 2.5), "n {n}: {} vs {m2}", s.m2());
        let var = ratio(nn * sk2 - sk * sk, (nn * nn) << 40);
        assert!(within_eps(s.population_variance().unwrap(), var, 2.5));
        // The mean, correctly rounded: within half an ulp of 2^30 +
        // K/(n·2^20), whose float form is within one.
        let mean = (1_u64 << 30) as f64 + ratio(sk, nn << 20);
        let ulp = 2.0_f64.powi(-22);
        assert!((s.mean().unwrap() - mean).abs() <= ulp, "n {n}");
        // The textbook formula in floats is far from it: the test can tell
        // exact sums from rounded ones.
        if n >= 1000 {
            let textbook = xs.iter().map(|x| x * x).sum::<f64>() / n as f64
                - (xs.iter().sum::<f64>() / n as f64).powi(2);
            assert!(!within_eps(textbook, var, 2.5));
        }
    }
}

#[test]
fn values_near_zero_after_larger_ones_move_the_scale_down() {
    // 1, 2^-40, 2^-60: at the scale 1 set, 2^-60 is too fine; the sums
    // move down and hold all three exactly. With k = x·2^60:
    // M2 = (3·Σk² − (Σk)²)/(3·2^120).
    let xs = [1.0, 2.0_f64.powi(-40), 2.0_f64.powi(-60)];
    let (s, taken) = sums_of(&xs);
    assert_eq!(taken, 3);
    let ks = [1_i128 << 60, 1 << 20, 1];
    let sk: i128 = ks.iter().sum();
    let sk2: i128 = ks.iter().map(|k| k * k).sum();
    let m2 = ratio(3 * sk2 - sk * sk, 3) / 2.0_f64.powi(120);
    assert!(within_eps(s.m2(), m2, 2.5));
    // Normal data then small values: all taken, none refused.
    let mut rng = SplitMix(7);
    let mut s = ExactSums::new();
    for i in 0..10_000 {
        let u = rng.signed_unit();
        let x = if i % 97 == 0 { u * 1e-9 } else { u };
        assert!(s.add(x), "value {i}: {x}");
    }
}

#[test]
fn what_is_refused_changes_nothing() {
    let (mut s, _) = sums_of(&[1e-300, 2e-300, 3e-300]);
    let before = bits(&s);
    for x in [
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        1.0,
    ] {
        assert!(!s.add(x), "{x}");
        assert_eq!(bits(&s), before, "{x}");
        assert_eq!(s.count(), 3);
    }
    // An empty set refuses what is not finite, and takes any finite value.
    let mut e = ExactSums::new();
    assert!(!e.add(f64::NAN));
    assert!(!e.add(f64::INFINITY));
    assert_eq!(e.count(), 0);
    assert!(e.add(f64::MAX) && e.add(f64::MAX));
    assert_eq!(e.mean(), Some(f64::MAX));
    assert_eq!(e.m2(), 0.0);
    let mut tiny = ExactSums::new();
    assert!(tiny.add(5e-324) && tiny.add(-5e-324));
    assert_eq!(tiny.mean(), Some(0.0));
}

#[test]
fn variances_are_correctly_rounded() {
    // 0, 1, 1: M2 = 2/3, the variances 2/9 and 1/3, each correctly
    // rounded (as a division of two small integers in f64 is).
    let (s, _) = sums_of(&[0.0, 1.0, 1.0]);
    assert_eq!(s.m2(), 2.0 / 3.0);
    assert_eq!(s.population_variance(), Some(2.0 / 9.0));
    assert_eq!(s.sample_variance(), Some(1.0 / 3.0));
    assert_eq!(s.mean(), Some(2.0 / 3.0));
    // Shifted far from zero, the same values give the same bits.
    let (t, _) = sums_of(&[1e15, 1e15 + 1.0, 1e15 + 1.0]);
    assert_eq!(t.population_variance(), Some(2.0 / 9.0));
    let mut c = momenta::ExactCoSums::new();
    for (x, y) in [(0.0, 0.0), (1.0, 2.0), (1.0, 1.0)] {
        assert!(c.add(1e15 + x, y));
    }
    // Σ(x − x̄)(y − ȳ) = (−2/3)(−1) + (1/3)(1) + (1/3)(0) = 1.
    assert_eq!(c.comoment(), 1.0);
}

#[test]
fn readouts_without_values_are_none() {
    let s = ExactSums::new();
    assert_eq!(s.mean(), None);
    assert_eq!(s.population_variance(), None);
    assert_eq!(s.sample_variance(), None);
    assert_eq!(s.m2(), 0.0);
    let (one, _) = sums_of(&[4.5]);
    assert_eq!(one.population_variance(), Some(0.0));
    assert_eq!(one.sample_variance(), None);
    assert_eq!(one.to_variance().count(), 1);
    assert_eq!(one.to_variance().mean(), Some(4.5));
}

/// Hostile mixtures: an outlier first, a level change, near-zero values,
/// repeated values, signs.
fn hostile(seed: u64, n: usize) -> Vec<f64> {
    let mut rng = SplitMix(seed);
    let level = [1e9, -3.0, 1e-7, 0.0][(seed % 4) as usize];
    (0..n)
        .map(|i| {
            let u = rng.signed_unit();
            match (seed as usize).wrapping_add(i) % 7 {
                0 if i == 0 => 1e15,
                1 => level + u,
                2 => (level + 1.0) * 1e3,
                3 => u * 1e-4 * (level.abs() + 1.0),
                _ => level + u * 1e-3,
            }
        })
        .collect()
}

#[test]
fn any_order_gives_the_same_bits() {
    fn law(seed: u64, n: u8) -> TestResult {
        let xs = hostile(seed, usize::from(n) + 1);
        let (a, ta) = sums_of(&xs);
        let mut rev = xs.clone();
        rev.reverse();
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        let (b, tb) = sums_of(&rev);
        let (c, tc) = sums_of(&sorted);
        if ta != xs.len() || tb != xs.len() || tc != xs.len() {
            return TestResult::discard();
        }
        COMPARED.fetch_add(1, Ordering::Relaxed);
        TestResult::from_bool(bits(&a) == bits(&b) && bits(&a) == bits(&c))
    }
    static COMPARED: AtomicUsize = AtomicUsize::new(0);
    QuickCheck::new()
        .tests(300)
        .max_tests(3000)
        .quickcheck(law as fn(u64, u8) -> TestResult);
    // Most mixtures fit whole: the law was checked, not discarded.
    assert!(COMPARED.load(Ordering::Relaxed) >= 300);
}

#[test]
fn to_variance_merges_with_the_values_kept_another_way() {
    // The exact part and a refused value's Variance, merged: the variance
    // of all of them, to the accuracy of one Chan merge.
    let xs = [1e-200, 3e-200, 2e-200];
    let (mut s, taken) = sums_of(&xs);
    assert_eq!(taken, 3);
    assert!(!s.add(1e100));
    let mut all = s.to_variance();
    all.merge(&Variance::from_slice(&[1e100]));
    let mean = 1e100 / 4.0;
    let m2 = 3.0 * mean * mean + (1e100 - mean) * (1e100 - mean);
    assert!(within_eps(all.mean().unwrap(), mean, 2.0));
    assert!(within_eps(
        all.population_variance().unwrap(),
        m2 / 4.0,
        8.0
    ));
}

#[test]
fn to_variance_keeps_what_rounding_took_off_the_mean() {
    // 1, 1, 1 + 2ε: the mean 1 + 2ε/3 rounds to 1 + ε; the offset holds
    // the −ε/3 rounding took off, so shift + offset is the mean to ~106
    // bits (merges of partitions' states turn on the means' differences).
    let (s, _) = sums_of(&[1.0, 1.0, 1.0 + 2.0 * f64::EPSILON]);
    let parts = s.to_variance().to_parts();
    assert_eq!(parts.count, 3);
    assert_eq!(parts.shift, 1.0 + f64::EPSILON);
    assert_eq!(parts.offset, -f64::EPSILON / 3.0);
    // A mean that rounds to 0, and one finer than the values' scale.
    let (z, _) = sums_of(&[1e-300, -1e-300]);
    assert_eq!(
        (
            z.to_variance().to_parts().shift,
            z.to_variance().to_parts().offset
        ),
        (0.0, 0.0)
    );
    let (f, _) = sums_of(&[3.0, 0.0, 0.0]);
    let p = f.to_variance().to_parts();
    assert_eq!(p.shift, 1.0);
    assert_eq!(p.offset, 0.0);
    let (t, _) = sums_of(&[1.0, 0.0, 0.0]);
    let p = t.to_variance().to_parts();
    assert_eq!(p.shift, 1.0 / 3.0);
    // fl(1/3) = (2^54 − 1)/(3·2^54): 1/3 − fl(1/3) = 2^-54/3 = ε/12.
    assert_eq!(p.offset, f64::EPSILON / 12.0);
}

#[test]
fn add_by_group_equals_adding_row_by_row() {
    // 5000 groups (320 KB of sums: the loop asks ahead) and 8 (it does
    // not), rows of hostile values, every other row taken: each group's
    // sums and the refused rows are those of a loop of `add`.
    let mut rng = SplitMix(0xb1);
    for groups_n in [8_usize, 5000] {
        let n = 40_000;
        let groups: Vec<usize> = (0..n)
            .map(|_| (rng.next_u64() as usize) % groups_n)
            .collect();
        let mut xs = hostile(rng.next_u64(), n);
        for x in xs.iter_mut().step_by(998) {
            *x = f64::NAN;
        }
        xs[4] = 1e300;
        let ys: Vec<f64> = xs.iter().map(|x| x * 0.5 + 1.0).collect();
        let rows = (0..n).step_by(2);
        let (mut by, mut one) = (
            vec![ExactSums::new(); groups_n],
            vec![ExactSums::new(); groups_n],
        );
        let mut refused = Vec::new();
        ExactSums::add_by_group(&mut by, &groups, &xs, rows.clone(), |i| refused.push(i)).unwrap();
        let mut refused_one = Vec::new();
        for i in rows.clone() {
            if !one[groups[i]].add(xs[i]) {
                refused_one.push(i);
            }
        }
        assert_eq!(by, one);
        assert!(refused.len() >= 20, "{}", refused.len());
        assert_eq!(refused, refused_one);
        let mut by2 = vec![ExactCoSums::new(); groups_n];
        let mut one2 = vec![ExactCoSums::new(); groups_n];
        let mut refused2 = Vec::new();
        ExactCoSums::add_by_group(&mut by2, &groups, &xs, &ys, rows.clone(), |i| {
            refused2.push(i)
        })
        .unwrap();
        let mut refused_one2 = Vec::new();
        for i in rows.clone() {
            if !one2[groups[i]].add(xs[i], ys[i]) {
                refused_one2.push(i);
            }
        }
        assert_eq!(by2, one2);
        assert_eq!(refused2, refused_one2);
        let mut grouped = GroupedCoSums::new();
        grouped.resize(groups_n);
        let mut refused3 = Vec::new();
        grouped
            .add_by_group(&groups, &xs, &ys, rows.clone(), |i| refused3.push(i))
            .unwrap();
        assert_eq!(refused3, refused_one2);
        assert_eq!(grouped.take_first(groups_n), one2);
    }
    // Out of range: an error, the rows before it taken.
    let mut sums = vec![ExactSums::new(); 2];
    let err = ExactSums::add_by_group(&mut sums, &[0, 5, 1], &[1.0, 2.0, 3.0], 0..3, |_| {});
    assert!(err.is_err());
    assert_eq!((sums[0].count(), sums[1].count()), (1, 0));
    assert!(ExactSums::add_by_group(&mut sums, &[0], &[1.0], 0..2, |_| {}).is_err());
}

/// A loop of `ExactCoSums::add` into one vector, and `GroupedCoSums` fed
/// the same rows (in slices cut at `cuts`, with single `add`s between):
/// the same sums group by group, the same rows refused.
fn check_grouped(groups_n: usize, keys: &[usize], xs: &[f64], ys: &[f64], cuts: &[usize]) {
    let mut one = vec![ExactCoSums::new(); groups_n];
    let mut refused_one = Vec::new();
    for i in 0..keys.len() {
        if !one[keys[i]].add(xs[i], ys[i]) {
            refused_one.push(i);
        }
    }
    let mut grouped = GroupedCoSums::new();
    grouped.resize(groups_n);
    let mut refused = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain([&keys.len()]) {
        let cut = cut.clamp(start, keys.len());
        grouped
            .add_by_group(keys, xs, ys, start..cut, |i| refused.push(i))
            .unwrap();
        if cut < keys.len() {
            if !grouped.add(keys[cut], xs[cut], ys[cut]).unwrap() {
                refused.push(cut);
            }
            start = cut + 1;
        } else {
            start = cut;
        }
    }
    assert_eq!(refused, refused_one);
    for (g, want) in one.iter().enumerate() {
        let got = grouped.sums(g).unwrap();
        assert_eq!(&got, want, "group {g}");
        assert_eq!(got.comoment().to_bits(), want.comoment().to_bits());
    }
    assert_eq!(grouped.take_first(groups_n), one);
    assert!(grouped.is_empty());
}

#[test]
fn grouped_co_sums_are_a_loop_of_exact_co_sums() {
    let mut rng = SplitMix(0x9c0);
    // Calm data (every row on the narrow grids), hostile data (outliers,
    // level changes, zeros, NaN), values straddling a binade, a level
    // falling by a factor of 2^20 halfway, and values of every binade.
    for case in 0..5 {
        for groups_n in [1_usize, 7, 3000] {
            let n = 30_000;
            let keys: Vec<usize> = (0..n)
                .map(|_| (rng.next_u64() as usize) % groups_n)
                .collect();
            let xs: Vec<f64> = match case {
                0 => (0..n).map(|_| 1e9 + rng.unit()).collect(),
                1 => {
                    let mut xs = hostile(rng.next_u64(), n);
                    for x in xs.iter_mut().step_by(613) {
                        *x = f64::NAN;
                    }
                    xs[7] = f64::INFINITY;
                    xs
                }
                2 => (0..n).map(|_| 1.0 + 0.01 * rng.signed_unit()).collect(),
                3 => (0..n)
                    .map(|i| {
                        let level = if i < n / 2 { 1.0 } else { 2f64.powi(-20) };
                        level * (1.0 + rng.unit())
                    })
                    .collect(),
                _ => (0..n)
                    .map(|_| rng.signed_unit() * 2f64.powi((rng.next_u64() % 200) as i32 - 100))
                    .collect(),
            };
            let ys: Vec<f64> = xs
                .iter()
                .map(|x| -3.0 * x + rng.signed_unit() * 1e-3)
                .collect();
            check_grouped(groups_n, &keys, &xs, &ys, &[5, 4000, 4001, 17_000]);
        }
    }
}

#[test]
fn grouped_co_sums_keep_long_runs_exact() {
    // One group: 2^15 rows fill the narrow sums, which then move into the
    // wide ones. The first value (near 2^52) sets the grid at 2^-2; a
    // third of the rows are a binade up, near 2^54: 2^56 − 8 on the grid,
    // the most it takes, so the 128-bit sums of squares come within a
    // few parts in 2^15 of 2^127.
    let n = 3 * (1 << 15) + 123;
    let keys = vec![0; n];
    let mut rng = SplitMix(0x51);
    let xs: Vec<f64> = (0..n)
        .map(|i| {
            if i % 3 == 1 {
                -(2f64.powi(54) - 2.0)
            } else {
                2f64.powi(52) + (rng.next_u64() >> 12) as f64
            }
        })
        .collect();
    let ys: Vec<f64> = xs.iter().map(|x| x * 0.75).collect();
    check_grouped(1, &keys, &xs, &ys, &[1 << 15, (1 << 15) + 1]);
}

#[test]
fn grouped_co_sums_check_their_groups() {
    let mut grouped = GroupedCoSums::new();
    grouped.resize(2);
    assert!(grouped.add(2, 1.0, 1.0).is_err());
    let err = grouped.add_by_group(&[0, 5, 1], &[1.0, 2.0, 3.0], &[1.0; 3], 0..3, |_| {});
    assert!(err.is_err());
    assert_eq!(grouped.sums(0).map(|s| s.count()), Some(1));
    assert_eq!(grouped.sums(1).map(|s| s.count()), Some(0));
    // A row past the columns.
    assert!(
        grouped
            .add_by_group(&[0, 0], &[1.0], &[1.0], 0..2, |_| {})
            .is_err()
    );
    assert_eq!(grouped.sums(0).map(|s| s.count()), Some(2));
    assert_eq!(grouped.sums(2), None);
}

#[test]
fn grouped_co_sums_law_is_the_row_by_row_loop() {
    // Random data of every kind `hostile` makes, random group counts and
    // cut points: the same sums and refusals as a loop of `add`.
    fn law(seed: u64, groups: u8, n: u16, cut: u16) -> bool {
        let groups = usize::from(groups % 12) + 1;
        let n = usize::from(n % 3000) + 1;
        let mut rng = SplitMix(seed);
        let keys: Vec<usize> = (0..n).map(|_| (rng.next_u64() as usize) % groups).collect();
        let xs = hostile(seed, n);
        let ys: Vec<f64> = hostile(seed.rotate_left(17), n)
            .iter()
            .zip(&xs)
            .map(|(y, x)| if seed.is_multiple_of(3) { 2.0 * x } else { *y })
            .collect();
        check_grouped(groups, &keys, &xs, &ys, &[usize::from(cut) % n]);
        true
    }
    QuickCheck::new()
        .tests(200)
        .quickcheck(law as fn(u64, u8, u16, u16) -> bool);
}

/// Rows of one chunk for the grouped merges: keys below `groups`, and
/// values of the `kind` (of 5), so that merging moves the bases both
/// ways.
fn merge_chunk(seed: u64, kind: u64, groups: usize, n: usize) -> (Vec<usize>, Vec<f64>, Vec<f64>) {
    let mut rng = SplitMix(seed);
    let keys = (0..n).map(|_| (rng.next_u64() as usize) % groups).collect();
    let xs: Vec<f64> = match kind % 5 {
        // Calm rows at two levels: 1e9 and 2^-30 are too far apart
        // for one set (a refused merge); 2^-30 against the hostile
        // mixtures' levels (-3, 1e-7) lowers their base.
        0 => (0..n).map(|_| 1e9 + rng.unit()).collect(),
        1 => (0..n)
            .map(|_| 2f64.powi(-30) * (1.0 + rng.unit()))
            .collect(),
        // Zeros, which take any base.
        2 => vec![0.0; n],
        // Values too far from the others for one set: refused merges.
        3 => (0..n).map(|_| 1e300 * (1.0 + rng.unit())).collect(),
        _ => hostile(seed, n),
    };
    let ys = xs
        .iter()
        .map(|x| 0.5 * x + rng.signed_unit() * x.abs() * 1e-3)
        .collect();
    (keys, xs, ys)
}

/// Three chunks' `GroupedCoSums` merged in order read as a vector of
/// `ExactCoSums` merged group by group (the same sums, the same groups
/// refused), and then take a fourth chunk's rows as that vector does:
/// the same rows refused, the same sums. The chunks' kinds are the
/// base-5 digits of `kinds`.
fn check_grouped_merge(seed: u64, kinds: u64, lens: [usize; 4], n: usize) {
    let chunks: Vec<_> = (0..4)
        .map(|k| {
            let kind = kinds / 5_u64.pow(k as u32);
            merge_chunk(seed.wrapping_add(k as u64 * 0x9e37), kind, lens[k], n)
        })
        .collect();
    let mut grouped = Vec::new();
    let mut vectors = Vec::new();
    for (k, (keys, xs, ys)) in chunks.iter().take(3).enumerate() {
        let mut g = GroupedCoSums::new();
        g.resize(lens[k]);
        g.add_by_group(keys, xs, ys, 0..n, |_| {}).unwrap();
        let mut v = vec![ExactCoSums::new(); lens[k]];
        for i in 0..n {
            v[keys[i]].add(xs[i], ys[i]);
        }
        grouped.push(g);
        vectors.push(v);
    }
    let mut g = grouped[0].clone();
    let mut v = vectors[0].clone();
    for k in 1..3 {
        let mut refused = Vec::new();
        g.merge(&grouped[k], |group| refused.push(group));
        if v.len() < lens[k] {
            v.resize(lens[k], ExactCoSums::new());
        }
        let want: Vec<usize> = (0..lens[k])
            .filter(|&group| !v[group].merge(&vectors[k][group]))
            .collect();
        assert_eq!(refused, want, "seed {seed}, chunk {k}");
        assert_eq!(g.len(), v.len());
        for (group, sums) in v.iter().enumerate() {
            assert_eq!(
                g.sums(group).as_ref(),
                Some(sums),
                "seed {seed}, group {group}"
            );
        }
    }
    // Rows after the merges: onto grids that had to follow the bases.
    let (keys, xs, ys) = &chunks[3];
    let keys: Vec<usize> = keys.iter().map(|k| k % v.len()).collect();
    let mut refused = Vec::new();
    g.add_by_group(&keys, xs, ys, 0..n, |i| refused.push(i))
        .unwrap();
    let want: Vec<usize> = (0..n).filter(|&i| !v[keys[i]].add(xs[i], ys[i])).collect();
    assert_eq!(refused, want, "seed {seed}, after the merges");
    assert_eq!(g.take_first(v.len()), v, "seed {seed}, after the merges");
}

#[test]
fn grouped_co_sums_merge_as_their_groups_do() {
    fn law(seed: u64, lens: (u8, u8, u8, u8), n: u16) -> bool {
        let len = |l: u8| usize::from(l % 9) + 1;
        let lens = [len(lens.0), len(lens.1), len(lens.2), len(lens.3)];
        check_grouped_merge(seed, seed >> 32, lens, usize::from(n % 400));
        true
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(law as fn(u64, (u8, u8, u8, u8), u16) -> bool);
    // Every kind of chunk after every other, and the rows after them.
    for kinds in 0..625 {
        check_grouped_merge(kinds * 31, kinds, [3, 5, 2, 4], 300);
    }
}

/// Sums that merge: built from a chunk (with how many values they
/// took), merged, and read as bits.
trait Merged: Clone + PartialEq + std::fmt::Debug {
    type Value: Clone;
    type Read: PartialEq;
    fn of(chunk: &[Self::Value]) -> (Self, usize);
    fn merge_in(&mut self, other: &Self) -> bool;
    fn read(&self) -> Self::Read;
    fn size(&self) -> u64;
}

impl Merged for ExactSums {
    type Value = f64;
    type Read = [u64; 4];
    fn of(chunk: &[f64]) -> (Self, usize) {
        sums_of(chunk)
    }
    fn merge_in(&mut self, other: &Self) -> bool {
        self.merge(other)
    }
    fn read(&self) -> [u64; 4] {
        bits(self)
    }
    fn size(&self) -> u64 {
        self.count()
    }
}

impl Merged for ExactCoSums {
    type Value = (f64, f64);
    type Read = [u64; 9];
    fn of(pairs: &[(f64, f64)]) -> (Self, usize) {
        let mut s = ExactCoSums::new();
        let taken = pairs.iter().filter(|&&(x, y)| s.add(x, y)).count();
        (s, taken)
    }
    fn merge_in(&mut self, other: &Self) -> bool {
        self.merge(other)
    }
    fn read(&self) -> [u64; 9] {
        let [a, b, c, d] = bits(self.x());
        let [e, f, g, h] = bits(self.y());
        [a, b, c, d, e, f, g, h, self.comoment().to_bits()]
    }
    fn size(&self) -> u64 {
        self.count()
    }
}

/// The law for three chunks: merged in order and as a tree, the sums read
/// alike, and as the values added one by one into one set when every
/// value fits it (else discarded); a refused merge changes nothing.
/// Counts the cases compared in `compared`.
fn merge_law<S: Merged>(chunks: &[Vec<S::Value>; 3], compared: &AtomicUsize) -> TestResult {
    fn merged<S: Merged>(s: &mut S, other: &S) -> bool {
        let before = s.clone();
        let ok = s.merge_in(other);
        assert!(ok || *s == before, "a refused merge changed the sums");
        ok
    }
    let parts: Vec<(S, usize)> = chunks.iter().map(|c| S::of(c)).collect();
    let all: Vec<S::Value> = chunks.concat();
    let (one, taken) = S::of(&all);
    let (a, b, c) = (&parts[0].0, &parts[1].0, &parts[2].0);
    let mut left = a.clone();
    let left_ok = merged(&mut left, b) && merged(&mut left, c);
    let mut bc = b.clone();
    let mut right = a.clone();
    let right_ok = merged(&mut bc, c) && merged(&mut right, &bc);
    if left_ok && right_ok && left.read() != right.read() {
        return TestResult::failed();
    }
    let every_part_whole = parts.iter().zip(chunks).all(|(p, c)| p.1 == c.len());
    if !(left_ok && every_part_whole && taken == all.len()) {
        return TestResult::discard();
    }
    compared.fetch_add(1, Ordering::Relaxed);
    TestResult::from_bool(left.read() == one.read() && left.size() == one.size())
}

/// Checks [`merge_law`] on 500 cases of three chunks that `chunk` draws
/// (from a seed and a size), of which at least 300 must be compared.
fn check_merges<S: Merged>(chunk: fn(u64, u8) -> Vec<S::Value>) {
    let compared = AtomicUsize::new(0);
    let mut tried = 0;
    let mut g = quickcheck::Gen::new(100);
    let mut failures = 0;
    while tried < 5000 && compared.load(Ordering::Relaxed) < 500 {
        tried += 1;
        let seeds: (u64, u64, u64) = quickcheck::Arbitrary::arbitrary(&mut g);
        let sizes: (u8, u8, u8) = quickcheck::Arbitrary::arbitrary(&mut g);
        let chunks = [
            chunk(seeds.0, sizes.0),
            chunk(seeds.1, sizes.1),
            chunk(seeds.2, sizes.2),
        ];
        if merge_law::<S>(&chunks, &compared).is_failure() {
            failures += 1;
            eprintln!("merges differ: seeds {seeds:?}, sizes {sizes:?}");
        }
    }
    assert_eq!(failures, 0);
    assert!(compared.load(Ordering::Relaxed) >= 300);
}

/// Merges of the sums of chunks of the hostile mixtures (different
/// levels, so different bases, one lowered to the other's).
#[test]
fn merged_sums_read_as_one_set() {
    check_merges::<ExactSums>(|seed, size| hostile(seed, usize::from(size % 40)));
}

/// The same for pairs: both columns and the co-moment.
#[test]
fn merged_co_sums_read_as_one_set() {
    check_merges::<ExactCoSums>(|seed, size| {
        let n = usize::from(size % 30);
        let ys = hostile(seed.rotate_left(17) ^ 0x5555, n);
        hostile(seed, n).into_iter().zip(ys).collect()
    });
}

#[test]
fn a_merge_that_would_not_fit_is_refused_whole() {
    let (mut tiny, mut huge) = (ExactSums::new(), ExactSums::new());
    for x in [1e-300, 2e-300] {
        assert!(tiny.add(x));
    }
    assert!(huge.add(1e300));
    let before = tiny.clone();
    assert!(!tiny.merge(&huge));
    assert_eq!(tiny, before);
    assert!(!huge.merge(&tiny));
    // Empty sets merge either way.
    let mut empty = ExactSums::new();
    assert!(empty.merge(&tiny));
    assert_eq!(empty, tiny);
    assert!(tiny.merge(&ExactSums::new()));
    assert_eq!(tiny, before);
    // [1, 2] ∪ [2^-40]: exact rationals. Mean (3 + 2^-40)/3, M2 by hand.
    let (mut a, mut b) = (ExactSums::new(), ExactSums::new());
    assert!(a.add(1.0) && a.add(2.0));
    let tiny = 2f64.powi(-40);
    assert!(b.add(tiny));
    assert!(a.merge(&b));
    assert_eq!(a.count(), 3);
    // Σx = 3 + t, Σx² = 5 + t²: M2 = 5 + t² − (3 + t)²/3 = 2 − 2t + (2/3)t².
    let t = tiny;
    let m2 = 2.0 - 2.0 * t + (2.0 / 3.0) * t * t;
    assert_eq!(a.m2(), m2);
    assert_eq!(a.mean(), Some((3.0 + t) / 3.0));
}

/// Zeros fit every base: a set that holds only zeros takes any finite
/// value next, one by one, by merge, in pairs and by groups. (Zeros held
/// first used to refuse a value far from 1, such as `1e-30`.)
#[test]
fn zeros_held_first_take_any_value() {
    let tiny = 2f64.powi(-100);
    for x in [1e-30, 1e30, 5e-324, f64::MAX, -2.5e-300, 3.0, tiny] {
        let mut s = ExactSums::new();
        assert!(s.add(0.0) && s.add(-0.0));
        assert!(s.add(x), "{x:e} after zeros");
        assert_eq!(s.count(), 3);
        // Exactly x/3, rounded once: the division of floats rounds so.
        assert_eq!(s.mean(), Some(x / 3.0), "{x:e}");
        if x == 3.0 || x == tiny {
            // M2 = x² − x²/3 = 2x²/3: 2x² exact for these x, then one
            // rounding of the division, as the exact read rounds.
            assert_eq!(s.m2(), 2.0 * (x * x) / 3.0, "{x:e}");
        }
        let (mut zeros, mut one) = (ExactSums::new(), ExactSums::new());
        assert!(zeros.add(0.0) && one.add(x));
        let mut left = zeros.clone();
        assert!(left.merge(&one), "zeros ∪ {{{x:e}}}");
        assert_eq!(left.mean(), Some(x / 2.0));
        let mut right = one.clone();
        assert!(right.merge(&zeros), "{{{x:e}}} ∪ zeros");
        assert_eq!(right.mean(), Some(x / 2.0));
        let mut pairs = ExactCoSums::new();
        assert!(
            pairs.add(0.0, 1.0) && pairs.add(x, 0.0),
            "({x:e}, 0) after (0, 1)"
        );
        let mut cross = ExactCoSums::new();
        assert!(
            cross.add(0.0, 0.0) && cross.add(1.0, x),
            "(1, {x:e}) after (0, 0)"
        );
        let mut more = ExactCoSums::new();
        assert!(more.add(x, 1.0));
        assert!(pairs.merge(&more) && pairs.count() == 3);
        let mut groups = GroupedCoSums::new();
        groups.resize(1);
        assert_eq!(groups.add(0, 0.0, 1.0), Ok(true));
        assert_eq!(
            groups.add(0, x, 2.0),
            Ok(true),
            "{x:e} after zeros, by group"
        );
    }
}
