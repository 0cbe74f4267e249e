#include "engine/Benchmark.h"

#include "engine/CompositeFits.h"
#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"

#include <QJsonArray>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
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

// One row's problem and evaluator, made before any row is timed.
struct OofBenchmarkCase {
    PresetCase preset;
    std::unique_ptr<ModelEvaluator> evaluator;
    std::vector<double> gradient;
    std::vector<double> evalTimes, costTimes;
};

OofBenchmarkCase prepareOofBenchmark(const OofBenchmarkSettings& settings, OofBenchmarkRow& row)
{
    if (settings.repeat < 1 || settings.evalRepeat < 1)
        throw std::invalid_argument("repeat counts must be at least 1");
    row.settings = settings;
    const auto setupStart = std::chrono::steady_clock::now();
    PresetOptions presetOptions;
    presetOptions.grid = settings.grid;
    presetOptions.order = settings.order;
    presetOptions.seed = settings.seed;
    OofBenchmarkCase c{makePreset("oof", presetOptions), nullptr, {}, {}, {}};
    auto problem = std::make_shared<const Problem>(c.preset.spec);
    c.evaluator = makeEvaluator(settings.backend, problem, settings.evaluator, settings.gradient);
    c.gradient.resize(size_t(problem->parameterCount()));
    c.evaluator->evaluate(c.preset.start.data(), c.gradient.data()); // first touch outside the timing
    row.setupSeconds = secondsSince(setupStart);
    row.parameters = problem->parameterCount();
    return c;
}

// One cost-and-gradient and one cost-only evaluation, timed.
void timeOneEvaluation(OofBenchmarkCase& c)
{
    auto t0 = std::chrono::steady_clock::now();
    c.evaluator->evaluate(c.preset.start.data(), c.gradient.data());
    c.evalTimes.push_back(secondsSince(t0) * 1e3);
    t0 = std::chrono::steady_clock::now();
    c.evaluator->evaluate(c.preset.start.data(), nullptr);
    c.costTimes.push_back(secondsSince(t0) * 1e3);
}

void solveOofBenchmark(OofBenchmarkCase& c, OofBenchmarkRow& row)
{
    const OofBenchmarkSettings& settings = row.settings;
    SolverOptions solver = c.preset.solver;
    solver.optimizer = settings.optimizer;
    solver.maxIterations = settings.maxIterations;
    if (settings.gradientTolerance)
        solver.gradientTolerance = *settings.gradientTolerance;
    if (settings.functionTolerance)
        solver.functionTolerance = *settings.functionTolerance;
    solver.cancel = settings.cancel;
    std::vector<double> times;
    for (int r = 0; settings.solve && r < settings.repeat; ++r) {
        row.summary = minimise(*c.evaluator, c.preset.start, solver);
        times.push_back(row.summary.seconds);
        if (row.summary.termination == Termination::Failed)
            throw std::runtime_error("grid " + std::to_string(settings.grid) + ": " + row.summary.message);
        if (row.summary.termination == Termination::Cancelled)
            break;
    }
    row.solved = settings.solve && !times.empty();
    row.seconds = median(times);
}
} // namespace

OofBenchmarkRow runOofBenchmark(const OofBenchmarkSettings& settings)
{
    return runOofBenchmarks({settings}).front();
}

