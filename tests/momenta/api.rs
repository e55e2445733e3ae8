//! The public contract's shape: every type is `Send + Sync + Clone + Debug`,
//! the accumulators have the std traits users expect, `Layout` is `Copy`,
//! and `Error` is a `std::error::Error`.

use momenta::batchnorm::{
    BatchStats, BatchStatsParts, BnConfig, GradSums, GradSumsParts, GroupNorm, InstanceNorm,
    LayerNorm, Layout, Normalizer, RunningStats,
};
use momenta::{
    Accumulator, Closed, Covariance, CovarianceParts, Ema, Error, EwCovariance, EwVariance,
    Interpolation, Mean, MeanParts, Merge, Momentum, MovingAverage, MovingVariance, NanPolicy,
    TimeQuantile, Variance, VarianceParts, WeightedMean, WeightedMeanParts, WeightedVariance,
    WeightedVarianceParts,
};

fn shared<T: Send + Sync + Clone + core::fmt::Debug + PartialEq>() {}
fn accumulator<T: Accumulator<f64> + Extend<f64> + for<'a> Extend<&'a f64>>() {}
fn collectable<T: Default + FromIterator<f64> + for<'a> FromIterator<&'a f64> + Merge>() {}

#[test]
fn every_type_is_send_sync_clone_debug() {
    shared::<Mean<f32>>();
    shared::<Variance<f64>>();
    shared::<Ema<f64>>();
    shared::<EwVariance<f32>>();
    shared::<EwCovariance<f64>>();
    shared::<NanPolicy>();
    fn pairs<T: Extend<(f64, f64)> + for<'a> Extend<&'a (f64, f64)>>() {}
    pairs::<EwCovariance<f64>>();
    shared::<MovingAverage<f64>>();
    shared::<MovingVariance<f64>>();
    shared::<momenta::MovingStats<f64>>();
    accumulator::<momenta::MovingStats<f64>>();
    shared::<Momentum<f64>>();
    shared::<BatchStats<f32>>();
    shared::<BnConfig<f32>>();
    shared::<RunningStats<f64>>();
    shared::<Normalizer<f32>>();
    shared::<Layout>();
    shared::<Error>();
    shared::<VarianceParts>();
    shared::<MeanParts>();
    shared::<BatchStatsParts>();
    shared::<GradSums<f32>>();
    shared::<GradSumsParts>();
    shared::<LayerNorm<f32>>();
    shared::<InstanceNorm<f64>>();
    shared::<GroupNorm<f32>>();
    fn mergeable<T: Merge>() {}
    mergeable::<GradSums<f64>>();
    fn copy<T: Copy>() {}
    copy::<LayerNorm<f64>>();
    copy::<InstanceNorm<f32>>();
    copy::<GroupNorm<f64>>();
    copy::<VarianceParts>();
    copy::<MeanParts>();
    shared::<Interpolation>();
    copy::<Interpolation>();
    shared::<Closed>();
    copy::<Closed>();
    assert_eq!(Closed::default(), Closed::Right);
    shared::<TimeQuantile<f64>>();
    assert_eq!(Interpolation::default(), Interpolation::Linear);
}

#[test]
fn to_parts_and_from_parts_pair_up() {
    let v = Variance::<f32>::from_slice(&[1.0_f32, 2.0]);
    let _: Result<Variance<f32>, Error> = Variance::from_parts(v.to_parts());
    let m = Mean::<f64>::from_slice(&[1.0]);
    let _: Result<Mean<f64>, Error> = Mean::from_parts(m.to_parts());
    let s = BatchStats::<f32>::new(2);
    let _: Result<BatchStats<f64>, Error> = BatchStats::from_parts(s.to_parts());
    let _: BatchStats<f64> = s.clone().into();
    let _: BatchStats<f32> = BatchStats::<f64>::new(1).into();
    let _: BatchStats<f64> = s.convert();
}

