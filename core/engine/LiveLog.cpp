// The live log's file handling of engine/LiveLog.h: whole-line appends with POSIX calls (one write, cut back when it
// fails), reading the rows back, and cutting a crash's unfinished last line.
#include "engine/LiveLog.h"

#include <QFile>
#include <QJsonDocument>

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

} // namespace

void appendLine(const std::string& path, const QByteArray& line)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        throw LiveLogError(path + ": cannot open for appending (" + errnoText(errno) + ")");
    struct stat before { };
    ::fstat(fd, &before);
    const QByteArray bytes = line + '\n';
    qsizetype written = 0;
    int error = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.constData() + written, size_t(bytes.size() - written));
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
        if (written > 0 && S_ISREG(before.st_mode))
            (void)!::ftruncate(fd, before.st_size);
        ::close(fd);
        throw LiveLogError(path + ": cannot append (" + errnoText(error) + ")");
    }
    if (::close(fd) != 0)
        throw LiveLogError(path + ": cannot append (" + errnoText(errno) + ")");
}

std::vector<QJsonObject> readLiveLog(const std::string& path)
{
    std::vector<QJsonObject> rows;
    QFile file(QString::fromStdString(path));
    if (!file.exists())
        return rows;
    if (!file.open(QIODevice::ReadOnly))
        throw LiveLogError(path + ": cannot read (" + file.errorString().toStdString() + ")");
    while (!file.atEnd()) {
        const QByteArray line = file.readLine();
        if (!line.endsWith('\n'))
            break; // being written, or cut by a crash
        const QJsonDocument doc = QJsonDocument::fromJson(line);
        if (doc.isObject())
            rows.push_back(doc.object());
    }
    return rows;
}

qint64 cutPartialLine(const std::string& path)
{
    QFile file(QString::fromStdString(path));
    if (!file.exists() || file.size() == 0)
        return 0;
    if (!file.open(QIODevice::ReadWrite))
        throw LiveLogError(path + ": cannot open (" + file.errorString().toStdString() + ")");
    const QByteArray all = file.readAll();
    if (all.endsWith('\n'))
        return 0;
    const qint64 keep = all.lastIndexOf('\n') + 1;
    if (!file.resize(keep))
        throw LiveLogError(path + ": cannot cut its unfinished last line (" + file.errorString().toStdString() + ")");
    return all.size() - keep;
}

} // namespace wfs