std::vector<OofBenchmarkRow> runOofBenchmarks(const std::vector<OofBenchmarkSettings>& settings)
{
    std::vector<OofBenchmarkRow> rows(settings.size());
    std::vector<OofBenchmarkCase> cases;
    for (size_t k = 0; k < settings.size(); ++k)
        cases.push_back(prepareOofBenchmark(settings[k], rows[k]));
    // The rows' evaluations take turns, so that a shared host's drift (another job starting, the clock slowing)
    // falls on every row alike and the ratio of two rows' medians is a paired comparison. A turn is a few
    // evaluations after one untimed one, so that each row is timed with its own data in the caches, as in a fit,
    // not with the previous row's.
    constexpr int kTimedPerTurn = 5;
    int repeats = 0;
    for (const OofBenchmarkSettings& s : settings)
        repeats = std::max(repeats, s.evalRepeat);
    for (int first = 0; first < repeats; first += kTimedPerTurn)
        for (size_t k = 0; k < cases.size(); ++k) {
            const int timed = std::min(kTimedPerTurn, settings[k].evalRepeat - first);
            if (timed > 0 && cases.size() > 1)
                cases[k].evaluator->evaluate(cases[k].preset.start.data(), cases[k].gradient.data());
            for (int r = 0; r < timed; ++r)
                timeOneEvaluation(cases[k]);
        }
    for (size_t k = 0; k < cases.size(); ++k) {
        OofBenchmarkRow& row = rows[k];
        row.evalMs = median(cases[k].evalTimes);
        row.costMs = median(cases[k].costTimes);
        row.fftMs = cases[k].evaluator->measureFftMs(settings[k].evalRepeat);
        solveOofBenchmark(cases[k], row);
        row.backend = cases[k].evaluator->info();
    }
    return rows;
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

namespace {
// A fit's row keys, shared by the pupil rows: problem, the solver's counts, time and end, and chi2 per plane.
QJsonObject fitRowJson(const SolverSummary& summary, const std::vector<double>& reducedChiSquare)
{
    QJsonArray chi;
    for (double v : reducedChiSquare)
        chi.append(v);
    return QJsonObject{
        {QStringLiteral("problem"), QStringLiteral("pupil")},
        {QStringLiteral("iterations"), summary.iterations},
        {QStringLiteral("cost_evaluations"), double(summary.costEvaluations)},
        {QStringLiteral("gradient_evaluations"), double(summary.gradientEvaluations)},
        {QStringLiteral("seconds"), summary.seconds},
        {QStringLiteral("termination"), QString::fromLatin1(terminationName(summary.termination))},
        {QStringLiteral("converged"), summary.termination == Termination::Converged},
        {QStringLiteral("chi2_per_plane"), chi},
    };
}

PupilRecipeRow recipeRow(const std::string& run, const FitResult& result)
{
    PupilRecipeRow row;
    row.run = run;
    row.summary = result.solver;
    for (const PlaneResult& p : result.planes)
        row.reducedChiSquare.push_back(p.reducedChiSquare);
    row.apertureScale = result.samplingFit ? result.samplingFit->scale : 1.0;
    row.regularization = result.regularization;
    row.parameters = int(result.solver.parameters.size());
    return row;
}
} // namespace

QJsonObject pupilBenchmarkRowJson(const PupilBenchmarkRow& r)
{
    QJsonObject row = fitRowJson(r.summary, r.reducedChiSquare);
    row.insert(QStringLiteral("grid"), r.grid);
    row.insert(QStringLiteral("planes"), r.planes);
    row.insert(QStringLiteral("pupil_samples"), r.pupilSamples);
    row.insert(QStringLiteral("params"), r.parameters);
    row.insert(QStringLiteral("threads"), r.settings.threads);
    row.insert(QStringLiteral("seed"), QString::number(r.settings.seed));
    return row;
}

std::vector<PupilRecipeRow> runPupilRecipeBenchmark(const ReconstructionRequest& given, bool steps, const std::atomic<bool>* cancel)
{
    ReconstructionRequest request = given;
    request.analysis.computeUncertainty = false; // the fits alone are timed
    request.analysis.psfAnalysis = false;
    std::vector<PupilRecipeRow> rows;
    rows.push_back(recipeRow("recipe", reconstruct(request, {}, cancel)));
    if (!steps || !request.fitSampling || !hasZonalTerms(request.spec.phaseModel, request.spec.amplitudeModel))
        return rows;
    // By hand: the Zernike model's sampling fit, then the zonal pupil from its start at the scale found.
    ReconstructionRequest zernike = request;
    zernike.spec = profiledModel(request.spec);
    zernike.autoRegularization = false;
    zernike.start.clear();
    const FitResult profiled = reconstruct(zernike, {}, cancel);
    rows.push_back(recipeRow("zernike profile", profiled));
    rows.back().regularization = std::nan(""); // no zonal terms: no weight (null in the row)
    ReconstructionRequest zonal = request;
    zonal.fitSampling = false;
    zonal.spec = withApertureScale(request.spec, rows.back().apertureScale);
    zonal.start.clear();
    PupilRecipeRow second = recipeRow("zonal at the profiled scale", reconstruct(zonal, {}, cancel));
    second.apertureScale = rows.back().apertureScale;
    rows.push_back(second);
    return rows;
}

QJsonObject pupilRecipeRowJson(const PupilRecipeRow& r, const std::string& caseName)
{
    QJsonObject row = fitRowJson(r.summary, r.reducedChiSquare);
    row.insert(QStringLiteral("case"), QString::fromStdString(caseName));
    row.insert(QStringLiteral("run"), QString::fromStdString(r.run));
    row.insert(QStringLiteral("params"), r.parameters);
    row.insert(QStringLiteral("cost"), r.summary.finalCost);
    row.insert(QStringLiteral("aperture_scale"), r.apertureScale);
    row.insert(QStringLiteral("weight"), r.regularization);
    return row;
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
