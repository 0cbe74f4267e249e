// MainWindow, continued: exports, sessions (saving, opening, re-evaluating a saved result), recent
// files and the remembered settings. The views and the fit are in MainWindow.cpp.
#include "MainWindow.h"

#include "engine/Workflow.h"

#include "PhasePanel.h"
#include "ResultsPanel.h"
#include "RunsPanel.h"
#include "SetupPanel.h"

#include "io/Exports.h"
#include "io/OutputTransaction.h"
#include "ResultExports.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>
#include <QtConcurrent>

namespace wfs::ui {

namespace {
constexpr int kMaxRecent = 8;
} // namespace

void MainWindow::restoreResult(const Session& session)
{
    // The session holds the fitted parameters, not the images: rebuild the problem from the re-read,
    // re-prepared data and evaluate the model there (on a worker), so the views and exports are live.
    // The session's runs are re-evaluated the same way, each with its own settings; one that no longer
    // fits the data stays listed with the reason.
    m_busy = true;
    statusBar()->showMessage(tr("re-evaluating the saved result and %1 run(s)…").arg(session.runs.size()));
    struct Restored {
        std::optional<std::pair<BuiltProblem, FitResult>> last;
        ExportContext context;
        QString lastError;
        std::vector<RunEntry> runs;
    };
    QtConcurrent::run([dataset = m_dataset, session]() mutable {
        Session settings = session;
        settings.dataset = std::move(dataset);
        Restored restored;
        if (!settings.resultParameters.empty()) {
            try {
                PreparedRun run = prepareRun(settings);
                FitResult result = restoreSavedResult(settings, run.problem, true);
                restored.context = run.context;
                restored.last.emplace(std::move(run.problem), std::move(result));
            } catch (const std::exception& e) {
                restored.lastError = QString::fromUtf8(e.what());
            }
        }
        for (const SessionRun& record : settings.runs) {
            RunEntry entry{record, nullptr, {}};
            try {
                entry.result = std::make_shared<const FitResult>(restoreRun(settings, record));
            } catch (const std::exception& e) {
                entry.note = QString::fromUtf8(e.what());
            }
            restored.runs.push_back(std::move(entry));
        }
        return restored;
    }).then(this, [this](Restored restored) {
        m_busy = false;
        statusBar()->clearMessage();
        m_runs = std::move(restored.runs);
        m_runsPanel->setRuns(m_runs);
        for (const RunEntry& run : m_runs)
            if (!run.result)
                logLine(tr("run \"%1\" could not be re-evaluated: %2").arg(QString::fromStdString(run.record.name), run.note));
        if (restored.last) {
            adoptProblem(restored.last->first, restored.context);
            showResult(std::make_shared<const FitResult>(std::move(restored.last->second)));
            logLine(tr("saved result restored: final cost %1").arg(m_result->solver.finalCost, 0, 'g', 10));
        } else if (!restored.lastError.isEmpty()) {
            showError(tr("The saved result could not be restored: %1").arg(restored.lastError));
        }
        emit dataLoaded();
    });
}

ExportContext MainWindow::exportContext() const
{
    return m_exportContext;
}

QString MainWindow::suggestedExportName(const QString& key) const
{
    // In the folder the data came from, named after its first file: "bead_zstack-phase.fits".
    QString stem = QStringLiteral("wavefront");
    QString folder = QSettings().value(QStringLiteral("lastDirectory")).toString();
    if (!m_dataset.files.empty()) {
        const QFileInfo first(QString::fromStdString(m_dataset.files.front().path));
        stem = first.completeBaseName();
        folder = first.absolutePath();
    }
    const ResultExport* e = findResultExport(key.toStdString());
    const QString ending = e ? QString::fromLatin1(e->suffix) : QStringLiteral("-%1.json").arg(key);
    return folder.isEmpty() ? stem + ending : QDir(folder).filePath(stem + ending);
}

std::function<void()> MainWindow::exportTask(const QString& key, const QString& path)
{
    if (!m_result) {
        showError(tr("Nothing to export yet: run a fit first."));
        return {};
    }
    const ResultExport* kind = findResultExport(key.toStdString());
    if (!kind) {
        showError(tr("No export is called '%1'.").arg(key));
        return {};
    }
    // Copies of what the export is made from: the worker's export stays whole while the window fits again.
    // The command line's defaults (FITS in radians, 64-bit) but the picture as the Phase tab shows it.
    const PhaseUnit pngUnit = m_phasePanel->nanometres() ? PhaseUnit::Nanometres : PhaseUnit::Waves;
    return [kind = kind->kind, result = m_result, context = exportContext(), spec = m_spec, pngUnit, wrapped = m_phasePanel->wrapped(),
            file = path.toStdString()] {
        // The fitted system's 3-D PSF is imaged first, at the command line's defaults (21 planes over the
        // fitted planes' range, the data's pixels and size).
        std::optional<PsfStack> stack;
        if (kind == ExportKind::PsfStack) {
            if (!spec)
                throw std::runtime_error("the fitted problem is not at hand");
            PsfStackRequest request;
            request.defocus = defaultPsfStackDefocus(*spec);
            stack = psfStack(Problem(fittedSpec(*spec, *result)), result->solver.parameters, request);
        }
        ResultExportSources sources{*result, context};
        sources.pngUnit = pngUnit;
        sources.wrapped = wrapped;
        sources.stack = stack ? &*stack : nullptr;
        // Written beside the target and renamed over it: a failed write leaves the previous file as it was.
        writeFileAtomically(file, resultExportBytes(kind, file, sources), true);
    };
}

bool MainWindow::exportResult(const QString& key, const QString& path)
{
    const std::function<void()> task = exportTask(key, path);
    if (!task)
        return false;
    try {
        task();
    } catch (const std::exception& e) {
        showError(tr("Export to %1 failed: %2").arg(path, QString::fromUtf8(e.what())));
        return false;
    }
    logLine(tr("exported %1: %2").arg(tr(findResultExport(key.toStdString())->label), path));
    return true;
}

void MainWindow::exportResultInBackground(const QString& key, const QString& path)
{
    const std::function<void()> task = exportTask(key, path);
    if (!task) {
        emit exportFinished(false);
        return;
    }
    statusBar()->showMessage(tr("exporting %1…").arg(path));
    const QString label = tr(findResultExport(key.toStdString())->label);
    QtConcurrent::run(task)
        .then(this,
              [this, label, path] {
                  statusBar()->clearMessage();
                  logLine(tr("exported %1: %2").arg(label, path));
                  emit exportFinished(true);
              })
        .onFailed(this, [this, path](const std::exception& e) {
            statusBar()->clearMessage();
            showError(tr("Export to %1 failed: %2").arg(path, QString::fromUtf8(e.what())));
            emit exportFinished(false);
        });
}

bool MainWindow::saveSessionTo(const QString& path)
{
    if (m_dataset.files.empty()) {
        showError(tr("Nothing to save: open data first."));
        return false;
    }
    if (const QStringList problems = m_setup->modelTextProblems(); !problems.isEmpty()) {
        showError(tr("The session was not saved: %1").arg(problems.join(QLatin1Char('\n'))));
        return false;
    }
    Session session;
    session.dataset = m_dataset;
    m_setup->applyPlaneEdits(session.dataset);
    m_setup->applyMetadata(session.dataset.metadata);
    session.dataset.preprocess = m_setup->preprocessOptions();
    session.model = m_setup->modelSettings();
    session.solver = m_setup->solverSettings();
    if (m_result) {
        session.result = resultToJson(*m_result);
        session.resultParameters = m_resultParameters;
    }
    for (const RunEntry& run : m_runs)
        session.runs.push_back(run.record);
    try {
        saveSession(path.toStdString(), session, true);
    } catch (const std::exception& e) {
        showError(tr("The session could not be saved: %1").arg(QString::fromUtf8(e.what())));
        return false;
    }
    logLine(tr("session saved to %1").arg(path));
    return true;
}

void MainWindow::openSessionFrom(const QString& path)
{
    if (m_busy || isFitting()) {
        showError(tr("Wait for the running job to end before opening a session."));
        return;
    }
    m_busy = true;
    QtConcurrent::run([file = path.toStdString()] { return openSession(file); })
        .then(this,
              [this, path](OpenedSession opened) {
                  m_busy = false;
                  m_loggedMessages.clear(); // notes about other data may be said again
                  logMessages(opened.messages);
                  const QString errors = QString::fromStdString(messagesText(opened.messages, MessageLevel::Error));
                  if (opened.session.dataset.planes.empty()) {
                      showError(tr("%1: no input of the session could be read.%2")
                                    .arg(path, errors.isEmpty() ? QString() : QStringLiteral("\n") + errors));
                      emit dataLoaded();
                      return;
                  }
                  m_dataset = opened.session.dataset;
                  m_truth.reset();
                  m_runs.clear();
                  m_runsPanel->setRuns(m_runs);
                  datasetChanged();
                  m_setup->setModelSettings(opened.session.model);
                  m_setup->setSolverSettings(opened.session.solver);
                  const QString warnings = QString::fromStdString(messagesText(opened.messages, MessageLevel::Warning));
                  if (!errors.isEmpty() || !warnings.isEmpty()) // said in Messages already; the bar keeps them in sight
                      showInMessageBar((errors + QLatin1Char('\n') + warnings).trimmed(), !errors.isEmpty());
                  logLine(tr("session %1 opened").arg(path));
                  if (!opened.session.resultParameters.empty() || !opened.session.runs.empty())
                      restoreResult(opened.session); // emits dataLoaded when done
                  else
                      emit dataLoaded();
              })
        .onFailed(this, [this, path](const std::exception& e) {
            m_busy = false;
            showError(errorText(e));
            emit dataLoaded();
        });
}

void MainWindow::addRecent(const QStringList& paths)
{
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& p : paths) {
        const QString absolute = QFileInfo(p).absoluteFilePath();
        recent.removeAll(absolute);
        recent.prepend(absolute);
    }
    while (recent.size() > kMaxRecent)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    if (!paths.isEmpty())
        settings.setValue(QStringLiteral("lastDirectory"), QFileInfo(paths.front()).absolutePath());
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& p : recent)
        m_recentMenu->addAction(p, this, [this, p] { openFiles({p}); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("windowState")).toByteArray());
    ModelSettings model = m_setup->modelSettings();
    model.order = settings.value(QStringLiteral("model/order"), model.order).toInt();
    model.ordering = settings.value(QStringLiteral("model/ordering")).toString() == QLatin1String("ansi") ? ZernikeOrdering::Ansi
                                                                                                          : ZernikeOrdering::Noll;
    m_setup->setModelSettings(model);
    SolverSettings solver = m_setup->solverSettings();
    solver.threads = settings.value(QStringLiteral("solver/threads"), solver.threads).toInt();
    solver.gradient = settings.value(QStringLiteral("solver/gradient")).toString() == QLatin1String("fd") ? GradientKind::FiniteDifference
                                                                                                          : GradientKind::Adjoint;
    m_setup->setSolverSettings(solver);
    rebuildRecentMenu();
}

void MainWindow::saveSettings() const
{
    QSettings settings;
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    settings.setValue(QStringLiteral("windowState"), saveState());
    const ModelSettings model = m_setup->modelSettings();
    settings.setValue(QStringLiteral("model/order"), model.order);
    settings.setValue(QStringLiteral("model/ordering"), QString::fromLatin1(zernike::orderingName(model.ordering)));
    const SolverSettings solver = m_setup->solverSettings();
    settings.setValue(QStringLiteral("solver/threads"), solver.threads);
    settings.setValue(QStringLiteral("solver/gradient"), QString::fromLatin1(gradientName(solver.gradient)));
}

} // namespace wfs::ui
