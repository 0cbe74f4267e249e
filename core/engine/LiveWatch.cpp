// Live mode's watch (engine/LiveWatch.h): its worker on the watch's own thread (the folder's watchers, the fits, the
// rows of the log and the trend table, a held reference's comparisons) and the LiveWatch facade. The completeness
// rules are StackFinder.cpp's and the log's file handling LiveLog.cpp's.
#include "engine/LiveWatch.h"

#include "base/CsvText.h"
#include "engine/Batch.h"
#include "engine/LiveLog.h"
#include "io/OutputTransaction.h"
#include "io/ResultJson.h"
#include "optics/Zernike.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSocketNotifier>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <set>
#include <stdexcept>
#include <unistd.h>
#ifdef Q_OS_LINUX
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#endif

namespace wfs {

const char* liveStatusName(LiveStatus status)
{
    switch (status) {
    case LiveStatus::Ok:
        return "ok";
    case LiveStatus::PoorFit:
        return "poor-fit";
    case LiveStatus::Failed:
        return "failed";
    }
    return "failed";
}

namespace {

QString isoMs(qint64 msSinceEpoch)
{
    return QDateTime::fromMSecsSinceEpoch(msSinceEpoch, Qt::UTC).toString(Qt::ISODateWithMs);
}

qint64 steadyMs()
{
    static QElapsedTimer clock = [] {
        QElapsedTimer t;
        t.start();
        return t;
    }();
    return clock.elapsed();
}

// A stack whose shape does not fit what the watch expects; said once per shape.
class ShapeMismatch : public std::runtime_error {
public:
    ShapeMismatch(const std::string& text, std::string shape)
        : std::runtime_error(text)
        , m_shape(std::move(shape))
    {
    }
    const std::string& shape() const { return m_shape; }

private:
    std::string m_shape;
};

std::string shapeText(size_t planes, int width, int height)
{
    return std::to_string(planes) + (planes == 1 ? " plane" : " planes") + " of " + std::to_string(width) + " x " + std::to_string(height);
}

// A stack's files as the log lists them.
QJsonArray inputsOf(const CompleteStack& stack)
{
    QJsonArray inputs;
    for (const std::string& p : stack.paths)
        inputs.append(QString::fromStdString(p));
    return inputs;
}

} // namespace

// ---- The worker ---------------------------------------------------------------------------------------

// Lives on the watch's thread: the file-system watcher, the scan timer, inotify, the fits and the log.
class LiveWatchWorker : public QObject {
public:
    LiveWatchWorker(LiveWatch* owner)
        : m_owner(owner)
        , m_options(owner->m_options)
        , m_finder(m_options.folder, m_options.finder)
    {
    }

    void begin();
    void finish(bool failed, const QString& reason);
    void compareKept(const std::shared_ptr<const LiveFit>& reference,
                     unsigned long generation); // holds it; compares the kept stacks after it

private:
    void scheduleProcess();
    void process();
    // What fitting one stack gave: the result (none when it could not be read or prepared), its error, and times.
    struct StackOutcome {
        std::shared_ptr<FitResult> result;
        std::string error;
        bool ok = false, warm = false, mismatch = false;
        bool deferred = false;             // read short (still being written): not logged, looked at again when it changes
        qint64 detected = 0, finished = 0; // ms since the epoch
        double fitSeconds = 0.0;
    };
    void checkOwnFiles();
    void resumeFromLog();
    void startTrendTable();
    std::string trendHeader() const;
    int lastTrendSequence() const;
    void startWatching();
    bool handle(const CompleteStack& stack, const QJsonArray& skipped); // false: deferred, not handled
    bool fitStack(const CompleteStack& stack, StackOutcome& outcome);
    QJsonObject logRow(const CompleteStack& stack, const StackOutcome& outcome, const LiveRecord& record, const QJsonArray& skipped) const;
    void writeOutputs(const QJsonObject& row, const CompleteStack& stack, const StackOutcome& outcome);
    LiveRecord record(const CompleteStack& stack, const StackOutcome& outcome, int skippedCount) const;
    void publish(const QJsonObject& row, LiveRecord record);
    void checkShape(const PreparedRun& run, const CompleteStack& stack);
    void writeCsv(const QJsonObject& row);
    void readInotify();
    void say(const QString& text) { emit m_owner->message(text); }

