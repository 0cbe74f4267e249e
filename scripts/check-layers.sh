#!/usr/bin/env bash
# The floor rule of docs/architecture.md, enforced: no file includes a header of a floor above its own. Each folder
# below may include the project folders named beside it (an include "X/..." names folder X); anything else it
# includes from the project is reported with the file, the line and the rule. Run by scripts/test.sh before the build
# and by CTest (check_layers, with --self-test, which also shows that a violation fails).
#   scripts/check-layers.sh [ROOT]     check the tree at ROOT (default: this checkout); exit 1 on a violation
#   scripts/check-layers.sh --self-test   a planted violation must fail and a clean tree pass, then check this tree
set -euo pipefail

# folder: the project folders its files may include. The list of project folders an include may name is the union.
rules=(
  "core/base:base"
  "core/simd:simd"
  "core/optics:base simd optics"
  "core/fit:base simd optics fit"
  "core/fasth:base simd optics fasth"
  "core/settings:base simd optics fit settings"
  "core/io:base simd optics fit settings io"
  "core/engine:base simd optics fit fasth settings io engine"
  "render:base simd optics fit fasth settings io"
  "gpu:base simd optics fit fasth settings io engine gpu"
  "ui:base simd optics fit fasth settings io engine"
  "app:base simd optics fit fasth settings io engine"
  "python:base simd optics fit fasth settings io engine"
)
project="base simd optics fit fasth settings io engine gpu"

check() {
  local root="$1" bad=0
  for rule in "${rules[@]}"; do
    local folder="${rule%%:*}" allowed=" ${rule#*:} "
    [ -d "$root/$folder" ] || continue
    while IFS= read -r hit; do
      [ -n "$hit" ] || continue
      local included="${hit#*#include \"}"
      local prefix="${included%%/*}"
      case " $project " in *" $prefix "*) ;; *) continue ;; esac
      case "$allowed" in *" $prefix "*) continue ;; esac
      echo "check-layers: ${hit%%:#include*}: includes \"${included%%\"*}\": $folder may include only:${allowed% }" >&2
      bad=1
    done < <(cd "$root" && grep -rnoE '#include "[a-z]+/[^"]*"' "$folder" \
               --include='*.h' --include='*.cpp' --include='*.inc' --include='*.cu' --include='*.cuh' 2>/dev/null || true)
  done
  return $bad
}

here="$(cd "$(dirname "$0")/.." && pwd)"
if [ "${1:-}" = "--self-test" ]; then
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/core/fit" "$scratch/core/io"
  printf '#include "optics/Problem.h"\n#include "fit/Solver.h"\n' > "$scratch/core/fit/Fine.cpp"
  printf '#include "settings/ModelSettings.h"\n' > "$scratch/core/io/Fine.h"
  if ! check "$scratch" 2>/dev/null; then
    echo "check-layers: self-test: a tree that keeps the rule was refused" >&2
    exit 1
  fi
  printf '#include "io/Dataset.h"\n' > "$scratch/core/fit/Upward.cpp"
  if check "$scratch" 2>/dev/null; then
    echo "check-layers: self-test: core/fit including io/ was not caught" >&2
    exit 1
  fi
  echo "check-layers: self-test passed (a clean tree passes, an upward include fails)"
  shift
fi
root="${1:-$here}"
if check "$root"; then
  echo "check-layers: no include runs up a floor in $root"
else
  exit 1
fi
