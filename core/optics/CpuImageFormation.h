#pragma once
// The CPU model's general image formation (core/optics/CpuModel.cpp uses it when the plain path cannot):
// a spectrum of wavelengths, each on its own FFT size so that pixel and pupil samples stay exact
// (Problem::spectrum), summed into one intensity, then blurred by the detector's transfer function
// (Problem::transferFunction), then the objective; and the exact adjoint of all of it back to the pupil.
// With the vectorial model each wavelength carries its fields (optics/Vectorial.h), one transform each.
// Included by CpuModel.cpp only (a template on the precision, like the model).
#include "optics/Fftw.h"
#include "optics/Problem.h"
#include "optics/Vectorial.h"
#include "simd/Kernels.h"

#include <Eigen/Core>

#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <vector>

namespace wfs::detail {

// The objective of one plane whose model is scale x power + background, power a pixel's intensity before the
// flux (any layout shared by power, data and weight): the cost, the flux and background derivatives, and (with
// dPower) dL/d(power) per pixel. Infinite where the Poisson model is not positive under data.
template <class Real>
double intensityObjective(const std::vector<double>& power, double scale, double background, const std::vector<Real>& data,
                          const std::vector<Real>& weight, bool poisson, double* dFlux, double* dBackground, double* dPower)
{
    double cost = 0.0;
    for (size_t i = 0; i < power.size(); ++i) {
        const double w = weight[i], d = data[i];
        const double model = scale * power[i] + background;
        double dModel = 0.0;
        if (w != 0.0) {
            if (poisson) {
                if (model <= 0.0) {
                    if (d > 0.0)
                        return std::numeric_limits<double>::infinity();
                } else {
                    cost += w * poissonDeviance(d, model);
                    dModel = w * (d > 0.0 ? 1.0 - d / model : 1.0);
                }
            } else {
                cost += w * (d - model) * (d - model);
                dModel = -2.0 * w * (d - model);
            }
        }
        *dFlux += dModel * power[i];
        *dBackground += dModel;
        if (dPower)
            dPower[i] = dModel * scale;
    }
    return cost;
}

template <class Real>
class CpuImageFormation {
public:
    using Complex = std::complex<Real>;
    using Vector = Eigen::Matrix<Real, Eigen::Dynamic, 1>;

    CpuImageFormation(const Problem& problem, const simd::OpticsKernels<Real>& kernels, int threads, bool measure)
        : m_problem(problem)
        , m_kernels(kernels)
        , m_n(problem.gridSize())
    {
        const size_t area = size_t(m_n) * size_t(m_n);
        m_image.resize(area);
        m_intensity.resize(area);
        auto plan = [&](int n, fftw::Direction direction) {
            fftw::PlanKey key;
            key.n = n;
            key.axes = fftw::Axes::Full2d;
            key.direction = direction;
            key.threads = threads;
            key.measure = measure;
            return fftw::plan<Real>(key);
        };
        if (!problem.transferFunction().empty()) {
            m_imageForward = plan(m_n, fftw::Direction::Forward);
            m_imageBackward = plan(m_n, fftw::Direction::Backward);
        }
        // One channel per wavelength; one wavelength (with a blurring detector) is a channel on the model's grid.
        std::vector<Problem::SpectralChannel> channels = problem.spectrum();
        if (channels.empty())
            channels.push_back({m_n, problem.spec().wavelength, 1.0, 1.0, problem.pupilIndex()});
        for (const Problem::SpectralChannel& c : channels) {
            auto owned = std::make_unique<Channel>();
            Channel& channel = *owned;
            channel.n = c.grid;
            channel.shift = (c.grid - m_n) / 2;
            channel.phaseScale = Real(c.phaseScale);
            // Parseval: the field's power on N' samples is (N / N')^2 of that on N; (N'/N)^2 keeps the flux.
            channel.powerScale = c.weight * (double(c.grid) / m_n) * (double(c.grid) / m_n) / std::pow(double(c.grid), 4);
            channel.index = c.index;
            channel.buffer.resize(size_t(c.grid) * size_t(c.grid));
            channel.field.resize(problem.pupilIndex().size());
            if (const VectorialPupil* vectorial = problem.vectorial()) {
                channel.vectorial = std::make_unique<VectorialFields<Real>>(*vectorial, c.phaseScale);
                for (int f = 0; f < vectorial->fieldCount(); ++f)
                    channel.fieldBuffers.push_back(std::make_unique<fftw::ComplexBuffer<Real>>(channel.buffer.size()));
            }
            channel.backward = plan(c.grid, fftw::Direction::Backward);
            channel.forward = plan(c.grid, fftw::Direction::Forward);
            m_channels.push_back(std::move(owned));
        }
        const Eigen::Index pixels = problem.pupilPixelCount();
        m_phase.resize(size_t(pixels));
        m_diversity.resize(size_t(pixels));
        m_gatherPhase.resize(pixels);
        m_dPower.resize(area);
    }

