#pragma once
// Batch processing: many inputs, one set of settings, one result JSON per input and a summary. What is
// not process management lives here, so that `wavefront-cli batch` (its own worker processes) and
// `wavefront-cli batch --summarize-only` (after GNU parallel or a Slurm array ran `reconstruct` once per
// input) read the same inputs, decide the same way which inputs are done, and write the same summary.
//
//   Session settings = loadBatchSettings("settings.json");           // throws SessionError / SettingsError
//   std::vector<BatchInput> inputs = resolveBatchInputs({"data/*.fits"}, "");  // throws BatchError
//   for (const BatchInput& in : inputs) if (!isBatchInputDone(in, dir)) { ... run it ... }
//   std::vector<BatchRow> rows = batchRows(inputs, dir);
//   writeFileAtomically(dir + "/summary.csv", batchSummaryCsv(rows), true);
//
// Layout of the output folder DIR: DIR/NAME.json (the result, written all or nothing through
// io/OutputTransaction.h, so a file there is complete or absent), DIR/NAME.log (what the run printed;
// its last "error:" line is the reason of a failure), DIR/summary.csv, DIR/field-map.png.
#include "engine/Workflow.h"
#include "io/Session.h"

#include <QByteArray>
#include <QJsonObject>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

// An input list that cannot be used (unreadable manifest, unknown column, a glob that matches nothing,
// two inputs with one name); the batch stops before any input runs.
class BatchError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The per-input overrides a manifest may carry, as column names (the same spelling and values as
// `reconstruct`'s options): defocus, planes, wavelength, sampling, z-step, focus-plane, the settings table's
// manifest columns (settings/SettingsTable.h, SettingDescription::manifestColumn).
const std::vector<std::string>& batchOverrideNames();

struct BatchInput {
    std::string name;                             // unique in the batch; DIR/NAME.json is its result
    std::string path;                             // the image file (a manifest's relative paths resolved against its folder)
    std::optional<double> fieldX, fieldY;         // field position, as the manifest gives it (its own unit)
    std::map<std::string, std::string> overrides; // column -> text, see batchOverrideNames()
    std::string source;                           // where it was listed, e.g. "beads.csv line 4"
    std::string error;                            // set when the row itself is unusable (a bad field position...); not run then
};

// Inputs from command-line arguments, each one of: a glob ("data/*.fits", matched in its folder,
// sorted), a CSV manifest (*.csv: a header row with a `file` (or `path`) column and optional `name`,
// `x`, `y` (or `field_x`, `field_y`) and override columns; '#' lines are comments), a list file
// (*.txt, *.list, *.lst: one path per line), or an image file. `manifest`, when not empty, is read as
// one more manifest. Names are the file names without image extensions unless a manifest names them.
// Throws BatchError (naming the file and line) for what makes the whole list unusable.
std::vector<BatchInput> resolveBatchInputs(const std::vector<std::string>& arguments, const std::string& manifest = {});

// The JSON a worker process gets its one input as, and back.
QJsonObject batchInputToJson(const BatchInput& input);
BatchInput batchInputFromJson(const QJsonObject& object); // throws BatchError

// Settings for every input of a batch: a saved session or a settings file of the same format whose
// "inputs" may be absent. The session's own inputs are dropped; metadata its inputs' headers or
// sidecars supplied is dropped too (each input's own headers give it), while values a person set
// (command line, desktop) stay; the use and defocus the person set for plane i of its first input
// apply to plane i of each input. Throws SessionError naming the file and the key (a setting out of
// range included), or DatasetError for metadata outside its plausible range.
Session loadBatchSettings(const std::string& path);

// The metadata a person set (its origin "user", "command line" or "batch manifest", or none), with its origins; values
// files supplied are dropped. What carries over to another input: each batch input's, and a stack the Field tab loads,
// whose own headers fill what is unset.
DatasetMetadata personSetMetadata(const DatasetMetadata& from);

// How many fits run at once. The rule: every hardware thread busy and none shared, i.e. jobs x threads per fit
// <= hardware threads. Without --jobs (requested 0): hardware threads / threads per fit, at least 1 and at most
// the inputs waiting (an idle worker helps nobody). A requested count is kept, with a warning when it shares cores.
struct BatchJobs {
    int jobs = 1;
    std::string warning; // empty unless the requested jobs oversubscribe the machine
};
BatchJobs batchJobs(int requested, int threadsPerFit, int hardwareThreads, size_t pending);

// A manifest row's overrides (column -> text) applied to `data` as `reconstruct`'s options of the same names are
// (io/SettingOptions.h, applyMetadataOptions: one parser, one message), with the origin "batch manifest". Throws
// DatasetError naming the column ("wavelength: ...", as the command line's message names "--wavelength").
void applyManifestOverrides(Dataset& data, const std::map<std::string, std::string>& overrides);

// The settings with one input loaded, its overrides applied, through the one workflow (prepareRun).
// Throws DatasetError / SettingsError / std::runtime_error with a message for the summary.
PreparedRun prepareBatchRun(const Session& settings, const BatchInput& input);

// The same for a stack held in several files (one per plane, in plane order; live mode), without overrides;
// the files' reading warnings (a damaged file's "kept the N planes before it") lead its messages.
PreparedRun prepareStackRun(const Session& settings, const std::vector<std::string>& paths);

// Result and log paths of an input in `outDir`.
std::string batchResultPath(const std::string& outDir, const BatchInput& input);
std::string batchLogPath(const std::string& outDir, const BatchInput& input);

// A result file that is complete: valid JSON with the result's coefficients and solver record. A
// missing, truncated or foreign file gives std::nullopt (and the input is run again).
std::optional<QJsonObject> readCompleteResult(const std::string& path);
bool isBatchInputDone(const BatchInput& input, const std::string& outDir);

// What a result of `batch` records of what it was made from (key "batch_input" of DIR/NAME.json): the
// input's absolute path, bytes, modification time (UTC) and SHA-256, the SHA-256 of the settings file
// (empty without one) and the input's manifest overrides. Throws nothing; an unreadable input has an
// empty sha256.
QJsonObject batchInputIdentity(const BatchInput& input, const std::string& settingsPath);
// Empty when a complete result was made from this input with these settings (`identity` as
// batchInputIdentity gives it now); otherwise why it cannot be reused: the result belongs to another
// input, the input changed since, or the settings changed since. A result without the record (written by
// `reconstruct --json`, as in the GNU parallel recipe) cannot be checked and is reused (empty).
std::string staleResultReason(const QJsonObject& result, const QJsonObject& identity);

struct BatchRow {
    std::string name, file;
    std::optional<double> fieldX, fieldY;
    std::string status;                                    // "ok", "poor-fit" (FitResult::verdict), "failed" or "not-run"
    std::string error;                                     // the reason when not "ok"
    std::string termination;                               // converged, max-iterations, stalled, cancelled, failed
    std::string ordering;                                  // of the coefficient indices
    std::vector<std::pair<int, double>> coefficientsWaves; // (index in `ordering`, waves)
    double rmsWaves = 0.0, strehl = 0.0, reducedChiSquare = 0.0, seconds = 0.0;
};
// One row per input, in input order, from what `outDir` holds (results and logs).
std::vector<BatchRow> batchRows(const std::vector<BatchInput>& inputs, const std::string& outDir);
// The summary CSV: a header row, then one row per input: name, file, field_x, field_y, status,
// termination, rms_waves, strehl, reduced_chi_square (mean over planes), one `<ordering>_<index>_waves`
// column per coefficient any result has, seconds (the solver's), error.
QByteArray batchSummaryCsv(const std::vector<BatchRow>& rows);

// The reason a run failed, from its log: the text after the last "error: ", else its last line.
std::string failureReasonFromLog(const std::string& logPath);

} // namespace wfs
