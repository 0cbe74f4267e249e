// The output layer (issue 12, items 1, 4, 5, 6): every write, fsync and rename checked, all outputs or
// none, no temporaries left after a failure or a signal, FITS names taken literally and no fixed
// temporary name. Faults are injected through io/OutputTransaction.h's system-call seam, so no full
// disk is needed; signals are raised in a forked child, whose folder the parent then inspects.
#include "TestSupport.h"

#include "io/Fits.h"
#include "io/OutputTransaction.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

using namespace wfs;
using wfs::test::errorOf;

namespace {

// Fault plans read by the injected calls (plain globals: the calls are plain function pointers).
int g_writeCalls = 0, g_failWriteAt = -1, g_renameCalls = 0, g_failRenameAt = -1, g_signalAtWrite = -1, g_signalAfterRename = -1;

ssize_t faultyWrite(int fd, const void* data, size_t size)
{
    const int call = g_writeCalls++;
    if (call == g_signalAtWrite) {
        ::write(fd, data, size / 2); // half of the file on disk when the signal comes
        std::raise(SIGTERM);
    }
    if (call == g_failWriteAt) {
        errno = ENOSPC;
        return -1;
    }
    return ::write(fd, data, size);
}

int failingFsync(int)
{
    errno = EIO;
    return -1;
}

int faultyRename(const char* from, const char* to)
{
    const int call = g_renameCalls++;
    if (call == g_failRenameAt) {
        errno = EXDEV;
        return -1;
    }
    const int result = ::rename(from, to);
    if (call == g_signalAfterRename)
        std::raise(SIGTERM);
    return result;
}

// Restores the real calls and the fault plan whatever the test did.
struct Faults {
    explicit Faults(OutputSystemCalls calls)
    {
        g_writeCalls = g_renameCalls = 0;
        g_failWriteAt = g_failRenameAt = g_signalAtWrite = g_signalAfterRename = -1;
        setOutputSystemCalls(calls);
    }
    ~Faults() { setOutputSystemCalls(defaultOutputSystemCalls()); }
};

QStringList entries(const QTemporaryDir& dir)
{
    return QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
}

QByteArray contents(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// Runs `body` in a forked child and returns its wait status. The child never returns into QtTest.
template <class F>
int inChild(F body)
{
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        body();
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
}

} // namespace

class TestOutputs : public QObject {
    Q_OBJECT

private slots:
    void allOutputsAppearTogether()
    {
        QTemporaryDir dir;
        OutputTransaction t(false);
        t.add(dir.filePath(QStringLiteral("r.json")).toStdString(), "{}\n");
        t.add(dir.filePath(QStringLiteral("c.csv")).toStdString(), "a,b\n");
        t.commit();
        QCOMPARE(entries(dir), (QStringList{QStringLiteral("c.csv"), QStringLiteral("r.json")}));
        QCOMPARE(contents(dir.filePath(QStringLiteral("c.csv"))), QByteArray("a,b\n"));
        // Files get the usual permissions, not mkstemp's 0600.
        struct stat info = {};
        QCOMPARE(::stat(dir.filePath(QStringLiteral("c.csv")).toLocal8Bit().constData(), &info), 0);
        const mode_t mask = ::umask(0);
        ::umask(mask);
        QCOMPARE(int(info.st_mode & 0777), int(0666 & ~mask));
    }

    void diskFullLeavesNothing()
    {
        // Defect 1: the second file's write fails (ENOSPC): neither output, nor a temporary, remains.
        QTemporaryDir dir;
        Faults faults({faultyWrite, ::fsync, ::rename});
        g_failWriteAt = 1;
        OutputTransaction t(false);
        const std::string csv = dir.filePath(QStringLiteral("c.csv")).toStdString();
        t.add(dir.filePath(QStringLiteral("r.json")).toStdString(), QByteArray(4096, 'x'));
        t.add(csv, "a,b\n");
        const std::string error = errorOf([&] { t.commit(); });
        QVERIFY2(error.find(csv) != std::string::npos && error.find("No space left") != std::string::npos, error.c_str());
        QVERIFY2(entries(dir).isEmpty(), qPrintable(entries(dir).join(QLatin1Char(' '))));
    }

