//! The backward pass of every normalization layer — LayerNorm, GroupNorm,
//! InstanceNorm and the BatchNorm layer — against PyTorch autograd (the
//! convention) and against double-double references (the accuracy), in
//! `f64` and `f32`, near zero and far from it, in both layouts; workers
//! that split a sample's statistics; the laws (merge, threads, layouts);
//! hostile input.
//!
//! Reference values: PyTorch 2.15.0 (CPU) autograd, printed by this
//! script (`DX_*` is `x.grad`, `DW_*` `weight.grad`, `DB_*` `bias.grad`;
//! `_FAR` the data `1e4 + ((37 i) mod 101)/64`, exact in `float32`):
//!
//! ```python
//! import torch, torch.nn.functional as F
//! N, C, H, W = 2, 4, 2, 3
//! L = N * C * H * W
//! xs = [((37 * i) % 101) / 7 - 5 for i in range(L)]
//! far = [1e4 + ((37 * i) % 101) / 64 for i in range(L)]
//! gs = [((29 * i) % 31) / 10 - 1.5 for i in range(L)]
//! gc = [0.5 + 0.25 * c for c in range(C)]
//! bc = [0.1 * c - 0.2 for c in range(C)]
//! gl = [1 + j / 100 for j in range(C * H * W)]
//! bl = [j / 200 for j in range(C * H * W)]
//! gw = [0.5, 1.5, -2.0]
//! bw = [0.1, 0.2, 0.3]
//!
//! def run(name, data, dt):
//!     x = torch.tensor(data, dtype=torch.float64).to(dt).reshape(N, C, H, W).requires_grad_()
//!     g = torch.tensor(gs, dtype=torch.float64).to(dt).reshape(N, C, H, W)
//!     def p(v): return torch.tensor(v, dtype=torch.float64).to(dt).requires_grad_()
//!     if name == "group":
//!         w, b = p(gc), p(bc); y = F.group_norm(x, 2, w, b, eps=1e-5)
//!     elif name == "instance":
//!         w, b = p(gc), p(bc); y = F.instance_norm(x, weight=w, bias=b, eps=1e-5)
//!     elif name == "layer_chw":
//!         w, b = p(gl), p(bl); y = F.layer_norm(x, (C, H, W), w.reshape(C, H, W), b.reshape(C, H, W), eps=1e-5)
//!     elif name == "layer_w":
//!         w, b = p(gw), p(bw); y = F.layer_norm(x, (W,), w, b, eps=1e-5)
//!     (y * g).sum().backward()
//!     return x.grad.flatten().tolist(), w.grad.flatten().tolist(), b.grad.flatten().tolist()
//!
//! print("torch", torch.__version__)
//! for data_name, data in [("", xs), ("far", far)]:
//!     for name in ["group", "instance", "layer_chw", "layer_w"]:
//!         for dt, tn in [(torch.float64, "F64"), (torch.float32, "F32")]:
//!             dx, dw, db = run(name, data, dt)
//!             tag = (name + ("_" + data_name if data_name else "")).upper() + "_" + tn
//!             for what, v in [("DX", dx), ("DW", dw), ("DB", db)]:
//!                 print(f"{what}_{tag} = {[repr(float(a)) for a in v]}")
//! ```
#![allow(
    clippy::excessive_precision,
    reason = "torch's float32 outputs, printed in full by Python"
)]

use crate::support::{Dd, exact_norm, to_nhwc};
use momenta::norm::{
    AffineGrads, Backward, BatchNorm, BatchStats, GradSums, GroupNorm, InstanceNorm, LayerNorm,
    Layout,
};
use momenta::{ErrorKind, Float, Merge};
use quickcheck::{Arbitrary, Gen, QuickCheck};

const N: usize = 2;
const C: usize = 4;
const H: usize = 2;
const W: usize = 3;
const HW: usize = H * W;
const LEN: usize = N * C * HW;

