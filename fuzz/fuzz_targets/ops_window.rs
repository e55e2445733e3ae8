//! Sequences of operations on a `MovingAverage<f64>`, a
//! `MovingVariance<f64>`, a `MovingMinMax<f64>` and a median
//! `MovingQuantile<f64>` with a window drawn from the input: mostly 1..=64,
//! sometimes anything up to `usize::MAX` (which must cost nothing until
//! values arrive), and 0, which must be an error.
//!
//! After every operation the target compares with a naive model that keeps
//! the recent values in a `VecDeque`: the contents (bit for bit), the
//! length, fullness; the mean against a compensated sum over the window,
//! within a tolerance relative to the values in the window (whatever has
//! passed through before); the population variance against the two-pass
//! formula, within a tolerance relative to the same values; the NaN/±∞ rules; a variance
//! that is never negative; and the minimum, maximum and median against a
//! sort of the window, bit for bit; the median series of a slice against
//! the push loop's, bit for bit.
#![no_main]

use std::collections::VecDeque;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use momenta::{MovingAverage, MovingMinMax, MovingQuantile, MovingVariance};
use momenta_fuzz::{Same, round_trip};

#[derive(Arbitrary, Debug)]
enum WindowSpec {
    Small(u8),
    Any(usize),
    Max,
}

#[derive(Arbitrary, Debug)]
enum Op {
    Push(f64),
    /// Small integers: exact sums, exact cancellations.
    PushSmall(i8),
    Extend(Vec<f64>),
    /// The median series of the values against the push loop's, bit
    /// for bit; the others take the values as `Extend` does.
    Series(Vec<f64>),
    Reset,
    RoundTrip,
}

#[derive(Arbitrary, Debug)]
struct Input {
    window: WindowSpec,
    ops: Vec<Op>,
}

const TAME: f64 = 1e150;

struct Model {
    window: usize,
    /// The last `2·window` values pushed since the reset: the window, and
    /// the values an accumulator's shift may have been taken from.
    recent: VecDeque<f64>,
    /// Values pushed since the reset (saturating).
    pushed: usize,
}

impl Model {
    fn push(&mut self, x: f64) {
        if self.recent.len() == self.window.saturating_mul(2) {
            self.recent.pop_front();
        }
        self.recent.push_back(x);
        self.pushed = self.pushed.saturating_add(1);
    }

    fn len(&self) -> usize {
        self.pushed.min(self.window)
    }

    fn contents(&self) -> impl Iterator<Item = f64> + '_ {
        self.recent
            .iter()
            .skip(self.recent.len() - self.len())
            .copied()
    }
}

/// Neumaier's compensated sum: accurate to about an ulp of the result.
fn accurate_sum(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0_f64, 0.0_f64);
    for x in xs {
        let t = s + x;
        c += if s.abs() >= x.abs() {
            (s - t) + x
        } else {
            (x - t) + s
        };
        s = t;
    }
    s + c
}

fn same_contents<'a>(a: impl Iterator<Item = f64> + 'a, b: impl Iterator<Item = f64> + 'a) -> bool {
    let (a, b): (Vec<f64>, Vec<f64>) = (a.collect(), b.collect());
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.same(*y))
}