    LiveWatch* m_owner;
    LiveWatchOptions m_options;
    StackFinder m_finder;
    QFileSystemWatcher* m_watcher = nullptr;
    QTimer* m_timer = nullptr;
    QSocketNotifier* m_notifier = nullptr;
    int m_inotify = -1;
    bool m_done = false;
    bool m_processQueued = false;
    int m_sequence = 0;
    int m_handledThisRun = 0;
    qint64 m_lastActivity = 0;
    std::vector<double> m_warm;  // the last fitted stack's parameters
    size_t m_expectedPlanes = 0; // 0: not known yet
    int m_expectedWidth = 0, m_expectedHeight = 0;
    std::string m_expectedFrom;
    std::string m_expectedStack; // the stack the expectation was taken from, while no other was fitted after it
    std::set<std::string> m_saidShapes;
    std::set<std::string> m_saidDeferred;
    std::vector<int> m_csvIndices; // the trend table's coefficient columns
};

void LiveWatchWorker::begin()
{
    if (m_options.background)
        lowerThisThreadsPriority();
    try {
        // The trend table's coefficient columns: every term but piston at the fitted order, in the settings' ordering.
        const int order = m_options.settings.model.order; // settled: the last stage (settings/SolverSettings.h)
        const int first = zernike::firstIndex(m_options.settings.model.ordering);
        for (int i = first + 1; i < first + zernike::termCount(order); ++i)
            m_csvIndices.push_back(i);
        checkOwnFiles();
        if (const qint64 cut = cutPartialLine(m_options.logPath))
            say(QStringLiteral("%1: its last line was unfinished (%2 bytes, a crash mid-write) and was removed")
                    .arg(QString::fromStdString(m_options.logPath))
                    .arg(cut));
        resumeFromLog();
        if (!m_options.settings.dataset.planes.empty()) {
            m_expectedPlanes = m_options.settings.dataset.planes.size();
            m_expectedFrom = "as the settings say";
        }
        startTrendTable();
        if (!m_options.resultsDir.empty() && !QDir().mkpath(QString::fromStdString(m_options.resultsDir)))
            throw LiveLogError(m_options.resultsDir + ": cannot create the results folder");
        m_finder.scan(steadyMs()); // the folder exists now, and what is in it starts its clock
    } catch (const std::exception& e) {
        finish(true, QString::fromStdString(e.what()));
        return;
    }
    m_lastActivity = steadyMs();

    startWatching();
    emit m_owner->watching();
    scheduleProcess();
}

namespace {

qint64 msSinceEpoch(const QJsonValue& iso, qint64 otherwise)
{
    const QDateTime t = QDateTime::fromString(iso.toString(), Qt::ISODateWithMs);
    return t.isValid() ? t.toMSecsSinceEpoch() : otherwise;
}

// The oldest modification time of the folder's files (ms since the epoch); max when it holds none.
qint64 oldestFileMs(const std::string& folder)
{
    qint64 oldest = std::numeric_limits<qint64>::max();
    for (const QFileInfo& info : QDir(QString::fromStdString(folder)).entryInfoList(QDir::Files | QDir::NoDotAndDotDot))
        oldest = std::min(oldest, info.lastModified().toMSecsSinceEpoch());
    return oldest;
}

} // namespace

// Live mode writes only into files of its own (engine/LiveLog.h): an existing log must start with a row of one, an
// existing trend table with the header this watch writes (same order, same ordering), and the two must be two files.
// Checked before anything is cut, appended or created.
void LiveWatchWorker::checkOwnFiles()
{
    const std::string& log = m_options.logPath;
    const std::string& csv = m_options.csvPath;
    if (!csv.empty() && sameFile(log, csv))
        throw LiveLogError(log + ": given as both the log and the trend table; give two files");
    const QByteArray firstRow = firstLine(log);
    if (QFileInfo(QString::fromStdString(log)).size() > 0) {
        const QJsonDocument row = QJsonDocument::fromJson(firstRow);
        if (!row.isObject() || !row.object().contains(QStringLiteral("sequence")))
            throw LiveLogError(log
                               + ": exists and is not a live log (its first line is not a row of one); live mode appends only to "
                                 "its own log: give a new file, or an earlier watch's log to continue it");
    }
    if (!csv.empty() && QFileInfo(QString::fromStdString(csv)).size() > 0) {
        const QByteArray header = firstLine(csv);
        if (header != QByteArray::fromStdString(trendHeader()))
            throw LiveLogError(csv + ": exists with other columns than this watch writes"
                               + std::string(header.startsWith("sequence,stack,status,")
                                                 ? " (another --order or Zernike ordering: the coefficient columns differ)"
                                                 : " (it is not a live trend table)")
                               + "; give a new file, or the table of a watch with the same settings to continue it");
    }
}

// The log of an earlier run: the stacks it fitted, failed or skipped are not fitted again (unless a file of one was
// written since), and the sequence goes on. Read backwards from the end, only as far as the folder's files need (a
// row detected before the folder's oldest file cannot be about any file there now) and as far as the trend table
// lags behind the log (a watch stopped between the two): memory and time do not grow with the log.
void LiveWatchWorker::resumeFromLog()
{
    const qint64 oldest = oldestFileMs(m_options.folder);
    const int trendSequence = lastTrendSequence(); // -1: no trend table with rows to repair
    std::vector<QJsonObject> missingFromTrend;     // newest first
    int rowsRead = 0, resumed = 0;
    bool sequenceKnown = false;
    forEachLineBackwards(m_options.logPath, [&](const QByteArray& line) {
        const QJsonDocument document = QJsonDocument::fromJson(line);
        if (!document.isObject())
            return true; // not a row: passed over
        const QJsonObject row = document.object();
        const int sequence = row.value(QStringLiteral("sequence")).toInt(-1);
        if (!sequenceKnown) {
            m_sequence = sequence + 1;
            sequenceKnown = true;
        }
        ++rowsRead;
        const qint64 written = msSinceEpoch(row.value(QStringLiteral("written")), std::numeric_limits<qint64>::max());
        const std::string stack = row.value(QStringLiteral("stack")).toString().toStdString();
        if (!stack.empty()) {
            m_finder.markHandled(stack, written);
            ++resumed;
        }
        // A skipped stack was older than the row's: written at the latest when it was.
        for (const QJsonValue& skipped : row.value(QStringLiteral("skipped")).toArray()) {
            m_finder.markHandled(skipped.toString().toStdString(), written);
            ++resumed;
        }
        if (trendSequence >= 0 && sequence > trendSequence)
            missingFromTrend.push_back(row);
        const bool folderNeedsMore = msSinceEpoch(row.value(QStringLiteral("detected")), 0) >= oldest;
        const bool trendNeedsMore = trendSequence >= 0 && sequence > trendSequence + 1;
        return folderNeedsMore || trendNeedsMore;
    });
    {
        std::lock_guard<std::mutex> lock(m_owner->m_mutex);
        m_owner->m_counts.resumed = resumed;
    }
    if (rowsRead > 0)
        say(QStringLiteral("%1: continued at sequence %2 (%3 rows read back: the %4 stacks done there are not fitted again)")
                .arg(QString::fromStdString(m_options.logPath))
                .arg(m_sequence)
                .arg(rowsRead)
                .arg(resumed));
    // The rows the trend table lacks, in order: the log is written first, so a watch stopped between the two leaves
    // the table behind, never ahead.
    for (auto it = missingFromTrend.rbegin(); it != missingFromTrend.rend(); ++it)
        writeCsv(*it);
    if (!missingFromTrend.empty())
        say(QStringLiteral("%1: %2 row(s) the log holds were missing and were added")
                .arg(QString::fromStdString(m_options.csvPath))
                .arg(missingFromTrend.size()));
}

std::string LiveWatchWorker::trendHeader() const
{
    std::string header = "sequence,stack,status,warm_started,written,finished,latency_seconds,fit_seconds,rms_waves,strehl";
    const char* ordering = zernike::orderingName(m_options.settings.model.ordering);
    for (int i : m_csvIndices)
        header.append(",").append(ordering).append("_").append(std::to_string(i)).append("_waves");
    return header + ",skipped,error";
}

// The sequence of the trend table's last whole row; -1 for no table, or one with its header alone.
int LiveWatchWorker::lastTrendSequence() const
{
    if (m_options.csvPath.empty())
        return -1;
    int sequence = -1;
    forEachLineBackwards(m_options.csvPath, [&](const QByteArray& line) {
        bool number = false;
        const int value = line.left(line.indexOf(',')).toInt(&number);
        if (number)
            sequence = value;
        return false; // the last line only
    });
    return sequence;
}

void LiveWatchWorker::startTrendTable()
{
    // A new or empty table starts with its header (an existing one was checked to have it: checkOwnFiles).
    if (!m_options.csvPath.empty() && QFileInfo(QString::fromStdString(m_options.csvPath)).size() <= 0)
        appendLine(m_options.csvPath, QByteArray::fromStdString(trendHeader()));
}

// The folder's watchers: Qt's, inotify's renames on Linux (a file moved in complete), and the periodic scan.
void LiveWatchWorker::startWatching()
{
    m_watcher = new QFileSystemWatcher(this);
    m_watcher->addPath(QString::fromStdString(m_options.folder));
    QObject::connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, [this] { scheduleProcess(); });
#ifdef Q_OS_LINUX
    m_inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (m_inotify >= 0
        && inotify_add_watch(m_inotify, m_options.folder.c_str(), IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) >= 0) {
        m_notifier = new QSocketNotifier(qintptr(m_inotify), QSocketNotifier::Read, this);
        QObject::connect(m_notifier, &QSocketNotifier::activated, this, [this] { readInotify(); });
    } else if (m_inotify >= 0) {
        ::close(m_inotify);
        m_inotify = -1;
    }
#endif
    m_timer = new QTimer(this);
    m_timer->setInterval(std::max(10, m_options.scanIntervalMs));
    QObject::connect(m_timer, &QTimer::timeout, this, [this] { process(); });
    m_timer->start();
}

