//! Streaming statistics: mean, variance and moving averages in constant
//! space, that merge exactly in parallel — and BatchNorm running statistics
//! that match PyTorch, Keras, TensorFlow and cuDNN.
//!
//! # Which accumulator for which job
//!
//! | job | use |
//! |---|---|
//! | average of everything seen so far | [`Mean`] |
//! | mean, variance, standard deviation of a stream or a slice | [`Variance`] |
//! | statistics of a huge slice on every core | [`Variance::par_from_slice`], [`Mean::par_from_slice`] |
//! | covariance and Pearson correlation of pairs, two slices | [`Covariance`] |
//! | an average where values count unequally (credits, frequencies, inverse variances) | [`WeightedMean`] |
//! | weighted variance: frequency, reliability or population weights | [`WeightedVariance`] |
//! | smooth a signal, recent values weigh more | [`Ema`] |
//! | a smoothed signal with a ±σ band | [`EwVariance`] |
//! | how unusual is a new reading, against a smoothed band | [`EwVariance::z_score`] |
//! | smoothed covariance and correlation of two signals | [`EwCovariance`] |
//! | sensor readings at irregular times, a half-life in seconds | [`EwVariance::push_at`] with [`Momentum::from_half_life`] |
//! | pandas' `ewm(adjust=True)`, `ignore_na`, `min_periods` | [`EwVariance::adjusted`], [`NanPolicy`], [`EwVariance::with_min_periods`] |
//! | average of the last *n* samples (a moving-average filter) | [`MovingAverage`] |
//! | mean and variance of the last *n* samples | [`MovingVariance`] |
//! | skewness of a stream or a slice (scipy's `skew`, pandas' `.skew()`) | [`Skewness`] |
//! | excess kurtosis too (scipy's `kurtosis`, pandas' `.kurt()`) | [`Kurtosis`] |
//! | smallest and largest value, NaN-aware, at memory speed | [`MinMax`] |
//! | minimum, maximum, range of the last *n* samples | [`MovingMinMax`] |
//! | mean, variance, min and max of the last *n* samples at once, from exact sums | [`MovingStats`] |
//! | median or any quantile of the last *n* samples (a median filter, spikes removed), pandas' five interpolations | [`MovingQuantile`], [`Interpolation`] |
//! | mean, variance, min, max of the last Δt of timestamped samples (pandas' `rolling("10s")`, any `closed`) | [`TimeWindow`], [`Closed`] |
//! | median or any quantile of the last Δt (pandas' `rolling("10s").median()`) | [`TimeQuantile`] |
//! | how unusual is a reading against the window before it (pandas' `(x - m.shift()) / s.shift()`) | [`MovingVariance::z_score`], [`TimeWindow::z_score`], [`EwVariance::z_score`] |
//! | skip NaN readings, hold statistics back until enough samples (pandas' `min_periods`) | [`NanPolicy`], `with_min_periods` on every window |
//! | a whole column in, a whole column out: pandas' `rolling(w).mean()`, `.var()`, `.max()`, `.median()`, `ewm().mean()` | the `*_series` methods ([Whole series](#whole-series)) |
//! | BatchNorm batch and running statistics, synchronized BN | [`norm`] |
//! | layer, group, instance and batch normalization, forward and backward (PyTorch's autograd `dx`, `dγ`, `dβ`) | [`norm::LayerNorm`], [`norm::GroupNorm`], [`norm::InstanceNorm`], [`norm::BatchNorm`] with [`norm::Backward`] |
//! | mean and variance of every column of a row-major matrix (per-feature statistics) | [`norm::BatchStats::compute`] with [`norm::Layout::nc`] |
//!
//! ```
//! use momenta::{Ema, Merge, Momentum, MovingAverage, Variance};
//!
//! // A real-time filter: O(1) per sample, forever, without drift.
//! let mut filter = MovingAverage::new(3)?;
//! assert_eq!(filter.push(3.0), 3.0);
//! assert_eq!(filter.push(6.0), 4.5);
//! assert_eq!(filter.push(9.0), 6.0);
//! assert_eq!(filter.push(12.0), 9.0); // 3.0 has left the window
//!
//! // Exponential averages in either convention.
//! let mut keras = Ema::new(Momentum::Decay(0.75))?;
//! let mut torch = Ema::new(Momentum::Factor(0.25))?;
//! for x in [4.0, 8.0, 0.0] {
//!     keras.push(x);
//!     torch.push(x);
//! }
//! assert_eq!(keras.value(), torch.value());
//!
//! // Statistics of parts merge into the statistics of the whole.
//! let mut a = Variance::<f64>::from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0]);
//! a.merge(&Variance::from_slice(&[10.0, 11.0, 12.0]));
//! assert_eq!(a.mean(), Some(6.0));
//! assert_eq!(a.population_variance(), Some(16.5));
//! # Ok::<(), momenta::Error>(())
//! ```
//!
//! Several statistics go through the data together as a tuple: tuples of
//! two, three or four accumulators are themselves an [`Accumulator`] and,
//! when every member merges, a [`Merge`]. A tuple's slice path gives each
//! member exactly what the member's own gives it, and reads a slice from
//! memory once for all the members the blocked kernels reduce; tuples of
//! those are also a [`FromSlice`], with `from_slice` and (feature `rayon`)
//! `par_from_slice`.
//!
//! # Whole series
//!
//! Every window and exponential statistic also takes a whole slice and
//! gives back the statistic after each value, as pandas and polars do for
//! a column. One name pattern for all of them: the statistic's accessor,
//! then `_series` — a new vector — or `_series_into` — a caller's buffer
//! as long as the input; statistics with a clock add `_at` and take the
//! times first, as `push_at` does. Where the accessor says `None` (not yet
//! [ready](MovingAverage::with_min_periods), or a sample variance of one
//! value) the series shows NaN, as pandas does.
//!
//! | pandas | polars | momenta |
//! |---|---|---|
//! | `s.rolling(w).mean()` | `s.rolling_mean(w)` | [`MovingAverage::mean_series`] (correctly rounded; [`MovingStats`]' and [`MovingVariance`]'s are the same) |
//! | `s.rolling(w).var()`, `.std()` (`ddof=0`: population) | `s.rolling_var(w)`, `rolling_std` | [`MovingVariance::sample_variance_series`], `sample_std_dev_series`, `population_*_series` (correctly rounded; [`MovingStats`]' are the same) |
//! | `s.rolling(w).min()`, `.max()` | `s.rolling_min(w)`, `rolling_max` | [`MovingMinMax::min_series`], `max_series`, `range_series` |
//! | `s.rolling(w).median()`, `.quantile(q)` | `s.rolling_median(w)`, `rolling_quantile(q, "linear", w)` | [`MovingQuantile::quantile_series`] (of [`MovingQuantile::median`] or `new(w, q)`) |
//! | `s.rolling("5s").mean()`, … on a time index | `s.rolling_mean_by(t, "5s")`, … | [`TimeWindow::mean_series_at`], … |
//! | `s.ewm(alpha=a).mean()` | `s.ewm_mean(alpha=a)` | [`Ema::value_series`] of [`Ema::adjusted`] |
//! | `s.ewm(alpha=a).var()`, `.std(bias=True)` | `s.ewm_var(alpha=a)`, … | [`EwVariance::unbiased_variance_series`], `variance_series`, `std_dev_series`, `mean_series` of [`EwVariance::adjusted`] |
//! | `x.ewm(alpha=a).cov(y)`, `.corr(y)` | — | [`EwCovariance::unbiased_covariance_series`], `covariance_series`, `correlation_series` of [`EwCovariance::adjusted`] |
//! | `s.ewm(halflife="2s", times=t).mean()` | `s.ewm_mean_by(t, half_life="2s")` | [`Ema::value_series_at`] with [`Momentum::from_half_life`] |
//!
//! pandas' and polars' count windows default to `min_periods=w` (NaN until
//! the window is full); momenta's to 1 — say `with_min_periods(w)` for
//! theirs. pandas skips NaN in windows ([`NanPolicy::Skip`]); momenta's
//! default propagates it while it is in the window.
//!
//! A series is a fast way to push, not a separate state: the statistic
//! goes on from where it was, and is left as pushing the values one by one
//! would leave it. Every value of a series is the push loop's, bit for bit,
//! and so is the state it leaves; only the work is laid out differently —
//! the add/remove windows run their replacements between two wraps of the
//! ring as one loop, the minimum and maximum come from van Herk and
//! Gil-Werman's blocks, quantiles from the window kept sorted (or, for
//! long windows, Suomela's sorted blocks), each giving the same values as
//! the push path's structures.
//!
//! ```
//! use momenta::{Ema, Momentum, MovingMinMax, MovingVariance};
//!
//! let prices = [10.0, 11.0, 13.0, 12.0, 15.0];
//! let mut var = MovingVariance::new(3)?.with_min_periods(3)?;
//! let v: Vec<f64> = var.sample_variance_series(&prices);
//! assert!(v[0].is_nan() && v[1].is_nan()); // pandas' min_periods=3
//! assert_eq!(v[2..], [7.0 / 3.0, 1.0, 7.0 / 3.0]);
//! var.push(14.0); // goes on: the window is [12, 15, 14]
//! assert_eq!(var.sample_variance(), Some(7.0 / 3.0));
//!
//! let mut max = MovingMinMax::new(2)?;
//! let mut out = [0.0; 5];
//! max.max_series_into(&prices, &mut out)?;
//! assert_eq!(out, [10.0, 11.0, 13.0, 13.0, 15.0]);
//!
//! let mut ewm = Ema::adjusted(Momentum::Factor(0.5))?; // pandas' ewm(alpha=0.5)
//! let m = ewm.value_series(&[1.0, 3.0]);
//! assert_eq!(m, [1.0, 7.0 / 3.0]); // (0.5·1 + 1·3) / 1.5
//! # Ok::<(), momenta::Error>(())
//! ```
//!
//! # `f32` data, `f64` statistics
//!
//! The slice constructors take `f32` or `f64` data for either accumulator,
//! so name the accumulator's type — `Variance::<f64>::from_slice(&xs)` or
//! `let v: Variance<f64> = Variance::from_slice(&xs);` — since it cannot be
//! inferred from the data's (bare `Variance::from_slice(&xs)` is "type
//! annotations needed"). `push` takes the accumulator's own type: push an
//! `f32` into a `Variance<f64>` with `v.push(x.into())`. `Mean<f64>` and
//! `Variance<f64>` are also `Accumulator<f32>`, so a bundle of them takes
//! `f32` data. Statistics travel between processes as plain `f64` parts
//! ([`Variance::to_parts`], [`VarianceParts`]), losslessly.
//!
//! ```
//! use momenta::{Accumulator, Mean, Variance};
//!
//! let xs = [1.0_f32, 2.0, 3.0, 6.0];
//! let v = Variance::<f64>::from_slice(&xs);
//! let mut both = (Mean::<f64>::new(), Variance::<f64>::new());
//! both.extend_from_slice(&xs);
//! assert_eq!(both.1, v);
//! assert_eq!(both.0.mean(), Some(3.0));
//! ```
//!
//! # Momentum conventions
//!
//! "Momentum" means the weight of the *old* value in Keras and TensorFlow and
//! the weight of the *new* value in PyTorch and cuDNN. [`Momentum`] names the
//! convention, so a number never changes meaning:
//!
//! | framework | parameter | default | [`Momentum`] | running variance | eps |
//! |---|---|---|---|---|---|
//! | PyTorch | `momentum` | 0.1 | `Factor(0.1)` | unbiased; n = 1 is an error | 1e-5 |
//! | PyTorch | `momentum=None` | — | `Cumulative` | unbiased | 1e-5 |
//! | Keras 3 / tf.keras non-fused | `momentum` | 0.99 | `Decay(0.99)` | biased | 1e-3 |
//! | tf.keras fused | `momentum` | 0.99 | `Decay(0.99)` | unbiased with max(n−1, 1) | 1e-3 |
//! | cuDNN | `exponentialAverageFactor` | — | `Factor(f)` | unbiased | ≥ 1e-5 |
//!
//! # Numerical policy
//!
//! One policy, on every type and method:
//!
//! - **Empty → `None`.** A statistic that needs two values (the sample
//!   variance) is `None` below two. The one exception is a per-channel
//!   vector ([`norm::BatchStats::mean`] and its siblings): a vector has
//!   one value per channel and no room for `None`, so a channel with no
//!   values reads NaN there (0/0), `count()` is 0, and every fallible use
//!   of such statistics (a running update, a normalizer) is an `Err`.
//! - **NaN and ±∞ propagate.** A NaN pushed into a cumulative statistic makes
//!   it NaN; nothing panics on it. A moving window recovers once the NaN has
//!   left the window.
//! - **The variance is never negative**; rounding that would make it so is
//!   clamped to 0, and NaN still passes through.
//! - **Accuracy.** Every variance keeps a shift taken from the data and
//!   accumulates deviations from it (an exponential one moves its shift
//!   onto the running mean, exactly, when the mean leaves it behind), so
//!   data whose mean is 10⁶ times its
//!   spread keeps ≤ 1e-12 relative error (textbook Welford: ~1e-10); the
//!   slice kernels reach ≤ 1e-14 on `1e9 + U(0, 1)`. Slices are accumulated
//!   in `f64` even for `f32` data: `Variance::<f64>::from_slice(&data_f32)`
//!   gives f64-accurate statistics of f32 data.
//! - **Invalid parameters are errors**, never panics: a momentum outside
//!   `[0, 1]` or NaN, a window of 0, a tensor shape that does not match its
//!   slice. The [`Error`]'s message names the value and the rule.
//! - **Restored state is validated**: deserializing a negative M2, a count of
//!   0 with a mean, or channel vectors of unequal length fails, and so does
//!   a NaN or ±∞ where no stream puts one (a NaN mean beside a finite M2,
//!   a NaN offset, a shift that is not finite where pushes keep it so).
//! - **`==` compares state, not statistics.** Two accumulators are equal
//!   when every later push and merge gives both the same bits; a
//!   `to_parts`/`from_parts` round trip or a checkpoint keeps them equal.
//!   Two routes to the same data — a merge of shards and the whole, say —
//!   usually keep different shifts and differ in the last bits, so they
//!   compare unequal: compare their statistics, with a tolerance.
//!
//! # Input policy
//!
//! What every method does with hostile input (each case is a test, in
//! `tests/momenta/hostile.rs` or in its subject's module):
//!
//! | input | result |
//! |---|---|
//! | NaN | the statistic becomes NaN (a window: while the NaN is in it; with [`NanPolicy::Skip`] it is left out, and a window of only NaN has no statistic) |
//! | ±∞ in [`MovingMinMax`], [`MovingQuantile`] | ordered values; a quantile between an infinity and a finite value is the infinity, between −∞ and +∞ NaN; the range of one infinity is NaN |
//! | −0.0 and +0.0 in one window | min/max order them −0.0 < +0.0 |
//! | +∞ or −∞ | the mean becomes that infinity, the variance NaN; +∞ and −∞ together make the mean NaN |
//! | values near `f64::MAX` | a representable mean stays finite (`[MAX, -MAX]` → 0); a variance too large to represent is +∞, never NaN |
//! | subnormals | ordinary numbers (their squares underflow: [`Skewness`] and [`Kurtosis`] of subnormal spreads are `None`, as for a variance of 0) |
//! | NaN into [`MinMax`] | `min()` and `max()` are NaN from then on (unlike `f64::min`, which drops it) |
//! | −0.0 and +0.0 into [`MinMax`] | −0.0 is the smaller: `min()` is −0.0, `max()` +0.0, in any order, on every route |
//! | skewness or kurtosis of values whose deviations' cube or fourth power overflows (beyond about 1e102 or 1e77; `[MAX, -MAX]`) | not finite (NaN or +∞); the mean and variance follow the rows above |
//! | an untypical first value (an outlier first, one per kernel block, a level change) | no accuracy lost: every statistic stays within the accuracy policy |
//! | an empty slice | nothing changes; statistics of nothing are `None` |
//! | a count reaching `u64::MAX` (by merges or restored state) | it saturates; the statistics stay those of the data |
//! | window 0 | `Err` ([`ErrorKind::InvalidWindow`]) |
//! | a `*_series_into` buffer, or the `ys` or `times` of a series, of another length than the values | `Err` ([`ErrorKind::LengthMismatch`], naming `output`, `ys` or `times`); nothing is pushed |
//! | a bad time anywhere in a `*_series_at` call | `Err` (naming `time`), found before anything is pushed: nothing changes |
//! | `min_periods` larger than a count window | `Err` ([`ErrorKind::InvalidParameter`], naming `min_periods`) |
//! | quantile `q` outside [0, 1] or NaN | `Err` ([`ErrorKind::InvalidParameter`], naming `q`) |
//! | time span ≤ 0 or NaN | `Err` (naming `span`); +∞ keeps every sample |
//! | a time that is NaN, ±∞ or earlier than the previous one | `Err` (naming `time`); the window is unchanged |
//! | a gap longer than the span | the window empties; statistics of nothing are `None` |
//! | window `usize::MAX` | works; memory grows only with the values pushed |
//! | momentum < 0, > 1, NaN or ±∞ | `Err` ([`ErrorKind::InvalidParameter`], naming `momentum`) |
//! | a non-finite initial value for [`Ema::with_initial`] | `Err` |
//! | NaN into an exponential statistic with [`NanPolicy::Skip`] or [`NanPolicy::Gap`] | skipped (`Gap`: the older values decay over it); ±∞ still propagates |
//! | time that goes backwards, NaN or ±∞ in `push_at`; a negative or NaN step in `push_after` | `Err` ([`ErrorKind::InvalidParameter`], naming `time` or `elapsed time`); nothing changes |
//! | a time step of 0 / of +∞ | recursive weights: the value gets weight 0 / replaces the state; adjusted: weighs as the previous value / replaces the state |
//! | a gap that leaves the past no weight | unbiased variance, covariance and z-score `None` until a second value carries weight |
//! | eps < 0, NaN or ∞; cuDNN eps below 1e-5 | `Err` |
//! | a tensor with no images or no channels | valid and empty: per-channel values read NaN; a running update from it is an `Err` |
//! | a layout whose size overflows `usize`, or a slice of the wrong length | `Err` ([`ErrorKind::Overflow`], [`ErrorKind::LengthMismatch`]) |
//! | slices of unequal length for [`Covariance::from_slices`] or [`WeightedVariance::from_slices`] | `Err` ([`ErrorKind::LengthMismatch`]) |
//! | NaN or ±∞ in one coordinate of [`Covariance`] | that coordinate's statistics, the covariance and the correlation are NaN; the other's are unaffected |
//! | a constant coordinate | [`Covariance::correlation`] is `None` |
//! | a weight < 0, NaN or ±∞, or weights whose sums overflow | `Err` ([`ErrorKind::InvalidParameter`], naming `weight`); nothing changes |
//! | weight 0 | a finite value is left out; NaN or ±∞ makes the weighted statistics NaN (`0·NaN`) |
//! | Σw = 0 | every weighted statistic is `None` |
//! | a group count of 0 or one that does not divide the channels ([`norm::GroupNorm`]); 0 features, or data that is not whole rows of them ([`norm::LayerNorm`]) | `Err` ([`ErrorKind::InvalidParameter`], naming `groups`, `features` or `data length`) |
//! | a layout whose samples are not [`norm::LayerNorm`]'s `features` long; a channel axis 0 or beyond the array's | `Err` ([`ErrorKind::LengthMismatch`] naming `features`; [`ErrorKind::InvalidParameter`] naming `axis`) |
//! | instance statistics that are not whole samples of the running statistics' channels; one position per instance with an unbiased running variance | `Err` ([`ErrorKind::LengthMismatch`], [`ErrorKind::TooFewValues`]); nothing changes |
//! | an input, output gradient or `dx` of another length than the layout; statistics of another channel count or batch size ([`norm::GradSums`], every layer's backward) | `Err` ([`ErrorKind::LengthMismatch`], naming `data`, `gradient`, `output`, `statistics channels`, `statistics groups`, `statistics rows`, `gradient sums groups`, `gradient sums rows` or `statistics count`) |
//! | gradient sums (or batch statistics) of different channel counts merged — one MPI rank with another tensor shape | poisoned: the values read NaN and every fallible use is an `Err` (`try_merge` refuses at once) |
//! | corrupt serialized state | a deserialization error naming the broken invariant |
//!
//! # Checkpoints
//!
//! With the `serde` feature every accumulator, window and BatchNorm state
//! serializes, and restores to a state that goes on exactly as the saved
//! one would have: every later push, merge and read gives the same bits,
//! NaN payloads and the sign of zero included. That holds in every format,
//! for every value a state can hold:
//!
//! - **binary formats** (postcard, bincode, CBOR) store each float as it
//!   is;
//! - **human-readable formats** (JSON, YAML, TOML, RON) get each float as
//!   a string: the shortest decimal that reads back as the same value
//!   (`"0.1"`, `"1e300"`, `"-0.0"`), `"inf"`, `"-inf"`, `"NaN"`, `"-NaN"`,
//!   or a NaN's bits (`"NaN(0x7ff8000000000001)"`). A JSON number could not
//!   do it: `serde_json` writes NaN and ±∞ as `null`, which cannot be read
//!   back, and with its default features it reads about half of all
//!   17-digit numbers an ulp off (`1e6 + U(0, 1)`: 45 %). The strings are
//!   read by Rust's own parser, which rounds correctly, so `serde_json` needs
//!   no `float_roundtrip` feature.
//!
//! On the way in every state is validated, and a broken invariant is an
//! error that names it. NaN and ±∞ propagate, so a real stream's state
//! holds them in some fields, but only together with others: a NaN pushed
//! makes both the mean and M2 NaN, a limit is kept in the shift with an
//! offset of 0, the exponential statistics' shift is a finite value
//! pushed. A state that holds one elsewhere (a NaN shift beside a finite
//! M2 would read a finite variance of values whose mean is NaN) is
//! refused with the field and the rule. A number where a float belongs is taken as the
//! format reads it (state saved before floats were strings, or written by hand); a `null` is
//! refused. In a human-readable format a field that cannot be read is
//! named by its path, with the text it holds: `engine.sums.m2.value:
//! cannot read "x2" as f64`, `values[3]: …`; a missing or unknown field
//! is named with the struct it belongs to (`engine.sums: missing field
//! …`). Binary formats keep their own errors (their data names no
//! fields). `TimeWindow` carries its running sums as they are, checked
//! against the values on the way in: sums taken afresh from the values
//! would round differently from sums that saw every value pass through.
//! `MovingAverage`, `MovingVariance` and `MovingStats` (one engine, one
//! serialized form) take their exact integer sums afresh, which gives
//! them exactly; off them, they carry their compensated sums as
//! `TimeWindow` does. The exact sums themselves ([`ExactSums`],
//! [`ExactCoSums`], [`GroupedCoSums`], each group with its pending rows
//! added in) carry their integers as decimal strings, checked against
//! the bounds the integers of finite values keep.
//!
//! ```
//! # #[cfg(feature = "serde")]
//! # fn main() -> Result<(), momenta::Error> {
//! use momenta::{MovingAverage, Variance};
//!
//! let mut w = MovingAverage::<f64>::new(3)?;
//! for x in [1e6 + 0.1, f64::NAN, 2e6] {
//!     w.push(x);
//! }
//! let json = serde_json::to_string(&w).unwrap();
//! assert!(json.contains(r#""values":["1000000.1","NaN","2000000.0"]"#));
//! let mut back: MovingAverage<f64> = serde_json::from_str(&json).unwrap();
//! for x in [3e6, 4e6, 5e6 + 0.3] {
//!     assert_eq!(back.push(x).to_bits(), w.push(x).to_bits());
//! }
//!
//! // The earlier form, floats as numbers, still restores.
//! let v: Variance<f64> =
//!     serde_json::from_str(r#"{"count":2,"shift":1.0,"offset":1.0,"m2":2.0}"#).unwrap();
//! assert_eq!(v.population_variance(), Some(1.0));
//!
//! // A field that cannot be read is named, with what it holds.
//! let e = serde_json::from_str::<Variance<f64>>(
//!     r#"{"count":2,"shift":"1.0","offset":"one","m2":"2.0"}"#,
//! )
//! .unwrap_err();
//! assert!(e.to_string().starts_with(r#"offset: cannot read "one" as f64"#));
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "serde"))]
//! # fn main() {}
//! ```
//!
//! # Cargo features
//!
//! - `std` (default): `std::error::Error` for [`Error`], and runtime CPU
//!   feature detection so the kernels use AVX2/FMA where present.
//! - `serde` (default): `Serialize`/`Deserialize` for every accumulator,
//!   validated on the way in and lossless in every format
//!   ([Checkpoints](#checkpoints)). The serialized forms (for the mergeable
//!   types, their plain `to_parts` data) are tested against committed
//!   fixtures.
//! - `rayon` (default, implies `std`): parallel slice and per-channel
//!   reductions, `FromParallelIterator` and `ParallelExtend`.
//! - `half`: slices of `half::f16` and `half::bf16` in every slice and
//!   per-channel kernel ([`Element`]), widened exactly (F16C at run time);
//!   the normalization layers' outputs and `dx` in them too, rounded once
//!   from `f64` ([`Element::narrow`]).
//! - `ndarray`: `BatchStats::compute_axis`, per-channel statistics of an
//!   `ndarray` view along any axis, and every normalization layer's
//!   statistics, output and backward pass on arrays and views
//!   (`statistics_array`, `normalize_array`, `backward_array`).
//! - `mpi` (implies `std` and `serde`): `momenta::mpi::all_merge`, any
//!   mergeable statistic across processes over MPI (rsmpi; needs an MPI
//!   library and libclang to build).
//!
//! # `no_std`
//!
//! With default features off the crate is `#![no_std]` and needs only
//! `alloc`; floating-point functions come from `libm` through num-traits.
#![no_std]
#![deny(unsafe_code)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]
#![warn(clippy::pedantic)]
#![cfg_attr(
    test,
    allow(
        clippy::float_cmp,
        clippy::many_single_char_names,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_lossless,
        clippy::semicolon_if_nothing_returned,
        clippy::needless_range_loop,
        clippy::explicit_iter_loop,
        clippy::needless_for_each,
        reason = "unit tests compare floats exactly on purpose and favour the plainest arithmetic"
    )
)]
#![allow(
    clippy::cast_precision_loss,
    reason = "counts become floats in every statistic; past 2^53 they round, as documented on `count()`"
)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod accumulator;
#[cfg(feature = "serde")]
mod checkpoint;
mod cumulative;
mod error;
mod exact;
mod exponential;
mod float;
mod kernels;
mod moments;
mod nan_policy;
pub mod norm;
mod parallel;
mod series;
mod windows;

