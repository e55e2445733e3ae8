#!/usr/bin/env python3
"""The peers harness of the whole-series APIs (not run by CI).

Times pandas, polars, bottleneck and momenta's `*_series` methods on the
same data file and prints, per statistic, one line

    SERIES <stat> momenta=<ns/value> best_peer=<name>:<ns/value> ratio=<best peer's time / momenta's>

followed by each side's error: the largest relative error against the exact
window statistics (mean, var; at sampled positions, from integer sums of
the values scaled to integers), or whether the series is bit-equal to
pandas' (min, max, median).

    python3 benches/peers/series.py [--n 10000000] [--rounds 3] [--stats rolling_mean_20,...]

It installs what it needs with pip (pandas, polars, bottleneck, numpy),
writes the data (1e6 + U(0, 1), seeded) to a file both sides read, and
alternates: each round runs momenta's side once (`cargo bench --bench
series` in harness mode, which times every statistic once) and then every
peer once per statistic; each time reported is the best over the rounds.

momenta's time is its `*_series` call, which returns a new vector as the
peers return a new array; the bench allocates it with the huge-page
advice numpy gives its arrays, after warming the allocator and its
output buffer once (see `benches/series.rs`). The line after
gives `*_series_into` into a reused buffer and the push loop. The
`rolling_floor_20` row is the memory floor: `x[i] - x[i - 20]` into a new
vector, against numpy's `x[20:] - x[:-20]`.
"""

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

NEEDED = ["numpy", "pandas", "polars", "bottleneck"]


def ensure_packages():
    missing = [m for m in NEEDED if importlib.util.find_spec(m) is None]
    if missing:
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", *missing])


ensure_packages()

import bottleneck as bn  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import polars as pl  # noqa: E402

WINDOWS = [5, 20, 101, 1000]
DEFAULT_STATS = (
    ["rolling_floor_20"]
    + [f"rolling_mean_{w}" for w in WINDOWS]
    + [f"rolling_var_{w}" for w in WINDOWS]
    + [f"rolling_max_{w}" for w in WINDOWS]
    + [f"rolling_median_{w}" for w in WINDOWS]
    + ["ewm_mean_0.1", "ewm_var_0.1"]
)


def peers_of(stat, x, s, p):
    """The peers' calls for `stat`, as pandas, polars and bottleneck spell
    it, with min_periods=1 as momenta's windows default to."""
    family, what, param = stat.split("_")
    if family == "rolling" and what == "floor":
        # The memory floor: one read, one subtraction, one new array.
        w = int(param)
        return {"numpy": lambda: np.subtract(x[w:], x[:-w])}
    if family == "rolling":
        w = int(param)
        return {
            "mean": {
                "pandas": lambda: s.rolling(w, min_periods=1).mean(),
                "polars": lambda: p.rolling_mean(w, min_samples=1),
                "bottleneck": lambda: bn.move_mean(x, w, min_count=1),
            },
            "var": {
                "pandas": lambda: s.rolling(w, min_periods=1).var(),
                "polars": lambda: p.rolling_var(w, min_samples=1),
                "bottleneck": lambda: bn.move_var(x, w, min_count=1, ddof=1),
            },
            "max": {
                "pandas": lambda: s.rolling(w, min_periods=1).max(),
                "polars": lambda: p.rolling_max(w, min_samples=1),
                "bottleneck": lambda: bn.move_max(x, w, min_count=1),
            },
            "min": {
                "pandas": lambda: s.rolling(w, min_periods=1).min(),
                "polars": lambda: p.rolling_min(w, min_samples=1),
                "bottleneck": lambda: bn.move_min(x, w, min_count=1),
            },
            "median": {
                "pandas": lambda: s.rolling(w, min_periods=1).median(),
                "polars": lambda: p.rolling_median(w, min_samples=1),
                "bottleneck": lambda: bn.move_median(x, w, min_count=1),
            },
        }[what]
    alpha = float(param)
    return {
        "mean": {
            "pandas": lambda: s.ewm(alpha=alpha).mean(),
            "polars": lambda: p.ewm_mean(alpha=alpha),
        },
        "var": {
            "pandas": lambda: s.ewm(alpha=alpha).var(),
            "polars": lambda: p.ewm_var(alpha=alpha),
        },
    }[what]


def as_array(out):
    if isinstance(out, pd.Series):
        return out.to_numpy()
    if isinstance(out, pl.Series):
        return out.to_numpy()
    return np.asarray(out)