#[rustfmt::skip]
const DX_GROUP_F64: [f64; 48] = [
    -0.15071641485606432, 0.1417839724578669, 0.08069283618771629, 0.12409242345536604,
    0.06300128718521542, 0.0019101509150648323, 0.06812209454297792, -0.004375219907304351,
    -0.07687253435758663, -0.04487912527006853, -0.1173764397203508, -0.08538303063283273,
    -0.23722392259888692, -0.38083957017798126, -0.2698558424113293, -0.41347148999042366,
    0.22328468940361762, 0.3342684171702695, 0.25987930262911463, 0.10367701267948583,
    0.2020740980756034, 0.04587180812597458, 0.1442688935220921, -0.011933396427536687,
    0.01896783352727005, -0.05645229237794056, -0.05120921044086591, -0.04596612850379125,
    -0.12138625440900187, -0.11614317247192722, -0.1898972103090115, -0.27747073925640037,
    0.2807521810997866, 0.19317865215239774, 0.18626833104729404, 0.17935800994219037,
    0.16226939255379177, 0.1966970654728276, 0.23112473839186348, 0.03887214661190878,
    0.07329981953094465, -0.11895277224901007, -0.1209853084565091, -0.09871103857965152,
    -0.30311703340178453, -0.28084276352492693, -0.25856849364806933, 0.4789142472986151,
];
#[rustfmt::skip]
const DW_GROUP_F64: [f64; 4] = [
    3.06499201914715, -1.3307363907926386, 2.0224850425702625, -1.4975604391114758,
];
#[rustfmt::skip]
const DB_GROUP_F64: [f64; 4] = [
    -0.10000000000000053, 0.9999999999999999, -1.0, 0.10000000000000053,
];
#[rustfmt::skip]
const DX_GROUP_F32: [f32; 48] = [
    -0.1507164090871811, 0.1417839676141739, 0.0806928351521492, 0.12409242242574692,
    0.06300128251314163, 0.0019101500511169434, 0.06812209635972977, -0.004375218413770199,
    -0.07687254250049591, -0.04487912356853485, -0.11737644672393799, -0.08538303524255753,
    -0.23722390830516815, -0.3808395266532898, -0.2698558568954468, -0.41347143054008484,
    0.22328467667102814, 0.33426839113235474, 0.25987929105758667, 0.10367700457572937,
    0.2020740807056427, 0.045871809124946594, 0.14426888525485992, -0.011933392845094204,
    0.01896783336997032, -0.056452300399541855, -0.051209211349487305, -0.045966122299432755,
    -0.12138625234365463, -0.11614317446947098, -0.18989720940589905, -0.27747073769569397,
    0.28075218200683594, 0.19317863881587982, 0.18626831471920013, 0.17935800552368164,
    0.16226939857006073, 0.19669707119464874, 0.23112474381923676, 0.03887214511632919,
    0.0732998177409172, -0.11895278096199036, -0.12098532915115356, -0.0987110584974289,
    -0.3031170666217804, -0.2808428108692169, -0.25856849551200867, 0.4789142608642578,
];
#[rustfmt::skip]
const DW_GROUP_F32: [f32; 4] = [
    3.0649914741516113, -1.3307363986968994, 2.02248477935791, -1.4975605010986328,
];
#[rustfmt::skip]
const DB_GROUP_F32: [f32; 4] = [
    -0.09999990463256836, 1.0000001192092896, -1.0000001192092896, 0.09999990463256836,
];
#[rustfmt::skip]
const DX_INSTANCE_F64: [f64; 48] = [
    -0.1599628972617263, 0.10264930099428524, 0.01093357013335241, 0.10717573957229573,
    0.015460008711362857, -0.07625572214956997, 0.09468230285116319, 0.04708580998923945,
    -0.0005106828726842923, -0.011643781779138784, -0.059240274641062525, -0.07037337354751703,
    -0.11777647929307801, -0.26795028526548587, -0.15128869559956684, -0.30146250157197474,
    0.3609081860320932, 0.47756977569801223, 0.13532562067063172, 0.0018538283549843378,
    0.06673589615782369, -0.06673589615782369, -0.0018538283549844052, -0.13532562067063172,
    0.06413127225516059, 0.04144818352094174, 0.013197431972012804, -0.015053319576916132,
    -0.037736408311135006, -0.06598715986006395, -0.20278978275244872, -0.3363109280872447,
    0.21754671435142442, 0.08402556901662848, 0.10718466549608965, 0.13034376197555084,
    0.1262430704682176, 0.06278107998565258, -0.0006809104969123804, -0.015525042372185069,
    -0.07898703285475003, -0.09383116473002272, -0.054418446269951876, 0.09742639418478193,
    -0.3440972745948623, -0.19225243414012852, -0.04040759368539468, 0.5337493545055556,
];
#[rustfmt::skip]
const DW_INSTANCE_F64: [f64; 4] = [
    3.05877680657428, -1.2793285992708414, 2.0031414478718013, -1.757853798021196,
];
#[rustfmt::skip]
const DB_INSTANCE_F64: [f64; 4] = [
    -0.10000000000000053, 0.9999999999999999, -1.0, 0.10000000000000053,
];
#[rustfmt::skip]
const DX_INSTANCE_F32: [f32; 48] = [
    -0.15996287763118744, 0.10264930129051208, 0.010933564975857735, 0.10717575252056122,
    0.01546001061797142, -0.07625573128461838, 0.09468230605125427, 0.04708581045269966,
    -0.0005106877069920301, -0.011643780395388603, -0.059240274131298065, -0.07037336379289627,
    -0.11777646839618683, -0.26795029640197754, -0.1512887179851532, -0.3014625012874603,
    0.360908180475235, 0.4775697588920593, 0.135325625538826, 0.0018538329750299454,
    0.0667359009385109, -0.0667358860373497, -0.0018538149306550622, -0.1353256106376648,
    0.06413126736879349, 0.04144817963242531, 0.013197427615523338, -0.01505332626402378,
    -0.03773640841245651, -0.06598716974258423, -0.20278975367546082, -0.33631089329719543,
    0.21754670143127441, 0.08402557671070099, 0.10718467086553574, 0.1303437501192093,
    0.12624305486679077, 0.06278108060359955, -0.0006809065816923976, -0.015525043942034245,
    -0.07898703217506409, -0.09383116662502289, -0.05441846325993538, 0.0974264070391655,
    -0.3440973162651062, -0.19225245714187622, -0.04040757194161415, 0.5337493419647217,
];
#[rustfmt::skip]
const DW_INSTANCE_F32: [f32; 4] = [
    3.058777332305908, -1.2793285846710205, 2.003141403198242, -1.7578539848327637,
];
#[rustfmt::skip]
const DB_INSTANCE_F32: [f32; 4] = [
    -0.09999990463256836, 1.0000001192092896, -1.0000001192092896, 0.09999990463256836,
];
#[rustfmt::skip]
const DX_LAYER_CHW_F64: [f64; 48] = [
    -0.30687767648499487, 0.3032810666268164, 0.17570456271994156, 0.27215825589071324,
    0.14268037248121282, 0.012251799320399746, 0.10585342323723315, -0.026476529426205427,
    -0.15975717184095678, -0.06900761717806152, -0.20418963909543833, -0.11534146393516859,
    -0.2524248653551709, -0.39045895652648593, -0.3044628506201544, -0.4443983212940949,
    0.2693856047108051, 0.3598974869358721, 0.22447779258066713, 0.08810740847414933,
    0.1757672214452783, 0.037495457836135004, 0.12325389130463835, -0.016919251807130335,
    0.07166134960010892, -0.06855880766618287, -0.06505711450940445, -0.06251192936492315,
    -0.20560161066810634, -0.20496944154821928, -0.20529378044062935, -0.35125298578070385,
    0.4471068655949812, 0.30664758132561515, 0.3099101474793193, 0.3122162056207262,
    0.16888739731446886, 0.16928043943128157, 0.16871697353579726, 0.02251864119264848,
    0.020042159272569908, -0.12806918909517312, -0.13245868703984592, -0.1378046929968159,
    -0.2887855654014503, -0.2960445873830145, -0.30426011737687575, 0.453680748903828,
];
#[rustfmt::skip]
const DW_LAYER_CHW_F64: [f64; 24] = [
    2.2819016276837227, -0.10477074915354073, 1.0761088162724814, -2.180375610587663,
    0.7754131509624195, 0.3079289349827771, -2.539355025799031, 0.8382265809598684,
    1.052158813526832, -1.6079711840313275, -0.4458259659685283, 1.7657932530987748,
    -0.47254389925056817, -0.9587624625934338, 1.6620572225522063, -0.15448708458832036,
    1.9474417749505473, -0.3787496082413321, 0.7408271719258017, 0.8523137056134378,
    1.0054794151143769, 0.47669241387584604, -2.0889669575841836, -1.4987359711309642,
];
#[rustfmt::skip]
const DB_LAYER_CHW_F64: [f64; 24] = [
    -1.6, 1.0999999999999999, 0.7000000000000002, 0.30000000000000004,
    -0.1000000000000002, -0.5, -0.9000000000000001, -1.3,
    1.4, 1.0000000000000002, 0.6000000000000001, 0.19999999999999984,
    -0.19999999999999996, -0.6000000000000001, -1.0, -1.4,
    1.3, 0.8999999999999999, 0.5000000000000001, 0.09999999999999987,
    -0.2999999999999998, -0.7, -1.0999999999999999, 1.6,
];
#[rustfmt::skip]
const DX_LAYER_CHW_F32: [f32; 48] = [
    -0.30687767267227173, 0.3032810091972351, 0.17570456862449646, 0.2721581757068634,
    0.142680361866951, 0.01225181482732296, 0.10585339367389679, -0.02647651545703411,
    -0.15975713729858398, -0.06900762021541595, -0.20418961346149445, -0.11534147709608078,
    -0.25242486596107483, -0.3904589116573334, -0.30446287989616394, -0.44439828395843506,
    0.26938557624816895, 0.3598974049091339, 0.22447775304317474, 0.08810745179653168,
    0.1757671982049942, 0.03749547898769379, 0.12325386703014374, -0.016919251531362534,
    0.07166135311126709, -0.06855881959199905, -0.06505711376667023, -0.06251190602779388,
    -0.20560160279273987, -0.20496943593025208, -0.20529377460479736, -0.35125303268432617,
    0.44710689783096313, 0.3066476285457611, 0.3099101483821869, 0.31221622228622437,
    0.1688874065876007, 0.16928043961524963, 0.16871698200702667, 0.022518634796142578,
    0.020042160525918007, -0.128069207072258, -0.13245870172977448, -0.13780471682548523,
    -0.2887856066226959, -0.29604464769363403, -0.30426013469696045, 0.45368072390556335,
];
#[rustfmt::skip]
const DW_LAYER_CHW_F32: [f32; 24] = [
    2.2819013595581055, -0.10477069020271301, 1.0761089324951172, -2.180375576019287,
    0.7754130959510803, 0.30792880058288574, -2.5393548011779785, 0.8382264375686646,
    1.0521588325500488, -1.6079713106155396, -0.4458259344100952, 1.7657933235168457,
    -0.47254395484924316, -0.9587623476982117, 1.6620571613311768, -0.15448705852031708,
    1.947441577911377, -0.37874943017959595, 0.7408270835876465, 0.8523134589195251,
    1.005479335784912, 0.4766923189163208, -2.0889668464660645, -1.4987359046936035,
];
#[rustfmt::skip]
const DB_LAYER_CHW_F32: [f32; 24] = [
    -1.600000023841858, 1.0999999046325684, 0.7000000476837158, 0.30000001192092896,
    -0.09999996423721313, -0.5, -0.8999999761581421, -1.2999999523162842,
    1.399999976158142, 1.0, 0.6000000238418579, 0.19999998807907104,
    -0.19999998807907104, -0.6000000238418579, -1.0, -1.399999976158142,
    1.2999999523162842, 0.8999999761581421, 0.5, 0.09999996423721313,
    -0.30000001192092896, -0.7000000476837158, -1.0999999046325684, 1.600000023841858,
];
#[rustfmt::skip]
const DX_LAYER_W_F64: [f64; 48] = [
    -0.2838427204210525, 0.5676856461045185, -0.283842925683466, -0.11971591486583197,
    0.23943204121415057, -0.11971612634831863, -0.01544721602528279, 0.03089445693085814,
    -0.015447240905575338, -0.09539340102630878, 0.04024392403668454, 0.05514947698962425,
    -0.20374486464874375, 0.08595450272931765, 0.11779036191942605, -0.025778327356640485,
    0.010875697742055379, 0.014902629614585217, 0.13936810348896722, -0.058795663130687736,
    -0.08057244035827954, 0.054511732573143304, 0.039778874151820826, -0.09429060672496414,
    -0.12432500916912523, -0.09072374245512971, 0.21504875162425494, -0.30316175091139375,
    -0.2212263590620802, 0.524388109973474, 0.15046532695700388, 0.10979878259247333,
    -0.26026410954947743, -0.15447214781268173, 0.3089445693085815, -0.15447242149589965,
    -0.05020344897213254, 0.10040698502528896, -0.050203536053156396, -0.05927624648549707,
    0.02500706447247343, 0.03426918201302361, -0.16762771010793207, 0.07071764316510643,
    0.09691006694282561, 0.3564846458802991, -0.15039189378570217, -0.2060927520945971,
];
#[rustfmt::skip]
const DW_LAYER_W_F64: [f64; 3] = [
    -3.5381914072438883, 1.2833219386076593, 3.0697004533589505,
];
#[rustfmt::skip]
const DB_LAYER_W_F64: [f64; 3] = [
    -2.9999999999999996, -8.881784197001252e-16, 3.0,
];
#[rustfmt::skip]
const DX_LAYER_W_F32: [f32; 48] = [
    -0.2838427722454071, 0.5676856637001038, -0.28384289145469666, -0.11971595138311386,
    0.23943205177783966, -0.1197161078453064, -0.015447225421667099, 0.030894458293914795,
    -0.015447236597537994, -0.09539341181516647, 0.040243953466415405, 0.05514945089817047,
    -0.20374490320682526, 0.08595460653305054, 0.1177903413772583, -0.025778353214263916,
    0.010875523090362549, 0.014902740716934204, 0.13936813175678253, -0.0587957501411438,
    -0.08057236671447754, 0.05451172962784767, 0.03977886214852333, -0.09429061412811279,
    -0.12432502210140228, -0.09072375297546387, 0.21504877507686615, -0.30316174030303955,
    -0.22122636437416077, 0.5243880748748779, 0.15046536922454834, 0.1097988486289978,
    -0.2602640390396118, -0.1544722020626068, 0.30894461274147034, -0.15447238087654114,
    -0.050203461199998856, 0.10040699690580368, -0.050203531980514526, -0.05927625298500061,
    0.025007113814353943, 0.034269146621227264, -0.1676277220249176, 0.07071781158447266,
    0.09690995514392853, 0.35648471117019653, -0.1503918170928955, -0.2060927152633667,
];
#[rustfmt::skip]
const DW_LAYER_W_F32: [f32; 3] = [
    -3.5381920337677, 1.283321499824524, 3.0697009563446045,
];
#[rustfmt::skip]
const DB_LAYER_W_F32: [f32; 3] = [
    -3.0, -2.384185791015625e-07, 3.0,
];
#[rustfmt::skip]
const DX_GROUP_FAR_F64: [f64; 48] = [
    -1.377966755288071, 1.2962800715140474, 0.7377595844454845, 1.1345212661735786,
    0.5760007791041062, 0.017480292035543243, 0.6228076069173767, -0.03999569672760117,
    -0.702799000372579, -0.41032013522089983, -1.0731234388658777, -0.7806445737141985,
    -2.168859640356459, -3.4818380021260964, -2.4672333803246147, -3.7802117420942523,
    2.0414513245705166, 3.0560559463719983, 2.375989324222246, 0.9479361007051921,
    1.8474658607574383, 0.41941263723856537, 1.3189423972908116, -0.10911082622806134,
    0.17340749945105927, -0.516108311678181, -0.4681859146166971, -0.4202635175552132,
    -1.109779328683544, -1.06185693162206, -1.736176293959943, -2.5368062219195053,
    2.5668084909430036, 1.7661785629834412, 1.7029868432146031, 1.6397951234448556,
    1.4835964613575925, 1.7983190314116655, 2.1130416014675575, 0.35541058300441364,
    0.6701331530584866, -1.0874978654046572, -1.1061176458406408, -0.9025091926177993,
    -2.7712543279121746, -2.567645874689333, -2.3640374214664917, 4.378561497629562,
];
#[rustfmt::skip]
const DW_GROUP_FAR_F64: [f64; 4] = [
    3.064925395668875, -1.33070288638935, 2.0224327914105324, -1.497526308814309,
];
#[rustfmt::skip]
const DB_GROUP_FAR_F64: [f64; 4] = [
    -0.10000000000000053, 0.9999999999999999, -1.0, 0.10000000000000053,
];
#[rustfmt::skip]
const DX_GROUP_FAR_F32: [f32; 48] = [
    -1.37744140625, 1.29638671875, 0.7373046875, 1.13525390625,
    0.576171875, 0.0166015625, 0.623046875, -0.0400390625,
    -0.70361328125, -0.41015625, -1.0732421875, -0.77978515625,
    -2.1669921875, -3.4814453125, -2.4638671875, -3.7783203125,
    2.0400390625, 3.0576171875, 2.3759765625, 0.9462890625,
    1.849609375, 0.419921875, 1.3232421875, -0.107421875,
    0.1748046875, -0.5166015625, -0.4677734375, -0.41845703125,
    -1.10986328125, -1.060546875, -1.73388671875, -2.5361328125,
    2.56787109375, 1.76513671875, 1.703125, 1.64111328125,
    1.482421875, 1.796875, 2.1103515625, 0.3544921875,
    0.66796875, -1.087890625, -1.107421875, -0.9052734375,
    -2.7724609375, -2.5693359375, -2.3671875, 4.3779296875,
];
#[rustfmt::skip]
const DW_GROUP_FAR_F32: [f32; 4] = [
    3.055206775665283, -1.329216718673706, 2.028949022293091, -1.494289517402649,
];
#[rustfmt::skip]
const DB_GROUP_FAR_F32: [f32; 4] = [
    -0.09999990463256836, 1.0000001192092896, -1.0000001192092896, 0.09999990463256836,
];
#[rustfmt::skip]
const DX_LAYER_CHW_FAR_F64: [f64; 48] = [
    -2.805717725672366, 2.7727815217895113, 1.6064301339338272, 2.488211094159851,
    1.3044760706470697, 0.11204922930483008, 0.9677547360424796, -0.24205574095685733,
    -1.4605580357874715, -0.6309279825345584, -1.8668139130222698, -1.054567495428273,
    -2.307837061574901, -3.569798445549168, -2.7836274814417266, -4.06297250107491,
    2.4629348897506134, 3.2903919885447976, 2.0523331036001764, 0.805582400826097,
    1.6069640461337258, 0.34282970770254906, 1.1268277173512615, -0.15469025673883152,
    0.65515607513953, -0.6267869363655336, -0.5947950959234731, -0.5715482650939521,
    -1.879726305438453, -1.8739694938340108, -1.876957691842108, -3.2113707610242272,
    4.087724067554518, 2.8035948036467744, 2.8334003916861548, 2.8544609701111767,
    1.5440966773639957, 1.5476672365657578, 1.5424927861549804, 0.2058934645701811,
    0.18322899493250588, -1.1708603458773723, -1.2110148347401264, -1.25991433321542,
    -2.6402387028629164, -2.706628220563289, -2.7817627478762006, 4.147858266924231,
];
#[rustfmt::skip]
const DW_LAYER_CHW_FAR_F64: [f64; 24] = [
    2.2818484272788204, -0.10476840794257769, 1.0760837242025665, -2.1803244829800033,
    0.7753948431670165, 0.307921881214242, -2.5392951683534823, 0.8382068079470643,
    1.052133969026518, -1.6079331826232988, -0.44581551749284865, 1.7657518128772574,
    -0.47253268861903197, -0.9587401175865007, 1.6620183703984504, -0.1544834809443117,
    1.9473963772990464, -0.37874096508884547, 0.7408098205815827, 0.8522940197789035,
    1.0054555792573026, 0.4766812708298119, -2.088917749927168, -1.498700585301454,
];
#[rustfmt::skip]
const DB_LAYER_CHW_FAR_F64: [f64; 24] = [
    -1.6, 1.0999999999999999, 0.7000000000000002, 0.30000000000000004,
    -0.1000000000000002, -0.5, -0.9000000000000001, -1.3,
    1.4, 1.0000000000000002, 0.6000000000000001, 0.19999999999999984,
    -0.19999999999999996, -0.6000000000000001, -1.0, -1.4,
    1.3, 0.8999999999999999, 0.5000000000000001, 0.09999999999999987,
    -0.2999999999999998, -0.7, -1.0999999999999999, 1.6,
];
#[rustfmt::skip]
const DX_LAYER_CHW_FAR_F32: [f32; 48] = [
    -2.8046875, 2.7724609375, 1.60546875, 2.48828125,
    1.3037109375, 0.111328125, 0.9677734375, -0.2421875,
    -1.4619140625, -0.630859375, -1.8671875, -1.0537109375,
    -2.3076171875, -3.5703125, -2.783203125, -4.0625,
    2.4619140625, 3.2900390625, 2.0517578125, 0.8037109375,
    1.6064453125, 0.341796875, 1.126953125, -0.1552734375,
    0.654296875, -0.626953125, -0.595703125, -0.572265625,
    -1.880859375, -1.875, -1.8779296875, -3.2119140625,
    4.087890625, 2.802734375, 2.8330078125, 2.8544921875,
    1.5439453125, 1.546875, 1.5419921875, 0.205078125,
    0.1826171875, -1.171875, -1.2119140625, -1.2607421875,
    -2.640625, -2.70703125, -2.7822265625, 4.1474609375,
];
#[rustfmt::skip]
const DW_LAYER_CHW_FAR_F32: [f32; 24] = [
    2.2826473712921143, -0.1048937737941742, 1.0762786865234375, -2.1794049739837646,
    0.7768096327781677, 0.3096933662891388, -2.536991596221924, 0.8411798477172852,
    1.0493618249893188, -1.6103811264038086, -0.4475950002670288, 1.7644338607788086,
    -0.4733520746231079, -0.9588546752929688, 1.662172555923462, -0.15365630388259888,
    1.9466992616653442, -0.37851959466934204, 0.7413527965545654, 0.8531808257102966,
    1.0072059631347656, 0.47878968715667725, -2.0863142013549805, -1.5019011497497559,
];
#[rustfmt::skip]
const DB_LAYER_CHW_FAR_F32: [f32; 24] = [
    -1.600000023841858, 1.0999999046325684, 0.7000000476837158, 0.30000001192092896,
    -0.09999996423721313, -0.5, -0.8999999761581421, -1.2999999523162842,
    1.399999976158142, 1.0, 0.6000000238418579, 0.19999998807907104,
    -0.19999998807907104, -0.6000000238418579, -1.0, -1.399999976158142,
    1.2999999523162842, 0.8999999761581421, 0.5, 0.09999996423721313,
    -0.30000001192092896, -0.7000000476837158, -1.0999999046325684, 1.600000023841858,
];

