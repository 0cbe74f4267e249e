#pragma once
// Problems shared by the CPU and GPU model suites: a "rich" problem that exercises every parameter
// kind and model feature, and the OOF reference cases of spec/oof-reference-values.json with their
// checks (cost to 1e-10, gradient to 1e-6 relative or 1e-18 absolute in float64).
#include "TestSupport.h"

#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "optics/ModelEvaluator.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <memory>
#include <random>

namespace wfs::test {

// A preset's fit as the tests run it: its data, start and stopping rules, estimated FFT plans (reproducible) and no
// uncertainties unless a test asks.
inline ReconstructionRequest presetRequest(const PresetCase& preset)
{
    ReconstructionRequest request;
    request.spec = preset.spec;
    request.start = preset.start;
    request.solver = preset.solver;
    request.evaluator.measurePlans = false;
    request.analysis.computeUncertainty = false;
    return request;
}

// The adjoint gradient of `evaluator` at x against central differences of `reference` (a float64 model), for the
// parameters in `checked`, compared in the solver's scaled units (gradient x parameter scale) to `tolerance`
// relative, with a floor of tolerance x 1e-3 of the largest component. Empty when all agree, else what differs.
inline QString adjointMismatch(const Problem& problem, ModelEvaluator& evaluator, ModelEvaluator& reference, const std::vector<double>& x,
                               const std::vector<size_t>& checked, double tolerance)
{
    std::vector<double> gradient(x.size());
    evaluator.evaluate(x.data(), gradient.data());
    const std::vector<double> scales = problem.parameterScales();
    double largest = 0;
    std::vector<double> numeric(x.size());
    for (size_t i : checked) {
        const double h = 1e-6 * scales[i];
        std::vector<double> p = x, m = x;
        p[i] += h;
        m[i] -= h;
        numeric[i] = (reference.evaluate(p.data(), nullptr) - reference.evaluate(m.data(), nullptr)) / (2 * h);
        largest = std::max(largest, std::abs(numeric[i] * scales[i]));
    }
    for (size_t i : checked)
        if (!closeTo(gradient[i] * scales[i], numeric[i] * scales[i], tolerance, tolerance * 1e-3 * largest))
            return QStringLiteral("%1: adjoint %2, central difference %3")
                .arg(QString::fromStdString(problem.parameters()[i].label))
                .arg(gradient[i], 0, 'g', 12)
                .arg(numeric[i], 0, 'g', 12);
    return {};
}

// A small finished fit (demo preset, grid 32, order 3), computed once per test process: what the
// export suites write and read back.
inline const FitResult& smallDemoResult()
{
    static const FitResult result = [] {
        PresetOptions options;
        options.grid = 32;
        options.order = 3;
        const PresetCase c = makePreset("demo", options);
        ReconstructionRequest request;
        request.spec = c.spec;
        request.start = c.start;
        request.solver = c.solver;
        request.evaluator.measurePlans = false;
        return reconstruct(request, {}, nullptr);
    }();
    return result;
}

// The OOF preset, small (grid 32, order 2, 30 iterations), with the PSF analysis: fitted illumination
// (so a pupil amplitude), planes not evenly spaced (0, -50, +50 mm), a known aperture (the 5.6 m dish).
inline const FitResult& smallOofResult()
{
    static const FitResult result = [] {
        PresetOptions options;
        options.grid = 32;
        options.order = 2;
        const PresetCase c = makePreset("oof", options);
        ReconstructionRequest request;
        request.spec = c.spec;
        request.start = c.start;
        request.solver = c.solver;
        request.solver.maxIterations = 30;
        request.analysis.psfAnalysis = true;
        request.evaluator.measurePlans = false;
        return reconstruct(request, {}, nullptr);
    }();
    return result;
}

// The rich problem of engine/Presets.h (every parameter kind and model feature), without data.
inline ProblemSpec richSpec(ObjectiveKind objective, int grid, int maxOrder)
{
    return richProblemSpec(objective, grid, maxOrder);
}

// The rich problem with simulated noisy data of dataSide x dataSide (smaller than the grid) at random
// aberrations, and one masked ("saturated") pixel in plane 1.
inline std::shared_ptr<const Problem> richProblemFrom(ProblemSpec s, int dataSide, std::uint64_t seed)
{
    const Problem plain(s);
    std::vector<double> truth = plain.initialParameters();
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> normal(0.0, 0.3);
    for (size_t i = 0; i + 1 < plain.modes().size(); ++i)
        truth[i] = normal(rng);
    const auto images = simulateImages(s, truth, dataSide, dataSide, {NoiseModel::PhotonAndRead, 3.0}, &rng);
    for (size_t k = 0; k < images.size(); ++k)
        s.planes[k].data = images[k];
    s.planes[1].mask.assign(size_t(dataSide) * size_t(dataSide), 1);
    s.planes[1].mask[size_t(dataSide / 2) * size_t(dataSide) + size_t(dataSide / 2)] = 0;
    return std::make_shared<const Problem>(s);
}

inline std::shared_ptr<const Problem> richProblem(ObjectiveKind objective, int grid, int dataSide, int maxOrder, std::uint64_t seed)
{
    return richProblemFrom(richSpec(objective, grid, maxOrder), dataSide, seed);
}

inline std::vector<double> jsonVector(const QJsonValue& v)
{
    std::vector<double> out;
    for (const QJsonValue& x : v.toArray())
        out.push_back(x.toDouble());
    return out;
}

inline QJsonArray oofReferenceCases()
{
    QFile file(dataPath(QStringLiteral("oof-reference-values.json")));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("cases")).toArray();
}

