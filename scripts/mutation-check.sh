#!/usr/bin/env bash
# Mutation check: do the tests catch small, plausible bugs? Applies a fixed list of mutations one at a
# time to a COPY of the source tree (the working tree is never touched), rebuilds only the test targets
# each one concerns in a build folder of that copy, runs those tests, and reports which mutations the
# tests caught. Ends with the line "caught N of M". Exit status 0 only when every mutation was caught.
#
#   scripts/mutation-check.sh [-k] [NAME...]     NAMEs: run only those mutations; -k: keep going after a
#                                                mutation that does not apply or does not compile
#   scripts/mutation-check.sh --check            only check that every mutation applies (seconds)
#
# The copy and its build folder live in build-mutation/ (ignored by git; WFS_MUTATION_DIR overrides).
# They are kept between runs, so only the first run builds everything; ccache (base_dir /work) reuses
# objects of other builds of the same sources. A run takes minutes per mutation: run it by hand, it is
# not part of CI.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
work="${WFS_MUTATION_DIR:-$root/build-mutation}"
src="$work/src"
build="$src/build" # same layout as the release preset's build/, so ccache's relative paths match
keep_going=0
check_only=0
selected=()
for a in "$@"; do
  case "$a" in
    -k) keep_going=1 ;;
    --check) check_only=1 ;;
    *) selected+=("$a") ;;
  esac
done

# ---- the mutations -------------------------------------------------------------------------------
# name | file | tests (space separated) | description. The edit itself is in apply_mutation below:
# exact text replacements, each of which must match exactly once.
mutations=(
  "shift-gradient-sign|core/optics/CpuModel.cpp|tst_model tst_fitkinds|sign of the per-plane tip/tilt gradient flipped"
  "noll-z23-z24-swap|core/optics/Zernike.cpp|tst_zernike|Noll Z23 and Z24 swapped both ways"
  "background-dropped|core/optics/CpuModel.cpp|tst_model tst_fitkinds|background dropped from the objective's model"
  "fasth-wy-off-by-one|core/fasth/Householder.cpp|tst_fasthproduct tst_fasthgradient|FastH WY accumulation skips the first coupling"
  "adjoint-factor-two|core/optics/CpuModel.cpp|tst_model|adjoint source loses the factor 2 of d|S|^2/dS"
  "adjoint-phase-sign|core/optics/CpuModel.cpp|tst_model tst_fitkinds|adjoint phase derivative with the wrong sign"
  "pupil-obscuration-radius|core/optics/Pupil.cpp|tst_physics|obscuration read as a radius fraction of the diameter"
  "pupil-spider-width|core/optics/Pupil.cpp|tst_physics|spider vanes half as wide"
  "diversity-w020-factor|core/optics/Diversity.cpp|tst_physics|W020 defocus screen missing a factor 2"
  "diversity-paraxial-index|core/optics/Diversity.cpp|tst_physics|paraxial axial screen missing the 1/2"
  "diversity-highna-na|core/optics/Diversity.cpp|tst_physics|high-NA screen uses NA instead of NA^2"
  "solver-gradient-scaling|core/fit/Solver.cpp|tst_fit tst_fitkinds|solver divides the gradient by the parameter scales"
  "uncertainty-weighted-scale|core/fit/Results.cpp|tst_fitkinds|weighted least squares uncertainty scale 1 instead of 2"
  "tiff-orientation|core/io/ImageReaders.cpp|tst_imageio|TIFF rows not flipped to bottom-up"
  "png-orientation|core/io/ImageReaders.cpp|tst_imageio|PNG rows not flipped to bottom-up"
  "session-spider-angle|core/io/Session.cpp|tst_exports|session loses the spider angle on reading"
  "fasth-backward-sign|core/fasth/Householder.cpp|tst_fasthgradient|FastH backward pass: wrong sign of one gradient term"
  "csv-columns-swapped|core/io/ResultJson.cpp|tst_exportreaders|CSV writes value_nm and value_waves swapped"
)

