#!/usr/bin/env bash
# The GPU benchmark grid for FastH (Mathiasen et al. 2020), in one go, for a machine with a CUDA device:
#   bash gpu/fasth/bench-gpu-grid.sh [build-dir] [out-dir]
# Checks the GPU against the CPU first (tst_fasthgpu; stops on failure), then times float32 (TF32 off)
# eager and CUDA-graph-captured, float64 spot checks, and prints the ratios the issue asks for:
# FastH / sequential at d = 512 and 1024 (cuBLAS per reflector and the fused kernel) and FastH / ormqr.
set -euo pipefail
build=${1:-build}
out=${2:-fasth-gpu-results}
cli="$build/bin/wavefront-cli"
mkdir -p "$out"

"$build/bin/tst_fasthgpu" | tee "$out/tst_fasthgpu.txt"
grep -q "Totals: .* 0 failed" "$out/tst_fasthgpu.txt"

common=(fasth-bench --backend gpu --repeat 20 --warmup 3)
# FastH at every block size; the baselines at b = 32.
"$cli" "${common[@]}" --d 64,128,256,512,768,1024,1536,2048,3072,4096 --batch 1,32,256 --block 16,32,64,128 \
  --method fasth,ut --pass forward,both --precision float > "$out/blocked.jsonl"
"$cli" "${common[@]}" --d 64,128,256,512,768,1024,1536,2048,3072,4096 --batch 1,32,256 --block 32 \
  --method sequential,sequential-fused,tree,library,dense --pass forward,both --precision float \
  > "$out/baselines.jsonl" 2> "$out/baselines.err"
"$cli" "${common[@]}" --d 512,1024,2048 --batch 32 --block 32 --cuda-graph \
  --method sequential,sequential-fused,fasth,ut,tree,library,dense --pass forward,both --precision float \
  > "$out/graph.jsonl" 2> "$out/graph.err"
"$cli" "${common[@]}" --d 512,1024 --batch 32 --block 32 \
  --method sequential,sequential-fused,fasth,ut,tree,library,dense --pass forward,backward,both --precision double \
  > "$out/double.jsonl" 2> "$out/double.err"

python3 - "$out" <<'PY'
import json, sys, glob, collections
rows = [json.loads(l) for f in glob.glob(sys.argv[1] + "/*.jsonl") for l in open(f) if l.strip()]
def ms(**kw):
    hits = [r for r in rows if all(r.get(k) == v for k, v in kw.items())]
    return min((r["ms"] for r in hits), default=float("nan"))
worst = max((r["max_abs_error"] for r in rows if r["precision"] == "float"), default=0)
print(f"rows: {len(rows)}, worst float max_abs_error: {worst:.2e}")
for graph in (False, True):
    for d in (512, 1024):
        for p in ("forward", "both"):
            base = dict(d=d, batch=32, precision="float", graph=graph, **{"pass": p})
            f = ms(method="fasth", **base)
            print(f"graph={graph!s:5} d={d:4} {p:8} fasth {f:8.3f} ms | sequential/fasth {ms(method='sequential', **base)/f:6.1f}x"
                  f" | fused/fasth {ms(method='sequential-fused', **base)/f:6.1f}x | ormqr/fasth {ms(method='library', **base)/f:6.2f}x"
                  f" | dense/fasth {ms(method='dense', **base)/f:6.2f}x")
best = collections.defaultdict(lambda: (float("inf"), 0))
for r in rows:
    if r["method"] == "fasth" and r["pass"] == "forward" and r["batch"] == 32 and r["precision"] == "float" and not r.get("graph"):
        best[r["d"]] = min(best[r["d"]], (r["ms"], r["block"]))
print("best fasth block (forward, m=32, float):", {d: b for d, (t, b) in sorted(best.items())})
PY
