#include "io/OutputTransaction.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace wfs {

namespace {

namespace fs = std::filesystem;

OutputSystemCalls& systemCalls()
{
    static OutputSystemCalls calls = defaultOutputSystemCalls();
    return calls;
}

std::string errnoText(int error)
{
    return std::strerror(error);
}

std::string folderOf(const std::string& path)
{
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? std::string(".") : parent.string();
}

// ---- State the signal handler reads -------------------------------------------------------------
// Fixed arrays of C strings and lock-free atomics, so that the handler only calls async-signal-safe
// functions (access, rename, unlink, signal, raise) on memory that is never reallocated.

constexpr int kMaxEntries = 64;
constexpr std::size_t kPathBytes = 4096;

enum EntryState : int {
    kUnused = 0,
    kWriting = 1,  // the temporary exists (or is being created); the target is untouched
    kRenaming = 2, // rename(temporary, target) may or may not have happened
    kInPlace = 3,  // the target holds the new bytes
};

struct SignalEntry {
    char temporary[kPathBytes];
    char target[kPathBytes];
    char backup[kPathBytes];      // a hard link to the replaced file, empty when nothing was replaced
    std::atomic<bool> keepTarget; // replaced without a backup: the new file stays on roll-back
    std::atomic<int> state;
};

SignalEntry g_entries[kMaxEntries];
std::atomic<int> g_entryCount{0};
std::atomic<bool> g_rollingBack{false};
std::mutex g_commitMutex; // the state above is global: one transaction commits at a time

void rollBackEntry(SignalEntry& e)
{
    int state = e.state.load();
    if (state == kRenaming && ::access(e.temporary, F_OK) != 0)
        state = kInPlace; // the rename happened
    if (state == kInPlace) {
        if (e.backup[0] != '\0')
            ::rename(e.backup, e.target);
        else if (!e.keepTarget.load())
            ::unlink(e.target);
    } else if (state != kUnused) {
        ::unlink(e.temporary);
        if (e.backup[0] != '\0')
            ::unlink(e.backup);
    }
    e.state.store(kUnused);
}

void rollBackAll()
{
    const int count = g_entryCount.load();
    for (int i = 0; i < count; ++i)
        rollBackEntry(g_entries[i]);
}

extern "C" void onTerminatingSignal(int signal)
{
    if (!g_rollingBack.exchange(true))
        rollBackAll();
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

// Installs the handlers for the duration of a commit and restores the previous ones afterwards.
class SignalGuard {
public:
    SignalGuard()
    {
        struct sigaction action = {};
        action.sa_handler = onTerminatingSignal;
        sigemptyset(&action.sa_mask);
        for (int i = 0; i < 3; ++i)
            sigaction(kHandled[i], &action, &m_previous[i]);
        struct sigaction ignore = {};
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        // Over a file-size limit write() then fails with EFBIG (a message) instead of killing us;
        // a closed standard output fails with EPIPE.
        sigaction(SIGXFSZ, &ignore, &m_previousXfsz);
        sigaction(SIGPIPE, &ignore, &m_previousPipe);
    }
    ~SignalGuard()
    {
        for (int i = 0; i < 3; ++i)
            sigaction(kHandled[i], &m_previous[i], nullptr);
        sigaction(SIGXFSZ, &m_previousXfsz, nullptr);
        sigaction(SIGPIPE, &m_previousPipe, nullptr);
    }

private:
    static constexpr int kHandled[3] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction m_previous[3] = {};
    struct sigaction m_previousXfsz = {};
    struct sigaction m_previousPipe = {};
};

bool copyPath(char (&to)[kPathBytes], const std::string& from)
{
    if (from.size() + 1 > kPathBytes)
        return false;
    std::memcpy(to, from.c_str(), from.size() + 1);
    return true;
}

// Writes all of `bytes`, retrying short writes and EINTR; returns 0 or the errno.
int writeAll(int fd, const QByteArray& bytes)
{
    const char* data = bytes.constData();
    std::size_t left = std::size_t(bytes.size());
    while (left > 0) {
        const ssize_t n = systemCalls().write(fd, data, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        if (n == 0)
            return ENOSPC;
        data += n;
        left -= std::size_t(n);
    }
    return 0;
}

mode_t newFileMode()
{
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

} // namespace

OutputSystemCalls defaultOutputSystemCalls()
{
    return {::write, ::fsync, ::rename};
}

OutputSystemCalls setOutputSystemCalls(const OutputSystemCalls& calls)
{
    const OutputSystemCalls previous = systemCalls();
    systemCalls() = calls;
    return previous;
}

void checkOutputPath(const std::string& path, bool overwrite)
{
    if (path == "-")
        return;
    if (path.empty())
        throw OutputError("an output file name is empty");
    struct stat info = {};
    if (::stat(path.c_str(), &info) == 0) {
        if (S_ISDIR(info.st_mode))
            throw OutputError(path + ": is a folder; give a file name");
        if (!S_ISREG(info.st_mode))
            throw OutputError(path + ": exists and is not a regular file; refusing to write to it");
        if (!overwrite)
            throw OutputError(path + ": file exists; refusing to overwrite it (use --force)");
    }
    const std::string folder = folderOf(path);
    if (::stat(folder.c_str(), &info) != 0)
        throw OutputError(path + ": the folder " + folder + " does not exist (" + errnoText(errno) + ")");
    if (!S_ISDIR(info.st_mode))
        throw OutputError(path + ": " + folder + " is not a folder");
    std::string probe = folder + "/.wfs-probe-XXXXXX";
    const int fd = ::mkstemp(probe.data());
    if (fd < 0)
        throw OutputError(path + ": cannot create files in the folder " + folder + " (" + errnoText(errno) + ")");
    ::close(fd);
    ::unlink(probe.c_str());
}

bool samePath(const std::string& a, const std::string& b)
{
    if (a == b)
        return true;
    struct stat sa = {}, sb = {};
    if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    std::error_code ea, eb;
    const fs::path ca = fs::weakly_canonical(fs::absolute(a, ea), ea), cb = fs::weakly_canonical(fs::absolute(b, eb), eb);
    return !ea && !eb && ca == cb;
}

OutputTransaction::~OutputTransaction() = default;

void OutputTransaction::add(const std::string& path, QByteArray bytes)
{
    if (path.empty())
        throw OutputError("an output file name is empty");
    for (const Entry& e : m_entries)
        if (e.path == path || (path != "-" && e.path != "-" && samePath(e.path, path)))
            throw OutputError(path + ": named for two outputs; give each output its own file");
    m_entries.push_back({path, std::move(bytes)});
}

namespace {

// Puts back everything the commit has touched so far, clears the signal handler's list, and throws.
[[noreturn]] void rollBackAndFail(const std::string& message)
{
    rollBackAll();
    g_entryCount.store(0);
    throw OutputError(message);
}

// Step 1 for one file: its bytes to a temporary of its own beside its target (so that step 3 is a rename
// within one folder), with the replaced file's permissions (or the umask's for a new file), synced.
void writeTemporary(const std::string& path, const QByteArray& bytes, bool overwrite, const std::string& forceWord, mode_t freshMode)
{
    struct stat existing = {};
    const bool exists = ::stat(path.c_str(), &existing) == 0;
    if (exists && !overwrite)
        rollBackAndFail(path + ": file exists; refusing to overwrite it (use " + forceWord + ")");
    if (exists && !S_ISREG(existing.st_mode))
        rollBackAndFail(path + ": exists and is not a regular file; refusing to write to it");
    SignalEntry& s = g_entries[g_entryCount.load()];
    const std::string name = fs::path(path).filename().string();
    if (!copyPath(s.target, path) || !copyPath(s.temporary, folderOf(path) + "/." + name + ".wfs-XXXXXX"))
        rollBackAndFail(path + ": the path is too long");
    s.backup[0] = '\0';
    s.keepTarget.store(false);
    s.state.store(kWriting);
    g_entryCount.fetch_add(1); // before the file exists, so that a signal from here on removes it
    const int fd = ::mkstemp(s.temporary);
    if (fd < 0)
        rollBackAndFail(path + ": cannot create a temporary file in " + folderOf(path) + " (" + errnoText(errno) + ")");
    int error = writeAll(fd, bytes);
    if (error == 0 && ::fchmod(fd, exists ? existing.st_mode & 07777 : freshMode) != 0)
        error = errno;
    if (error == 0 && systemCalls().fsync(fd) != 0)
        error = errno;
    if (::close(fd) != 0 && error == 0)
        error = errno;
    if (error != 0)
        rollBackAndFail(path + ": write failed (" + errnoText(error) + "); nothing was written");
}

// Step 2: keep what the renames will replace (a hard link beside it), so that a failure can put it back.
void backUpReplacedTargets()
{
    for (int i = 0; i < g_entryCount.load(); ++i) {
        SignalEntry& s = g_entries[i];
        if (::access(s.target, F_OK) != 0)
            continue;
        const std::string backup = std::string(s.temporary) + ".old";
        if (copyPath(s.backup, backup) && ::link(s.target, s.backup) != 0) {
            s.backup[0] = '\0';
            s.keepTarget.store(true); // no hard links here: a roll-back cannot restore it, so keeps the new file
        }
    }
}

// Step 3: all renames together; stops early when a signal has started rolling back.
void renameAllIntoPlace()
{
    for (int i = 0; i < g_entryCount.load(); ++i) {
        SignalEntry& s = g_entries[i];
        if (g_rollingBack.load())
            break;
        s.state.store(kRenaming);
        if (systemCalls().rename(s.temporary, s.target) != 0) {
            const int error = errno;
            rollBackAndFail(std::string(s.target) + ": cannot move the finished file into place (" + errnoText(error)
                            + "); nothing was written");
        }
        s.state.store(kInPlace);
    }
}

// After success: the backups are no longer needed, and the signal handler has nothing left to undo.
void forgetCommittedEntries()
{
    for (int i = 0; i < g_entryCount.load(); ++i) {
        if (g_entries[i].backup[0] != '\0')
            ::unlink(g_entries[i].backup);
        g_entries[i].state.store(kUnused);
    }
    g_entryCount.store(0);
}

} // namespace

void OutputTransaction::commit()
{
    std::lock_guard lock(g_commitMutex);
    int files = 0;
    for (const Entry& e : m_entries)
        files += e.path != "-";
    if (files > kMaxEntries)
        throw OutputError("more than " + std::to_string(kMaxEntries) + " output files in one run");

    SignalGuard signalGuard; // installed for the whole commit: a signal at any step rolls back
    g_rollingBack.store(false);
    g_entryCount.store(0);

    // 1. Every file to a temporary of its own beside its target.
    const mode_t freshMode = newFileMode();
    for (const Entry& e : m_entries)
        if (e.path != "-")
            writeTemporary(e.path, e.bytes, m_overwrite, m_forceWord, freshMode);
    // 2. Keep what the renames will replace, so that a failure can put it back.
    backUpReplacedTargets();
    // 3. All renames together.
    renameAllIntoPlace();
    // 4. Standard output last: it cannot be taken back, the files can.
    for (const Entry& e : m_entries) {
        if (e.path != "-")
            continue;
        std::fflush(stdout);
        const int error = writeAll(STDOUT_FILENO, e.bytes);
        if (error != 0)
            rollBackAndFail("standard output: write failed (" + errnoText(error) + ")");
    }

    forgetCommittedEntries();
    m_entries.clear();
}

void writeFileAtomically(const std::string& path, const QByteArray& bytes, bool overwrite)
{
    OutputTransaction transaction(overwrite);
    transaction.add(path, bytes);
    transaction.commit();
}

} // namespace wfs