/// x_i = ((37 i) mod 101)/7 − 5, NCHW order (the input of `norm_layers`).
fn input() -> Vec<f64> {
    (0..LEN)
        .map(|i| ((i * 37) % 101) as f64 / 7.0 - 5.0)
        .collect()
}

/// x_i = 1e4 + ((37 i) mod 101)/64, exact in `f32`.
fn far_input() -> Vec<f64> {
    (0..LEN)
        .map(|i| 1e4 + ((i * 37) % 101) as f64 / 64.0)
        .collect()
}

/// The output gradient, g_i = ((29 i) mod 31)/10 − 1.5.
fn upstream() -> Vec<f64> {
    (0..LEN)
        .map(|i| ((i * 29) % 31) as f64 / 10.0 - 1.5)
        .collect()
}

/// An NHWC tensor's values in NCHW order (the inverse of `to_nhwc`).
fn from_nhwc(v: &[f64], n: usize, c: usize, hw: usize) -> Vec<f64> {
    let mut out = vec![0.0; v.len()];
    for s in 0..n {
        for p in 0..hw {
            for ch in 0..c {
                out[(s * c + ch) * hw + p] = v[(s * hw + p) * c + ch];
            }
        }
    }
    out
}

fn wide32(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&a| f64::from(a)).collect()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Layer {
    /// `F.group_norm(x, 2, …)`.
    Group,
    /// `F.instance_norm(x, weight, bias)`.
    Instance,
    /// `F.layer_norm(x, (C, H, W), …)`, elementwise γ and β.
    Chw,
    /// `F.layer_norm(x, (W,), …)`: rows of 3.
    Rows,
}

