//! LayerNorm, InstanceNorm and GroupNorm against PyTorch, in both layouts,
//! with their laws (10 000 quickcheck cases each) and hostile input.
//!
//! The reference outputs were recorded from PyTorch 2.15.0 (CPU),
//! `torch.nn.functional.group_norm`, `instance_norm` and `layer_norm`, and
//! `torch.nn.InstanceNorm2d(4, affine=True, track_running_stats=True,
//! momentum=0.1)`, on the inputs `nchw_input` and `offset_input` build
//! here (N, C, H, W = 2, 4, 2, 3; γ_c = 0.5 + 0.25c, β_c = 0.1c − 0.2;
//! LayerNorm's elementwise γ_j = 1 + j/100, β_j = j/200 over (C, H, W)).
//! The NHWC expectations are the same recorded values, permuted.

#![allow(
    clippy::excessive_precision,
    reason = "torch's float32 outputs, printed in full by Python"
)]

use crate::support::{Dd, SplitMix, to_nhwc};
use momenta::batchnorm::{
    BatchStats, BnConfig, GroupNorm, InstanceNorm, LayerNorm, Layout, RunningStats,
};
use momenta::{ErrorKind, Merge};
use quickcheck::{Arbitrary, Gen, QuickCheck};

const N: usize = 2;
const C: usize = 4;
const H: usize = 2;
const W: usize = 3;

// torch 2.15.0, values printed with repr().
#[rustfmt::skip]
const GROUP2_F64: [f64; 48] = [
    -0.9101703795486744, -0.30727239002742884, 0.29562559949381667, -0.7472249769753647,
    -0.14432698745411923, 0.4585710020671263, -0.6764193616030827, 0.22792762267878552,
    1.132274606960654, -0.4320012577431183, 0.47234572653875, -1.0919301381650222,
    -0.3566215338318092, 0.9739663739104035, -1.3275910881301807, 0.002996819612032116,
    1.333584727354245, -0.9679727346863395, 0.5532689663198416, 2.216503850997608,
    -0.6604429765531226, 1.0027919081246432, -1.874154919426087, -0.2109200347483209,
    0.2123476032167635, -0.8988206749252519, -0.2564265141243993, 0.38596764667645345,
    -0.725200631465562, -0.08280647066470936, 1.0393815352042153, -0.6273708820088081,
    0.33622035919247095, -1.3305320580205522, -0.3669408168192733, 0.5966504243820059,
    -0.9288672325093408, 0.35592108909236414, 1.6407094106940694, -0.581627145589961,
    0.7031611760117439, -1.5191753802722863, -0.19298382333822678, 1.4130015786639047,
    -1.3649191166911332, 0.24106628531099794, 1.8470516873131293, -0.9308690080419086,
];
#[rustfmt::skip]
const INSTANCE_F64: [f64; 48] = [
    -0.8857959918392472, -0.2816423799808628, 0.3225112318775216, -0.7225112318775216,
    -0.11835762001913722, 0.4857959918392472, -0.7154798804903257, 0.18939782460141136,
    1.0942755296931488, -0.47091833857364007, 0.43395936651809713, -1.1312345017486916,
    -0.3120370559049447, 1.0734074723130094, -1.3230371170369652, 0.06240741118098894,
    1.447851939398943, -0.9485926499510318, 0.46918843490607626, 2.0762439750854678,
    -0.7035277700896955, 0.9035277700896955, -1.8762439750854676, -0.2691884349060762,
    0.27429632497551576, -0.9239259696994716, -0.23120370559049458, 0.46151855851848256,
    -0.7367037361565049, -0.04398147204752778, 0.9312345017486914, -0.6339593665180971,
    0.27091833857363984, -1.2942755296931487, -0.3893978246014116, 0.5154798804903256,
    -0.8206398406537676, 0.3858637661352152, 1.5923673729241983, -0.4945577847648533,
    0.7119458220241296, -1.374979335664922, -0.2900463198811808, 1.4417593403912619,
    -1.5537963962962063, 0.17800926397623612, 1.9098149242486788, -1.0857408124387895,
];
#[rustfmt::skip]
const LAYER_CHW_F64: [f64; 48] = [
    -1.5873123526382356, -0.3293541902161503, 0.9537293442049145, -1.2702137075559106,
    0.028827833405046896, 1.3529947463649836, -0.9327431392311694, 0.4073817802686598,
    1.7726320717674688, -0.5749006476640127, 0.8063076503746887, -1.5938525374330337,
    -0.1966862328544398, 1.2256054437231334, -1.2363495779199167, 0.20190010519754886,
    1.6652751603139937, -0.8584746951643843, 0.6208583664919531, 2.1253168001472704,
    -0.46022788916643603, 1.0601885510287734, -1.577983606661174, -0.04160915992607179,
    0.9906690127363028, -1.202591365525114, 0.079688440895933, 1.3872473876419753,
    -0.8681860114187542, 0.455428605533704, 1.8043223628111578, -0.5132840570488847,
    0.8516653704349848, -1.5188906001057911, -0.13788550241550573, 1.2683987355997752,
    -1.1643302557403137, 0.25800965248138313, 1.7056287010280753, -0.789273311111326,
    0.6744014076417817, -1.873450155178353, -0.39371976621882926, 1.1112897630656902,
    -1.4987348205537574, 0.022330378937177525, 1.5686747187531083, -1.1035228856656523,
];
#[rustfmt::skip]
const LAYER_LAST_F64: [f64; 48] = [
    -1.2247445426161623, 0.0, 1.2247445426161623, -1.2247445426161623,
    0.0, 1.2247445426161623, -1.224744542616162, 0.0,
    1.2247445426161625, -0.12706157807996618, 1.283321938607658, -1.156260360527692,
    -0.12706157807996615, 1.2833219386076578, -1.156260360527692, -0.12706157807996615,
    1.2833219386076578, -1.156260360527692, -0.12706157807996618, 1.2833219386076582,
    -1.156260360527692, 1.1562603605276915, -1.283321938607658, 0.12706157807996615,
    1.156260360527692, -1.283321938607658, 0.12706157807996601, 1.156260360527692,
    -1.283321938607658, 0.12706157807996601, 1.1562603605276915, -1.283321938607658,
    0.1270615780799659, -1.2247445426161623, 0.0, 1.2247445426161625,
    -1.2247445426161623, 0.0, 1.2247445426161625, -0.12706157807996615,
    1.2833219386076578, -1.156260360527692, -0.12706157807996624, 1.2833219386076578,
    -1.1562603605276915, -0.12706157807996624, 1.2833219386076578, -1.1562603605276915,
];
#[rustfmt::skip]
const GROUP2_OFFSET_F32: [f32; 48] = [
    -0.9106178283691406, -0.30770570039749146, 0.2952064573764801, -0.7476686239242554,
    -0.1447564661502838, 0.45815569162368774, -0.6773720383644104, 0.22699618339538574,
    1.131364345550537, -0.43294820189476013, 0.471420019865036, -1.0928925275802612,
    -0.3573133051395416, 0.9730991721153259, -1.3281548023223877, 0.0022576376795768738,
    1.3326700925827026, -0.968583881855011, 0.5524911880493164, 2.2155067920684814,
    -0.6610607504844666, 1.0019549131393433, -1.8746126890182495, -0.21159707009792328,
    0.21374884247779846, -0.8971779346466064, -0.25492337346076965, 0.38733115792274475,
    -0.7235956192016602, -0.08134107291698456, 1.0406967401504517, -0.6256933808326721,
    0.3376884162425995, -1.3287017345428467, -0.3653199374675751, 0.5980619192123413,
    -0.9307689070701599, 0.35409656167030334, 1.6389620304107666, -0.5835080146789551,
    0.7013574838638306, -1.5211125612258911, -0.19656819105148315, 1.4095137119293213,
    -1.3685739040374756, 0.23750799894332886, 1.8435899019241333, -0.9344977140426636,
];
#[rustfmt::skip]
const INSTANCE_F32: [f32; 48] = [
    -0.8857960104942322, -0.2816423773765564, 0.3225112557411194, -0.7225112318992615,
    -0.11835762858390808, 0.4857960045337677, -0.715479850769043, 0.18939779698848724,
    1.0942755937576294, -0.47091835737228394, 0.43395939469337463, -1.1312345266342163,
    -0.31203705072402954, 1.0734074115753174, -1.3230371475219727, 0.06240738928318024,
    1.4478518962860107, -0.9485926628112793, 0.46918848156929016, 2.0762438774108887,
    -0.7035277485847473, 0.9035278558731079, -1.8762439489364624, -0.26918837428092957,
    0.27429628372192383, -0.9239259958267212, -0.23120373487472534, 0.4615185558795929,
    -0.7367037534713745, -0.04398149251937866, 0.9312344789505005, -0.6339593529701233,
    0.2709183096885681, -1.2942755222320557, -0.3893977999687195, 0.5154799222946167,
    -0.8206398487091064, 0.3858637809753418, 1.5923672914505005, -0.49455776810646057,
    0.7119457721710205, -1.3749792575836182, -0.2900463342666626, 1.441759467124939,
    -1.5537965297698975, 0.1780092716217041, 1.9098149538040161, -1.0857408046722412,
];
#[rustfmt::skip]
const LAYER_LAST_OFFSET_F32: [f32; 48] = [
    -1.224717378616333, 0.0, 1.224717378616333, -1.224717378616333,
    0.0, 1.224717378616333, -1.224717378616333, 0.0,
    1.224717378616333, -0.12629272043704987, 1.284373164176941, -1.1556974649429321,
    -0.12629272043704987, 1.284373164176941, -1.1556974649429321, -0.12629272043704987,
    1.284373164176941, -1.1556974649429321, -0.12629272043704987, 1.284373164176941,
    -1.1556974649429321, 1.1554614305496216, -1.28411066532135, 0.12626691162586212,
    1.1554614305496216, -1.28411066532135, 0.12626691162586212, 1.1554614305496216,
    -1.28411066532135, 0.12626691162586212, 1.1554614305496216, -1.28411066532135,
    0.12626691162586212, -1.224717378616333, 0.0, 1.224717378616333,
    -1.224717378616333, 0.0, 1.224717378616333, -0.12629272043704987,
    1.284373164176941, -1.1556974649429321, -0.12629272043704987, 1.284373164176941,
    -1.1556974649429321, -0.12629272043704987, 1.284373164176941, -1.1556974649429321,
];
#[rustfmt::skip]
const INSTANCE_RUNNING_MEAN: [f64; 4] = [
    1.1004761904761904, 1.292964285714286, 0.9738392857142859, 1.166327380952381,
];
#[rustfmt::skip]
const INSTANCE_RUNNING_VAR: [f64; 4] = [
    17.866237414965987, 20.25435493197279, 17.895360799319732, 16.73042542517007,
];
#[rustfmt::skip]
const INSTANCE_EVAL_F64: [f64; 48] = [
    -0.9216341361258256, -0.29637936202570353, 0.3288754120744185, -0.7526463593420087,
    -0.12739158524188673, 0.4978631888582353, -0.6725751981662501, 0.20828225252244983,
    1.08913970321115, -0.4345056168990339, 0.4463518337896661, -1.0772934863205177,
    -0.061355946249310706, 1.1881356319960255, -0.9731470979418534, 0.27634448030348296,
    1.525836058548819, -0.6354466713890599, 0.8350040705615264, 2.450329667342762,
    -0.3437470406031586, 1.2715785561780766, -1.5224981517678438, 0.09282744501339155,
    0.4302680781447086, -0.6512536932717187, -0.02599891917159671, 0.5992558549285254,
    -0.4822659164879019, 0.14298885761222008, 1.2319814519714798, -0.2916638681387041,
    0.5891935825499959, -0.934451737560188, -0.05359428687148797, 0.8272631638172122,
    -0.7705268420101772, 0.478964736235159, 1.7284563144804954, -0.4328264154573836,
    0.8166651627879526, -1.3446175671499263, -0.08180234923322867, 1.5335232475480067,
    -1.2605534603979136, 0.35477213638332145, 1.9700977331645568, -0.8239789747813637,
];