#[test]
fn f64_accumulators_take_f32_data_alone_and_in_bundles() {
    fn accumulator32<T: Accumulator<f32>>() {}
    accumulator32::<Mean<f64>>();
    accumulator32::<Variance<f64>>();
    accumulator32::<Mean<f32>>();
    accumulator32::<(Mean<f64>, Variance<f64>)>();

    // 0.1 + k/8 in f32, k = 0..8: the bundle's statistics are those of the
    // same values widened to f64 (naive two-pass formulas).
    let xs: Vec<f32> = (0..8).map(|k| 0.1 + k as f32 / 8.0).collect();
    let wide: Vec<f64> = xs.iter().map(|&x| f64::from(x)).collect();
    let mean = wide.iter().sum::<f64>() / 8.0;
    let m2: f64 = wide.iter().map(|x| (x - mean) * (x - mean)).sum();

    let mut bundle = (Mean::<f64>::new(), Variance::<f64>::new());
    bundle.extend_from_slice(&xs[..5]);
    for &x in &xs[5..] {
        bundle.push(x);
    }
    let (m, v) = &bundle;
    assert_eq!(m.count(), 8);
    assert!((m.mean().unwrap() - mean).abs() <= 1e-15);
    assert!((v.mean().unwrap() - mean).abs() <= 1e-15);
    assert!((v.population_variance().unwrap() - m2 / 8.0).abs() <= 1e-15);

    // The inherent methods keep inferring the float type from the values.
    let mut v = Variance::new();
    v.push(1.0);
    v.push(3.0);
    assert_eq!(v.sample_variance(), Some(2.0));
    let mut narrow = Variance::<f32>::new();
    narrow.push(1.0);
    assert_eq!(narrow.mean(), Some(1.0_f32));
    shared::<Covariance<f32>>();
    shared::<WeightedMean<f64>>();
    shared::<WeightedVariance<f32>>();
    fn parts<T: Copy + Default + Send + Sync + core::fmt::Debug + PartialEq>() {}
    parts::<CovarianceParts>();
    parts::<WeightedMeanParts>();
    parts::<WeightedVarianceParts>();
}

#[test]
fn pair_accumulators_have_their_std_traits() {
    fn pairs<T: Default + Merge + Extend<(f64, f64)> + for<'a> Extend<&'a (f64, f64)>>() {}
    fn collect<T: FromIterator<(f64, f64)> + for<'a> FromIterator<&'a (f64, f64)>>() {}
    pairs::<Covariance<f64>>();
    collect::<Covariance<f64>>();
    fn mergeable<T: Default + Merge>() {}
    mergeable::<WeightedMean<f64>>();
    mergeable::<WeightedVariance<f32>>();
}

#[test]
fn accumulators_have_the_std_traits() {
    accumulator::<Mean<f64>>();
    accumulator::<Variance<f64>>();
    accumulator::<Ema<f64>>();
    accumulator::<EwVariance<f64>>();
    accumulator::<MovingAverage<f64>>();
    accumulator::<MovingVariance<f64>>();
    collectable::<Mean<f64>>();
    collectable::<Variance<f64>>();
    fn copy<T: Copy>() {}
    copy::<Layout>();
    copy::<Momentum<f32>>();
    fn std_error<T: std::error::Error + Send + Sync + 'static>() {}
    std_error::<Error>();
}

#[test]
fn errors_box_into_dyn_error() {
    let e: Box<dyn std::error::Error> = Box::new(MovingAverage::<f64>::new(0).unwrap_err());
    assert_eq!(e.to_string(), "window must be at least 1, got 0");
    let v: Variance<f64> = [1.0, 2.0, 3.0].iter().collect();
    assert_eq!(v.count(), 3);
}