const LAYERS: [Layer; 4] = [Layer::Group, Layer::Instance, Layer::Chw, Layer::Rows];

impl Layer {
    fn gamma(self) -> Vec<f64> {
        match self {
            Layer::Group | Layer::Instance => (0..C).map(|c| 0.5 + 0.25 * c as f64).collect(),
            Layer::Chw => (0..C * HW).map(|j| 1.0 + j as f64 / 100.0).collect(),
            Layer::Rows => vec![0.5, 1.5, -2.0],
        }
    }

    /// The statistics group and the affine parameter of NCHW index `i`.
    fn group_param(self, i: usize) -> (usize, usize) {
        let (s, c) = (i / (C * HW), (i / HW) % C);
        match self {
            Layer::Group => (s * 2 + c / 2, c),
            Layer::Instance => (s * C + c, c),
            Layer::Chw => (s, i % (C * HW)),
            Layer::Rows => (i / W, i % W),
        }
    }

    /// Torch's `(x.grad, weight.grad, bias.grad)`, NCHW order.
    fn torch(self, far: bool, narrow: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let v = |a: &[f64]| a.to_vec();
        match (self, far, narrow) {
            (Layer::Group, false, false) => (v(&DX_GROUP_F64), v(&DW_GROUP_F64), v(&DB_GROUP_F64)),
            (Layer::Group, false, true) => (
                wide32(&DX_GROUP_F32),
                wide32(&DW_GROUP_F32),
                wide32(&DB_GROUP_F32),
            ),
            (Layer::Instance, false, false) => (
                v(&DX_INSTANCE_F64),
                v(&DW_INSTANCE_F64),
                v(&DB_INSTANCE_F64),
            ),
            (Layer::Instance, false, true) => (
                wide32(&DX_INSTANCE_F32),
                wide32(&DW_INSTANCE_F32),
                wide32(&DB_INSTANCE_F32),
            ),
            (Layer::Chw, false, false) => (
                v(&DX_LAYER_CHW_F64),
                v(&DW_LAYER_CHW_F64),
                v(&DB_LAYER_CHW_F64),
            ),
            (Layer::Chw, false, true) => (
                wide32(&DX_LAYER_CHW_F32),
                wide32(&DW_LAYER_CHW_F32),
                wide32(&DB_LAYER_CHW_F32),
            ),
            (Layer::Rows, false, false) => {
                (v(&DX_LAYER_W_F64), v(&DW_LAYER_W_F64), v(&DB_LAYER_W_F64))
            }
            (Layer::Rows, false, true) => (
                wide32(&DX_LAYER_W_F32),
                wide32(&DW_LAYER_W_F32),
                wide32(&DB_LAYER_W_F32),
            ),
            (Layer::Group, true, false) => (
                v(&DX_GROUP_FAR_F64),
                v(&DW_GROUP_FAR_F64),
                v(&DB_GROUP_FAR_F64),
            ),
            (Layer::Group, true, true) => (
                wide32(&DX_GROUP_FAR_F32),
                wide32(&DW_GROUP_FAR_F32),
                wide32(&DB_GROUP_FAR_F32),
            ),
            (Layer::Chw, true, false) => (
                v(&DX_LAYER_CHW_FAR_F64),
                v(&DW_LAYER_CHW_FAR_F64),
                v(&DB_LAYER_CHW_FAR_F64),
            ),
            (Layer::Chw, true, true) => (
                wide32(&DX_LAYER_CHW_FAR_F32),
                wide32(&DW_LAYER_CHW_FAR_F32),
                wide32(&DB_LAYER_CHW_FAR_F32),
            ),
            _ => unreachable!("no far-from-zero record for {self:?}"),
        }
    }

    /// The layout of the tensor in memory, channels first or last
    /// (`Rows`'  rows are the same in both).
    fn layout(self, last: bool) -> Layout {
        match (self, last) {
            (Layer::Rows, _) => Layout::nc(N * C * H, W),
            (_, false) => Layout::nchw(N, C, H, W),
            (_, true) => Layout::nhwc(N, H, W, C),
        }
        .unwrap()
    }
}

