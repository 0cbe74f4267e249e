#include "settings/SolverSettings.h"

#include <string>

namespace wfs {

std::optional<SettingsError> SolverSettings::stagesError() const
{
    for (size_t i = 0; i < stages.size(); ++i)
        if (!zernike::orderError(stages[i]).empty() || (i > 0 && stages[i] <= stages[i - 1]))
            return SettingsError("stages",
                                 "must be increasing Zernike orders from 1 to " + std::to_string(zernike::kMaxOrder) + " (e.g. 2,4,6)");
    return std::nullopt;
}

std::optional<SettingsError> SolverSettings::limitsError() const
{
    if (threads < 1 || threads > 1024)
        return SettingsError("threads", "must be between 1 and 1024 (got " + std::to_string(threads) + ")");
    if (maxIterations < 1)
        return SettingsError("max-iterations", "must be at least 1");
    if (!(gradientTolerance >= 0.0))
        return SettingsError("gtol", "must not be negative");
    if (!(functionTolerance >= 0.0))
        return SettingsError("ftol", "must not be negative");
    return std::nullopt;
}

std::optional<SettingsError> SolverSettings::firstError() const
{
    if (auto error = stagesError())
        return error;
    return limitsError();
}

std::vector<int> fittedOrders(const ModelSettings& model, const SolverSettings& solver)
{
    if (solver.stages.empty()) {
        if (auto error = model.orderError())
            throw *error;
        return {model.order};
    }
    if (auto error = solver.stagesError())
        throw *error;
    return solver.stages;
}

void settleOrder(ModelSettings& model, const SolverSettings& solver)
{
    if (!solver.stages.empty() && !solver.stagesError()) // bad stages are refused by their own name, not as the order
        model.order = solver.stages.back();
}

void checkSettings(const ModelSettings& model, const SolverSettings& solver)
{
    if (fittedOrders(model, solver).back() != model.order)
        throw SettingsError("order", std::to_string(model.order) + " differs from the last coarse-to-fine stage, "
                                         + std::to_string(solver.stages.back()) + ", which is the fitted order");
    checkPupilFunctionSettings(model);
    checkSolverSettings(solver);
}

void checkPupilFunctionSettings(const ModelSettings& model)
{
    if (auto error = model.pupilFunctionError())
        throw *error;
    if (auto error = model.imagingModelError())
        throw *error;
}

void checkSolverSettings(const SolverSettings& solver)
{
    if (auto error = solver.limitsError())
        throw *error;
}

} // namespace wfs
