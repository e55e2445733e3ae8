//! BatchNorm's backward pass against PyTorch autograd, in both layouts,
//! single-process and synchronized across workers of unequal batch sizes;
//! its laws (10 000 quickcheck cases each), accuracy far from zero, and
//! hostile input.
//!
//! Reference: PyTorch 2.15.0 (CPU) autograd through
//! `F.batch_norm(x, None, None, w, b, training=True, eps=1e-5)` with loss
//! `(y * g).sum()`, on N, C, H, W = 8, 3, 2, 2, x_i = ((53 i) mod 97)/9 − 4,
//! g_i = ((29 i) mod 31)/10 − 1.5, w = [0.5, 1.5, −2], b = [0.1, 0.2, 0.3],
//! in float64 and float32; `DX_*` is `x.grad`, `DW_*` `w.grad`, `DB_*`
//! `b.grad`. PyTorch's SyncBatchNorm all-reduces the same two sums and
//! gives each worker the matching slice of this `x.grad`, so the
//! single-process values are the synchronized ones too.
#![allow(
    clippy::excessive_precision,
    reason = "torch's float32 outputs, printed in full by Python"
)]

use crate::support::to_nhwc;
use momenta::batchnorm::{BatchStats, GradSums, Layout};
use momenta::{ErrorKind, Merge};
use quickcheck::{Arbitrary, Gen, QuickCheck};

const N: usize = 8;
const C: usize = 3;
const HW: usize = 4;
const EPS: f64 = 1e-5;
const WEIGHT: [f64; 3] = [0.5, 1.5, -2.0];

