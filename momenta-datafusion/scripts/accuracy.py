#!/usr/bin/env python3
"""The accuracy table of momenta-datafusion's README, re-measured.

Writes each case's data (values on binary grids, so that every value is
exact in f64 and in its CSV text), runs the queries through the `sql`
example (one DataFusion process) and the `ballista` example (a standalone
Ballista cluster), and prints each result's relative error against the
exact value, computed here in rational arithmetic (fractions.Fraction):

    python3 momenta-datafusion/scripts/accuracy.py [--release]

from the repository root. Needs only Python 3 and cargo; the Parquet
files are written by the `sql` example itself (COPY ... TO).
"""

import argparse
import csv
import os
import random
import subprocess
import sys
import tempfile
from fractions import Fraction

ROWS = 1_000_000
UNIT = Fraction(1, 2**23)  # the grid of values near 1e9


def cargo(example, release):
    cmd = ["cargo", "run", "-q", "-p", "momenta-datafusion", "--features", "ballista"]
    if release:
        cmd.append("--release")
    return cmd + ["--example", example, "--"]


def run(cmd, tables, sql, partitions=None):
    args = list(cmd)
    if partitions:
        args += ["--partitions", str(partitions)]
    for name, path in tables.items():
        args += ["--table", f"{name}={path}"]
    args.append(sql)
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    rows = list(csv.reader(out.splitlines()))
    return rows[0], rows[1:]


def value(text):
    """A CSV cell as an exact rational (None for NULL, a float for NaN/inf)."""
    if text == "":
        return None
    f = float(text)
    if f != f or f in (float("inf"), float("-inf")):
        return f
    return Fraction(f)


def rel(got, exact):
    if got is None:
        return "NULL"
    if isinstance(got, float):
        return repr(got)  # NaN or inf
    if exact == 0:
        return "0" if got == 0 else f"{float(got):.1e} (abs)"
    return f"{float(abs(got - exact) / abs(exact)):.1e}"


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([repr(v) if isinstance(v, float) else v for v in r])


