//! What the tests share: one seeded generator and the reference
//! computations every accuracy test compares against.
//!
//! Used by the integration tests (`tests/momenta`), by the crate's unit
//! tests and by the benches, each through a `#[path]` module. It needs only
//! `core` and `alloc`, so it compiles inside the `no_std` crate too; its
//! `long` module (the sizes of the long sweeps) needs `std` and comes with
//! the `std` feature.

#![allow(dead_code, reason = "each user takes a part of it")]
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    reason = "test data: the casts are of small integers on purpose"
)]

use alloc::vec::Vec;

/// The sizes of the long sweeps (`MOMENTA_LONG_TESTS`).
#[cfg(feature = "std")]
pub mod long;

/// Exact fixed-point sums of any finite doubles.
pub mod fixed;

/// Values in one block of the kernels' slice reductions, whatever their
/// type. Hostile data puts its outliers at multiples of it, where blocks
/// start; a unit test checks the number against the kernels' own.
pub const BLOCK_F64: usize = 65536;

/// splitmix64: a tiny deterministic generator.
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
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

    /// A uniform value in `[-1, 1)`, a multiple of 2⁻⁵².
    pub fn signed_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
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

/// Neumaier's compensated sum: exact to about one rounding of the result
/// where a plain sum of 10⁵ terms carries 10⁻¹⁴ of rounding or more,
/// as much as the bounds some tests hold the kernels to.
pub fn compensated_sum(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (mut sum, mut c) = (0.0_f64, 0.0_f64);
    for x in xs {
        let t = sum + x;
        c += if sum.abs() >= x.abs() {
            (sum - t) + x
        } else {
            (x - t) + sum
        };
        sum = t;
    }
    sum + c
}

/// The naive two-pass statistics in `f64`: the mean by a plain sum, then
/// M2 = Σ(x − mean)².
pub fn two_pass(xs: &[f64]) -> (f64, f64) {
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    (mean, xs.iter().map(|x| (x - mean) * (x - mean)).sum())
}

/// `|a − b| / |b|`.
pub fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

/// Runs `f` on a rayon pool of `threads` threads.
#[cfg(feature = "rayon")]
pub fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
        .install(f)
}

/// Exact sums of integers `k` for data `base + k·2^-bits`:
/// mean = base + Σk/(n·2^bits), M2 = (nΣk² − (Σk)²)/(n·2^(2·bits)).
#[derive(Clone, Copy, Default)]
pub struct Exact {
    pub n: u128,
    pub sum: u128,
    pub sum_sq: u128,
}

impl Exact {
    /// Counts one more `k`.
    pub fn add(&mut self, k: u64) {
        self.n += 1;
        self.sum += u128::from(k);
        self.sum_sq += u128::from(k) * u128::from(k);
    }

    /// M2, rounded once.
    pub fn m2(&self, bits: i32) -> f64 {
        let num = self.n * self.sum_sq - self.sum * self.sum;
        num as f64 / self.n as f64 / 2f64.powi(2 * bits)
    }

    /// mean − base, rounded once.
    pub fn mean_offset(&self, bits: i32) -> f64 {
        self.sum as f64 / self.n as f64 / 2f64.powi(bits)
    }
}