fn check(ma: &MovingAverage<f64>, mv: &MovingVariance<f64>, model: &Model) {
    let len = model.len();
    for (l, w, full, empty) in [
        (ma.len(), ma.window(), ma.is_full(), ma.is_empty()),
        (mv.len(), mv.window(), mv.is_full(), mv.is_empty()),
    ] {
        assert_eq!(l, len, "length");
        assert_eq!(w, model.window, "window");
        assert_eq!(full, len == model.window, "is_full");
        assert_eq!(empty, len == 0, "is_empty");
    }
    assert!(
        same_contents(ma.iter(), model.contents()),
        "MovingAverage contents"
    );
    assert!(
        same_contents(mv.iter(), model.contents()),
        "MovingVariance contents"
    );
    let (older, newer) = ma.as_slices();
    assert!(same_contents(
        older.iter().chain(newer).copied(),
        model.contents()
    ));
    let (older, newer) = mv.as_slices();
    assert!(same_contents(
        older.iter().chain(newer).copied(),
        model.contents()
    ));

    let mean = ma.mean();
    assert_eq!(mean.is_some(), len > 0);
    assert!(mean.same(mv.mean()), "{mean:?} vs {:?}", mv.mean());
    assert_eq!(mv.population_variance().is_some(), len > 0);
    assert_eq!(mv.sample_variance().is_some(), len > 1);
    for s in [
        mv.population_variance(),
        mv.sample_variance(),
        mv.population_std_dev(),
        mv.sample_std_dev(),
    ]
    .into_iter()
    .flatten()
    {
        assert!(s >= 0.0 || s.is_nan(), "negative spread {s}");
    }
    let Some(mean) = mean else { return };

    // Non-finite values are counted, not summed.
    let nan = model.contents().any(f64::is_nan);
    let pos = model.contents().any(|x| x == f64::INFINITY);
    let neg = model.contents().any(|x| x == f64::NEG_INFINITY);
    if nan || (pos && neg) {
        assert!(mean.is_nan(), "mean {mean} of a window with NaN or ±∞");
    } else if pos {
        assert_eq!(mean, f64::INFINITY);
    } else if neg {
        assert_eq!(mean, f64::NEG_INFINITY);
    }
    if nan || pos || neg {
        let var = mv.population_variance().unwrap();
        assert!(var.is_nan(), "variance {var} of a window with NaN or ±∞");
        return;
    }

    // Every value in the window is finite. The mean is within a few ulps
    // of the largest of them, whatever has passed through the window
    // before (huge values that have left included): the shift of the sums
    // is a value in the window, and the sums bound their own rounding.
    let n = len as f64;
    let in_window = model.contents().fold(0.0_f64, |m, x| m.max(x.abs()));
    // Values near the largest float would overflow the reference's own
    // sum: take it in a scale 2^-64 below (exact but for subnormals, far
    // below the tolerance).
    let exact_mean = if in_window > 1e280 {
        let (down, up) = (2.0_f64.powi(-64), 2.0_f64.powi(64));
        accurate_sum(model.contents().map(|x| x * down)) / n * up
    } else {
        accurate_sum(model.contents()) / n
    };
    let tol = 64.0 * f64::EPSILON * in_window + 4.0 * f64::from_bits(1);
    assert!(
        (mean - exact_mean).abs() <= tol,
        "mean {mean:e} vs {exact_mean:e} (tolerance {tol:e})"
    );
    // The variance's rounding is relative to the values in the window too,
    // and only checked while their squares are far from overflowing.
    let scale = in_window;
    if scale >= TAME {
        return;
    }
    let m2 = accurate_sum(
        model
            .contents()
            .map(|x| (x - exact_mean) * (x - exact_mean)),
    );
    let var = mv.population_variance().unwrap();
    let tol = 128.0 * f64::EPSILON * (n + 4.0) * scale * scale / n + 4.0 * f64::from_bits(1);
    assert!(
        var.is_finite() && (var - m2 / n).abs() <= tol,
        "variance {var:e} vs {:e} (tolerance {tol:e})",
        m2 / n
    );
}

/// The minimum, maximum and median against a sort of the window (−0
/// below +0), NaN while a NaN is in it.
fn check_order(mm: &MovingMinMax<f64>, mq: &MovingQuantile<f64>, model: &Model) {
    let mut sorted: Vec<f64> = model.contents().collect();
    assert!(
        same_contents(mm.iter(), sorted.iter().copied()),
        "MovingMinMax contents"
    );
    assert!(
        same_contents(mq.iter(), sorted.iter().copied()),
        "MovingQuantile contents"
    );
    if sorted.is_empty() {
        assert!(mm.min().is_none() && mm.max().is_none() && mq.quantile().is_none());
        return;
    }
    if sorted.iter().any(|x| x.is_nan()) {
        assert!(mm.min().unwrap().is_nan() && mm.max().unwrap().is_nan());
        assert!(mq.quantile().unwrap().is_nan());
        return;
    }
    sorted.sort_by(f64::total_cmp);
    let (lo, hi) = (sorted[0], sorted[sorted.len() - 1]);
    assert!(mm.min().same(Some(lo)), "min {:?} vs {lo}", mm.min());
    assert!(mm.max().same(Some(hi)), "max {:?} vs {hi}", mm.max());
    let n = sorted.len();
    let got = mq.quantile().unwrap();
    if n % 2 == 1 {
        assert!(
            Some(got).same(Some(sorted[n / 2])),
            "median {got} vs {}",
            sorted[n / 2]
        );
    } else {
        let (a, b) = (sorted[n / 2 - 1], sorted[n / 2]);
        if a.is_finite() && b.is_finite() && (b - a).is_finite() {
            assert_eq!(got, a + (b - a) * 0.5, "median of {a} and {b}");
        }
    }
}