void LiveWatchWorker::readInotify()
{
#ifdef Q_OS_LINUX
    alignas(inotify_event) char buffer[16384];
    for (;;) {
        const ssize_t n = ::read(m_inotify, buffer, sizeof buffer);
        if (n <= 0)
            break;
        for (ssize_t at = 0; at < n;) {
            const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
            if ((event->mask & IN_MOVED_TO) && event->len > 0)
                m_finder.markRenamed(QString::fromLocal8Bit(event->name));
            at += ssize_t(sizeof(inotify_event) + event->len);
        }
    }
    scheduleProcess();
#endif
}

void LiveWatchWorker::scheduleProcess()
{
    if (m_processQueued || m_done)
        return;
    m_processQueued = true;
    QTimer::singleShot(0, this, [this] {
        m_processQueued = false;
        process();
    });
}

void LiveWatchWorker::process()
{
    if (m_done)
        return;
    if (m_owner->m_cancel.load()) {
        finish(false, QStringLiteral("stopped"));
        return;
    }
    const qint64 now = steadyMs();
    std::vector<CompleteStack> ready;
    try {
        ready = m_finder.scan(now);
    } catch (const std::exception& e) {
        finish(true, QString::fromStdString(e.what()));
        return;
    }
    if (m_finder.sawChange() || !ready.empty())
        m_lastActivity = now;
    if (ready.empty()) {
        // A stack read short is waited for (at most StackFinderOptions::incompleteMs): it ends in a row either way.
        if (m_options.exitWhenIdleSeconds > 0 && m_finder.deferredStacks() == 0
            && now - m_lastActivity >= qint64(m_options.exitWhenIdleSeconds * 1000)) {
            QString reason = QStringLiteral("idle for %1 s").arg(m_options.exitWhenIdleSeconds);
            if (m_finder.pendingFiles() > 0)
                reason += QStringLiteral(" (%1 file(s) never became a complete stack)").arg(m_finder.pendingFiles());
            finish(false, reason);
        }
        return;
    }
    // The newest wins; the others are listed in its row. A stack read short (still being written) is not handled:
    // the next newest wins then.
    std::sort(ready.begin(), ready.end(), [](const CompleteStack& a, const CompleteStack& b) {
        return std::tie(a.lastWriteMs, a.name) < std::tie(b.lastWriteMs, b.name);
    });
    while (!ready.empty()) {
        const CompleteStack newest = ready.back();
        ready.pop_back();
        QJsonArray skipped;
        for (const CompleteStack& older : ready)
            skipped.append(QString::fromStdString(older.name));
        if (handle(newest, skipped)) {
            m_handledThisRun += 1 + int(ready.size());
            break;
        }
        if (m_done)
            return;
    }
    if (m_done)
        return;
    m_lastActivity = steadyMs();
    if (m_options.maxStacks > 0 && m_handledThisRun >= m_options.maxStacks) {
        finish(false, QStringLiteral("%1 stacks handled").arg(m_handledThisRun));
        return;
    }
    scheduleProcess(); // more may have come during the fit
}