#[rustfmt::skip]
const DX_F64: [f64; 96] = [
    -0.22671643820449897, 0.24717833625845617, 0.21124378720876102, 0.1831282981855438,
    0.3656061903785012, 0.2617963913218921, 0.17350060685458188, 0.06969080779797278,
    0.050014250828901576, 0.3472754708229709, 0.33718925099059, 0.32710303115820905,
    -0.1090064031558009, -0.14494095220549608, -0.17305644122871325, -0.20899099027840845,
    0.6906352654875909, 0.6023394810202806, 0.49852968196367164, 0.4102338974963614,
    -0.23153701050668313, -0.24162323033906394, -0.2517094501714448, 0.04555176982262441,
    0.0008845718664192117, -0.027230917156797985, -0.06316546620649316, -0.09128095522971034,
    -0.446484221066626, -0.5502940201232351, -0.6385898045905452, -0.7423996036471543,
    -0.8204357116687178, -0.8305219315010988, -0.5332607115070294, -0.5433469313394101,
    0.11859460691511733, 0.08266005786542213, 0.054544568842204925, 0.01861001979250976,
    -0.12145514595753625, -0.20975093042484633, -0.3135607294814556, -0.40185651394876565,
    0.5952668494749624, 0.8925280694690317, 0.8824418496366508, -0.8248981926749949,
    0.22848558193733742, 0.20037009291412022, 0.16443554386442505, 0.13632005484120788,
    0.2190879437408524, 0.11527814468424326, 0.02698236021693313, -0.061313424250377085,
    0.3137155881393779, 0.303629368306997, 0.6008905883010662, 0.5908043684686853,
    -0.15581464650013685, -0.191749195549832, -0.2198646845730492, 0.24621102986342794,
    0.5441170188499422, 0.45582123438263183, 0.36752544991532166, 0.2637156508587126,
    -0.27518311302265686, 0.02207810697141235, 0.011991887139031435, 0.3092531071331007,
    -0.0459236714779167, -0.07403916050113392, -0.1099737095508291, -0.13808919857404628,
    -0.5930024677042747, -0.6812982521715848, 0.6925545250244114, 0.604258740557101,
    -0.5567343743582416, -0.5668205941906224, -0.26955937419655324, -0.2796455940289341,
    0.07178636357078137, 0.03585181452108621, 0.0077363254978689774, -0.02819822355182619,
    -0.25245937800588614, -0.35626917706249517, -0.4445649615298054, -0.5483747605864147,
    0.8589681867854388, 1.156229406779508, -0.8584580753585879, -0.5611968553645187,
];
#[rustfmt::skip]
const DW_F64: [f64; 3] = [
    -0.4426327054394193, 0.30409483722761455, 4.3646330575672945,
];
#[rustfmt::skip]
const DB_F64: [f64; 3] = [
    -4.0, 1.4000000000000004, 3.700000000000001,
];
#[rustfmt::skip]
const DX_F32: [f32; 96] = [
    -0.22671641409397125, 0.247178316116333, 0.21124377846717834, 0.18312829732894897,
    0.3656061887741089, 0.26179638504981995, 0.17350059747695923, 0.06969080865383148,
    0.05001425743103027, 0.3472755253314972, 0.337189257144928, 0.3271030783653259,
    -0.10900640487670898, -0.14494094252586365, -0.1730564385652542, -0.20899096131324768,
    0.6906352043151855, 0.6023394465446472, 0.49852967262268066, 0.41023385524749756,
    -0.23153698444366455, -0.24162322282791138, -0.2517094612121582, 0.045551784336566925,
    0.0008845699485391378, -0.027230918407440186, -0.06316546350717545, -0.09128095209598541,
    -0.44648417830467224, -0.550294041633606, -0.6385897994041443, -0.7423995733261108,
    -0.8204357624053955, -0.8305220007896423, -0.533260703086853, -0.5433470010757446,
    0.11859460175037384, 0.08266004920005798, 0.054544564336538315, 0.018610017374157906,
    -0.12145514786243439, -0.2097509354352951, -0.31356072425842285, -0.4018564820289612,
    0.5952668786048889, 0.8925281763076782, 0.8824418783187866, -0.8248981833457947,
    0.22848555445671082, 0.20037008821964264, 0.16443553566932678, 0.13632003962993622,
    0.21908795833587646, 0.11527815461158752, 0.02698235772550106, -0.061313431710004807,
    0.3137156367301941, 0.30362939834594727, 0.6008906364440918, 0.590804398059845,
    -0.15581464767456055, -0.19174917042255402, -0.21986468136310577, 0.2462110072374344,
    0.5441169738769531, 0.4558212161064148, 0.36752545833587646, 0.2637156546115875,
    -0.27518314123153687, 0.022078122943639755, 0.011991886422038078, 0.30925312638282776,
    -0.04592366889119148, -0.07403916120529175, -0.10997370630502701, -0.13808919489383698,
    -0.5930025577545166, -0.6812982559204102, 0.6925544738769531, 0.60425865650177,
    -0.5567343831062317, -0.5668206214904785, -0.2695593535900116, -0.2796455919742584,
    0.07178636640310287, 0.03585181012749672, 0.007736326195299625, -0.028198223561048508,
    -0.2524593770503998, -0.35626915097236633, -0.44456496834754944, -0.5483748316764832,
    0.858968198299408, 1.1562294960021973, -0.8584581017494202, -0.5611968636512756,
];
#[rustfmt::skip]
const DW_F32: [f32; 3] = [
    -0.4426329433917999, 0.3040946125984192, 4.364633560180664,
];
#[rustfmt::skip]
const DB_F32: [f32; 3] = [
    -4.0, 1.4000000953674316, 3.700000286102295,
];

fn input() -> Vec<f64> {
    (0..N * C * HW)
        .map(|i| ((i * 53) % 97) as f64 / 9.0 - 4.0)
        .collect()
}

fn upstream() -> Vec<f64> {
    (0..N * C * HW)
        .map(|i| ((i * 29) % 31) as f64 / 10.0 - 1.5)
        .collect()
}

/// Distance in ulps of `max(|b|, 1)`: gradients are O(1).
fn ulps(a: f64, b: f64, eps: f64) -> f64 {
    (a - b).abs() / (b.abs().max(1.0) * eps)
}

fn worst(got: &[f64], want: &[f64], eps: f64) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&a, &b)| ulps(a, b, eps))
        .fold(0.0, f64::max)
}

fn layout(n: usize, last: bool) -> Layout {
    if last {
        Layout::nhwc(n, 2, 2, C).unwrap()
    } else {
        Layout::nchw(n, C, 2, 2).unwrap()
    }
}

