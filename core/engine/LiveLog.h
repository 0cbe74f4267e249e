#pragma once
// Live mode's log file (engine/LiveWatch.h): JSON Lines appended one whole line at a time, read back on a restart,
// and a crash's unfinished last line cut. Plain file handling with no watch in it, so that the whole-line
// guarantees can be tested on their own (a full disk is /dev/full) and the trend table shares the appending.
#include <QByteArray>
#include <QJsonObject>

#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

// The log cannot be read or written (a full disk, a file-size limit, no permission); the watch stops.
class LiveLogError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Appends `line` (a newline is added) to `path` with one write, creating the file. A write that fails (a
// full disk, a file-size limit) is cut back to the size before it, so the file keeps whole lines only.
// Throws LiveLogError naming the file and the reason.
void appendLine(const std::string& path, const QByteArray& line);

// The rows of a log: every whole line that is a JSON object (a last line without its newline is skipped).
std::vector<QJsonObject> readLiveLog(const std::string& path);

// A log's tail without its newline (a crash mid-line) is cut, so that the next row starts a line of its own.
// Returns the bytes cut; throws LiveLogError when the file cannot be opened or cut.
qint64 cutPartialLine(const std::string& path);

} // namespace wfs