/// `n` values `1e9 + k·2^-20` with `k` uniform in `[0, 2^20)` (so
/// `x ∈ 1e9 + [0, 1)`), and the exact sums of the `k`.
pub fn big_offset_data(n: usize, seed: u64) -> (Vec<f64>, Exact) {
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

/// An NCHW tensor's values (`n` samples, `c` channels, `hw` positions) in
/// NHWC order.
pub fn to_nhwc<T: Copy>(xs: &[T], n: usize, c: usize, hw: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(xs.len());
    for s in 0..n {
        for p in 0..hw {
            for ch in 0..c {
                out.push(xs[(s * c + ch) * hw + p]);
            }
        }
    }
    out
}

/// How far `got` is from the exact mean of `n` values whose sum, scaled
/// by `2^bits`, is the integer `sum`: `got − sum/(n·2^bits)` in units in
/// the last place of `got`, from exact integer arithmetic (only the final
/// quotient is rounded). `got` must be finite and non-zero.
pub fn ulps_from_mean(got: f64, sum: i128, n: u64, bits: i32) -> f64 {
    assert!(got.is_finite() && got != 0.0, "{got}");
    let raw = got.to_bits();
    let field = ((raw >> 52) & 0x7ff) as i32;
    let fraction = (raw & ((1 << 52) - 1)) as i128;
    // got = m · 2^e, with |m| < 2^53.
    let (m, e) = if field == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), field - 1075)
    };
    let m = if got < 0.0 { -m } else { m };
    let n = i128::from(n);
    let t = e + bits;
    let power = |s: i32| {
        1i128
            .checked_shl(s as u32)
            .filter(|p| *p > 0)
            .expect("in range")
    };
    // (got − sum/(n·2^bits)) / 2^e = (m·n·2^t − sum) / (n·2^t).
    if t >= 0 {
        let num = m * n * power(t) - sum;
        num as f64 / (n * power(t)) as f64
    } else {
        let num = m * n - sum * power(-t);
        num as f64 / n as f64
    }
}

/// A double-double `hi + lo` (Dekker 1971; Knuth's two-sum): about 106
/// bits, for references that must be far more accurate than the `f64`
/// result they judge. Sums and products of two doubles are exact; a
/// quotient or square root is within about 2⁻¹⁰⁴ of its value. Plain
/// arithmetic only (no FMA), so it compiles for `no_std` too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

impl Dd {
    /// `x` exactly.
    pub fn new(x: f64) -> Self {
        Self { hi: x, lo: 0.0 }
    }

    /// `a + b` exactly, as the rounded sum and its error.
    fn two_sum(a: f64, b: f64) -> Self {
        let s = a + b;
        let t = s - a;
        Self {
            hi: s,
            lo: (a - (s - t)) + (b - t),
        }
    }

    /// Veltkamp's split of `a` into two halves of 26 bits.
    fn split(a: f64) -> (f64, f64) {
        let c = 134_217_729.0 * a; // 2²⁷ + 1
        let hi = c - (c - a);
        (hi, a - hi)
    }

    /// `a · b` exactly (barring overflow and underflow).
    fn two_prod(a: f64, b: f64) -> Self {
        let p = a * b;
        let ((ah, al), (bh, bl)) = (Self::split(a), Self::split(b));
        Self {
            hi: p,
            lo: ((ah * bh - p) + ah * bl + al * bh) + al * bl,
        }
    }

    fn renormalize(hi: f64, lo: f64) -> Self {
        Self::two_sum(hi, lo)
    }

    pub fn add(self, o: Self) -> Self {
        let s = Self::two_sum(self.hi, o.hi);
        let t = Self::two_sum(self.lo, o.lo);
        let s = Self::renormalize(s.hi, s.lo + t.hi);
        Self::renormalize(s.hi, s.lo + t.lo)
    }

