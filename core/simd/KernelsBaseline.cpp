// The kernels built with the project's baseline flags (x86-64: SSE2), and the dispatch between builds.
#include "simd/Kernels.h"

#include <Eigen/Core>

#define WFS_SIMD_NS baseline
#include "simd/Kernels.inc"
#undef WFS_SIMD_NS

#include <cstdlib>
#include <cstring>

namespace wfs::simd {

namespace {

// Whether the FastH kernels at Avx2Fma come from the AVX-512 build (see Kernels.h); decided once.
bool fasthAvx512()
{
#ifdef WFS_SIMD_AVX512_TU
    static const bool use = [] {
        if (supported() != Level::Avx2Fma)
            return false;
        const char* env = std::getenv("WFS_SIMD");
        if (env && std::strcmp(env, "avx2") == 0)
            return false;
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512vl");
    }();
    return use;
#else
    return false;
#endif
}

bool fasthAvx2(Level level)
{
#ifdef WFS_SIMD_AVX2_TU
    return level == Level::Avx2Fma && supported() == Level::Avx2Fma;
#else
    (void)level;
    return false;
#endif
}

} // namespace

const char* fasthKernelsName(Level level)
{
    if (!fasthAvx2(level))
        return name(Level::Baseline);
    return fasthAvx512() ? "avx512" : name(Level::Avx2Fma);
}

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
    if (fasthAvx2(level)) {
#ifdef WFS_SIMD_AVX512_TU
        if (fasthAvx512())
            return avx512::fasthKernelsFloat();
#endif
        return avx2::fasthKernelsFloat();
    }
#endif
    return baseline::fasthKernelsFloat();
}

template <>
const FasthKernels<double>& fasthKernels<double>(Level level)
{
#ifdef WFS_SIMD_AVX2_TU
    if (fasthAvx2(level)) {
#ifdef WFS_SIMD_AVX512_TU
        if (fasthAvx512())
            return avx512::fasthKernelsDouble();
#endif
        return avx2::fasthKernelsDouble();
    }
#endif
    return baseline::fasthKernelsDouble();
}

} // namespace wfs::simd
