#!/usr/bin/env bash
# The GPU device check in one command, made to fit one device lease (issue 17):
#   OUT=DIR gpu/run-device-checks.sh            # on the device machine (CUDA toolkit, CMake, ninja, python3)
#   OUT=DIR gpu/run-device-checks.sh --dry-run  # here, without a device: the same steps end to end
# It needs only the CUDA toolkit, CMake, ninja and a C++17 compiler: the standalone project
# gpu/device-check (the device code of gpu/ and the harness wfs-device-check; no Qt, FFTW, Eigen or
# engine), and the reference data the CPU backend wrote beforehand (carried to the device machine):
#   build/bin/wavefront-cli device-reference --out gpu/device-check/reference
# Steps, all under one deadline (DEADLINE seconds, default 480 = 8 minutes, from the start):
#   1. configure and build gpu/device-check with ninja (-j16 or the core count); SASS sm_90 + PTX
#   2. wfs-device-check check: the reference files read and checked, then every device case (model
#      against the CPU, FastH against the CPU, graphs against streams, float against double, out of
#      memory then recovery); closing line "N passed, N failed, N skipped"
#   3. benchmarks, trimmed to the time left (each tool stops between rows at its budget and reports
#      what it left out): OOF grids 64..4096 float64/float32, CUDA graphs and streams; the FastH GPU
#      grid; bench/torch_oof.py (PyTorch on the same card) for the same-card anchor
#   4. compute-sanitizer memcheck on the quick subset of the check
#   5. $OUT gets at most four files: summary.txt, rows.jsonl (every JSON row, the check's and the
#      steps' included) and logs.tar.gz (every log); written even when a step fails or times out.
# --dry-run: the device cases report "no device" (skipped) while the reference data are still read
# and checked, the benchmarks and the sanitizer are skipped, the archive and the summary are written.
# Environment: OUT (default ./device-checks-out), REFERENCE (default gpu/device-check/reference),
# DEVICE_BUILD (default build-device), DEADLINE (seconds), JOBS (default 16, or fewer cores).
set -uo pipefail

dry=0
for arg in "$@"; do
  case $arg in
    --dry-run) dry=1 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "run-device-checks.sh: unknown argument '$arg' (--dry-run, --help)" >&2; exit 2 ;;
  esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/device-checks-out}
reference=${REFERENCE:-$root/gpu/device-check/reference}
build=${DEVICE_BUILD:-$root/build-device}
deadline=${DEADLINE:-480}
cores=$(nproc 2>/dev/null || echo 2)
jobs=${JOBS:-$(( cores < 16 ? cores : 16 ))}
start=$(date +%s)
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/device-checks.XXXXXX") || exit 1
logs=$work/logs
mkdir -p "$logs"
rows=$work/rows.jsonl
: > "$rows"
export PATH="$PATH:/usr/local/cuda/bin"

elapsed() { echo $(( $(date +%s) - start )); }
left() { echo $(( deadline - $(date +%s) + start )); }

# step NAME LIMIT COMMAND...: runs with a time limit (never past the deadline less `reserve`), logs to
# logs/NAME.log, records a JSON row; returns the command's status (124/137: timed out).
reserve=20
step() {
  local name=$1 limit=$2
  shift 2
  local room=$(( $(left) - reserve ))
  (( limit > room )) && limit=$room
  if (( limit < 5 )); then
    echo "{\"kind\": \"step\", \"name\": \"$name\", \"rc\": null, \"seconds\": 0, \"note\": \"no time left before the deadline\"}" >> "$rows"
    echo "step $name: skipped, no time left" | tee -a "$logs/steps.txt"
    return 124
  fi
  local t0=$(date +%s)
  timeout --signal=TERM --kill-after=5 "$limit" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  local took=$(( $(date +%s) - t0 ))
  echo "{\"kind\": \"step\", \"name\": \"$name\", \"rc\": $rc, \"seconds\": $took, \"limit\": $limit}" >> "$rows"
  echo "step $name: rc=$rc seconds=$took (limit $limit)" | tee -a "$logs/steps.txt"
  return $rc
}

skip_step() { # skip_step NAME WHY
  echo "{\"kind\": \"step\", \"name\": \"$1\", \"rc\": null, \"seconds\": 0, \"note\": \"$2\"}" >> "$rows"
  echo "step $1: skipped ($2)" | tee -a "$logs/steps.txt"
}

finish() {
  local status=$?
  trap - EXIT
  python3 "$root/gpu/device-check/summary.py" --rows "$rows" --logs "$logs" --mode "$([[ $dry == 1 ]] && echo dry-run || echo device)" \
    --seconds "$(elapsed)" --deadline "$deadline" > "$out/summary.txt" 2> "$logs/summary-errors.log" \
    || { echo "summary.py failed (see logs/summary-errors.log); the raw step list:" > "$out/summary.txt"; cat "$logs/steps.txt" >> "$out/summary.txt" 2>/dev/null; }
  cp "$rows" "$out/rows.jsonl"
  tar -czf "$out/logs.tar.gz" -C "$work" logs
  rm -rf "$work"
  cat "$out/summary.txt"
  echo "device checks: $(ls "$out" | wc -l) files in $out, $(elapsed) s"
  exit $status
}
trap finish EXIT

