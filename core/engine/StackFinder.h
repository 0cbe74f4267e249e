#pragma once
// Live mode's completeness rules (engine/LiveWatch.h): which image files in a watched folder form a stack that a
// camera has finished writing. Apart from the watch's thread, inotify and the log, so that the rules can be tested
// (and a pattern checked before a watch starts) by listing a folder at a time the caller chooses.
#include <QDir>
#include <QRegularExpression>
#include <QString>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

// The folder is gone, unmounted or unreadable; the watch stops.
class FolderGoneError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One file per plane: the default pattern's named groups "stack" (the stack's name) and "plane" (its index).
QString defaultPlanePattern(); // ^(?<stack>.+)_z(?<plane>\d+)\.(fits?|fts|tiff?)$, case-insensitive

struct StackFinderOptions {
    int stableMs = 1000; // unchanged size and modification time for this long = complete
    QString planePattern = defaultPlanePattern();
    // Planes of a one-file-per-plane stack. 0: not known, and a stack is complete once every plane file is
    // complete and no new plane has come for stableMs.
    int planesPerStack = 0;
    // A stack not read whole (unreadable, a file that declares more planes than it holds, fewer planes than the watch
    // expects: a file still being written looks so) is
    // read again when its files change; unchanged for this long after that, it is handed over a last time and fails.
    int incompleteMs = 30000;
};

struct CompleteStack {
    std::string name;               // the file's name, or a per-plane stack's "stack" group
    std::vector<std::string> paths; // its files, in plane order
    std::string rule;               // why it counts as complete: "renamed", "stable" or "all planes"
    qint64 lastWriteMs = 0;         // the newest modification time of its files, ms since 1970 (UTC)
    bool lastChance = false;        // deferred as read short (defer()) and unchanged since for incompleteMs
};

// The completeness rules, on the folder's listing; a plain class (no thread, no Qt events) so that the rules
// can be tested by driving its clock. Image files only (FITS, TIFF, PNG names, gzip'd FITS); names starting
// with '.' or ending in .tmp, .part, .partial, .crdownload or '~' are a writer's temporaries and not looked at.
class StackFinder {
public:
    // Throws std::invalid_argument for a plane pattern that is not a valid expression with the groups
    // "stack" and "plane".
    StackFinder(std::string folder, StackFinderOptions options);

    void markRenamed(const QString& fileName); // renamed into the folder: complete now
    // Fitted, failed or skipped as its files were at `lastWriteMs` (CompleteStack::lastWriteMs): not returned again
    // unless a file of it is written later (a camera that rewrites latest.fits), when it is a new stack.
    void markHandled(const std::string& stackName, qint64 lastWriteMs);
    bool isHandled(const std::string& stackName) const { return m_handled.count(stackName) > 0; }
    // A returned stack that was read short (still being written): returned again once its files change, or a last
    // time (CompleteStack::lastChance) when they stay unchanged for incompleteMs. `steadyMs` as scan()'s.
    void defer(const CompleteStack& stack, qint64 steadyMs);
    int deferredStacks() const { return int(m_deferred.size()); }

    // Lists the folder and returns the stacks that became complete (each once). `steadyMs` is a monotonic
    // clock in ms. Throws FolderGoneError when the folder is gone or cannot be listed.
    std::vector<CompleteStack> scan(qint64 steadyMs);
    bool sawChange() const { return m_sawChange; }           // the last scan found a new, changed or vanished file
    int pendingFiles() const { return int(m_files.size()); } // seen, not yet part of a complete stack

private:
    struct FileState {
        qint64 size = -1;
        qint64 mtimeMs = 0;
        qint64 unchangedSinceMs = 0; // steady clock: when its size and time were last seen to change
        qint64 firstSeenMs = 0;
        bool renamed = false;
        bool complete = false;
        std::string stack; // its stack's name
        int plane = -1;    // -1: a file that is a stack by itself
    };
    std::string m_folder;
    StackFinderOptions m_options;
    QRegularExpression m_pattern;
    std::map<QString, FileState> m_files;    // not yet handled
    std::map<std::string, qint64> m_handled; // stack name -> the newest write of its files when handled
    struct Deferred {
        qint64 lastWriteMs = 0; // its files' newest write when read short
        qint64 sinceMs = 0;     // steady clock: when it was deferred
    };
    std::map<std::string, Deferred> m_deferred;
    std::set<QString> m_renamed; // renames seen before the file was listed
    bool m_sawChange = false;

    // scan's steps: each listed image file's state brought up to date (files no longer listed dropped), then the
    // stacks whose files are complete.
    void updateFiles(const QDir& dir, qint64 now);
    std::vector<CompleteStack> completeStacks(const QDir& dir, qint64 now);
};

} // namespace wfs