# Applies mutation $1 to $src/$2 with exact replacements (python3: no quoting trouble with C++ text).
apply_mutation() {
  python3 - "$1" "$src/$2" <<'PY'
import sys
name, path = sys.argv[1], sys.argv[2]
edits = {
    "shift-gradient-sign": [("grad.shiftX[size_t(k)] += dShiftX;", "grad.shiftX[size_t(k)] -= dShiftX;"),
                            ("grad.shiftY[size_t(k)] += dShiftY;", "grad.shiftY[size_t(k)] -= dShiftY;")],
    "noll-z23-z24-swap": [("        return nollMode(index);",
                           "        return index == 23 ? ZernikeMode{6, 2} : index == 24 ? ZernikeMode{6, -2} : nollMode(index);"),
                          ("    if (ordering == ZernikeOrdering::Ansi)\n        return (mode.n * (mode.n + 2) + mode.m) / 2;",
                           "    if (ordering == ZernikeOrdering::Noll && mode.n == 6 && std::abs(mode.m) == 2)\n        return mode.m > 0 ? 23 : 24;\n"
                           "    if (ordering == ZernikeOrdering::Ansi)\n        return (mode.n * (mode.n + 2) + mode.m) / 2;")],
    "background-dropped": [("const Real model = intensity * power + background;", "const Real model = intensity * power; (void)background;")],
    "fasth-wy-off-by-one": [("        if (r > 0)\n            coefficients.col(r)", "        if (r > 1)\n            coefficients.col(r)")],
    "adjoint-factor-two": [("b[i] = s * (Real(2) * dModel * intensity * fieldScale);", "b[i] = s * (dModel * intensity * fieldScale);")],
    "adjoint-phase-sign": [("const Real dPhase = g.imag() * e.real() - g.real() * e.imag();",
                            "const Real dPhase = g.real() * e.imag() - g.imag() * e.real();")],
    "pupil-obscuration-radius": [("if (r >= 1.0 || r < obscuration)", "if (r >= 1.0 || r < 0.5 * obscuration)")],
    "pupil-spider-width": [("const double halfWidth = spiderWidth;", "const double halfWidth = 0.5 * spiderWidth;")],
    "diversity-w020-factor": [("return 2.0 * M_PI * defocusWaves * rho2;", "return M_PI * defocusWaves * rho2;")],
    "diversity-paraxial-index": [("rho2 / (2.0 * immersionIndex)", "rho2 / immersionIndex")],
    "diversity-highna-na": [("n * n - numericalAperture * numericalAperture * rho2", "n * n - numericalAperture * rho2")],
    "solver-gradient-scaling": [("gradient[i] *= m_scales[i];", "gradient[i] /= m_scales[i];")],
    "uncertainty-weighted-scale": [("    case ObjectiveKind::WeightedLeastSquares:\n        scale = 2.0;",
                                    "    case ObjectiveKind::WeightedLeastSquares:\n        scale = 1.0;")],
    "tiff-orientation": [("bottomUp ? r : image.height - 1 - r", "bottomUp ? image.height - 1 - r : r")],
    "png-orientation": [("image.at(int(height - 1 - r), int(c)) = v;", "image.at(int(r), int(c)) = v;")],
    "session-spider-angle": [("    ms.spiderAngleDeg = r.number(model, QStringLiteral(\"spider_angle_deg\"), mo, ms.spiderAngleDeg);\n", "")],
    "fasth-backward-sign": [("dv.noalias() -= a * pg.transpose();", "dv.noalias() += a * pg.transpose();")],
    "csv-columns-swapped": [("                   .arg(c.waves, 0, 'g', 10)\n                   .arg(c.nm, 0, 'g', 10)",
                             "                   .arg(c.nm, 0, 'g', 10)\n                   .arg(c.waves, 0, 'g', 10)")],
}[name]
text = open(path).read()
for old, new in edits:
    count = text.count(old)
    if count != 1:
        sys.exit("%s: the text to change occurs %d times in %s (expected once): %r" % (name, count, path, old[:60]))
    text = text.replace(old, new)
open(path, "w").write(text)
PY
}