// The same calls in float64 on the float32 offset input: the exact
// normalization of those values, which torch's float32 path misses by
// 1.1e-3 (LayerNorm) and 2.5e-3 (GroupNorm).
#[rustfmt::skip]
const GROUP2_OFFSET_F64: [f64; 48] = [
    -0.9101551180932965, -0.3072700847606219, 0.29561494857205267, -0.7472132171925736,
    -0.14432818385989907, 0.45855684947277553, -0.6764069744368478, 0.22792057556216413,
    1.132248125561176, -0.4319941230857635, 0.4723334269132484, -1.0919088217336912,
    -0.3566122017755198, 0.9739408871964256, -1.3275563477820744, 0.0029967411898708662,
    1.3335498301618163, -0.9679474048166838, 0.5532571051926217, 2.216448466407553,
    -0.6604230773155717, 1.00276828389936, -1.8741032598237652, -0.21091189860883341,
    0.2123375429265289, -0.8988036253813003, -0.2564251374533365, 0.3859533504746272,
    -0.725187817833202, -0.08280932990523822, 1.0393537370331978, -0.6273580154285461,
    0.3362097164633996, -1.3305020359983444, -0.3669343041063986, 0.5966334277855471,
    -0.9288445703814523, 0.355912405474677, 1.6406693813308062, -0.5816129552852011,
    0.7031440205709282, -1.5191383160450793, -0.19297667523744183, 1.4129695445827197,
    -1.3648833761872896, 0.24106284363287211, 1.8470090634530338, -0.9308438573169756,
];
#[rustfmt::skip]
const LAYER_LAST_OFFSET_F64: [f64; 48] = [
    -1.2247173893637715, 0.0, 1.2247173893637715, -1.2247173893637715,
    0.0, 1.2247173893637715, -1.2247173893637715, 0.0,
    1.2247173893637715, -0.12705784240455234, 1.28328420826956, -1.1562263658694452,
    -0.12705784240455234, 1.28328420826956, -1.1562263658694452, -0.12705784240455234,
    1.28328420826956, -1.1562263658694452, -0.12705784240455234, 1.28328420826956,
    -1.1562263658694452, 1.156226365869885, -1.2832842082700482, 0.12705784240460066,
    1.156226365869885, -1.2832842082700482, 0.12705784240460066, 1.156226365869885,
    -1.2832842082700482, 0.12705784240460066, 1.156226365869885, -1.2832842082700482,
    0.12705784240460066, -1.2247173893637715, 0.0, 1.2247173893637715,
    -1.2247173893637715, 0.0, 1.2247173893637715, -0.12705784240455234,
    1.28328420826956, -1.1562263658694452, -0.12705784240455234, 1.28328420826956,
    -1.1562263658694452, -0.12705784240455234, 1.28328420826956, -1.1562263658694452,
];