void LiveWatchWorker::checkShape(const PreparedRun& run, const CompleteStack& stack)
{
    // A file that lost planes when read (cut short, or still being written) is not the stack: looked at again when
    // it changes, failed when it does not.
    for (const DatasetFile& f : run.dataset.files)
        if (!f.damage.empty())
            throw IncompleteFileError(f.damage);
    const Image& first = run.dataset.planes.front().raw;
    const size_t planes = run.dataset.planes.size();
    // The expectation taken from the first stack is that stack's as it is now, while no other was fitted after it:
    // a first file read before its writer finished it, and rewritten since, does not set the watch's shape.
    if (!m_expectedStack.empty() && stack.name == m_expectedStack) {
        m_expectedPlanes = 0;
        m_expectedWidth = m_expectedHeight = 0;
    }
    if (m_expectedPlanes == 0) {
        m_expectedPlanes = planes;
        m_expectedFrom = "as the first stack had";
        m_expectedStack = stack.name;
    }
    if (m_expectedWidth == 0) {
        m_expectedWidth = first.width;
        m_expectedHeight = first.height;
    }
    if (planes < m_expectedPlanes && !stack.lastChance)
        throw IncompleteFileError("the stack has " + shapeText(planes, first.width, first.height) + " and the watch expects "
                                  + std::to_string(m_expectedPlanes) + " (" + m_expectedFrom + ")");
    bool same = planes == m_expectedPlanes;
    for (const DatasetPlane& p : run.dataset.planes)
        same = same && p.raw.width == m_expectedWidth && p.raw.height == m_expectedHeight;
    if (!same) {
        const std::string shape = shapeText(planes, first.width, first.height);
        throw ShapeMismatch("the stack has " + shape + "; the watch expects "
                                + shapeText(m_expectedPlanes, m_expectedWidth, m_expectedHeight) + " (" + m_expectedFrom + ")",
                            shape);
    }
}

