//! Normalization passes: every value of a tensor mapped to
//! `((x − hi)·scale + offset)·γ + β` in `f64` and rounded once to the
//! output's element type, one streaming pass from input to output.
//!
//! Two shapes:
//!
//! - **runs** ([`affine_runs`]): the tensor as consecutive runs of equal
//!   length, run `r` with entry `r mod n` of the `n` parameters — a layer
//!   norm's rows (one entry per row, and γ, β by position within the row),
//!   the channels of a channels-first tensor (one entry per channel,
//!   cycling over the samples);
//! - **lanes** ([`affine_lanes`]): the tensor as rows of `n` values, value
//!   `j` of every row with entry `j` of the parameters — a channels-last
//!   tensor.
//!
//! The arithmetic is the same in every build and in the same order (a
//! subtraction, a multiplication and an addition, then γ's multiplication
//! and β's addition, never fused), so every path gives the same bits: the
//! AVX2 loops only do it four values at a time and round to half
//! precision with vector instructions (`arch::x86_64::affine`).

pub(crate) use super::affine_params::{Affine, Pass, PerValue};
use super::arch::{self, detect};
use crate::Element;

/// Writes `out[i] = narrow(((x − hi)·scale + offset)·γ + β)` for every
/// whole run of `run` values of `xs` (and `out`, of the same length), run
/// `r` with entry `r mod params.len()` of `params`, and `γ`, `β` from
/// `per_value` by position within the run (absent: no multiplication, no
/// addition). Nothing is written when a parameter slice is empty or a
/// per-value slice shorter than a run. `pass` says how it writes and
/// reads ahead; the values are the same either way.
#[inline]
pub(crate) fn affine_runs<S: Element, O: Element>(
    xs: &[S],
    run: usize,
    params: Affine<'_>,
    per_value: PerValue<'_>,
    pass: Pass,
    out: &mut [O],
) {
    arch::affine_runs(detect(), xs, run, params, per_value, pass, out);
}

/// Outputs of at least this many bytes are written past the caches.
const STREAM_BYTES: usize = 8 << 20;

/// Whether a pass writing `out` (the whole output, of which a pass may
/// write a chunk at a time) writes it past the caches, by non-temporal
/// stores: when it is larger than the caches would keep anyway
/// ([`STREAM_BYTES`]). A plain store reads the line it writes from memory
/// first; past the caches it does not, and a normalization then moves
/// what a copy of the tensor moves (`memcpy` streams large copies too).
/// Below that the output stays in cache for whatever reads it next.
#[inline]
pub(crate) fn streams<O>(out: &[O]) -> bool {
    core::mem::size_of_val(out) >= STREAM_BYTES
}

