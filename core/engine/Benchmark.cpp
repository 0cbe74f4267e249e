#include "engine/Benchmark.h"

#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"

#include <QJsonArray>

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>

namespace wfs {

namespace {
double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

double secondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
} // namespace

OofBenchmarkRow runOofBenchmark(const OofBenchmarkSettings& settings)
{
    if (settings.repeat < 1 || settings.evalRepeat < 1)
        throw std::invalid_argument("repeat counts must be at least 1");
    OofBenchmarkRow row;
    row.settings = settings;

    const auto setupStart = std::chrono::steady_clock::now();
    PresetOptions presetOptions;
    presetOptions.grid = settings.grid;
    presetOptions.order = settings.order;
    presetOptions.seed = settings.seed;
    const PresetCase c = makePreset("oof", presetOptions);
    auto problem = std::make_shared<const Problem>(c.spec);
    auto evaluator = makeEvaluator(settings.backend, problem, settings.evaluator, settings.gradient);
    std::vector<double> gradient(size_t(problem->parameterCount()));
    evaluator->evaluate(c.start.data(), gradient.data()); // first touch outside the timing
    row.setupSeconds = secondsSince(setupStart);
    row.parameters = problem->parameterCount();

    std::vector<double> evalTimes, costTimes;
    for (int r = 0; r < settings.evalRepeat; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        evaluator->evaluate(c.start.data(), gradient.data());
        evalTimes.push_back(secondsSince(t0) * 1e3);
        t0 = std::chrono::steady_clock::now();
        evaluator->evaluate(c.start.data(), nullptr);
        costTimes.push_back(secondsSince(t0) * 1e3);
    }
    row.evalMs = median(evalTimes);
    row.costMs = median(costTimes);
    row.fftMs = evaluator->measureFftMs(settings.evalRepeat);

    SolverOptions solver = c.solver;
    solver.optimizer = settings.optimizer;
    solver.maxIterations = settings.maxIterations;
    if (settings.gradientTolerance)
        solver.gradientTolerance = *settings.gradientTolerance;
    if (settings.functionTolerance)
        solver.functionTolerance = *settings.functionTolerance;
    solver.cancel = settings.cancel;
    std::vector<double> times;
    for (int r = 0; settings.solve && r < settings.repeat; ++r) {
        row.summary = minimise(*evaluator, c.start, solver);
        times.push_back(row.summary.seconds);
        if (row.summary.termination == Termination::Failed)
            throw std::runtime_error("grid " + std::to_string(settings.grid) + ": " + row.summary.message);
        if (row.summary.termination == Termination::Cancelled)
            break;
    }
    row.solved = settings.solve && !times.empty();
    row.seconds = median(times);
    row.backend = evaluator->info();
    return row;
}

QJsonObject benchmarkRowJson(const OofBenchmarkRow& r)
{
    QJsonArray solution;
    for (double v : r.summary.parameters)
        solution.append(v);
    QJsonObject row{
        {QStringLiteral("problem"), QStringLiteral("oof")},
        {QStringLiteral("grid"), r.settings.grid},
        {QStringLiteral("order"), r.settings.order},
        {QStringLiteral("params"), r.parameters},
        {QStringLiteral("backend"), QString::fromStdString(r.backend.backend)},
        {QStringLiteral("device"), QString::fromStdString(r.backend.device)},
        {QStringLiteral("gradient"), QString::fromLatin1(gradientName(r.settings.gradient))},
        {QStringLiteral("precision"), QString::fromLatin1(precisionName(r.backend.precision))},
        {QStringLiteral("threads"), r.backend.threads},
        {QStringLiteral("simd"), r.backend.simd.empty() ? QJsonValue() : QJsonValue(QString::fromStdString(r.backend.simd))},
        {QStringLiteral("seed"), QString::number(r.settings.seed)},
        {QStringLiteral("setup_seconds"), r.setupSeconds},
        {QStringLiteral("seconds"), r.solved ? QJsonValue(r.seconds) : QJsonValue()},
        {QStringLiteral("iterations"), r.summary.iterations},
        {QStringLiteral("cost_evaluations"), double(r.summary.costEvaluations)},
        {QStringLiteral("gradient_evaluations"), double(r.summary.gradientEvaluations)},
        {QStringLiteral("final_cost"), r.summary.finalCost},
        {QStringLiteral("gradient_max_norm"), r.summary.gradientMaxNorm},
        {QStringLiteral("termination"), r.solved ? QString::fromLatin1(terminationName(r.summary.termination)) : QStringLiteral("not-run")},
        {QStringLiteral("eval_ms"), r.evalMs},
        {QStringLiteral("cost_ms"), r.costMs},
        {QStringLiteral("fft_ms"), r.fftMs},
        {QStringLiteral("eval_over_6fft"), r.evalMs / (6.0 * r.fftMs)},
        {QStringLiteral("solution"), solution},
    };
    // GPU rows: how evaluations were launched, and the device-memory bytes of one evaluation
    // (gpu/model/ModelLayout.h) that eval_ms is measured against.
    if (!r.backend.launch.empty())
        row.insert(QStringLiteral("launch"), QString::fromStdString(r.backend.launch));
    if (r.backend.trafficBytes > 0)
        row.insert(QStringLiteral("hbm_bytes"), r.backend.trafficBytes);
    if (r.oneThreadEvalMs > 0 && r.evalMs > 0) {
        const double speedup = r.oneThreadEvalMs / r.evalMs;
        row.insert(QStringLiteral("speedup"), speedup);
        row.insert(QStringLiteral("parallel_efficiency"), speedup / std::max(1, r.backend.threads));
    }
    return row;
}

PupilBenchmarkRow runPupilBenchmark(const PupilBenchmarkSettings& settings)
{
    PresetOptions options;
    options.grid = settings.grid;
    options.seed = settings.seed;
    const PresetCase preset = makePreset("pupil", options);
    ReconstructionRequest request;
    request.spec = preset.spec;
    request.start = preset.start;
    request.solver = preset.solver;
    request.solver.cancel = settings.cancel;
    request.evaluator.threads = settings.threads;
    request.analysis.computeUncertainty = false; // the fit alone is timed
    const Problem problem(preset.spec);
    PupilBenchmarkRow row;
    row.settings = settings;
    row.grid = problem.gridSize();
    row.planes = problem.planeCount();
    row.pupilSamples = problem.pupilPixelCount();
    row.parameters = int(preset.start.size());
    const FitResult result = reconstruct(request, {}, settings.cancel);
    row.summary = result.solver;
    for (const PlaneResult& p : result.planes)
        row.reducedChiSquare.push_back(p.reducedChiSquare);
    return row;
}

QJsonObject pupilBenchmarkRowJson(const PupilBenchmarkRow& r)
{
    QJsonArray chi;
    for (double v : r.reducedChiSquare)
        chi.append(v);
    return QJsonObject{
        {QStringLiteral("problem"), QStringLiteral("pupil")},
        {QStringLiteral("grid"), r.grid},
        {QStringLiteral("planes"), r.planes},
        {QStringLiteral("pupil_samples"), r.pupilSamples},
        {QStringLiteral("params"), r.parameters},
        {QStringLiteral("threads"), r.settings.threads},
        {QStringLiteral("seed"), QString::number(r.settings.seed)},
        {QStringLiteral("iterations"), r.summary.iterations},
        {QStringLiteral("cost_evaluations"), double(r.summary.costEvaluations)},
        {QStringLiteral("gradient_evaluations"), double(r.summary.gradientEvaluations)},
        {QStringLiteral("seconds"), r.summary.seconds},
        {QStringLiteral("termination"), QString::fromLatin1(terminationName(r.summary.termination))},
        {QStringLiteral("converged"), r.summary.termination == Termination::Converged},
        {QStringLiteral("chi2_per_plane"), chi},
    };
}

VectorialBenchmarkRow runVectorialBenchmark(const VectorialBenchmarkSettings& settings)
{
    if (settings.planes < 1 || settings.evalRepeat < 1)
        throw std::invalid_argument("planes and repeat counts must be at least 1");
    ProblemSpec spec;
    spec.name = "vectorial bench";
    spec.wavelength = 600e-9;
    spec.grid = PupilGrid::centred(settings.grid, 2.0);
    spec.basis.maxOrder = settings.order;
    spec.objective = ObjectiveKind::Poisson;
    spec.model = ImagingModel::Vectorial;
    spec.vectorial.numericalAperture = 1.4;
    spec.vectorial.immersionIndex = 1.515;
    spec.vectorial.sampleIndex = 1.33;
    spec.vectorial.emitterDepth = 1e-6;
    spec.vectorial.fitEmitterDepth = true;
    spec.vectorial.dipole.free = settings.freeDipole;
    for (int k = 0; k < settings.planes; ++k) {
        PlaneSpec plane;
        plane.diversity.kind = DiversityKind::AxialHighNa;
        plane.diversity.axialDistance = settings.planes > 1 ? -2e-6 + 4e-6 * k / (settings.planes - 1) : 0.0;
        plane.diversity.numericalAperture = 1.4;
        plane.diversity.immersionIndex = 1.515;
        plane.flux = 1e4;
        plane.background = 10.0;
        plane.fitFlux = plane.fitBackground = true;
        spec.planes.push_back(plane);
    }
    std::mt19937_64 rng(7);
    const Problem truth(spec);
    const auto images =
        simulateImages(spec, truth.initialParameters(), settings.grid, settings.grid, {NoiseModel::PhotonAndRead, 1.0}, &rng);
    for (size_t k = 0; k < images.size(); ++k)
        spec.planes[k].data = images[k];
    const auto time = [&](const ProblemSpec& s, int* parameters) {
        auto problem = std::make_shared<const Problem>(s);
        EvaluatorOptions options;
        options.precision = settings.precision;
        options.threads = settings.threads;
        auto evaluator = makeEvaluator(BackendKind::Cpu, problem, options, GradientKind::Adjoint);
        std::vector<double> x = problem->initialParameters(), gradient(x.size());
        evaluator->evaluate(x.data(), gradient.data()); // first touch outside the timing
        std::vector<double> times;
        for (int r = 0; r < settings.evalRepeat; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            evaluator->evaluate(x.data(), gradient.data());
            times.push_back(secondsSince(t0) * 1e3);
        }
        *parameters = problem->parameterCount();
        return median(times);
    };
    VectorialBenchmarkRow row;
    row.settings = settings;
    row.fields = settings.freeDipole ? 6 : 2;
    row.vectorialMs = time(spec, &row.parameters);
    ProblemSpec scalar = spec;
    scalar.model = ImagingModel::Scalar;
    scalar.vectorial.fitEmitterDepth = false;
    int scalarParameters = 0;
    row.scalarMs = time(scalar, &scalarParameters);
    return row;
}

QJsonObject vectorialBenchmarkRowJson(const VectorialBenchmarkRow& row)
{
    return QJsonObject{
        {QStringLiteral("problem"), QStringLiteral("vectorial")},
        {QStringLiteral("grid"), row.settings.grid},
        {QStringLiteral("planes"), row.settings.planes},
        {QStringLiteral("order"), row.settings.order},
        {QStringLiteral("fields"), row.fields},
        {QStringLiteral("params"), row.parameters},
        {QStringLiteral("threads"), row.settings.threads},
        {QStringLiteral("precision"), QString::fromLatin1(precisionName(row.settings.precision))},
        {QStringLiteral("eval_ms"), row.vectorialMs},
        {QStringLiteral("scalar_eval_ms"), row.scalarMs},
        {QStringLiteral("ratio_to_scalar"), row.scalarMs > 0.0 ? row.vectorialMs / row.scalarMs : 0.0},
    };
}

} // namespace wfs