def split_files(directory, header, rows, files):
    """`rows` in `files` CSV files of consecutive rows."""
    os.makedirs(directory, exist_ok=True)
    per = -(-len(rows) // files)
    for i in range(files):
        write_csv(os.path.join(directory, f"part-{i}.csv"), header, rows[i * per:(i + 1) * per])


def to_parquet(sql_cmd, csv_dir, parquet_dir):
    """Each CSV file of `csv_dir` as a Parquet file of `parquet_dir`."""
    os.makedirs(parquet_dir, exist_ok=True)
    for name in sorted(os.listdir(csv_dir)):
        src = os.path.join(csv_dir, name)
        dst = os.path.join(parquet_dir, name.replace(".csv", ".parquet"))
        run(sql_cmd, {"t": src}, f"COPY (SELECT * FROM t) TO '{dst}'")


def var_pop(ks):
    """Exact population variance of integers (times UNIT² by the caller)."""
    n, s1, s2 = len(ks), sum(ks), sum(k * k for k in ks)
    return Fraction(n * s2 - s1 * s1, n * n)


def corr(a, b):
    n = len(a)
    sa, sb = sum(a), sum(b)
    cab = n * sum(x * y for x, y in zip(a, b)) - sa * sb
    caa = n * sum(x * x for x in a) - sa * sa
    cbb = n * sum(y * y for y in b) - sb * sb
    # r = cab / sqrt(caa * cbb): compared squared, with its sign, exactly.
    return Fraction(cab), Fraction(caa * cbb)


def rel_corr(got, exact):
    """|r − exact| / |exact| for r = c/√d, to within 1e-30: √d by integer
    square root at a scale that makes its rounding negligible."""
    if got is None or isinstance(got, float):
        return rel(got, None)
    c, d = exact
    from math import isqrt
    scale = 10**60
    root = Fraction(isqrt(int(d * scale * scale)), scale)  # √d, low by < 1e-60
    return rel(got, c / root)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--release", action="store_true", help="run the examples built in release")
    args = p.parse_args()
    sql_cmd = cargo("sql", args.release)
    ballista_cmd = cargo("ballista", args.release)
    rng = random.Random(25)
    out = []  # (case, exact, built-in, momenta in one process, momenta on Ballista)

    with tempfile.TemporaryDirectory() as tmp:
        # 1-3: 10^6 rows of x = 1e9 + k·2⁻²³ (k uniform: 1e9 + U(0, 1)),
        # y = 1e9 + (k + e)·2⁻²³ (e uniform below 2²², corr 1/√1.25 =
        # 0.894), g one of 4 keys; 8 files.
        ks = [rng.getrandbits(23) for _ in range(ROWS)]
        es = [rng.getrandbits(22) for _ in range(ROWS)]
        gs = [rng.randrange(4) for _ in range(ROWS)]
        rows = [(g, 1e9 + k * 2.0**-23, 1e9 + (k + e) * 2.0**-23) for g, k, e in zip(gs, ks, es)]
        big = os.path.join(tmp, "big_csv")
        split_files(big, ["g", "x", "y"], rows, 8)
        big_parquet = os.path.join(tmp, "big_parquet")
        to_parquet(sql_cmd, big, big_parquet)
        exact = var_pop(ks) * UNIT * UNIT
        by_group = {g: [k for k, gg in zip(ks, gs) if gg == g] for g in range(4)}
        exact_g = {g: var_pop(v) * UNIT * UNIT for g, v in by_group.items()}
        ys = [k + e for k, e in zip(ks, es)]
        exact_corr_g = {
            g: corr([k for k, gg in zip(ks, gs) if gg == g], [y for y, gg in zip(ys, gs) if gg == g])
            for g in range(4)
        }
        q = "SELECT var_pop(x), momenta_var_pop(x) FROM t"
        for parts in (1, 8):
            _, [[b, m]] = run(sql_cmd, {"t": big_parquet}, q, parts)
            _, [[_, mb]] = run(ballista_cmd, {"t": big_parquet}, q, parts)
            out.append((f"var_pop, 10^6 × 1e9+U(0,1), {parts} partition(s)", f"{float(exact):.6g}",
                        rel(value(b), exact), rel(value(m), exact), rel(value(mb), exact)))
        q = "SELECT g, var_pop(x), momenta_var_pop(x) FROM t GROUP BY g ORDER BY g"
        _, local = run(sql_cmd, {"t": big_parquet}, q, 8)
        _, dist = run(ballista_cmd, {"t": big_parquet}, q, 8)
        worst = lambda rs, c: max((rs_rel(r[c], exact_g[int(r[0])]) for r in rs), key=lambda t: t[0])[1]
        out.append(("the same, GROUP BY 4 groups (worst group), 8 partitions", "",
                    ", ".join(rel(value(r[1]), exact_g[int(r[0])]) for r in local),
                    worst(local, 2), worst(dist, 2)))
        q = "SELECT g, corr(x, y), momenta_corr(x, y) FROM t GROUP BY g ORDER BY g"
        _, local = run(sql_cmd, {"t": big_parquet}, q, 8)
        _, dist = run(ballista_cmd, {"t": big_parquet}, q, 8)
        c0, d0 = exact_corr_g[0]
        out.append(("corr, GROUP BY 4 (worst group), 8 partitions",
                    f"{float(c0) / float(d0) ** 0.5:.4f} (group 0)",
                    ", ".join(r[1] or "NULL" for r in local),
                    max_corr(local, exact_corr_g), max_corr(dist, exact_corr_g)))

        # 4: var_pop of [1e16, 1e16 + 2] is 1.
        tiny = os.path.join(tmp, "tiny.csv")
        write_csv(tiny, ["x"], [(1e16,), (1e16 + 2,)])
        q = "SELECT var_pop(x), momenta_var_pop(x) FROM t"
        _, [[b, m]] = run(sql_cmd, {"t": tiny}, q)
        _, [[_, mb]] = run(ballista_cmd, {"t": tiny}, q)
        out.append(("var_pop of [1e16, 1e16+2]", "1", b, m, mb))

        # 5: 4000 × 1e306 in 4 files, 4 partitions: var 0, mean 1e306.
        huge = os.path.join(tmp, "huge_csv")
        split_files(huge, ["x"], [(1e306,)] * 4000, 4)
        q = "SELECT var_pop(x), avg(x), momenta_var_pop(x), momenta_mean(x) FROM t"
        _, [[bv, ba, mv, mm]] = run(sql_cmd, {"t": huge}, q, 4)
        _, [[_, _, mvb, mmb]] = run(ballista_cmd, {"t": huge}, q, 4)
        out.append(("4000 × 1e306, 4 partitions: var, mean", "0, 1e306",
                    f"{bv}, {ba}", f"{mv}, {mm}", f"{mvb}, {mmb}"))

        # 6: 1e12 + k, k < 10^6, 8 files and partitions, two runs.
        n = 10**6
        seq = os.path.join(tmp, "seq_csv")
        split_files(seq, ["x"], [(1e12 + k,) for k in range(n)], 8)
        exact = Fraction(n * n - 1, 12)
        q = "SELECT var_pop(x), momenta_var_pop(x) FROM t"
        runs = [run(sql_cmd, {"t": seq}, q, 8)[1][0] for _ in range(2)]
        druns = [run(ballista_cmd, {"t": seq}, q, 8)[1][0] for _ in range(2)]
        out.append(("1e12 + k, 8 partitions, two runs", f"{float(exact):.6g}",
                    ", then ".join(rel(value(r[0]), exact) for r in runs),
                    ", then ".join(rel(value(r[1]), exact) for r in runs),
                    ", then ".join(rel(value(r[1]), exact) for r in druns)))

        # 7: shape at an offset of 1e6 (the power-sum formula's failure):
        # x = 1e6 + k/256, k = ⌊r²/256⌋, 10^5 rows.
        rs = [rng.getrandbits(8) for _ in range(100_000)]
        kk = [r * r // 256 for r in rs]
        shape = os.path.join(tmp, "shape.csv")
        write_csv(shape, ["x"], [(1e6 + k / 256,) for k in kk])
        m = len(kk)
        s1, s2, s3, s4 = (sum(k**p for k in kk) for p in (1, 2, 3, 4))
        c2 = Fraction(m * s2 - s1 * s1)
        c3 = Fraction(m * m * s3 - 3 * m * s1 * s2 + 2 * s1**3)
        c4 = Fraction(m**3 * s4 - 4 * m * m * s1 * s3 + 6 * m * s1 * s1 * s2 - 3 * s1**4)
        g2 = c4 / (c2 * c2) - 3
        big_g2 = ((m + 1) * g2 + 6) * (m - 1) / ((m - 2) * (m - 3))
        q = "SELECT momenta_kurtosis(x), momenta_kurtosis_pop(x) FROM t"
        _, [[k_samp, k_pop]] = run(sql_cmd, {"t": shape}, q)
        _, [[kb_samp, kb_pop]] = run(ballista_cmd, {"t": shape}, q)
        out.append(("kurtosis G2, g2 at an offset of 1e6, 10^5 rows",
                    f"{float(big_g2):.6g}, {float(g2):.6g}", "(none built in)",
                    f"{rel(value(k_samp), big_g2)}, {rel(value(k_pop), g2)}",
                    f"{rel(value(kb_samp), big_g2)}, {rel(value(kb_pop), g2)}"))

    print("| case | exact | DataFusion built-in | momenta, `sql` example | momenta, Ballista |")
    print("|---|---|---|---|---|")
    for r in out:
        print("| " + " | ".join(r) + " |")


def rs_rel(text, exact):
    v = value(text)
    if v is None or isinstance(v, float):
        return (float("inf"), rel(v, exact))
    e = abs(v - exact) / abs(exact)
    return (e, f"{float(e):.1e}")


def max_corr(rows, exact):
    worst = (-1.0, "")
    for r in rows:
        v = value(r[2])
        if v is None or isinstance(v, float):
            return rel(v, None)
        if abs(v) > 1:
            return f"|r| > 1: {r[2]}"
        text = rel_corr(v, exact[int(r[0])])
        worst = max(worst, (float(text), text))
    return worst[1]


if __name__ == "__main__":
    sys.exit(main())
