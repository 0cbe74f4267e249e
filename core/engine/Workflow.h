#pragma once
// One path from what a user sets to a result, taken by every front end (wavefront-cli, the desktop
// program, sessions and batch): settings (a Session: inputs, metadata, preparation, model, solver) ->
// checked once -> prepared data -> problem -> engine request; and a saved result back from its session.
//
//   PreparedRun run = prepareRun(session);        // throws SettingsError / DatasetError
//   engine.start(run.request);                    // engine/ReconstructionEngine.h
//   FitResult restored = restoreSavedResult(session, run.problem);
#include "engine/ReconstructionEngine.h"
#include "io/Exports.h"
#include "io/Session.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

// A setting out of its range. `setting()` is its name as the command line spells it ("order", "stages",
// "threads"), so each front end can point at its own control; what() is "<setting>: <problem>".
class SettingsError : public std::invalid_argument {
public:
    SettingsError(std::string setting, const std::string& problem)
        : std::invalid_argument(setting + ": " + problem), m_setting(std::move(setting)) { }
    const std::string& setting() const { return m_setting; }

private:
    std::string m_setting;
};

// The fitted Zernike order and the coarse-to-fine stages have one carrier: `solver.stages`, when not
// empty, lists the orders fitted in turn and its last entry *is* the model's order; otherwise
// `model.order` is fitted in one stage. Returns the orders to fit (at least one), after checking them:
// each within 1..zernike::kMaxOrder, strictly increasing.
std::vector<int> fittedOrders(const ModelSettings& model, const SolverSettings& solver);

// The range checks of the orders and the solver settings, in one place (the model's physical quantities
// are checked by Problem). Throws SettingsError.
void checkSettings(const ModelSettings& model, const SolverSettings& solver);
// The solver part alone (threads, iteration limit, tolerances), for runs without model settings (bench).
void checkSolverSettings(const SolverSettings& solver);

struct PreparedRun {
    Dataset dataset;          // the input with its preparation record updated
    BuiltProblem problem;     // the problem the engine fits: prepared planes, sampling, plane map
    ReconstructionRequest request;
    ExportContext context;    // pupil, sampling and inputs, for export headers
    std::vector<DatasetMessage> messages; // preparation and problem warnings and notes, in order
};

// Checks the settings, prepares the data, builds the problem and fills the request (solver settings,
// stages, analysis). Throws SettingsError for a setting out of range, DatasetError for data that cannot
// be fitted as set (no wavelength, no plane taking part, planes of different sizes...).
PreparedRun prepareRun(Session session);

// A session's saved result re-evaluated on its re-prepared problem (sessions keep the fitted parameters,
// not the images), with the solver's record (iterations, time, termination) read back from the saved
// result. Throws std::runtime_error when the saved parameters do not fit the problem.
FitResult restoreSavedResult(const Session& session, const BuiltProblem& problem);

} // namespace wfs
