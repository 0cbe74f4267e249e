#pragma once
// GUI suites must neither read nor leave the user's settings: every location Qt may write to (QSettings,
// QStandardPaths' config, data and cache folders, the home folder their test mode uses, and the temporary
// folder: TMPDIR, which QDir::tempPath() and QStandardPaths' TempLocation read) is moved into a temporary folder that is removed when the suite ends. Call isolate() first in initTestCase(),
// before any widget or QSettings is created.
#include <QCoreApplication>
#include <QDir>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace wfs::test {

class IsolatedSettings {
public:
    // Returns false (and the suite should fail) when the temporary folder cannot be made.
    bool isolate(const QString& application)
    {
        if (!m_dir.isValid())
            return false;
        const QString root = m_dir.path();
        for (const char* name : {"home", "config", "data", "cache", "tmp"})
            QDir(root).mkpath(QString::fromLatin1(name));
        qputenv("HOME", QFile::encodeName(root + QStringLiteral("/home")));
        qputenv("XDG_CONFIG_HOME", QFile::encodeName(root + QStringLiteral("/config")));
        qputenv("XDG_DATA_HOME", QFile::encodeName(root + QStringLiteral("/data")));
        qputenv("XDG_CACHE_HOME", QFile::encodeName(root + QStringLiteral("/cache")));
        // Other processes (ctest -j, a build) write to the shared /tmp: a suite that compares a folder's listing
        // compares only its own.
        qputenv("TMPDIR", QFile::encodeName(root + QStringLiteral("/tmp")));
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, root + QStringLiteral("/config"));
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, root + QStringLiteral("/config"));
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("WavefrontStudioTests"));
        QCoreApplication::setApplicationName(application);
        return isInside(QSettings().fileName()) && isInside(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
               && isInside(QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation))
               && isInside(QStandardPaths::writableLocation(QStandardPaths::CacheLocation))
               && isInside(QStandardPaths::writableLocation(QStandardPaths::TempLocation)) && isInside(QDir::tempPath());
    }

    // Whether `path` lies in the temporary folder.
    bool isInside(const QString& path) const { return QDir::cleanPath(path).startsWith(QDir::cleanPath(m_dir.path()) + QLatin1Char('/')); }

    QString path() const { return m_dir.path(); }

private:
    QTemporaryDir m_dir;
};

} // namespace wfs::test
