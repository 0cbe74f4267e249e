#pragma once
// Run-time choice of the instruction set for the hot kernels (core/simd/Kernels.h): one binary for any
// x86-64, with the kernels also built for AVX2 + FMA and chosen once from what the CPU supports.
#include <optional>

namespace wfs::simd {

enum class Level { Baseline, Avx2Fma };

// The best level this build and this CPU allow (__builtin_cpu_supports("avx2") and ("fma")).
Level supported();

// The level the kernels use: supported(), or Baseline when the environment variable WFS_SIMD is
// "baseline" (read once), or what forceLevel() set last. Never above supported().
Level active();

// Tests: run the kernels at `level` (clamped to supported()); std::nullopt goes back to the default.
void forceLevel(std::optional<Level> level);

// "avx2-fma" or "baseline", as the bench rows report it.
const char* name(Level level);

} // namespace wfs::simd