    pub fn neg(self) -> Self {
        Self {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    pub fn mul(self, o: Self) -> Self {
        let p = Self::two_prod(self.hi, o.hi);
        Self::renormalize(p.hi, p.lo + (self.hi * o.lo + self.lo * o.hi))
    }

    /// Times a power of two (exact).
    pub fn scale(self, power_of_two: f64) -> Self {
        Self {
            hi: self.hi * power_of_two,
            lo: self.lo * power_of_two,
        }
    }

    pub fn div(self, o: Self) -> Self {
        // Two steps of long division.
        let q1 = self.hi / o.hi;
        let r = self.add(o.mul(Self::new(q1)).neg());
        let q2 = r.hi / o.hi;
        let r = r.add(o.mul(Self::new(q2)).neg());
        let q3 = r.hi / o.hi;
        Self::two_sum(q1, q2).add(Self::new(q3))
    }

    /// The square root of a positive value.
    pub fn sqrt(self) -> Self {
        // One Newton step from the f64 root: s + (x − s²)/(2s).
        let s = num_traits::Float::sqrt(self.hi);
        let r = self.add(Self::two_prod(s, s).neg());
        Self::two_sum(s, r.hi / (2.0 * s))
    }

    /// The nearest `f64`.
    pub fn to_f64(self) -> f64 {
        self.hi + self.lo
    }

    /// `|x − self|` in units of `unit`, with the difference taken in
    /// double-double (so the reference's own rounding does not count).
    pub fn distance(self, x: f64, unit: f64) -> f64 {
        let d = Self::new(x).add(self.neg());
        (d.hi + d.lo).abs() / unit
    }
}

/// The exact forward and backward pass of a normalization layer, to
/// double-double rounding (about 2⁻¹⁰⁴), on the values as given: value
/// `i` belongs to statistics group `group[i]` and takes the affine
/// parameters `gamma[param[i]]`, `beta[param[i]]`.
pub struct ExactNorm {
    /// `y = x̂·γ + β`, with `x̂ = (x − μ)/√(σ² + eps)` per group.
    pub y: Vec<Dd>,
    /// `dx = (ĝ − Σĝ/n − x̂·Σĝx̂/n)/√(σ² + eps)`, `ĝ = γ·g`.
    pub dx: Vec<Dd>,
    /// `dγ = Σg·x̂` per parameter.
    pub dgamma: Vec<Dd>,
    /// `dβ = Σg` per parameter.
    pub dbeta: Vec<Dd>,
}

/// See [`ExactNorm`]: `x` the input, `g` the output gradient, the mean
/// and biased variance of each group summed in double-double.
pub fn exact_norm(
    x: &[f64],
    g: &[f64],
    group: &[usize],
    param: &[usize],
    gamma: &[f64],
    beta: &[f64],
    eps: f64,
) -> ExactNorm {
    let zero = Dd::new(0.0);
    let groups = group.iter().max().map_or(0, |m| m + 1);
    let mut members: Vec<Vec<usize>> = (0..groups).map(|_| Vec::new()).collect();
    for (i, &k) in group.iter().enumerate() {
        members[k].push(i);
    }
    let mut out = ExactNorm {
        y: alloc::vec![zero; x.len()],
        dx: alloc::vec![zero; x.len()],
        dgamma: alloc::vec![zero; gamma.len()],
        dbeta: alloc::vec![zero; gamma.len()],
    };
    for idx in &members {
        if idx.is_empty() {
            continue;
        }
        let n = Dd::new(idx.len() as f64);
        let mean = idx.iter().fold(zero, |s, &i| s.add(Dd::new(x[i]))).div(n);
        let d: Vec<Dd> = idx.iter().map(|&i| Dd::new(x[i]).add(mean.neg())).collect();
        let var = d.iter().fold(zero, |s, &v| s.add(v.mul(v))).div(n);
        let rstd = Dd::new(1.0).div(var.add(Dd::new(eps)).sqrt());
        let xhat: Vec<Dd> = d.iter().map(|v| v.mul(rstd)).collect();
        let ghat: Vec<Dd> = idx
            .iter()
            .map(|&i| Dd::new(gamma[param[i]]).mul(Dd::new(g[i])))
            .collect();
        let a = ghat.iter().fold(zero, |s, &v| s.add(v)).div(n);
        let b = ghat
            .iter()
            .zip(&xhat)
            .fold(zero, |s, (&u, &v)| s.add(u.mul(v)))
            .div(n);
        for (k, &i) in idx.iter().enumerate() {
            let p = param[i];
            out.y[i] = xhat[k].mul(Dd::new(gamma[p])).add(Dd::new(beta[p]));
            out.dx[i] = ghat[k].add(a.neg()).add(xhat[k].mul(b).neg()).mul(rstd);
            out.dbeta[p] = out.dbeta[p].add(Dd::new(g[i]));
            out.dgamma[p] = out.dgamma[p].add(Dd::new(g[i]).mul(xhat[k]));
        }
    }
    out
}
