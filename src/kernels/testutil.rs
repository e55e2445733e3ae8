//! Seeded data and exact references for the kernel tests.

/// splitmix64: a tiny deterministic generator.
pub(crate) struct SplitMix(pub(crate) u64);

impl SplitMix {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[-1, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// Exact sums of integers `k` for data `base + k·2^-bits`:
/// mean = base + Σk/(n·2^bits), M2 = (nΣk² − (Σk)²)/(n·2^(2·bits)).
#[derive(Clone, Copy, Default)]
pub(crate) struct Exact {
    pub(crate) n: u128,
    pub(crate) sum: u128,
    pub(crate) sum_sq: u128,
}

impl Exact {
    pub(crate) fn add(&mut self, k: u64) {
        self.n += 1;
        self.sum += u128::from(k);
        self.sum_sq += u128::from(k) * u128::from(k);
    }

    /// M2, rounded once.
    pub(crate) fn m2(&self, bits: i32) -> f64 {
        let num = self.n * self.sum_sq - self.sum * self.sum;
        num as f64 / self.n as f64 / 2f64.powi(2 * bits)
    }

    /// mean − base, rounded once.
    pub(crate) fn mean_offset(&self, bits: i32) -> f64 {
        self.sum as f64 / self.n as f64 / 2f64.powi(bits)
    }
}

/// `n` values `1e9 + k·2^-20` with `k` uniform in `[0, 2^20)` (so
/// `x ∈ 1e9 + [0, 1)`), and the exact sums of the `k`.
pub(crate) fn big_offset_data(n: usize, seed: u64) -> (alloc::vec::Vec<f64>, Exact) {
    let mut rng = SplitMix(seed);
    let mut exact = Exact::default();
    let xs = (0..n)
        .map(|_| {
            let k = rng.next_u64() >> 44;
            exact.add(k);
            1e9 + k as f64 / (1u64 << 20) as f64
        })
        .collect();
    (xs, exact)
}

pub(crate) fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}
