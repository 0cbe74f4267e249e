#pragma once
// Live mode: watch a folder a camera writes into, fit every complete stack as it arrives with one set of
// settings (through the one workflow: engine/Batch.h prepareStackRun -> prepareRun -> reconstruct), each
// fit warm-started from the previous stack's result, and append one JSON line per stack to a log.
//
//   LiveWatchOptions o;  o.folder = "incoming";  o.settings = loadBatchSettings("s.json");  o.logPath = "live.jsonl";
//   LiveWatch watch(o);
//   QObject::connect(&watch, &LiveWatch::rowWritten, ...);     // queued to the caller's thread
//   QObject::connect(&watch, &LiveWatch::finished, ...);       // why it stopped
//   watch.start();                                              // returns at once: all work is on its own thread
//
// When a file is complete (the rules: engine/StackFinder.h; docs/live.md says which writers they cover): when it
// was renamed into the folder (inotify's IN_MOVED_TO, Linux), or when its size and modification time have not
// changed for `stableMs` (any system: a scan of the folder every `scanIntervalMs` beside a QFileSystemWatcher,
// which alone misses events on network and FUSE file systems); a stack held one file per plane (names matching
// `planePattern`, e.g. stack_0007_z03.tif) is complete when it has all `planesPerStack` planes, each complete. A
// file still being written is never read; a file whose writer died mid-way stops changing, is then read, and
// becomes an error row, so it blocks nothing after it.
//
// When stacks arrive faster than they are fitted, the newest wins: the older complete stacks are not
// fitted, and the row of the stack that won lists them ("skipped"), so none is lost unsaid. Nothing queues
// beyond the folder's own listing.
//
// The log (JSON Lines; its file handling: engine/LiveLog.h): one object per stack, appended with one write of a
// whole line (a reader sees whole lines; a last line without its newline is being written); a failed write is cut
// back, so the log keeps whole lines only. A restart reads the log and fits no stack it already holds (fitted,
// failed or skipped).
#include "engine/RunComparison.h"
#include "engine/StackFinder.h"
#include "engine/Workflow.h"
#include "io/Session.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

class QThread;

namespace wfs {

class LiveWatchWorker;

struct LiveWatchOptions {
    std::string folder;
    Session settings;       // engine/Batch.h loadBatchSettings(), or a preset's settings
    std::string logPath;    // JSON Lines; continued when it exists
    std::string csvPath;    // optional trend table: one row per stack
    std::string resultsDir; // optional: each fitted stack's result JSON as `reconstruct --json` writes it
    StackFinderOptions finder;
    int scanIntervalMs = 100;         // the periodic scan beside the file-system watcher
    int maxStacks = 0;                // stop once this many stacks were handled (fitted, failed or skipped); 0 = never
    double exitWhenIdleSeconds = 0.0; // stop when no file changed and no stack came for this long; 0 = never
    // The watch's thread yields to the caller's (a desktop's event loop) when the two want one core: on Linux its
    // nice value is raised by kBackgroundNice. Off for the command line, whose one job is the watch.
    bool background = false;
    // Fitted stacks kept for a reference chosen later (holdReference(int)): their coefficients and phase maps (a
    // few tens of kB each; their planes are not kept); older ones are dropped.
    int keptFits = 500;
};

// How much a background thread (live mode's watch, the simulated camera in the desktop program) lowers its priority
// (a nice increment, Linux): its share of a contended core against a normal thread is then about a third.
constexpr int kBackgroundNice = 5;
// Lowers the calling thread's priority by kBackgroundNice (Linux; elsewhere nothing). False when it could not.
bool lowerThisThreadsPriority();

struct LiveCounts {
    int fitted = 0;  // rows with a result
    int failed = 0;  // rows with an error
    int skipped = 0; // listed in a row's "skipped"
    int resumed = 0; // stacks the log already held when the watch started
};

// A held reference's comparison with one later stack: core's runs comparison (reference first, the stack
// second), so its differences read "stack minus reference".
struct LiveDifference {
    int sequence = -1;          // the stack's, as in its row
    int referenceSequence = -1; // the reference's
    std::shared_ptr<const RunComparison> comparison;
};

// A logged stack, typed: what its log row (JSON, written at the file's edge) is made from, and what a display reads.
enum class LiveStatus {
    Ok,
    PoorFit, // fitted, but the model does not describe the stack (the result's verdict says why)
    Failed,  // not fitted, or the fit failed (`error` says why)
};
const char* liveStatusName(LiveStatus status); // the log's "status": "ok", "poor-fit", "failed"
struct LiveRecord {
    int sequence = -1; // 0, 1, ... in the log's order
    std::string stack; // the stack's name
    LiveStatus status = LiveStatus::Failed;
    std::string error;
    int skipped = 0;             // stacks passed over for this one (its row lists them)
    double latencySeconds = 0.0; // from the stack's last byte to its row
    double fitSeconds = 0.0;
    bool warmStarted = false;
    std::shared_ptr<const FitResult> result; // null when no fit was made
};

// The latest fitted stack, for a display that pulls at its own rate.
struct LiveFit {
    LiveRecord record;         // its result holds no planes when kept for a later reference
    LiveDifference difference; // against the reference held when it was fitted; no comparison when none was
};

class LiveWatch : public QObject {
    Q_OBJECT
public:
    explicit LiveWatch(LiveWatchOptions options, QObject* parent = nullptr);
    ~LiveWatch() override; // stops (cancelling a fit in progress, which is then not logged) and joins

