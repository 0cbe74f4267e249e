#pragma once
// One path from what a user sets to a result, taken by every front end (wavefront-cli, the desktop
// program, sessions and batch): settings (a Session: inputs, metadata, preparation, model, solver) ->
// checked once -> prepared data -> problem -> engine request; and a saved result back from its session.
//
//   PreparedRun run = prepareRun(session);        // throws SettingsError / DatasetError
//   engine.start(run.request);                    // engine/ReconstructionEngine.h
//   FitResult restored = restoreSavedResult(session, run.problem);
#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "io/Exports.h"
#include "io/Session.h"

#include <optional>
#include <string>
#include <vector>

namespace wfs {

struct PreparedRun {
    Dataset dataset;      // the input with its preparation record updated
    BuiltProblem problem; // the problem the engine fits: prepared planes, sampling, plane map
    ReconstructionRequest request;
    ExportContext context;                // pupil, sampling and inputs, for export headers
    std::vector<DatasetMessage> messages; // preparation and problem warnings and notes, in order
    // A simulated session's (Session::simulated): the injected aberrations and how the data were simulated.
    std::optional<Truth> truth;
    std::string noiseDescription;
};

// Checks the settings, fills what they leave unset (io/Assumptions.h: the focus plane, planes, centring, hot pixels and
// defocus model, each said as an Info message and carried by the result), prepares the data, builds the problem and
// fills the request (solver settings, stages, analysis). Throws SettingsError for a setting out of range, DatasetError for data that cannot
// be fitted as set (no wavelength, no plane taking part, planes of different sizes...). A simulated session's
// planes and problem are the preset's (makePreset, with its grid and order; the dataset stays empty), with the
// objective and read noise it gives; std::invalid_argument for an unknown preset or a grid or order out of range.
PreparedRun prepareRun(Session session);

// Whether the headline RMS, PV and Strehl have defocus removed: as the settings say, else for defocus-diverse data
// (planes at more than one defocus), where the fitted defocus is where focus sits in the stack.
bool headlineRemovesDefocus(const SolverSettings& solver, const ProblemSpec& spec);

// prepareRun's checks that need no pixels: the settings (checkSettings), the metadata (wavelength, plausible values,
// sampling) and the defocus of the planes that take part. For a session whose planes hold headers only
// (ReadLimits::headersOnly), so that a front end says what is missing before it reads a large stack's pixels.
// Throws SettingsError or DatasetError with prepareRun's messages. (A plane that turns out empty when its pixels
// are read stops taking part; the check counts it, so it asks for the defocus of a stack whose other planes are empty.)
void checkSettingsBeforePixels(const Session& session);

// The solver settings a preset runs with when a front end changes none: its stopping rules (presetDefaults) and
// the solver's iteration limit. Throws std::invalid_argument for an unknown name.
SolverSettings presetSolverSettings(const std::string& name);
// A preset's run as a session: its simulated planes (Session::simulated, the model settings the preset's own) and
// solver settings (presetSolverSettings) for prepareRun; a front end sets what its user gave over them. Throws
// std::invalid_argument for an unknown name.
Session simulatedSession(const std::string& name);

// A preset as a session file's data and settings: its planes in memory, read as the FITS cube `wavefront-cli simulate`
// writes (its header is the metadata: wavelength, sampling, defocus, read noise), named `<preset> (simulated, seed S)`,
// with the model and solver settings the preset is made for (its order and stopping rules, applyPresetSettings). For
// front ends that show a preset's planes and fit them as a user's (the Python module's simulate), through prepareRun.
struct PresetSession {
    Session session;
    Truth truth;
    std::string noiseDescription;
    double wavelength = 0.0;              // metres, as simulated (the truth's nm)
    std::vector<DatasetMessage> messages; // reading the planes
    // The cube the planes were read from (presetFitsBytes): a session file keeps paths, not pixels, so a front end
    // that saves this session writes these bytes as its input file.
    QByteArray fitsBytes;
};
// Throws std::invalid_argument for an unknown name or bad options.
PresetSession presetSession(const std::string& name, const PresetOptions& options);

// The texts of the warnings among `messages`.
std::vector<std::string> warningTexts(const std::vector<DatasetMessage>& messages);
// Puts `warnings` (the data's and the run's) before the result's own, each once: the result's "warnings" (its
// JSON, the reports) then say everything the run warned about, not only what the fit found.
void prependWarnings(FitResult& result, const std::vector<std::string>& warnings);

// A session's saved result re-evaluated on its re-prepared problem (sessions keep the fitted parameters,
// not the images), with the solver's record (iterations, time, termination) read back from the saved
// result. With `psfAnalysis`, the result carries the PSF analysis too. Throws std::runtime_error when the
// saved parameters do not fit the problem.
FitResult restoreSavedResult(const Session& session, const BuiltProblem& problem, bool psfAnalysis = false);

// A finished fit as a session keeps it: its result JSON (resultToJson) and parameters, the settings it
// ran with, a name and the time now.
SessionRun makeRun(const FitResult& result, const ModelSettings& model, const SolverSettings& solver, std::string name);
// One of a session's runs re-evaluated on the session's (re-prepared) data with the run's own settings,
// as restoreSavedResult does for the last result. Throws SettingsError, DatasetError or
// std::runtime_error when the run does not fit the data any more.
FitResult restoreRun(const Session& session, const SessionRun& run);

// What a session file brings back beside its data and settings, as every front end restores it: the saved result
// re-evaluated on its re-prepared problem (prepareRun, restoreSavedResult) and each run with its own settings
// (restoreRun). A result or run that no longer fits the data says why instead; nothing throws.
struct RestoredRun {
    SessionRun record;
    std::optional<FitResult> result; // unset when it could not be re-evaluated
    std::string error;               // why not
};
struct RestoredSession {
    std::optional<PreparedRun> run;  // the saved result's problem and export context, with `result`
    std::optional<FitResult> result; // unset when the session has none or it could not be re-evaluated
    std::string resultError;         // why a saved result was not restored
    std::vector<RestoredRun> runs;   // the session's, in its order
};
// With `psfAnalysis`, the saved result carries the PSF analysis (restoreSavedResult).
RestoredSession restoreSession(const Session& session, bool psfAnalysis = false);

} // namespace wfs
