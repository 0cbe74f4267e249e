#include "optics/CpuModel.h"

#include "optics/CpuImageFormation.h"
#include "optics/Fftw.h"
#include "optics/PrunedFft.h"
#include "optics/Threads.h"
#include "optics/Vectorial.h"
#include "simd/Kernels.h"

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string_view>

namespace wfs {

std::string cpuName()
{
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "CPU";
}

namespace {

// Layout trick: for even N, fftshift(ifft2(ifftshift(x))) = (-1)^(k+l) ifft2((-1)^(n+m) x). The output
// sign never matters (intensities, and the adjoint uses the same unshifted field), so the pupil field
// is multiplied by the checkerboard once and no array is ever rolled.
//
// Pruning: the pupil occupies rows [rowBegin, rowEnd) of the grid (a quarter of the rows for the OOF
// preset, half for Q = 2) and about as many columns. Where those rows are at most half the grid, the
// far field comes from optics/PrunedFft.h: B-point DFTs of twiddled copies of the pupil, in a permuted
// pixel order that the data and weights share (permuted once here). Otherwise the synthesis transforms
// the pupil rows only, then every column, and the adjoint every column, then those rows only.
//
// The vectorial model (optics/Vectorial.h) sends each of its fields (the pupil field times the field's factor)
// through the same transform into a buffer of its own, adds their intensities, and in the adjoint transforms each
// field's dL/dS back and sums conj(factor) times it into one pupil field, which the scalar gather turns into the
// phase, amplitude and tip/tilt derivatives: one forward and one adjoint transform per field and plane.
template <class Real>
class CpuModel final : public ModelEvaluator {
public:
    using Complex = std::complex<Real>;
    using Vector = Eigen::Matrix<Real, Eigen::Dynamic, 1>;
    using Matrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>;

    CpuModel(std::shared_ptr<const Problem> problem, const EvaluatorOptions& options)
        : m_problem(std::move(problem))
        , m_options(options)
        , m_n(m_problem->gridSize())
        , m_buffer(size_t(m_n) * size_t(m_n))
        , m_simd(simd::active())
        , m_kernels(&simd::opticsKernels<Real>(m_simd))
    {
        if (options.threads < 1)
            throw std::invalid_argument("thread count must be at least 1");
        threads::requireThreads(options.threads);
        const Problem& pr = *m_problem;
        const int pixels = pr.pupilPixelCount();
        m_field.resize(size_t(pixels));
        m_dPhase.resize(pixels);
        m_dAmplitude.resize(pixels);
        m_phase0.resize(pixels);
        m_amplitude.resize(size_t(pixels));
        m_diversity.resize(size_t(pr.planeCount()));
        for (int k = 0; k < pr.planeCount(); ++k)
            m_diversity[size_t(k)].assign(pr.diversityPhase()[size_t(k)].begin(), pr.diversityPhase()[size_t(k)].end());
        makeTransforms();
        // The basis in the chunks of pixels the threads take (inChunks), each block contiguous, so that B c and
        // B^T v split across threads like every other per-pixel pass (at grid 1024 the two products read
        // 18 MB each, a tenth of an evaluation on one thread).
        const int chunks = chunkCount();
        for (int c = 0; c < chunks; ++c) {
            const long begin = long(pixels) * c / chunks, end = long(pixels) * (c + 1) / chunks;
            m_basisChunks.push_back(pr.basis().middleRows(begin, end - begin).template cast<Real>());
        }
        if (pr.hasData()) {
            for (int k = 0; k < pr.planeCount(); ++k) {
                m_data.push_back(inOutputOrder(pr.data(k)));
                m_weights.push_back(inOutputOrder(pr.weights(k)));
            }
        }
        // A spectrum or a blurring detector: the general image formation (optics/CpuImageFormation.h).
        if (!pr.transferFunction().empty() || !pr.spectrum().empty())
            m_formation = std::make_unique<detail::CpuImageFormation<Real>>(pr, *m_kernels, options.threads, options.measurePlans);
        if (pr.hasDefocusParameters())
            m_planeDPhase.resize(pixels);
        if (pr.vectorial() && !m_formation) {
            m_vectorial = std::make_unique<VectorialFields<Real>>(*pr.vectorial(), 1.0);
            for (int f = 0; f < m_vectorial->fieldCount(); ++f)
                m_fieldBuffers.push_back(std::make_unique<fftw::ComplexBuffer<Real>>(m_buffer.size()));
            m_intensity.resize(m_buffer.size());
            m_dPower.resize(m_buffer.size());
        }
    }

