// wavefront-cli's help is the settings table's (core/settings/SettingsTable.h): every option of the table is a
// flag of `reconstruct` with its value name, its whole help text and its default; the presets' notes sit inside
// the parenthesis that states the default; `batch --help` names every manifest column.
#include "io/SettingOptions.h"
#include "settings/SettingsTable.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTest>

using namespace wfs;

namespace {

// The help as one line: Qt wraps descriptions at its own width.
QString helpOf(const QStringList& command)
{
    QProcess process;
    process.start(QStringLiteral(WFS_CLI_PATH), command + QStringList{QStringLiteral("--help")});
    if (!process.waitForFinished(60000) || process.exitCode() != 0)
        return {};
    return QString::fromUtf8(process.readAllStandardOutput()).simplified();
}

} // namespace

class TestCliTable : public QObject {
    Q_OBJECT
private slots:
    void reconstructHelpIsTheTable()
    {
        const QString help = helpOf({QStringLiteral("reconstruct")});
        QVERIFY(!help.isEmpty());
        // A sentinel note splits a help text where a preset's note goes: each side must be in the help.
        const QString sentinel = QStringLiteral("\x01");
        int options = 0;
        for (const SettingDescription& s : settingsTable()) {
            if (!s.isOption)
                continue;
            ++options;
            const QString flag = QStringLiteral("--%1").arg(QLatin1String(s.name));
            const QString declared = s.valueName ? QStringLiteral("%1 <%2>").arg(flag, QLatin1String(s.valueName)) : flag;
            QVERIFY2(help.contains(QRegularExpression(QRegularExpression::escape(declared) + QStringLiteral("(,| |$)"))),
                     qPrintable(declared));
            SettingDefaults noted;
            noted.notes[s.name] = sentinel;
            for (const QString& part : settingHelp(s, noted).split(QStringLiteral("; ") + sentinel))
                QVERIFY2(help.contains(part.simplified()), qPrintable(flag + QStringLiteral(": ") + part));
            if (s.defaultText)
                QVERIFY2(help.contains(QStringLiteral("default ") + s.defaultText({})) || help.contains(s.defaultText({})), s.name);
        }
        QVERIFY(options > 60);
        // The presets' own defaults, inside the parenthesis that states the struct's.
        QVERIFY(
            help.contains(QRegularExpression(QStringLiteral("radial order, 1\\.\\.15 \\(default 4; --preset demo \\d+, oof \\d+\\)\\."))));
    }

    // Bench states its own solver defaults through the same table.
    void benchHelpStatesItsSolverDefaults()
    {
        const QString help = helpOf({QStringLiteral("bench"), QStringLiteral("oof")});
        QVERIFY(!help.isEmpty());
        for (const char* name : {"backend", "gradient", "optimizer", "precision", "threads", "max-iterations", "gtol", "ftol"})
            QVERIFY2(help.contains(QStringLiteral("--%1 <").arg(QLatin1String(name))), name);
    }

    void batchHelpNamesEveryManifestColumn()
    {
        const QString help = helpOf({QStringLiteral("batch")});
        QVERIFY(!help.isEmpty());
        for (const std::string& column : manifestColumns())
            QVERIFY2(help.contains(QStringLiteral("[,%1]").arg(QString::fromStdString(column))), column.c_str());
    }
};

QTEST_GUILESS_MAIN(TestCliTable)
#include "tst_clitable.moc"
