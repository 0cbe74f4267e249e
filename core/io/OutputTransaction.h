#pragma once
// Output files written all-or-nothing. Every output of a run (JSON, CSV, FITS, PNG, session) is first
// produced as bytes, then an OutputTransaction writes each to a temporary created with O_EXCL (mkstemp)
// in its target folder, checks every write, flush and fsync, and renames them into place together at
// the end. A failure, or SIGINT/SIGTERM/SIGHUP arriving meanwhile, removes the temporaries and puts back
// what the renames replaced, so a run leaves either all of its outputs or none, and never a temporary.
// SIGXFSZ (a file-size limit) is ignored while writing, so it becomes a failed write with a message.
//
// The system calls go through OutputSystemCalls, which tests replace to inject faults (a write that
// fails, a full disk, a rename that fails, a signal mid-write) without needing a full disk.
#include <QByteArray>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <vector>

namespace wfs {

class OutputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The calls the output layer makes to write files; each behaves like the POSIX call of its name.
struct OutputSystemCalls {
    ssize_t (*write)(int fd, const void* data, size_t size);
    int (*fsync)(int fd);
    int (*rename)(const char* from, const char* to);
};
OutputSystemCalls defaultOutputSystemCalls();
// Replaces the calls for the whole process (tests only); returns the previous ones.
OutputSystemCalls setOutputSystemCalls(const OutputSystemCalls& calls);

// What an output path may be checked for before the work that produces it: not empty, not a folder,
// its folder exists and accepts a new file (tried by creating and removing a temporary), and no file
// of that name unless `overwrite`. "-" (standard output) always passes. Throws OutputError naming the file.
void checkOutputPath(const std::string& path, bool overwrite);

// Whether two paths name the same file: the same canonical path, or (when both exist) the same inode.
bool samePath(const std::string& a, const std::string& b);

class OutputTransaction {
public:
    // `forceWord`: how the front end's user says "overwrite", for the message that refuses an existing file
    // ("--force" on the command line, "overwrite=True" in the Python module).
    explicit OutputTransaction(bool overwrite, std::string forceWord = "--force")
        : m_overwrite(overwrite)
        , m_forceWord(std::move(forceWord))
    {
    }
    ~OutputTransaction();
    OutputTransaction(const OutputTransaction&) = delete;
    OutputTransaction& operator=(const OutputTransaction&) = delete;

    // Adds an output; "-" is standard output, written after every file is in place. Throws OutputError
    // when the path is empty or repeats one already added.
    void add(const std::string& path, QByteArray bytes);
    // Writes everything or nothing; throws OutputError naming the file that failed.
    void commit();

private:
    struct Entry {
        std::string path;
        QByteArray bytes;
    };
    bool m_overwrite;
    std::string m_forceWord;
    std::vector<Entry> m_entries;
};

// One file through a transaction of its own.
void writeFileAtomically(const std::string& path, const QByteArray& bytes, bool overwrite);

} // namespace wfs
