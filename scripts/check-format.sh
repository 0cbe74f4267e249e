#!/usr/bin/env bash
# The C++ style of .clang-format, enforced: every C++ source of the project (*.h *.cpp *.inc *.cu *.cuh under core,
# render, gpu, ui, app, python and tests; tracked files and new ones git does not ignore) must be as clang-format
# writes it. Each file that differs is named with how many places differ and the command that fixes it. Run by
# scripts/test.sh before the build and by CTest (check_format, with --self-test, which also shows that a badly
# formatted file fails). clang-format 14 (Debian's, scripts/setup.sh installs it) is the version the style was
# written for; CLANG_FORMAT names another binary.
#   scripts/check-format.sh [ROOT]              check the tree at ROOT (default: this checkout); exit 1 on drift
#   scripts/check-format.sh --changed [REF]     only the files changed against REF (default HEAD) and new files
#   scripts/check-format.sh --self-test [ROOT]  a clean file must pass and a badly formatted one fail, then check ROOT
set -euo pipefail

# The folders of the project's own C++; third-party and generated files (none are tracked today) are left out by path.
folders=(core render gpu ui app python tests)
sources_regex='\.(h|cpp|inc|cu|cuh)$'
excluded_regex='(^|/)(third_party|thirdparty|3rdparty|external|vendor|generated)/|^tests/data/'

here="$(cd "$(dirname "$0")/.." && pwd)"

clang_format="${CLANG_FORMAT:-}"
if [ -z "$clang_format" ]; then
  for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" >/dev/null 2>&1; then clang_format="$candidate"; break; fi
  done
fi
if [ -z "$clang_format" ] || ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "check-format: clang-format not found; scripts/setup.sh installs it (Debian package clang-format, version 14)" >&2
  exit 2
fi
version="$("$clang_format" --version | grep -oE 'version [0-9]+' | grep -oE '[0-9]+' || true)"
if [ "$version" != 14 ]; then
  echo "check-format: note: $clang_format is version ${version:-unknown}; .clang-format was written for 14, others may differ" >&2
fi

is_checkout() { [ -e "$1/.git" ]; }

# The project's C++ sources under root $1, one path (relative to the root) per line. With $2 (a git ref): only those
# changed against it, and new files.
sources() {
  local root="$1" ref="${2:-}"
  {
    if is_checkout "$root"; then
      if [ -n "$ref" ]; then
        git -C "$root" diff --name-only --diff-filter=ACMR "$ref" -- "${folders[@]}"
        git -C "$root" ls-files --others --exclude-standard -- "${folders[@]}"
      else
        git -C "$root" ls-files --cached --others --exclude-standard -- "${folders[@]}"
      fi
    else
      local existing=()
      for f in "${folders[@]}"; do [ -d "$root/$f" ] && existing+=("$f"); done
      [ ${#existing[@]} -eq 0 ] || (cd "$root" && find "${existing[@]}" -type f)
    fi
  } | grep -E "$sources_regex" | grep -vE "$excluded_regex" | sort -u | while IFS= read -r f; do
    [ -f "$root/$f" ] && printf '%s\n' "$f" # a tracked file deleted from the working tree is not there to check
  done
}

# Checks the files of `sources "$@"`; names each that drifts. Returns 1 on drift.
check() {
  local root="$1" files=() out status=0
  mapfile -t files < <(sources "$@")
  if [ ${#files[@]} -eq 0 ]; then
    echo "check-format: no C++ sources to check in $root"
    return 0
  fi
  out="$(cd "$root" && "$clang_format" --style=file --dry-run --Werror "${files[@]}" 2>&1)" || status=$?
  if [ $status -eq 0 ]; then
    echo "check-format: ${#files[@]} C++ files in $root are formatted as .clang-format says"
    return 0
  fi
  local drifting
  drifting="$(printf '%s\n' "$out" | grep -oE '^[^:]+:[0-9]+:[0-9]+: (error|warning): code should be clang-formatted' \
    | cut -d: -f1 | sort | uniq -c || true)"
  if [ -z "$drifting" ]; then # clang-format failed for another reason (an unreadable style, a file it cannot parse)
    printf '%s\n' "$out" >&2
    echo "check-format: $clang_format failed (status $status) in $root" >&2
    return 1
  fi
  local count file n=0
  while read -r count file; do
    echo "check-format: $file: $count place(s) differ from .clang-format; fix with: clang-format -i $file" >&2
    n=$((n + 1))
  done <<<"$drifting"
  echo "check-format: $n of ${#files[@]} C++ files drift from .clang-format (whitespace only: reformat, then commit)" >&2
  return 1
}

ref=""
self_test=0
while [ $# -gt 0 ]; do
  case "$1" in
    --self-test) self_test=1; shift ;;
    --changed)
      shift
      ref="HEAD"
      if [ $# -gt 0 ] && [[ "$1" != -* ]] && ! [ -d "$1" ]; then ref="$1"; shift; fi
      ;;
    -*) echo "check-format: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
root="${1:-$here}"

if [ $self_test = 1 ]; then
  # In a scratch folder, never in the tree: the project's style, a file written as clang-format writes it (must
  # pass), then a planted copy of it with a badly formatted function (must fail, and be named).
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  cp "$here/.clang-format" "$scratch/.clang-format"
  mkdir -p "$scratch/core/base"
  printf '%s\n' '// A clean file.' '#pragma once' '' 'namespace wfs {' '' 'inline int twice(int x)' '{' '    return 2 * x;' '}' '' \
    '} // namespace wfs' >"$scratch/core/base/Clean.h"
  if ! check "$scratch" >/dev/null 2>&1; then
    echo "check-format: self-test: a file formatted as .clang-format says was refused" >&2
    exit 1
  fi
  cp "$scratch/core/base/Clean.h" "$scratch/core/base/Planted.h"
  printf '%s\n' 'inline int  planted( int x ){ if(x>0) return x ; return -x;}' >>"$scratch/core/base/Planted.h"
  if report="$(check "$scratch" 2>&1)"; then
    echo "check-format: self-test: a badly formatted file was not caught" >&2
    exit 1
  fi
  if ! grep -q 'core/base/Planted.h: .*clang-format -i core/base/Planted.h' <<<"$report" || grep -q 'Clean.h' <<<"$report"; then
    printf '%s\n' "$report" >&2
    echo "check-format: self-test: the report does not name the planted file alone with its fix" >&2
    exit 1
  fi
  echo "check-format: self-test passed (a clean file passes, a badly formatted one fails and is named)"
fi

if [ -n "$ref" ] && ! is_checkout "$root"; then
  echo "check-format: --changed needs a git checkout ($root is not one)" >&2
  exit 2
fi
check "$root" "$ref"
