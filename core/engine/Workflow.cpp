#include "engine/Workflow.h"

#include "base/Cancellation.h"

#include "io/Assumptions.h"
#include "io/ImageReaders.h"
#include "io/ResultJson.h"

#include <QDateTime>

#include <algorithm>

namespace wfs {

namespace {

// The engine's request for `problem`: its spec and, unless stages seed each other from the lowest order up, its start
// (start values belong to the full-order problem); then the solver settings, the headline's defocus (assumed removed
// for defocus-diverse data when the settings leave it open) and every assumption, which the result carries.
void fillRequest(const BuiltProblem& problem, const SolverSettings& solver, std::vector<Assumption> assumptions,
                 ReconstructionRequest& request)
{
    request.spec = problem.spec;
    if (solver.stages.empty())
        request.start = problem.start;
    applySolverSettings(solver, request);
    request.analysis.removeDefocus = headlineRemovesDefocus(solver, problem.spec);
    if (!solver.removeDefocus && request.analysis.removeDefocus)
        assumptions.push_back({"remove-defocus", "yes",
                               "the planes are at different defocus: the fitted defocus is where focus sits in the stack, not an "
                               "aberration of the optics (the figures with defocus are beside the headline)"});
    request.analysis.assumptions = std::move(assumptions);
}

// Every assumption of the run said first among its messages, as the report and the desktop's log print them.
void sayAssumptions(PreparedRun& run)
{
    std::vector<DatasetMessage> said;
    for (const Assumption& a : run.request.analysis.assumptions)
        said.push_back({MessageLevel::Info, {}, assumptionText(a)});
    run.messages.insert(run.messages.begin(), said.begin(), said.end());
}

// A noise model with nothing to stand on: no read noise, and a border without noise (a noise-free simulation, an image
// clipped at its background) on a plane that takes part. Empty when the noise model has data.
std::string degenerateNoiseNote(const Dataset& dataset, const ProblemSpec& spec)
{
    if (spec.objective == ObjectiveKind::LeastSquares || spec.readNoise > 0.0 || !dataset.preparation)
        return {};
    for (int index : usedPlanes(dataset))
        if (!(dataset.preparation->planes[size_t(index)].backgroundSigma > 0.0))
            return "plane " + std::to_string(index)
                   + "'s border is constant (no noise: a noise-free or clipped image), so the noise model has nothing to stand on; "
                     "give the camera's read noise (--read-noise) or fit least squares";
    return {};
}

// prepareRun for a simulated session: the preset's planes and problem, the same checks and stages as a file's.
PreparedRun prepareSimulatedRun(const Session& session)
{
    const SimulatedSource& source = *session.simulated;
    if (source.readNoise) // the range --read-noise is held to, for a session made in memory too
        if (const std::string error = plausibilityError(Setting::ReadNoise, *source.readNoise); !error.empty())
            throw SettingsError("read-noise", error);
    PresetCase c = makePreset(source.preset, source.options); // refuses a grid it could not hold before simulating
    // The order is the preset's grid and basis; the stages are checked against it.
    ModelSettings model;
    model.order = c.spec.basis.maxOrder;
    settleOrder(model, session.solver);
    checkSettings(model, session.solver);
    PreparedRun run;
    run.context = presetExportContext(c, source.preset);
    BuiltProblem& problem = run.problem;
    problem.spec = std::move(c.spec);
    if (source.objective)
        problem.spec.objective = *source.objective;
    if (source.readNoise)
        problem.spec.readNoise = *source.readNoise;
    problem.spec.basis.maxOrder = model.order;
    problem.start = std::move(c.start);
    problem.samplingQ = run.context.samplingQ;
    for (int k = 0; k < int(problem.spec.planes.size()); ++k)
        problem.planes.push_back(k);
    run.request.solver = c.solver; // the preset's stopping rules, under the session's solver settings
    fillRequest(problem, session.solver, {}, run.request);
    sayAssumptions(run);
    run.truth = std::move(c.truth);
    run.noiseDescription = std::move(c.noiseDescription);
    return run;
}

} // namespace

PreparedRun prepareRun(Session session)
{
    if (session.simulated)
        return prepareSimulatedRun(session);
    checkSettings(session.model, session.solver);                   // settled where they were read: model.order is the fitted order
    if (const auto error = session.dataset.preprocess.firstError()) // a session made in memory (the desktop) is held too
        throw *error;

    PreparedRun run;
    const std::vector<Assumption> assumptions = assumeUnset(session.dataset);
    run.messages = prepare(session.dataset);
    run.problem = buildProblem(session.dataset, session.model);
    // The problem is built on the same preparation, whose notes it repeats: each is said once.
    for (const DatasetMessage& m : run.problem.messages)
        if (std::none_of(run.messages.begin(), run.messages.end(),
                         [&](const DatasetMessage& said) { return said.level == m.level && said.text == m.text; }))
            run.messages.push_back(m);
    run.dataset = std::move(session.dataset);

    fillRequest(run.problem, session.solver, assumptions, run.request);
    run.request.analysis.degenerateNoise = degenerateNoiseNote(run.dataset, run.problem.spec);
    sayAssumptions(run);
    run.request.autoRegularization = session.model.regularization == 0.0;
    run.request.fitSampling = session.model.fitSampling;

    run.context.pupil = run.problem.spec.pupil;
    run.context.samplingQ = run.problem.samplingQ;
    run.context.pupilSampleSpacing = run.problem.spec.grid.spacing;
    run.context.apertureDiameter = run.dataset.metadata.aperture.value_or(0.0);
    // A microscope's pixel in the sample plane (with an NA the pitch is the sample's; with an f-number, the detector's):
    // the voxel size of the PSF exports, which deconvolution and localisation software need.
    if (run.dataset.metadata.numericalAperture && run.dataset.metadata.pixelPitch) {
        run.context.samplePixelPitch = *run.dataset.metadata.pixelPitch;
        run.context.numericalAperture = *run.dataset.metadata.numericalAperture;
        run.context.immersionIndex = run.dataset.metadata.immersionIndex;
    }
    run.context.dataUnit = run.dataset.preprocess.normalise ? std::string("relative") : run.dataset.metadata.dataUnit;
    for (const DatasetFile& file : run.dataset.files)
        run.context.inputs.push_back(file.path);
    return run;
}

bool headlineRemovesDefocus(const SolverSettings& solver, const ProblemSpec& spec)
{
    if (solver.removeDefocus)
        return *solver.removeDefocus;
    std::vector<double> amounts;
    for (const PlaneSpec& plane : spec.planes)
        amounts.push_back(plane.diversity.amount());
    return std::any_of(amounts.begin(), amounts.end(), [&](double a) { return a != amounts.front(); });
}

SolverSettings presetSolverSettings(const std::string& name)
{
    const PresetDefaults defaults = presetDefaults(name);
    SolverSettings solver;
    solver.maxIterations = SolverOptions{}.maxIterations;
    solver.gradientTolerance = defaults.gradientTolerance;
    solver.functionTolerance = defaults.functionTolerance;
    return solver;
}

Session simulatedSession(const std::string& name)
{
    Session session;
    session.simulated = SimulatedSource{};
    session.simulated->preset = name;
    session.solver = presetSolverSettings(name);
    return session;
}

PresetSession presetSession(const std::string& name, const PresetOptions& options)
{
    const PresetCase c = makePreset(name, options);
    throwIfCancelled(options.cancel);
    const QByteArray bytes = presetFitsBytes(c, name, options.seed);
    throwIfCancelled(options.cancel);
    const std::string source = name + " (simulated, seed " + std::to_string(options.seed) + ")";
    PresetSession preset;
    preset.messages =
        addImages(preset.session.dataset,
                  readFitsMemory(reinterpret_cast<const std::uint8_t*>(bytes.constData()), size_t(bytes.size()), source), source);
    preset.session.model.order = c.spec.basis.maxOrder;
    preset.session.solver = presetSolverSettings(name);
    applyPresetSettings(name, preset.session.model, preset.session.solver);
    preset.truth = c.truth;
    preset.noiseDescription = c.noiseDescription;
    preset.wavelength = c.spec.wavelength;
    preset.fitsBytes = bytes;
    return preset;
}

void checkSettingsBeforePixels(const Session& session)
{
    checkSettings(session.model, session.solver);
    checkedSamplingQ(session.dataset.metadata, session.model);
    const std::vector<int> used = usedPlanes(session.dataset);
    for (int index : used)
        checkPlaneDefocus(session.dataset, session.model, index, used.size() == 1);
}

std::vector<std::string> warningTexts(const std::vector<DatasetMessage>& messages)
{
    std::vector<std::string> texts;
    for (const DatasetMessage& m : messages)
        if (m.level == MessageLevel::Warning)
            texts.push_back(m.text);
    return texts;
}

void prependWarnings(FitResult& result, const std::vector<std::string>& warnings)
{
    std::vector<std::string> all;
    for (const std::string& w : warnings)
        if (std::find(all.begin(), all.end(), w) == all.end())
            all.push_back(w);
    for (const std::string& w : result.warnings)
        if (std::find(all.begin(), all.end(), w) == all.end())
            all.push_back(w);
    result.warnings = std::move(all);
}

FitResult restoreSavedResult(const Session& session, const BuiltProblem& built, bool psfAnalysis)
{
    const std::vector<double>& parameters = session.resultParameters;
    // A sampling fit's result belongs to the spec at its aperture scale.
    FitResult sampled;
    sampled.samplingFit = samplingFitFromJson(session.result);
    auto problem = std::make_shared<const Problem>(fittedSpec(built.spec, sampled));
    if (int(parameters.size()) != problem->parameterCount())
        throw std::runtime_error("the saved result has " + std::to_string(parameters.size()) + " parameters, the session's model "
                                 + std::to_string(problem->parameterCount()) + "; the result was not restored");
    auto evaluator = makeEvaluator(BackendKind::Cpu, problem, {}, GradientKind::Adjoint);
    SolverSummary summary = solverSummaryFromJson(session.result);
    summary.parameters = parameters;
    summary.finalCost = evaluator->evaluate(parameters.data(), nullptr);
    summary.message = "restored from the session";
    AnalysisOptions analysis;
    analysis.removeDefocus = headlineRemovesDefocus(session.solver, built.spec);
    analysis.computeUncertainty = session.solver.computeUncertainty;
    analysis.psfAnalysis = psfAnalysis;
    FitResult result = analyseFit(*evaluator, summary, session.solver.gradient, analysis);
    result.samplingFit = sampled.samplingFit;
    return result;
}

SessionRun makeRun(const FitResult& result, const ModelSettings& model, const SolverSettings& solver, std::string name)
{
    SessionRun run;
    run.name = std::move(name);
    run.time = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    run.model = model;
    run.solver = solver;
    run.result = resultToJson(result);
    run.parameters = result.solver.parameters;
    return run;
}

FitResult restoreRun(const Session& session, const SessionRun& run)
{
    Session settings;
    settings.dataset = session.dataset;
    settings.model = run.model;
    settings.solver = run.solver;
    settings.result = run.result;
    settings.resultParameters = run.parameters;
    settings.simulated = session.simulated;
    const PreparedRun prepared = prepareRun(settings);
    return restoreSavedResult(settings, prepared.problem);
}

RestoredSession restoreSession(const Session& session, bool psfAnalysis)
{
    RestoredSession restored;
    if (!session.resultParameters.empty()) {
        try {
            PreparedRun run = prepareRun(session);
            restored.result = restoreSavedResult(session, run.problem, psfAnalysis);
            restored.run = std::move(run);
        } catch (const std::exception& e) {
            restored.resultError = e.what();
        }
    }
    for (const SessionRun& record : session.runs) {
        RestoredRun entry{record, std::nullopt, {}};
        try {
            entry.result = restoreRun(session, record);
        } catch (const std::exception& e) {
            entry.error = e.what();
        }
        restored.runs.push_back(std::move(entry));
    }
    return restored;
}

} // namespace wfs