/// The gradients of one process over the whole batch.
fn gradients<F: momenta::Float>(xs: &[F], dy: &[F], layout: Layout) -> (Vec<F>, Vec<F>, Vec<F>) {
    let w: Vec<F> = WEIGHT.iter().map(|&v| F::from_f64(v)).collect();
    let eps = F::from_f64(EPS);
    let stats = BatchStats::<F>::compute(xs, layout).unwrap();
    let sums = GradSums::compute(xs, dy, layout, &stats).unwrap();
    let mut dx = vec![F::zero(); xs.len()];
    sums.grad_input(xs, dy, layout, &stats, eps, Some(&w), &mut dx)
        .unwrap();
    (dx, sums.grad_weight(&stats, eps).unwrap(), sums.grad_bias())
}

#[test]
fn the_backward_pass_matches_torch_autograd_in_both_layouts() {
    let (x, g) = (input(), upstream());
    for last in [false, true] {
        let perm = |v: &[f64]| {
            if last {
                to_nhwc(v, N, C, HW)
            } else {
                v.to_vec()
            }
        };
        let (dx, dw, db) = gradients(&perm(&x), &perm(&g), layout(N, last));
        assert!(
            worst(&dx, &perm(&DX_F64), f64::EPSILON) <= 16.0,
            "{}",
            worst(&dx, &perm(&DX_F64), f64::EPSILON)
        );
        assert!(worst(&dw, &DW_F64, f64::EPSILON) <= 8.0);
        assert!(worst(&db, &DB_F64, f64::EPSILON) <= 8.0);
        // float32: torch's own float32 arithmetic against ours (f64 sums,
        // one rounding).
        let x32: Vec<f32> = perm(&x).iter().map(|&v| v as f32).collect();
        let g32: Vec<f32> = perm(&g).iter().map(|&v| v as f32).collect();
        let (dx, dw, db) = gradients(&x32, &g32, layout(N, last));
        let wide = |v: &[f32]| v.iter().map(|&a| f64::from(a)).collect::<Vec<_>>();
        let e32 = f64::from(f32::EPSILON);
        let want_dx: Vec<f64> = perm(&wide(&DX_F32));
        assert!(
            worst(&wide(&dx), &want_dx, e32) <= 8.0,
            "{}",
            worst(&wide(&dx), &want_dx, e32)
        );
        assert!(worst(&wide(&dw), &wide(&DW_F32), e32) <= 8.0);
        assert!(worst(&wide(&db), &wide(&DB_F32), e32) <= 8.0);
    }
}

#[test]
fn synchronized_workers_of_unequal_sizes_get_their_slice_of_the_gradient() {
    let (x, g) = (input(), upstream());
    let w = WEIGHT.to_vec();
    for last in [false, true] {
        let perm = |v: &[f64]| {
            if last {
                to_nhwc(v, N, C, HW)
            } else {
                v.to_vec()
            }
        };
        let (x, g, want) = (perm(&x), perm(&g), perm(&DX_F64));
        let sizes = [1, 3, 4];
        let per = C * HW;
        let mut bounds = vec![0];
        for s in sizes {
            bounds.push(bounds.last().unwrap() + s * per);
        }
        let shard = |v: &[f64], k: usize| v[bounds[k]..bounds[k + 1]].to_vec();
        // Forward: all-reduce the statistics.
        let mut stats = BatchStats::<f64>::new(C);
        for (k, &n) in sizes.iter().enumerate() {
            stats.merge(&BatchStats::compute(&shard(&x, k), layout(n, last)).unwrap());
        }
        // Backward: each worker's sums about the global mean, all-reduced
        // as plain parts (what MPI carries).
        let mut sums = GradSums::<f64>::new(C);
        for (k, &n) in sizes.iter().enumerate() {
            let local =
                GradSums::compute(&shard(&x, k), &shard(&g, k), layout(n, last), &stats).unwrap();
            sums.merge(&GradSums::from_parts(local.to_parts()).unwrap());
        }
        assert_eq!(sums.count(), (N * HW) as u64);
        for (k, &n) in sizes.iter().enumerate() {
            let mut dx = vec![0.0; sizes[k] * per];
            sums.grad_input(
                &shard(&x, k),
                &shard(&g, k),
                layout(n, last),
                &stats,
                EPS,
                Some(&w),
                &mut dx,
            )
            .unwrap();
            assert!(
                worst(&dx, &shard(&want, k), f64::EPSILON) <= 16.0,
                "worker {k}"
            );
        }
        assert!(
            worst(
                &sums.grad_weight(&stats, EPS).unwrap(),
                &DW_F64,
                f64::EPSILON
            ) <= 8.0
        );
        assert!(worst(&sums.grad_bias(), &DB_F64, f64::EPSILON) <= 8.0);
    }
}