/// x_i = ((37 i) mod 101)/7 − 5, in NCHW order.
fn nchw_input() -> Vec<f64> {
    (0..N * C * H * W)
        .map(|i| ((i * 37) % 101) as f64 / 7.0 - 5.0)
        .collect()
}

/// x_i = 1e4 + ((37 i) mod 101)/64, exact in `f32`, in NCHW order.
fn offset_input() -> Vec<f32> {
    (0..N * C * H * W)
        .map(|i| 1e4 + ((i * 37) % 101) as f32 / 64.0)
        .collect()
}

fn gamma() -> Vec<f64> {
    (0..C).map(|c| 0.5 + 0.25 * c as f64).collect()
}

fn beta() -> Vec<f64> {
    (0..C).map(|c| 0.1 * c as f64 - 0.2).collect()
}

/// Distance in units in the last place of `b`, or of 1 for `|b| < 1`:
/// normalized outputs are O(1), and the frameworks' `x·scale + shift`
/// leaves an error of the order of the scale's ulp also where `y` is near 0.
fn ulps64(a: f64, b: f64) -> f64 {
    (a - b).abs() / (b.abs().max(1.0) * f64::EPSILON)
}

fn ulps32(a: f32, b: f32) -> f32 {
    (a - b).abs() / (b.abs().max(1.0) * f32::EPSILON)
}

fn worst64(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&a, &b)| ulps64(a, b))
        .fold(0.0, f64::max)
}

fn worst32(got: &[f32], want: &[f32]) -> f32 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&a, &b)| ulps32(a, b))
        .fold(0.0, f32::max)
}

fn layouts() -> [(Layout, bool); 2] {
    [
        (Layout::nchw(N, C, H, W).unwrap(), false),
        (Layout::nhwc(N, H, W, C).unwrap(), true),
    ]
}

#[test]
fn group_norm_matches_torch_in_both_layouts() {
    let x = nchw_input();
    let gn = GroupNorm::<f64>::new(2).unwrap();
    for (layout, last) in layouts() {
        let (xs, want) = if last {
            (to_nhwc(&x, N, C, H * W), to_nhwc(&GROUP2_F64, N, C, H * W))
        } else {
            (x.clone(), GROUP2_F64.to_vec())
        };
        let mut y = vec![0.0; xs.len()];
        let stats = gn
            .normalize(&xs, layout, Some(&gamma()), Some(&beta()), &mut y)
            .unwrap();
        assert_eq!(stats.channels(), N * 2);
        assert_eq!(stats.count(), (C / 2 * H * W) as u64);
        assert!(
            worst64(&y, &want) <= 8.0,
            "{layout:?}: {}",
            worst64(&y, &want)
        );
    }
    // f32 data 1e4 + small: ours is the exact normalization rounded to
    // f32 (torch in float64 on the same values), where torch's own float32
    // path is 2.5e-3 off.
    let x = offset_input();
    let g32: Vec<f32> = gamma().iter().map(|&v| v as f32).collect();
    let b32: Vec<f32> = beta().iter().map(|&v| v as f32).collect();
    let gn = GroupNorm::<f32>::new(2).unwrap();
    for (layout, last) in layouts() {
        let perm = |v: &[f64]| {
            if last {
                to_nhwc(v, N, C, H * W)
            } else {
                v.to_vec()
            }
        };
        let xs = if last {
            to_nhwc(&x, N, C, H * W)
        } else {
            x.clone()
        };
        let mut y = vec![0.0; xs.len()];
        gn.normalize(&xs, layout, Some(&g32), Some(&b32), &mut y)
            .unwrap();
        let exact = perm(&GROUP2_OFFSET_F64);
        let worst = y
            .iter()
            .zip(&exact)
            .map(|(&a, &b)| ulps32(a, b as f32))
            .fold(0.0, f32::max);
        assert!(worst <= 2.0, "{layout:?}: {worst} f32 ulps");
    }
    let torch_error = GROUP2_OFFSET_F32
        .iter()
        .zip(&GROUP2_OFFSET_F64)
        .map(|(&a, &b)| (f64::from(a) - b).abs())
        .fold(0.0, f64::max);
    assert!(torch_error > 1e-3, "{torch_error}");
}

#[test]
fn instance_norm_matches_torch_in_both_layouts() {
    let x = nchw_input();
    for (layout, last) in layouts() {
        let perm = |v: &[f64]| {
            if last {
                to_nhwc(v, N, C, H * W)
            } else {
                v.to_vec()
            }
        };
        let mut y = vec![0.0; x.len()];
        let stats = InstanceNorm::<f64>::new()
            .normalize(&perm(&x), layout, Some(&gamma()), Some(&beta()), &mut y)
            .unwrap();
        assert_eq!(stats.channels(), N * C);
        assert!(worst64(&y, &perm(&INSTANCE_F64)) <= 8.0, "{layout:?}");
        let x32: Vec<f32> = perm(&x).iter().map(|&v| v as f32).collect();
        let g32: Vec<f32> = gamma().iter().map(|&v| v as f32).collect();
        let b32: Vec<f32> = beta().iter().map(|&v| v as f32).collect();
        let mut y32 = vec![0.0_f32; x.len()];
        InstanceNorm::<f32>::new()
            .normalize(&x32, layout, Some(&g32), Some(&b32), &mut y32)
            .unwrap();
        let want: Vec<f32> = if last {
            to_nhwc(&INSTANCE_F32, N, C, H * W)
        } else {
            INSTANCE_F32.to_vec()
        };
        assert!(
            worst32(&y32, &want) <= 4.0,
            "{layout:?}: {}",
            worst32(&y32, &want)
        );
    }
}

#[test]
fn instance_running_statistics_follow_torch_for_three_steps_then_evaluate() {
    let x = nchw_input();
    for (layout, last) in layouts() {
        let perm = |v: &[f64]| {
            if last {
                to_nhwc(v, N, C, H * W)
            } else {
                v.to_vec()
            }
        };
        let norm = InstanceNorm::<f64>::new();
        let mut running = RunningStats::new(C, BnConfig::pytorch());
        for step in 0..3 {
            let xb: Vec<f64> = x
                .iter()
                .map(|v| v * (0.5 + step as f64) + step as f64)
                .collect();
            let stats = norm.statistics(&perm(&xb), layout).unwrap();
            norm.update_running(&mut running, &stats).unwrap();
        }
        assert!(worst64(running.mean(), &INSTANCE_RUNNING_MEAN) <= 4.0);
        assert!(worst64(running.var(), &INSTANCE_RUNNING_VAR) <= 4.0);
        assert_eq!(running.batches_tracked(), 3);
        let mut y = vec![0.0; x.len()];
        running
            .normalize(&perm(&x), layout, Some(&gamma()), Some(&beta()), &mut y)
            .unwrap();
        assert!(worst64(&y, &perm(&INSTANCE_EVAL_F64)) <= 8.0, "{layout:?}");
    }
}

