// The live log's file handling of engine/LiveLog.h: whole-line appends with POSIX calls (one write, cut back when it
// fails), opened without following links or blocking, reading the rows back (forwards, or backwards from the end with
// bounded memory), and cutting a crash's unfinished last line.
#include "engine/LiveLog.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace wfs {

namespace {

std::string errnoText(int error)
{
    return std::strerror(error);
}

// A descriptor closed when it goes out of scope.
struct Descriptor {
    int fd = -1;
    ~Descriptor()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

// Opens one of live mode's own files: never through a symbolic link (O_NOFOLLOW), never blocking (a FIFO opens at
// once or fails), and a regular file only, checked on the opened descriptor. -1 when `flags` has no O_CREAT and the
// file does not exist.
int openOwnFile(const std::string& path, int flags, const char* doing)
{
    const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int error = errno;
        if (error == ENOENT && !(flags & O_CREAT))
            return -1;
        if (error == ELOOP)
            throw LiveLogError(path + ": is a symbolic link; live mode writes only into a file of its own (give the file itself)");
        if (error == ENXIO)
            throw LiveLogError(path + ": is a FIFO or socket, not a file; live mode writes only into a regular file of its own");
        throw LiveLogError(path + ": cannot open " + doing + " (" + errnoText(error) + ")");
    }
    struct stat info { };
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        throw LiveLogError(path
                           + ": is not a regular file (a FIFO, device, socket or folder); live mode writes only into a "
                             "regular file of its own");
    }
    // Regular files never block; the flag only kept the open from waiting on a FIFO.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

bool readAt(int fd, char* buffer, qint64 count, qint64 offset)
{
    qint64 done = 0;
    while (done < count) {
        const ssize_t n = ::pread(fd, buffer + done, size_t(count - done), off_t(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += n;
    }
    return true;
}

qint64 fileSize(int fd)
{
    struct stat info { };
    return ::fstat(fd, &info) == 0 ? qint64(info.st_size) : 0;
}

} // namespace

void appendLine(const std::string& path, const QByteArray& line)
{
    Descriptor file{openOwnFile(path, O_WRONLY | O_APPEND | O_CREAT, "for appending")};
    const qint64 before = fileSize(file.fd);
    const QByteArray bytes = line + '\n';
    qsizetype written = 0;
    int error = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(file.fd, bytes.constData() + written, size_t(bytes.size() - written));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            error = n < 0 ? errno : ENOSPC;
            break;
        }
        written += n;
    }
    if (error != 0) {
        // Whole lines only: what of this line got in is cut back.
        if (written > 0)
            (void)!::ftruncate(file.fd, off_t(before));
        throw LiveLogError(path + ": cannot append (" + errnoText(error) + ")");
    }
    const int fd = file.fd;
    file.fd = -1;
    if (::close(fd) != 0)
        throw LiveLogError(path + ": cannot append (" + errnoText(errno) + ")");
}

std::vector<QJsonObject> readLiveLog(const std::string& path)
{
    std::vector<QJsonObject> rows;
    forEachLineBackwards(path, [&](const QByteArray& line) {
        const QJsonDocument doc = QJsonDocument::fromJson(line);
        if (doc.isObject())
            rows.push_back(doc.object());
        return true;
    });
    std::reverse(rows.begin(), rows.end());
    return rows;
}

void forEachLineBackwards(const std::string& path, const std::function<bool(const QByteArray&)>& visit)
{
    Descriptor file{openOwnFile(path, O_RDONLY, "for reading")};
    if (file.fd < 0)
        return;
    constexpr qint64 kBlock = 1 << 16;
    qint64 end = fileSize(file.fd); // the lines before `end` are still to visit
    // The last line without its newline is being written (or was cut by a crash): not a row.
    QByteArray pending;    // the bytes read from `end` on that are not a whole line yet (at most kLongestLogLine)
    bool skipping = false; // the current line is longer than kLongestLogLine: passed over
    bool lastLineOpen = true;
    std::vector<char> block(static_cast<size_t>(kBlock));
    while (end > 0) {
        const qint64 start = std::max<qint64>(0, end - kBlock);
        if (!readAt(file.fd, block.data(), end - start, start))
            throw LiveLogError(path + ": cannot read (" + errnoText(errno) + ")");
        qint64 at = end - start; // bytes of the block not yet consumed: [0, at)
        while (at > 0) {
            const char* base = block.data();
            const char* found = static_cast<const char*>(::memrchr(base, '\n', size_t(at)));
            const qint64 from = found ? qint64(found - base) + 1 : 0;
            if (!skipping) {
                if (pending.size() + (at - from) > kLongestLogLine) {
                    skipping = true;
                    pending.clear();
                } else {
                    pending.prepend(base + from, at - from);
                }
            }
            if (!found)
                break; // the line goes on in the block before
            // A newline: `pending` is a whole line (unless it is the file's unfinished last one).
            if (lastLineOpen) {
                lastLineOpen = false;
            } else if (!skipping && !visit(pending)) {
                return;
            }
            pending.clear();
            skipping = false;
            at = from - 1;
        }
        end = start;
    }
    if (!lastLineOpen && !skipping)
        visit(pending); // the first line
}

QByteArray firstLine(const std::string& path, qint64 limit)
{
    Descriptor file{openOwnFile(path, O_RDONLY, "for reading")};
    if (file.fd < 0)
        return {};
    QByteArray head(qsizetype(std::min(limit, fileSize(file.fd))), '\0');
    if (!head.isEmpty() && !readAt(file.fd, head.data(), head.size(), 0))
        throw LiveLogError(path + ": cannot read (" + errnoText(errno) + ")");
    const qsizetype newline = head.indexOf('\n');
    return newline >= 0 ? head.left(newline) : head;
}

qint64 cutPartialLine(const std::string& path)
{
    Descriptor file{openOwnFile(path, O_RDWR, "for repair")};
    if (file.fd < 0)
        return 0;
    const qint64 size = fileSize(file.fd);
    constexpr qint64 kBlock = 1 << 16;
    std::vector<char> block(static_cast<size_t>(kBlock));
    qint64 end = size;
    qint64 keep = 0; // the bytes up to and including the last newline
    while (end > 0) {
        const qint64 start = std::max<qint64>(0, end - kBlock);
        if (!readAt(file.fd, block.data(), end - start, start))
            throw LiveLogError(path + ": cannot read (" + errnoText(errno) + ")");
        if (const void* found = ::memrchr(block.data(), '\n', size_t(end - start))) {
            keep = start + qint64(static_cast<const char*>(found) - block.data()) + 1;
            break;
        }
        end = start;
    }
    if (keep == size)
        return 0;
    if (::ftruncate(file.fd, off_t(keep)) != 0)
        throw LiveLogError(path + ": cannot cut its unfinished last line (" + errnoText(errno) + ")");
    return size - keep;
}

bool sameFile(const std::string& a, const std::string& b)
{
    struct stat sa {
    }, sb{};
    if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    auto absolute = [](const std::string& p) { return QDir::cleanPath(QFileInfo(QString::fromStdString(p)).absoluteFilePath()); };
    return absolute(a) == absolute(b);
}

} // namespace wfs