#[test]
fn far_from_zero_the_sums_keep_their_digits() {
    // x = 1e6 + k/1024 and integer dy: Σdy·(x − μ) is the exact fraction
    // (n·Σdy·k − Σdy·Σk) / (1024 n), rounded once. The textbook
    // Σdy·x − μ·Σdy loses about 1e6/spread of it.
    let n = 100_000_usize;
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let ks: Vec<i64> = (0..n).map(|_| (next() % 1024) as i64).collect();
    let dys: Vec<i64> = (0..n).map(|_| (next() % 7) as i64 - 3).collect();
    let xs: Vec<f64> = ks.iter().map(|&k| 1e6 + k as f64 / 1024.0).collect();
    let dy: Vec<f64> = dys.iter().map(|&d| d as f64).collect();
    let (sk, sd) = (
        ks.iter().sum::<i64>() as i128,
        dys.iter().sum::<i64>() as i128,
    );
    let sdk: i128 = ks.iter().zip(&dys).map(|(&k, &d)| i128::from(k * d)).sum();
    let exact = (n as i128 * sdk - sd * sk) as f64 / (1024.0 * n as f64);
    for layout in [Layout::nc(n, 1).unwrap(), Layout::ncl(1, 1, n).unwrap()] {
        let stats = BatchStats::<f64>::compute(&xs, layout).unwrap();
        let sums = GradSums::compute(&xs, &dy, layout, &stats).unwrap();
        let var = stats.variance()[0];
        let dw = sums.grad_weight(&stats, 0.0).unwrap()[0] * var.sqrt();
        assert!(
            (dw - exact).abs() <= 1e-14 * exact.abs(),
            "{layout:?}: {dw} vs {exact}"
        );
        assert_eq!(sums.grad_bias()[0], sd as f64);
    }
    // dx too: x − μ = (n·k − Σk)/(1024 n) exactly, so the reference below
    // only rounds the products; with the mean rounded to f64, x − μ would
    // carry an error of 1e-10 of the spread into every dx.
    let layout = Layout::nc(n, 1).unwrap();
    let stats = BatchStats::<f64>::compute(&xs, layout).unwrap();
    let sums = GradSums::compute(&xs, &dy, layout, &stats).unwrap();
    let mut dx = vec![0.0; n];
    sums.grad_input(&xs, &dy, layout, &stats, 0.0, None, &mut dx)
        .unwrap();
    let m2: i128 = ks
        .iter()
        .map(|&k| i128::from(k) * i128::from(k))
        .sum::<i128>()
        * n as i128
        - sk * sk;
    let var = m2 as f64 / (1024.0 * 1024.0 * (n * n) as f64);
    let rstd = 1.0 / var.sqrt();
    let worst = (0..n)
        .map(|i| {
            let centred = (n as i128 * i128::from(ks[i]) - sk) as f64 / (1024.0 * n as f64);
            let want =
                rstd * (dy[i] - sd as f64 / n as f64 - centred * exact * rstd * rstd / n as f64);
            (dx[i] - want).abs() / want.abs().max(1e-3)
        })
        .fold(0.0, f64::max);
    assert!(worst <= 1e-12, "dx: {worst:e}");
    let mean = xs.iter().sum::<f64>() / n as f64;
    let textbook =
        xs.iter().zip(&dy).map(|(x, d)| x * d).sum::<f64>() - mean * dy.iter().sum::<f64>();
    // Measured: ours 2.9e-16 and 4.3e-16, the textbook sum 3.7e-10 (and
    // a sum about the mean rounded once, 3e-10).
    assert!(
        (textbook - exact).abs() > 1e-11 * exact.abs(),
        "the textbook sum should lose digits here"
    );
}

