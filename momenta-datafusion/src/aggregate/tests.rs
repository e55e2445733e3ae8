//! The adapter's laws, for every function: a state taken out and merged
//! into an empty accumulator evaluates to the same bits; partitions'
//! states merged in any order give the same bits; the grouped accumulator
//! agrees with the ungrouped one group by group.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Float64Array};
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{Accumulator, EmitTo, GroupsAccumulator};

use super::accumulator::StatAccumulator;
use super::groups::StatGroupsAccumulator;
use super::{Function, Statistic};
use crate::functions::{covariance, mean, min_max, shape, variance, weighted};

/// Hostile columns: an outlier first, a level change, far from zero;
/// `y` positive (it is a weight for the weighted functions).
fn columns(n: usize, seed: u64) -> [Vec<f64>; 2] {
    let mut state = seed;
    let mut unit = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        #[allow(clippy::cast_precision_loss, reason = "53 random bits")]
        let u = (state >> 11) as f64 / (1u64 << 53) as f64;
        u
    };
    let x = (0..n)
        .map(|i| match i {
            0 => 1e15,
            i if i < n / 2 => 1e9 + unit(),
            _ => -3e6 + unit(),
        })
        .collect();
    let y = (0..n).map(|_| 0.5 + unit()).collect();
    [x, y]
}

fn arrays(cols: &[Vec<f64>], range: std::ops::Range<usize>) -> Vec<ArrayRef> {
    cols.iter()
        .map(|c| Arc::new(Float64Array::from(c[range.clone()].to_vec())) as ArrayRef)
        .collect()
}

/// Scalar states of several accumulators as state columns.
fn state_columns(states: &[Vec<ScalarValue>]) -> Vec<ArrayRef> {
    (0..states[0].len())
        .map(|j| ScalarValue::iter_to_array(states.iter().map(|s| s[j].clone())).unwrap())
        .collect()
}

fn bits(v: &ScalarValue) -> Option<u64> {
    match v {
        ScalarValue::Float64(v) => v.map(f64::to_bits),
        v => panic!("not a Float64: {v:?}"),
    }
}