#[test]
fn the_cumulative_family_has_the_whole_contract() {
    use momenta::{Kurtosis, KurtosisParts, MinMax, MinMaxParts, Skewness, SkewnessParts};
    shared::<Skewness<f32>>();
    shared::<Kurtosis<f64>>();
    shared::<MinMax<f32>>();
    fn copy<T: Copy + Send + Sync + core::fmt::Debug + PartialEq>() {}
    copy::<SkewnessParts>();
    copy::<KurtosisParts>();
    copy::<MinMaxParts>();
    accumulator::<Skewness<f64>>();
    accumulator::<Kurtosis<f64>>();
    accumulator::<MinMax<f64>>();
    collectable::<Skewness<f64>>();
    collectable::<Kurtosis<f64>>();
    collectable::<MinMax<f64>>();
    fn accumulator32<T: Accumulator<f32>>() {}
    accumulator32::<Skewness<f64>>();
    accumulator32::<Kurtosis<f64>>();
    accumulator32::<MinMax<f64>>();
    accumulator32::<(MinMax<f32>, Kurtosis<f32>)>();
    fn parallel<T: rayon::iter::FromParallelIterator<f64> + rayon::iter::ParallelExtend<f64>>() {}
    parallel::<Skewness<f64>>();
    parallel::<Kurtosis<f64>>();
    parallel::<MinMax<f64>>();
    let k = Kurtosis::<f32>::from_slice(&[1.0_f32, 2.0]);
    let _: Result<Kurtosis<f32>, Error> = Kurtosis::from_parts(k.to_parts());
    let s = Skewness::<f64>::from_slice(&[1.0]);
    let _: Result<Skewness<f64>, Error> = Skewness::from_parts(s.to_parts());
    let m = MinMax::<f64>::from_slice(&[1.0]);
    let _: Result<MinMax<f64>, Error> = MinMax::from_parts(m.to_parts());
}

#[test]
fn slice_statistics_and_their_tuples_are_from_slice() {
    use momenta::{FromSlice, Kurtosis, MinMax, Skewness};
    fn from_slice<S, T: FromSlice<S>>() {}
    from_slice::<f64, Mean<f64>>();
    from_slice::<f32, Variance<f64>>();
    from_slice::<f32, Skewness<f32>>();
    from_slice::<f64, Kurtosis<f32>>();
    from_slice::<f32, MinMax<f64>>();
    from_slice::<f32, (Mean<f64>, MinMax<f32>)>();
    from_slice::<f64, (Mean<f64>, Variance<f64>, Skewness<f64>)>();
    from_slice::<
        f64,
        (
            (Mean<f64>, MinMax<f64>),
            Variance<f32>,
            Kurtosis<f64>,
            Mean<f32>,
        ),
    >();
    shared::<(Kurtosis<f64>, MinMax<f64>)>();
}

/// `with_min_periods` takes a `usize` everywhere; it returns a `Result`
/// exactly where the value can be refused (a count window's must not
/// exceed the window), `Self` where any count can be reached.
#[test]
fn with_min_periods_has_one_argument_type_and_fails_only_where_it_can() {
    use momenta::{MovingMinMax, MovingQuantile, TimeQuantile, TimeWindow};
    let _: fn(Ema<f64>, usize) -> Ema<f64> = Ema::with_min_periods;
    let _: fn(EwVariance<f64>, usize) -> EwVariance<f64> = EwVariance::with_min_periods;
    let _: fn(EwCovariance<f64>, usize) -> EwCovariance<f64> = EwCovariance::with_min_periods;
    let _: fn(TimeWindow<f64>, usize) -> TimeWindow<f64> = TimeWindow::with_min_periods;
    let _: fn(TimeQuantile<f64>, usize) -> TimeQuantile<f64> = TimeQuantile::with_min_periods;
    type Fallible<T> = fn(T, usize) -> Result<T, Error>;
    let _: Fallible<MovingAverage<f64>> = MovingAverage::with_min_periods;
    let _: Fallible<MovingVariance<f64>> = MovingVariance::with_min_periods;
    let _: Fallible<MovingMinMax<f64>> = MovingMinMax::with_min_periods;
    let _: Fallible<MovingQuantile<f64>> = MovingQuantile::with_min_periods;
    let _: Fallible<momenta::MovingStats<f64>> = momenta::MovingStats::with_min_periods;
    // The same `usize` reaches every one.
    let n: usize = 2;
    let mut e = EwVariance::new(Momentum::Factor(0.5))
        .unwrap()
        .with_min_periods(n);
    let mut w = TimeWindow::new(10.0).unwrap().with_min_periods(n);
    let mut m = MovingAverage::new(4).unwrap().with_min_periods(n).unwrap();
    e.push(1.0);
    w.push_at(0.0, 1.0).unwrap();
    m.push(1.0);
    assert_eq!((e.mean(), w.mean(), m.mean()), (None, None, None));
    assert!(
        MovingAverage::<f64>::new(4)
            .unwrap()
            .with_min_periods(5)
            .is_err()
    );
}