#[test]
fn hostile_input_is_an_error_that_names_it() {
    let xs = vec![1.0_f64; 2 * 3 * 4];
    let layout = Layout::nchw(2, 3, 2, 2).unwrap();
    let stats = BatchStats::<f64>::compute(&xs, layout).unwrap();
    let kind = |e: momenta::Error| e.kind().clone();
    assert!(matches!(
        kind(GradSums::compute(&xs[1..], &xs[1..], layout, &stats).unwrap_err()),
        ErrorKind::LengthMismatch { what: "data", .. }
    ));
    assert!(matches!(
        kind(GradSums::compute(&xs, &xs[1..], layout, &stats).unwrap_err()),
        ErrorKind::LengthMismatch {
            what: "gradient",
            ..
        }
    ));
    let other = BatchStats::<f64>::new(4);
    assert!(matches!(
        kind(GradSums::compute(&xs, &xs, layout, &other).unwrap_err()),
        ErrorKind::LengthMismatch {
            what: "statistics channels",
            ..
        }
    ));
    let sums = GradSums::compute(&xs, &xs, layout, &stats).unwrap();
    let mut dx = vec![0.0; xs.len()];
    assert!(matches!(
        kind(
            sums.grad_input(&xs, &xs, layout, &stats, 1e-5, None, &mut dx[1..])
                .unwrap_err()
        ),
        ErrorKind::LengthMismatch { what: "output", .. }
    ));
    assert!(matches!(
        kind(
            sums.grad_input(&xs, &xs, layout, &stats, 1e-5, Some(&[1.0; 2]), &mut dx)
                .unwrap_err()
        ),
        ErrorKind::LengthMismatch { what: "gamma", .. }
    ));
    for bad in [-1e-5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            kind(sums.grad_weight(&stats, bad).unwrap_err()),
            ErrorKind::InvalidParameter { name: "eps", .. }
        ));
    }
    // Statistics of another batch size: the count must match the sums'.
    let half = BatchStats::<f64>::compute(&xs[..12], Layout::nchw(1, 3, 2, 2).unwrap()).unwrap();
    assert!(matches!(
        kind(
            sums.grad_input(&xs, &xs, layout, &half, 1e-5, None, &mut dx)
                .unwrap_err()
        ),
        ErrorKind::LengthMismatch {
            what: "statistics count",
            ..
        }
    ));
    // A mismatched merge poisons; try_merge refuses and changes nothing.
    let mut a = sums.clone();
    assert!(a.try_merge(&GradSums::new(2)).is_err());
    assert_eq!(a, sums);
    a.merge(&GradSums::new(2));
    assert!(a.is_poisoned() && a.grad_bias().iter().all(|v| v.is_nan()));
    assert!(matches!(
        kind(a.grad_weight(&stats, 1e-5).unwrap_err()),
        ErrorKind::InvalidState { .. }
    ));
    // Corrupt parts.
    let mut p = sums.to_parts();
    p.sum_dy.pop();
    assert!(matches!(
        kind(GradSums::<f64>::from_parts(p).unwrap_err()),
        ErrorKind::LengthMismatch { what: "sum_dy", .. }
    ));
    // Empty tensors: valid and empty, and the merge identity.
    let empty = Layout::nchw(0, 3, 2, 2).unwrap();
    let e = GradSums::compute(&[] as &[f64], &[], empty, &stats).unwrap();
    assert_eq!(e.count(), 0);
    let mut b = sums.clone();
    b.merge(&e);
    assert_eq!(b, sums);
    // NaN in dy propagates to its channel only.
    let mut dy = xs.clone();
    dy[0] = f64::NAN;
    let s = GradSums::compute(&xs, &dy, layout, &stats).unwrap();
    let db = s.grad_bias();
    assert!(db[0].is_nan() && db[1].is_finite() && db[2].is_finite());
}

#[cfg(feature = "serde")]
#[test]
fn the_serde_form_is_the_parts_and_is_validated() {
    // Centred on the statistics' shift, the first value: Σdy·(x − 1) = 1·0 + 2·2.
    const JSON: &str =
        r#"{"count":2,"centre":["1.0"],"sum_dy":["3.0"],"sum_dy_dx":["4.0"],"poisoned":false}"#;
    const LEGACY: &str =
        r#"{"count":2,"centre":[1.0],"sum_dy":[3.0],"sum_dy_dx":[4.0],"poisoned":false}"#;
    let stats = BatchStats::<f64>::compute(&[1.0, 3.0], Layout::nc(2, 1).unwrap()).unwrap();
    let sums =
        GradSums::compute(&[1.0, 3.0], &[1.0, 2.0], Layout::nc(2, 1).unwrap(), &stats).unwrap();
    assert_eq!(serde_json::to_string(&sums).unwrap(), JSON);
    let back: GradSums<f64> = serde_json::from_str(JSON).unwrap();
    assert_eq!(back, sums);
    let back: GradSums<f64> = serde_json::from_str(LEGACY).unwrap();
    assert_eq!(back, sums);
    let bad = r#"{"count":0,"centre":[2.0],"sum_dy":[3.0],"sum_dy_dx":[1.0],"poisoned":false}"#;
    assert!(serde_json::from_str::<GradSums<f64>>(bad).is_err());
}

