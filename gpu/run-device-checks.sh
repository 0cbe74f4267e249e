#!/usr/bin/env bash
# The GPU forward model's device checks (issue 5), in one go, for a machine with a CUDA device:
#   bash gpu/run-device-checks.sh            # results under $OUT (or ./device-checks-out)
# Steps (each under a time limit, so that the whole run stays under about 8 minutes on an H200 with 16
# cores; a failed step is recorded and the rest still runs):
#   1. configure and build with CUDA (build-device/, Release, default architectures 80/90 + PTX)
#   2. tst_gpumodel: the GPU against the CPU (reference values, every objective, images, converged
#      fits, out of memory); tst_fasthgpu as a smoke test of the shared CudaCheck.h / DeviceResources.h
#   3. bench oof, order 8, grids 64..2048, float64 and float32:
#        gpu with CUDA graphs, gpu without (--no-cuda-graph: what the graphs save at small grids),
#        cpu on every core, cpu on one core (grids <= 1024; 2048 takes minutes there)
#   4. reconstruct --backend gpu on the oof and demo presets (the factory path, the `device` key)
#   5. summary.txt: per grid eval_ms against the HBM lower bound, float/double, time to solution against
#      the CPU with the final costs side by side, graph vs stream launches
#
# The HBM lower bound (bytes one cost-and-gradient evaluation must move; ModelLayout::trafficBytes,
# reported by bench as hbm_bytes and recomputed below from the grid geometry as a cross-check).
# R = bytes per real (8 or 4), C = 2R, K = 3 planes, N = grid, B = band rows holding the pupil,
# P = pupil pixels, J = 45 basis terms (order 8), E = K N^2, Eb = K B N:
#   fill        E C (write the whole field) + P R (J + K + 3) (basis, diversity, x, y, transmission)
#               + 4 B N (band map) + 2 P R (phase, amplitude written)
#   row FFTs    2 Eb C inverse + 2 Eb C forward           (band rows only, read + write each)
#   col FFTs    2 E C inverse + 2 E C forward             (every column, read + write each)
#   objective   E C read + E R data read (+ E R weights; the OOF preset has none) + E C write
#   gather      K P C (dL/dE at the pupil) + P R (2 + K + 2 + J) + 4 P (pupil index)
# At N = 1024 (B = 256: the dish spans a quarter of the rows; P = 51 392) float64 this is 474.7 MB, i.e.
# 0.119 ms at 4 TB/s (float32 238.0 MB); the target is eval_ms within 3x of that (<= 0.36 ms), and
# float32 about half of float64. Column FFTs are 42 % of it, the objective 27 %, the fill 15 %.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/device-checks-out}
build=$root/build-device
mkdir -p "$out"
cd "$root"
jobs=$(nproc)
status_file=$out/steps.txt
: > "$status_file"
start=$(date +%s)

step() { # step NAME SECONDS COMMAND...: runs with a time limit, logs to $out/NAME.log, records the status
  local name=$1 limit=$2
  shift 2
  local t0=$(date +%s)
  timeout --signal=KILL "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))" | tee -a "$status_file"
  return $rc
}

{
  echo "date: $(date -u +%FT%TZ)"
  echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null) (working tree changes: $(git -C "$root" status --short 2>/dev/null | wc -l))"
  echo "cores: $jobs"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory,clocks.max.sm --format=csv 2>&1
  /usr/local/cuda/bin/nvcc --version 2>&1 | tail -1
} > "$out/machine.txt"
cat "$out/machine.txt"

# 1. Build (only what the checks run: the CLI and the two GPU suites).
step configure 120 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWFS_CUDA=ON -DWFS_BUILD_TESTS=ON \
  || { echo "configure failed; see $out/configure.log" >&2; exit 1; }
step build 300 cmake --build "$build" -j "$jobs" --target wavefront-cli tst_gpumodel tst_fasthgpu \
  || { echo "build failed; see $out/build.log" >&2; tail -30 "$out/build.log" >&2; exit 1; }
cli=$build/bin/wavefront-cli

# 2. Correctness first: the timings below mean nothing if these fail.
step tst_gpumodel 150 env WFS_TEST_DATA="$root/tests/data" "$build/bin/tst_gpumodel"
step tst_fasthgpu 120 "$build/bin/tst_fasthgpu"
grep -E "^(FAIL|QINFO|Totals)" "$out/tst_gpumodel.log"

# 3. Benchmarks, one JSON object per line.
grids=64,128,256,512,1024,2048
for precision in double float; do
  step "bench-gpu-graph-$precision" 120 "$cli" bench oof --backend gpu --order 8 --grid $grids \
    --precision $precision --repeat 3 --eval-repeat 50
  cp "$out/bench-gpu-graph-$precision.log" "$out/bench-gpu-graph-$precision.jsonl"
  step "bench-gpu-stream-$precision" 90 "$cli" bench oof --backend gpu --order 8 --grid 64,128,256,1024 \
    --precision $precision --repeat 1 --eval-repeat 50 --no-cuda-graph --no-solve
  cp "$out/bench-gpu-stream-$precision.log" "$out/bench-gpu-stream-$precision.jsonl"
done
for precision in double float; do
  step "bench-cpu-all-$precision" 150 "$cli" bench oof --backend cpu --order 8 --grid $grids \
    --precision $precision --threads "$jobs" --repeat 1 --eval-repeat 5
  cp "$out/bench-cpu-all-$precision.log" "$out/bench-cpu-all-$precision.jsonl"
  step "bench-cpu-one-$precision" 90 "$cli" bench oof --backend cpu --order 8 --grid 64,128,256,512,1024 \
    --precision $precision --threads 1 --repeat 1 --eval-repeat 5
  cp "$out/bench-cpu-one-$precision.log" "$out/bench-cpu-one-$precision.jsonl"
