// The Field tab's jobs: the stack read or simulated, the run and the term maps on a worker, its progress queued to the
// GUI thread, and the outcome taken over there (FieldPanel.cpp draws it).
#include "FieldPanel.h"

#include "base/Cancellation.h"
#include "engine/FieldSimulation.h"
#include "io/Dataset.h"
#include "io/OutputTransaction.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QtConcurrent>

#include <algorithm>

namespace wfs::ui {

namespace {

constexpr int kMapSamples = 64;    // the term maps' samples along the image's longer side: a smooth model needs no more
constexpr int kSimulatedOrder = 4; // each simulated bead's Zernike order: the slide's truth goes up to Z11

using StackMaker = std::function<std::shared_ptr<const Session>(QStringList& notes)>;

// The worker's whole job: the stack read or made, the run, and every modelled term sampled over the field.
FieldOutcome fieldJob(const StackMaker& makeStack, const FieldRunOptions& options, const QString& source)
{
    FieldOutcome out;
    out.source = source;
    try {
        out.stack = makeStack(out.notes);
        auto run = std::make_shared<FieldRun>(runField(*out.stack, options));
        for (size_t t = 0; run->model && t < run->model->terms.size(); ++t)
            out.maps.push_back(fieldTermGrid(*run, t, kMapSamples));
        out.run = std::move(run);
    } catch (const OperationCancelled&) {
        out.cancelled = true;
    } catch (const std::exception& e) {
        out.error = QString::fromStdString(e.what());
    }
    return out;
}

} // namespace

FieldPanel::~FieldPanel()
{
    m_cancelFlag = true;
    m_watcher->waitForFinished();
}

bool FieldPanel::isRunning() const
{
    return m_watcher->isRunning();
}

bool FieldPanel::runSimulatedField(int beads, int width)
{
    if (isRunning())
        return false;
    const int crop = m_crop->value();
    const std::atomic<bool>* cancel = &m_cancelFlag;
    start(
        [beads, width, crop, cancel](QStringList&) {
            FieldSimulationOptions o;
            o.beads = beads;
            o.width = o.height = width;
            o.crop = crop;
            o.cancel = cancel;
            return std::make_shared<const Session>(simulatedFieldSession(simulateField(o), kSimulatedOrder));
        },
        tr("simulated bead slide, %1 beads on %2 x %2 pixels").arg(beads).arg(width));
    return true;
}

bool FieldPanel::loadStack(const QString& path)
{
    if (isRunning())
        return false;
    const Session settings = m_settingsSource ? m_settingsSource() : Session{};
    start(
        [model = settings.model, solver = settings.solver, metadata = settings.dataset.metadata, path](QStringList& notes) {
            Session s;
            s.model = model;
            s.solver = solver;
            s.dataset.metadata = metadata; // set first, as batch does: the stack's own headers fill what is unset
            for (const DatasetMessage& m : addFiles(s.dataset, {path.toStdString()}))
                if (m.level != MessageLevel::Info)
                    notes << QString::fromStdString(m.text);
            if (s.dataset.planes.empty())
                throw DatasetError(path.toStdString() + ": no plane could be read");
            return std::make_shared<const Session>(std::move(s));
        },
        path);
    return true;
}

bool FieldPanel::runAgain()
{
    if (isRunning() || !m_stack)
        return false;
    start([stack = m_stack](QStringList&) { return stack; }, m_source);
    return true;
}

void FieldPanel::cancel()
{
    m_cancelFlag = true;
}

namespace {
// `files` (core's fieldRunFiles) into `dir`, all or none; false with the reason in *error.
bool writeResultFiles(const QString& dir, std::vector<std::pair<std::string, QByteArray>> files, bool overwrite, QString* error)
{
    try {
        OutputTransaction transaction(overwrite, "Replace when asked");
        for (auto& [name, bytes] : files)
            transaction.add(QDir(dir).filePath(QString::fromStdString(name)).toStdString(), std::move(bytes));
        transaction.commit();
        return true;
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
}
} // namespace

bool FieldPanel::saveResults(const QString& dir, bool overwrite, QString* error) const
{
    if (!m_run) {
        if (error)
            *error = tr("there is no field run to save");
        return false;
    }
    return writeResultFiles(dir, fieldRunFiles(*m_run), overwrite, error);
}

void FieldPanel::askAndSave()
{
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Save the field's results into a folder"));
    if (dir.isEmpty() || !m_run)
        return;
    std::vector<std::pair<std::string, QByteArray>> files = fieldRunFiles(*m_run); // made once: the names asked about, then written
    QStringList there;
    for (const auto& file : files)
        if (QFileInfo::exists(QDir(dir).filePath(QString::fromStdString(file.first))))
            there << QString::fromStdString(file.first);
    if (!there.isEmpty()
        && QMessageBox::question(this, tr("Replace files?"),
                                 tr("%1 already holds %2. Replace them?").arg(dir, there.join(QStringLiteral(", "))))
               != QMessageBox::Yes)
        return;
    QString error;
    if (writeResultFiles(dir, std::move(files), true, &error))
        emit message(tr("Field: saved beads.csv, field.json%1 in %2").arg(m_run->model ? tr(" and field-maps.fits") : QString(), dir),
                     false);
    else
        emit message(tr("Field: nothing saved: %1").arg(error), true);
}

FieldRunOptions FieldPanel::runOptions()
{
    FieldRunOptions o;
    o.detection.crop = m_crop->value();
    o.detection.threshold = m_threshold->value();
    o.model.order = m_order->currentData().toInt();
    o.cancel = &m_cancelFlag;
    // From the run's workers: the counts in atomics, at most one queued call to draw them at a time.
    FieldPanel* self = this;
    o.progress = [self](int done, int total) {
        self->m_done = done;
        self->m_total = total;
        if (!self->m_progressQueued.exchange(true))
            QMetaObject::invokeMethod(self, &FieldPanel::showProgress, Qt::QueuedConnection);
    };
    return o;
}

void FieldPanel::start(std::function<std::shared_ptr<const Session>(QStringList&)> stack, const QString& source)
{
    m_cancelFlag = false;
    m_done = 0;
    m_total = 0;
    setRunning(true);
    m_status->setStyleSheet(QString());
    m_status->setText(tr("%1: finding and fitting the beads…").arg(source));
    m_watcher->setFuture(
        QtConcurrent::run([stack = std::move(stack), options = runOptions(), source] { return fieldJob(stack, options, source); }));
}

void FieldPanel::showProgress()
{
    m_progressQueued = false;
    if (!isRunning())
        return; // a call queued before the job ended
    m_progress->setRange(0, std::max(1, m_total.load()));
    m_progress->setValue(m_done.load());
}

void FieldPanel::finish(FieldOutcome outcome)
{
    if (outcome.stack) { // held even when its run failed: Run tries it again
        m_stack = outcome.stack;
        m_source = outcome.source;
    }
    setRunning(false);
    m_progress->setRange(0, std::max(1, m_total.load()));
    m_progress->setValue(m_done.load());
    if (!outcome.notes.isEmpty())
        emit message(tr("Field: %1").arg(outcome.notes.join(QLatin1Char('\n'))), false);
    if (outcome.cancelled || !outcome.error.isEmpty()) {
        const QString why = outcome.cancelled ? tr("cancelled") : tr("failed: %1").arg(outcome.error);
        const QString held = m_stack ? tr(" The stack held (%1) stays for Run.").arg(m_source) : QString();
        m_status->setStyleSheet(outcome.cancelled ? QString() : QStringLiteral("color: #b00020"));
        m_status->setText(tr("%1: %2.%3").arg(outcome.source, why, held));
        if (!outcome.cancelled)
            emit message(tr("Field: %1: %2").arg(outcome.source, outcome.error), true);
        emit runFinished(false);
        return;
    }
    m_run = std::move(outcome.run);
    m_maps = std::move(outcome.maps);
    m_saveButton->setEnabled(m_run != nullptr);
    m_selected = -1;
    showRun();
    emit runFinished(true);
}

} // namespace wfs::ui
