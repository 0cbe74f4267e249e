// Issue 27 item 1: a batch manifest's column is its command-line flag. Each manifest column (the settings table's,
// settings/SettingsTable.h) applied by batch (applyManifestOverrides) and the same text given to wavefront-cli's own
// option reading (QCommandLineParser with the metadata options, ParserOptions, applyMetadataOptions) give the same
// settings, and a bad value the same refusal, named "--wavelength" on the command line and "wavelength" in a manifest.
#include "CliCommon.h"

#include "engine/Batch.h"
#include "settings/SettingsTable.h"

#include <QCommandLineParser>
#include <QTest>

using namespace wfs;

Q_DECLARE_METATYPE(std::string)

namespace {

Dataset threePlanes()
{
    Dataset data;
    data.planes.resize(3);
    return data;
}

// What the command line makes of `--column text` (the error text, empty when accepted).
std::string applyAsFlag(Dataset& data, const std::string& column, const std::string& text)
{
    QCommandLineParser parser;
    for (const OptionHelp& o : metadataOptionHelp())
        parser.addOption(o.valueName.isEmpty() ? QCommandLineOption(o.name) : QCommandLineOption(o.name, o.description, o.valueName));
    if (!parser.parse(
            {QStringLiteral("wavefront-cli"), QStringLiteral("--") + QString::fromStdString(column), QString::fromStdString(text)}))
        return "parser: " + parser.errorText().toStdString();
    try {
        applyMetadataOptions(cli::ParserOptions(parser), data);
    } catch (const OptionError& e) {
        return e.what();
    }
    return {};
}

std::string applyAsColumn(Dataset& data, const std::string& column, const std::string& text)
{
    try {
        applyManifestOverrides(data, {{column, text}});
    } catch (const DatasetError& e) {
        return e.what();
    }
    return {};
}

} // namespace

class TestManifestOptions : public QObject {
    Q_OBJECT

private slots:
    void columnIsItsFlag_data()
    {
        QTest::addColumn<std::string>("column");
        QTest::addColumn<std::string>("text");
        QTest::addColumn<bool>("valid");
        const std::vector<std::string> columns = manifestColumns();
        QCOMPARE(columns, batchOverrideNames());
        QVERIFY(columns.size() >= 6);
        for (const std::string& column : columns) {
            const SettingDescription* s = findSetting(column);
            QVERIFY(s && s->example);
            QTest::addRow("%s %s", column.c_str(), s->example) << column << std::string(s->example) << true;
            QTest::addRow("%s nope", column.c_str()) << column << std::string("nope") << false;
            if (s->range.kind == SettingRange::Kind::Plausible) // beyond the range (bare: SI units)
                QTest::addRow("%s too large", column.c_str())
                    << column << QString::number(plausibleRange(s->range.plausible).hi * 10.0).toStdString() << false;
        }
        QTest::addRow("wavelength without unit") << std::string("wavelength") << std::string("633") << false; // "did you mean"
        QTest::addRow("defocus too few") << std::string("defocus") << std::string("1w,-1w") << false;
        QTest::addRow("defocus bare number") << std::string("defocus") << std::string("0,1,2") << false;
        QTest::addRow("defocus semicolons") << std::string("defocus") << std::string("-1w;0;1w") << false;
        QTest::addRow("planes out of range") << std::string("planes") << std::string("0,7") << false;
        QTest::addRow("planes twice") << std::string("planes") << std::string("1,1") << false;
        QTest::addRow("focus plane fraction") << std::string("focus-plane") << std::string("1.5") << true;
        QTest::addRow("sampling with exponent") << std::string("sampling") << std::string("2.5e0") << true;
    }

    void columnIsItsFlag()
    {
        QFETCH(std::string, column);
        QFETCH(std::string, text);
        QFETCH(bool, valid);
        Dataset byFlag = threePlanes();
        Dataset byColumn = threePlanes();
        const std::string flagError = applyAsFlag(byFlag, column, text);
        const std::string columnError = applyAsColumn(byColumn, column, text);
        QCOMPARE(flagError.empty(), valid);
        QCOMPARE(columnError.empty(), valid);
        if (!valid) {
            // The same sentence; only the setting's spelling differs.
            QCOMPARE(QString::fromStdString(flagError), QStringLiteral("--") + QString::fromStdString(columnError));
            QVERIFY2(QString::fromStdString(columnError).startsWith(QString::fromStdString(column)), columnError.c_str());
            return;
        }
        QVERIFY(metadataNumbers(byFlag.metadata) == metadataNumbers(byColumn.metadata));
        QCOMPARE(byFlag.metadata.defocusModel, byColumn.metadata.defocusModel);
        QCOMPARE(byFlag.metadata.zIndexDown, byColumn.metadata.zIndexDown);
        for (size_t k = 0; k < byFlag.planes.size(); ++k) {
            QCOMPARE(byFlag.planes[k].use, byColumn.planes[k].use);
            QVERIFY(byFlag.planes[k].defocus == byColumn.planes[k].defocus);
        }
        // The same fields marked as given; the manifest's marked as the manifest's (batch keeps them per input).
        QCOMPARE(byFlag.metadata.origin.size(), byColumn.metadata.origin.size());
        for (const auto& [field, origin] : byColumn.metadata.origin) {
            QCOMPARE(byFlag.metadata.origin.count(field), size_t(1));
            QCOMPARE(byFlag.metadata.origin.at(field), std::string("command line"));
            QCOMPARE(origin, std::string("batch manifest"));
        }
        // Something was set: the example is not the default.
        QVERIFY(!byColumn.metadata.origin.empty() || column == "planes");
        if (column == "planes")
            QVERIFY(!byColumn.planes[1].use);
    }

    void onlyManifestColumnsApply()
    {
        Dataset data = threePlanes();
        QVERIFY(!applyAsColumn(data, "pixel-scale", "5.5um").empty()); // a flag, but not a manifest column
        QVERIFY(!data.metadata.pixelPitch);
    }
};

QTEST_MAIN(TestManifestOptions)
#include "tst_manifestoptions.moc"
