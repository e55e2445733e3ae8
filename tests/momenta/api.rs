//! The public contract's shape: every type is `Send + Sync + Clone + Debug`,
//! the accumulators have the std traits users expect, `Layout` is `Copy`,
//! and `Error` is a `std::error::Error`.

use momenta::batchnorm::{BatchStats, BnConfig, Layout, Normalizer, RunningStats};
use momenta::{
    Accumulator, Covariance, CovarianceParts, Ema, Error, EwVariance, Mean, Merge, Momentum,
    MovingAverage, MovingVariance, Variance, WeightedMean, WeightedMeanParts, WeightedVariance,
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
    shared::<MovingAverage<f64>>();
    shared::<MovingVariance<f64>>();
    shared::<Momentum<f64>>();
    shared::<BatchStats<f32>>();
    shared::<BnConfig<f32>>();
    shared::<RunningStats<f64>>();
    shared::<Normalizer<f32>>();
    shared::<Layout>();
    shared::<Error>();
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