bool LiveWatchWorker::handle(const CompleteStack& stack, const QJsonArray& skipped)
{
    StackOutcome outcome;
    if (!fitStack(stack, outcome))
        return true; // stopped mid-fit: not logged, so a restart fits it
    if (outcome.deferred) {
        m_finder.defer(stack, steadyMs());
        if (m_saidDeferred.insert(stack.name).second)
            say(QStringLiteral("%1: not read whole (%2); read again when it changes, logged as failed if it stays so for %3 s")
                    .arg(QString::fromStdString(stack.name), QString::fromStdString(outcome.error))
                    .arg(m_options.finder.incompleteMs / 1000.0));
        return false;
    }
    LiveRecord typed = record(stack, outcome, int(skipped.size()));
    const QJsonObject row = logRow(stack, outcome, typed, skipped);
    try {
        writeOutputs(row, stack, outcome);
    } catch (const std::exception& e) {
        finish(true, QString::fromStdString(e.what()) + QStringLiteral("; the log keeps its whole rows"));
        return true;
    }
    publish(row, std::move(typed));
    if (outcome.ok && stack.name != m_expectedStack)
        m_expectedStack.clear(); // another stack fitted with the expected shape: it stays
    return true;
}

// Fits one complete stack with the watch's settings, warm-started from the last good fit when the parameters match.
// False when the watch was stopped mid-fit.
bool LiveWatchWorker::fitStack(const CompleteStack& stack, StackOutcome& outcome)
{
    outcome.detected = QDateTime::currentMSecsSinceEpoch();
    QElapsedTimer fitClock;
    fitClock.start();
    try {
        PreparedRun run = prepareStackRun(m_options.settings, stack.paths);
        checkShape(run, stack);
        if (!m_warm.empty() && m_warm.size() == run.problem.start.size()) {
            run.request.start = m_warm;
            run.request.stages.clear(); // the previous stack's result is a better seed than a coarse stage
            outcome.warm = true;
        }
        FitResult fitted = reconstruct(run.request, {}, &m_owner->m_cancel);
        if (m_owner->m_cancel.load())
            return false;
        outcome.result = std::make_shared<FitResult>(std::move(fitted));
    } catch (const IncompleteFileError& e) {
        outcome.error = e.what();
        if (!stack.lastChance) {
            outcome.deferred = true;
            return true;
        }
        outcome.error += "; unchanged for " + QString::number(m_options.finder.incompleteMs / 1000.0).toStdString() + " s";
    } catch (const ShapeMismatch& e) {
        outcome.error = e.what();
        outcome.mismatch = true;
        if (m_saidShapes.insert(e.shape()).second)
            say(QStringLiteral("%1: %2; every such stack is logged as an error and not fitted")
                    .arg(QString::fromStdString(stack.name), QString::fromStdString(e.what())));
    } catch (const std::exception& e) {
        outcome.error = e.what();
    }
    outcome.finished = QDateTime::currentMSecsSinceEpoch();
    outcome.fitSeconds = double(fitClock.nsecsElapsed()) * 1e-9;
    outcome.ok = outcome.result && outcome.result->solver.termination != Termination::Failed;
    if (outcome.result && !outcome.ok)
        outcome.error = "the fit failed: " + outcome.result->solver.message;
    return true;
}