/// Our `(dx, dγ, dβ)` for `layer` on the NCHW data `x`, `g` (rounded to
/// `F`), run on NCHW or NHWC memory; `dx` back in NCHW order.
fn ours<F: Float>(
    layer: Layer,
    x: &[f64],
    g: &[f64],
    last: bool,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let narrow = |v: &[f64]| -> Vec<F> { v.iter().map(|&a| F::from_f64(a)).collect() };
    let last = last && layer != Layer::Rows;
    let (xs, dy) = if last {
        (to_nhwc(x, N, C, HW), to_nhwc(g, N, C, HW))
    } else {
        (x.to_vec(), g.to_vec())
    };
    let (xs, dy, gamma) = (narrow(&xs), narrow(&dy), narrow(&layer.gamma()));
    let layout = layer.layout(last);
    let mut dx = vec![F::zero(); LEN];
    let grads: AffineGrads<F> = match layer {
        Layer::Group => {
            let gn = GroupNorm::<F>::new(2).unwrap();
            let stats = gn.statistics(&xs, layout).unwrap();
            let pass = Backward::new(&xs, &dy, layout, &stats).with_gamma(&gamma);
            gn.backward(&pass, &mut dx).unwrap()
        }
        Layer::Instance => {
            let norm = InstanceNorm::<F>::new();
            let stats = norm.statistics(&xs, layout).unwrap();
            let pass = Backward::new(&xs, &dy, layout, &stats).with_gamma(&gamma);
            norm.backward(&pass, &mut dx).unwrap()
        }
        Layer::Chw | Layer::Rows => {
            let features = if layer == Layer::Rows { W } else { C * HW };
            let ln = LayerNorm::<F>::new(features).unwrap();
            let stats = ln.statistics(&xs).unwrap();
            let pass = Backward::new(&xs, &dy, layout, &stats).with_gamma(&gamma);
            ln.backward(&pass, &mut dx).unwrap()
        }
    };
    let wide = |v: &[F]| -> Vec<f64> { v.iter().map(|a| a.as_f64()).collect() };
    let dx = wide(&dx);
    let dx = if last { from_nhwc(&dx, N, C, HW) } else { dx };
    (dx, wide(&grads.weight), wide(&grads.bias))
}

/// The exact gradients (to double-double rounding, ~2⁻¹⁰⁴) of `layer` on
/// the values `x`, `g`, `γ`, `eps` as given ([`exact_norm`]).
fn exact(
    layer: Layer,
    x: &[f64],
    g: &[f64],
    gamma: &[f64],
    eps: f64,
) -> (Vec<Dd>, Vec<Dd>, Vec<Dd>) {
    let (group, param): (Vec<usize>, Vec<usize>) =
        (0..x.len()).map(|i| layer.group_param(i)).unzip();
    let beta = vec![0.0; gamma.len()];
    let e = exact_norm(x, g, &group, &param, gamma, &beta, eps);
    (e.dx, e.dgamma, e.dbeta)
}

/// The worst distance of `got` from `want`, in units of `epsilon` times
/// `max(|want|, 1)`: gradients are O(1).
fn worst(got: &[f64], want: &[f64], epsilon: f64) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&a, &b)| (a - b).abs() / (b.abs().max(1.0) * epsilon))
        .fold(0.0, f64::max)
}

/// [`worst`] against a double-double reference.
fn worst_dd(got: &[f64], want: &[Dd], epsilon: f64) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter()
        .zip(want)
        .map(|(&a, b)| b.distance(a, b.to_f64().abs().max(1.0) * epsilon))
        .fold(0.0, f64::max)
}

const E64: f64 = f64::EPSILON;
const E32: f64 = f32::EPSILON as f64;

#[test]
fn every_layer_matches_torch_autograd_in_both_layouts() {
    // Torch and ours each within a few ulps of the exact gradients (see
    // the next test), so within the sum of the two of each other.
    // Measured, worst over the layers and layouts: f64 dx 1.6, dγ 8.0,
    // dβ 2.0 ulps of max(|v|, 1); f32 dx 1.0, dγ 1.3, dβ 0.5.
    let (x, g) = (input(), upstream());
    for layer in LAYERS {
        for last in [false, true] {
            let (tx, tw, tb) = layer.torch(false, false);
            let (dx, dw, db) = ours::<f64>(layer, &x, &g, last);
            let errors = [
                worst(&dx, &tx, E64),
                worst(&dw, &tw, E64),
                worst(&db, &tb, E64),
            ];
            let (xs, gs, gamma, eps) = as_seen::<f64>(layer, &x, &g);
            let (ex, ew, eb) = exact(layer, &xs, &gs, &gamma, eps);
            let torch = [
                worst_dd(&tx, &ex, E64),
                worst_dd(&tw, &ew, E64),
                worst_dd(&tb, &eb, E64),
            ];
            eprintln!(
                "{layer:?} last={last} f64: dx, dγ, dβ vs torch {errors:.2?}, torch vs exact {torch:.2?} ulps"
            );
            assert!(
                errors.iter().all(|&e| e <= 16.0),
                "{layer:?} {last}: {errors:?}"
            );
            let (tx, tw, tb) = layer.torch(false, true);
            let (dx, dw, db) = ours::<f32>(layer, &x, &g, last);
            let errors = [
                worst(&dx, &tx, E32),
                worst(&dw, &tw, E32),
                worst(&db, &tb, E32),
            ];
            let (xs, gs, gamma, eps) = as_seen::<f32>(layer, &x, &g);
            let (ex, ew, eb) = exact(layer, &xs, &gs, &gamma, eps);
            let torch = [
                worst_dd(&tx, &ex, E32),
                worst_dd(&tw, &ew, E32),
                worst_dd(&tb, &eb, E32),
            ];
            eprintln!(
                "{layer:?} last={last} f32: dx, dγ, dβ vs torch {errors:.2?}, torch vs exact {torch:.2?} ulps"
            );
            assert!(
                errors.iter().all(|&e| e <= 8.0),
                "{layer:?} {last}: {errors:?}"
            );
        }
    }
}

/// `(x, g, γ, eps)` as `F` sees them, widened back to `f64`.
fn as_seen<F: Float>(layer: Layer, x: &[f64], g: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>, f64) {
    let round = |v: &[f64]| -> Vec<f64> { v.iter().map(|&a| F::from_f64(a).as_f64()).collect() };
    (
        round(x),
        round(g),
        round(&layer.gamma()),
        F::from_f64(1e-5).as_f64(),
    )
}

#[test]
fn every_layer_is_within_its_rounding_of_the_exact_gradients() {
    // Near zero and at 1e4 + k/64: f64 within a few ulps of the exact
    // gradients of the same values, f32 rounded once from f64 sums.
    for (data, x) in [("near 0", input()), ("1e4 + k/64", far_input())] {
        let g = upstream();
        for layer in LAYERS {
            for last in [false, true] {
                let (xs, gs, gamma, eps) = as_seen::<f64>(layer, &x, &g);
                let (ex, ew, eb) = exact(layer, &xs, &gs, &gamma, eps);
                let (dx, dw, db) = ours::<f64>(layer, &x, &g, last);
                let e64 = [
                    worst_dd(&dx, &ex, E64),
                    worst_dd(&dw, &ew, E64),
                    worst_dd(&db, &eb, E64),
                ];
                let (xs, gs, gamma, eps) = as_seen::<f32>(layer, &x, &g);
                let (ex, ew, eb) = exact(layer, &xs, &gs, &gamma, eps);
                let (dx, dw, db) = ours::<f32>(layer, &x, &g, last);
                let e32 = [
                    worst_dd(&dx, &ex, E32),
                    worst_dd(&dw, &ew, E32),
                    worst_dd(&db, &eb, E32),
                ];
                eprintln!("{data}, {layer:?} last={last}: f64 {e64:.2?}, f32 {e32:.3?} ulps");
                assert!(
                    e64.iter().all(|&e| e <= 4.0),
                    "{data} {layer:?} {last}: {e64:?}"
                );
                assert!(
                    e32.iter().all(|&e| e <= 0.5001),
                    "{data} {layer:?} {last}: {e32:?}"
                );
            }
        }
    }
}

#[test]
fn far_from_zero_ours_are_exact_where_torch_float32_is_not() {
    let (x, g) = (far_input(), upstream());
    for layer in [Layer::Group, Layer::Chw] {
        for last in [false, true] {
            // f64: against torch's float64 (the convention) and the exact
            // gradients of the same values.
            let (tx, tw, tb) = layer.torch(true, false);
            let (dx, dw, db) = ours::<f64>(layer, &x, &g, last);
            let vs_torch = [
                worst(&dx, &tx, E64),
                worst(&dw, &tw, E64),
                worst(&db, &tb, E64),
            ];
            let (xs, gs, gamma, eps) = as_seen::<f64>(layer, &x, &g);
            let (ex, ew, eb) = exact(layer, &xs, &gs, &gamma, eps);
            let torch_exact = [
                worst_dd(&tx, &ex, E64),
                worst_dd(&tw, &ew, E64),
                worst_dd(&tb, &eb, E64),
            ];
            eprintln!(
                "{layer:?} last={last} f64: vs torch {vs_torch:.1?}, torch vs exact {torch_exact:.1?} ulps"
            );
            // f32: torch's float32 arithmetic against the exact gradients
            // of the float32 values, and ours.
            let (tx, tw, _) = layer.torch(true, true);
            let (dx32, dw32, _) = ours::<f32>(layer, &x, &g, last);
            let (xs, gs, gamma, eps) = as_seen::<f32>(layer, &x, &g);
            let (ex, ew, _) = exact(layer, &xs, &gs, &gamma, eps);
            let torch32 = [worst_dd(&tx, &ex, E32), worst_dd(&tw, &ew, E32)];
            let ours32 = [worst_dd(&dx32, &ex, E32), worst_dd(&dw32, &ew, E32)];
            eprintln!(
                "{layer:?} last={last} f32 vs exact: torch {torch32:.1?}, ours {ours32:.3?} ulps"
            );
            // Torch's float64 backward sums dy·x and subtracts μ·Σdy,
            // which at 1e4 costs it 1e-11 of the result; ours keeps the
            // digits (the previous test), so the two agree to torch's.
            assert!(vs_torch.iter().all(|&e| e <= 1e5), "{vs_torch:?}");
            assert!(
                torch_exact[0] > 1e3,
                "torch's float64 dx should lose digits here"
            );
            assert!(ours32.iter().all(|&e| e <= 0.5001), "{ours32:?}");
            assert!(
                torch32[0] > 1e3,
                "torch's float32 dx should lose digits here"
            );
        }
    }
}

