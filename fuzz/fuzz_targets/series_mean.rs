//! `MovingStats::mean_series` and its four variance and deviation series
//! against their push loops, bit for bit, on long
//! slices the input describes in a few bytes: stretches of raw bits (NaN
//! payloads, ±∞, subnormals, MAX), of `1e6 + U(0, 1)`, of whole numbers,
//! of values spread over a chosen number of binades, of large values on a
//! coarse grid beside fine ones (ties far above the grid), and of one
//! repeated value; a window of 1 to 1200; the slice cut into pieces
//! anywhere.
//!
//! After the series: every value is the push loop's (the correctly rounded
//! statistic from exact sums, whatever way the series took), the window
//! holds the push loop's values, and 64 later pushes read the same bits.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use momenta::MovingStats;

#[derive(Arbitrary, Debug)]
struct Input {
    /// The statistic (`% 5`): the mean, the sample and population
    /// variances, the sample and population deviations.
    stat: u8,
    window: u16,
    /// Values in all: `len % 24_000`.
    len: u16,
    seed: u64,
    /// A kind and its parameter for each stretch of 700 values, in turn.
    stretches: Vec<(u8, u16)>,
    /// Piece lengths (`% 9000`), in turn, until the values run out.
    cuts: Vec<u16>,
}

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1_u64 << 53) as f64
    }
}

fn value(rng: &mut Rng, kind: u8, param: u16) -> f64 {
    match kind % 6 {
        0 => f64::from_bits(rng.next()),
        1 => 1e6 + rng.unit(),
        2 => (rng.next() % 2001) as f64 - 1000.0,
        // Spread over `param % 100` binades around 1.
        3 => {
            let span = i32::from(param % 100);
            let e = (rng.next() % (span as u64 + 1)) as i32 - span / 2;
            (1.0 + rng.unit()) * 2f64.powi(e)
        }
        // Mostly large values on a coarse grid, now and then a fine one.
        4 => {
            if rng.next() % 25 == 0 {
                1.0 + (rng.next() % 1024) as f64 * f64::EPSILON
            } else {
                2f64.powi(i32::from(param % 48)) + (rng.next() % 1024) as f64 * 2f64.powi(-11)
            }
        }
        _ => f64::from(param) - 30_000.0,
    }
}

fuzz_target!(|input: Input| {
    if input.stretches.is_empty() {
        return;
    }
    let window = 1 + usize::from(input.window) % 1200;
    let n = usize::from(input.len) % 24_000;
    let mut rng = Rng(input.seed);
    let xs: Vec<f64> = (0..n)
        .map(|i| {
            let (kind, param) = input.stretches[(i / 700) % input.stretches.len()];
            value(&mut rng, kind, param)
        })
        .collect();
    type Read = fn(&MovingStats<f64>) -> Option<f64>;
    type Series = fn(&mut MovingStats<f64>, &[f64]) -> Vec<f64>;
    let (read, series): (Read, Series) = match input.stat % 5 {
        0 => (MovingStats::mean, MovingStats::mean_series),
        1 => (
            MovingStats::sample_variance,
            MovingStats::sample_variance_series,
        ),
        2 => (
            MovingStats::population_variance,
            MovingStats::population_variance_series,
        ),
        3 => (
            MovingStats::sample_std_dev,
            MovingStats::sample_std_dev_series,
        ),
        _ => (
            MovingStats::population_std_dev,
            MovingStats::population_std_dev_series,
        ),
    };
    let mut pushed = MovingStats::new(window).unwrap();
    let want: Vec<u64> = xs
        .iter()
        .map(|&x| {
            pushed.push(x);
            // NaN until ready, as the series shows it.
            read(&pushed).unwrap_or(f64::NAN).to_bits()
        })
        .collect();
    let mut sliced = MovingStats::new(window).unwrap();
    let mut got = Vec::with_capacity(n);
    let (mut at, mut cut) = (0, 0);
    while at < n {
        let piece = input
            .cuts
            .get(cut)
            .map_or(n - at, |&c| usize::from(c) % 9000)
            .min(n - at);
        cut += 1;
        got.extend(series(&mut sliced, &xs[at..at + piece]));
        at += piece;
    }
    if let Some(i) = (0..n).find(|&i| got[i].to_bits() != want[i]) {
        panic!(
            "window {window}, statistic {}: value {i} is {:e} by the series, {:e} by the push loop",
            input.stat % 5,
            got[i],
            f64::from_bits(want[i])
        );
    }
    // The same values, bit for bit (NaN too, which `==` would not match).
    assert!(
        sliced
            .iter()
            .map(f64::to_bits)
            .eq(pushed.iter().map(f64::to_bits)),
        "window {window}: the window after the series"
    );
    for _ in 0..64 {
        let kind = (rng.next() % 6) as u8;
        let x = value(&mut rng, kind, 7);
        pushed.push(x);
        sliced.push(x);
        assert_eq!(
            read(&pushed).map(f64::to_bits),
            read(&sliced).map(f64::to_bits),
            "window {window}: a push after the series"
        );
    }
});