# ---- the copy and its build ----------------------------------------------------------------------
if [ $check_only = 1 ]; then
  src="$(mktemp -d)"
  trap 'rm -rf "$src"' EXIT
  bad=0
  for m in "${mutations[@]}"; do
    IFS='|' read -r name file tests desc <<<"$m"
    mkdir -p "$src/$(dirname "$file")"
    cp "$root/$file" "$src/$file"
    if apply_mutation "$name" "$file"; then echo "applies  $name"; else bad=$((bad + 1)); fi
  done
  exit $bad
fi
echo "mutation-check: copying the working tree to $src"
mkdir -p "$src"
# Tracked and untracked-but-not-ignored files, as they are now (uncommitted edits included).
# tar keeps modification times, so unchanged files are not rebuilt on a later run.
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$src" \
  || { echo "copy failed"; exit 2; }
# Files deleted from the tree since the last run would linger; they do not matter to the build of
# the targets below (CMake lists its sources explicitly).

all_tests=()
for m in "${mutations[@]}"; do
  IFS='|' read -r name file tests desc <<<"$m"
  for t in $tests; do [[ " ${all_tests[*]} " == *" $t "* ]] || all_tests+=("$t"); done
done

export CCACHE_BASEDIR="${CCACHE_BASEDIR:-/work}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWFS_BUILD_TESTS=ON >"$work/configure.log" 2>&1 \
    || { echo "configure failed, see $work/configure.log"; exit 2; }
fi
jobs="${WFS_MUTATION_JOBS:-2}"
build_targets() { cmake --build "$build" -j "$jobs" --target "$@" >"$work/build.log" 2>&1; }
run_tests() {
  local regex
  regex="^($(echo "$*" | tr ' ' '|'))\$"
  ctest --test-dir "$build" -R "$regex" --timeout 900 >"$work/test.log" 2>&1
}

echo "mutation-check: baseline build and tests (${all_tests[*]})"
build_targets "${all_tests[@]}" || { echo "baseline build failed, see $work/build.log"; exit 2; }
run_tests "${all_tests[@]}" || { echo "baseline tests fail without any mutation, see $work/test.log"; tail -30 "$work/test.log"; exit 2; }

# ---- one mutation at a time ----------------------------------------------------------------------
caught=0
total=0
missed=()
for m in "${mutations[@]}"; do
  IFS='|' read -r name file tests desc <<<"$m"
  if [ ${#selected[@]} -gt 0 ] && [[ " ${selected[*]} " != *" $name "* ]]; then continue; fi
  total=$((total + 1))
  cp "$root/$file" "$src/$file"
  if ! apply_mutation "$name" "$file"; then
    echo "NOT APPLIED  $name ($desc): the source changed; update the mutation"
    missed+=("$name")
    cp "$root/$file" "$src/$file"
    [ $keep_going = 1 ] || break
    continue
  fi
  start=$(date +%s)
  if ! build_targets $tests; then
    echo "NO BUILD     $name ($desc): the mutated source does not compile, see the log below"
    tail -5 "$work/build.log"
    missed+=("$name")
  elif run_tests $tests; then
    echo "MISSED       $name ($desc): $tests pass [$(( $(date +%s) - start )) s]"
    missed+=("$name")
  else
    failing=$(grep -E '^[[:space:]]*[0-9]+ - ' "$work/test.log" | sed -E 's/^[[:space:]]*[0-9]+ - ([^ ]+).*/\1/' | tr '\n' ' ')
    echo "caught       $name ($desc): by ${failing:-$tests}[$(( $(date +%s) - start )) s]"
    caught=$((caught + 1))
  fi
  cp "$root/$file" "$src/$file" # restore; the next build recompiles it
done
# Leave the copy's build matching the unmutated sources for the next run.
build_targets "${all_tests[@]}" >/dev/null 2>&1 || true

[ ${#missed[@]} -gt 0 ] && echo "not caught: ${missed[*]}"
echo "caught $caught of $total"
[ "$caught" -eq "$total" ]