/// Worker `k`'s share when the rows of every image are split over two
/// workers (`h = k`): its values in its own memory order, and its layout.
fn shard(v: &[f64], k: usize, last: bool) -> (Vec<f64>, Layout) {
    if last {
        let t = to_nhwc(v, N, C, HW);
        let out = (0..N)
            .flat_map(|s| t[(s * HW + k * W) * C..(s * HW + (k + 1) * W) * C].to_vec())
            .collect();
        (out, Layout::nhwc(N, 1, W, C).unwrap())
    } else {
        let out = (0..N * C)
            .flat_map(|sc| v[sc * HW + k * W..sc * HW + (k + 1) * W].to_vec())
            .collect();
        (out, Layout::nchw(N, C, 1, W).unwrap())
    }
}

/// Worker `k`'s `dx` (in its memory order) put back in the NCHW tensor.
fn unshard(dx: &[f64], k: usize, last: bool, full: &mut [f64]) {
    for s in 0..N {
        for c in 0..C {
            for w in 0..W {
                let at = if last {
                    (s * W + w) * C + c
                } else {
                    (s * C + c) * W + w
                };
                full[(s * C + c) * HW + k * W + w] = dx[at];
            }
        }
    }
}

#[test]
fn workers_that_split_each_image_get_the_single_process_gradients() {
    // Spatial parallelism: each worker holds one row of every image. The
    // statistics merge, then the backward sums (sent as plain parts),
    // then each worker writes its part of dx; dγ and dβ are each
    // worker's own, which GroupNorm's and InstanceNorm's workers add and
    // LayerNorm's keep (each holds its own features of γ).
    let (x, g) = (input(), upstream());
    for layer in [Layer::Group, Layer::Instance, Layer::Chw] {
        let (tx, tw, tb) = layer.torch(false, false);
        let gamma = layer.gamma();
        for last in [false, true] {
            let shards: Vec<_> = (0..H)
                .map(|k| (shard(&x, k, last), shard(&g, k, last).0))
                .collect();
            let gn = GroupNorm::<f64>::new(if layer == Layer::Group { 2 } else { C }).unwrap();
            let ln = LayerNorm::<f64>::new(C * W).unwrap();
            // LayerNorm's γ for row k: (C, 1, W) of the (C, H, W) vector.
            let index = |k: usize| -> Vec<usize> {
                (0..C)
                    .flat_map(|c| (0..W).map(move |w| c * HW + k * W + w))
                    .collect()
            };
            let gamma_of = |k: usize| -> Vec<f64> {
                if layer == Layer::Chw {
                    index(k).iter().map(|&j| gamma[j]).collect()
                } else {
                    gamma.clone()
                }
            };
            let stats_of = |xs: &[f64], layout: Layout| {
                if layer == Layer::Chw {
                    ln.statistics(xs).unwrap()
                } else {
                    gn.statistics(xs, layout).unwrap()
                }
            };
            let mut stats = BatchStats::<f64>::new(0);
            for (k, ((xs, layout), _)) in shards.iter().enumerate() {
                let mine = stats_of(xs, *layout);
                if k == 0 {
                    stats = mine;
                } else {
                    stats.merge(&mine);
                }
            }
            let mut sums: Option<GradSums<f64>> = None;
            let mut dw = vec![0.0; tw.len()];
            let mut db = vec![0.0; tb.len()];
            for (k, ((xs, layout), dy)) in shards.iter().enumerate() {
                let gk = gamma_of(k);
                let pass = Backward::new(xs, dy, *layout, &stats).with_gamma(&gk);
                let (mine, grads) = if layer == Layer::Chw {
                    ln.grad_sums(&pass).unwrap()
                } else {
                    gn.grad_sums(&pass).unwrap()
                };
                let mine = GradSums::from_parts(mine.to_parts()).unwrap();
                match sums.as_mut() {
                    None => sums = Some(mine),
                    Some(s) => s.try_merge(&mine).unwrap(),
                }
                if layer == Layer::Chw {
                    for (j, &p) in index(k).iter().enumerate() {
                        dw[p] = grads.weight[j];
                        db[p] = grads.bias[j];
                    }
                } else {
                    dw.iter_mut().zip(&grads.weight).for_each(|(a, b)| *a += b);
                    db.iter_mut().zip(&grads.bias).for_each(|(a, b)| *a += b);
                }
            }
            let sums = sums.unwrap();
            let mut dx = vec![0.0; LEN];
            for (k, ((xs, layout), dy)) in shards.iter().enumerate() {
                let gk = gamma_of(k);
                let pass = Backward::new(xs, dy, *layout, &stats).with_gamma(&gk);
                let mut mine = vec![0.0; xs.len()];
                if layer == Layer::Chw {
                    ln.grad_input(&sums, &pass, &mut mine).unwrap();
                } else {
                    gn.grad_input(&sums, &pass, &mut mine).unwrap();
                }
                unshard(&mine, k, last, &mut dx);
            }
            let errors = [
                worst(&dx, &tx, E64),
                worst(&dw, &tw, E64),
                worst(&db, &tb, E64),
            ];
            eprintln!("{layer:?} last={last}, 2 workers: dx, dγ, dβ vs torch {errors:.2?} ulps");
            assert!(
                errors.iter().all(|&e| e <= 16.0),
                "{layer:?} {last}: {errors:?}"
            );
        }
    }
}

#[test]
fn the_batch_norm_layer_is_grad_sums_with_one_eps_and_any_element_type() {
    let (x, g) = (input(), upstream());
    let layout = Layout::nchw(N, C, H, W).unwrap();
    let gamma = Layer::Group.gamma();
    let bn = BatchNorm::<f64>::new().with_eps(1e-3).unwrap();
    let stats = bn.statistics(&x, layout).unwrap();
    let pass = Backward::new(&x, &g, layout, &stats).with_gamma(&gamma);
    let mut dx = vec![0.0; LEN];
    let grads = bn.backward(&pass, &mut dx).unwrap();
    // The same as GradSums with eps given twice, bit for bit.
    let sums = GradSums::compute(&x, &g, layout, &stats).unwrap();
    let mut want = vec![0.0; LEN];
    sums.grad_input(&x, &g, layout, &stats, 1e-3, Some(&gamma), &mut want)
        .unwrap();
    assert_eq!(dx, want);
    assert_eq!(grads.weight, sums.grad_weight(&stats, 1e-3).unwrap());
    assert_eq!(grads.bias, sums.grad_bias());
    // Against the exact gradients (BatchNorm: one group per channel).
    let xs32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let dy32: Vec<f32> = g.iter().map(|&v| v as f32).collect();
    let bn32 = BatchNorm::<f32>::new();
    let stats32 = bn32.statistics(&xs32, layout).unwrap();
    let gamma32: Vec<f32> = gamma.iter().map(|&v| v as f32).collect();
    let pass = Backward::new(&xs32, &dy32, layout, &stats32).with_gamma(&gamma32);
    let mut dx64 = vec![0.0_f64; LEN];
    bn32.backward(&pass, &mut dx64).unwrap();
    let mut dx32 = vec![0.0_f32; LEN];
    bn32.backward(&pass, &mut dx32).unwrap();
    // f32 data, f64 dx: the same f64 arithmetic, rounded to f32 once.
    assert!(dx64.iter().zip(&dx32).all(|(&a, &b)| a as f32 == b));
    let wide = |v: &[f32]| -> Vec<f64> { v.iter().map(|&a| f64::from(a)).collect() };
    let channel: Vec<usize> = (0..LEN).map(|i| (i / HW) % C).collect();
    let want = exact_norm(
        &wide(&xs32),
        &wide(&dy32),
        &channel,
        &channel,
        &wide(&gamma32),
        &[0.0; C],
        f64::from(1e-5_f32),
    );
    let worst64 = worst_dd(&dx64, &want.dx, E64);
    eprintln!("BatchNorm f32 data, f64 dx vs exact: {worst64:.2} f64 ulps");
    assert!(worst64 <= 4.0, "{worst64}");
}

