#include "SessionController.h"

#include "io/OutputTransaction.h"
#include "io/ResultJson.h"

#include <QDir>
#include <QException>
#include <QFile>
#include <QFileInfo>
#include <QtConcurrent>

#include <algorithm>

namespace wfs::ui {

QString workerErrorText(const std::exception& e)
{
    if (const auto* wrapped = dynamic_cast<const QUnhandledException*>(&e); wrapped && wrapped->exception()) {
        try {
            std::rethrow_exception(wrapped->exception());
        } catch (const std::exception& original) {
            return QString::fromUtf8(original.what());
        } catch (...) {
            return SessionController::tr("an unknown error");
        }
    }
    return QString::fromUtf8(e.what());
}

namespace {

QByteArray readFileBytes(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Input `from` of the data called `to` from now on: the file, its planes' sources and the metadata's origins. (`from`
// is a copy: a caller may pass the file's own path, which this renames.)
void renameInput(Dataset& dataset, std::string from, const std::string& to)
{
    const auto renamed = [&](std::string& text) {
        if (text.rfind(from, 0) == 0)
            text.replace(0, from.size(), to);
    };
    for (size_t i = 0; i < dataset.files.size(); ++i) {
        if (dataset.files[i].path != from)
            continue;
        dataset.files[i].path = to;
        for (DatasetPlane& plane : dataset.planes)
            if (plane.file == int(i))
                renamed(plane.raw.source);
    }
    for (auto& [field, origin] : dataset.metadata.origin)
        renamed(origin);
}

} // namespace

SessionController::SessionController(QObject* parent)
    : QObject(parent)
{
    qRegisterMetaType<wfs::ui::LoadOutcome>();
}

void SessionController::adoptDataset(Dataset dataset, std::optional<Truth> truth)
{
    m_dataset = std::move(dataset);
    m_truth = std::move(truth);
    // Show the raw planes until a fit gives prepared data and models.
    m_planeEntries.clear();
    for (const DatasetPlane& plane : m_dataset.planes) {
        const QString source = QString::fromStdString(plane.raw.source);
        m_planeEntries.push_back({QFileInfo(source).fileName(), source, plane.raw});
    }
    emit datasetChanged();
    emit planesChanged();
}

void SessionController::openFiles(const QStringList& paths, bool append, const PreprocessOptions& preprocess)
{
    m_busy = true;
    Dataset start = append ? m_dataset : Dataset();
    start.preprocess = preprocess;
    std::vector<std::string> files;
    for (const QString& p : paths)
        files.push_back(p.toStdString());
    QtConcurrent::run([start = std::move(start), files] {
        Dataset dataset = start;
        std::vector<DatasetMessage> messages = addFiles(dataset, files);
        return std::make_pair(std::move(dataset), std::move(messages));
    }).then(this, [this, paths, append](std::pair<Dataset, std::vector<DatasetMessage>> loaded) {
        m_busy = false;
        LoadOutcome outcome{LoadOutcome::Source::Files, paths, !loaded.first.planes.empty(), std::move(loaded.second), {}, false};
        if (outcome.loaded) { // else nothing usable: what was loaded before stays
            if (!append)
                m_memoryInputs.clear();
            adoptDataset(std::move(loaded.first), append ? m_truth : std::nullopt);
        }
        emit dataLoadFinished(outcome);
    });
}

void SessionController::loadPreset(const QString& name, const PreprocessOptions& preprocess)
{
    m_busy = true;
    // The preset's own grid, order and seed: the data the command line's `--preset NAME` and `simulate` make.
    QtConcurrent::run([name = name.toStdString()] { return presetSession(name, PresetOptions{}); })
        .then(this,
              [this, name, preprocess](PresetSession preset) {
                  m_busy = false;
                  LoadOutcome outcome{LoadOutcome::Source::Preset, {name}, true, std::move(preset.messages), {}, false};
                  emit presetLoaded(name);
                  Dataset dataset = std::move(preset.session.dataset);
                  dataset.preprocess = preprocess;
                  // Named as the file it becomes when the session is saved (the problem, the planes and the exports
                  // are named after it, and then say the same before and after).
                  const std::string file = name.toStdString() + ".fits";
                  renameInput(dataset, dataset.files.front().path, file);
                  m_memoryInputs.clear();
                  m_memoryInputs[file] = preset.fitsBytes;
                  adoptDataset(std::move(dataset), std::move(preset.truth));
                  emit dataLoadFinished(outcome);
              })
        .onFailed(this, [this, name](const std::exception& e) {
            m_busy = false;
            emit dataLoadFinished(
                {LoadOutcome::Source::Preset, {name}, false, {}, tr("The demo could not be created: %1").arg(workerErrorText(e)), false});
        });
}

void SessionController::openSession(const QString& path)
{
    m_busy = true;
    QtConcurrent::run([file = path.toStdString()] { return wfs::openSession(file); })
        .then(this,
              [this, path](OpenedSession opened) {
                  m_busy = false;
                  LoadOutcome outcome{LoadOutcome::Source::Session, {path}, !opened.session.dataset.planes.empty(),
                                      std::move(opened.messages),   {},     false};
                  if (opened.session.simulated) { // its planes are remade by core's prepareRun, not read from files
                      outcome.loaded = false;
                      outcome.error = tr("%1 holds a fit of the %2 preset's simulated data (saved by wavefront-cli reconstruct "
                                         "--preset --save-session), not of image files. Run it again with: wavefront-cli "
                                         "reconstruct --session %1; or load a preset's data from the File menu.")
                                          .arg(path, QString::fromStdString(opened.session.simulated->preset));
                      emit dataLoadFinished(outcome);
                      return;
                  }
                  if (!outcome.loaded) {
                      const QString errors = QString::fromStdString(messagesText(outcome.messages, MessageLevel::Error));
                      outcome.error = tr("%1: no input of the session could be read.%2")
                                          .arg(path, errors.isEmpty() ? QString() : QStringLiteral("\n") + errors);
                      emit dataLoadFinished(outcome);
                      return;
                  }
                  m_memoryInputs.clear();
                  m_runs.clear();
                  emit runsChanged();
                  adoptDataset(opened.session.dataset, std::nullopt);
                  emit sessionOpened(opened.session);
                  if (!opened.session.resultParameters.empty() || !opened.session.runs.empty())
                      restore(opened.session, std::move(outcome));
                  else
                      emit dataLoadFinished(outcome);
              })
        .onFailed(this, [this, path](const std::exception& e) {
            m_busy = false;
            emit dataLoadFinished({LoadOutcome::Source::Session, {path}, false, {}, workerErrorText(e), false});
        });
}

void SessionController::restore(const Session& session, LoadOutcome outcome)
{
    // The session holds the fitted parameters, not the images: core rebuilds the problem from the re-read,
    // re-prepared data and evaluates the model there (on a worker), so the views and exports are live.
    m_busy = true;
    QtConcurrent::run([dataset = m_dataset, session = Session(session)]() mutable {
        session.dataset = std::move(dataset);
        return restoreSession(session, true);
    }).then(this, [this, outcome = std::move(outcome)](RestoredSession restored) mutable {
        m_busy = false;
        m_runs.clear();
        for (RestoredRun& run : restored.runs) {
            RunEntry entry{std::move(run.record), nullptr, QString::fromStdString(run.error)};
            if (run.result)
                entry.result = std::make_shared<const FitResult>(std::move(*run.result));
            else
                outcome.messages.push_back({MessageLevel::Warning,
                                            {},
                                            tr("run \"%1\" could not be re-evaluated: %2")
                                                .arg(QString::fromStdString(entry.record.name), entry.note)
                                                .toStdString()});
            m_runs.push_back(std::move(entry));
        }
        emit runsChanged();
        if (restored.result) {
            adoptProblem(restored.run->problem, restored.run->context);
            setResult(std::make_shared<const FitResult>(std::move(*restored.result)));
            outcome.resultRestored = true;
        } else if (!restored.resultError.empty()) {
            outcome.error = tr("The saved result could not be restored: %1").arg(QString::fromStdString(restored.resultError));
        }
        emit dataLoadFinished(outcome);
    });
}

std::map<std::string, std::string> SessionController::writeMemoryInputs(const QString& path, Session& settings) const
{
    std::map<std::string, std::string> renamed;
    const QDir folder = QFileInfo(path).absoluteDir();
    for (DatasetFile& file : settings.dataset.files) {
        const auto bytes = m_memoryInputs.find(file.path);
        if (bytes == m_memoryInputs.end())
            continue;
        // Under its name beside the session ("demo.fits": a preset's data are the same bytes whoever saves them);
        // a file of that name with other bytes is left alone and the planes take another name.
        const QFileInfo name(QString::fromStdString(file.path));
        QString target = folder.filePath(name.fileName());
        for (int k = 2; QFileInfo::exists(target) && readFileBytes(target) != bytes->second; ++k)
            target = folder.filePath(QStringLiteral("%1-%2.%3").arg(name.completeBaseName()).arg(k).arg(name.suffix()));
        if (!QFileInfo::exists(target))
            writeFileAtomically(target.toStdString(), bytes->second, false);
        renamed[file.path] = target.toStdString();
        file.path = target.toStdString();
        file.sha256 = sha256Of(file.path, &file.bytes);
    }
    return renamed;
}

bool SessionController::saveSession(const QString& path, Session settings, QString* error)
{
    if (m_dataset.files.empty()) {
        *error = tr("Nothing to save: open data first.");
        return false;
    }
    if (m_result) {
        settings.result = resultToJson(*m_result);
        settings.resultParameters = m_resultParameters;
    }
    for (const RunEntry& run : m_runs)
        settings.runs.push_back(run.record);
    std::map<std::string, std::string> renamed;
    try {
        renamed = writeMemoryInputs(path, settings);
        wfs::saveSession(path.toStdString(), settings, true);
    } catch (const std::exception& e) {
        *error = tr("The session could not be saved: %1").arg(QString::fromUtf8(e.what()));
        return false;
    }
    // The planes held in memory are that file from now on, as a document saved for the first time: the exports name
    // it as their input, and the next save refers to it.
    for (const auto& [name, file] : renamed) {
        m_memoryInputs.erase(name);
        for (size_t i = 0; i < m_dataset.files.size(); ++i)
            if (m_dataset.files[i].path == name) {
                m_dataset.files[i].sha256 = settings.dataset.files[i].sha256;
                m_dataset.files[i].bytes = settings.dataset.files[i].bytes;
            }
        renameInput(m_dataset, name, file);
        std::replace(m_exportContext.inputs.begin(), m_exportContext.inputs.end(), name, file);
    }
    return true;
}

void SessionController::prepareFit(Session settings)
{
    m_busy = true;
    m_fitSettings.model = settings.model;
    m_fitSettings.solver = settings.solver;
    // Settings checked, data prepared, problem built: numerical work, so a worker does it, through the
    // same workflow as the command line.
    QtConcurrent::run([settings = std::move(settings)]() { return prepareRun(settings); })
        .then(this,
              [this](PreparedRun run) {
                  m_busy = false;
                  m_dataset.preparation = run.dataset.preparation;
                  emit fitPrepared(run);
              })
        .onFailed(this, [this](const std::exception& e) {
            m_busy = false;
            emit fitPreparationFailed(workerErrorText(e));
        });
}

void SessionController::adoptProblem(const BuiltProblem& built, const ExportContext& context)
{
    m_ordering = built.spec.basis.ordering;
    m_wavelength = built.spec.wavelength;
    m_exportContext = context;
    m_spec = built.spec;
    m_planeEntries.clear();
    for (size_t k = 0; k < built.spec.planes.size(); ++k) {
        const QString source = QString::fromStdString(m_dataset.planes[size_t(built.planes[k])].raw.source);
        const QString diversity = QString::fromStdString(built.spec.planes[k].diversity.describe());
        m_planeEntries.push_back({QStringLiteral("%1 · %2").arg(QFileInfo(source).fileName(), diversity),
                                  QStringLiteral("%1 (%2)").arg(source, diversity), built.spec.planes[k].data});
    }
    emit planesChanged();
}

void SessionController::showPreparedPlanes(const Preparation& preparation)
{
    for (size_t k = 0; k < preparation.planes.size() && k < m_planeEntries.size(); ++k)
        m_planeEntries[k].data = preparation.planes[k].image;
    emit planesChanged();
}

void SessionController::setResult(std::shared_ptr<const FitResult> result)
{
    m_result = std::move(result);
    m_resultParameters = m_result ? m_result->solver.parameters : std::vector<double>{};
    emit resultChanged();
}

void SessionController::addRun(std::shared_ptr<const FitResult> shared)
{
    const FitResult& result = *shared;
    const int order = m_fitSettings.model.order; // the panel settles it: the last stage is the order
    QString name = tr("run %1 · order %2").arg(m_runs.size() + 1).arg(order);
    if (result.solver.termination == Termination::Cancelled)
        name += tr(" (cancelled)");
    RunEntry run{makeRun(result, m_fitSettings.model, m_fitSettings.solver, name.toStdString()), std::move(shared), {}};
    m_runs.push_back(std::move(run));
    emit runsChanged();
}

} // namespace wfs::ui
