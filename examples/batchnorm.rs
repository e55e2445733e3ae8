//! A few BatchNorm training steps under each framework's conventions, then
//! evaluation, on the data of the Keras example (seed 001: a (2, 1, 2, 3)
//! channels-last batch).
//!
//! Run with `cargo run --example batchnorm`.

use momenta::Momentum;
use momenta::batchnorm::{BatchStats, BnConfig, Layout, RunningStats};

fn show(label: &str, xs: &[f32]) {
    let cells: Vec<String> = xs.iter().map(|x| format!("{x:>11.7}")).collect();
    println!("  {label:<28}{}", cells.join(" "));
}

fn main() -> Result<(), momenta::Error> {
    let layout = Layout::nhwc(2, 1, 2, 3)?;
    let x0: [f32; 12] = [
        0.16513085, 0.9014813, 0.6309742, 0.4345461, 0.29193902, 0.64250207, 0.9757855, 0.43509948,
        0.6601019, 0.60489583, 0.6366315, 0.6144488,
    ];
    // Two more batches, derived from x0, for a few steps of training.
    let x1: Vec<f32> = x0.iter().map(|x| 1.0 - x).collect();
    let x2: Vec<f32> = x0.iter().map(|x| 0.75 * x + 0.1).collect();

    let batch = BatchStats::<f32>::compute(&x0, layout)?;
    println!(
        "Batch statistics of x0 (C = 3, n = {} values per channel)",
        batch.count()
    );
    show("mean", batch.mean());
    show("variance, biased (Σ/n)", &batch.variance());
    show("variance, unbiased (Σ/(n−1))", &batch.unbiased_variance());
    show("saved inverse std, eps 1e-3", &batch.inv_std(1e-3));

    // The seed's setting: moving statistics start at ones, momentum 0.5.
    let ones = [1.0_f32; 3];
    let conventions = [
        (
            "Keras non-fused",
            BnConfig::keras().with_momentum(Momentum::Decay(0.5))?,
        ),
        (
            "tf.keras fused",
            BnConfig::tf_fused().with_momentum(Momentum::Factor(0.5))?,
        ),
        (
            "PyTorch",
            BnConfig::pytorch().with_momentum(Momentum::Factor(0.5))?,
        ),
        ("cuDNN", BnConfig::cudnn(0.5)?),
    ];
    println!("\nOne training step from moving mean = variance = 1, momentum 0.5");
    for (name, config) in conventions {
        let mut r = RunningStats::with_state(&ones, &ones, config)?;
        r.update(&batch)?;
        show(&format!("{name} mean"), r.mean());
        show(&format!("{name} variance"), r.var());
    }

    println!("\nThree training steps with each framework's defaults (fresh state: mean 0, var 1)");
    let defaults = [
        ("Keras (0.99, biased)", BnConfig::keras()),
        ("tf fused (0.99, max(n−1,1))", BnConfig::tf_fused()),
        ("PyTorch (0.1, unbiased)", BnConfig::pytorch()),
        (
            "PyTorch momentum=None",
            BnConfig::pytorch().with_momentum(Momentum::Cumulative)?,
        ),
    ];
    let mut eval = None;
    for (name, config) in defaults {
        let mut r = RunningStats::new(3, config);
        for xs in [&x0[..], &x1, &x2] {
            r.update(&BatchStats::compute(xs, layout)?)?;
        }
        show(name, r.var());
        if eval.is_none() {
            eval = Some(r);
        }
    }

    // Training-mode output normalizes with the batch's own statistics...
    let mut y = [0.0_f32; 12];
    batch.normalize(&x0, layout, 1e-3, None, None, &mut y)?;
    println!("\nTraining output y[0, 0, 0, :] (γ = 1, β = 0, eps 1e-3)");
    show("y", &y[..3]);

    // ...evaluation mode with the running ones.
    if let Some(r) = eval {
        r.normalize(&x0, layout, None, None, &mut y)?;
        println!("Evaluation output y[0, 0, 0, :] with the Keras running statistics");
        show("y", &y[..3]);
    }

    // One value per channel: PyTorch refuses, Keras and tf fused do not.
    let single = BatchStats::<f32>::compute(&x0[..3], Layout::nhwc(1, 1, 1, 3)?)?;
    let mut torch = RunningStats::new(3, BnConfig::pytorch());
    println!(
        "\nn = 1 under PyTorch: {}",
        torch.update(&single).unwrap_err()
    );
    let mut keras = RunningStats::new(3, BnConfig::keras());
    keras.update(&single)?;
    show("n = 1 under Keras, variance", keras.var());
    Ok(())
}
