// The joint fit of a field's beads (engine/FieldRun.h jointFitField): each bead's problem rebuilt through the one
// workflow, then fit/FieldJointFit.h over all of them with the field model's shared terms.
#include "engine/FieldRun.h"

#include "base/Cancellation.h"
#include "fit/FieldJointFit.h"
#include "optics/CpuModel.h"

#include <chrono>

namespace wfs {

namespace {

// Every modelled term but defocus (each bead keeps its own focus): indices into run.model->terms.
std::vector<int> sharedTermSlots(const FieldRun& run)
{
    std::vector<int> sharedSlots;
    for (size_t t = 0; t < run.modelTerms.size(); ++t)
        if (zernike::modeFromIndex(run.modelTerms[t], run.ordering) != ZernikeMode{2, 0})
            sharedSlots.push_back(int(t));
    return sharedSlots;
}

// The bead's problem and its parameters at its own fit, with the parameter of each shared term; nullopt when its
// run is not a single plain fit of the problem prepareRun builds (coarse-to-fine stages, a sampling profile or a
// smoothness search change the problem on the way).
std::optional<JointFieldBead> jointBead(const Session& session, const FieldRun& run, const FieldBead& bead,
                                        const std::vector<int>& sharedSlots, const FieldRunOptions& options)
{
    const PreparedRun prepared = prepareRun(fieldBeadSession(session, bead.detection, options.detection.crop));
    const ReconstructionRequest& request = prepared.request;
    if (request.stages.size() > 1 || request.autoRegularization || request.fitSampling)
        return std::nullopt;
    auto problem = std::make_shared<const Problem>(request.spec);
    if (size_t(problem->parameterCount()) != bead.parameters.size())
        return std::nullopt;
    JointFieldBead joint{std::shared_ptr<ModelEvaluator>(makeCpuEvaluator(problem, request.evaluator)),
                         bead.parameters,
                         {},
                         bead.detection.x,
                         bead.detection.y};
    for (int sharedSlot : sharedSlots) {
        const ZernikeMode mode = zernike::modeFromIndex(run.modelTerms[size_t(sharedSlot)], run.ordering);
        int found = -1;
        for (size_t i = 0; i < problem->parameters().size(); ++i) {
            const ParameterInfo& info = problem->parameters()[i];
            if (info.kind == ParameterKind::Zernike && problem->modes()[size_t(info.index)] == mode)
                found = int(i);
        }
        if (found < 0)
            return std::nullopt; // the term is fixed in this fit
        joint.sharedParameter.push_back(found);
    }
    return joint;
}

// The session's stopping rules, by L-BFGS: the joint problem has every bead's own parameters besides the shared ones.
SolverOptions jointSolverOptions(const Session& session, const std::atomic<bool>* cancel)
{
    SolverOptions solver;
    solver.optimizer = OptimizerKind::Lbfgs;
    solver.maxIterations = session.solver.maxIterations;
    solver.gradientTolerance = session.solver.gradientTolerance;
    solver.functionTolerance = session.solver.functionTolerance;
    solver.cancel = cancel;
    return solver;
}

} // namespace

JointFieldSetup jointFieldSetup(const Session& session, const FieldRun& run, const FieldRunOptions& options)
{
    JointFieldSetup setup;
    if (!run.model)
        return setup;
    setup.terms = sharedTermSlots(run);
    for (const FieldBead& bead : run.beads) {
        if (!bead.inModel)
            continue;
        throwIfCancelled(options.cancel);
        if (std::optional<JointFieldBead> joint = jointBead(session, run, bead, setup.terms, options)) {
            setup.beads.push_back(std::move(*joint));
            setup.separateCost += bead.cost;
        }
    }
    return setup;
}

void jointFitField(const Session& session, FieldRun& run, const FieldRunOptions& options)
{
    const auto start = std::chrono::steady_clock::now();
    const JointFieldSetup setup = jointFieldSetup(session, run, options);
    FieldJointSummary summary;
    for (int sharedSlot : setup.terms)
        summary.sharedTerms.push_back(run.modelTerms[size_t(sharedSlot)]);
    summary.beads = int(setup.beads.size());
    summary.separateCost = setup.separateCost;
    if (setup.terms.empty() || setup.beads.size() < 2) {
        summary.note = "no joint fit: it needs at least two beads fitted by a single plain fit and a shared term";
        run.joint = summary;
        return;
    }
    const JointFieldResult result = fitJointField(setup.beads, *run.model, setup.terms, jointSolverOptions(session, options.cancel));
    throwIfCancelled(options.cancel);
    summary.startCost = result.startCost;
    summary.finalCost = result.finalCost;
    summary.iterations = result.solver.iterations;
    summary.termination = terminationName(result.solver.termination);
    summary.adopted = result.solver.termination != Termination::Failed && result.finalCost < result.startCost;
    summary.jointCovariance = summary.adopted && result.covariance.size() == setup.terms.size();
    if (summary.adopted)
        for (size_t s = 0; s < setup.terms.size(); ++s) {
            FieldTermFit& term = run.model->terms[size_t(setup.terms[s])];
            term.coefficients = result.coefficients[s];
            if (summary.jointCovariance) // scatter beyond the beads' sigmas widens it as it widened the two-step one
                for (size_t i = 0; i < term.covariance.size(); ++i)
                    term.covariance[i] = result.covariance[s][i] * term.covarianceScale;
        }
    summary.note = !summary.adopted
                       ? "the joint fit did not lower the summed cost (" + result.solver.message + "); the two-step model stays"
                   : summary.jointCovariance
                       ? "the joint fit lowered the summed cost; its coefficients and their covariance replace the two-step model's"
                       : "the joint fit lowered the summed cost; its coefficients replace the two-step model's (its covariance "
                         "could not be computed: the two-step one stays)";
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.joint = summary;
}

} // namespace wfs
