// The kernels built with the project's baseline flags (x86-64: SSE2), and the dispatch between builds.
#include "simd/Kernels.h"

#include <Eigen/Core>

#define WFS_SIMD_NS baseline
#include "simd/Kernels.inc"
#undef WFS_SIMD_NS

namespace wfs::simd {

template <>
const OpticsKernels<float>& opticsKernels<float>(Level level)
{
#ifdef WFS_SIMD_AVX2_TU
    if (level == Level::Avx2Fma && supported() == Level::Avx2Fma)
        return avx2::opticsKernelsFloat();
#endif
    (void)level;
    return baseline::opticsKernelsFloat();
}

template <>
const OpticsKernels<double>& opticsKernels<double>(Level level)
{
#ifdef WFS_SIMD_AVX2_TU
    if (level == Level::Avx2Fma && supported() == Level::Avx2Fma)
        return avx2::opticsKernelsDouble();
#endif
    (void)level;
    return baseline::opticsKernelsDouble();
}

template <>
const FasthKernels<float>& fasthKernels<float>(Level level)
{
#ifdef WFS_SIMD_AVX2_TU
    if (level == Level::Avx2Fma && supported() == Level::Avx2Fma)
        return avx2::fasthKernelsFloat();
#endif
    (void)level;
    return baseline::fasthKernelsFloat();
}

template <>
const FasthKernels<double>& fasthKernels<double>(Level level)
{
#ifdef WFS_SIMD_AVX2_TU
    if (level == Level::Avx2Fma && supported() == Level::Avx2Fma)
        return avx2::fasthKernelsDouble();
#endif
    (void)level;
    return baseline::fasthKernelsDouble();
}

} // namespace wfs::simd
