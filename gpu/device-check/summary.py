#!/usr/bin/env python3
"""summary.txt of gpu/run-device-checks.sh: the steps, the check's verdict, the benchmark tables and the
issue's targets (README, "GPU device check"), from rows.jsonl and the logs. Standard library only."""
import argparse
import json
import math
import os
import re


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    rows.append({"kind": "unparsed", "text": line[:200]})
    return rows


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def fmt(v, spec=".4f"):
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else format(v, spec)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rows", required=True)
    p.add_argument("--logs", required=True)
    p.add_argument("--mode", required=True)
    p.add_argument("--seconds", type=int, required=True)
    p.add_argument("--deadline", type=int, required=True)
    a = p.parse_args()
    rows = load(a.rows)
    kind = lambda k: [r for r in rows if r.get("kind") == k]
    out = []
    say = out.append

    say(f"GPU device check ({a.mode}): {a.seconds} s of a {a.deadline} s deadline")
    machine = read(os.path.join(a.logs, "machine.txt")).strip().splitlines()
    say("\n".join("  " + m for m in machine))

    say("\n== steps ==")
    for s in kind("step"):
        rc = s.get("rc")
        state = "skipped" if rc is None else ("ok" if rc == 0 else ("TIMED OUT" if rc in (124, 137) else f"FAILED rc={rc}"))
        say(f"  {s['name']:12s} {state:12s} {s.get('seconds', 0):4d} s  {s.get('note', '')}")

    say("\n== correctness (wfs-device-check check) ==")
    check = read(os.path.join(a.logs, "check.log"))
    closing = [l for l in check.splitlines() if re.match(r"^\d+ passed, \d+ failed", l)]
    say("  " + (closing[-1] if closing else "no closing line: the check did not finish (see logs/check.log)"))
    if a.mode == "dry-run":
        say("  (dry run: the device cases are skipped; the reference data were read and checked on the host)")
    for l in check.splitlines():
        if l.startswith("device:") or l.startswith("reference:"):
            say("  " + l)
    fails = [l for l in check.splitlines() if l.startswith("FAIL")]
    for l in fails[:25]:
        say("  " + l[:300])
    if len(fails) > 25:
        say(f"  ... {len(fails) - 25} more FAIL lines in logs/check.log")
    memcheck = read(os.path.join(a.logs, "memcheck.log"))
    summary_line = [l for l in memcheck.splitlines() if "ERROR SUMMARY" in l]
    if summary_line:
        say("  compute-sanitizer memcheck (quick subset): " + summary_line[-1].strip())

    oof = [r for r in kind("oof") if "eval_ms" in r]
    torch = [r for r in kind("torch") if "eval_ms" in r]
    cpu = kind("cpu-oof")
    fasth = [r for r in kind("fasth") if "ms" in r]
    errors = [r for r in rows if "error" in r and r.get("kind") in ("oof", "fasth", "torch")]
    skipped = [r for r in rows if r.get("skipped") is True]
    trimmed = kind("trimmed")

    def find(grid, precision, launch):
        for r in oof:
            if r["grid"] == grid and r["precision"] == precision and r["launch_request"] == launch:
                return r
        return None

    say("\n== OOF model, order 8 (wfs-device-check bench-oof) ==")
    if not oof:
        say("  no rows" + (" (dry run: benchmarks skipped)" if a.mode == "dry-run" else ""))
    else:
        say("  prec    grid | graph eval_ms  stream eval_ms  graph gain | HBM bound ms  x bound | fft_ms  cost_ms | torch eval_ms  torch/ours | launch")
        for precision in ("double", "float"):
            for grid in sorted({r["grid"] for r in oof}):
                g, s = find(grid, precision, "graph"), find(grid, precision, "stream")
                if not g and not s:
                    continue
                base = g or s
                t = next((r for r in torch if r["grid"] == grid and r["precision"] == precision), None)
                gain = s["eval_ms"] / g["eval_ms"] if g and s else None
                say(f"  {precision:6s} {grid:5d} | {fmt(g and g['eval_ms']):>13s} {fmt(s and s['eval_ms']):>15s} {fmt(gain, '.2f'):>10s}x |"
                    f" {fmt(base['bound_ms']):>12s} {fmt(g and g['bound_x'], '.2f'):>8s} | {fmt(base['fft_ms']):>6s} {fmt(base['cost_ms']):>8s} |"
                    f" {fmt(t and t['eval_ms']):>13s} {fmt(t and g and t['eval_ms'] / g['eval_ms'], '.1f'):>10s}x | {base['launch'][:60]}")

    say("\n== FastH, float32, m = 32, b = 32 (wfs-device-check bench-fasth) ==")
    if not fasth:
        say("  no rows" + (" (dry run: benchmarks skipped)" if a.mode == "dry-run" else ""))
    else:
        def ms(method, d, pas, graph=False, m=32, b=32, precision="float"):
            for r in fasth:
                if (r["method"], r["d"], r["pass"], r["graph"], r["batch"], r["block"], r["precision"]) == (method, d, pas, graph, m, b, precision):
                    return r["ms"]
            return None
        say("  d     pass    graph | fasth ms | sequential/fasth  fused/fasth  ormqr/fasth  dense/fasth")
        for d in sorted({r["d"] for r in fasth}):
            for pas in ("forward", "both"):
                for graph in (False, True):
                    f = ms("fasth", d, pas, graph)
                    if f is None:
                        continue
                    ratio = lambda m: fmt((ms(m, d, pas, graph) or float("nan")) / f, ".2f")
                    say(f"  {d:5d} {pas:7s} {str(graph):5s} | {fmt(f):>8s} | {ratio('sequential'):>15s}x {ratio('sequential-fused'):>10s}x"
                        f" {ratio('library'):>11s}x {ratio('dense'):>11s}x")
        worst = max((r.get("max_abs_error") or 0 for r in fasth if r["precision"] == "float"), default=0)
        say(f"  rows: {len(fasth)}; worst float max_abs_error against the device's sequential result: {worst:.2e}")
        launches = sorted({r["launch"] for r in fasth if r["graph"]})
        say("  graph launches: " + "; ".join(l[:90] for l in launches))

    for r in trimmed:
        say(f"  trimmed to the deadline: {r.get('bench')}: {r.get('rows_skipped')} rows left out (budget {r.get('budget_s')} s)")
    for r in skipped:
        say(f"  skipped: {r.get('kind')}: {r.get('reason')}")
    for r in errors[:10]:
        say(f"  error row: {json.dumps(r)[:300]}")

    say("\n== targets (README, GPU device check) ==")

    def verdict(ok):
        return "not measured" if ok is None else ("MET" if ok else "NOT MET")

    d1024 = find(1024, "double", "graph")
    say(f"  grid 1024 float64 evaluation <= 3x one pass over its HBM bytes (0.36 ms): "
        f"{verdict(None if not d1024 else d1024['eval_ms'] <= 3 * d1024['bound_ms'])}"
        + (f" ({d1024['eval_ms']:.4f} ms = {d1024['bound_x']:.2f}x of {d1024['bound_ms']:.4f} ms)" if d1024 else ""))
    if cpu and oof:
        pairs = []
        for r in oof:
            if r["launch_request"] != "graph" or r["grid"] < 512:
                continue
            c = next((c for c in cpu if c.get("grid") == r["grid"] and c.get("precision") == r["precision"] and "eval_ms" in c), None)
            if c:
                pairs.append((r["grid"], r["precision"], c["eval_ms"] / r["eval_ms"]))
        say(f"  GPU >= 20x our CPU at grid >= 512 (per evaluation): {verdict(None if not pairs else all(x >= 20 for *_, x in pairs))}"
            + "".join(f"; {g} {p} {x:.1f}x" for g, p, x in pairs))
    else:
        say("  GPU >= 20x our CPU at grid >= 512: not measured (no CPU rows: carry REFERENCE/cpu-oof.jsonl from"
            " `wavefront-cli bench oof --backend cpu --threads N --no-solve`)")
    pairs = []
    for t in torch:
        g = find(t["grid"], t["precision"], "graph")
        if g:
            pairs.append((t["grid"], t["eval_ms"] / g["eval_ms"]))
    say(f"  ahead of PyTorch-CUDA per evaluation (grids 256..2048): {verdict(None if not pairs else all(x > 1 for _, x in pairs))}"
        + "".join(f"; {g}: torch/ours {x:.1f}x" for g, x in pairs))
    for v in kind("torch-verify"):
        say(f"    PyTorch model against the spec's reference values: {'ok' if v.get('ok') else 'WRONG'}"
            f" (cost {v.get('cost_rel'):.1e}, gradient {v.get('gradient_rel'):.1e} relative)")
    for t in torch:
        if t.get("solve_s") is not None:
            say(f"    torch to solution at {t['grid']} {t['precision']}: {t['solve_s']:.2f} s, {t.get('iterations')} iterations"
                f" ({t.get('optimizer')}), final cost {t.get('final_cost')}")
    fasth_targets = []
    for r in fasth:
        if r["method"] == "fasth" and r["d"] >= 1024 and r["batch"] == 32 and r["block"] == 32 and r["precision"] == "float":
            for other in ("sequential-fused", "library"):
                o = next((x for x in fasth if x["method"] == other and all(x[k] == r[k] for k in ("d", "pass", "graph", "batch", "block", "precision"))), None)
                if o:
                    fasth_targets.append((r["d"], r["pass"], r["graph"], other, o["ms"] / r["ms"]))
    say(f"  FastH ahead of the fused sequential kernel and cuSOLVER ormqr at d >= 1024: "
        f"{verdict(None if not fasth_targets else all(x > 1 for *_, x in fasth_targets))}")
    for d, pas, graph, other, x in fasth_targets:
        if x <= 1:
            say(f"    behind: d={d} {pas} graph={graph}: {other}/fasth {x:.2f}x")
    print("\n".join(out))


if __name__ == "__main__":
    main()
