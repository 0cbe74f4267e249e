// Issue 27 item 1: the setup panel's boxes offer what core accepts, no less and no more: the pupil geometry's boxes
// (obscuration, spider vanes and their width) end at the last value core's model check (ModelSettings::geometryError,
// the command line's and a session's check) accepts, the next value a box could show being refused; the immersion
// index box spans core's plausible range (base/Units.h), as the Imaging model box's do.
// Issue 45: every preparation, model and solver setting of the settings table passes through the panel unchanged,
// whether the panel has a field for it or not (a session's bad pixels, bandwidth or spider angle are not lost).
#include "SetupPanel.h"

#include "base/Units.h"
#include "io/Session.h"
#include "io/SettingOptions.h"
#include "settings/ModelSettings.h"
#include "settings/SettingsTable.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonArray>

#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QTest>

#include <cmath>
#include <functional>

using namespace wfs;
using namespace wfs::ui;

namespace {

class ExampleOption : public OptionSource {
public:
    ExampleOption(std::string name, std::string value)
        : m_name(std::move(name))
        , m_value(std::move(value))
    {
    }
    bool has(const char* name) const override { return m_name == name || (m_name == "fit-emitter-depth" && std::string(name) == "model"); }
    std::string value(const char* name) const override { return m_name == name ? m_value : std::string("vectorial"); }
    std::string spell(const char* name) const override { return std::string("--") + name; }

private:
    std::string m_name, m_value;
};

// The settings with the table's example for `s`: given as its option, or as its session JSON for one kept in
// sessions only.
SettingsBundle withExample(const SettingDescription& s)
{
    Session session;
    if (s.isOption) {
        applyRunOptions(ExampleOption(s.name, s.example), session, true);
    } else {
        QJsonObject root = sessionToJson(session, "/tmp/s.json");
        const QString key = QString::fromLatin1(s.sessionKeys[0].name);
        QJsonObject section = root.value(key.section(QLatin1Char('.'), 0, 0)).toObject();
        section.insert(key.section(QLatin1Char('.'), 1), QJsonDocument::fromJson(QByteArray("[") + s.example + "]").array().first());
        root.insert(key.section(QLatin1Char('.'), 0, 0), section);
        session = sessionFromJson(root, "s.json");
    }
    SettingsBundle settings;
    settings.preprocess = session.dataset.preprocess;
    settings.model = session.model;
    settings.solver = session.solver;
    return settings;
}

bool sameValue(const SettingValue& a, const SettingValue& b)
{
    if (std::holds_alternative<double>(a) && std::holds_alternative<double>(b)) // the panel shows tolerances to 4 digits
        return std::abs(std::get<double>(a) - std::get<double>(b)) <= 1e-3 * std::abs(std::get<double>(a));
    return a == b;
}

bool geometryAccepts(const std::function<void(ModelSettings&)>& set)
{
    ModelSettings model;
    set(model);
    return !model.geometryError();
}

} // namespace

class TestSetupRanges : public QObject {
    Q_OBJECT

private slots:
    void geometryBoxesEndWhereCoreDoes_data()
    {
        QTest::addColumn<QString>("box");
        QTest::newRow("obscuration") << QStringLiteral("field_obscuration");
        QTest::newRow("spider width") << QStringLiteral("field_spider_width");
    }

    void geometryBoxesEndWhereCoreDoes()
    {
        QFETCH(QString, box);
        SetupPanel panel;
        auto* spin = panel.findChild<QDoubleSpinBox*>(box);
        QVERIFY(spin);
        const double step = std::pow(10.0, -spin->decimals()); // the finest value the box shows
        const auto set = [&](double v) {
            return [box, v](ModelSettings& m) { (box == QLatin1String("field_obscuration") ? m.obscuration : m.spiderWidth) = v; };
        };
        QCOMPARE(spin->minimum(), 0.0);
        QVERIFY(geometryAccepts(set(spin->minimum())));
        QVERIFY(!geometryAccepts(set(spin->minimum() - step)));
        QVERIFY2(geometryAccepts(set(spin->maximum())), qPrintable(QString::number(spin->maximum())));
        QVERIFY2(!geometryAccepts(set(spin->maximum() + step)), qPrintable(QString::number(spin->maximum() + step)));
    }

    void everySettingPassesThroughThePanel()
    {
        int checked = 0;
        for (const SettingDescription& s : settingsTable()) {
            const SettingAccess& first = s.sessionKeys[0].access;
            // The metadata are the panel's Optics fields (shown per dataset); a GPU cannot be chosen without one; the
            // threads box offers this host's cores (the example's 4 is more than a 2-core machine's).
            if (!first || first.part == SettingPart::Metadata || std::string(s.name) == "backend" || std::string(s.name) == "threads")
                continue;
            const SettingsBundle given = withExample(s);
            SetupPanel panel;
            panel.setPreprocessOptions(given.preprocess);
            panel.setModelSettings(given.model);
            panel.setSolverSettings(given.solver);
            SettingsBundle shown;
            shown.preprocess = panel.preprocessOptions();
            shown.model = panel.modelSettings();
            shown.solver = panel.solverSettings();
            for (const SettingDescription& other : settingsTable())
                for (const SessionKey& key : other.sessionKeys)
                    if (key.name && key.access && key.access.part != SettingPart::Metadata)
                        QVERIFY2(sameValue(key.access.get(given), key.access.get(shown)),
                                 qPrintable(QStringLiteral("with %1 %2: %3 is %4 in the panel, %5 given")
                                                .arg(s.name, s.example, key.name,
                                                     QString::fromStdString(settingValueText(key.access, key.access.get(shown))),
                                                     QString::fromStdString(settingValueText(key.access, key.access.get(given))))));
            ++checked;
        }
        QVERIFY(checked >= 50);
    }

    void spiderCountEndsWhereCoreDoes()
    {
        SetupPanel panel;
        auto* spin = panel.findChild<QSpinBox*>(QStringLiteral("field_spiders"));
        QVERIFY(spin);
        const auto set = [](int n) { return [n](ModelSettings& m) { m.spiderCount = n; }; };
        QCOMPARE(spin->minimum(), 0);
        QVERIFY(!geometryAccepts(set(-1)));
        QVERIFY2(geometryAccepts(set(spin->maximum())), qPrintable(QString::number(spin->maximum())));
        QVERIFY2(!geometryAccepts(set(spin->maximum() + 1)), qPrintable(QString::number(spin->maximum() + 1)));
        QCOMPARE(spin->maximum(), 64); // the number core's message states ("from 0 to 64")
    }

    void immersionSpansCoresPlausibleRange()
    {
        SetupPanel panel;
        auto* spin = panel.findChild<QDoubleSpinBox*>(QStringLiteral("immersionSpin"));
        QVERIFY(spin);
        const PlausibleRange range = plausibleRange(Setting::ImmersionIndex);
        QCOMPARE(spin->minimum(), range.lo);
        QCOMPARE(spin->maximum(), range.hi);
        QVERIFY(plausibilityError(Setting::ImmersionIndex, spin->maximum()).empty());
        QVERIFY(!plausibilityError(Setting::ImmersionIndex, spin->maximum() + 0.001).empty());
    }
};

QTEST_MAIN(TestSetupRanges)
#include "tst_setupranges.moc"