/// The generator and references the tests share (`tests/support`).
#[cfg(test)]
#[path = "../tests/support/mod.rs"]
mod test_support;

/// The public enums that may grow are `#[non_exhaustive]`: outside the
/// crate, a `match` on one needs a wildcard arm. Each of these matches
/// lists every variant there is today and no wildcard, so none compiles.
///
/// ```compile_fail
/// fn name(m: momenta::Momentum<f64>) -> u8 {
///     match m {
///         momenta::Momentum::Decay(_) => 0,
///         momenta::Momentum::Factor(_) => 1,
///         momenta::Momentum::Cumulative => 2,
///         momenta::Momentum::HalfLife(_) => 3,
///     }
/// }
/// ```
///
/// ```compile_fail
/// fn name(i: momenta::Interpolation) -> u8 {
///     use momenta::Interpolation::*;
///     match i {
///         Linear => 0,
///         Lower => 1,
///         Higher => 2,
///         Nearest => 3,
///         Midpoint => 4,
///     }
/// }
/// ```
///
/// ```compile_fail
/// fn name(p: momenta::NanPolicy) -> u8 {
///     match p {
///         momenta::NanPolicy::Propagate => 0,
///         momenta::NanPolicy::Skip => 1,
///         momenta::NanPolicy::Gap => 2,
///     }
/// }
/// ```
///
/// ```compile_fail
/// fn name(c: momenta::norm::VarianceCorrection) -> u8 {
///     use momenta::norm::VarianceCorrection::*;
///     match c {
///         Biased => 0,
///         Unbiased => 1,
///         UnbiasedClamped => 2,
///     }
/// }
/// ```
///
/// With a wildcard arm, it does:
///
/// ```
/// let name = match momenta::NanPolicy::Skip {
///     momenta::NanPolicy::Propagate => "propagate",
///     momenta::NanPolicy::Skip => "skip",
///     _ => "another",
/// };
/// assert_eq!(name, "skip");
/// ```
mod non_exhaustive_enums {}

