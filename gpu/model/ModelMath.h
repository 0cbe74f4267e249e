#pragma once
// The per-sample mathematics of the GPU model, callable from the kernels and from host code. The
// kernels in ModelKernels.cuh are loops and reductions around these functions; the host emulation in
// tests/gpu/tst_gpumodel.cpp runs the same functions with FFTW plans of the same batched layout in
// place of cuFFT, so that the layout, the formulas and the result block are checked against the CPU
// backend on machines without a device. Formulas and their order of operations follow
// core/optics/CpuModel.cpp.
#include "gpu/model/ModelLayout.h"

#include <cmath>

namespace wfs::gpu::math {

// Pointers to the resident arrays (device memory in the kernels, host memory in the emulation).
template <typename Real>
struct Arrays {
    const Real* basis = nullptr; // terms x pixels
    const Real* x = nullptr;     // per pupil pixel
    const Real* y = nullptr;
    const Real* transmission = nullptr;
    const Real* diversity = nullptr;   // planes x pixels
    const Real* defocusUnit = nullptr; // planes x pixels (ModelDims::defocusTerms)
    const Real* transfer = nullptr;    // N x N (ModelDims::blur)
    const int* bandMap = nullptr;      // band rows x N: pupil pixel or -1
    const int* pupilIndex = nullptr;   // per pupil pixel: row * N + col
    const Real* data = nullptr;        // grid layout
    const Real* weights = nullptr;     // grid layout; null = every weight 1
    Real* phase = nullptr;             // per pupil pixel, written by fillSample: basis . c
    Real* amplitude = nullptr;         // per pupil pixel, written by fillSample
    // The vectorial model (ModelDims::fields), complex values as (re, im) pairs: core's per-pixel matrix factors
    // (fields x pixels), depth rate and coverslip phase in float64, and the factors at the block's depth (written by
    // factorSample, once per evaluation; ModelDims::factorSets() x fields x pixels).
    const double* vectorialMatrix = nullptr;
    const double* depthRate = nullptr;
    const double* coverslipPhase = nullptr;
    Real* factor = nullptr;
};

WFS_HOST_DEVICE inline void sinCos(double v, double* s, double* c)
{
#if defined(__CUDA_ARCH__)
    sincos(v, s, c);
#else
    *s = std::sin(v);
    *c = std::cos(v);
#endif
}

WFS_HOST_DEVICE inline void sinCos(float v, float* s, float* c)
{
#if defined(__CUDA_ARCH__)
    sincosf(v, s, c);
#else
    *s = std::sin(v);
    *c = std::cos(v);
#endif
}

WFS_HOST_DEVICE inline double expOf(double v)
{
#if defined(__CUDA_ARCH__)
    return exp(v);
#else
    return std::exp(v);
#endif
}

WFS_HOST_DEVICE inline float expOf(float v)
{
#if defined(__CUDA_ARCH__)
    return expf(v);
#else
    return std::exp(v);
#endif
}

WFS_HOST_DEVICE inline double logOf(double v)
{
#if defined(__CUDA_ARCH__)
    return log(v);
#else
    return std::log(v);
#endif
}

// Half the Poisson deviance, as poissonDeviance() in core/optics/ProblemSpec.h.
WFS_HOST_DEVICE inline double poissonDeviance(double d, double m)
{
    return d > 0.0 ? m - d + d * (logOf(d) - logOf(m)) : m - d;
}

// Pupil pixel p's aberration phase (basis . c, the same for every plane) and amplitude.
template <typename Real>
WFS_HOST_DEVICE inline void pupilPixel(const ModelDims& d, const double* block, const Real* coefficients, const Arrays<Real>& a, int p,
                                       Real* phase0, Real* amplitude)
{
    if (d.hostPupil) {
        *phase0 = Real(block[d.pupilPhase(p)]);
        *amplitude = Real(block[d.pupilAmplitude(p)]);
        return;
    }
    Real sum = Real(0);
    for (int t = 0; t < d.terms; ++t)
        sum += a.basis[std::size_t(t) * std::size_t(d.pixels) + std::size_t(p)] * coefficients[t];
    Real profile = Real(1);
    if (d.gaussian) {
        const Real dx = a.x[p] - Real(block[d.centreX()]), dy = a.y[p] - Real(block[d.centreY()]);
        const Real sigma = Real(block[d.sigma()]);
        profile = expOf(-(dx * dx + dy * dy) / (Real(2) * sigma * sigma));
    }
    *phase0 = sum;
    *amplitude = Real(block[d.amplitude()]) * a.transmission[p] * profile;
}

// Plane k's phase at pupil pixel p: aberration + diversity (+ its defocus change) + the plane's tip/tilt.
template <typename Real>
WFS_HOST_DEVICE inline Real planePhase(const ModelDims& d, const double* block, const Arrays<Real>& a, int p, int k, Real phase0)
{
    const std::size_t i = std::size_t(k) * std::size_t(d.pixels) + std::size_t(p);
    Real diversity = a.diversity[i];
    if (d.defocusTerms)
        diversity += Real(block[d.defocusDelta(k)]) * a.defocusUnit[i];
    return phase0 + diversity + Real(block[d.shiftX(k)]) * a.x[p] + Real(block[d.shiftY(k)]) * a.y[p];
}

// ---- the vectorial model (ModelDims::fields) ----

// Where factor f of set `set` (a wavelength; ModelDims::factorSets) at pupil pixel p starts in Arrays::factor.
WFS_HOST_DEVICE inline std::size_t factorIndex(const ModelDims& d, int set, int f, int p)
{
    return 2 * ((std::size_t(set) * std::size_t(d.fields) + std::size_t(f)) * std::size_t(d.pixels) + std::size_t(p));
}

// That factor at the block's emitter depth: matrix_f exp(i s (depth rate + coverslip phase)) at the set's phase
// scale s, in float64 and then rounded, as VectorialPupil::depthFactor and VectorialFields::prepare compute it. The
// exponent is complex above the sample's critical angle: exp(i s z) = exp(-s Im z) e^{i s Re z}.
template <typename Real>
WFS_HOST_DEVICE inline void factorSample(const ModelDims& d, const double* block, const Arrays<Real>& a, int set, int f, int p)
{
    const double depth = block[d.emitterDepth()], scale = d.factorPhaseScale(set);
    const double zr = depth * a.depthRate[2 * p] + a.coverslipPhase[2 * p];
    const double zi = depth * a.depthRate[2 * p + 1] + a.coverslipPhase[2 * p + 1];
    double s, c;
    sinCos(scale * zr, &s, &c);
    const double decay = expOf(-scale * zi);
    const double er = decay * c, ei = decay * s;
    const double* m = a.vectorialMatrix + 2 * (std::size_t(f) * std::size_t(d.pixels) + std::size_t(p));
    const std::size_t i = factorIndex(d, set, f, p);
    a.factor[i] = Real(m[0] * er - m[1] * ei);
    a.factor[i + 1] = Real(m[0] * ei + m[1] * er);
}

// The vectorial fields of pupil pixel p (checkerboard-signed pupil field e) into out[f * stride]: e times each
// factor of the set (VectorialFields::scatter's product, in the same order). Field f of a plane lies `stride`
// elements after field f - 1 in the model's and in a wavelength's buffer.
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void scatterFields(const ModelDims& d, const Arrays<Real>& a, int set, int p, Complex e, Complex* out,
                                          std::size_t stride)
{
    for (int f = 0; f < d.fields; ++f) {
        const Real* v = a.factor + factorIndex(d, set, f, p);
        out[std::size_t(f) * stride] = Complex{e.x * v[0] - e.y * v[1], e.x * v[1] + e.y * v[0]};
    }
}

// Their adjoint: h = sum_f conj(factor_f) sign dL/dE_f (VectorialFields::gather), with dL/dE_f at in[f * stride].
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void gatherFields(const ModelDims& d, const Arrays<Real>& a, int set, int p, Real sign, const Complex* in,
                                         std::size_t stride, Real* hr, Real* hi)
{
    Real sumR = Real(0), sumI = Real(0);
    for (int f = 0; f < d.fields; ++f) {
        const Complex g = in[std::size_t(f) * stride];
        const Real sr = sign * g.x, si = sign * g.y;
        const Real* v = a.factor + factorIndex(d, set, f, p);
        sumR += v[0] * sr + v[1] * si; // conj(v) g
        sumI += v[0] * si - v[1] * sr;
    }
    *hr = sumR;
    *hi = sumI;
}

// Grid sample (row, col) of every plane (and field) before the inverse FFTs: the pupil field a e^{i phase} times
// the checkerboard (-1)^(row + col) that stands in for fftshift, or 0 off the pupil. Pupil samples
// also store their phase and amplitude for the adjoint.
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void fillSample(const ModelDims& d, const double* block, const Real* coefficients, const Arrays<Real>& a, int row,
                                       int col, Complex* field)
{
    const int band = row - d.rowBegin;
    const int p = band >= 0 && band < d.bandRows ? a.bandMap[std::size_t(band) * std::size_t(d.n) + std::size_t(col)] : -1;
    if (p < 0) {
        for (int f = 0; f < d.fieldCount(); ++f)
            for (int k = 0; k < d.planes; ++k)
                field[d.fieldElement(f, k, row, col)] = Complex{Real(0), Real(0)};
        return;
    }
    Real phase0, amplitude;
    pupilPixel(d, block, coefficients, a, p, &phase0, &amplitude);
    a.phase[p] = phase0;
    a.amplitude[p] = amplitude;
    const Real signedAmplitude = ((row + col) & 1) ? -amplitude : amplitude;
    for (int k = 0; k < d.planes; ++k) {
        Real s, c;
        sinCos(planePhase(d, block, a, p, k, phase0), &s, &c);
        const Complex e{signedAmplitude * c, signedAmplitude * s};
        if (!d.vectorial()) {
            field[d.element(k, row, col)] = e;
            continue;
        }
        scatterFields(d, a, 0, p, e, field + d.fieldElement(0, k, row, col), std::size_t(d.planes) * std::size_t(d.n));
    }
}

// The adjoint pupil field of plane k at pupil pixel p (grid row, col) after the forward FFTs: the scalar model's
// checkerboard-signed dL/dE, or the vectorial model's h (gatherFields).
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void adjointField(const ModelDims& d, const Arrays<Real>& a, int p, int k, int row, int col, const Complex* field,
                                         Real* gr, Real* gi)
{
    const Real sign = ((row + col) & 1) ? Real(-1) : Real(1);
    if (d.vectorial()) {
        gatherFields(d, a, 0, p, sign, field + d.fieldElement(0, k, row, col), std::size_t(d.planes) * std::size_t(d.n), gr, gi);
        return;
    }
    const Complex g = field[d.element(k, row, col)];
    *gr = sign * g.x;
    *gi = sign * g.y;
}

// Plane k's share of dL/d(depth) at pupil pixel p, Re(i s rate E0 conj(h)) at phase scale s
// (VectorialFields::depthDerivative), from Im(conj(E0) h) (adjointSample's dL/dphase at s = 1) and
// q = Re(conj(E0) h): s (Re(rate) Im(conj(E0) h) - Im(rate) q).
template <typename Real>
WFS_HOST_DEVICE inline double depthTerm(const Arrays<Real>& a, int p, Real dPhase, Real q, double scale = 1.0)
{
    return scale * (a.depthRate[2 * p] * double(dPhase) - a.depthRate[2 * p + 1] * double(q));
}

// The objective of plane k at grid element e whose |S|^2 (blurred, with ModelDims::blur) is `power`. Adds to
// sums: [0] the cost, [1] dL/dModel power (-> flux), [2] dL/dModel (-> background), [3] 1 where the Poisson
// model is not positive under data; with the gradient, returns dL/dModel (else 0).
template <typename Real>
WFS_HOST_DEVICE inline Real objectiveTerms(const ModelDims& d, const double* block, const Arrays<Real>& a, int k, std::size_t e,
                                           bool gradient, Real power, double* sums)
{
    const Real intensity = Real(block[d.intensity(k)]);
    const Real background = Real(block[d.background(k)]);
    const Real model = intensity * power + background;
    const Real w = a.weights ? a.weights[e] : Real(1);
    Real dModel = Real(0); // dL/dModel
    if (w != Real(0)) {
        const Real observed = a.data[e];
        if (d.objective == DeviceObjective::Poisson) {
            if (model <= Real(0)) {
                sums[3] += observed > Real(0) ? 1.0 : 0.0;
            } else {
                sums[0] += double(w) * poissonDeviance(double(observed), double(model));
                dModel = w * (observed > Real(0) ? Real(1) - observed / model : Real(1));
            }
        } else {
            const Real r = observed - model;
            sums[0] += double(w) * double(r) * double(r);
            dModel = Real(-2) * w * r;
        }
    }
    if (!gradient)
        return Real(0);
    sums[1] += double(dModel) * double(power);
    sums[2] += double(dModel);
    return dModel;
}

// The objective at grid sample (row, col) of plane k, after the inverse FFTs (the buffer holds N^2 S, per field);
// sums as objectiveTerms. |S|^2 is summed over the vectorial model's fields. With the gradient, the buffer there
// becomes dL/dS (scaled for the forward FFTs), each field's.
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void objectiveSample(const ModelDims& d, const double* block, const Arrays<Real>& a, int k, int row, int col,
                                            bool gradient, Complex* field, double* sums)
{
    const Real fieldScale = Real(1.0 / (double(d.n) * double(d.n))); // buffer -> S
    Real power = Real(0);
    for (int f = 0; f < d.fieldCount(); ++f) {
        const Complex b = field[d.fieldElement(f, k, row, col)];
        const Real sr = b.x * fieldScale, si = b.y * fieldScale;
        power += sr * sr + si * si;
    }
    const Real dModel = objectiveTerms(d, block, a, k, d.element(k, row, col), gradient, power, sums);
    if (gradient) {
        // dL/dS = 2 dL/d|S|^2 S, with one more fieldScale: the adjoint of (1/N^2) B is (1/N^2) F.
        const Real g = Real(2) * dModel * Real(block[d.intensity(k)]) * fieldScale;
        for (int f = 0; f < d.fieldCount(); ++f) {
            Complex& b = field[d.fieldElement(f, k, row, col)];
            b = Complex{b.x * fieldScale * g, b.y * fieldScale * g};
        }
    }
}

// ---- the detector blur (ModelDims::blur): the intensity buffer between the field and the objective ----

// Plane k, row and column of the intensity buffer's element e ((row K + k) N + col).
WFS_HOST_DEVICE inline void gridPlace(const ModelDims& d, std::size_t e, int* k, int* row, int* col)
{
    *row = int(e / (std::size_t(d.n) * std::size_t(d.planes)));
    *k = int((e / std::size_t(d.n)) % std::size_t(d.planes));
    *col = int(e % std::size_t(d.n));
}

// |S|^2 at the intensity buffer's element e (the field buffer holds N^2 S), summed over the fields.
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline Complex powerSample(const ModelDims& d, const Complex* field, std::size_t e)
{
    const Real fieldScale = Real(1.0 / (double(d.n) * double(d.n)));
    int k, row, col;
    gridPlace(d, e, &k, &row, &col);
    Real power = Real(0);
    for (int f = 0; f < d.fieldCount(); ++f) {
        const Complex b = field[d.fieldElement(f, k, row, col)];
        const Real sr = b.x * fieldScale, si = b.y * fieldScale;
        power += sr * sr + si * si;
    }
    return Complex{power, Real(0)};
}

// The intensity's spectrum at element e (grid row, col) times H / N^2 (the unnormalised inverse FFT's factor).
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void blurSample(const ModelDims& d, const Arrays<Real>& a, int row, int col, Complex* intensity, std::size_t e)
{
    const Real h = a.transfer[std::size_t(row) * std::size_t(d.n) + std::size_t(col)] * Real(1.0 / (double(d.n) * double(d.n)));
    intensity[e] = Complex{intensity[e].x * h, intensity[e].y * h};
}

// The objective at element e on the blurred intensity; with the gradient, the intensity buffer there becomes
// dL/d(blurred intensity), ready for the blur's way back.
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void blurredObjectiveSample(const ModelDims& d, const double* block, const Arrays<Real>& a, int k, std::size_t e,
                                                   bool gradient, Complex* intensity, double* sums)
{
    const Real dModel = objectiveTerms(d, block, a, k, e, gradient, intensity[e].x, sums);
    if (gradient)
        intensity[e] = Complex{dModel * Real(block[d.intensity(k)]), Real(0)};
}

// dL/dS of every field at the intensity buffer's element e from dL/d|S|^2 there (after the blur's way back),
// scaled for the forward FFTs as objectiveSample's.
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void scatterSample(const ModelDims& d, const Complex* intensity, std::size_t e, Complex* field)
{
    const Real fieldScale = Real(1.0 / (double(d.n) * double(d.n)));
    const Real g = Real(2) * intensity[e].x * fieldScale;
    int k, row, col;
    gridPlace(d, e, &k, &row, &col);
    for (int f = 0; f < d.fieldCount(); ++f) {
        Complex& b = field[d.fieldElement(f, k, row, col)];
        b = Complex{b.x * fieldScale * g, b.y * fieldScale * g};
    }
}

// ---- a spectrum (ModelDims::channels): each wavelength's field on its own grid, summed as intensities ----

// Pupil pixel p of plane k in channel ch, whose grid element is `index` (row N' + column): the field at the
// channel's wavelength (the whole plane phase times phaseScale), checkerboard-signed by its place in that grid.
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline Complex channelFieldSample(const ModelDims& d, const ChannelDims& ch, const double* block, const Arrays<Real>& a,
                                                  int p, int k, int index)
{
    Real phase0, amplitude;
    pupilPixel(d, block, static_cast<const Real*>(nullptr), a, p, &phase0, &amplitude); // hostPupil: from the block
    Real s, c;
    sinCos(Real(ch.phaseScale) * planePhase(d, block, a, p, k, phase0), &s, &c);
    const Real signedAmplitude = ((index / ch.n + index % ch.n) & 1) ? -amplitude : amplitude;
    return Complex{signedAmplitude * c, signedAmplitude * s};
}

// Pupil pixel p of plane k into channel `channel`'s field at its grid element `index` (row N' + column): the
// scalar field, or each vectorial field (slice f K + k, K N' elements after field f - 1).
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void channelFillSample(const ModelDims& d, int channel, const double* block, const Arrays<Real>& a, int p, int k,
                                              int index, Complex* channelField)
{
    const ChannelDims& ch = d.channel[channel];
    const Complex e = channelFieldSample<Real, Complex>(d, ch, block, a, p, k, index);
    Complex* first = channelField + ch.element(d.slices(), k, index / ch.n, index % ch.n);
    if (d.vectorial())
        scatterFields(d, a, channel, p, e, first, std::size_t(d.planes) * std::size_t(ch.n));
    else
        *first = e;
}

// Model element (plane k, row, col): the intensity buffer there plus channel ch's share powerScale |field|^2 (summed
// over the vectorial fields) when the channel's grid covers the sample (`first`: the buffer's old value is not read).
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline Complex channelPowerSample(const ModelDims& d, const ChannelDims& ch, const Complex* channelField,
                                                  const Complex* intensity, int k, int row, int col, bool first)
{
    Real sum = first ? Real(0) : intensity[d.element(k, row, col)].x;
    const int r = row + ch.shift, c = col + ch.shift;
    if (r >= 0 && r < ch.n && c >= 0 && c < ch.n) {
        for (int f = 0; f < d.fieldCount(); ++f) {
            const Complex v = channelField[ch.element(d.slices(), f * d.planes + k, r, c)];
            sum += Real(ch.powerScale) * (v.x * v.x + v.y * v.y);
        }
    }
    return Complex{sum, Real(0)};
}

// Channel element (slice s = field f K + plane k, row r, column c): dL/d(buffer) = 2 powerScale dL/d|S|^2 buffer
// where the model grid holds the sample, 0 where it does not (such samples are not seen).
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void channelScatterSample(const ModelDims& d, const ChannelDims& ch, const Complex* intensity, int slice, int r,
                                                 int c, Complex* channelField)
{
    const int row = r - ch.shift, col = c - ch.shift;
    Complex& v = channelField[ch.element(d.slices(), slice, r, c)];
    if (row < 0 || row >= d.n || col < 0 || col >= d.n) {
        v = Complex{Real(0), Real(0)};
        return;
    }
    const Real f = Real(2.0 * ch.powerScale) * intensity[d.element(slice % d.planes, row, col)].x;
    v = Complex{v.x * f, v.y * f};
}

// Pupil pixel p of plane k in channel `channel` after the forward FFT (the channel buffer holds dL/dE, per vectorial
// field): dL/dphase (the model's phase, so times phaseScale), dL/da and (vectorial) the share of dL/d(depth).
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void channelAdjointSample(const ModelDims& d, int channel, const double* block, const Arrays<Real>& a, int p, int k,
                                                 int index, const Complex* channelField, Real* dPhase, Real* dAmplitude, double* dDepth)
{
    const ChannelDims& ch = d.channel[channel];
    const int row = index / ch.n, col = index % ch.n;
    const Real sign = ((row + col) & 1) ? Real(-1) : Real(1);
    const std::size_t first = ch.element(d.slices(), k, row, col);
    Real gr, gi;
    if (d.vectorial()) {
        gatherFields(d, a, channel, p, sign, channelField + first, std::size_t(d.planes) * std::size_t(ch.n), &gr, &gi);
    } else {
        gr = sign * channelField[first].x;
        gi = sign * channelField[first].y;
    }
    Real phase0, amplitude;
    pupilPixel(d, block, static_cast<const Real*>(nullptr), a, p, &phase0, &amplitude);
    Real s, c;
    sinCos(Real(ch.phaseScale) * planePhase(d, block, a, p, k, phase0), &s, &c);
    const Real er = amplitude * c, ei = amplitude * s;
    *dPhase = Real(ch.phaseScale) * (gi * er - gr * ei);
    *dAmplitude = gr * c + gi * s;
    *dDepth = d.vectorial() ? depthTerm(a, p, gi * er - gr * ei, gr * er + gi * ei, ch.phaseScale) : 0.0;
}

// The model image of plane k from the blurred intensity (ModelDims::blur).
template <typename Complex>
WFS_HOST_DEVICE inline double blurredIntensitySample(const ModelDims& d, const double* block, int k, const Complex& intensity)
{
    return block[d.intensity(k)] * double(intensity.x) + block[d.background(k)];
}

// The model image of plane k at (row, col) from the field buffer (N^2 S per field) after the inverse FFTs.
template <typename Complex>
WFS_HOST_DEVICE inline double intensitySample(const ModelDims& d, const double* block, int k, const Complex* field, int row, int col)
{
    const double norm = 1.0 / (double(d.n) * double(d.n));
    double power = 0.0;
    for (int f = 0; f < d.fieldCount(); ++f) {
        const Complex b = field[d.fieldElement(f, k, row, col)];
        power += double(b.x * b.x + b.y * b.y); // each field's in the model's precision, as on the CPU
    }
    return block[d.intensity(k)] * norm * norm * power + block[d.background(k)];
}

// Pupil pixel p of plane k after the forward FFTs (the buffer holds dL/dE, checkerboard-signed; the vectorial
// model's fields are summed into one adjoint pupil field first, adjointField): dL/dphase = Re(conj(g) i e), q = a dL/da = Re(conj(g) e) and dL/da = Re(conj(g) e^{i phase}).
template <typename Real, typename Complex>
WFS_HOST_DEVICE inline void adjointSample(const ModelDims& d, const double* block, const Arrays<Real>& a, int p, int k,
                                          const Complex* field, Real* dPhase, Real* q, Real* dAmplitude)
{
    const int index = a.pupilIndex[p];
    Real gr, gi;
    adjointField(d, a, p, k, index / d.n, index % d.n, field, &gr, &gi);
    Real s, c;
    sinCos(planePhase(d, block, a, p, k, a.phase[p]), &s, &c);
    const Real er = a.amplitude[p] * c, ei = a.amplitude[p] * s;
    *dPhase = gi * er - gr * ei;
    *q = gr * er + gi * ei;
    *dAmplitude = gr * c + gi * s;
}

// Plane k's defocus row at pupil pixel p: dL/dphase_k(p) unit_k(p) (ModelDims::defocusGradient).
template <typename Real>
WFS_HOST_DEVICE inline double defocusTerm(const ModelDims& d, const Arrays<Real>& a, int p, int k, Real dPhase)
{
    return double(dPhase) * double(a.defocusUnit[std::size_t(k) * std::size_t(d.pixels) + std::size_t(p)]);
}

// The four illumination sums' terms at pupil pixel p from q = sum_k a dL/da: q, q dx, q dy, q |d|^2
// (ModelDims::illuminationSum).
template <typename Real>
WFS_HOST_DEVICE inline void illuminationTerms(const ModelDims& d, const double* block, const Arrays<Real>& a, int p, double q, double* out)
{
    const double dx = double(a.x[p]) - block[d.centreX()], dy = double(a.y[p]) - block[d.centreY()];
    out[0] = q;
    out[1] = q * dx;
    out[2] = q * dy;
    out[3] = q * (dx * dx + dy * dy);
}

} // namespace wfs::gpu::math