    void failedFsyncLeavesNothing()
    {
        QTemporaryDir dir;
        Faults faults({::write, failingFsync, ::rename});
        const std::string error = errorOf([&] { writeFileAtomically(dir.filePath(QStringLiteral("s.json")).toStdString(), "{}", false); });
        QVERIFY2(error.find("s.json") != std::string::npos && error.find("Input/output error") != std::string::npos, error.c_str());
        QVERIFY(entries(dir).isEmpty());
    }

    void failedRenamePutsBackWhatWasReplaced()
    {
        // With overwrite, the first rename replaced a user's file; the second fails: the user's file
        // comes back and the second output does not appear.
        QTemporaryDir dir;
        const QString first = dir.filePath(QStringLiteral("a.json")), second = dir.filePath(QStringLiteral("b.csv"));
        writeFile(first, "old");
        Faults faults({::write, ::fsync, faultyRename});
        g_failRenameAt = 1;
        OutputTransaction t(true);
        t.add(first.toStdString(), "new");
        t.add(second.toStdString(), "new");
        const std::string error = errorOf([&] { t.commit(); });
        QVERIFY2(error.find("b.csv") != std::string::npos && error.find("cannot move") != std::string::npos, error.c_str());
        QCOMPARE(contents(first), QByteArray("old"));
        QCOMPARE(entries(dir), QStringList{QStringLiteral("a.json")});
    }

    void signalMidWriteLeavesNothing()
    {
        // Defect 4: SIGTERM while the second file is being written.
        QTemporaryDir dir;
        const QString kept = dir.filePath(QStringLiteral("a.json"));
        writeFile(kept, "old");
        const int status = inChild([&] {
            Faults faults({faultyWrite, ::fsync, ::rename});
            g_signalAtWrite = 1;
            OutputTransaction t(true);
            t.add(kept.toStdString(), "new");
            t.add(dir.filePath(QStringLiteral("b.fits")).toStdString(), QByteArray(100000, 'x'));
            t.commit();
        });
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
        QCOMPARE(entries(dir), QStringList{QStringLiteral("a.json")});
        QCOMPARE(contents(kept), QByteArray("old"));
    }

    void signalBetweenRenamesRollsBack()
    {
        // SIGTERM after the first of three renames: the one in place is taken back.
        QTemporaryDir dir;
        const QString replaced = dir.filePath(QStringLiteral("b.csv"));
        writeFile(replaced, "old");
        const int status = inChild([&] {
            Faults faults({::write, ::fsync, faultyRename});
            g_signalAfterRename = 1;
            OutputTransaction t(true);
            t.add(dir.filePath(QStringLiteral("a.json")).toStdString(), "new");
            t.add(replaced.toStdString(), "new");
            t.add(dir.filePath(QStringLiteral("c.png")).toStdString(), "new");
            t.commit();
        });
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
        QCOMPARE(entries(dir), QStringList{QStringLiteral("b.csv")});
        QCOMPARE(contents(replaced), QByteArray("old"));
    }

    void fileSizeLimitIsAMessage()
    {
        // SIGXFSZ (ulimit -f) becomes a failed write with a message instead of killing the program.
        QTemporaryDir dir;
        const int status = inChild([&] {
            struct rlimit limit = {8192, 8192};
            ::setrlimit(RLIMIT_FSIZE, &limit);
            const std::string error = errorOf(
                [&] { writeFileAtomically(dir.filePath(QStringLiteral("big.fits")).toStdString(), QByteArray(65536, 'x'), false); });
            ::_exit(error.find("File too large") != std::string::npos ? 0 : 3);
        });
        QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0, qPrintable(QString::number(status)));
        QVERIFY(entries(dir).isEmpty());
    }