// The log's row of a stack, written from its record: the result JSON's keys plus its inputs, times, the completeness
// rule and the skipped stacks.
QJsonObject LiveWatchWorker::logRow(const CompleteStack& stack, const StackOutcome& outcome, const LiveRecord& record,
                                    const QJsonArray& skipped) const
{
    QJsonObject row = record.result ? resultToJson(*record.result) : QJsonObject{};
    row.insert(QStringLiteral("sequence"), record.sequence);
    row.insert(QStringLiteral("stack"), QString::fromStdString(record.stack));
    row.insert(QStringLiteral("inputs"), inputsOf(stack));
    row.insert(QStringLiteral("status"), QLatin1String(liveStatusName(record.status)));
    if (!record.error.empty())
        row.insert(QStringLiteral("error"), QString::fromStdString(record.error));
    if (outcome.mismatch)
        row.insert(QStringLiteral("settings_mismatch"), true);
    row.insert(QStringLiteral("complete_rule"), QString::fromStdString(stack.rule));
    row.insert(QStringLiteral("written"), isoMs(stack.lastWriteMs));
    row.insert(QStringLiteral("detected"), isoMs(outcome.detected));
    row.insert(QStringLiteral("finished"), isoMs(outcome.finished));
    row.insert(QStringLiteral("fit_seconds"), record.fitSeconds);
    row.insert(QStringLiteral("latency_seconds"), record.latencySeconds);
    row.insert(QStringLiteral("warm_started"), record.warmStarted);
    row.insert(QStringLiteral("skipped"), skipped);
    return row;
}

// The result's own JSON when results are kept, then the row appended to the log, then to the trend table: each later
// write is repaired from an earlier one on a restart (a result written but not logged is fitted again; a logged row
// missing from the table is added). Throws on a write error.
void LiveWatchWorker::writeOutputs(const QJsonObject& row, const CompleteStack& stack, const StackOutcome& outcome)
{
    if (outcome.result && !m_options.resultsDir.empty()) {
        QJsonObject json = resultToJson(*outcome.result);
        json.insert(QStringLiteral("live_input"), QJsonObject{{QStringLiteral("stack"), QString::fromStdString(stack.name)},
                                                              {QStringLiteral("inputs"), inputsOf(stack)},
                                                              {QStringLiteral("sequence"), m_sequence}});
        // The stack's whole name: run1.a.fits and run1.b.fits are two results.
        const QString name = QString::fromStdString(stack.name) + QStringLiteral(".json");
        writeFileAtomically(QDir(QString::fromStdString(m_options.resultsDir)).filePath(name).toStdString(), QJsonDocument(json).toJson(),
                            true);
    }
    appendLine(m_options.logPath, QJsonDocument(row).toJson(QJsonDocument::Compact));
    if (!m_options.csvPath.empty())
        writeCsv(row);
}

// The typed record of a logged stack (the row's numbers, the result itself).
LiveRecord LiveWatchWorker::record(const CompleteStack& stack, const StackOutcome& outcome, int skippedCount) const
{
    LiveRecord r;
    r.sequence = m_sequence;
    r.stack = stack.name;
    r.status = !outcome.ok ? LiveStatus::Failed : outcome.result->verdict.describesData ? LiveStatus::Ok : LiveStatus::PoorFit;
    r.error = outcome.error;
    r.skipped = skippedCount;
    r.latencySeconds = double(outcome.finished - stack.lastWriteMs) * 1e-3;
    r.fitSeconds = outcome.fitSeconds;
    r.warmStarted = outcome.warm;
    r.result = outcome.result;
    return r;
}

