#pragma once
// Live mode's own output files (engine/LiveWatch.h): the log, JSON Lines appended one whole line at a time, and the
// trend table. Plain file handling with no watch in it, so that its guarantees can be tested on their own:
// - live mode writes only into files of its own: never through a symbolic link, never into a FIFO, device or
//   socket (opened without blocking, the opened descriptor's type checked: no check-then-open race), never into
//   an existing file that is not a log (or a trend table with the same columns) of its own;
// - whole lines only: a write that fails (a full disk, a file-size limit) is cut back to the size before it;
// - bounded memory on a restart: the log is read backwards from its end, as far as the caller needs.
#include <QByteArray>
#include <QJsonObject>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

// The log cannot be read or written (a full disk, a file-size limit, no permission, not a file of live mode's own);
// the watch stops, or does not start.
class LiveLogError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Appends `line` (a newline is added) to `path` with one write, creating the file. A write that fails (a
// full disk, a file-size limit) is cut back to the size before it, so the file keeps whole lines only.
// Throws LiveLogError naming the file and the reason, also for a symbolic link or a file that is not regular.
void appendLine(const std::string& path, const QByteArray& line);

// The rows of a log: every whole line that is a JSON object (a last line without its newline is skipped). Reads the
// whole file: for tests and small logs; a watch's restart reads backwards (forEachLineBackwards).
std::vector<QJsonObject> readLiveLog(const std::string& path);

// Calls `visit` with the file's whole lines from the last to the first (each without its newline; a last line
// without its newline is skipped, being written) until it returns false. Memory is bounded: lines longer than
// kLongestLogLine are passed over unread. Nothing happens for a file that does not exist; throws LiveLogError for a
// link, a file that is not regular, or a read error.
constexpr qint64 kLongestLogLine = 16 << 20;
void forEachLineBackwards(const std::string& path, const std::function<bool(const QByteArray&)>& visit);

// The file's first line (without its newline, at most `limit` bytes); empty for a missing or empty file. Throws
// LiveLogError for a link or a file that is not regular.
QByteArray firstLine(const std::string& path, qint64 limit = 1 << 20);

// A log's tail without its newline (a crash mid-line) is cut, so that the next row starts a line of its own. Only the
// tail is read. Returns the bytes cut; throws LiveLogError when the file cannot be opened or cut.
qint64 cutPartialLine(const std::string& path);

// Whether `a` and `b` name one file: the same file when both exist, else the same absolute path.
bool sameFile(const std::string& a, const std::string& b);

} // namespace wfs
