#pragma once
// Independent checkers for exports, shared by the core and app suites: fitsverify (HEASARC's FITS
// verifier, Debian package fitsverify) and the result JSON Schema (resources/schema/result.schema.json)
// through python3-jsonschema (tests/validate_json.py). Both are installed by scripts/setup.sh; a test
// skips (naming the tool) only where one is missing.
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace wfs::test {

struct ToolResult {
    bool missing = false; // the tool (or the Python module) is not installed
    bool ok = false;
    QString output; // what the tool said
};

// The Debian python3 first: that is where python3-astropy and python3-jsonschema live (a pyenv or venv
// python3 earlier in PATH usually lacks them).
inline QString systemPython()
{
    return QFile::exists(QStringLiteral("/usr/bin/python3")) ? QStringLiteral("/usr/bin/python3") : QStringLiteral("python3");
}

// fitsverify on one file: ok when it reports 0 warnings and 0 errors.
inline ToolResult fitsverify(const QString& path)
{
    ToolResult r;
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("fitsverify"), {path});
    if (!p.waitForStarted()) {
        r.missing = true;
        return r;
    }
    p.waitForFinished(60000);
    r.output = QString::fromUtf8(p.readAll());
    r.ok = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0 && r.output.contains(QStringLiteral("0 warning(s) and 0 error(s)"));
    return r;
}

// Every file against the result schema: ok when all are valid; output names each violation.
inline ToolResult validateResultJson(const QStringList& files)
{
    ToolResult r;
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(systemPython(), QStringList{QStringLiteral(WFS_SOURCE_DIR "/tests/validate_json.py"),
                                        QStringLiteral(WFS_SOURCE_DIR "/resources/schema/result.schema.json")}
                                + files);
    if (!p.waitForStarted()) {
        r.missing = true;
        return r;
    }
    p.waitForFinished(60000);
    r.output = QString::fromUtf8(p.readAll());
    r.missing = p.exitCode() == 77;
    r.ok = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    return r;
}

} // namespace wfs::test
