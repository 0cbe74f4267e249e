#pragma once
// The hot kernels of the CPU model (core/optics/CpuModel.cpp) and of the Householder products
// (core/fasth/Householder.cpp), built twice from Kernels.inc: KernelsBaseline.cpp with the project's
// x86-64 flags and KernelsAvx2.cpp with -mavx2 -mfma. Callers take a table for simd::active() once
// (CpuModel at construction, HouseholderProduct per product) and call through its function pointers.
//
// This header is included by the AVX2 translation unit before anything else, so it must stay free of
// Eigen and of project headers: the interface is raw, column-major arrays with leading dimensions.
#include "simd/SimdLevel.h"

#include <complex>

namespace wfs::simd {

struct ObjectivePartial {
    double cost = 0.0, dFlux = 0.0, dBackground = 0.0;
    bool invalid = false;
};

template <class Real>
struct OpticsKernels {
    // out = B c with B column-major, rows x cols.
    void (*basisTimes)(const Real* basis, long rows, long cols, const Real* coefficients, Real* out);
    // out = B^T v.
    void (*basisTransposeTimes)(const Real* basis, long rows, long cols, const Real* v, Real* out);
    // field_i = amplitude_i exp(i (phase0_i + diversity_i + sx x_i + sy y_i)); buffer[index_i] = chk_i field_i.
    void (*pupilField)(long pixels, const Real* phase0, const Real* diversity, Real sx, Real sy, const double* x, const double* y,
                       const double* amplitude, const int* index, const int* checkerboard, std::complex<Real>* field,
                       std::complex<Real>* buffer);
    // Objective over buffer pixels [begin, end) (s = fieldScale b, model = intensity |s|^2 + background);
    // with `gradient` the buffer becomes dL/dS scaled for the adjoint FFT. Adds to *out.
    void (*objectiveRange)(long begin, long end, std::complex<Real>* buffer, const Real* data, const Real* weight, Real fieldScale,
                           Real intensity, Real background, bool poisson, bool gradient, ObjectivePartial* out);
    // Adjoint gather on pupil pixels: dPhase += Re(conj(g) i e), dAmplitude += Re(conj(g) e) / a, and
    // dShift[0] += sum dPhase x, dShift[1] += sum dPhase y.
    void (*adjointGather)(long pixels, const std::complex<Real>* buffer, const int* index, const int* checkerboard,
                          const std::complex<Real>* field, const double* amplitude, const double* x, const double* y, Real* dPhase,
                          Real* dAmplitude, double* dShift);
    // The twiddles of the pruned transform (optics/PrunedFft.h) on a rows x width row-major array:
    // dst[r][c] = src[r][c] t[c] (twiddleColumns) or src[r][c] t[r] (twiddleRows); with `adjoint`,
    // dst[r][c] += conj(t) src[r][c] instead (the adjoint's sum over output blocks).
    void (*twiddleColumns)(long rows, long width, const std::complex<Real>* src, const std::complex<Real>* twiddle, std::complex<Real>* dst,
                           bool adjoint);
    void (*twiddleRows)(long rows, long width, const std::complex<Real>* src, const std::complex<Real>* twiddle, std::complex<Real>* dst,
                        bool adjoint);
};

template <class Scalar>
struct FasthKernels {
    // Z (b x m, ldz) = A^T X with A rows x b (lda) and X rows x m (ldx).
    void (*productTransposed)(const Scalar* a, long lda, long rows, long b, const Scalar* x, long ldx, long m, Scalar* z, long ldz);
    // X -= A Z.
    void (*subtractProduct)(const Scalar* a, long lda, long rows, long b, const Scalar* z, long ldz, long m, Scalar* x, long ldx);
    // One reflector: p = scale v^T X (p has m entries, scratch), X -= v p. v and X have `rows` rows.
    void (*reflect)(const Scalar* v, long rows, Scalar scale, Scalar* x, long ldx, long m, Scalar* p);

    // The compact WY form of a block of b reflectors, P = H_1 ... H_b = I - V T V^T with T upper
    // triangular (b x b, ldt), V rows x b (ldv): the block's non-zero rows only.
    // G (b x b, ldg) = the upper triangle of V^T V (the strictly lower part is left as it was).
    void (*gramUpper)(const Scalar* v, long ldv, long rows, long b, Scalar* g, long ldg);
    // X -= V T V^T X (P X), or with `transposed` X -= V T^T V^T X (P^T X). X rows x m (ldx); work holds
    // at least 2 b m scalars.
    void (*applyCompact)(const Scalar* v, long ldv, long rows, long b, const Scalar* t, long ldt, bool transposed, Scalar* x, long ldx,
                         long m, Scalar* work);
    // The backward pass through one block (FastH's step 1 and step 2 fused, in blocked form). ag is
    // d x 2m (ldag): the block's output A (first m columns) and its gradient G; v points at row `top` of the
    // block's first reflector, so V has d - top rows. Writes dL/dV of the block's b reflectors into grad
    // (d x b, ldgrad: every row). With `update`, ag becomes the block's input and input gradient (P^T [A G],
    // or P [A G] when `transposed`: the block was applied as P^T). work holds at least 6 b m + 2 b b scalars.
    void (*backwardCompact)(const Scalar* v, long ldv, long d, long top, long b, const Scalar* t, long ldt, bool transposed, Scalar* ag,
                            long ldag, long m, bool update, Scalar* grad, long ldgrad, Scalar* work);
};

// The table for `level` (Avx2Fma only when supported(); callers pass active()). At Avx2Fma the FastH
// kernels come from the AVX-512 build (KernelsAvx512.cpp) where the CPU has AVX-512 F, DQ, BW and VL and
// WFS_SIMD is not "avx2": their matrix products are nearly twice as fast there, while the CPU model's
// loops (bound by FFTW and memory) have no AVX-512 build.
template <class Real>
const OpticsKernels<Real>& opticsKernels(Level level);
template <class Scalar>
const FasthKernels<Scalar>& fasthKernels(Level level);
// The instruction set fasthKernels(level) runs: "avx512", "avx2-fma" or "baseline" (the bench rows' simd).
const char* fasthKernelsName(Level level);

// The entry points of each build of Kernels.inc: non-inline functions with distinct names per build.
namespace baseline {
const OpticsKernels<float>& opticsKernelsFloat();
const OpticsKernels<double>& opticsKernelsDouble();
const FasthKernels<float>& fasthKernelsFloat();
const FasthKernels<double>& fasthKernelsDouble();
} // namespace baseline
namespace avx2 {
const OpticsKernels<float>& opticsKernelsFloat();
const OpticsKernels<double>& opticsKernelsDouble();
const FasthKernels<float>& fasthKernelsFloat();
const FasthKernels<double>& fasthKernelsDouble();
} // namespace avx2
namespace avx512 {
const FasthKernels<float>& fasthKernelsFloat();
const FasthKernels<double>& fasthKernelsDouble();
} // namespace avx512

} // namespace wfs::simd
