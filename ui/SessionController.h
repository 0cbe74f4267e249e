#pragma once
// The desktop program's session beside EngineController (which runs the fit): the data loaded, the truth of
// simulated data, the planes shown, the fit shown (its result, parameters, problem and export context), the runs
// kept and the settings of the fit running. It owns that state and says when it changes; MainWindow and the panels
// draw from it. Loading files, presets and sessions, preparing a fit, saving a session and restoring one go through
// core's workflow (engine/Workflow.h: prepareRun, presetSession, restoreSession) on worker threads, the calls the
// command line and the Python module make, so every front end reads, prepares and restores a session the same way.
#include "PlanesPanel.h"
#include "RunsPanel.h"

#include "engine/Workflow.h"
#include "io/Dataset.h"
#include "io/Exports.h"
#include "io/Session.h"

#include <QByteArray>
#include <QObject>
#include <QStringList>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace wfs::ui {

// How a load (files, a preset or a session) ended: dataLoadFinished() carries it.
struct LoadOutcome {
    enum class Source { Files, Preset, Session };
    Source source = Source::Files;
    QStringList paths;                    // the files or the session file asked for; the preset's name
    bool loaded = false;                  // false: nothing usable was read and the data before stay
    std::vector<DatasetMessage> messages; // reading (and, for a session, restoring: a run that no longer fits is a warning)
    QString error;                        // why nothing loaded, or why a session's saved result was not restored
    bool resultRestored = false;          // a session's saved result is the result shown now
};

class SessionController : public QObject {
    Q_OBJECT

public:
    explicit SessionController(QObject* parent = nullptr);

    const Dataset& dataset() const { return m_dataset; }
    // The data as the setup panel edits them in place (plane use, metadata, preparation options) before a fit or a
    // save; the edits come from the panel that shows them, so nothing is said.
    Dataset& editableDataset() { return m_dataset; }
    const std::optional<Truth>& truth() const { return m_truth; } // injected aberrations of simulated data
    // The planes shown on the Data / model tab: raw until a fit (or a preparation preview) gives prepared ones.
    const std::vector<PlaneEntry>& planeEntries() const { return m_planeEntries; }
    // Of the fit shown: its ordering and wavelength (the live chart's), export context and problem.
    ZernikeOrdering ordering() const { return m_ordering; }
    double wavelength() const { return m_wavelength; }
    const ExportContext& exportContext() const { return m_exportContext; }
    const std::optional<ProblemSpec>& spec() const { return m_spec; } // the 3-D PSF export images it
    // The result shown (null before any fit); shared with the run that keeps it, never copied.
    const std::shared_ptr<const FitResult>& result() const { return m_result; }
    const std::vector<double>& resultParameters() const { return m_resultParameters; }
    // Every fit of the session, oldest first (finished and cancelled ones; a failed fit adds none).
    const std::vector<RunEntry>& runs() const { return m_runs; }
    // The model and solver settings of the fit running or run last (no data).
    const Session& fitSettings() const { return m_fitSettings; }
    // Loading, opening, preparing or restoring on a worker: other loads wait (they are refused).
    bool isBusy() const { return m_busy; }
    // Whether input `file` of the data is held in memory (a preset's planes) rather than read from a file.
    bool isInMemory(const DatasetFile& file) const { return m_memoryInputs.count(file.path) > 0; }

    // ---- Loading: each ends with dataLoadFinished(), after datasetChanged() when data were read ----
    // Reads `paths` (appended to the data loaded when `append`) with `preprocess` as the preparation options.
    void openFiles(const QStringList& paths, bool append, const PreprocessOptions& preprocess);
    // A preset (demo, pupil, vectorial) as core's presetSession makes it: its planes simulated and held in memory
    // (named "<preset>.fits", the file a saved session writes), its truth kept. presetLoaded() comes first, so that the settings it is made for are set before the data are shown.
    void loadPreset(const QString& name, const PreprocessOptions& preprocess);
    // A session file: its data re-read and re-prepared; sessionOpened() with its settings; then its saved result and
    // runs restored by core's restoreSession, shown when dataLoadFinished() comes.
    void openSession(const QString& path);

    // Saves the data and settings of `settings` (the data as the setup panel edits them, its model and solver) with
    // the result shown and the runs kept. Planes held in memory are written first as FITS beside the
    // session under their name (a preset's "demo.fits"), and from then on the data are that file. False, with `error`, when nothing could be saved.
    bool saveSession(const QString& path, Session settings, QString* error);

    // ---- A fit ----
    // Prepares the data and builds the problem for `settings` (its data, model and solver) on a worker through
    // core's prepareRun: fitPrepared() with the run, or fitPreparationFailed(). The model and solver become
    // fitSettings().
    void prepareFit(Session settings);
    // The problem being fitted (or restored) becomes the one shown: its planes, names, conventions and export context.
    void adoptProblem(const BuiltProblem& built, const ExportContext& context);
    // The prepared pixels of a preparation preview on the planes shown.
    void showPreparedPlanes(const Preparation& preparation);
    void setResult(std::shared_ptr<const FitResult> result); // null clears
    // Keeps a finished fit as a run of the session, named by its number and order.
    void addRun(std::shared_ptr<const FitResult> result);

signals:
    void datasetChanged();                            // other data (files, a preset, a session)
    void planesChanged();                             // planeEntries()
    void resultChanged();                             // result(), set or cleared
    void runsChanged();                               // runs()
    void presetLoaded(const QString& name);           // a preset's data are about to be shown
    void sessionOpened(const wfs::Session& settings); // a session's data are shown; its settings to apply
    void dataLoadFinished(const wfs::ui::LoadOutcome& outcome);
    void fitPrepared(const wfs::PreparedRun& run);
    void fitPreparationFailed(const QString& message);

private:
    // Replaces the data (no result or run is dropped: they stay until replaced) and shows their raw planes.
    void adoptDataset(Dataset dataset, std::optional<Truth> truth);
    void restore(const Session& session, LoadOutcome outcome);
    // The planes held in memory written beside the session `path` as FITS; their new paths by old name.
    std::map<std::string, std::string> writeMemoryInputs(const QString& path, Session& settings) const;

    Dataset m_dataset;
    std::optional<Truth> m_truth;
    std::map<std::string, QByteArray> m_memoryInputs; // FITS bytes by DatasetFile::path, for inputs held in memory
    std::vector<PlaneEntry> m_planeEntries;
    ZernikeOrdering m_ordering = ZernikeOrdering::Noll;
    double m_wavelength = 0.0;
    ExportContext m_exportContext;
    std::optional<ProblemSpec> m_spec;
    std::shared_ptr<const FitResult> m_result;
    std::vector<double> m_resultParameters;
    std::vector<RunEntry> m_runs;
    Session m_fitSettings;
    bool m_busy = false;
};

// The message of an exception a worker threw: QtConcurrent hands non-Qt exceptions on wrapped in a
// QUnhandledException (whose what() says only "std::exception"), so the original is unwrapped.
QString workerErrorText(const std::exception& e);

} // namespace wfs::ui