/// A small batch for the laws: NCL shape (`c` channels in `groups`
/// groups, `l` positions), values at an offset, gradients, a cut.
#[derive(Clone, Debug)]
struct Batch {
    n: usize,
    c: usize,
    groups: usize,
    l: usize,
    xs: Vec<f64>,
    dy: Vec<f64>,
    gamma: Vec<f64>,
    cut: usize,
}

impl Arbitrary for Batch {
    fn arbitrary(g: &mut Gen) -> Self {
        let n = usize::arbitrary(g) % 4 + 1;
        let groups = usize::arbitrary(g) % 3 + 1;
        let c = groups * (usize::arbitrary(g) % 3 + 1);
        let l = usize::arbitrary(g) % 6 + 1;
        let offset = *g.choose(&[0.0, -3.5, 1e6]).unwrap_or(&0.0);
        let len = n * c * l;
        let xs = (0..len)
            .map(|_| offset + f64::from(i16::arbitrary(g)) / 64.0)
            .collect();
        let dy = (0..len)
            .map(|_| f64::from(i8::arbitrary(g)) / 16.0)
            .collect();
        let gamma = (0..c * l)
            .map(|_| f64::from(i8::arbitrary(g)) / 32.0)
            .collect();
        let cut = usize::arbitrary(g) % (l + 1);
        Batch {
            n,
            c,
            groups,
            l,
            xs,
            dy,
            gamma,
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

/// Equal to within 1e-10 of `scale` (the gradients' size, which a
/// normalization of data with a 1e6 offset and a spread of 1/64 makes
/// large) or of the value.
fn near(a: &[f64], b: &[f64], scale: f64) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            (x - y).abs() <= 1e-10 * scale.max(x.abs()).max(1.0) || (x.is_nan() && y.is_nan())
        })
}

fn scale_of(b: &Batch, dx: &[f64]) -> f64 {
    dx.iter().map(|v| v.abs()).fold(0.0, f64::max) + b.dy.iter().map(|v| v.abs()).sum::<f64>()
}

#[test]
fn both_layouts_agree_and_threads_change_no_bit() {
    fn law(b: Batch) -> bool {
        let nchw = Layout::ncl(b.n, b.c, b.l).unwrap();
        let nhwc = Layout::nlc(b.n, b.l, b.c).unwrap();
        let (xt, dt) = (to_nhwc(&b.xs, b.n, b.c, b.l), to_nhwc(&b.dy, b.n, b.c, b.l));
        let gamma = &b.gamma[..b.c];
        let gn = GroupNorm::<f64>::new(b.groups).unwrap();
        let mut ok = true;
        // GroupNorm, channels first and last.
        let s1 = gn.statistics(&b.xs, nchw).unwrap();
        let s2 = gn.statistics(&xt, nhwc).unwrap();
        let p1 = Backward::new(&b.xs, &b.dy, nchw, &s1).with_gamma(gamma);
        let p2 = Backward::new(&xt, &dt, nhwc, &s2).with_gamma(gamma);
        let (mut d1, mut d2) = (vec![0.0; b.xs.len()], vec![0.0; b.xs.len()]);
        let g1 = gn.backward(&p1, &mut d1).unwrap();
        let g2 = gn.backward(&p2, &mut d2).unwrap();
        let scale = scale_of(&b, &d1);
        ok &= near(&from_nhwc(&d2, b.n, b.c, b.l), &d1, scale);
        ok &= near(&g1.weight, &g2.weight, scale) && near(&g1.bias, &g2.bias, scale);
        ok &= gn.par_grad_sums(&p1).unwrap() == gn.grad_sums(&p1).unwrap();
        ok &= gn.par_grad_sums(&p2).unwrap() == gn.grad_sums(&p2).unwrap();
        // LayerNorm over (C, L) with γ in (C, L) order, on either memory.
        let ln = LayerNorm::<f64>::new(b.c * b.l).unwrap();
        let s1 = ln.statistics(&b.xs).unwrap();
        let s2 = ln.statistics(&xt).unwrap();
        let p1 = Backward::new(&b.xs, &b.dy, nchw, &s1).with_gamma(&b.gamma);
        let p2 = Backward::new(&xt, &dt, nhwc, &s2).with_gamma(&b.gamma);
        let g1 = ln.backward(&p1, &mut d1).unwrap();
        let g2 = ln.backward(&p2, &mut d2).unwrap();
        let scale = scale_of(&b, &d1);
        ok &= near(&from_nhwc(&d2, b.n, b.c, b.l), &d1, scale);
        ok &= near(&g1.weight, &g2.weight, scale) && near(&g1.bias, &g2.bias, scale);
        ok &= ln.par_grad_sums(&p2).unwrap() == ln.grad_sums(&p2).unwrap();
        // BatchNorm.
        let bn = BatchNorm::<f64>::new();
        let s = bn.statistics(&xt, nhwc).unwrap();
        let p = Backward::new(&xt, &dt, nhwc, &s).with_gamma(gamma);
        ok &= bn.par_grad_sums(&p).unwrap() == bn.grad_sums(&p).unwrap();
        ok
    }
    quick(law as fn(Batch) -> bool);
}

#[test]
fn merged_shards_give_the_whole_tensors_gradients() {
    fn law(b: Batch) -> bool {
        // GroupNorm with each sample's positions cut at `cut`, and
        // LayerNorm rows of `c·l` features cut at `cut·c` (NLC memory).
        let (lo, hi) = (b.cut, b.l - b.cut);
        let part = |v: &[f64], a: usize, len: usize| -> Vec<f64> {
            (0..b.n * b.c)
                .flat_map(|sc| v[sc * b.l + a..sc * b.l + a + len].to_vec())
                .collect()
        };
        let gn = GroupNorm::<f64>::new(b.groups).unwrap();
        let gamma = &b.gamma[..b.c];
        let whole = Layout::ncl(b.n, b.c, b.l).unwrap();
        let stats = gn.statistics(&b.xs, whole).unwrap();
        let mut dx = vec![0.0; b.xs.len()];
        let want = gn
            .backward(
                &Backward::new(&b.xs, &b.dy, whole, &stats).with_gamma(gamma),
                &mut dx,
            )
            .unwrap();
        let shards = [(0, lo), (lo, hi)].map(|(a, len)| {
            (
                part(&b.xs, a, len),
                part(&b.dy, a, len),
                Layout::ncl(b.n, b.c, len).unwrap(),
            )
        });
        let mut merged = BatchStats::<f64>::new(b.n * b.groups);
        for (x, _, layout) in &shards {
            merged.merge(&gn.statistics(x, *layout).unwrap());
        }
        let mut sums = GradSums::<f64>::new(b.n * b.groups);
        let mut bias = vec![0.0; b.c];
        for (x, d, layout) in &shards {
            let (s, g) = gn
                .grad_sums(&Backward::new(x, d, *layout, &merged).with_gamma(gamma))
                .unwrap();
            sums.merge(&s);
            bias.iter_mut().zip(&g.bias).for_each(|(a, v)| *a += v);
        }
        let scale = scale_of(&b, &dx);
        let mut ok = near(&bias, &want.bias, scale);
        for (k, (x, d, layout)) in shards.iter().enumerate() {
            let mut mine = vec![0.0; x.len()];
            gn.grad_input(
                &sums,
                &Backward::new(x, d, *layout, &merged).with_gamma(gamma),
                &mut mine,
            )
            .unwrap();
            let (a, len) = if k == 0 { (0, lo) } else { (lo, hi) };
            ok &= near(&mine, &part(&dx, a, len), scale);
        }
        // LayerNorm: the features of every row split over two workers.
        let rows = b.n;
        let f = b.c * b.l;
        let at = b.cut * b.c;
        let cols = |v: &[f64], a: usize, len: usize| -> Vec<f64> {
            (0..rows)
                .flat_map(|r| v[r * f + a..r * f + a + len].to_vec())
                .collect()
        };
        let ln = LayerNorm::<f64>::new(f).unwrap();
        let stats = ln.statistics(&b.xs).unwrap();
        let all = Layout::nc(rows, f).unwrap();
        let want = ln
            .backward(
                &Backward::new(&b.xs, &b.dy, all, &stats).with_gamma(&b.gamma),
                &mut dx,
            )
            .unwrap();
        let halves = [(0, at), (at, f - at)];
        let mut merged = BatchStats::<f64>::new(rows);
        let mut sums = GradSums::<f64>::new(rows);
        for &(a, len) in &halves {
            if len > 0 {
                merged.merge(
                    &LayerNorm::<f64>::new(len)
                        .unwrap()
                        .statistics(&cols(&b.xs, a, len))
                        .unwrap(),
                );
            }
        }
        for &(a, len) in &halves {
            if len == 0 {
                continue;
            }
            let ln = LayerNorm::<f64>::new(len).unwrap();
            let (x, d) = (cols(&b.xs, a, len), cols(&b.dy, a, len));
            let gamma = &b.gamma[a..a + len];
            let pass =
                Backward::new(&x, &d, Layout::nc(rows, len).unwrap(), &merged).with_gamma(gamma);
            let (s, g) = ln.grad_sums(&pass).unwrap();
            sums.merge(&s);
            ok &= near(&g.bias, &want.bias[a..a + len], scale);
            ok &= near(&g.weight, &want.weight[a..a + len], scale_of(&b, &dx));
        }
        for &(a, len) in &halves {
            if len == 0 {
                continue;
            }
            let ln = LayerNorm::<f64>::new(len).unwrap();
            let (x, d) = (cols(&b.xs, a, len), cols(&b.dy, a, len));
            let pass = Backward::new(&x, &d, Layout::nc(rows, len).unwrap(), &merged)
                .with_gamma(&b.gamma[a..a + len]);
            let mut mine = vec![0.0; x.len()];
            ln.grad_input(&sums, &pass, &mut mine).unwrap();
            ok &= near(&mine, &cols(&dx, a, len), scale_of(&b, &dx));
        }
        ok
    }
    quick(law as fn(Batch) -> bool);
}

