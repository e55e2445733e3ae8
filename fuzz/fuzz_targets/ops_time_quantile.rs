//! Sequences of timestamped pushes into a `TimeQuantile<f64>` with a span,
//! a `q`, ends (`Closed`) and a NaN policy drawn from the input: steps of
//! time of zero (equal times, the samples that wait while the window is
//! open on the right), small and large (a gap that empties the window),
//! bursts of one value at one time, resets and checkpoint round trips.
//!
//! After every push the target compares the quantile with a sort of the
//! samples a naive model keeps inside the window's ends, bit for bit
//! (linear interpolation, pandas' reading), and the samples it reports
//! with the model's.
#![no_main]

use std::collections::VecDeque;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use momenta::{Closed, NanPolicy, TimeQuantile};
use momenta_fuzz::{Same, round_trip};

#[derive(Arbitrary, Debug)]
enum Op {
    /// A step of `dt / 8` (0: the same time) and a value.
    Push(u8, f64),
    /// Small integers: ties.
    PushSmall(u8, i8),
    /// `n` samples of one value at one time, after a step of 1.
    Burst(u8, i8),
    /// A step of `1000 + dt` (past any span), then a value.
    Gap(u8, f64),
    Reset,
    RoundTrip,
}

#[derive(Arbitrary, Debug)]
struct Input {
    span: u8,
    q: u8,
    closed: u8,
    skip_nan: bool,
    ops: Vec<Op>,
}

/// Whether a sample at `u` is inside the window at `t`.
fn inside(closed: Closed, u: f64, t: f64, span: f64) -> bool {
    let from = t - span;
    match closed {
        Closed::Right => u > from && u <= t,
        Closed::Left => u >= from && u < t,
        Closed::Both => u >= from && u <= t,
        _ => u > from && u < t,
    }
}

/// The `q`-quantile of the values that are not NaN, read linearly at the
/// rank `q·(m − 1)` (pandas); NaN without one.
fn naive(values: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let h = q * (v.len() - 1) as f64;
    let i = h.floor() as usize;
    let frac = h - i as f64;
    if frac == 0.0 {
        return v[i];
    }
    let (lo, hi) = (v[i], v[i + 1]);
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) if (hi - lo).is_finite() => lo + (hi - lo) * frac,
        (true, true) => lo * (1.0 - frac) + hi * frac,
        _ => lo + hi,
    }
}

fuzz_target!(|input: Input| {
    let span = f64::from(1 + input.span % 32) / 4.0;
    let q = f64::from(input.q) / 255.0;
    let closed =
        [Closed::Right, Closed::Left, Closed::Both, Closed::Neither][usize::from(input.closed % 4)];
    let policy = if input.skip_nan {
        NanPolicy::Skip
    } else {
        NanPolicy::Propagate
    };
    let mut m = TimeQuantile::new(span, q)
        .expect("a positive span and q in [0, 1]")
        .with_closed(closed)
        .with_nan_policy(policy);
    // Every sample since the reset that may still be inside.
    let mut model: VecDeque<(f64, f64)> = VecDeque::new();
    let mut t = 0.0_f64;
    let mut push = |m: &mut TimeQuantile<f64>, model: &mut VecDeque<(f64, f64)>, t: f64, x: f64| {
        let got = m.push_at(t, x).expect("times never decrease");
        model.push_back((t, x));
        while model.front().is_some_and(|&(u, _)| u < t - span) {
            model.pop_front();
        }
        let window: Vec<(f64, f64)> = model
            .iter()
            .copied()
            .filter(|&(u, _)| inside(closed, u, t, span))
            .collect();
        let values: Vec<f64> = window.iter().map(|&(_, x)| x).collect();
        let want = if policy == NanPolicy::Propagate && values.iter().any(|x| x.is_nan()) {
            f64::NAN
        } else {
            naive(&values, q)
        };
        assert!(got.same(want), "{got} against {want} at {t}, {values:?}");
        assert_eq!(m.len(), window.len(), "samples at {t}");
        assert!(
            m.iter()
                .zip(&window)
                .all(|(a, b)| a.0 == b.0 && a.1.same(b.1)),
            "the samples reported at {t}"
        );
    };
    for op in input.ops.iter().take(2000) {
        match *op {
            Op::Push(dt, x) => {
                t += f64::from(dt) / 8.0;
                push(&mut m, &mut model, t, x);
            }
            Op::PushSmall(dt, k) => {
                t += f64::from(dt) / 8.0;
                push(&mut m, &mut model, t, f64::from(k));
            }
            Op::Burst(n, k) => {
                t += 1.0;
                for _ in 0..n {
                    push(&mut m, &mut model, t, f64::from(k));
                }
            }
            Op::Gap(dt, x) => {
                t += 1000.0 + f64::from(dt);
                push(&mut m, &mut model, t, x);
            }
            Op::Reset => {
                m.reset();
                model.clear();
                t = 0.0;
            }
            Op::RoundTrip => {
                m = round_trip(&m, |a, b| {
                    a.len() == b.len()
                        && a.last_time() == b.last_time()
                        && a.iter()
                            .zip(b.iter())
                            .all(|(x, y)| x.0 == y.0 && x.1.same(y.1))
                });
            }
        }
    }
});