#[test]
fn layer_norm_matches_torch_over_the_last_axis_and_over_chw() {
    let x = nchw_input();
    // normalized_shape = (W,): rows of 3.
    let mut y = vec![0.0; x.len()];
    let stats = LayerNorm::<f64>::new(W)
        .unwrap()
        .normalize(&x, None, None, &mut y)
        .unwrap();
    assert_eq!(stats.channels(), N * C * H);
    assert!(worst64(&y, &LAYER_LAST_F64) <= 8.0);
    // normalized_shape = (C, H, W) with elementwise affine, NCHW; and the
    // same layer on NHWC memory, γ and β in (H, W, C) order.
    let lw: Vec<f64> = (0..C * H * W).map(|j| 1.0 + j as f64 / 100.0).collect();
    let lb: Vec<f64> = (0..C * H * W).map(|j| j as f64 / 200.0).collect();
    let ln = LayerNorm::<f64>::new(C * H * W).unwrap();
    ln.normalize(&x, Some(&lw), Some(&lb), &mut y).unwrap();
    assert!(worst64(&y, &LAYER_CHW_F64) <= 8.0);
    let xt = to_nhwc(&x, N, C, H * W);
    let (lwt, lbt) = (to_nhwc(&lw, 1, C, H * W), to_nhwc(&lb, 1, C, H * W));
    ln.normalize(&xt, Some(&lwt), Some(&lbt), &mut y).unwrap();
    assert!(worst64(&y, &to_nhwc(&LAYER_CHW_F64, N, C, H * W)) <= 8.0);
    // f32 rows of 1e4 + small: the exact result rounded, where torch's
    // float32 path is 1.1e-3 off.
    let x = offset_input();
    let mut y = vec![0.0_f32; x.len()];
    LayerNorm::<f32>::new(W)
        .unwrap()
        .normalize(&x, None, None, &mut y)
        .unwrap();
    let worst = y
        .iter()
        .zip(&LAYER_LAST_OFFSET_F64)
        .map(|(&a, &b)| ulps32(a, b as f32))
        .fold(0.0, f32::max);
    assert!(worst <= 1.0, "{worst} f32 ulps");
    let torch_error = LAYER_LAST_OFFSET_F32
        .iter()
        .zip(&LAYER_LAST_OFFSET_F64)
        .map(|(&a, &b)| (f64::from(a) - b).abs())
        .fold(0.0, f64::max);
    assert!(torch_error > 1e-3, "{torch_error}");
}

// torch 2.15.0: `m = torch.nn.InstanceNorm2d(4, eps=1e-3, affine=True,
// track_running_stats=True, momentum=0.1).double()`, weight and bias set
// to γ and β (float64 tensors), `m.train()`, then `m(x * (0.5 + step) + step)` for step in
// 0, 1, 2, then `m.eval()`; `m(x)` printed, x = `nchw_input`.
#[rustfmt::skip]
const INSTANCE_EVAL_EPS3_F64: [f64; 48] = [
    -0.9216141434522331, -0.29637669186220994, 0.32886075972781326, -0.7526310484279025,
    -0.1273935968378793, 0.4978438547521439, -0.6725612054128625, 0.2082747186342424,
    1.0891106426813475, -0.4344974421568882, 0.4463384818902168, -1.0772696029480189,
    -0.061354249166101, 1.18810276859557, -0.9731201810462393, 0.2763368367154318,
    1.5257938544771028, -0.6354290951647067, 0.8349823251102119, 2.4502601317015302,
    -0.34373391213210125, 1.2715438944592168, -1.5224501493744147, 0.09282765721690373,
    0.4302506167424117, -0.6512411914133042, -0.026003739823280976, 0.5992337117667423,
    -0.48225809638897355, 0.14297935520104965, 1.2319489006349322, -0.2916591842033035,
    0.5891767398438015, -0.9344313449944343, -0.0535954209473293, 0.8272405030997758,
    -0.7705055295173198, 0.4789514882443513, 1.7284085060060226, -0.4328144436357869,
    0.8166425741258841, -1.3445803755159254, -0.08179697052269844, 1.53348083606862,
    -1.2605132077650116, 0.35476459882630657, 1.970042405417625, -0.8239516384160067,
];

#[test]
fn instance_norm_has_one_eps_for_training_and_evaluation() {
    // PyTorch's layer has one eps. Here the layer's eps is the one:
    // `normalize_running` evaluates with it, whatever the configuration
    // the running statistics keep; `from_config` takes the configuration's.
    let x = nchw_input();
    let steps: Vec<Vec<f64>> = (0..3)
        .map(|step| {
            x.iter()
                .map(|v| v * (0.5 + f64::from(step)) + f64::from(step))
                .collect()
        })
        .collect();
    for (layout, last) in layouts() {
        let perm = |v: &[f64]| {
            if last {
                to_nhwc(v, N, C, H * W)
            } else {
                v.to_vec()
            }
        };
        let norm = InstanceNorm::<f64>::new().with_eps(1e-3).unwrap();
        let mut running = RunningStats::new(C, BnConfig::pytorch()); // eps 1e-5
        for xb in &steps {
            let stats = norm.statistics(&perm(xb), layout).unwrap();
            norm.update_running(&mut running, &stats).unwrap();
        }
        let want = perm(&INSTANCE_EVAL_EPS3_F64);
        let mut y = vec![0.0_f64; x.len()];
        norm.normalize_running(
            &running,
            &perm(&x),
            layout,
            Some(&gamma()),
            Some(&beta()),
            &mut y,
        )
        .unwrap();
        assert!(
            worst64(&y, &want) <= 8.0,
            "{layout:?}: {}",
            worst64(&y, &want)
        );
        // The configuration's eps, the other route: 1e-5 where torch
        // uses 1e-3: 7.0e-5 off (measured).
        running
            .normalize(&perm(&x), layout, Some(&gamma()), Some(&beta()), &mut y)
            .unwrap();
        let off = y
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        eprintln!("{layout:?}: the configuration's eps route is {off:e} off");
        assert!(off > 1e-5, "{off}");
        // One configuration for both: the layer built from it.
        let config = BnConfig::pytorch().with_eps(1e-3).unwrap();
        let norm = InstanceNorm::from_config(&config);
        let mut running = RunningStats::new(C, config);
        for xb in &steps {
            let stats = norm.statistics(&perm(xb), layout).unwrap();
            norm.update_running(&mut running, &stats).unwrap();
        }
        running
            .normalize(&perm(&x), layout, Some(&gamma()), Some(&beta()), &mut y)
            .unwrap();
        assert!(worst64(&y, &want) <= 8.0, "{layout:?}");
        // f32 running statistics, f16-free: f32 in, f64 out.
        let x32: Vec<f32> = perm(&x).iter().map(|&v| v as f32).collect();
        let mut y32 = vec![0.0_f32; x.len()];
        let r32 = RunningStats::<f32>::with_state(
            &running.mean().iter().map(|&v| v as f32).collect::<Vec<_>>(),
            &running.var().iter().map(|&v| v as f32).collect::<Vec<_>>(),
            BnConfig::pytorch(),
        )
        .unwrap();
        let g32: Vec<f32> = gamma().iter().map(|&v| v as f32).collect();
        let b32: Vec<f32> = beta().iter().map(|&v| v as f32).collect();
        InstanceNorm::<f32>::new()
            .with_eps(1e-3)
            .unwrap()
            .normalize_running(&r32, &x32, layout, Some(&g32), Some(&b32), &mut y32)
            .unwrap();
        let w32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
        assert!(worst32(&y32, &w32) <= 4.0, "{}", worst32(&y32, &w32));
    }
    // A layout of another channel count than the running statistics.
    let running = RunningStats::<f64>::new(3, BnConfig::pytorch());
    let e = InstanceNorm::<f64>::new()
        .normalize_running(
            &running,
            &x,
            Layout::nchw(N, C, H, W).unwrap(),
            None,
            None,
            &mut vec![0.0_f64; x.len()],
        )
        .unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::LengthMismatch {
            what: "layout channels",
            ..
        }
    ));
}