// The OOF preset's problem with noise-free data equal to the model at `truth`.
inline std::shared_ptr<const Problem> oofReferenceProblem(int grid, int order, const std::vector<double>& truth)
{
    PresetOptions options;
    options.grid = grid;
    options.order = order;
    options.noise = false;
    ProblemSpec spec = makePreset("oof", options).spec;
    const auto images = simulateImages(spec, truth, grid, grid, {}, nullptr);
    for (size_t k = 0; k < images.size(); ++k)
        spec.planes[k].data = images[k];
    return std::make_shared<const Problem>(spec);
}

// Checks an evaluator of oofReferenceProblem(case) against the case's values. float64: cost 1e-10,
// gradient 1e-6 relative (1e-18 absolute), peak and total power of plane 0 1e-10. float32: the cost is
// a small difference of ~1e-3 intensities, so 1e-3 relative, the gradient 1e-2 of its largest component.
// On failure it returns after QFAIL; callers need no further check.
inline void verifyOofReference(ModelEvaluator& evaluator, const QJsonObject& c, Precision precision)
{
    const std::vector<double> truth = jsonVector(c.value(QStringLiteral("truth")));
    const std::vector<double> start = jsonVector(c.value(QStringLiteral("start")));
    const std::vector<double> expected = jsonVector(c.value(QStringLiteral("gradient")));
    const double loss = c.value(QStringLiteral("loss")).toDouble();
    QCOMPARE(evaluator.parameterCount(), int(start.size()));
    std::vector<double> gradient(start.size());
    const double cost = evaluator.evaluate(start.data(), gradient.data());
    if (precision == Precision::Double) {
        WFS_VERIFY_CLOSE(cost, loss, 1e-10, 0.0);
        for (size_t i = 0; i < gradient.size(); ++i)
            WFS_VERIFY_CLOSE(gradient[i], expected[i], 1e-6, 1e-18);
        const auto images = evaluator.modelImages(truth.data());
        double peak = 0, total = 0;
        for (double v : images[0]) {
            peak = std::max(peak, v);
            total += v;
        }
        WFS_VERIFY_CLOSE(peak, c.value(QStringLiteral("peak_intensity_plane0_at_truth")).toDouble(), 1e-10, 0.0);
        WFS_VERIFY_CLOSE(total, c.value(QStringLiteral("total_power_plane0_at_truth")).toDouble(), 1e-10, 0.0);
    } else {
        WFS_VERIFY_CLOSE(cost, loss, 1e-3, 0.0);
        double largest = 0;
        for (double g : expected)
            largest = std::max(largest, std::abs(g));
        for (size_t i = 0; i < gradient.size(); ++i)
            WFS_VERIFY_CLOSE(gradient[i], expected[i], 0.0, 1e-2 * largest);
    }
}

} // namespace wfs::test
