#!/usr/bin/env bash
# The installed program, from outside the source and build trees (issue 27 item 5).
#   tst_install.sh install BUILD_DIR WORK VERSION
#     `cmake --install` into a temporary prefix (WORK/prefix), then the installed wavefront-cli's demo fit
#     (exit status, its report, the result JSON against the demo's known aberrations), both programs'
#     --version, the desktop entry's program and icon, and the manual pages when the build made them.
#   tst_install.sh package BUILD_DIR WORK VERSION
#     `cpack -G DEB`, then the package's file list (the programs and their files; no libraries, headers
#     or tests) and its Depends (the Debian packages of the libraries linked; nothing of CUDA).
# Both need the whole project built (cmake --build BUILD_DIR), as `cmake --install` and cpack do.
set -euo pipefail
mode=$1 build=$2 work=$3 version=$4
fail() { echo "tst_install ($mode): $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"

if [ "$mode" = install ]; then
  prefix=$work/prefix
  cmake --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 \
    || fail "cmake --install failed (is the whole project built?): $(cat "$work/install.log")"
  for path in bin/wavefront-cli bin/wavefront-studio share/applications/wavefront-studio.desktop \
              share/icons/hicolor/256x256/apps/wavefront-studio.png share/icons/hicolor/48x48/apps/wavefront-studio.png \
              share/wavefront-studio/schema/result.schema.json share/doc/wavefront-studio/README.md; do
    [ -f "$prefix/$path" ] || fail "the install has no $path"
  done

  # The demo, by the installed program, in a folder of its own.
  mkdir "$work/run"
  cd "$work/run"
  status=0
  "$prefix/bin/wavefront-cli" reconstruct --preset demo --json demo.json --csv demo.csv > demo.out 2> demo.err || status=$?
  [ "$status" -eq 0 ] || fail "the installed wavefront-cli's demo exited with $status: $(cat demo.err)"
  grep -Eq "converged after [0-9]+ iterations" demo.out || fail "no 'converged after N iterations' in: $(cat demo.out)"
  grep -q "Zernike coefficients (noll ordering, rms normalisation, wavelength 633.0 nm)" demo.out \
    || fail "no coefficient table in: $(cat demo.out)"
  [ -s demo.csv ] || fail "the demo wrote no demo.csv"
  # The demo preset's aberrations (Noll 4..11, waves RMS); the fit's 1-sigma is about 1e-4 wave.
  python3 - demo.json <<'PY' || fail "the demo's result JSON is not the demo's fit"
import json, sys
result = json.load(open(sys.argv[1]))
truth = {4: 0.06, 5: -0.08, 6: 0.05, 7: 0.04, 8: -0.06, 9: 0.03, 10: -0.02, 11: 0.07}
assert result["termination"] == "converged", result["termination"]
fitted = {c["index"]: c["value_waves"] for c in result["coefficients"]}
for index, want in truth.items():
    assert abs(fitted[index] - want) < 0.002, (index, fitted[index], want)
print("demo fit: Noll 4..11 within 0.002 wave of the truth")
PY

  # A CUDA build's backend module is installed, and the installed programs find it: asked for the GPU, the installed
  # CLI says why there is none in the CUDA runtime's words (or fits), never that the module is missing.
  if [ -f "$build/lib/wavefront-studio/libwfs_gpu_backend.so" ]; then
    find "$prefix" -path '*/wavefront-studio/libwfs_gpu_backend.so' | grep -q . || fail "the install has no CUDA backend module"
    status=0
    "$prefix/bin/wavefront-cli" reconstruct --preset demo --backend gpu --max-iterations 2 > gpu.out 2> gpu.err || status=$?
    ! grep -Eq "module was not found|could not be loaded" gpu.err || fail "the installed CLI did not load its module: $(cat gpu.err)"
    [ "$status" -eq 0 ] || grep -q "no GPU" gpu.err || fail "the installed CLI asked for the GPU exited with $status: $(cat gpu.err)"
  fi

  [ "$("$prefix/bin/wavefront-cli" --version)" = "wavefront-cli $version" ] || fail "wavefront-cli --version"
  [ "$("$prefix/bin/wavefront-studio" --version)" = "wavefront-studio $version" ] || fail "wavefront-studio --version"

  # The desktop entry starts an installed program and names an installed icon.
  desktop=$prefix/share/applications/wavefront-studio.desktop
  exec_program=$(sed -n 's/^Exec=\([^ ]*\).*/\1/p' "$desktop")
  icon=$(sed -n 's/^Icon=//p' "$desktop")
  [ -x "$prefix/bin/$exec_program" ] || fail "the desktop entry's Exec ($exec_program) is not in bin/"
  [ -f "$prefix/share/icons/hicolor/256x256/apps/$icon.png" ] || fail "the desktop entry's Icon ($icon) is not installed"

  # Manual pages, when this build writes them: each of the CLI's commands has its section.
  if [ -d "$build/man" ]; then
    page=$prefix/share/man/man1/wavefront-cli.1
    [ -f "$page.gz" ] && page_text=$(gzip -dc "$page.gz") || page_text=$(cat "$page")
    for section in simulate reconstruct 'bench oof' 'fasth\-bench' batch; do
      grep -qxF ".SS $section" <<< "$page_text" || fail "wavefront-cli(1) has no section $section"
    done
    ls "$prefix/share/man/man1/wavefront-studio.1"* > /dev/null || fail "no wavefront-studio(1)"
  fi
  echo "installed into $prefix; the installed wavefront-cli's demo converged"
  rm -rf "$work"
  exit 0
fi

if [ "$mode" = package ]; then
  for tool in dpkg-deb dpkg-shlibdeps cpack; do
    command -v "$tool" > /dev/null || { echo "SKIPPED: no $tool (Debian package dpkg-dev)"; exit 0; }
  done
  (cd "$build" && cpack -G DEB -B "$work" > "$work/cpack.log" 2>&1) || fail "cpack -G DEB failed: $(cat "$work/cpack.log")"
  deb=$(ls "$work"/wavefront-studio_"$version"_*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || fail "cpack made no wavefront-studio_${version}_*.deb: $(cat "$work/cpack.log")"
  [ "$(dpkg-deb -f "$deb" Package)" = wavefront-studio ] || fail "Package is not wavefront-studio"
  [ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version is not $version"
  depends=$(dpkg-deb -f "$deb" Depends)
  for package in libqt6core6 libqt6gui6 libqt6widgets6 libqcustomplot2.1-qt6 libfftw3-double3 libfftw3-single3 \
                 libcfitsio10 libtiff6 libpng16-16 libmatio11 libhdf5-103-1 libc6; do
    grep -Eq "(^|, )$package( |,|$)" <<< "$depends" || fail "Depends lacks $package: $depends"
  done
  ! grep -Eqi "cuda|nvidia|cufft|cublas" <<< "$depends" || fail "Depends names CUDA: $depends"
  files=$(dpkg-deb -c "$deb" | awk '{print $6}')
  for path in ./usr/bin/wavefront-cli ./usr/bin/wavefront-studio ./usr/share/applications/wavefront-studio.desktop \
              ./usr/share/icons/hicolor/256x256/apps/wavefront-studio.png; do
    grep -qx -- "$path" <<< "$files" || fail "the package has no $path"
  done
  ! grep -Eq '^\./usr/(include|lib/.*\.a$)|/tst_|/fuzz_' <<< "$files" || fail "the package holds build or test files: $files"
  echo "$deb: Depends: $depends"
  rm -rf "$work"
  exit 0
fi
fail "unknown mode $mode"