    const Problem& problem() const override { return *m_problem; }

    BackendInfo info() const override
    {
        BackendInfo info;
        info.backend = "cpu";
        info.device = cpuName();
        info.precision = std::is_same_v<Real, double> ? Precision::Double : Precision::Float;
        info.threads = m_options.threads;
        info.simd = simd::name(m_simd);
        return info;
    }

    double evaluate(const double* parameters, double* gradient) override
    {
        const Problem& pr = *m_problem;
        if (!pr.hasData())
            throw std::logic_error("evaluate() needs a problem with data");
        const ModelParameters p = pr.unpack(parameters);
        preparePupil(p);
        const bool wantGradient = gradient != nullptr;
        ModelParameters grad;
        if (wantGradient) {
            grad = pr.zeroLike();
            m_dPhase.setZero();
            m_dAmplitude.setZero();
        }
        double cost = 0.0;
        for (int k = 0; k < pr.planeCount(); ++k) {
            if (m_formation) {
                cost += formedPlane(p, k, wantGradient ? &grad : nullptr);
                continue;
            }
            if (m_vectorial) {
                cost += vectorialPlane(p, k, wantGradient ? &grad : nullptr);
                continue;
            }
            synthesise(p, k);
            cost += objectivePlane(p, k, wantGradient ? &grad : nullptr);
            if (wantGradient)
                adjointPlane(p, k, grad);
        }
        cost += pr.regularization(p, wantGradient ? &grad : nullptr);
        if (wantGradient) {
            finishGradient(p, grad);
            pr.pack(grad, gradient);
        }
        return cost;
    }

    std::vector<std::vector<double>> modelImages(const double* parameters) override
    {
        const Problem& pr = *m_problem;
        const ModelParameters p = pr.unpack(parameters);
        preparePupil(p);
        std::vector<std::vector<double>> images;
        const double norm = 1.0 / (double(m_n) * double(m_n));
        for (int k = 0; k < pr.planeCount(); ++k) {
            const double scale = p.flux[size_t(k)] * pr.intensityScale();
            std::vector<double> image(m_buffer.size());
            if (m_formation) {
                m_formation->synthesise(m_phase0, planeDiversity(p, k), Real(p.shiftX[size_t(k)]), Real(p.shiftY[size_t(k)]), m_amplitude);
                const std::vector<double>& intensity = m_formation->intensity();
                for (size_t i = 0; i < image.size(); ++i)
                    image[i] = scale * intensity[i] + p.background[size_t(k)];
            } else if (m_vectorial) {
                synthesiseFields(p, k);
                for (size_t i = 0; i < image.size(); ++i)
                    image[i] = scale * m_intensity[bufferIndex(i)] + p.background[size_t(k)];
            } else {
                synthesise(p, k);
                const Complex* b = m_buffer.data();
                for (size_t i = 0; i < image.size(); ++i)
                    image[i] = scale * norm * norm * double(std::norm(b[bufferIndex(i)])) + p.background[size_t(k)];
            }
            images.push_back(std::move(image));
        }
        return images;
    }

