#include "engine/Workflow.h"

#include "io/ResultJson.h"
#include "optics/Zernike.h"

namespace wfs {

std::vector<int> fittedOrders(const ModelSettings& model, const SolverSettings& solver)
{
    const std::string range = "between 1 and " + std::to_string(zernike::kMaxOrder);
    if (solver.stages.empty()) {
        if (model.order < 1 || model.order > zernike::kMaxOrder)
            throw SettingsError("order", "must be " + range + " (got " + std::to_string(model.order) + ")");
        return {model.order};
    }
    for (size_t i = 0; i < solver.stages.size(); ++i) {
        const int order = solver.stages[i];
        if (order < 1 || order > zernike::kMaxOrder)
            throw SettingsError("stages", "each order must be " + range + " (got " + std::to_string(order) + ")");
        if (i > 0 && order <= solver.stages[i - 1])
            throw SettingsError("stages", "the orders must increase (got " + std::to_string(solver.stages[i - 1]) + " then "
                                              + std::to_string(order) + ")");
    }
    return solver.stages;
}

// The model's physical quantities (grid, pupil geometry, read noise) are checked where they are used, by
// Problem (optics/Problem.cpp); these are the settings nothing else checks.
void checkSettings(const ModelSettings& model, const SolverSettings& solver)
{
    fittedOrders(model, solver);
    checkSolverSettings(solver);
}

void checkSolverSettings(const SolverSettings& solver)
{
    if (solver.threads < 1 || solver.threads > 1024)
        throw SettingsError("threads", "must be between 1 and 1024 (got " + std::to_string(solver.threads) + ")");
    if (solver.maxIterations < 1)
        throw SettingsError("max-iterations", "must be at least 1");
    if (!(solver.gradientTolerance >= 0.0))
        throw SettingsError("gtol", "must not be negative");
    if (!(solver.functionTolerance >= 0.0))
        throw SettingsError("ftol", "must not be negative");
}

PreparedRun prepareRun(Session session)
{
    checkSettings(session.model, session.solver);
    session.model.order = fittedOrders(session.model, session.solver).back();

    PreparedRun run;
    run.messages = prepare(session.dataset);
    run.problem = buildProblem(session.dataset, session.model);
    run.messages.insert(run.messages.end(), run.problem.messages.begin(), run.problem.messages.end());
    run.dataset = std::move(session.dataset);

    run.request.spec = run.problem.spec;
    // Start values belong to the full-order problem; stages seed each other from the lowest order up.
    if (session.solver.stages.empty())
        run.request.start = run.problem.start;
    applySolverSettings(session.solver, run.request);

    run.context.pupil = run.problem.spec.pupil;
    run.context.samplingQ = run.problem.samplingQ;
    run.context.pupilSampleSpacing = run.problem.spec.grid.spacing;
    for (const DatasetFile& file : run.dataset.files)
        run.context.inputs.push_back(file.path);
    return run;
}

FitResult restoreSavedResult(const Session& session, const BuiltProblem& built)
{
    const std::vector<double>& parameters = session.resultParameters;
    if (parameters.size() != built.start.size())
        throw std::runtime_error("the saved result has " + std::to_string(parameters.size()) + " parameters, the session's model "
                                 + std::to_string(built.start.size()) + "; the result was not restored");
    auto problem = std::make_shared<const Problem>(built.spec);
    auto evaluator = makeEvaluator(BackendKind::Cpu, problem, {}, GradientKind::Adjoint);
    SolverSummary summary = solverSummaryFromJson(session.result);
    summary.parameters = parameters;
    summary.finalCost = evaluator->evaluate(parameters.data(), nullptr);
    summary.message = "restored from the session";
    AnalysisOptions analysis;
    analysis.removeDefocus = session.solver.removeDefocus;
    analysis.computeUncertainty = session.solver.computeUncertainty;
    return analyseFit(*evaluator, summary, session.solver.gradient, analysis);
}

} // namespace wfs