    void fitsNamesAreNames()
    {
        // Defect 6: brackets and blanks are part of the name, not CFITSIO syntax.
        QTemporaryDir dir;
        for (const QString& name : {QStringLiteral("p[1].fits"), QStringLiteral("p (1).fits"), QStringLiteral("p+1.fits")}) {
            const std::string path = dir.filePath(name).toStdString();
            writeFits(path, {Image(4, 3, 2.0)}, {{"WAVELENG", 6.33e-7, "[m]"}}, false, false);
            const FitsContent read = readFits(path);
            QCOMPARE(read.planes.size(), size_t(1));
            QCOMPARE(read.planes[0].at(2, 3), 2.0);
            QCOMPARE(read.numbers.at("WAVELENG"), 6.33e-7);
        }
        QCOMPARE(entries(dir), (QStringList{QStringLiteral("p (1).fits"), QStringLiteral("p+1.fits"), QStringLiteral("p[1].fits")}));
    }

    void fitsLeavesAUsersPartFileAlone()
    {
        // Defect 5: no fixed temporary name; a user's NAME.part (or a symlink there) is not touched.
        QTemporaryDir dir;
        const QString part = dir.filePath(QStringLiteral("x.fits.part"));
        writeFile(part, "mine");
        const QString target = dir.filePath(QStringLiteral("elsewhere"));
        QVERIFY(QFile::link(target, dir.filePath(QStringLiteral("y.fits.part"))));
        writeFits(dir.filePath(QStringLiteral("x.fits")).toStdString(), {Image(4, 4, 1.0)}, {}, true, false);
        writeFits(dir.filePath(QStringLiteral("y.fits")).toStdString(), {Image(4, 4, 1.0)}, {}, true, false);
        QCOMPARE(contents(part), QByteArray("mine"));
        QVERIFY(!QFile::exists(target));
        QCOMPARE(readFits(dir.filePath(QStringLiteral("x.fits")).toStdString()).planes.size(), size_t(1));
    }

    void sameFileTwiceIsRefused()
    {
        QTemporaryDir dir;
        OutputTransaction t(true);
        t.add(dir.filePath(QStringLiteral("s.out")).toStdString(), "a");
        const std::string error = errorOf([&] { t.add(dir.filePath(QStringLiteral("./s.out")).toStdString(), "b"); });
        QVERIFY2(error.find("two outputs") != std::string::npos, error.c_str());
    }

    void outputPathsAreCheckedBeforeWork()
    {
        // Defect 8: the checks a front end runs before fitting.
        QTemporaryDir dir;
        const std::string missing = dir.filePath(QStringLiteral("no/such/r.json")).toStdString();
        QVERIFY(errorOf([&] { checkOutputPath(missing, false); }).find("does not exist") != std::string::npos);
        writeFile(dir.filePath(QStringLiteral("file")), "x");
        const std::string underFile = dir.filePath(QStringLiteral("file/r.json")).toStdString();
        QVERIFY(!errorOf([&] { checkOutputPath(underFile, false); }).empty());
        QVERIFY(errorOf([&] { checkOutputPath(dir.path().toStdString(), true); }).find("is a folder") != std::string::npos);
        QVERIFY(errorOf([&] { checkOutputPath(dir.filePath(QStringLiteral("file")).toStdString(), false); }).find("use --force")
                != std::string::npos);
        QVERIFY(errorOf([&] { checkOutputPath(dir.filePath(QStringLiteral("file")).toStdString(), true); }).empty());
        const QString fifo = dir.filePath(QStringLiteral("fifo"));
        QCOMPARE(::mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
        QVERIFY(errorOf([&] { checkOutputPath(fifo.toStdString(), true); }).find("not a regular file") != std::string::npos);
        QVERIFY(errorOf([&] { checkOutputPath("-", false); }).empty());
        // The probe file used to test writability is gone again.
        QCOMPARE(entries(dir), (QStringList{QStringLiteral("fifo"), QStringLiteral("file")}));
        QVERIFY(samePath(dir.filePath(QStringLiteral("file")).toStdString(), dir.filePath(QStringLiteral("./file")).toStdString()));
    }
};

QTEST_GUILESS_MAIN(TestOutputs)
#include "tst_outputs.moc"