#[test]
fn hostile_input_is_an_error_that_names_it() {
    let kind = |e: momenta::Error| e.kind().clone();
    let layout = Layout::nchw(2, 4, 1, 3).unwrap();
    let xs: Vec<f64> = (0..24).map(f64::from).collect();
    let gn = GroupNorm::<f64>::new(2).unwrap();
    let stats = gn.statistics(&xs, layout).unwrap();
    let mut dx = vec![0.0; 24];
    let pass = Backward::new(&xs, &xs, layout, &stats);
    let e = gn.backward(
        &Backward::new(&xs[1..], &xs[1..], layout, &stats),
        &mut dx[1..],
    );
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch { what: "data", .. }
    ));
    let e = gn.backward(&Backward::new(&xs, &xs[1..], layout, &stats), &mut dx);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch {
            what: "gradient",
            ..
        }
    ));
    let e = gn.backward(&pass, &mut dx[1..]);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch { what: "output", .. }
    ));
    let e = gn.backward(&pass.with_gamma(&[1.0; 3]), &mut dx);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch { what: "gamma", .. }
    ));
    let other = GroupNorm::<f64>::new(4)
        .unwrap()
        .statistics(&xs, layout)
        .unwrap();
    let e = gn.backward(&Backward::new(&xs, &xs, layout, &other), &mut dx);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch {
            what: "statistics groups",
            ..
        }
    ));
    let e = GroupNorm::<f64>::new(3).unwrap().backward(&pass, &mut dx);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::InvalidParameter { name: "groups", .. }
    ));
    // Sums of another count (one worker's, not merged) or group count.
    let half = Layout::nchw(2, 4, 1, 1).unwrap();
    let (sums, _) = gn
        .grad_sums(&Backward::new(
            &xs[..8],
            &xs[..8],
            half,
            &gn.statistics(&xs[..8], half).unwrap(),
        ))
        .unwrap();
    let e = gn.grad_input(&sums, &pass, &mut dx);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch {
            what: "statistics count",
            ..
        }
    ));
    let e = gn.grad_input(&GradSums::new(3), &pass, &mut dx);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch {
            what: "gradient sums groups",
            ..
        }
    ));
    let mut poisoned = gn.grad_sums(&pass).unwrap().0;
    poisoned.merge(&GradSums::new(1));
    let e = gn.grad_input(&poisoned, &pass, &mut dx);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::InvalidState { .. }
    ));
    let mut bad = stats.clone();
    bad.merge(&BatchStats::new(1));
    let e = gn.backward(&Backward::new(&xs, &xs, layout, &bad), &mut dx);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::InvalidState { .. }
    ));
    // LayerNorm: a layout whose samples are not `features` long, rows of
    // statistics that are not the samples.
    let ln = LayerNorm::<f64>::new(12).unwrap();
    let ls = ln.statistics(&xs).unwrap();
    let e = ln.backward(
        &Backward::new(&xs, &xs, Layout::nc(4, 6).unwrap(), &ls),
        &mut dx,
    );
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch {
            what: "features",
            expected: 6,
            actual: 12
        }
    ));
    let e = ln.backward(&Backward::new(&xs, &xs, layout, &stats), &mut dx);
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch {
            what: "statistics rows",
            ..
        }
    ));
    let e = ln.backward(
        &Backward::new(&xs, &xs, layout, &ls).with_gamma(&[1.0; 24]),
        &mut dx,
    );
    assert!(matches!(
        kind(e.unwrap_err()),
        ErrorKind::LengthMismatch { what: "gamma", .. }
    ));
    // Empty tensors: valid, empty, and their sums the merge identity.
    let empty = Layout::nchw(0, 4, 1, 3).unwrap();
    let es = gn.statistics(&[] as &[f64], empty).unwrap();
    let (e_sums, e_grads) = gn
        .grad_sums(&Backward::new(&[] as &[f64], &[], empty, &es))
        .unwrap();
    assert_eq!((e_sums.channels(), e_sums.count()), (0, 0));
    assert_eq!(e_grads.bias, vec![0.0; 4]);
    let none = Layout::nchw(2, 4, 0, 3).unwrap();
    let (z_sums, _) = gn
        .grad_sums(&Backward::new(&[] as &[f64], &[], none, &stats))
        .unwrap();
    let mut whole = gn.grad_sums(&pass).unwrap().0;
    let before = whole.clone();
    whole.merge(&z_sums);
    assert_eq!(whole, before);
}

#[test]
fn nan_stays_in_its_group_and_its_parameters() {
    let layout = Layout::nchw(N, C, H, W).unwrap();
    let (x, mut g) = (input(), upstream());
    g[5] = f64::NAN; // sample 0, channel 0: group 0 of sample 0
    let gn = GroupNorm::<f64>::new(2).unwrap();
    let stats = gn.statistics(&x, layout).unwrap();
    let mut dx = vec![0.0_f64; LEN];
    let grads = gn
        .backward(
            &Backward::new(&x, &g, layout, &stats).with_gamma(&Layer::Group.gamma()),
            &mut dx,
        )
        .unwrap();
    // dx: NaN in sample 0's group 0 (channels 0 and 1), finite elsewhere.
    for (i, v) in dx.iter().enumerate() {
        let in_group = i < 2 * HW;
        assert_eq!(v.is_nan(), in_group, "dx[{i}] = {v}");
    }
    assert!(grads.bias[0].is_nan() && grads.weight[0].is_nan());
    assert!(
        grads.bias[1..]
            .iter()
            .chain(&grads.weight[1..])
            .all(|v| v.is_finite())
    );
    let ln = LayerNorm::<f64>::new(W).unwrap();
    let stats = ln.statistics(&x).unwrap();
    let rows = Layout::nc(N * C * H, W).unwrap();
    let grads = ln
        .backward(&Backward::new(&x, &g, rows, &stats), &mut dx)
        .unwrap();
    assert!(dx[3..6].iter().all(|v| v.is_nan()));
    assert!(dx[..3].iter().chain(&dx[6..]).all(|v| v.is_finite()));
    assert!(grads.bias[2].is_nan() && grads.bias[..2].iter().all(|v| v.is_finite()));
}

#[test]
fn the_new_types_are_send_sync_and_plain() {
    fn plain<T: Send + Sync + Clone + core::fmt::Debug>() {}
    plain::<BatchNorm<f32>>();
    plain::<Backward<'static, f64, f32>>();
    plain::<AffineGrads<f64>>();
    fn copy<T: Copy>() {}
    copy::<BatchNorm<f64>>();
    copy::<Backward<'static, f32>>();
    assert_eq!(BatchNorm::<f64>::default(), BatchNorm::new());
}
