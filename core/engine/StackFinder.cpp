// The completeness rules of engine/StackFinder.h: a folder's listing to the stacks a camera has finished.
#include "engine/StackFinder.h"

#include <QFileInfo>

#include <algorithm>

namespace wfs {

QString defaultPlanePattern()
{
    return QStringLiteral("^(?<stack>.+)_z(?<plane>\\d+)\\.(fits?|fts|tiff?)$");
}

namespace {

bool isImageName(const QString& name)
{
    static const QStringList temporary = {QStringLiteral(".tmp"), QStringLiteral(".part"), QStringLiteral(".partial"),
                                          QStringLiteral(".crdownload"), QStringLiteral("~")};
    if (name.startsWith(QLatin1Char('.')))
        return false;
    for (const QString& t : temporary)
        if (name.endsWith(t, Qt::CaseInsensitive))
            return false;
    static const QStringList images = {QStringLiteral(".fits"),    QStringLiteral(".fit"),     QStringLiteral(".fts"),
                                       QStringLiteral(".fits.gz"), QStringLiteral(".fits.fz"), QStringLiteral(".tif"),
                                       QStringLiteral(".tiff"),    QStringLiteral(".png")};
    for (const QString& e : images)
        if (name.endsWith(e, Qt::CaseInsensitive))
            return true;
    return false;
}

} // namespace

StackFinder::StackFinder(std::string folder, StackFinderOptions options)
    : m_folder(std::move(folder))
    , m_options(std::move(options))
    , m_pattern(m_options.planePattern, QRegularExpression::CaseInsensitiveOption)
{
    if (!m_pattern.isValid())
        throw std::invalid_argument("plane pattern: " + m_pattern.errorString().toStdString());
    const QStringList groups = m_pattern.namedCaptureGroups();
    if (!groups.contains(QStringLiteral("stack")) || !groups.contains(QStringLiteral("plane")))
        throw std::invalid_argument("plane pattern: needs the named groups (?<stack>...) and (?<plane>...)");
}

void StackFinder::markRenamed(const QString& fileName)
{
    const auto it = m_files.find(fileName);
    if (it != m_files.end())
        it->second.renamed = true;
    else
        m_renamed.insert(fileName);
}

void StackFinder::markHandled(const std::string& stackName, qint64 lastWriteMs)
{
    qint64& handled = m_handled[stackName];
    handled = std::max(handled, lastWriteMs);
    m_deferred.erase(stackName);
    for (auto it = m_files.begin(); it != m_files.end();)
        it = it->second.stack == stackName ? m_files.erase(it) : std::next(it);
}

void StackFinder::defer(const CompleteStack& stack, qint64 now)
{
    // scan() marked it handled; it is looked at again (its files listed anew, so stable again first) unless it was
    // its last chance.
    if (stack.lastChance)
        return;
    m_handled.erase(stack.name);
    m_deferred[stack.name] = {stack.lastWriteMs, now};
}

std::vector<CompleteStack> StackFinder::scan(qint64 now)
{
    m_sawChange = false;
    const QDir dir(QString::fromStdString(m_folder));
    const QFileInfo folderInfo(dir.absolutePath());
    const auto gone = [&] { return FolderGoneError("the watched folder " + m_folder + " is gone (deleted, moved or unmounted)"); };
    if (!folderInfo.exists())
        throw gone();
    // Asked again when it cannot be listed: a folder deleted between the two questions is gone, not unreadable.
    if (!folderInfo.isDir() || !folderInfo.isReadable())
        throw QFileInfo::exists(dir.absolutePath())
            ? FolderGoneError("the watched folder " + m_folder + " can no longer be listed (not a folder, or no permission)")
            : gone();
    updateFiles(dir, now);
    // A deferred stack whose files are all gone waits for nothing.
    for (auto it = m_deferred.begin(); it != m_deferred.end();) {
        const bool listed = std::any_of(m_files.begin(), m_files.end(), [&](const auto& f) { return f.second.stack == it->first; });
        it = listed ? std::next(it) : m_deferred.erase(it);
    }
    std::vector<CompleteStack> ready = completeStacks(dir, now);
    // Each is returned once: the caller handles it (fits, fails or skips it) and marks it.
    for (const CompleteStack& s : ready) {
        m_handled[s.name] = s.lastWriteMs;
        m_deferred.erase(s.name);
    }
    for (auto it = m_files.begin(); it != m_files.end();)
        it = m_handled.count(it->second.stack) ? m_files.erase(it) : std::next(it);
    return ready;
}

void StackFinder::updateFiles(const QDir& dir, qint64 now)
{
    struct Listed {
        QString name;
        QRegularExpressionMatch match;
        std::string stack;
        qint64 size = 0, mtime = 0;
    };
    std::vector<Listed> images;
    for (const QString& name : dir.entryList(QDir::Files | QDir::NoDotAndDotDot, QDir::Name)) {
        if (!isImageName(name))
            continue;
        Listed l{name, m_pattern.match(name), {}, 0, 0};
        l.stack = l.match.hasMatch() ? l.match.captured(QStringLiteral("stack")).toStdString() : name.toStdString();
        const QFileInfo info(dir.filePath(name));
        l.size = info.size();
        l.mtime = info.lastModified().toMSecsSinceEpoch();
        // A handled stack with a file written after it was handled (replaced under its name) is a new stack.
        if (const auto handled = m_handled.find(l.stack); handled != m_handled.end() && l.mtime > handled->second)
            m_handled.erase(handled);
        images.push_back(std::move(l));
    }
    std::set<QString> listed;
    for (const Listed& l : images) {
        const QString& name = l.name;
        const QRegularExpressionMatch& match = l.match;
        const std::string& stack = l.stack;
        if (m_handled.count(stack))
            continue;
        listed.insert(name);
        const qint64 size = l.size;
        const qint64 mtime = l.mtime;
        auto [it, added] = m_files.try_emplace(name);
        FileState& f = it->second;
        if (added) {
            f.firstSeenMs = now;
            f.stack = stack;
            f.plane = match.hasMatch() ? match.captured(QStringLiteral("plane")).toInt() : -1;
            f.renamed = m_renamed.erase(name) > 0;
        }
        if (added || size != f.size || mtime != f.mtimeMs) {
            // A renamed file is complete as it came; a later write makes it a file being written again.
            if (!added && f.renamed)
                f.renamed = false;
            f.size = size;
            f.mtimeMs = mtime;
            f.unchangedSinceMs = now;
            f.complete = false;
            m_sawChange = true;
        }
        f.complete = size > 0 && (f.renamed || now - f.unchangedSinceMs >= m_options.stableMs);
    }
    for (auto it = m_files.begin(); it != m_files.end();) {
        if (!listed.count(it->first)) {
            m_sawChange = true;
            it = m_files.erase(it);
        } else {
            ++it;
        }
    }
    m_renamed.clear(); // a rename whose file is not listed now was a temporary name, or is gone
}

std::vector<CompleteStack> StackFinder::completeStacks(const QDir& dir, qint64 now)
{
    // Stacks: single files, and per-plane groups.
    struct Group {
        std::vector<std::pair<int, const QString*>> planes;
        bool complete = true, renamed = true;
        qint64 lastWrite = 0, lastSeen = 0;
    };
    std::map<std::string, Group> groups;
    std::vector<CompleteStack> ready;
    for (const auto& [name, f] : m_files) {
        if (f.plane < 0) {
            if (f.complete)
                ready.push_back({f.stack, {dir.filePath(name).toStdString()}, f.renamed ? "renamed" : "stable", f.mtimeMs});
            continue;
        }
        Group& g = groups[f.stack];
        g.planes.emplace_back(f.plane, &name);
        g.complete = g.complete && f.complete;
        g.renamed = g.renamed && f.renamed;
        g.lastWrite = std::max(g.lastWrite, f.mtimeMs);
        g.lastSeen = std::max(g.lastSeen, f.firstSeenMs);
    }
    for (auto& [stack, g] : groups) {
        if (!g.complete)
            continue;
        std::sort(g.planes.begin(), g.planes.end());
        const bool allPlanes =
            m_options.planesPerStack > 0 ? int(g.planes.size()) >= m_options.planesPerStack : now - g.lastSeen >= m_options.stableMs;
        if (!allPlanes)
            continue;
        CompleteStack s{stack, {}, "all planes", g.lastWrite};
        for (const auto& [plane, name] : g.planes)
            s.paths.push_back(dir.filePath(*name).toStdString());
        ready.push_back(std::move(s));
    }
    // A stack read short waits for its files to change; unchanged for incompleteMs, it has its last chance.
    std::vector<CompleteStack> due;
    for (CompleteStack& s : ready) {
        const auto deferred = m_deferred.find(s.name);
        if (deferred != m_deferred.end() && deferred->second.lastWriteMs == s.lastWriteMs) {
            if (now - deferred->second.sinceMs < m_options.incompleteMs)
                continue;
            s.lastChance = true;
        }
        due.push_back(std::move(s));
    }
    return due;
}

} // namespace wfs
