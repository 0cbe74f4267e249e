#!/usr/bin/env bash
# CTest gpu_device_check_dry_run: the device check's whole path without a device (issue 17), so that the
# first real run cannot die of a path, a file count or a flag. Writes the reference data with the CPU
# backend, runs `gpu/run-device-checks.sh --dry-run`, then holds its output to the contract:
# exit status 0, at most 4 files in $OUT, a summary whose check line reads "N passed, 0 failed", JSON
# rows that parse, and an archive holding the check's and the build's logs.
#   device_check_dry_run.sh SOURCE_DIR WAVEFRONT_CLI WORK_DIR
set -uo pipefail
source_dir=$1 cli=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work/out" "$work/reference"
mkdir -p "$work"
"$cli" device-reference --out "$work/reference" || fail "wavefront-cli device-reference failed"
t0=$(date +%s)
OUT="$work/out" REFERENCE="$work/reference" DEVICE_BUILD="$work/build" DEADLINE=${DEADLINE:-900} \
  bash "$source_dir/gpu/run-device-checks.sh" --dry-run > "$work/dry-run.log" 2>&1
rc=$?
cat "$work/dry-run.log"
echo "dry run: rc=$rc, $(( $(date +%s) - t0 )) s"
(( rc == 0 )) || fail "run-device-checks.sh --dry-run exited $rc"
count=$(find "$work/out" -mindepth 1 | wc -l)
(( count >= 3 && count <= 4 )) || fail "$count entries in \$OUT (the lease brings back at most 4 files)"
for f in summary.txt rows.jsonl logs.tar.gz; do
  [[ -s $work/out/$f ]] || fail "\$OUT/$f is missing or empty"
done
grep -Eq '^  [0-9]+ passed, 0 failed, [0-9]+ skipped' "$work/out/summary.txt" || fail "the summary has no passing check line"
grep -q 'skipped (no device' "$work/out/summary.txt" || fail "the summary does not say the device cases were skipped for want of a device"
python3 - "$work/out/rows.jsonl" <<'PY' || fail "rows.jsonl does not parse or lacks the check row"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
check = [r for r in rows if r.get("kind") == "check"]
assert check and check[0]["failed"] == 0 and check[0]["passed"] > 0, check
steps = {r["name"]: r for r in rows if r.get("kind") == "step"}
assert steps["build"]["rc"] == 0 and steps["check"]["rc"] == 0, steps
PY
listing=$(tar -tzf "$work/out/logs.tar.gz") || fail "logs.tar.gz is not a gzip tar"
for f in logs/check.log logs/build.log logs/configure.log logs/machine.txt; do
  grep -qx "$f" <<< "$listing" || fail "logs.tar.gz lacks $f"
done
# The vectorial model's cases (issue 24) are written, read and held to their own images.
check_log=$(tar -xzf "$work/out/logs.tar.gz" -O logs/check.log) || fail "logs/check.log does not unpack"
for c in vectorial-free vectorial-fixed vectorial-spectrum; do
  grep -q "^PASS reference/model/$c/cost-from-images" <<< "$check_log" || fail "the device check did not read and check the vectorial case $c"
done
# The check can fail: a truncated case file and one FastH product value moved by 1e-6 must each be
# reported as FAIL, with a non-zero exit status.
rm -rf "$work/broken"
cp -r "$work/reference" "$work/broken"
truncate -s 50000 "$work/broken/model-oof-64-4.bin"
python3 - "$work/broken/fasth-d64-k64-m1-b12.bin" <<'PY' || fail "could not alter the FastH case"
import struct, sys
path = sys.argv[1]
b = bytearray(open(path, "rb").read())
at = b.index(b"forward") + len("forward") + 1 + 8  # name, type byte, count: then the first value
struct.pack_into("<d", b, at, struct.unpack_from("<d", b, at)[0] + 1e-6)
open(path, "wb").write(b)
PY
"$work/build/wfs-device-check" check --reference "$work/broken" > "$work/broken.log" 2>&1
broken_rc=$?
(( broken_rc != 0 )) || fail "the harness passed altered reference data"
grep -q '^FAIL reference/model/oof-64-4/read: .*truncated' "$work/broken.log" || fail "a truncated file was not reported"
grep -q '^FAIL reference/fasth/d64-k64-m1-b12/sequential-product' "$work/broken.log" || fail "an altered product was not reported"
grep -E '^[0-9]+ passed, 2 failed' "$work/broken.log" || fail "the closing line does not count the two failures"
echo "PASS: device check dry run"