{
  echo "date: $(date -u +%FT%TZ)"
  echo "mode: $([[ $dry == 1 ]] && echo dry-run || echo device)"
  echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null) (changed files: $(git -C "$root" status --short 2>/dev/null | wc -l))"
  echo "cores: $cores, build jobs: $jobs, deadline: $deadline s"
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory,clocks.max.sm --format=csv,noheader 2>&1
  else
    echo "nvidia-smi: not found (no NVIDIA driver here)"
  fi
  nvcc --version 2>&1 | tail -1
  cmake --version 2>&1 | head -1
  echo "ninja $(ninja --version 2>&1)"
  python3 --version 2>&1
} > "$logs/machine.txt"

# 1. Build.
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
step configure 90 cmake -S "$root/gpu/device-check" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  || { echo "configure failed; see logs/configure.log" >&2; exit 1; }
step build 300 cmake --build "$build" -j "$jobs" \
  || { echo "build failed; see logs/build.log" >&2; exit 1; }
harness=$build/wfs-device-check

# 2. Correctness first: the timings below mean nothing if these fail.
if [[ ! -f $reference/index.txt ]]; then
  echo "no reference data in $reference: make it where the full program builds," \
       "with 'wavefront-cli device-reference --out $reference', and carry the folder" | tee "$logs/check.log" >&2
  echo "{\"kind\": \"check\", \"error\": \"no reference data in $reference\"}" >> "$rows"
  exit 1
fi
step check 150 "$harness" check --reference "$reference"
check_rc=$?
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/check.log" | tail -1)
if [[ -n $line ]]; then
  read -r passed failed skipped <<< "$(echo "$line" | sed -E 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')"
  echo "{\"kind\": \"check\", \"passed\": $passed, \"failed\": $failed, \"skipped\": $skipped, \"rc\": $check_rc}" >> "$rows"
else
  echo "{\"kind\": \"check\", \"error\": \"no closing line (rc $check_rc)\", \"rc\": $check_rc}" >> "$rows"
fi

# 3. Benchmarks within what is left, keeping room for the sanitizer and the packing.
sanitizer_room=75
if [[ $dry == 1 ]]; then
  skip_step bench-oof "dry run"
  skip_step bench-fasth "dry run"
  skip_step bench-torch "dry run"
else
  budget=$(( $(left) - reserve - sanitizer_room ))
  if (( budget > 30 )); then
    oof_budget=$(( budget * 35 / 100 )); fasth_budget=$(( budget * 40 / 100 )); torch_budget=$(( budget * 20 / 100 ))
    # Each tool stops starting rows at its budget; the limit adds room for the row in progress.
    step bench-oof $(( oof_budget + 25 )) "$harness" bench-oof --grid 64,128,256,512,1024,2048,4096 --order 8 \
      --precision double,float --launch graph,stream --eval-repeat 50 --budget "$oof_budget"
    grep -h '^{' "$logs/bench-oof.log" >> "$rows"
    step bench-fasth $(( fasth_budget + 25 )) "$harness" bench-fasth --d 64,128,256,512,768,1024,1536,2048,3072,4096 \
      --batch 1,32,256 --block 16,32,64,128 --precision float,double --repeat 20 --budget "$fasth_budget"
    grep -h '^{' "$logs/bench-fasth.log" >> "$rows"
    step bench-torch $(( torch_budget + 20 )) python3 "$root/bench/torch_oof.py" --grid 256,512,1024,2048 --order 8 \
      --eval-repeat 20 --budget "$torch_budget" --reference "$root/tests/data/oof-reference-values.json"
    grep -h '^{' "$logs/bench-torch.log" >> "$rows"
  else
    skip_step bench-oof "no time left ($budget s)"
  fi
fi
# CPU rows for the "GPU >= 20x our CPU" target, when the reference folder carries them
# (wavefront-cli bench oof --backend cpu ... > REFERENCE/cpu-oof.jsonl, made on a machine with the full build).
if [[ -f $reference/cpu-oof.jsonl ]]; then
  grep -h '^{' "$reference/cpu-oof.jsonl" | sed 's/^{/{"kind": "cpu-oof", /' >> "$rows"
fi

# 4. compute-sanitizer memcheck on the quick subset.
sanitizer=$(command -v compute-sanitizer || true)
if [[ $dry == 1 ]]; then
  skip_step memcheck "dry run (no device to check)${sanitizer:+; found $sanitizer}${sanitizer:-; compute-sanitizer not found here}"
elif [[ -z $sanitizer ]]; then
  skip_step memcheck "compute-sanitizer not found"
else
  step memcheck "$sanitizer_room" "$sanitizer" --tool memcheck --error-exitcode 3 --print-limit 20 \
    "$harness" check --reference "$reference" --quick
fi
[[ $check_rc == 0 ]]