#[test]
fn layer_norm_takes_gamma_in_chw_order_on_channels_last_memory() {
    // normalized_shape = (C, H, W) with elementwise γ, β in torch's order,
    // on NHWC memory: the layout says how the memory lies.
    let x = nchw_input();
    let lw: Vec<f64> = (0..C * H * W).map(|j| 1.0 + j as f64 / 100.0).collect();
    let lb: Vec<f64> = (0..C * H * W).map(|j| j as f64 / 200.0).collect();
    let ln = LayerNorm::<f64>::new(C * H * W).unwrap();
    let xt = to_nhwc(&x, N, C, H * W);
    let want = to_nhwc(&LAYER_CHW_F64, N, C, H * W);
    let mut y = vec![0.0_f64; x.len()];
    let nhwc = Layout::nhwc(N, H, W, C).unwrap();
    ln.normalize_into(&xt, nhwc, Some(&lw), Some(&lb), &mut y)
        .unwrap();
    assert!(worst64(&y, &want) <= 8.0, "{}", worst64(&y, &want));
    // Channels first, the same call is the memory order.
    ln.normalize_into(
        &x,
        Layout::nchw(N, C, H, W).unwrap(),
        Some(&lw),
        Some(&lb),
        &mut y,
    )
    .unwrap();
    assert!(worst64(&y, &LAYER_CHW_F64) <= 8.0);
    // The slice method takes γ in memory order: given torch's (C, H, W)
    // order on NHWC memory it normalizes with the wrong γ (0.26 off here);
    // with a layout the order is explicit.
    ln.normalize(&xt, Some(&lw), Some(&lb), &mut y).unwrap();
    let off = y
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    eprintln!("γ in (C, H, W) order given to the memory-order method: {off} off");
    assert!(off > 0.1, "{off}");
    // A sample that is not `features` long is an error naming both.
    let e = LayerNorm::<f64>::new(C)
        .unwrap()
        .normalize_into(&xt, nhwc, None, None, &mut y)
        .unwrap_err();
    assert_eq!(
        e.kind(),
        &ErrorKind::LengthMismatch {
            what: "features",
            expected: C * H * W,
            actual: C
        }
    );
    let e = ln
        .normalize_into(&xt, nhwc, Some(&lw[1..]), None, &mut y)
        .unwrap_err();
    assert!(matches!(
        e.kind(),
        ErrorKind::LengthMismatch { what: "gamma", .. }
    ));
    // f32 rows of 1e4 + small, f32 out: the exact result rounded once.
    let x = offset_input();
    let mut y32 = vec![0.0_f32; x.len()];
    LayerNorm::<f32>::new(W)
        .unwrap()
        .normalize_into(&x, Layout::nc(N * C * H, W).unwrap(), None, None, &mut y32)
        .unwrap();
    let worst = y32
        .iter()
        .zip(&LAYER_LAST_OFFSET_F64)
        .map(|(&a, &b)| ulps32(a, b as f32))
        .fold(0.0, f32::max);
    assert!(worst <= 0.5, "{worst} f32 ulps");
}

#[test]
fn batch_stats_lend_the_mean_and_the_variance_alike() {
    // PyTorch's pair is `mean`, `var`; RunningStats has mean() and var()
    // as slices, and now BatchStats too (variance() stays a new Vec).
    let xs = [1.0, 10.0, 3.0, 20.0, f64::NAN, 0.0];
    let s = BatchStats::<f64>::compute(&xs, Layout::nc(3, 2).unwrap()).unwrap();
    let (mean, var): (&[f64], &[f64]) = (s.mean(), s.var());
    assert!(mean[0].is_nan() && var[0].is_nan());
    assert_eq!((mean[1], var[1]), (10.0, 200.0 / 3.0));
    assert_eq!(var[1].to_bits(), s.variance()[1].to_bits());
    // After a merge and through f32 the pair agrees with variance().
    let mut m = BatchStats::<f32>::compute(&[1.0_f32, 3.0], Layout::nc(2, 1).unwrap()).unwrap();
    m.merge(&BatchStats::compute(&[1e4_f32], Layout::nc(1, 1).unwrap()).unwrap());
    assert_eq!(m.var(), &m.variance()[..]);
    m.merge(&BatchStats::new(2));
    assert!(m.is_poisoned() && m.var()[0].is_nan());
    let r = BatchStats::<f64>::from(m);
    assert!(r.var()[0].is_nan());
}

#[test]
fn norm_is_the_module_and_batchnorm_its_first_name() {
    fn takes(s: &momenta::norm::BatchStats<f64>) -> usize {
        s.channels()
    }
    let old: momenta::batchnorm::BatchStats<f64> = momenta::batchnorm::BatchStats::compute(
        &[1.0, 2.0],
        momenta::batchnorm::Layout::nc(1, 2).unwrap(),
    )
    .unwrap();
    assert_eq!(takes(&old), 2);
    let _: momenta::batchnorm::LayerNorm<f32> = momenta::norm::LayerNorm::new(4).unwrap();
}

#[test]
fn statistics_are_exact_fractions_on_small_integers() {
    // Integers: each group's mean is Σx/n and its M2 (nΣx² − (Σx)²)/n,
    // exact integers over n, rounded once here; the kernels may round
    // twice (shift, then offset), so within 2 ulps.
    let xs: Vec<f64> = (0..2 * 6 * 5).map(|i| ((i * 7) % 11) as f64).collect();
    let stats = GroupNorm::<f64>::new(3)
        .unwrap()
        .statistics(&xs, Layout::ncl(2, 6, 5).unwrap())
        .unwrap();
    let ulps = |a: f64, b: f64| (a - b).abs() / (b.abs() * f64::EPSILON);
    for s in 0..2 {
        for g in 0..3 {
            let v = &xs[(s * 6 + 2 * g) * 5..(s * 6 + 2 * g + 2) * 5];
            let sum: i64 = v.iter().map(|&x| x as i64).sum();
            let sq: i64 = v.iter().map(|&x| (x as i64) * (x as i64)).sum();
            let mean = sum as f64 / 10.0;
            let m2 = (10 * sq - sum * sum) as f64 / 10.0;
            assert!(ulps(stats.mean()[s * 3 + g], mean) <= 2.0);
            assert!(ulps(stats.sum_squared_deviations()[s * 3 + g], m2) <= 2.0);
        }
    }
}