/// Writes `out[i] = narrow((x − hi[j])·scale[j] + offset[j])` for value
/// `j` of every whole row of `params.len()` values of `xs` (and `out`);
/// `pass` as for [`affine_runs`].
#[inline]
pub(crate) fn affine_lanes<S: Element, O: Element>(
    xs: &[S],
    params: Affine<'_>,
    pass: Pass,
    out: &mut [O],
) {
    arch::affine_lanes(detect(), xs, params, pass, out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::arch::{Path, affine_lanes as lanes_on, affine_runs as runs_on};
    use crate::test_support::SplitMix;
    use alloc::vec;
    use alloc::vec::Vec;

    fn paths() -> [Path; 2] {
        [Path::Portable, detect()]
    }

    /// The bits of a slice of any element type, for exact comparison
    /// (NaN included).
    fn bits<O: Element>(v: &[O]) -> Vec<u64> {
        v.iter().map(|x| x.widen().to_bits()).collect()
    }

    /// `xs` through the identity pass (`(x − 0)·1 + (−0)`, which keeps
    /// every value and its sign), as lanes of one row, on `path`.
    fn narrowed<O: Element>(path: Path, xs: &[f64]) -> Vec<O> {
        let n = xs.len();
        let (hi, scale, offset) = (vec![0.0; n], vec![1.0; n], vec![-0.0; n]);
        let params = Affine {
            hi: &hi,
            scale: &scale,
            offset: &offset,
        };
        let mut out = vec![O::narrow(7.0); n];
        lanes_on(path, xs, params, Pass::default(), &mut out);
        out
    }

    /// Every value of a 16-bit format below ∞ (positive and negative), the
    /// midpoints between neighbours and the `f64` values either side of
    /// each midpoint, and the awkward values of any format.
    fn awkward(finite: impl Iterator<Item = f64>) -> Vec<f64> {
        let mut values: Vec<f64> = finite.collect();
        let mids: Vec<f64> = values
            .windows(2)
            .flat_map(|w| {
                let mid = f64::midpoint(w[0], w[1]);
                [mid, mid.next_up(), mid.next_down()]
            })
            .collect();
        values.extend(mids);
        values.extend([
            0.0,
            f64::MIN_POSITIVE,
            f64::from_bits(1),
            1e-300,
            2f64.powi(-25),
            2f64.powi(-25).next_up(),
            2f64.powi(-25).next_down(),
            65_519.99,
            65_520.0,
            65_536.0,
            1e10,
            2f64.powi(128),
            f64::from(f32::MAX),
            f64::from(f32::MAX).next_up(),
            1e300,
            f64::MAX,
            f64::INFINITY,
        ]);
        let negatives: Vec<f64> = values.iter().map(|v| -v).collect();
        values.extend(negatives);
        values.extend([
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0xfff4_5678_9abc_def0),
        ]);
        values
    }

    #[test]
    #[cfg(feature = "half")]
    fn every_half_value_and_midpoint_rounds_as_narrow_does() {
        use half::{bf16, f16};
        let f16s = awkward((0..0x7c00_u16).map(|b| f16::from_bits(b).to_f64()));
        let bf16s = awkward((0..0x7f80_u16).map(|b| bf16::from_bits(b).to_f64()));
        for path in paths() {
            let h: Vec<f16> = narrowed(path, &f16s);
            let want: Vec<f16> = f16s.iter().map(|&x| f16::narrow(x)).collect();
            assert_eq!(bits(&h), bits(&want), "f16, {path:?}");
            let b: Vec<bf16> = narrowed(path, &bf16s);
            let want: Vec<bf16> = bf16s.iter().map(|&x| bf16::narrow(x)).collect();
            assert_eq!(bits(&b), bits(&want), "bf16, {path:?}");
        }
    }

    #[test]
    fn single_and_double_outputs_round_as_narrow_does() {
        let mut rng = SplitMix(11);
        let mut xs = awkward((0..2000).map(|_| {
            let e = i32::try_from(rng.next_u64() % 600).unwrap_or(0) - 300;
            rng.signed_unit() * 2f64.powi(e)
        }));
        xs.extend((0..2000).map(|_| f64::from_bits(rng.next_u64())));
        for path in paths() {
            let s: Vec<f32> = narrowed(path, &xs);
            let want: Vec<f32> = xs.iter().map(|&x| f32::narrow(x)).collect();
            assert_eq!(bits(&s), bits(&want), "f32, {path:?}");
            // Every `f64` comes back, NaN as a NaN (quieted).
            let d: Vec<f64> = narrowed(path, &xs);
            for (got, x) in d.iter().zip(&xs) {
                assert!(
                    got.to_bits() == x.to_bits() || (got.is_nan() && x.is_nan()),
                    "{x:e}"
                );
            }
        }
    }

    /// Data of every kind a normalization meets: a level with a spread,
    /// zeros of both signs, an outlier, and now and then ±∞ or NaN.
    fn data<S: Element>(n: usize, seed: u64) -> Vec<S> {
        let mut rng = SplitMix(seed);
        (0..n)
            .map(|i| {
                let x = match i % 41 {
                    0 => 0.0,
                    1 => -0.0,
                    2 => 3e4,
                    3 if seed.is_multiple_of(3) => f64::INFINITY,
                    4 if seed.is_multiple_of(5) => f64::NAN,
                    _ => 40.0 + rng.signed_unit() * 3.0,
                };
                S::narrow(x)
            })
            .collect()
    }

    /// Parameters of `n` entries: means near the data's, scales of a few
    /// sizes, offsets of both signs.
    fn entries(n: usize, seed: u64) -> [Vec<f64>; 3] {
        let mut rng = SplitMix(seed);
        let hi = (0..n).map(|_| 40.0 + rng.signed_unit()).collect();
        let scale = (0..n)
            .map(|k| (0.5 + rng.unit()) * [1.0, 1e3, 1e-3][k % 3])
            .collect();
        let offset = (0..n).map(|_| rng.signed_unit() * 1e-9).collect();
        [hi, scale, offset]
    }

    /// The runs pass on every path, against the portable loop (the
    /// per-value formula), bit for bit.
    fn runs_agree<S: Element, O: Element>() {
        for run in [1, 2, 3, 4, 5, 7, 8, 9, 12, 31, 32, 33, 130] {
            for (rows, n) in [(0, 1), (1, 1), (7, 3), (9, 9), (6, 1)] {
                let xs: Vec<S> = data(run * rows + run / 2, (run + rows) as u64);
                let [hi, scale, offset] = entries(n, run as u64);
                let params = Affine {
                    hi: &hi,
                    scale: &scale,
                    offset: &offset,
                };
                let g: Vec<f64> = (0..run).map(|j| 0.5 + (j % 7) as f64 / 4.0).collect();
                let b: Vec<f64> = (0..run).map(|j| (j % 5) as f64 - 2.0).collect();
                for (gamma, beta) in [
                    (None, None),
                    (Some(&g), None),
                    (None, Some(&b)),
                    (Some(&g), Some(&b)),
                ] {
                    let per_value = PerValue {
                        gamma: gamma.map(|v| &v[..]),
                        beta: beta.map(|v| &v[..]),
                    };
                    let out = |path, stream| {
                        let mut out = vec![O::narrow(-1.0); xs.len()];
                        let pass = Pass {
                            stream,
                            ahead: 4096,
                        };
                        runs_on(path, &xs, run, params, per_value, pass, &mut out);
                        out
                    };
                    let want = out(Path::Portable, false);
                    // The partial run at the end is left alone.
                    assert!(
                        bits(&want[run * rows..])
                            .iter()
                            .all(|&b| b == (-1.0_f64).to_bits())
                    );
                    // Written past the caches or not, the same bits.
                    for stream in [false, true] {
                        assert_eq!(
                            bits(&out(detect(), stream)),
                            bits(&want),
                            "run {run}, rows {rows}, n {n}, γ {}, β {}",
                            gamma.is_some(),
                            beta.is_some()
                        );
                    }
                }
            }
        }
    }

    /// The lanes pass on every path, against the portable loop.
    fn lanes_agree<S: Element, O: Element>() {
        for width in (1..=13).chain([16, 31, 32, 33, 37, 64]) {
            for rows in [0, 1, 2, 5] {
                let xs: Vec<S> = data(width * rows, (width * 7 + rows) as u64);
                let [hi, scale, offset] = entries(width, width as u64);
                let params = Affine {
                    hi: &hi,
                    scale: &scale,
                    offset: &offset,
                };
                let out = |path, stream| {
                    let mut out = vec![O::narrow(-1.0); xs.len()];
                    let pass = Pass { stream, ahead: 256 };
                    lanes_on(path, &xs, params, pass, &mut out);
                    out
                };
                for stream in [false, true] {
                    assert_eq!(
                        bits(&out(detect(), stream)),
                        bits(&out(Path::Portable, false)),
                        "width {width}, rows {rows}"
                    );
                }
            }
        }
    }

    /// [`runs_agree`] and [`lanes_agree`] from input type `S` to every
    /// output type.
    fn agree_from<S: Element>() {
        runs_agree::<S, f32>();
        runs_agree::<S, f64>();
        lanes_agree::<S, f32>();
        lanes_agree::<S, f64>();
        #[cfg(feature = "half")]
        {
            runs_agree::<S, half::f16>();
            runs_agree::<S, half::bf16>();
            lanes_agree::<S, half::f16>();
            lanes_agree::<S, half::bf16>();
        }
    }

    #[test]
    fn every_path_writes_the_per_value_formula_bit_for_bit() {
        agree_from::<f32>();
        agree_from::<f64>();
        #[cfg(feature = "half")]
        {
            agree_from::<half::f16>();
            agree_from::<half::bf16>();
        }
    }

    #[test]
    fn the_portable_loop_is_the_formula() {
        // Two runs of three `f32` values, the second with the first
        // entry again (one entry per run, cycling), γ and β per value:
        // small integers and halves, exact throughout.
        let xs = [1.0_f32, 2.0, 4.0, 3.0, 3.0, 5.0];
        let params = Affine {
            hi: &[2.0],
            scale: &[0.5],
            offset: &[1.0],
        };
        let per_value = PerValue {
            gamma: Some(&[2.0, 1.0, -1.0]),
            beta: Some(&[0.0, 0.5, 0.25]),
        };
        for path in paths() {
            let mut y = [0.0_f64; 6];
            runs_on(path, &xs, 3, params, per_value, Pass::default(), &mut y);
            // ((x − 2)·0.5 + 1)·γ + β
            assert_eq!(y, [1.0, 1.5, -1.75, 3.0, 2.0, -2.25]);
            // Lanes: (x − hi)·scale + offset, entry by entry.
            let lanes = Affine {
                hi: &[2.0, 0.0, 4.0],
                scale: &[0.5, 1.0, 2.0],
                offset: &[1.0, 0.0, -1.0],
            };
            let mut z = [0.0_f32; 6];
            let pass = Pass {
                stream: true,
                ahead: 64,
            };
            lanes_on(path, &xs, lanes, pass, &mut z);
            assert_eq!(z, [0.5, 2.0, -1.0, 1.5, 3.0, 1.0]);
        }
    }
}