/// A batch for the laws: NCHW shape, values, gradients, and a split.
#[derive(Clone, Debug)]
struct Batch {
    n: usize,
    c: usize,
    hw: usize,
    xs: Vec<f64>,
    dy: Vec<f64>,
    cut: usize,
}

impl Arbitrary for Batch {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = usize::arbitrary(g) % 6 + 1;
        let c = usize::arbitrary(g) % 4 + 1;
        let hw = usize::arbitrary(g) % 6 + 1;
        let offset = *g.choose(&[0.0, -3.5, 1e6]).unwrap_or(&0.0);
        let len = n * c * hw;
        let xs = (0..len)
            .map(|_| offset + f64::from(i16::arbitrary(g)) / 64.0)
            .collect();
        let dy = (0..len)
            .map(|_| f64::from(i8::arbitrary(g)) / 16.0)
            .collect();
        let cut = usize::arbitrary(g) % (n + 1);
        Batch {
            n,
            c,
            hw,
            xs,
            dy,
            cut,
        }
    }
}

fn quick<T: quickcheck::Testable>(law: T) {
    // 10 000 cases with `MOMENTA_LONG_TESTS` (CI), 1000 by default.
    let cases = crate::support::long::size(10_000, 1000);
    QuickCheck::new()
        .tests(cases)
        .max_tests(cases * 10)
        .quickcheck(law);
}

fn near(a: &[f64], b: &[f64], scale: f64) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-12 * scale.max(x.abs()).max(1.0))
}

#[test]
fn merged_shards_equal_the_whole_and_parts_round_trip() {
    fn law(b: Batch) -> bool {
        let layout = |n| Layout::nchw(n, b.c, 1, b.hw).unwrap();
        let stats = BatchStats::<f64>::compute(&b.xs, layout(b.n)).unwrap();
        let whole = GradSums::compute(&b.xs, &b.dy, layout(b.n), &stats).unwrap();
        let at = b.cut * b.c * b.hw;
        let mut merged =
            GradSums::compute(&b.xs[..at], &b.dy[..at], layout(b.cut), &stats).unwrap();
        merged.merge(
            &GradSums::compute(&b.xs[at..], &b.dy[at..], layout(b.n - b.cut), &stats).unwrap(),
        );
        let scale: f64 = b.dy.iter().map(|d| d.abs()).sum::<f64>() * 1e3;
        let round_trip = GradSums::<f64>::from_parts(merged.to_parts()).unwrap() == merged;
        merged.count() == whole.count()
            && near(&merged.grad_bias(), &whole.grad_bias(), scale)
            && near(
                &merged.grad_weight(&stats, 1e-5).unwrap(),
                &whole.grad_weight(&stats, 1e-5).unwrap(),
                scale,
            )
            && round_trip
    }
    quick(law as fn(Batch) -> bool);
}

