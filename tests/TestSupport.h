#pragma once
// Helpers shared by the test suites: explicit relative tolerances (QCOMPARE on doubles uses
// qFuzzyCompare, which fails near zero) and the location of test data.
#include <QFile>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <exception>
#include <functional>
#include <string>

namespace wfs::test {

// |actual - expected| <= max(relative * |expected|, absolute)
inline bool closeTo(double actual, double expected, double relative, double absolute = 0.0)
{
    return std::abs(actual - expected) <= std::max(relative * std::abs(expected), absolute);
}

// A program run to its end (at most 5 minutes): exit status (-1 when it crashed or hung), standard output and error.
struct ProgramRun {
    int status = -1;
    QByteArray out, err;
};
inline ProgramRun runProgram(const QString& program, const QStringList& args,
                             const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess process;
    process.setProcessEnvironment(env);
    process.start(program, args);
    ProgramRun run;
    if (!process.waitForFinished(300000))
        return run;
    run.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

// Writes `bytes` to `path` (a test's fixture); false when the file could not be written whole.
inline bool writeFile(const QString& path, const QByteArray& bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(bytes) == bytes.size();
}

// The message of the exception `f` throws, empty when none.
template <class F>
std::string errorOf(F f)
{
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

// A fontconfig of its own for programs run under a resource limit, its cache in a folder of this test process (removed
// when it ends). Under an address-space limit fontconfig cannot map the machine's cache, scans the fonts, fails to
// read them and writes an empty cache for their folder in /var/cache/fontconfig (root may); every later program on
// the machine trusts it and has no fonts (the desktop's tables then measure text in a fallback font and the layout
// tests fail). The same fonts and rules, only the cache moved.
inline void isolateFontCache(QProcessEnvironment& env)
{
    static QTemporaryDir own;
    const QString path = own.filePath(QStringLiteral("fonts.conf"));
    QFile file(path);
    if (!file.exists() && file.open(QIODevice::WriteOnly))
        file.write(QStringLiteral("<?xml version=\"1.0\"?>\n<!DOCTYPE fontconfig SYSTEM \"urn:fontconfig:fonts.dtd\">\n"
                                  "<fontconfig>\n  <dir>/usr/share/fonts</dir>\n  <dir>/usr/local/share/fonts</dir>\n"
                                  "  <cachedir>%1/cache</cachedir>\n"
                                  "  <include ignore_missing=\"yes\">/etc/fonts/conf.d</include>\n</fontconfig>\n")
                       .arg(own.path())
                       .toUtf8());
    env.insert(QStringLiteral("FONTCONFIG_FILE"), path);
}

// A program run to its end in `dir` (at most 5 minutes), with `modifier` run in the child before it starts (a
// resource limit, dropping root; with one, fontconfig's cache is the run's own) and no FFTW wisdom shared between
// the runs.
inline ProgramRun runProgramIn(const QString& program, const QStringList& args, const QString& dir,
                               const std::function<void()>& modifier = {})
{
    QProcess process;
    process.setWorkingDirectory(dir);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("WFS_FFTW_WISDOM_DIR"), QString());
    if (modifier)
        isolateFontCache(env);
    process.setProcessEnvironment(env);
    if (modifier)
        process.setChildProcessModifier(modifier);
    process.start(program, args);
    ProgramRun run;
    if (!process.waitForFinished(300000)) {
        process.kill();
        process.waitForFinished();
        return run;
    }
    run.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = process.readAllStandardOutput();
    run.err = process.readAllStandardError();
    return run;
}

inline QString dataPath(const QString& name)
{
    const QByteArray dir = qgetenv("WFS_TEST_DATA");
    return (dir.isEmpty() ? QStringLiteral(WFS_SOURCE_DIR "/tests/data") : QString::fromLocal8Bit(dir)) + QLatin1Char('/') + name;
}

} // namespace wfs::test

#define WFS_VERIFY_CLOSE(actual, expected, relative, absolute)                                                                             \
    do {                                                                                                                                   \
        const double a_ = (actual), e_ = (expected);                                                                                       \
        if (!wfs::test::closeTo(a_, e_, (relative), (absolute)))                                                                           \
            QFAIL(qPrintable(QStringLiteral("%1 = %2, expected %3 (relative tolerance %4, absolute %5)")                                   \
                                 .arg(QStringLiteral(#actual))                                                                             \
                                 .arg(a_, 0, 'g', 15)                                                                                      \
                                 .arg(e_, 0, 'g', 15)                                                                                      \
                                 .arg(double(relative))                                                                                    \
                                 .arg(double(absolute))));                                                                                 \
    } while (false)