    double measureFftMs(int repeats) override
    {
        fftw::PlanKey key;
        key.n = m_n;
        key.axes = fftw::Axes::Full2d;
        key.direction = fftw::Direction::Backward;
        key.threads = m_options.threads;
        key.measure = m_options.measurePlans;
        auto plan = fftw::plan<Real>(key);
        std::fill(m_buffer.data(), m_buffer.data() + m_buffer.size(), Complex(0.5, -0.25));
        std::vector<double> times;
        fftw::Traits<Real>::execute(plan, m_buffer.raw(), m_buffer.raw()); // warm-up
        for (int r = 0; r < std::max(1, repeats); ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            fftw::Traits<Real>::execute(plan, m_buffer.raw(), m_buffer.raw());
            times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::nth_element(times.begin(), times.begin() + long(times.size() / 2), times.end());
        return times[times.size() / 2];
    }

private:
    // The pruned transform (optics/PrunedFft.h) where the pupil's support allows it and WFS_FFT_PRUNING is
    // not "off" (the switch lets tests compare it with the unpruned path); otherwise row and column plans.
    void makeTransforms()
    {
        const Problem& pr = *m_problem;
        const auto& index = pr.pupilIndex();
        int colBegin = m_n, colEnd = 0;
        for (int i : index) {
            colBegin = std::min(colBegin, i % m_n);
            colEnd = std::max(colEnd, i % m_n + 1);
        }
        const char* env = std::getenv("WFS_FFT_PRUNING");
        // The general image formation (a spectrum or a blurring detector) reads the data in grid order.
        const bool general = !pr.transferFunction().empty() || !pr.spectrum().empty();
        const bool allowed = !(env && std::string_view(env) == "off") && !general;
        if (allowed && !index.empty() && PrunedFft<Real>::applicable(m_n, pr.rowBegin(), pr.rowEnd(), colBegin, colEnd)) {
            m_pruned = std::make_unique<PrunedFft<Real>>(m_n, pr.rowBegin(), pr.rowEnd(), colBegin, colEnd, *m_kernels, m_options.threads,
                                                         m_options.measurePlans);
            m_blockIndex.resize(index.size());
            for (size_t i = 0; i < index.size(); ++i)
                m_blockIndex[i] = m_pruned->blockIndex(index[i]);
            m_outputOrder.resize(size_t(m_n) * size_t(m_n));
            for (size_t i = 0; i < m_outputOrder.size(); ++i)
                m_outputOrder[i] = m_pruned->outputIndex(i);
            return;
        }
        const int band = pr.rowEnd() - pr.rowBegin();
        auto key = [&](fftw::Axes axes, fftw::Direction dir) {
            fftw::PlanKey k;
            k.n = m_n;
            k.axes = axes;
            k.firstRow = axes == fftw::Axes::Rows ? pr.rowBegin() : 0;
            k.count = axes == fftw::Axes::Rows ? band : 0;
            k.direction = dir;
            k.threads = m_options.threads;
            k.measure = m_options.measurePlans;
            return k;
        };
        m_rowsBackward = fftw::plan<Real>(key(fftw::Axes::Rows, fftw::Direction::Backward));
        m_columnsBackward = fftw::plan<Real>(key(fftw::Axes::Columns, fftw::Direction::Backward));
        m_columnsForward = fftw::plan<Real>(key(fftw::Axes::Columns, fftw::Direction::Forward));
        m_rowsForward = fftw::plan<Real>(key(fftw::Axes::Rows, fftw::Direction::Forward));
    }

    long termCount() const { return long(m_problem->basis().cols()); }

    // The threads a plane's element-wise passes use: the pruned transform's choice (one for small grids).
    int chunkCount() const { return m_pruned ? m_pruned->workers() : std::max(1, m_options.threads); }

    // f(chunk, begin, end) over chunkCount() fixed ranges of [0, count), one thread each.
    template <class F>
    void inChunks(long count, F&& f) const
    {
        const int chunks = chunkCount();
        threads::parallelFor(chunks, [&](int c) { f(c, count * c / chunks, count * (c + 1) / chunks); });
    }

    // Where grid pixel i (row * N + col) sits in the buffer after synthesise().
    size_t bufferIndex(size_t i) const { return m_pruned ? m_outputOrder[i] : i; }

    // A data-sized array permuted once into the buffer's order, so the objective stays one pass over both.
    std::vector<Real> inOutputOrder(const std::vector<double>& grid) const
    {
        std::vector<Real> out(grid.size());
        for (size_t i = 0; i < grid.size(); ++i)
            out[bufferIndex(i)] = Real(grid[i]);
        return out;
    }

    // Aberration phase (basis on pupil pixels only) and amplitude shared by all planes.
    void preparePupil(const ModelParameters& p)
    {
        const Problem& pr = *m_problem;
        Vector coefficients(termCount());
        for (Eigen::Index t = 0; t < coefficients.size(); ++t)
            coefficients[t] = Real(p.zernike[size_t(t)]);
        inChunks(m_phase0.size(), [&](int c, long begin, long) {
            const Matrix& b = m_basisChunks[size_t(c)];
            m_kernels->basisTimes(b.data(), long(b.rows()), long(b.cols()), coefficients.data(), m_phase0.data() + begin);
        });
        if (pr.hasZonalPhase())
            m_phase0 += pr.zonalPhase(p).cast<Real>();
        m_amplitude = pr.pupilAmplitude(p);
        if (m_vectorial)
            m_vectorial->prepare(p.emitterDepth);
        if (m_formation)
            m_formation->prepare(p.emitterDepth);
    }

    // Fills the buffer with N^2 * the unshifted far field of plane k (unnormalised inverse DFT), in the
    // pruned transform's order and up to a unit phase per pixel when pruned.
    void synthesise(const ModelParameters& p, int k)
    {
        writePupilField(p, k);
        if (m_pruned) {
            m_pruned->synthesise(m_buffer.data());
            return;
        }
        transformBackward(m_buffer);
    }

    // The pupil field of plane k into m_field, and (with its checkerboard sign) into the transform's input: the
    // pruned block, or the buffer, cleared first.
    void writePupilField(const ModelParameters& p, int k)
    {
        const Problem& pr = *m_problem;
        Complex* b = m_pruned ? m_pruned->block() : m_buffer.data();
        if (m_pruned)
            m_pruned->clearBlock();
        else
            std::fill(b, b + m_buffer.size(), Complex(0, 0));
        const auto& index = m_pruned ? m_blockIndex : pr.pupilIndex();
        const auto& chk = pr.checkerboard();
        const auto& x = pr.pupilX();
        const auto& y = pr.pupilY();
        const std::vector<Real>& div = planeDiversity(p, k);
        const Real sx = Real(p.shiftX[size_t(k)]), sy = Real(p.shiftY[size_t(k)]);
        inChunks(long(index.size()), [&](int, long i0, long i1) {
            m_kernels->pupilField(i1 - i0, m_phase0.data() + i0, div.data() + i0, sx, sy, x.data() + i0, y.data() + i0,
                                  m_amplitude.data() + i0, index.data() + i0, chk.data() + i0, m_field.data() + i0, b);
        });
    }

    // The unpruned synthesis in place: the pupil rows, then every column.
    void transformBackward(fftw::ComplexBuffer<Real>& buffer)
    {
        const size_t offset = size_t(m_problem->rowBegin()) * size_t(m_n);
        fftw::Traits<Real>::execute(m_rowsBackward, buffer.raw() + offset, buffer.raw() + offset);
        fftw::Traits<Real>::execute(m_columnsBackward, buffer.raw(), buffer.raw());
    }

    // Its adjoint in place: every column, then the pupil rows.
    void transformForward(fftw::ComplexBuffer<Real>& buffer)
    {
        const size_t offset = size_t(m_problem->rowBegin()) * size_t(m_n);
        fftw::Traits<Real>::execute(m_columnsForward, buffer.raw(), buffer.raw());
        fftw::Traits<Real>::execute(m_rowsForward, buffer.raw() + offset, buffer.raw() + offset);
    }

    // The vectorial fields of plane k: each one's far field into its buffer (the plain path's order and scale), their
    // summed intensity |S|^2 into m_intensity.
    void synthesiseFields(const ModelParameters& p, int k)
    {
        const Problem& pr = *m_problem;
        writePupilField(p, k);
        const auto& index = m_pruned ? m_blockIndex : pr.pupilIndex();
        for (int f = 0; f < m_vectorial->fieldCount(); ++f) {
            fftw::ComplexBuffer<Real>& out = *m_fieldBuffers[size_t(f)];
            if (m_pruned) {
                m_pruned->clearBlock();
                m_vectorial->scatter(f, m_field.data(), index.data(), pr.checkerboard().data(), m_pruned->block());
                m_pruned->synthesise(out.data());
            } else {
                std::fill(out.data(), out.data() + out.size(), Complex(0, 0));
                m_vectorial->scatter(f, m_field.data(), index.data(), pr.checkerboard().data(), out.data());
                transformBackward(out);
            }
        }
        const double norm = 1.0 / (double(m_n) * double(m_n));
        std::fill(m_intensity.begin(), m_intensity.end(), 0.0);
        for (const auto& buffer : m_fieldBuffers) {
            const Complex* b = buffer->data();
            for (size_t i = 0; i < m_intensity.size(); ++i)
                m_intensity[i] += double(std::norm(b[i]));
        }
        for (double& v : m_intensity)
            v *= norm * norm;
    }

    // Plane k of the vectorial model on the plain path: synthesis, objective and (with grad) the adjoint.
    double vectorialPlane(const ModelParameters& p, int k, ModelParameters* grad)
    {
        const Problem& pr = *m_problem;
        synthesiseFields(p, k);
        double dFlux = 0.0, dBackground = 0.0;
        const double cost = detail::intensityObjective(
            m_intensity, p.flux[size_t(k)] * pr.intensityScale(), p.background[size_t(k)], m_data[size_t(k)], m_weights[size_t(k)],
            pr.spec().objective == ObjectiveKind::Poisson, &dFlux, &dBackground, grad ? m_dPower.data() : nullptr);
        if (!grad || !std::isfinite(cost))
            return cost;
        grad->flux[size_t(k)] += dFlux * pr.intensityScale();
        grad->background[size_t(k)] += dBackground;
        // dL/dS = 2 dL/d|S|^2 S, with |S|^2 = norm^2 |buffer|^2 and one more norm for the adjoint of (1/N^2) B.
        const double norm = 1.0 / (double(m_n) * double(m_n));
        const auto& index = m_pruned ? m_blockIndex : pr.pupilIndex();
        m_vectorial->clearAdjoint();
        for (int f = 0; f < m_vectorial->fieldCount(); ++f) {
            fftw::ComplexBuffer<Real>& buffer = *m_fieldBuffers[size_t(f)];
            Complex* b = buffer.data();
            for (size_t i = 0; i < m_dPower.size(); ++i)
                b[i] *= Real(2.0 * m_dPower[i] * norm * norm);
            if (m_pruned) {
                m_pruned->adjoint(b);
                m_vectorial->gather(f, m_pruned->block(), index.data(), pr.checkerboard().data());
            } else {
                transformForward(buffer);
                m_vectorial->gather(f, b, index.data(), pr.checkerboard().data());
            }
        }
        gatherPlane(k, *grad, m_vectorial->adjoint(), m_vectorial->identity(), m_vectorial->ones());
        grad->emitterDepth += m_vectorial->depthDerivative(m_field.data());
        return cost;
    }

    // Adds plane k's objective; with a gradient, turns the buffer into dL/dS (the adjoint source)
    // and accumulates the flux and background derivatives.
    double objectivePlane(const ModelParameters& p, int k, ModelParameters* grad)
    {
        const Problem& pr = *m_problem;
        const double norm = 1.0 / (double(m_n) * double(m_n));
        const Real fieldScale = Real(norm);                                   // buffer -> S
        const Real intensity = Real(p.flux[size_t(k)] * pr.intensityScale()); // |S|^2 -> counts
        const Real background = Real(p.background[size_t(k)]);
        const Real* data = m_data[size_t(k)].data();
        const Real* weight = m_weights[size_t(k)].data();
        Complex* b = m_buffer.data();
        const long count = long(m_buffer.size());
        const ObjectiveKind objective = pr.spec().objective;
        const bool gradient = grad != nullptr;
        // Sums over fixed chunks (one per requested thread) added in chunk order, not an OpenMP
        // reduction: its partial sums are combined in whatever order the threads finish, so the cost
        // and gradient (and the fit) would differ in the last bits from run to run.
        const int chunks = chunkCount();
        using Partial = simd::ObjectivePartial;
        std::vector<Partial> partials(static_cast<size_t>(chunks));
        const bool poisson = objective == ObjectiveKind::Poisson;
        inChunks(count, [&](int chunk, long begin, long end) {
            m_kernels->objectiveRange(begin, end, b, data, weight, fieldScale, intensity, background, poisson, gradient,
                                      &partials[size_t(chunk)]);
        });
        double cost = 0.0, dFlux = 0.0, dBackground = 0.0;
        bool invalid = false;
        for (const Partial& part : partials) {
            cost += part.cost;
            dFlux += part.dFlux;
            dBackground += part.dBackground;
            invalid = invalid || part.invalid;
        }
        if (invalid)
            return std::numeric_limits<double>::infinity();
        if (grad) {
            grad->flux[size_t(k)] += dFlux * pr.intensityScale();
            grad->background[size_t(k)] += dBackground;
        }
        return cost;
    }

    // Back-propagates the buffer (dL/dS) to the pupil and accumulates phase and amplitude derivatives.
    void adjointPlane(const ModelParameters& p, int k, ModelParameters& grad)
    {
        (void)p;
        const Problem& pr = *m_problem;
        if (m_pruned)
            m_pruned->adjoint(m_buffer.data());
        else
            transformForward(m_buffer);
        const Complex* b = m_pruned ? m_pruned->block() : m_buffer.data();
        const auto& index = m_pruned ? m_blockIndex : pr.pupilIndex();
        gatherPlane(k, grad, b, index.data(), pr.checkerboard().data());
    }

    // The pupil's derivatives from the adjoint field b, read at index[i] with sign[i] for pupil pixel i: dL/dphase
    // (the plane's own with defocus parameters), dL/damplitude and the plane's tip/tilt.
    void gatherPlane(int k, ModelParameters& grad, const Complex* b, const int* index, const int* chk)
    {
        const Problem& pr = *m_problem;
        const auto& x = pr.pupilX();
        const auto& y = pr.pupilY();
        // With defocus parameters the plane's own dL/dphase is needed (its dot product with the plane's
        // unit defocus phase), so it is gathered apart and then added.
        const bool perPlane = pr.hasDefocusParameters();
        if (perPlane)
            m_planeDPhase.setZero();
        Real* dPhase = perPlane ? m_planeDPhase.data() : m_dPhase.data();
        // Per-pixel sums are disjoint between chunks; the shift's sums are added in chunk order.
        std::vector<std::array<double, 2>> shifts(size_t(chunkCount()), {0.0, 0.0});
        inChunks(long(pr.pupilPixelCount()), [&](int c, long i0, long i1) {
            m_kernels->adjointGather(i1 - i0, b, index + i0, chk + i0, m_field.data() + i0, m_amplitude.data() + i0, x.data() + i0,
                                     y.data() + i0, dPhase + i0, m_dAmplitude.data() + i0, shifts[size_t(c)].data());
        });
        double dShift[2] = {0.0, 0.0};
        for (const auto& shift : shifts) {
            dShift[0] += shift[0];
            dShift[1] += shift[1];
        }
        grad.shiftX[size_t(k)] += dShift[0];
        grad.shiftY[size_t(k)] += dShift[1];
        if (perPlane)
            finishPlaneDefocus(k, grad);
    }

    // Plane k's diversity phase at p's defocus scale and offset (the stored screen when those are not fitted).
    const std::vector<Real>& planeDiversity(const ModelParameters& p, int k)
    {
        const Problem& pr = *m_problem;
        if (!pr.hasDefocusParameters())
            return m_diversity[size_t(k)];
        pr.planeDiversity(p, k, m_planeDiversityDouble);
        m_planeDiversity.assign(m_planeDiversityDouble.begin(), m_planeDiversityDouble.end());
        return m_planeDiversity;
    }

    // The defocus parameters' derivatives from the plane's own dL/dphase (m_planeDPhase), which then joins m_dPhase.
    void finishPlaneDefocus(int k, ModelParameters& grad)
    {
        const Problem& pr = *m_problem;
        m_dPhase += m_planeDPhase;
        const std::vector<double>& unit = pr.diversityUnitPhase(k);
        double dot = 0.0;
        for (size_t i = 0; i < unit.size(); ++i)
            dot += double(m_planeDPhase[Eigen::Index(i)]) * unit[i];
        pr.chainDefocusGradient(k, dot, grad);
    }

    // Plane k through the general image formation: synthesis, objective and (with grad) the adjoint.
    double formedPlane(const ModelParameters& p, int k, ModelParameters* grad)
    {
        const Problem& pr = *m_problem;
        m_formation->synthesise(m_phase0, planeDiversity(p, k), Real(p.shiftX[size_t(k)]), Real(p.shiftY[size_t(k)]), m_amplitude);
        double dFlux = 0.0, dBackground = 0.0;
        const double cost = m_formation->objective(p.flux[size_t(k)] * pr.intensityScale(), p.background[size_t(k)], m_data[size_t(k)],
                                                   m_weights[size_t(k)], pr.spec().objective == ObjectiveKind::Poisson, &dFlux,
                                                   &dBackground, grad != nullptr);
        if (!grad || !std::isfinite(cost))
            return cost;
        grad->flux[size_t(k)] += dFlux * pr.intensityScale();
        grad->background[size_t(k)] += dBackground;
        const bool perPlane = pr.hasDefocusParameters();
        if (perPlane)
            m_planeDPhase.setZero();
        double dShift[2] = {0.0, 0.0};
        m_formation->adjoint(m_amplitude, perPlane ? m_planeDPhase.data() : m_dPhase.data(), m_dAmplitude.data(), dShift,
                             &grad->emitterDepth);
        grad->shiftX[size_t(k)] += dShift[0];
        grad->shiftY[size_t(k)] += dShift[1];
        if (perPlane)
            finishPlaneDefocus(k, *grad);
        return cost;
    }

    // Chain rule from the shared pupil phase and amplitude to Zernike, zonal and illumination parameters.
    void finishGradient(const ModelParameters& p, ModelParameters& grad)
    {
        const Problem& pr = *m_problem;
        // Per-chunk sums added in chunk order: the same bits for a given thread count.
        std::vector<Vector> partial(m_basisChunks.size(), Vector::Zero(termCount()));
        inChunks(m_dPhase.size(), [&](int c, long begin, long) {
            const Matrix& b = m_basisChunks[size_t(c)];
            m_kernels->basisTransposeTimes(b.data(), long(b.rows()), long(b.cols()), m_dPhase.data() + begin, partial[size_t(c)].data());
        });
        Vector dz = Vector::Zero(termCount());
        for (const Vector& part : partial)
            dz += part;
        for (Eigen::Index t = 0; t < dz.size(); ++t)
            grad.zernike[size_t(t)] = double(dz[t]);
        const Eigen::VectorXd dPhase = m_dPhase.template cast<double>();
        const Eigen::VectorXd dAmplitude = m_dAmplitude.template cast<double>();
        pr.chainPupilGradient(p, dPhase.data(), dAmplitude.data(), m_amplitude, grad);
    }

    std::shared_ptr<const Problem> m_problem;
    EvaluatorOptions m_options;
    int m_n;
    fftw::ComplexBuffer<Real> m_buffer;
    std::vector<Matrix> m_basisChunks; // the basis (pupil pixels x terms) in inChunks' row blocks
    Vector m_phase0, m_dPhase, m_dAmplitude, m_planeDPhase;
    std::vector<Real> m_planeDiversity; // this plane's diversity at the current defocus parameters
    std::vector<double> m_planeDiversityDouble;
    std::unique_ptr<detail::CpuImageFormation<Real>> m_formation; // a spectrum or a blurring detector
    std::vector<double> m_amplitude;
    std::vector<Complex> m_field;
    std::vector<std::vector<Real>> m_diversity, m_data, m_weights;
    simd::Level m_simd;                         // the instruction set of the kernels, chosen once
    const simd::OpticsKernels<Real>* m_kernels; // the hot loops built for m_simd (core/simd)
    std::unique_ptr<PrunedFft<Real>> m_pruned;  // null: the row and column plans below
    std::vector<int> m_blockIndex;              // pupil pixel -> m_pruned->block()
    // Grid pixel -> its place in the pruned output (PrunedFft::outputIndex, four divisions each), kept for the
    // model images, which the uncertainties' Jacobian asks for P times per fit.
    std::vector<size_t> m_outputOrder;
    std::unique_ptr<VectorialFields<Real>> m_vectorial;                     // the vectorial model on the plain path; null otherwise
    std::vector<std::unique_ptr<fftw::ComplexBuffer<Real>>> m_fieldBuffers; // its fields' far fields (output order)
    std::vector<double> m_intensity, m_dPower;                              // their summed |S|^2 and dL/d|S|^2 (output order)
    typename fftw::Traits<Real>::Plan m_rowsBackward = nullptr, m_columnsBackward = nullptr, m_columnsForward = nullptr,
                                      m_rowsForward = nullptr;
};

} // namespace

std::unique_ptr<ModelEvaluator> makeCpuEvaluator(std::shared_ptr<const Problem> problem, const EvaluatorOptions& options)
{
    if (options.precision == Precision::Float)
        return std::make_unique<CpuModel<float>>(std::move(problem), options);
    return std::make_unique<CpuModel<double>>(std::move(problem), options);
}

} // namespace wfs