def run_momenta(data_path, stats, out_dir, root):
    env = dict(os.environ)
    env.update(
        MOMENTA_SERIES_DATA=data_path,
        MOMENTA_SERIES_STATS=",".join(stats),
        MOMENTA_SERIES_REPEAT="1",
        MOMENTA_SERIES_OUT=out_dir,
    )
    text = subprocess.run(
        ["cargo", "bench", "--quiet", "--bench", "series"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    times = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0] == "momenta" and parts[2].startswith("series="):
            fields = dict(p.split("=") for p in parts[2:])
            times[parts[1]] = {k: float(v) for k, v in fields.items()}
    return times


def scaled_ints(x):
    """The values as integers m with x = m·2^-k, one k for all: exact."""
    _, e = np.frexp(x[np.isfinite(x) & (x != 0)])
    k = 53 - int(e.min())
    return [int(v) for v in (x * 2.0**k).astype(object)], k


def exact_errors(stat, x, ints, k, series_by_name, positions):
    """The largest relative error of each series against the exact window
    statistic at `positions`."""
    family, what, param = stat.split("_")
    w = int(param)
    scale = Fraction(1, 2**k)
    errors = {name: 0.0 for name in series_by_name}
    for i in positions:
        window = ints[max(0, i - w + 1) : i + 1]
        n = len(window)
        s1 = sum(window)
        if what == "mean":
            exact = Fraction(s1, n) * scale
        else:
            if n < 2:
                continue
            s2 = sum(v * v for v in window)
            exact = Fraction(n * s2 - s1 * s1, n * (n - 1)) * scale * scale
        for name, series in series_by_name.items():
            got = series[i]
            if not np.isfinite(got):
                errors[name] = float("inf")
                continue
            err = abs(Fraction(float(got)) - exact) / abs(exact) if exact else abs(got)
            errors[name] = max(errors[name], float(err))
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stats", default=",".join(DEFAULT_STATS))
    ap.add_argument("--samples", type=int, default=2000, help="positions checked exactly")
    args = ap.parse_args()
    stats = [s for s in args.stats.split(",") if s]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    rng = np.random.default_rng(20260)
    x = 1e6 + rng.random(args.n)
    s, p = pd.Series(x), pl.Series(x)
    tmp = tempfile.mkdtemp(prefix="momenta-series-")
    data_path = os.path.join(tmp, "data.f64")
    x.astype("<f8").tofile(data_path)

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"# CPU: {cpu}, {os.cpu_count()} logical cores; load average {os.getloadavg()}")
    print(
        f"# n = {args.n}, best of {args.rounds} rounds; pandas {pd.__version__}, "
        f"polars {pl.__version__}, bottleneck {bn.__version__}, numpy {np.__version__}"
    )
    subprocess.run(["cargo", "bench", "--quiet", "--bench", "series", "--no-run"], cwd=root, check=True)

    best = {stat: {} for stat in stats}
    into, push = {}, {}
    outputs = {stat: {} for stat in stats}
    for _ in range(args.rounds):
        for stat, t in run_momenta(data_path, stats, tmp, root).items():
            best[stat]["momenta"] = min(best[stat].get("momenta", float("inf")), t["series"])
            into[stat] = min(into.get(stat, float("inf")), t["into"])
            push[stat] = min(push.get(stat, float("inf")), t["push"])
        for stat in stats:
            for name, call in peers_of(stat, x, s, p).items():
                start = time.perf_counter()
                out = call()
                t = (time.perf_counter() - start) / args.n * 1e9
                best[stat][name] = min(best[stat].get(name, float("inf")), t)
                outputs[stat][name] = out
    print(f"# load average after: {os.getloadavg()}")

    ints, k = scaled_ints(x)
    positions = sorted(set(list(range(min(1100, args.n))) + list(
        np.linspace(0, args.n - 1, args.samples).astype(int))))
    for stat in stats:
        times = best[stat]
        if "momenta" not in times:
            print(f"SERIES {stat} momenta=missing")
            continue
        mine = np.fromfile(os.path.join(tmp, f"{stat}.f64"), dtype="<f8")
        series = {"momenta": mine}
        series.update({name: as_array(out) for name, out in outputs[stat].items()})
        peer, peer_t = min(((n, t) for n, t in times.items() if n != "momenta"), key=lambda a: a[1])
        line = (
            f"SERIES {stat} momenta={times['momenta']:.2f} best_peer={peer}:{peer_t:.2f} "
            f"ratio={peer_t / times['momenta']:.2f}"
        )
        others = " ".join(f"{n}={t:.2f}" for n, t in times.items() if n not in ("momenta", peer))
        print(line + (f"  ({others})" if others else ""))
        print(f"  momenta into a reused buffer={into[stat]:.2f} push loop={push[stat]:.2f}")
        family, what, _ = stat.split("_")
        if what == "floor":
            continue
        if family == "rolling" and what in ("mean", "var"):
            errs = exact_errors(stat, x, ints, k, series, positions)
            print("  error " + " ".join(f"{n}={e:.1e}" for n, e in errs.items()))
        elif family == "rolling":
            ref = series["pandas"]
            same = {
                n: bool(np.array_equal(v.view("<u8"), ref.view("<u8")))
                for n, v in series.items() if n != "pandas"
            }
            print("  bit-equal to pandas " + " ".join(f"{n}={v}" for n, v in same.items()))
        else:
            ref = series["pandas"]
            errs = {
                n: float(np.nanmax(np.abs(v - ref) / np.abs(ref)))
                for n, v in series.items() if n != "pandas"
            }
            print("  largest relative difference from pandas " + " ".join(
                f"{n}={e:.1e}" for n, e in errs.items()))
    print(json.dumps(best))
    # The data and every side's outputs: some 1.5 GB at 10^7 values.
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
