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
#include "settings/SettingsTable.h"

#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QJsonDocument>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>
#include <QtConcurrent>

#include <algorithm>

namespace wfs::ui {

namespace {
constexpr int kMaxRecent = 8;

// The settings remembered from one launch to the next, by the settings table's names. Each is kept under its session
// key ("model.order" as "model/order") in its session text (settings/SettingAccess.h), through the table's accessor.
constexpr const char* kRememberedSettings[] = {"order", "ordering", "threads", "gradient"};

QString preferenceKey(const SessionKey& key)
{
    return QString::fromLatin1(key.name).replace(QLatin1Char('.'), QLatin1Char('/'));
}
} // namespace

QString MainWindow::suggestedExportName(const QString& key) const
{
    // In the folder the data came from, named after its first file: "bead_zstack-phase.fits".
    QString stem = QStringLiteral("wavefront");
    QString folder = QSettings().value(QStringLiteral("lastDirectory")).toString();
    if (const Dataset& dataset = m_session->dataset(); !dataset.files.empty()) {
        const QFileInfo first(QString::fromStdString(dataset.files.front().path));
        stem = first.completeBaseName();
        if (!m_session->isInMemory(dataset.files.front())) // a preset's planes: the folder used last
            folder = first.absolutePath();
    }
    const ResultExport* e = findResultExport(key.toStdString());
    const QString ending = e ? QString::fromLatin1(e->suffix) : QStringLiteral("-%1.json").arg(key);
    return folder.isEmpty() ? stem + ending : QDir(folder).filePath(stem + ending);
}

std::function<void()> MainWindow::exportTask(const QString& key, const QString& path)
{
    if (!result()) {
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
    return [kind = kind->kind, result = result(), context = m_session->exportContext(), spec = m_session->spec(), pngUnit,
            wrapped = m_phasePanel->wrapped(), file = path.toStdString()] {
        // The fitted system's 3-D PSF is imaged first, at the command line's defaults (21 planes over the
        // fitted planes' range, the data's pixels and size).
        std::optional<PsfStack> stack;
        if (exportNeedsPsfStack(kind)) {
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
            showError(tr("Export to %1 failed: %2").arg(path, workerErrorText(e)));
            emit exportFinished(false);
        });
}

bool MainWindow::saveSessionTo(const QString& path)
{
    if (const QStringList problems = m_setup->modelTextProblems(); !problems.isEmpty() && !dataset().files.empty()) {
        showError(tr("The session was not saved: %1").arg(problems.join(QLatin1Char('\n'))));
        return false;
    }
    // The data as the setup panel shows them (planes taking part, metadata, preparation) and its settings.
    Session settings;
    settings.dataset = dataset();
    m_setup->applyPlaneEdits(settings.dataset);
    m_setup->applyMetadata(settings.dataset.metadata);
    settings.dataset.preprocess = m_setup->preprocessOptions();
    settings.model = m_setup->modelSettings();
    settings.solver = m_setup->solverSettings();
    QString error;
    if (!m_session->saveSession(path, std::move(settings), &error)) {
        showError(error);
        return false;
    }
    logLine(tr("session saved to %1").arg(path));
    return true;
}

void MainWindow::openSessionFrom(const QString& path)
{
    if (m_session->isBusy() || isFitting()) {
        showError(tr("Wait for the running job to end before opening a session."));
        return;
    }
    m_session->openSession(path); // sessionOpened(), then dataLoadFinished() once its result and runs are restored
    statusBar()->showMessage(tr("opening %1 and re-evaluating its result and runs…").arg(path));
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
    // A layout with no dock open (saved by a version that let a teaching tab's layout be saved, or closed dock by
    // dock) leaves no way to the settings: every dock comes back.
    const QList<QDockWidget*> docks = findChildren<QDockWidget*>();
    if (std::all_of(docks.begin(), docks.end(), [](const QDockWidget* dock) { return dock->isHidden(); }))
        for (QDockWidget* dock : docks)
            dock->show();
    SettingsBundle remembered;
    remembered.model = m_setup->modelSettings();
    remembered.solver = m_setup->solverSettings();
    for (const char* name : kRememberedSettings) {
        const SessionKey& key = findSetting(name)->sessionKeys[0];
        if (const auto value = settingValueFromText(key.access, settings.value(preferenceKey(key)).toString().toStdString()))
            key.access.set(remembered, *value);
    }
    if (!remembered.solver.stages.empty()) // the panel's order box is its last stage
        remembered.solver.stages.back() = remembered.model.order;
    try { // values out of range (an edited or older file) leave the panel's own
        checkSettings(remembered.model, remembered.solver);
        m_setup->setModelSettings(remembered.model);
        m_setup->setSolverSettings(remembered.solver);
    } catch (const SettingsError&) {
    }
    rebuildRecentMenu();
}

void MainWindow::saveSettings() const
{
    QSettings settings;
    settings.setValue(QStringLiteral("geometry"), saveGeometry());
    // The layout of the working tabs, even when a teaching tab (which hides the docks) is shown at the end.
    settings.setValue(QStringLiteral("windowState"), m_hiddenDocks.isEmpty() ? saveState() : m_workingLayout);
    SettingsBundle current;
    current.model = m_setup->modelSettings();
    current.solver = m_setup->solverSettings();
    for (const char* name : kRememberedSettings) {
        const SessionKey& key = findSetting(name)->sessionKeys[0];
        settings.setValue(preferenceKey(key), QString::fromStdString(settingValueText(key.access, key.access.get(current))));
    }
}

} // namespace wfs::ui
