//! Seeded data shared by the integration tests.

#![allow(dead_code, reason = "each test file uses a part of it")]

/// splitmix64: a tiny deterministic generator.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform value in `[0, 1)`, a multiple of 2⁻⁵³.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform integer in `[-2^20, 2^20)`.
    pub fn k20(&mut self) -> i64 {
        (self.next_u64() >> 43) as i64 - (1 << 20)
    }

    /// `n` values `offset + spread · U[0, 1)`.
    pub fn vec(&mut self, n: usize, offset: f64, spread: f64) -> Vec<f64> {
        (0..n).map(|_| offset + spread * self.unit()).collect()
    }
}