fuzz_target!(|input: Input| {
    let window = match input.window {
        WindowSpec::Small(k) => 1 + usize::from(k % 64),
        WindowSpec::Any(w) => w,
        WindowSpec::Max => usize::MAX,
    };
    let (ma, mv) = (MovingAverage::new(window), MovingVariance::new(window));
    assert_eq!(ma.is_ok(), window > 0, "MovingAverage::new({window})");
    assert_eq!(mv.is_ok(), window > 0, "MovingVariance::new({window})");
    let (Ok(mut ma), Ok(mut mv)) = (ma, mv) else {
        assert!(MovingMinMax::<f64>::new(window).is_err());
        assert!(MovingQuantile::<f64>::median(window).is_err());
        return;
    };
    let mut mm = MovingMinMax::new(window).expect("window > 0");
    let mut mq = MovingQuantile::median(window).expect("window > 0");
    let mut model = Model {
        window,
        recent: VecDeque::new(),
        pushed: 0,
    };
    for op in &input.ops {
        match op {
            Op::Push(x) => {
                let m = ma.push(*x);
                mv.push(*x);
                mm.push(*x);
                let q = mq.push(*x);
                assert!(Some(q).same(mq.quantile()), "push returned {q}");
                model.push(*x);
                assert!(
                    Some(m).same(ma.mean()),
                    "push returned {m}, mean is {:?}",
                    ma.mean()
                );
            }
            Op::PushSmall(k) => {
                let x = f64::from(*k);
                ma.push(x);
                mv.push(x);
                mm.push(x);
                mq.push(x);
                model.push(x);
            }
            Op::Extend(xs) => {
                ma.extend_from_slice(xs);
                mv.extend_from_slice(xs);
                mm.extend_from_slice(xs);
                mq.extend_from_slice(xs);
                xs.iter().for_each(|&x| model.push(x));
            }
            Op::Series(xs) => {
                let mut pushed = mq.clone();
                let want: Vec<u64> = xs.iter().map(|&x| pushed.push(x).to_bits()).collect();
                let got: Vec<u64> = mq.quantile_series(xs).iter().map(|x| x.to_bits()).collect();
                assert!(got == want, "median series against the push loop");
                ma.extend_from_slice(xs);
                mv.extend_from_slice(xs);
                mm.extend_from_slice(xs);
                xs.iter().for_each(|&x| model.push(x));
            }
            Op::Reset => {
                ma.reset();
                mv.reset();
                mm.reset();
                mq.reset();
                model.recent.clear();
                model.pushed = 0;
            }
            Op::RoundTrip => {
                ma = round_trip(&ma, |a, b| {
                    a.window() == b.window() && same_contents(a.iter(), b.iter())
                });
                mv = round_trip(&mv, |a, b| {
                    a.window() == b.window() && same_contents(a.iter(), b.iter())
                });
                mm = round_trip(&mm, |a, b| {
                    a.window() == b.window() && same_contents(a.iter(), b.iter())
                });
                mq = round_trip(&mq, |a, b| {
                    a.window() == b.window() && same_contents(a.iter(), b.iter())
                });
            }
        }
        check(&ma, &mv, &model);
        check_order(&mm, &mq, &model);
    }
});