// The logged stack made the latest (and kept, for a reference chosen later), compared with a held reference, counted
// and announced: its row as written, then its typed record.
void LiveWatchWorker::publish(const QJsonObject& row, LiveRecord record)
{
    const std::shared_ptr<const FitResult> result = record.result;
    const bool ok = record.status != LiveStatus::Failed;
    const int sequence = m_sequence++;
    if (ok)
        m_warm = result->solver.parameters;
    LiveDifference difference;
    if (ok) {
        // The reference as it is now; compared outside the lock (a pass over the pupil's pixels).
        if (const std::shared_ptr<const LiveFit> reference = m_owner->reference(); reference && reference->record.result) {
            difference.sequence = sequence;
            difference.referenceSequence = reference->record.sequence;
            difference.comparison = std::make_shared<const RunComparison>(compareRuns(*reference->record.result, *result));
        }
    }
    {
        std::lock_guard<std::mutex> lock(m_owner->m_mutex);
        (ok ? m_owner->m_counts.fitted : m_owner->m_counts.failed) += 1;
        m_owner->m_counts.skipped += record.skipped;
        if (result) {
            auto fit = std::make_shared<LiveFit>();
            fit->record = record;
            fit->difference = difference;
            m_owner->m_latest = fit;
            ++m_owner->m_version;
            if (ok && m_options.keptFits > 0) {
                // For a reference chosen later: what a comparison reads (coefficients, phase map), not the planes.
                auto slim = std::make_shared<FitResult>(*result);
                slim->planes.clear();
                auto kept = std::make_shared<LiveFit>();
                kept->record = record;
                kept->record.result = std::move(slim);
                m_owner->m_kept[sequence] = std::move(kept);
                while (int(m_owner->m_kept.size()) > m_options.keptFits)
                    m_owner->m_kept.erase(m_owner->m_kept.begin());
            }
        }
    }
    emit m_owner->rowWritten(row);
    emit m_owner->stackLogged(record);
    if (difference.comparison)
        emit m_owner->differenceComputed(difference);
}

void LiveWatchWorker::compareKept(const std::shared_ptr<const LiveFit>& reference, unsigned long generation)
{
    // Held here, on the watch's thread, between two fits: the stacks kept so far are compared below, each later one
    // by handle(), none twice.
    {
        std::lock_guard<std::mutex> lock(m_owner->m_mutex);
        if (m_owner->m_referenceGeneration != generation)
            return; // another hold or a release came after this one
        m_owner->m_reference = reference;
    }
    const int from = reference->record.sequence;
    std::vector<std::pair<int, std::shared_ptr<const LiveFit>>> later;
    std::shared_ptr<const LiveFit> latest;
    {
        std::lock_guard<std::mutex> lock(m_owner->m_mutex);
        for (auto it = m_owner->m_kept.upper_bound(from); it != m_owner->m_kept.end(); ++it)
            later.emplace_back(*it);
        latest = m_owner->m_latest;
    }
    for (const auto& [sequence, fit] : later) {
        LiveDifference difference;
        difference.sequence = sequence;
        difference.referenceSequence = from;
        difference.comparison = std::make_shared<const RunComparison>(compareRuns(*reference->record.result, *fit->record.result));
        if (latest && latest->record.sequence == sequence) {
            // The stack shown now, again with its difference, so that a display shows the map at once.
            auto again = std::make_shared<LiveFit>(*latest);
            again->difference = difference;
            std::lock_guard<std::mutex> lock(m_owner->m_mutex);
            if (m_owner->m_latest == latest) {
                m_owner->m_latest = std::move(again);
                ++m_owner->m_version;
            }
        }
        emit m_owner->differenceComputed(difference);
    }
}

// One row of the trend table, from the log's row alone (so that a restart can add a row the log holds).
void LiveWatchWorker::writeCsv(const QJsonObject& row)
{
    auto number = [&](const char* key) {
        const QJsonValue v = row.value(QLatin1String(key));
        return v.isDouble() ? QString::number(v.toDouble(), 'g', 8).toStdString() : std::string();
    };
    std::string line = std::to_string(row.value(QStringLiteral("sequence")).toInt()) + ","
                       + csvField(row.value(QStringLiteral("stack")).toString().toStdString()) + ","
                       + row.value(QStringLiteral("status")).toString().toStdString() + ","
                       + (row.value(QStringLiteral("warm_started")).toBool() ? "yes" : "no") + ","
                       + row.value(QStringLiteral("written")).toString().toStdString() + ","
                       + row.value(QStringLiteral("finished")).toString().toStdString() + "," + number("latency_seconds") + ","
                       + number("fit_seconds") + "," + number("rms_waves") + "," + number("strehl");
    std::map<int, double> waves;
    for (const QJsonValue& c : row.value(QStringLiteral("coefficients")).toArray())
        waves[c.toObject().value(QStringLiteral("index")).toInt()] = c.toObject().value(QStringLiteral("value_waves")).toDouble();
    for (int index : m_csvIndices) {
        const auto it = waves.find(index);
        line += "," + (it == waves.end() ? std::string() : QString::number(it->second, 'g', 8).toStdString());
    }
    QStringList skipped;
    for (const QJsonValue& s : row.value(QStringLiteral("skipped")).toArray())
        skipped << s.toString();
    line += "," + csvField(skipped.join(QLatin1Char(' ')).toStdString()) + ","
            + csvField(row.value(QStringLiteral("error")).toString().toStdString());
    appendLine(m_options.csvPath, QByteArray::fromStdString(line));
}