    // The vectorial fields' factors at the emitter's depth (metres), once per evaluation.
    void prepare(double depth)
    {
        for (const auto& owned : m_channels)
            if (owned->vectorial)
                owned->vectorial->prepare(depth);
    }

    // Each channel's far field of the pupil (amplitude, phase0 + diversity + tip/tilt, scaled to its wavelength).
    void synthesise(const Vector& phase0, const std::vector<Real>& diversity, Real sx, Real sy, const std::vector<double>& amplitude)
    {
        const Problem& pr = m_problem;
        for (const auto& owned : m_channels) {
            Channel& c = *owned;
            for (size_t i = 0; i < m_phase.size(); ++i) {
                m_phase[i] = c.phaseScale * phase0[Eigen::Index(i)];
                m_diversity[i] = c.phaseScale * diversity[i];
            }
            std::fill(c.buffer.data(), c.buffer.data() + c.buffer.size(), Complex(0, 0));
            m_kernels.pupilField(long(m_phase.size()), m_phase.data(), m_diversity.data(), c.phaseScale * sx, c.phaseScale * sy,
                                 pr.pupilX().data(), pr.pupilY().data(), amplitude.data(), c.index.data(), pr.checkerboard().data(),
                                 c.field.data(), c.buffer.data());
            if (!c.vectorial) {
                fftw::Traits<Real>::execute(c.backward, c.buffer.raw(), c.buffer.raw());
                continue;
            }
            for (int f = 0; f < c.vectorial->fieldCount(); ++f) {
                fftw::ComplexBuffer<Real>& b = *c.fieldBuffers[size_t(f)];
                std::fill(b.data(), b.data() + b.size(), Complex(0, 0));
                c.vectorial->scatter(f, c.field.data(), c.index.data(), pr.checkerboard().data(), b.data());
                fftw::Traits<Real>::execute(c.backward, b.raw(), b.raw());
            }
        }
        formIntensity();
    }

    // The blurred, spectrum-summed |S|^2 on the model's N x N grid (data layout as the plain path's buffer).
    const std::vector<double>& intensity() const { return m_intensity; }

    // Plane k's objective from intensity(); with `grad`, also the flux and background derivatives, and each
    // channel's buffer becomes dL/dS ready for adjoint().
    double objective(double intensityScale, double background, const std::vector<Real>& data, const std::vector<Real>& weight, bool poisson,
                     double* dFlux, double* dBackground, bool gradient)
    {
        const double cost =
            intensityObjective(m_intensity, intensityScale, background, data, weight, poisson, dFlux, dBackground, m_dPower.data());
        if (!std::isfinite(cost))
            return cost;
        Complex* f = m_image.data();
        for (size_t i = 0; i < m_intensity.size(); ++i)
            f[i] = Complex(Real(m_dPower[i]), 0); // dL/d(blurred intensity)
        if (gradient)
            scatterToChannels();
        return cost;
    }

    // Back to the pupil: each channel's adjoint FFT and gather; dL/dphase (scaled back from each wavelength)
    // into dPhase, dL/damplitude into dAmplitude, the tip/tilt derivatives into dShift, the vectorial model's depth
    // derivative into *dDepth.
    void adjoint(const std::vector<double>& amplitude, Real* dPhase, Real* dAmplitude, double* dShift, double* dDepth)
    {
        const Problem& pr = m_problem;
        for (const auto& owned : m_channels) {
            Channel& c = *owned;
            m_gatherPhase.setZero();
            double shift[2] = {0.0, 0.0};
            if (c.vectorial) {
                // h = sum_f conj(factor_f) g_f: one adjoint transform per field, then the scalar gather on h.
                c.vectorial->clearAdjoint();
                for (int f = 0; f < c.vectorial->fieldCount(); ++f) {
                    fftw::ComplexBuffer<Real>& b = *c.fieldBuffers[size_t(f)];
                    fftw::Traits<Real>::execute(c.forward, b.raw(), b.raw());
                    c.vectorial->gather(f, b.data(), c.index.data(), pr.checkerboard().data());
                }
                m_kernels.adjointGather(long(c.field.size()), c.vectorial->adjoint(), c.vectorial->identity(), c.vectorial->ones(),
                                        c.field.data(), amplitude.data(), pr.pupilX().data(), pr.pupilY().data(), m_gatherPhase.data(),
                                        dAmplitude, shift);
                *dDepth += c.vectorial->depthDerivative(c.field.data());
            } else {
                fftw::Traits<Real>::execute(c.forward, c.buffer.raw(), c.buffer.raw());
                m_kernels.adjointGather(long(c.field.size()), c.buffer.data(), c.index.data(), pr.checkerboard().data(), c.field.data(),
                                        amplitude.data(), pr.pupilX().data(), pr.pupilY().data(), m_gatherPhase.data(), dAmplitude, shift);
            }
            for (Eigen::Index i = 0; i < m_gatherPhase.size(); ++i)
                dPhase[i] += c.phaseScale * m_gatherPhase[i];
            dShift[0] += double(c.phaseScale) * shift[0];
            dShift[1] += double(c.phaseScale) * shift[1];
        }
    }

private:
    struct Channel {
        int n = 0, shift = 0;
        Real phaseScale = 1;
        double powerScale = 1; // weight x (N'/N)^2 / N'^4: |buffer|^2 -> this wavelength's share of |S|^2
        std::vector<int> index;
        fftw::ComplexBuffer<Real> buffer; // the far field (scalar model), or the pupil field's scratch (vectorial)
        std::vector<Complex> field;
        std::unique_ptr<VectorialFields<Real>> vectorial;                     // null for the scalar model
        std::vector<std::unique_ptr<fftw::ComplexBuffer<Real>>> fieldBuffers; // the vectorial fields' far fields
        // The far fields whose intensities add: the one buffer, or every vectorial field's.
        std::vector<Complex*> farFields()
        {
            if (!vectorial)
                return {buffer.data()};
            std::vector<Complex*> out;
            for (const auto& b : fieldBuffers)
                out.push_back(b->data());
            return out;
        }
        typename fftw::Traits<Real>::Plan backward = nullptr, forward = nullptr;
    };

