#pragma once
// Session files (JSON): everything needed to redo or continue a reconstruction: the input files (paths
// and SHA-256 checksums, so a changed file is detected), which planes take part and their defocus, the
// metadata, the preparation options, the model and solver settings, and the last result. Pixels are
// not stored; opening a session re-reads the files and re-applies the preparation (which is
// deterministic). The file carries "format": "wavefront-studio-session" and "format_version"; a newer
// version than this program knows is refused with a message saying so.
#include "fit/Results.h"
#include "io/Dataset.h"
#include "io/SimulatedSource.h"
#include "settings/SolverSettings.h"

#include <QByteArray>
#include <QJsonObject>

#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

class SessionError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

constexpr int kSessionFormatVersion = 1;

// One fit of a session, kept so that fits can be compared (e.g. before and after an alignment step):
// its name, when it finished, the settings it ran with, its result as resultToJson() wrote it and its
// problem parameters (to re-evaluate it on the session's data, as for the last result).
struct SessionRun {
    std::string name;
    std::string time; // ISO 8601, UTC
    ModelSettings model;
    SolverSettings solver;
    QJsonObject result;
    std::vector<double> parameters;
};

struct Session {
    Dataset dataset; // on save: files, plane use/defocus, metadata, preprocess options (no pixels)
    ModelSettings model;
    SolverSettings solver;
    QJsonObject result;                   // the last result as resultToJson() wrote it; empty when none
    std::vector<double> resultParameters; // its problem parameters (to re-evaluate model images)
    // Every fit kept, oldest first ("runs"; sessions written before runs existed have none, and a
    // saved result then reads back as one run named "saved result").
    std::vector<SessionRun> runs;
    // Set when the data are a preset's simulation (wavefront-cli reconstruct --preset): the dataset is then empty
    // and prepareRun remakes the planes from this ("simulated" in the file); the model settings are the preset's.
    std::optional<SimulatedSource> simulated;
};

// Serialises; input paths are stored absolute and relative to the session file's folder.
QJsonObject sessionToJson(const Session& session, const std::string& sessionPath);
// Parses without touching the input files. Throws SessionError (naming `source`) for malformed JSON
// content, a wrong "format", or a newer "format_version".
Session sessionFromJson(const QJsonObject& object, const std::string& source);

// The bytes saveSession writes (the session JSON, input paths relative to `path`'s folder).
QByteArray sessionBytes(const std::string& path, const Session& session);
// Writes through io/OutputTransaction.h (all or nothing, every write checked); refuses to replace a file unless `overwrite`.
// Throws SessionError.
void saveSession(const std::string& path, const Session& session, bool overwrite);

struct OpenedSession {
    Session session;                        // dataset re-loaded (pixels) and re-prepared
    std::vector<DatasetMessage> messages;   // per file: missing, unreadable, changed since saved (checksum), plane count differs
    std::vector<std::string> sessionValues; // the metadata fields (origin keys) whose values the session file gave
};
// Reads the session and re-loads its inputs (a path is tried as stored, then relative to the session's
// folder). Throws SessionError when the session file itself is unreadable, malformed or too new; a
// missing or changed input is a message, and the rest stays usable. With ReadLimits::headersOnly the planes
// hold no pixels and nothing is prepared (checkSettingsBeforePixels, engine/Workflow.h).
OpenedSession openSession(const std::string& path, const ReadLimits& limits = {});

// Says in `m.origin` that the session at `sessionPath` gave `fields` (OpenedSession::sessionValues): "session s.json"
// with the source it recorded, "session s.json (a.fits: keyword WAVELENG)"; a value saved again keeps one prefix.
// For a report of where a run's values came from; openSession itself keeps the recorded origins.
void markSessionOrigins(DatasetMetadata& m, const std::string& sessionPath, const std::vector<std::string>& fields);

} // namespace wfs
