//! A short tour of momenta: every accumulator on real-looking data.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```

use std::io::Write;
use std::time::Instant;

use momenta::batchnorm::{BatchStats, BnConfig, Layout, RunningStats};
use momenta::{
    Accumulator, Ema, EwVariance, Mean, Merge, Momentum, MovingAverage, MovingVariance, Variance,
};

/// splitmix64 → uniform [0, 1): deterministic, so every run prints the same.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Roughly normal noise: the sum of four uniforms, centred.
    fn noise(&mut self) -> f64 {
        (0..4).map(|_| self.uniform() - 0.5).sum()
    }
}

fn main() -> Result<(), momenta::Error> {
    let mut rng = Rng(42);

    println!("1. Mean and Variance of a stream, and merging two halves");
    let readings: Vec<f64> = (0..10_000).map(|_| 1e6 + rng.noise()).collect();
    let (first, second) = readings.split_at(6_000);
    let mut stats = (Mean::new(), Variance::new());
    for &x in first {
        stats.push(x); // one pass feeds both
    }
    let mut rest = Variance::new();
    rest.extend_from_slice(second);
    stats.1.merge(&rest); // Chan's formula: as if one accumulator saw all
    println!(
        "   count {}, mean {:.6}",
        stats.1.count(),
        stats.1.mean().unwrap_or(f64::NAN)
    );
    println!(
        "   sample variance {:.6} (noise of four uniforms: 1/3 ≈ 0.333), around 1e6 without losing digits",
        stats.1.sample_variance().unwrap_or(f64::NAN)
    );
    println!(
        "   Mean of the first 6000: {:.6}",
        stats.0.mean().unwrap_or(f64::NAN)
    );

    println!("\n2. Smoothing a noisy sine (a step of +2 at t = 200)");
    let mut window = MovingAverage::new(16)?;
    let mut spread = MovingVariance::new(16)?;
    let mut keras = Ema::new(Momentum::Decay(0.9))?; // weight of the old value
    let mut torch = Ema::new(Momentum::Factor(0.1))?; // weight of the new value
    let mut band = EwVariance::new(Momentum::Decay(0.95))?;
    println!(
        "      t   signal   MA(16)  Ema Decay(.9)  Ema Factor(.1)   EW mean ± 2σ      window σ"
    );
    for t in 0..400 {
        let clean = (f64::from(t) / 30.0).sin() + if t >= 200 { 2.0 } else { 0.0 };
        let x = clean + 0.3 * rng.noise();
        let smooth = window.push(x);
        spread.push(x);
        keras.push(x);
        torch.push(x);
        band.push(x);
        if t % 50 == 49 {
            let (m, s) = (band.mean().unwrap_or(x), band.std_dev().unwrap_or(0.0));
            println!(
                "   {t:>4} {x:>8.3} {smooth:>8.3} {:>14.3} {:>15.3}   {:>6.3} ± {:<6.3} {:>11.3}",
                keras.value().unwrap_or(x),
                torch.value().unwrap_or(x),
                m,
                2.0 * s,
                spread.sample_std_dev().unwrap_or(0.0),
            );
        }
    }
    println!("   (Decay(0.9) and Factor(0.1) are one average in two conventions.)");

    println!("\n3. Mean and variance of a large tensor, on one core and on all");
    let n = 1 << 25;
    print!("   generating {} MiB of f32 data ", (n * 4) >> 20);
    let mut data = Vec::with_capacity(n);
    for step in 0..8 {
        data.extend((0..n / 8).map(|_| (1e3 + rng.noise()) as f32));
        if step % 2 == 1 {
            print!(".");
            std::io::stdout().flush().ok();
        }
    }
    println!(" done");
    let t = Instant::now();
    let seq = Variance::<f64>::from_slice(&data);
    let seq_time = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let par = Variance::<f64>::par_from_slice(&data);
    let par_time = t.elapsed().as_secs_f64();
    let gb = (n * 4) as f64 / 1e9;
    println!(
        "   from_slice:     mean {:.6}, variance {:.6}  ({:.1} GB/s)",
        seq.mean().unwrap_or(f64::NAN),
        seq.population_variance().unwrap_or(f64::NAN),
        gb / seq_time
    );
    println!(
        "   par_from_slice: mean {:.6}, variance {:.6}  ({:.1} GB/s, {} threads, {})",
        par.mean().unwrap_or(f64::NAN),
        par.population_variance().unwrap_or(f64::NAN),
        gb / par_time,
        rayon::current_num_threads(),
        if par == seq {
            "bit-identical"
        } else {
            "within rounding"
        }
    );

    println!("\n4. BatchNorm running statistics in three conventions (seed data, NHWC, C = 3)");
    let x0: [f32; 12] = [
        0.165_130_85,
        0.901_481_3,
        0.630_974_2,
        0.434_546_1,
        0.291_939_02,
        0.642_502_07,
        0.975_785_5,
        0.435_099_48,
        0.660_101_9,
        0.604_895_83,
        0.636_631_5,
        0.614_448_8,
    ];
    let batch = BatchStats::<f32>::compute(&x0, Layout::nhwc(2, 2, 1, 3)?)?;
    println!("   batch mean       {:.7?}", batch.mean());
    println!("   biased variance  {:.7?}", batch.variance());
    println!("   saved inv std    {:.7?}", batch.inv_std(1e-3));
    let half = Momentum::Decay(0.5);
    for (name, config) in [
        ("Keras non-fused", BnConfig::keras().with_momentum(half)?),
        ("tf fused", BnConfig::tf_fused().with_momentum(half)?),
        (
            "PyTorch",
            BnConfig::pytorch().with_momentum(Momentum::Factor(0.5))?,
        ),
    ] {
        let mut running = RunningStats::with_state(&[1.0; 3], &[1.0; 3], config)?;
        running.update(&batch)?;
        println!("   {name:<16} running var {:.7?}", running.var());
    }

    println!("\n5. Bad input is an error that names the value and the rule");
    if let Err(e) = Ema::<f64>::new(Momentum::Factor(1.5)) {
        println!("   Ema::new(Momentum::Factor(1.5)): {e}");
    }
    if let Err(e) = BatchStats::<f32>::compute(&x0[..11], Layout::nhwc(2, 2, 1, 3)?) {
        println!("   BatchStats::compute on 11 values for a 2×2×1×3 layout: {e}");
    }
    Ok(())
}
