//! Restore and go on: a stream of operations drawn from the input runs
//! once without a break, and again from a checkpoint taken at a position
//! the input picks, restored from JSON (serde_json with its default
//! features), from postcard and from CBOR. Every output after the
//! checkpoint must be the same, bit for bit — NaN payloads and the sign of
//! zero included — and the restored state must serialize as the saved one.
//!
//! Values come from raw bits, so every NaN payload, subnormal and infinity
//! reaches the states; times come from small steps with repeats and gaps.
//! Under the fuzzer the windows refresh their sums every 64 pushes, so
//! checkpoints land before, on and after a refresh.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use momenta::batchnorm::{BatchStats, BnConfig, Layout, RunningStats};
use momenta::{
    Covariance, Ema, EwCovariance, EwVariance, Kurtosis, Mean, Merge, MinMax, Momentum,
    MovingAverage, MovingMinMax, MovingQuantile, MovingVariance, NanPolicy, TimeWindow, Variance,
    WeightedVariance,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

#[derive(Arbitrary, Debug, Clone, Copy)]
struct Op {
    x: u64,
    y: u64,
    /// The time step, in quarters (0: the same time as before).
    dt: u8,
    /// Which operation, where a type has several.
    op: u8,
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// Which type, and its options.
    subject: u8,
    param: u8,
    /// The checkpoint's position (modulo the number of operations + 1).
    save_at: u16,
    ops: Vec<Op>,
}

/// An operation as the subjects take it.
#[derive(Clone, Copy, Debug)]
struct Step {
    x: f64,
    y: f64,
    t: f64,
    dt: f64,
    op: u8,
}

fn steps(ops: &[Op], small: bool) -> Vec<Step> {
    let mut t = 0.0;
    ops.iter()
        .map(|o| {
            let dt = if o.dt == 255 {
                1e6
            } else {
                f64::from(o.dt) / 4.0
            };
            t += dt;
            let value = |bits: u64| {
                if small {
                    // A value of the f32 types: its bits are the low half.
                    f64::from(f32::from_bits(bits as u32))
                } else {
                    f64::from_bits(bits)
                }
            };
            Step {
                x: value(o.x),
                y: value(o.y),
                t,
                dt,
                op: o.op,
            }
        })
        .collect()
}

type Out = Vec<u64>;

fn bits(o: &mut Out, x: Option<f64>) {
    o.push(x.map_or(1, f64::to_bits));
}

fn bits32(o: &mut Out, x: Option<f32>) {
    o.push(x.map_or(1 << 40, |x| u64::from(x.to_bits())));
}

fn json<T: Serialize>(t: &T) -> String {
    serde_json::to_string(t).expect("serializing never fails")
}

/// Runs `step` over `steps` from `start`, then from the state after
/// `save_at` steps restored from each format, and compares.
fn check<T>(start: T, steps: &[Step], save_at: u16, step: impl Fn(&mut T, Step, &mut Out))
where
    T: Clone + Serialize + DeserializeOwned,
{
    let k = usize::from(save_at) % (steps.len() + 1);
    let mut live = start;
    let mut saved = None;
    let mut outputs = Vec::with_capacity(steps.len());
    for (i, &s) in steps.iter().enumerate() {
        if i == k {
            saved = Some(live.clone());
        }
        let mut out = Out::new();
        step(&mut live, s, &mut out);
        outputs.push(out);
    }
    let saved = saved.unwrap_or(live);
    let text = json(&saved);
    let from_json: T =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON did not restore: {e}: {text}"));
    let bytes = postcard::to_allocvec(&saved).expect("postcard serializes every state");
    let from_postcard: T = postcard::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("postcard did not restore: {e}: {text}"));
    let mut cbor = Vec::new();
    ciborium::into_writer(&saved, &mut cbor).expect("CBOR serializes every state");
    let from_cbor: T = ciborium::from_reader(cbor.as_slice())
        .unwrap_or_else(|e| panic!("CBOR did not restore: {e}: {text}"));
    for (format, mut back) in [
        ("json", from_json),
        ("postcard", from_postcard),
        ("cbor", from_cbor),
    ] {
        assert_eq!(json(&back), text, "{format} changed the state");
        for (i, &s) in steps.iter().enumerate().skip(k) {
            let mut out = Out::new();
            step(&mut back, s, &mut out);
            assert_eq!(
                out, outputs[i],
                "restored from {format} after {k} steps, step {i} ({s:?}) differs: {text}"
            );
        }
    }
}

