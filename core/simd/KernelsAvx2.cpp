// The kernels built with -mavx2 -mfma (core/CMakeLists.txt sets the flags on this file only). They run
// only when simd::supported() says the CPU has AVX2 and FMA.
//
// ODR safety. An inline function or template instantiated here is compiled for AVX2; if it had the same
// mangled name as one instantiated in a baseline file, the linker would keep one copy for both, and a
// baseline caller could end up in AVX2 code (and crash on an older CPU). So nothing here may share a name
// with the rest of the program:
// - Eigen is included under another namespace name (`#define Eigen wfs_eigen_avx2` before its first
//   inclusion in this file; Kernels.h includes no Eigen): every Eigen class, function and static of this
//   build is wfs_eigen_avx2::..., a separate copy from the baseline's Eigen::... . This file must include
//   no project header that includes Eigen.
// - Our kernels are in wfs::simd::avx2, their templates in an anonymous namespace inside it.
// - EIGEN_DONT_PARALLELIZE: this copy of Eigen does not start its own OpenMP teams (the callers split the
//   work over threads themselves; the baseline Eigen's setNbThreads does not reach this copy).
// The test `tst_model_simd_symbols` (tests/core) lists the symbols this object defines with nm and fails
// on any weak or global one outside wfs::simd::avx2 and wfs_eigen_avx2.
#include "simd/Kernels.h"

#define EIGEN_DONT_PARALLELIZE
#define Eigen wfs_eigen_avx2
#include <Eigen/Core>

#define WFS_SIMD_NS avx2
#include "simd/Kernels.inc"
#undef WFS_SIMD_NS