    // Calls f(channel buffer index, model-grid index) for every sample of the channel's grid that falls on the
    // model's N x N grid (each channel is centred on it).
    template <class F>
    void forOverlap(const Channel& c, F f) const
    {
        const int lo = std::max(0, -c.shift), hi = std::min(m_n, c.n - c.shift); // model-grid rows and columns
        for (int row = lo; row < hi; ++row)
            for (int col = lo; col < hi; ++col)
                f(size_t(row + c.shift) * size_t(c.n) + size_t(col + c.shift), size_t(row) * size_t(m_n) + size_t(col));
    }

    void formIntensity()
    {
        std::fill(m_intensity.begin(), m_intensity.end(), 0.0);
        for (const auto& owned : m_channels) {
            Channel& c = *owned;
            for (const Complex* b : c.farFields())
                forOverlap(c, [&](size_t j, size_t i) { m_intensity[i] += c.powerScale * double(std::norm(b[j])); });
        }
        if (m_problem.transferFunction().empty())
            return;
        Complex* f = m_image.data();
        for (size_t i = 0; i < m_intensity.size(); ++i)
            f[i] = Complex(Real(m_intensity[i]), 0);
        convolve();
        for (size_t i = 0; i < m_intensity.size(); ++i)
            m_intensity[i] = f[i].real();
    }

    // m_image <- IFFT(H FFT(m_image)) / N^2: the convolution with the detector's real, even kernel, its own adjoint.
    void convolve()
    {
        const std::vector<double>& h = m_problem.transferFunction();
        const Real norm = Real(1.0 / (double(m_n) * double(m_n)));
        fftw::Traits<Real>::execute(m_imageForward, m_image.raw(), m_image.raw());
        Complex* f = m_image.data();
        for (size_t i = 0; i < h.size(); ++i)
            f[i] *= Real(h[i]) * norm;
        fftw::Traits<Real>::execute(m_imageBackward, m_image.raw(), m_image.raw());
    }

    // dL/d(blurred intensity) in m_image -> each channel's buffer = dL/dS scaled for its adjoint FFT:
    // 2 dL/d|S|^2 S, with |S|^2 = powerScale |buffer|^2 (the buffer's own 1/N'^2 included there).
    void scatterToChannels()
    {
        if (!m_problem.transferFunction().empty())
            convolve(); // dL/d(intensity before the blur)
        const Complex* f = m_image.data();
        for (const auto& owned : m_channels) {
            Channel& c = *owned;
            for (Complex* b : c.farFields()) {
                std::vector<Complex> scaled(c.buffer.size(), Complex(0, 0)); // samples off the model's grid get no gradient
                forOverlap(c, [&](size_t j, size_t i) { scaled[j] = b[j] * Real(2.0 * c.powerScale * double(f[i].real())); });
                std::copy(scaled.begin(), scaled.end(), b);
            }
        }
    }

    const Problem& m_problem;
    const simd::OpticsKernels<Real>& m_kernels;
    int m_n;
    std::vector<std::unique_ptr<Channel>> m_channels; // owned: the FFT buffers do not move
    fftw::ComplexBuffer<Real> m_image;                // the intensity and its adjoint, in turn (for the blur)
    std::vector<double> m_intensity;                  // the current plane's blurred, summed |S|^2
    std::vector<double> m_dPower;                     // dL/d(m_intensity)
    std::vector<Real> m_phase, m_diversity;
    Vector m_gatherPhase;
    typename fftw::Traits<Real>::Plan m_imageForward = nullptr, m_imageBackward = nullptr;
};

} // namespace wfs::detail