fn laws<F: Function>() {
    let cols = columns(20_000, 7);
    let cols = &cols[..F::Stat::ARITY];
    // Eight partitions of uneven sizes, batches of 1000 rows.
    let cuts = [0, 1, 700, 3000, 3001, 9000, 12_345, 16_000, 20_000];
    let mut partials = Vec::new();
    for w in cuts.windows(2) {
        let mut acc = StatAccumulator::<F>::default();
        for start in (w[0]..w[1]).step_by(1000) {
            acc.update_batch(&arrays(cols, start..(start + 1000).min(w[1])))
                .unwrap();
        }
        partials.push(acc);
    }
    // 1. state → merge_batch into an empty accumulator: the same bits.
    for acc in &mut partials {
        let state = acc.state().unwrap();
        let mut fresh = StatAccumulator::<F>::default();
        fresh.merge_batch(&state_columns(&[state])).unwrap();
        assert_eq!(
            bits(&fresh.evaluate().unwrap()),
            bits(&acc.evaluate().unwrap())
        );
        assert_eq!(fresh.state().unwrap(), acc.state().unwrap());
    }
    // 2. The partitions' states in any order, one per batch (as they
    // arrive) or all in one: the same bits.
    let states: Vec<Vec<ScalarValue>> = partials.iter_mut().map(|a| a.state().unwrap()).collect();
    let orders: [[usize; 8]; 3] = [
        [0, 1, 2, 3, 4, 5, 6, 7],
        [7, 6, 5, 4, 3, 2, 1, 0],
        [3, 0, 6, 1, 7, 2, 5, 4],
    ];
    let mut results = Vec::new();
    for order in orders {
        let mut one_by_one = StatAccumulator::<F>::default();
        for &i in &order {
            one_by_one
                .merge_batch(&state_columns(&[states[i].clone()]))
                .unwrap();
        }
        results.push(bits(&one_by_one.evaluate().unwrap()));
        let mut at_once = StatAccumulator::<F>::default();
        let ordered: Vec<_> = order.iter().map(|&i| states[i].clone()).collect();
        at_once.merge_batch(&state_columns(&ordered)).unwrap();
        results.push(bits(&at_once.evaluate().unwrap()));
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
    // 3. Grouped: group g of the GroupsAccumulator is the ungrouped
    // accumulator of g's rows (to rounding: the pieces differ; 1e-9
    // because the covariance of the independent columns is 10⁻¹¹ of
    // their spreads' product), and its state round-trips too.
    let n = cols[0].len();
    let groups: Vec<usize> = (0..n).map(|i| (i * 7 / 3) % 5).collect();
    let mut grouped = StatGroupsAccumulator::<F>::default();
    for start in (0..n).step_by(1000) {
        grouped
            .update_batch(
                &arrays(cols, start..start + 1000),
                &groups[start..start + 1000],
                None,
                5,
            )
            .unwrap();
    }
    let state = grouped.state(EmitTo::All).unwrap();
    let mut fresh = StatGroupsAccumulator::<F>::default();
    fresh.merge_batch(&state, &[0, 1, 2, 3, 4], 5).unwrap();
    let merged = fresh.evaluate(EmitTo::All).unwrap();
    let mut again = StatGroupsAccumulator::<F>::default();
    again.merge_batch(&state, &[0, 1, 2, 3, 4], 5).unwrap();
    let first_two = again.evaluate(EmitTo::First(2)).unwrap();
    assert_eq!(first_two.len(), 2);
    let merged = merged.as_any().downcast_ref::<Float64Array>().unwrap();
    let first_two = first_two.as_any().downcast_ref::<Float64Array>().unwrap();
    for g in 0..2 {
        assert_eq!(merged.value(g).to_bits(), first_two.value(g).to_bits());
    }
    for g in 0..5 {
        let rows: Vec<usize> = (0..n).filter(|&i| groups[i] == g).collect();
        let picked: Vec<Vec<f64>> = cols
            .iter()
            .map(|c| rows.iter().map(|&i| c[i]).collect())
            .collect();
        let slices: Vec<&[f64]> = picked.iter().map(Vec::as_slice).collect();
        let whole = F::Stat::from_columns(&slices).unwrap();
        let (got, want) = (merged.value(g), F::evaluate(&whole).unwrap());
        assert!(
            (got - want).abs() <= 1e-9 * want.abs() || got == want,
            "group {g}: {got:e} against {want:e}"
        );
    }
    // 4. convert_to_state: one state per row, empty where the row is
    // absent; merged, they are the rows' statistic.
    let batch = arrays(cols, 0..1000);
    let states = grouped.convert_to_state(&batch, None).unwrap();
    let mut from_rows = StatAccumulator::<F>::default();
    from_rows.merge_batch(&states).unwrap();
    let slices: Vec<&[f64]> = cols.iter().map(|c| &c[..1000]).collect();
    let want = F::evaluate(&F::Stat::from_columns(&slices).unwrap()).unwrap();
    let ScalarValue::Float64(Some(got)) = from_rows.evaluate().unwrap() else {
        panic!("NULL")
    };
    assert!(
        (got - want).abs() <= 1e-9 * want.abs() || got == want,
        "{got:e} {want:e}"
    );
}

#[test]
fn every_function_keeps_the_laws() {
    laws::<variance::VarPop>();
    laws::<variance::VarSamp>();
    laws::<variance::StddevPop>();
    laws::<variance::StddevSamp>();
    laws::<covariance::CovarPop>();
    laws::<covariance::CovarSamp>();
    laws::<covariance::Corr>();
    laws::<shape::SkewnessSamp>();
    laws::<shape::SkewnessPop>();
    laws::<shape::KurtosisSamp>();
    laws::<shape::KurtosisPop>();
    laws::<weighted::Mean>();
    laws::<weighted::VarPop>();
    laws::<weighted::VarSamp>();
    laws::<weighted::VarReliability>();
    laws::<weighted::StddevPop>();
    laws::<weighted::StddevSamp>();
    laws::<weighted::StddevReliability>();
    laws::<mean::Avg>();
    laws::<min_max::Min>();
    laws::<min_max::Max>();
    laws::<min_max::Range>();
}

/// An exact-sums accumulator of `groups` groups fed `cols` in batches of
/// 700 rows, group of row `i` at `(i·7/3) mod groups`.
fn exact_groups<F: Function, E: super::exact_groups::Engine>(
    read: fn(&E::Sums) -> Result<F::Stat, momenta::Error>,
    cols: &[Vec<f64>],
    groups: usize,
) -> super::exact_groups::ExactGroupsAccumulator<F, E> {
    let n = cols[0].len();
    let keys: Vec<usize> = (0..n).map(|i| (i * 7 / 3) % groups).collect();
    let mut acc = super::exact_groups::ExactGroupsAccumulator::<F, E>::new(read);
    for start in (0..n).step_by(700) {
        let end = (start + 700).min(n);
        acc.update_batch(&arrays(cols, start..end), &keys[start..end], None, groups)
            .unwrap();
    }
    acc
}

/// The results, as bits.
fn result_bits(array: &ArrayRef) -> Vec<u64> {
    let values = array.as_any().downcast_ref::<Float64Array>().unwrap();
    (0..values.len())
        .map(|i| values.value(i).to_bits())
        .collect()
}

#[test]
fn exact_groups_emit_their_first_groups_as_all_of_them() {
    // DataFusion emits the first groups early (sorted input, memory
    // pressure); the groups left are renumbered from 0. Emitting 2, then
    // 3, then the rest gives the bits of emitting all at once, for both
    // engines (a vector of `ExactSums`, a `GroupedCoSums`).
    let cols = columns(10_000, 0x5eed);
    let Some(super::ReadExact::Two(corr)) = <covariance::Corr as Function>::Stat::FROM_EXACT else {
        panic!("corr reads exact sums")
    };
    let Some(super::ReadExact::One(var)) = <variance::VarPop as Function>::Stat::FROM_EXACT else {
        panic!("var_pop reads exact sums")
    };
    let mut whole = exact_groups::<covariance::Corr, momenta::GroupedCoSums>(corr, &cols, 9);
    let mut parts = exact_groups::<covariance::Corr, momenta::GroupedCoSums>(corr, &cols, 9);
    let all = result_bits(&whole.evaluate(EmitTo::All).unwrap());
    let mut pieces = result_bits(&parts.evaluate(EmitTo::First(2)).unwrap());
    pieces.extend(result_bits(&parts.evaluate(EmitTo::First(3)).unwrap()));
    pieces.extend(result_bits(&parts.evaluate(EmitTo::All).unwrap()));
    assert_eq!(all.len(), 9);
    assert_eq!(pieces, all);
    let mut whole = exact_groups::<variance::VarPop, Vec<momenta::ExactSums>>(var, &cols, 9);
    let mut parts = exact_groups::<variance::VarPop, Vec<momenta::ExactSums>>(var, &cols, 9);
    let all = result_bits(&whole.evaluate(EmitTo::All).unwrap());
    let mut pieces = result_bits(&parts.evaluate(EmitTo::First(4)).unwrap());
    pieces.extend(result_bits(&parts.evaluate(EmitTo::All).unwrap()));
    assert_eq!(pieces, all);
    // And each corr group is its rows' exact correlation read directly.
    let keys: Vec<usize> = (0..cols[0].len()).map(|i| (i * 7 / 3) % 9).collect();
    let mut sums = vec![momenta::ExactCoSums::new(); 9];
    for (i, &g) in keys.iter().enumerate() {
        assert!(sums[g].add(cols[0][i], cols[1][i]));
    }
    let direct: Vec<u64> = sums
        .iter()
        .map(|s| s.to_covariance().correlation().unwrap().to_bits())
        .collect();
    let whole = exact_groups::<covariance::Corr, momenta::GroupedCoSums>(corr, &cols, 9)
        .evaluate(EmitTo::All)
        .unwrap();
    assert_eq!(result_bits(&whole), direct);
}
