// The FastH kernels built with AVX-512 (F, DQ, BW, VL) and FMA (core/CMakeLists.txt sets the flags on this
// file only). simd::fasthKernels picks them at Level::Avx2Fma when the CPU has these extensions (Kernels.h):
// Eigen's matrix products, the bulk of FastH, run nearly twice as fast with 512-bit registers. The CPU
// model's kernels are not built here (WFS_SIMD_FASTH_ONLY).
//
// The ODR rules of KernelsAvx2.cpp hold here with their own names: Eigen is renamed wfs_eigen_avx512, our
// kernels live in wfs::simd::avx512, and the test `tst_fasth_simd512_symbols` (tests/core) checks the
// object's symbols.
#include "simd/Kernels.h"

// GCC 12 reports "'__Y' may be used uninitialized" 334 times for its own _mm256_undefined_pd (`__m256d __Y = __Y;`,
// avxintrin.h, GCC bug 105593) wherever Eigen's AVX-512 transposes inline it. A false positive of the compiler's own
// header, which hid every real warning of a first build; silenced for this file only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define EIGEN_DONT_PARALLELIZE
#define Eigen wfs_eigen_avx512
#include <Eigen/Core>

#define WFS_SIMD_FASTH_ONLY
#define WFS_SIMD_NS avx512
#include "simd/Kernels.inc"
#undef WFS_SIMD_NS