#[test]
fn merging_is_associative_and_nchw_equals_nhwc() {
    fn law(b: Batch) -> bool {
        let layout = |n| Layout::nchw(n, b.c, 1, b.hw).unwrap();
        let stats = BatchStats::<f64>::compute(&b.xs, layout(b.n)).unwrap();
        let per = b.c * b.hw;
        let part = |lo: usize, hi: usize| {
            GradSums::compute(
                &b.xs[lo * per..hi * per],
                &b.dy[lo * per..hi * per],
                layout(hi - lo),
                &stats,
            )
            .unwrap()
        };
        let mid = (b.cut + b.n) / 2;
        let (p, q, r) = (part(0, b.cut), part(b.cut, mid), part(mid, b.n));
        let mut left = p.clone();
        left.merge(&q);
        left.merge(&r);
        let mut qr = q.clone();
        qr.merge(&r);
        let mut right = p.clone();
        right.merge(&qr);
        let scale: f64 = b.dy.iter().map(|d| d.abs()).sum::<f64>() * 1e3;
        let nhwc = GradSums::compute(
            &to_nhwc(&b.xs, b.n, b.c, b.hw),
            &to_nhwc(&b.dy, b.n, b.c, b.hw),
            Layout::nhwc(b.n, 1, b.hw, b.c).unwrap(),
            &stats,
        )
        .unwrap();
        let whole = part(0, b.n);
        near(&left.grad_bias(), &right.grad_bias(), scale)
            && near(
                &left.grad_weight(&stats, 0.5).unwrap(),
                &right.grad_weight(&stats, 0.5).unwrap(),
                scale,
            )
            && near(&nhwc.grad_bias(), &whole.grad_bias(), scale)
            && near(
                &nhwc.grad_weight(&stats, 0.5).unwrap(),
                &whole.grad_weight(&stats, 0.5).unwrap(),
                scale,
            )
    }
    quick(law as fn(Batch) -> bool);
}

#[test]
fn the_parallel_sums_are_the_sequential_ones_bit_for_bit() {
    // Enough rows for the tree to fork in both loops.
    for layout in [
        Layout::nhwc(16, 64, 64, 8).unwrap(),
        Layout::nchw(64, 3, 32, 64).unwrap(),
    ] {
        let xs: Vec<f32> = (0..layout.len())
            .map(|i| 1e3 + ((i * 7919) % 1013) as f32 / 64.0)
            .collect();
        let dy: Vec<f32> = (0..layout.len())
            .map(|i| ((i * 104_729) % 211) as f32 / 50.0 - 2.0)
            .collect();
        let stats = BatchStats::<f32>::compute(&xs, layout).unwrap();
        let seq = GradSums::compute(&xs, &dy, layout, &stats).unwrap();
        for threads in [1, 2, 3, 8] {
            let par = crate::support::in_pool(threads, || {
                GradSums::par_compute(&xs, &dy, layout, &stats)
            })
            .unwrap();
            assert_eq!(
                par.to_parts(),
                seq.to_parts(),
                "{layout:?}, {threads} threads"
            );
        }
    }
}

#[test]
fn large_tensors_take_the_slice_kernel_and_the_lanes_loop_alike() {
    // NCHW runs of 2048 values (the pair-sum kernel) against the same
    // data in NHWC (the lanes loop), and both against a plain loop.
    let (n, c, hw) = (3, 5, 2048);
    let xs: Vec<f64> = (0..n * c * hw)
        .map(|i| 100.0 + ((i * 7919) % 1013) as f64 / 17.0)
        .collect();
    let dy: Vec<f64> = (0..n * c * hw)
        .map(|i| ((i * 104_729) % 211) as f64 / 50.0 - 2.0)
        .collect();
    let first = Layout::nchw(n, c, 1, hw).unwrap();
    let stats = BatchStats::<f64>::compute(&xs, first).unwrap();
    let a = GradSums::compute(&xs, &dy, first, &stats).unwrap();
    let b = GradSums::compute(
        &to_nhwc(&xs, n, c, hw),
        &to_nhwc(&dy, n, c, hw),
        Layout::nhwc(n, 1, hw, c).unwrap(),
        &stats,
    )
    .unwrap();
    for ch in 0..c {
        let mean = stats.mean()[ch];
        let (mut sdy, mut sdyx) = (0.0, 0.0);
        for s in 0..n {
            for p in 0..hw {
                let i = (s * c + ch) * hw + p;
                sdy += dy[i];
                sdyx += dy[i] * (xs[i] - mean);
            }
        }
        let rstd = 1.0 / (stats.variance()[ch] + 1e-5).sqrt();
        for sums in [&a, &b] {
            assert!((sums.grad_bias()[ch] - sdy).abs() <= 1e-10 * sdy.abs().max(1.0));
            let dw = sums.grad_weight(&stats, 1e-5).unwrap()[ch];
            assert!((dw - sdyx * rstd).abs() <= 1e-10 * (sdyx * rstd).abs().max(1.0));
        }
    }
}