    // Starts the watch on its own thread and returns at once. What goes wrong (a log that cannot be read,
    // a missing folder) comes as finished(true, reason).
    void start();
    // Asks the watch to stop and returns at once; finished() follows.
    void stop();
    bool isRunning() const { return m_running.load(); }

    LiveCounts counts() const;
    std::shared_ptr<const LiveFit> latest(unsigned long* version = nullptr) const;

    // Holds a fitted stack (e.g. latest()) as the reference: every stack fitted from now on is compared with
    // it (compareRuns, on the watch's thread) and differenceComputed() follows its rowWritten(). A null
    // reference, or releaseReference(), stops the comparisons. Any thread.
    void holdReference(std::shared_ptr<const LiveFit> reference);
    // Holds a chosen earlier stack, by its row's sequence, as the reference: one of keptSequences(). It is taken on
    // the watch's thread between two fits (reference() says so from then on), and the kept stacks after it are
    // compared with it at once (a differenceComputed() each, in order, and latest() again with its difference),
    // then every stack fitted later. False when the stack is not kept or the watch is not running.
    bool holdReference(int sequence);
    void releaseReference() { holdReference(nullptr); }
    std::shared_ptr<const LiveFit> reference() const;
    // The fitted stacks that can be chosen as a reference: the last LiveWatchOptions::keptFits, by sequence.
    std::vector<int> keptSequences() const;
    std::shared_ptr<const LiveFit> keptFit(int sequence) const; // null when not kept

signals:
    // The watch is set up (the log read, the folder listed, its watchers on): from here a file renamed into the
    // folder counts as complete at once; files that were there before count once stable.
    void watching();
    void rowWritten(const QJsonObject& row);                        // as the log holds it (the file's format: the command line prints it)
    void stackLogged(const wfs::LiveRecord& record);                // the same stack, typed (after rowWritten)
    void differenceComputed(const wfs::LiveDifference& difference); // while a reference is held
    // Said once each: a settings mismatch, a resumed log, a line of the log that was cut back.
    void message(const QString& text);
    // `failed`: stopped by an error (the folder is gone, the log cannot be written); else by maxStacks,
    // exitWhenIdleSeconds or stop().
    void finished(bool failed, const QString& reason);

private:
    friend class LiveWatchWorker;
    LiveWatchOptions m_options;
    QThread* m_thread = nullptr;
    LiveWatchWorker* m_worker = nullptr; // lives on m_thread; deleted here once that thread has ended
    std::atomic<bool> m_running{false};
    std::atomic<bool> m_cancel{false};
    mutable std::mutex m_mutex;
    LiveCounts m_counts;
    std::shared_ptr<const LiveFit> m_latest;
    std::shared_ptr<const LiveFit> m_reference;
    std::map<int, std::shared_ptr<const LiveFit>> m_kept; // by sequence; planes left out
    unsigned long m_referenceGeneration = 0;              // each hold or release: a chosen hold queued before a later one yields
    unsigned long m_version = 0;
};

} // namespace wfs

Q_DECLARE_METATYPE(wfs::LiveDifference)
Q_DECLARE_METATYPE(wfs::LiveRecord)