void LiveWatchWorker::finish(bool failed, const QString& reason)
{
    if (m_done)
        return;
    m_done = true;
    delete m_timer;
    m_timer = nullptr;
    delete m_watcher;
    m_watcher = nullptr;
    delete m_notifier;
    m_notifier = nullptr;
    if (m_inotify >= 0)
        ::close(m_inotify);
    m_inotify = -1;
    m_owner->m_running.store(false);
    emit m_owner->finished(failed, reason);
    thread()->quit();
}

bool lowerThisThreadsPriority()
{
#ifdef Q_OS_LINUX
    // Linux keeps a nice value per thread: PRIO_PROCESS with a thread's id sets that thread's alone.
    const auto tid = id_t(::syscall(SYS_gettid));
    errno = 0;
    const int now = ::getpriority(PRIO_PROCESS, tid);
    if (now == -1 && errno != 0)
        return false;
    return ::setpriority(PRIO_PROCESS, tid, std::min(19, now + kBackgroundNice)) == 0;
#else
    return false;
#endif
}

// ---- LiveWatch ----------------------------------------------------------------------------------------

LiveWatch::LiveWatch(LiveWatchOptions options, QObject* parent)
    : QObject(parent)
    , m_options(std::move(options))
{
    qRegisterMetaType<wfs::LiveDifference>(); // crosses from the watch's thread in a queued signal
    qRegisterMetaType<wfs::LiveRecord>();
}

LiveWatch::~LiveWatch()
{
    stop();
    if (m_thread) {
        m_thread->wait();
        delete m_worker; // its timers and notifiers went with finish(), on its own thread
        delete m_thread;
    }
}

void LiveWatch::start()
{
    if (m_thread)
        return;
    m_running.store(true);
    try {
        m_worker = new LiveWatchWorker(this);
    } catch (const std::exception& e) {
        m_running.store(false);
        const QString reason = QString::fromStdString(e.what());
        QMetaObject::invokeMethod(
            this, [this, reason] { emit finished(true, reason); }, Qt::QueuedConnection);
        return;
    }
    m_thread = new QThread;
    m_thread->setObjectName(QStringLiteral("live watch"));
    m_worker->moveToThread(m_thread);
    LiveWatchWorker* worker = m_worker;
    QObject::connect(m_thread, &QThread::started, worker, [worker] { worker->begin(); });
    m_thread->start();
}

void LiveWatch::stop()
{
    m_cancel.store(true); // a fit in progress ends at its next iteration
    if (m_worker) {
        LiveWatchWorker* worker = m_worker;
        QMetaObject::invokeMethod(
            worker, [worker] { worker->finish(false, QStringLiteral("stopped")); }, Qt::QueuedConnection);
    }
}

LiveCounts LiveWatch::counts() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_counts;
}

std::shared_ptr<const LiveFit> LiveWatch::latest(unsigned long* version) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (version)
        *version = m_version;
    return m_latest;
}

void LiveWatch::holdReference(std::shared_ptr<const LiveFit> reference)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_reference = std::move(reference);
    ++m_referenceGeneration;
}

bool LiveWatch::holdReference(int sequence)
{
    std::shared_ptr<const LiveFit> chosen;
    unsigned long generation = 0;
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        const auto it = m_kept.find(sequence);
        if (it == m_kept.end())
            return false;
        if (!m_worker || !m_running.load())
            return false; // the comparisons run on the watch's thread
        chosen = it->second;
        generation = ++m_referenceGeneration;
    }
    LiveWatchWorker* worker = m_worker;
    QMetaObject::invokeMethod(
        worker, [worker, chosen, generation] { worker->compareKept(chosen, generation); }, Qt::QueuedConnection);
    return true;
}

std::vector<int> LiveWatch::keptSequences() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    std::vector<int> sequences;
    sequences.reserve(m_kept.size());
    for (const auto& [sequence, fit] : m_kept)
        sequences.push_back(sequence);
    return sequences;
}

std::shared_ptr<const LiveFit> LiveWatch::keptFit(int sequence) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto it = m_kept.find(sequence);
    return it == m_kept.end() ? nullptr : it->second;
}

std::shared_ptr<const LiveFit> LiveWatch::reference() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_reference;
}

} // namespace wfs
