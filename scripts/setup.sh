#!/usr/bin/env bash
# Installs the Debian packages Wavefront Studio needs, only those that are missing.
# Idempotent and silent when everything is present.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ccache
  qt6-base-dev qt6-base-dev-tools libqt6opengl6-dev qt6-svg-dev
  libqcustomplot-dev
  libeigen3-dev
  libfftw3-dev
  libceres-dev
  libcfitsio-dev
  libtiff-dev
  libpng-dev
  xvfb xauth fonts-dejavu-core
  # Tests: clang (libFuzzer) for the fuzz_* runs; astropy and numpy read the exports back
  # independently of the program's own readers (tst_exportreaders).
  clang python3 python3-numpy python3-astropy fitsverify python3-jsonschema parallel
  # The Python module (python/, pybind11) and its pytest suite; Dask's distributed for the whole field's task recipe
  # (docs/python.md, python/tests/test_field.py).
  pybind11-dev python3-pybind11 python3-dev python3-pytest python3-distributed
  # PSF model exports for other programs: SMAP/DECODE's spline calibration (.mat, libmatio) and the HDF5 model
  # file (libhdf5); the tests read them back with scipy.io.loadmat, h5py and tifffile (OME / ImageJ voxel size).
  libmatio-dev libhdf5-dev python3-scipy python3-h5py python3-tifffile python3-matplotlib
  # The C++ style check (scripts/check-format.sh, CTest check_format): clang-format 14, the version .clang-format
  # was written for.
  clang-format
  # The Debian package (cpack -G DEB computes its Depends with dpkg-shlibdeps) and its test, tst_package.
  dpkg-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: apt-get is not available; install these packages by hand: ${missing[*]}" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
  fi
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