#[test]
fn hostile_shapes_and_parameters_are_errors_naming_the_rule() {
    let xs = vec![1.0_f64; 2 * 6 * 4];
    let layout = Layout::nchw(2, 6, 2, 2).unwrap();
    let mut y = vec![0.0; xs.len()];
    // Groups that do not divide C, or none.
    let e = GroupNorm::<f64>::new(4)
        .unwrap()
        .statistics(&xs, layout)
        .unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::InvalidParameter { name: "groups", .. }),
        "{e}"
    );
    assert!(e.to_string().contains("divisor"));
    assert!(GroupNorm::<f64>::new(0).is_err());
    // Wrong slice, output, γ and β lengths.
    let gn = GroupNorm::<f64>::new(3).unwrap();
    assert!(matches!(
        gn.statistics(&xs[1..], layout).unwrap_err().kind(),
        ErrorKind::LengthMismatch { what: "data", .. }
    ));
    assert!(matches!(
        gn.normalize(&xs, layout, None, None, &mut y[1..])
            .unwrap_err()
            .kind(),
        ErrorKind::LengthMismatch { what: "output", .. }
    ));
    assert!(matches!(
        gn.normalize(&xs, layout, Some(&[1.0; 5]), None, &mut y)
            .unwrap_err()
            .kind(),
        ErrorKind::LengthMismatch { what: "gamma", .. }
    ));
    assert!(matches!(
        InstanceNorm::new()
            .normalize(&xs, layout, None, Some(&[0.0; 7]), &mut y)
            .unwrap_err()
            .kind(),
        ErrorKind::LengthMismatch { what: "beta", .. }
    ));
    let ln = LayerNorm::<f64>::new(5).unwrap();
    assert!(ln.statistics(&xs).is_err(), "48 is not a multiple of 5");
    assert!(matches!(
        LayerNorm::new(4)
            .unwrap()
            .normalize(&xs, Some(&[1.0; 3]), None, &mut y)
            .unwrap_err()
            .kind(),
        ErrorKind::LengthMismatch { what: "gamma", .. }
    ));
    assert!(LayerNorm::<f64>::new(0).is_err());
    // eps: negative, NaN, ∞.
    for bad in [-1e-5, f64::NAN, f64::INFINITY] {
        assert!(GroupNorm::<f64>::new(1).unwrap().with_eps(bad).is_err());
        assert!(InstanceNorm::<f64>::new().with_eps(bad).is_err());
        assert!(LayerNorm::<f64>::new(1).unwrap().with_eps(bad).is_err());
    }
    // Instance statistics that do not fit the running statistics.
    let stats = InstanceNorm::<f64>::new().statistics(&xs, layout).unwrap();
    let mut running = RunningStats::new(5, BnConfig::pytorch());
    let before = running.clone();
    assert!(matches!(
        InstanceNorm::new()
            .update_running(&mut running, &stats)
            .unwrap_err()
            .kind(),
        ErrorKind::LengthMismatch {
            what: "instance statistics",
            ..
        }
    ));
    assert_eq!(running, before);
    // One position per instance: no unbiased variance (PyTorch refuses too).
    let one = InstanceNorm::<f64>::new()
        .statistics(&[1.0, 2.0], Layout::nc(1, 2).unwrap())
        .unwrap();
    let mut running = RunningStats::new(2, BnConfig::pytorch());
    assert!(matches!(
        InstanceNorm::new()
            .update_running(&mut running, &one)
            .unwrap_err()
            .kind(),
        ErrorKind::TooFewValues { .. }
    ));
}

#[test]
fn empty_tensors_are_valid_and_empty() {
    for layout in [
        Layout::nchw(0, 4, 2, 2).unwrap(),
        Layout::nhwc(0, 2, 2, 4).unwrap(),
    ] {
        let stats = GroupNorm::<f64>::new(2)
            .unwrap()
            .statistics(&[] as &[f64], layout)
            .unwrap();
        assert_eq!(stats.channels(), 0);
        let mut y: [f64; 0] = [];
        assert!(
            InstanceNorm::<f64>::new()
                .normalize(&[], layout, None, None, &mut y)
                .is_ok()
        );
    }
    // Samples with no positions: every group is empty (NaN statistics).
    let layout = Layout::nhwc(2, 0, 3, 4).unwrap();
    let stats = GroupNorm::<f64>::new(2)
        .unwrap()
        .statistics(&[] as &[f64], layout)
        .unwrap();
    assert_eq!((stats.channels(), stats.count()), (4, 0));
    assert!(stats.mean().iter().all(|m| m.is_nan()));
    let mut running = RunningStats::new(4, BnConfig::pytorch());
    let inst = InstanceNorm::<f64>::new()
        .statistics(&[] as &[f64], layout)
        .unwrap();
    assert!(
        InstanceNorm::new()
            .update_running(&mut running, &inst)
            .is_err()
    );
    assert!(
        LayerNorm::<f64>::new(3)
            .unwrap()
            .statistics(&[] as &[f64])
            .unwrap()
            .channels()
            == 0
    );
}

/// The `k` of data `40 + k·2^-bits`, `k` uniform in `[−2^m, 2^m)`.
fn near_forty(len: usize, seed: u64, m: i32) -> Vec<i64> {
    let mut rng = SplitMix(seed);
    (0..len).map(|_| rng.k20() >> (20 - m)).collect()
}

/// The exact normalization of `40 + k·2^-bits` in double-double: per
/// group (`group[i]` of value `i`), with `n` values, `S = Σk`, `Q = Σk²`,
/// `y = (n·k − S)/√(nQ − S² + eps·n²·2^(2·bits))·γᵢ + βᵢ`, exact but for
/// the square root and the quotient (within 2⁻¹⁰⁴).
fn exact_normalized(
    ks: &[i64],
    bits: i32,
    group: &[usize],
    eps: f64,
    affine: &[(f64, f64)],
) -> Vec<Dd> {
    let groups = group.iter().max().map_or(0, |g| g + 1);
    let mut sums = vec![(0_i128, 0_i128, 0_i128); groups];
    for (&k, &g) in ks.iter().zip(group) {
        let (n, s, q) = &mut sums[g];
        *n += 1;
        *s += i128::from(k);
        *q += i128::from(k) * i128::from(k);
    }
    let denominators: Vec<Dd> = sums
        .iter()
        .map(|&(n, s, q)| {
            let d = n * q - s * s;
            assert!(d < 1 << 53, "nQ − S² must be exact in f64");
            let eps_term = Dd::new(eps)
                .mul(Dd::new((n * n) as f64))
                .scale(2f64.powi(2 * bits));
            Dd::new(d as f64).add(eps_term).sqrt()
        })
        .collect();
    ks.iter()
        .zip(group)
        .zip(affine)
        .map(|((&k, &g), &(gamma, beta))| {
            let (n, s, _) = sums[g];
            let a = Dd::new((n * i128::from(k) - s) as f64);
            a.div(denominators[g])
                .mul(Dd::new(gamma))
                .add(Dd::new(beta))
        })
        .collect()
}