pub use accumulator::{Accumulator, Merge};
pub use cumulative::{
    Covariance, CovarianceParts, Kurtosis, KurtosisParts, Mean, MeanParts, MinMax, MinMaxParts,
    Skewness, SkewnessParts, Variance, VarianceParts, WeightedMean, WeightedMeanParts,
    WeightedVariance, WeightedVarianceParts,
};
pub use error::{Error, ErrorKind};
pub use exact::{ExactCoSums, ExactSums, GroupedCoSums};
pub use exponential::{Ema, EwCovariance, EwVariance, Momentum};
pub use float::{Element, Float};
pub use kernels::FromSlice;
pub use nan_policy::NanPolicy;
#[cfg(feature = "mpi")]
pub use parallel::mpi;
pub use windows::{
    Closed, Interpolation, MovingAverage, MovingMinMax, MovingQuantile, MovingStats,
    MovingVariance, TimeQuantile, TimeWindow,
};

/// The normalization layers' first name: every path through it
/// (`momenta::batchnorm::BatchStats`, …) is the same item as through
/// [`norm`], which holds BatchNorm and the other normalization layers.
///
/// ```
/// assert_eq!(
///     momenta::batchnorm::Layout::nc(2, 3)?,
///     momenta::norm::Layout::nc(2, 3)?,
/// );
/// # Ok::<(), momenta::Error>(())
/// ```
pub use norm as batchnorm;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The "from pandas and polars" page: every example, checked against
/// values recorded from pandas, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../docs/PANDAS.md")]
struct PandasDoctests;

/// The normalization page: the backward pass and the other normalization
/// layers' examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/NORMALIZATION.md")]
struct NormalizationDoctests;