fn policy(param: u8) -> NanPolicy {
    match param % 3 {
        0 => NanPolicy::Propagate,
        1 => NanPolicy::Skip,
        _ => NanPolicy::Gap,
    }
}

fn momentum(param: u8) -> Momentum<f64> {
    match param % 4 {
        0 => Momentum::Factor(0.1),
        1 => Momentum::Decay(0.75),
        2 => Momentum::Cumulative,
        _ => Momentum::from_half_life(2.5).expect("a valid half-life"),
    }
}

fuzz_target!(|input: Input| {
    let Input {
        subject,
        param,
        save_at,
        ops,
    } = input;
    let p = param;
    let w = usize::from(p % 9) + 1;
    let f64s = steps(&ops, false);
    let f32s = steps(&ops, true);
    match subject % 16 {
        0 => check(Mean::<f64>::new(), &f64s, save_at, |m, s, o| {
            if s.op % 4 == 0 {
                m.merge(&Mean::from_slice(&[s.x, s.y]));
            } else {
                m.push(s.x);
            }
            o.push(m.count());
            bits(o, m.mean());
        }),
        1 => check(Variance::<f64>::new(), &f64s, save_at, |m, s, o| {
            if s.op % 4 == 0 {
                m.merge(&Variance::from_slice(&[s.x, s.y]));
            } else {
                m.push(s.x);
            }
            bits(o, m.mean());
            bits(o, m.population_variance());
            bits(o, m.sample_variance());
        }),
        2 => check(Kurtosis::<f32>::new(), &f32s, save_at, |m, s, o| {
            if s.op % 4 == 0 {
                m.merge(&Kurtosis::from_slice(&[s.x, s.y]));
            } else {
                m.push(s.x as f32);
            }
            bits32(o, m.mean());
            bits32(o, m.sample_variance());
            bits32(o, m.skewness());
            bits32(o, m.sample_kurtosis());
        }),
        3 => check(Covariance::<f64>::new(), &f64s, save_at, |c, s, o| {
            c.push(s.x, s.y);
            bits(o, c.mean_y());
            bits(o, c.sample_covariance());
            bits(o, c.correlation());
        }),
        4 => check(MinMax::<f64>::new(), &f64s, save_at, |m, s, o| {
            m.push(s.x);
            bits(o, m.min());
            bits(o, m.max());
        }),
        5 => check(WeightedVariance::<f64>::new(), &f64s, save_at, |m, s, o| {
            // The second value as a weight: most are invalid (an error that
            // changes nothing), the rest any size.
            o.push(u64::from(m.push(s.x, s.y.abs()).is_ok()));
            bits(o, m.mean());
            bits(o, m.population_variance());
            bits(o, m.reliability_variance());
        }),
        6 => {
            let e = Ema::<f64>::new(momentum(p))
                .expect("valid")
                .with_nan_policy(policy(p / 4));
            let e = if p & 0x80 == 0 {
                e
            } else {
                Ema::adjusted(momentum(p)).expect("valid")
            };
            check(e, &f64s, save_at, |e, s, o| {
                match s.op % 3 {
                    0 => e.push(s.x),
                    1 => o.push(u64::from(e.push_at(s.t, s.x).is_ok())),
                    _ => o.push(u64::from(e.push_after(s.dt, s.x).is_ok())),
                }
                bits(o, e.value());
            });
        }
        7 => {
            let e = EwVariance::<f64>::adjusted(momentum(p))
                .expect("valid")
                .with_nan_policy(policy(p / 4))
                .with_min_periods(usize::from(p % 3));
            check(e, &f64s, save_at, |e, s, o| {
                match s.op % 3 {
                    0 => e.push(s.x),
                    1 => o.push(u64::from(e.push_at(s.t, s.x).is_ok())),
                    _ => o.push(u64::from(e.push_after(s.dt, s.x).is_ok())),
                }
                bits(o, e.mean());
                bits(o, e.variance());
                bits(o, e.unbiased_variance());
                bits(o, e.z_score(s.y));
            });
        }
        8 => {
            let e = EwCovariance::<f64>::new(momentum(p)).expect("valid");
            check(e, &f64s, save_at, |e, s, o| {
                e.push(s.x, s.y);
                bits(o, e.covariance());
                bits(o, e.unbiased_covariance());
                bits(o, e.correlation());
            });
        }
        9 => {
            let a = MovingAverage::<f64>::new(w)
                .expect("valid")
                .with_nan_policy(policy(p / 16));
            check(a, &f64s, save_at, |a, s, o| {
                o.push(a.push(s.x).to_bits());
            });
        }
        10 => {
            let v = MovingVariance::<f64>::new(w)
                .expect("valid")
                .with_nan_policy(policy(p / 16));
            check(v, &f64s, save_at, |v, s, o| {
                v.push(s.x);
                bits(o, v.mean());
                bits(o, v.population_variance());
                bits(o, v.sample_variance());
            });
        }
        11 => {
            let v = MovingVariance::<f32>::new(w).expect("valid");
            check(v, &f32s, save_at, |v, s, o| {
                v.push(s.x as f32);
                bits32(o, v.mean());
                bits32(o, v.sample_variance());
            });
        }
        12 => {
            let m = MovingMinMax::<f64>::new(w)
                .expect("valid")
                .with_nan_policy(policy(p / 16));
            check(m, &f64s, save_at, |m, s, o| {
                m.push(s.x);
                bits(o, m.min());
                bits(o, m.max());
            });
        }
        13 => {
            let m = MovingQuantile::<f64>::new(w, f64::from(p % 5) / 4.0).expect("valid");
            check(m, &f64s, save_at, |m, s, o| {
                o.push(m.push(s.x).to_bits());
            });
        }
        14 => {
            let span = f64::from(p % 16) / 2.0 + 0.25;
            let tw = TimeWindow::<f64>::new(span)
                .expect("valid")
                .with_nan_policy(policy(p / 16));
            check(tw, &f64s, save_at, |w, s, o| {
                o.push(u64::from(w.push_at(s.t, s.x).is_ok()));
                bits(o, w.mean());
                bits(o, w.population_variance());
                bits(o, w.min());
                bits(o, w.max());
            });
        }
        _ => {
            let layout = Layout::nc(2, 1).expect("valid");
            let config = match p % 3 {
                0 => BnConfig::pytorch(),
                1 => BnConfig::keras(),
                _ => BnConfig::tf_fused(),
            };
            let start = (
                BatchStats::<f64>::new(1),
                RunningStats::<f64>::new(1, config),
            );
            check(start, &f64s, save_at, |(b, r), s, o| {
                let batch = BatchStats::compute(&[s.x, s.y], layout).expect("the shape fits");
                o.push(u64::from(b.try_merge(&batch).is_ok()));
                o.push(u64::from(r.update(&batch).is_ok()));
                o.extend(b.mean().iter().map(|x| x.to_bits()));
                o.extend(b.unbiased_variance().iter().map(|x| x.to_bits()));
                o.extend(r.mean().iter().map(|x| x.to_bits()));
                o.extend(r.var().iter().map(|x| x.to_bits()));
            });
        }
    }
});