/// The worst distance of `got` from `exact`, in units of the type's
/// epsilon times `max(|y|, 1)`, as the tests above count.
fn worst_ulps(got: &[f64], exact: &[Dd], epsilon: f64) -> f64 {
    assert_eq!(got.len(), exact.len());
    got.iter()
        .zip(exact)
        .map(|(&y, e)| e.distance(y, e.to_f64().abs().max(1.0) * epsilon))
        .fold(0.0, f64::max)
}

/// Each layer's output on data `40 + k·2^-bits` (`k` in `[−2^m, 2^m)`,
/// from SplitMix seeds `seed..seed + 4`), against the exact
/// normalization, in both layouts, for `F`: `(layer, worst ulps)`.
fn far_from_zero_errors<F: momenta::Float>(
    narrow: bool,
    m: i32,
    bits: i32,
    seed: u64,
) -> Vec<(String, f64)> {
    let wide = |v: &[F]| -> Vec<f64> { v.iter().map(|x| x.as_f64()).collect() };
    let epsilon = if narrow {
        f64::from(f32::EPSILON)
    } else {
        f64::EPSILON
    };
    let eps = F::from_f64(1e-5);
    let mut out = Vec::new();
    // (name, n, c, h, w, group of (sample, channel, position), affine of (channel, feature))
    type Group = fn(usize, usize, usize, usize) -> usize;
    let layers: [(&str, usize, usize, Group); 4] = [
        ("group norm (2 groups)", 2, 4, |s, c, _, _| s * 2 + c / 2),
        ("instance norm (7 channels)", 2, 7, |s, c, _, cs| s * cs + c),
        ("layer norm (C, H, W)", 2, 4, |s, _, _, _| s),
        ("batch norm", 2, 4, |_, c, _, _| c),
    ];
    for (layer, (name, n, c, group_of)) in layers.into_iter().enumerate() {
        let (h, w) = (3, 5);
        let hw = h * w;
        let len = n * c * hw;
        let ks = near_forty(len, seed + layer as u64, m);
        let scale = 2f64.powi(-bits);
        let xs: Vec<F> = ks
            .iter()
            .map(|&k| F::from_f64(40.0 + k as f64 * scale))
            .collect();
        let group: Vec<usize> = (0..len)
            .map(|i| group_of(i / (c * hw), (i / hw) % c, i % hw, c))
            .collect();
        let layer_norm = name.starts_with("layer");
        // γ and β per channel, or per feature (C, H, W) for layer norm.
        let params = if layer_norm { c * hw } else { c };
        let gamma: Vec<F> = (0..params)
            .map(|j| F::from_f64(0.5 + 0.25 * (j % 5) as f64))
            .collect();
        let beta: Vec<F> = (0..params)
            .map(|j| F::from_f64(0.1 * (j % 7) as f64 - 0.2))
            .collect();
        let affine: Vec<(f64, f64)> = (0..len)
            .map(|i| {
                let j = if layer_norm {
                    i % (c * hw)
                } else {
                    (i / hw) % c
                };
                (gamma[j].as_f64(), beta[j].as_f64())
            })
            .collect();
        let exact = exact_normalized(&ks, bits, &group, eps.as_f64(), &affine);
        let mut worst: f64 = 0.0;
        for last in [false, true] {
            let (x, want) = if last {
                (to_nhwc(&xs, n, c, hw), to_nhwc(&exact, n, c, hw))
            } else {
                (xs.clone(), exact.clone())
            };
            let layout = if last {
                Layout::nhwc(n, h, w, c).unwrap()
            } else {
                Layout::nchw(n, c, h, w).unwrap()
            };
            let mut y = vec![F::zero(); len];
            match name.split(' ').next() {
                Some("group") => {
                    GroupNorm::<F>::new(2)
                        .unwrap()
                        .normalize(&x, layout, Some(&gamma), Some(&beta), &mut y)
                        .unwrap();
                }
                Some("instance") => {
                    InstanceNorm::<F>::new()
                        .normalize(&x, layout, Some(&gamma), Some(&beta), &mut y)
                        .unwrap();
                }
                Some("layer") => {
                    let (g, b) = if last {
                        (to_nhwc(&gamma, 1, c, hw), to_nhwc(&beta, 1, c, hw))
                    } else {
                        (gamma.clone(), beta.clone())
                    };
                    LayerNorm::<F>::new(c * hw)
                        .unwrap()
                        .normalize(&x, Some(&g), Some(&b), &mut y)
                        .unwrap();
                }
                _ => {
                    BatchStats::<F>::compute(&x, layout)
                        .unwrap()
                        .normalize(&x, layout, eps, Some(&gamma), Some(&beta), &mut y)
                        .unwrap();
                }
            }
            worst = worst.max(worst_ulps(&wide(&y), &want, epsilon));
        }
        out.push((name.to_string(), worst));
    }
    out
}