done

# 4. The reconstruct path through the factory.
step reconstruct-oof-gpu 60 "$cli" reconstruct --preset oof --backend gpu --json "$out/reconstruct-oof-gpu.json" --force
step reconstruct-demo-gpu 60 "$cli" reconstruct --preset demo --backend gpu --json "$out/reconstruct-demo-gpu.json" --force

# 5. Summary.
python3 - "$out" > "$out/summary.txt" 2>&1 <<'PY'
import glob, json, math, os, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "bench-*.jsonl"))):
    kind = os.path.basename(path)[len("bench-"):-len(".jsonl")].rsplit("-", 1)[0]  # gpu-graph, gpu-stream, cpu-all, cpu-one
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            r["kind"] = kind
            rows.append(r)

def find(kind, grid, precision):
    for r in rows:
        if r["kind"] == kind and r["grid"] == grid and r["precision"] == precision:
            return r
    return None

def geometry(n):
    # The OOF grid (spec/oof-benchmark.md, PupilGrid::oofSquare): pupil pixels and the band of rows.
    spacing = 8.0 / (n - 1)
    coords = [-4.0 + spacing * i for i in range(n)]
    pixels, rows_with = 0, set()
    for i, x in enumerate(coords):
        for y in coords:
            if math.hypot(x, y) <= 1.0:
                pixels += 1
                rows_with.add(i)
    return pixels, max(rows_with) - min(rows_with) + 1

def traffic(n, real, planes=3, terms=45):
    p, b = geometry(n)
    c = 2 * real
    e, eb = planes * n * n, planes * b * n
    parts = {
        "fill": e * c + p * real * (terms + planes + 3) + 4 * b * n + 2 * p * real,
        "row FFTs (band, both ways)": 4 * eb * c,
        "column FFTs (both ways)": 4 * e * c,
        "objective": e * c + e * real + e * c,
        "gather": p * planes * c + p * real * (2 + planes + 2 + terms) + 4 * p,
    }
    return parts, p, b

bandwidth = 4.0e12  # bytes/s, the figure the issue states for the H200's HBM
print("== HBM lower bound, grid 1024, order 8 ==")
for precision, real in (("double", 8), ("float", 4)):
    parts, p, b = traffic(1024, real)
    total = sum(parts.values())
    print(f"{precision}: P = {p} pupil pixels, B = {b} band rows")
    for k, v in parts.items():
        print(f"  {k:28s} {v / 1e6:9.2f} MB")
    r = find("gpu-graph", 1024, precision)
    reported = r.get("hbm_bytes") if r else None
    check = "" if reported is None else f" (bench hbm_bytes {reported / 1e6:.2f} MB, {'matches' if abs(reported - total) < 1 else 'DIFFERS'})"
    print(f"  total {total / 1e6:.2f} MB -> {total / bandwidth * 1e3:.4f} ms at 4 TB/s{check}")
    if r:
        bound = total / bandwidth * 1e3
        print(f"  eval_ms {r['eval_ms']:.4f} = {r['eval_ms'] / bound:.2f} x the bound (target <= 3x); fft_ms {r['fft_ms']:.4f};"
              f" cost-only evaluation {r.get('cost_ms', float('nan')):.4f} ms")
d, f = find("gpu-graph", 1024, "double"), find("gpu-graph", 1024, "float")
if d and f:
    print(f"float32 / float64 eval_ms at 1024: {f['eval_ms'] / d['eval_ms']:.2f} (target about 0.5)")

print("\n== per grid (order 8) ==")
print("prec   grid | gpu eval_ms  bound_x  stream_ms graph_gain | gpu s   cpu-all s  cpu-1 s | speed-up all / one | final cost gpu / cpu (rel diff) | gpu term")
for precision, real in (("double", 8), ("float", 4)):
    for grid in (64, 128, 256, 512, 1024, 2048):
        g, s = find("gpu-graph", grid, precision), find("gpu-stream", grid, precision)
        ca, c1 = find("cpu-all", grid, precision), find("cpu-one", grid, precision)
        if not g:
            print(f"{precision:6s} {grid:5d} | no gpu row")
            continue
        bound = g.get("hbm_bytes", float("nan")) / bandwidth * 1e3
        stream = s["eval_ms"] if s else float("nan")
        sa = ca["seconds"] / g["seconds"] if ca and g.get("seconds") else float("nan")
        s1 = c1["seconds"] / g["seconds"] if c1 and g.get("seconds") else float("nan")
        cost_ref = ca or c1
        rel = abs(g["final_cost"] - cost_ref["final_cost"]) / abs(cost_ref["final_cost"]) if cost_ref else float("nan")
        print(f"{precision:6s} {grid:5d} | {g['eval_ms']:10.4f} {g['eval_ms'] / bound:8.2f} {stream:10.4f} {stream / g['eval_ms']:9.2f}x |"
              f" {g.get('seconds') or float('nan'):7.4f} {ca['seconds'] if ca else float('nan'):9.3f} {c1['seconds'] if c1 else float('nan'):8.3f} |"
              f" {sa:8.1f}x {s1:8.1f}x | {g['final_cost']:.9e} / {cost_ref['final_cost'] if cost_ref else float('nan'):.9e} ({rel:.1e}) | {g['termination']}")
launch = sorted({r.get("launch", "") for r in rows if r["kind"] == "gpu-graph"})
print("\nlaunch modes (graph rows):", launch)
print("device:", sorted({r["device"] for r in rows if r["backend"] == "gpu"}))
PY
cat "$out/summary.txt"
echo "total seconds: $(( $(date +%s) - start ))" | tee -a "$status_file"