#[test]
fn every_layer_normalizes_data_far_from_zero_to_within_its_rounding() {
    // Groups at 40 ± 1e-3 and at 40 ± 1, exact in each type (f64: k·2⁻³⁰
    // and k·2⁻²⁰ with |k| < 2²⁰; f32: k·2⁻¹⁸ with |k| < 2⁸ and 2¹⁸), of 15,
    // 30 and 60 values, eps 1e-5, from 20 seeds. At ±1e-3 the mean's
    // rounding, 3.6e-15 in f64, is 1e-12 of the normalized output (σ ≈
    // 6e-4) when the mean is rounded once before `x − mean`: that left
    // f64 outputs 5800 (group and batch norm) to 7000 (instance and
    // layer norm) ulps off here, and 34 to 47 at ±1. `f32` outputs take
    // their roundings in `f32` (layer norm's, computed in `f64`, one).
    let mut failed = Vec::new();
    let cases = [
        ("f64", "±1e-3", 20, 30),
        ("f64", "±1", 20, 20),
        ("f32", "±1e-3", 8, 18),
        ("f32", "±1", 18, 18),
    ];
    for (ty, spread, m, bits) in cases {
        let mut worst: Vec<(String, f64)> = Vec::new();
        for seed in (0..20).map(|s| 40 + 10 * s) {
            let errors = if ty == "f32" {
                far_from_zero_errors::<f32>(true, m, bits, seed)
            } else {
                far_from_zero_errors::<f64>(false, m, bits, seed)
            };
            if worst.is_empty() {
                worst = errors;
            } else {
                for ((_, w), (_, e)) in worst.iter_mut().zip(errors) {
                    *w = w.max(e);
                }
            }
        }
        for (name, worst) in worst {
            let bound = match (ty, name.starts_with("layer")) {
                ("f64", _) => 3.5,
                (_, true) => 0.501,
                _ => 2.0,
            };
            eprintln!("{ty} 40 {spread}, {name}: {worst:.2} ulps");
            if worst > bound {
                failed.push(format!(
                    "{ty} 40 {spread}, {name}: {worst:.2} ulps of max(|y|, 1)"
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

#[test]
fn nan_in_one_group_stays_in_that_group() {
    let mut xs = nchw_input();
    xs[5] = f64::NAN; // sample 0, channel 0
    let stats = GroupNorm::<f64>::new(2)
        .unwrap()
        .statistics(&xs, Layout::nchw(N, C, H, W).unwrap())
        .unwrap();
    assert!(stats.mean()[0].is_nan());
    assert!(stats.mean()[1..].iter().all(|m| m.is_finite()));
}

/// A small tensor with a divisor of its channel count as the group count.
#[derive(Clone, Debug)]
struct Shaped {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    groups: usize,
    xs: Vec<f64>,
}

impl Arbitrary for Shaped {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = usize::arbitrary(g) % 3 + 1;
        let c = usize::arbitrary(g) % 8 + 1;
        let h = usize::arbitrary(g) % 5 + 1;
        let w = usize::arbitrary(g) % 5 + 1;
        let divisors: Vec<usize> = (1..=c).filter(|d| c % d == 0).collect();
        let groups = *g.choose(&divisors).unwrap_or(&1);
        let offset = *g.choose(&[0.0, -3.5, 1e6]).unwrap_or(&0.0);
        let xs = (0..n * c * h * w)
            .map(|_| offset + f64::from(i16::arbitrary(g)) / 64.0)
            .collect();
        Shaped {
            n,
            c,
            h,
            w,
            groups,
            xs,
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

fn close(a: &BatchStats<f64>, b: &BatchStats<f64>) -> bool {
    let near = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0);
    a.channels() == b.channels()
        && a.count() == b.count()
        && a.mean().iter().zip(b.mean()).all(|(&x, &y)| near(x, y))
        && a.variance()
            .iter()
            .zip(b.variance())
            .all(|(x, y)| near(*x, y))
}

#[test]
fn nchw_and_nhwc_give_the_same_group_statistics() {
    fn law(t: Shaped) -> bool {
        let gn = GroupNorm::<f64>::new(t.groups).unwrap();
        let first = gn
            .statistics(&t.xs, Layout::nchw(t.n, t.c, t.h, t.w).unwrap())
            .unwrap();
        let last = gn
            .statistics(
                &to_nhwc(&t.xs, t.n, t.c, t.h * t.w),
                Layout::nhwc(t.n, t.h, t.w, t.c).unwrap(),
            )
            .unwrap();
        close(&first, &last)
    }
    quick(law as fn(Shaped) -> bool);
}

#[test]
fn one_group_per_channel_is_instance_norm_and_one_group_is_layer_norm() {
    fn law(t: Shaped) -> bool {
        let layout = Layout::nchw(t.n, t.c, t.h, t.w).unwrap();
        let per_channel = GroupNorm::<f64>::new(t.c)
            .unwrap()
            .statistics(&t.xs, layout)
            .unwrap();
        let instance = InstanceNorm::<f64>::new()
            .statistics(&t.xs, layout)
            .unwrap();
        let one = GroupNorm::<f64>::new(1)
            .unwrap()
            .statistics(&t.xs, layout)
            .unwrap();
        let layer = LayerNorm::<f64>::new(t.c * t.h * t.w)
            .unwrap()
            .statistics(&t.xs)
            .unwrap();
        per_channel == instance && close(&one, &layer)
    }
    quick(law as fn(Shaped) -> bool);
}

#[test]
fn group_normalized_output_has_zero_mean_and_unit_variance_per_group() {
    fn law(t: Shaped) -> bool {
        let layout = Layout::nhwc(t.n, t.h, t.w, t.c).unwrap();
        let gn = GroupNorm::<f64>::new(t.groups)
            .unwrap()
            .with_eps(0.0)
            .unwrap();
        let mut y = vec![0.0; t.xs.len()];
        let stats = gn.normalize(&t.xs, layout, None, None, &mut y).unwrap();
        let after = gn.statistics(&y, layout).unwrap();
        // Groups of one value or of equal values normalize to NaN (0/0).
        stats
            .variance()
            .iter()
            .zip(after.mean())
            .zip(after.variance())
            .all(|((v0, m), v)| *v0 <= 1e-9 || (m.abs() <= 1e-9 && (v - 1.0).abs() <= 1e-9))
    }
    quick(law as fn(Shaped) -> bool);
}

/// The parallel statistics are the sequential ones, bit for bit, on any
/// number of threads: both layouts, short and long runs, several samples
/// or one, with an outlier and a NaN in some groups; and they reject what
/// the sequential ones reject.
#[cfg(feature = "rayon")]
#[test]
fn parallel_statistics_equal_the_sequential_ones_bit_for_bit() {
    use crate::support::{SplitMix, in_pool};
    let bits = |s: &BatchStats<f64>| {
        let m: Vec<u64> = s.mean().iter().map(|x| x.to_bits()).collect();
        let v: Vec<u64> = s.variance().iter().map(|x| x.to_bits()).collect();
        (s.count(), m, v)
    };
    let mut rng = SplitMix(31);
    for (n, c, h, w, groups) in [
        (16, 64, 8, 16, 64),
        (3, 6, 40, 40, 3),
        (1, 32, 64, 64, 8),
        (64, 4, 2, 2, 2),
    ] {
        let mut xs: Vec<f32> = (0..n * c * h * w)
            .map(|_| 1e3 + rng.signed_unit() as f32)
            .collect();
        xs[5] = 1e9;
        xs[n * c * h * w / 2] = f32::NAN;
        let gn = GroupNorm::<f64>::new(groups).unwrap();
        let inst = InstanceNorm::<f64>::new();
        for layout in [
            Layout::nchw(n, c, h, w).unwrap(),
            Layout::nhwc(n, h, w, c).unwrap(),
        ] {
            let seq = gn.statistics(&xs, layout).unwrap();
            let inst_seq = inst.statistics(&xs, layout).unwrap();
            for threads in [1, 2, 3, 8] {
                let (par, inst_par) = in_pool(threads, || {
                    (
                        gn.par_statistics(&xs, layout).unwrap(),
                        inst.par_statistics(&xs, layout).unwrap(),
                    )
                });
                assert_eq!(
                    bits(&par),
                    bits(&seq),
                    "{layout:?} G = {groups}, {threads} threads"
                );
                assert_eq!(
                    bits(&inst_par),
                    bits(&inst_seq),
                    "{layout:?}, {threads} threads"
                );
            }
        }
        for features in [c, c * h, c * h * w] {
            let ln = LayerNorm::<f64>::new(features).unwrap();
            let seq = ln.statistics(&xs).unwrap();
            for threads in [1, 2, 3, 8] {
                let par = in_pool(threads, || ln.par_statistics(&xs).unwrap());
                assert_eq!(
                    bits(&par),
                    bits(&seq),
                    "{features} features, {threads} threads"
                );
            }
        }
    }
    let layout = Layout::nchw(2, 4, 3, 3).unwrap();
    let xs = [0.0_f32; 72];
    assert_eq!(
        GroupNorm::<f64>::new(3)
            .unwrap()
            .par_statistics(&xs, layout)
            .unwrap_err()
            .kind(),
        GroupNorm::<f64>::new(3)
            .unwrap()
            .statistics(&xs, layout)
            .unwrap_err()
            .kind()
    );
    assert!(
        InstanceNorm::<f64>::new()
            .par_statistics(&xs[1..], layout)
            .is_err()
    );
    assert!(
        LayerNorm::<f64>::new(7)
            .unwrap()
            .par_statistics(&xs)
            .is_err()
    );
}
