// The settings table (core/settings/SettingsTable.h) is the one description of every setting: each session key
// written is in it and round-trips, each range it states is the one the checks apply (and the refusal names the
// setting and its session key), the batch manifest's columns and the metadata's field names are its own.
#include "engine/Batch.h"
#include "engine/Workflow.h"
#include "io/Session.h"
#include "io/SettingOptions.h"
#include "settings/SettingsTable.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <map>
#include <set>

using namespace wfs;

namespace {

class MapOptions : public OptionSource {
public:
    explicit MapOptions(std::map<std::string, std::string> values)
        : m_values(std::move(values))
    {
    }
    bool has(const char* name) const override { return m_values.count(name) > 0; }
    std::string value(const char* name) const override { return m_values.at(name); }
    std::string spell(const char* name) const override { return std::string("--") + name; }

private:
    std::map<std::string, std::string> m_values;
};

// Settings that take part only together with another: the example alone would be refused by the checks.
const std::map<std::string, std::map<std::string, std::string>> kNeeds = {
    {"fit-emitter-depth", {{"model", "vectorial"}}},
};

// A session with three planes of one file, so that per-plane settings (planes, defocus) have somewhere to go.
Session threePlaneSession()
{
    Session s;
    DatasetFile file;
    file.path = "/nonexistent/stack.fits";
    file.planeCount = 3;
    s.dataset.files.push_back(file);
    for (int k = 0; k < 3; ++k) {
        DatasetPlane plane;
        plane.raw = Image{8, 8};
        plane.indexInFile = k;
        s.dataset.planes.push_back(plane);
    }
    return s;
}

// "model.order" in a session object; "planes[].use" is the array of every plane's value.
QJsonValue valueAt(const QJsonObject& root, const std::string& key)
{
    const QString k = QString::fromStdString(key);
    const QString section = k.section(QLatin1Char('.'), 0, 0), field = k.section(QLatin1Char('.'), 1);
    if (section == QLatin1String("planes[]")) {
        QJsonArray values;
        for (const QJsonValue& plane : root.value(QStringLiteral("planes")).toArray())
            values.append(plane.toObject().value(field));
        return values;
    }
    return root.value(section).toObject().value(field);
}

QJsonObject withValue(QJsonObject root, const std::string& key, const QJsonValue& value)
{
    const QString k = QString::fromStdString(key);
    const QString section = k.section(QLatin1Char('.'), 0, 0), field = k.section(QLatin1Char('.'), 1);
    QJsonObject object = root.value(section).toObject();
    object.insert(field, value);
    root.insert(section, object);
    return root;
}

std::vector<std::string> keysOf(const SettingDescription& s)
{
    std::vector<std::string> keys;
    for (const SessionKey& key : s.sessionKeys)
        if (key.name)
            keys.emplace_back(key.name);
    return keys;
}

// Whether the settings refuse `text` for `s`: the option's parser, or the checks of the settings it fills.
// `named` gets the setting the refusal names ("--order" for the parser, "order" for the checks). The metadata's
// issues count with `metadataIssues` only: an NA of 1.7 is plausible, and above the default immersion index.
bool refused(const SettingDescription& s, const std::string& text, std::string* named, bool metadataIssues)
{
    Session session;
    try {
        applyRunOptions(MapOptions({{s.name, text}}), session, true);
    } catch (const OptionError& e) {
        *named = std::string(e.what()).substr(0, std::string(e.what()).find(':'));
        return true;
    }
    std::optional<SettingsError> error = session.model.firstError();
    if (!error)
        error = session.solver.firstError();
    if (!error)
        error = session.dataset.preprocess.firstError();
    if (error)
        *named = error->setting();
    if (error || !metadataIssues)
        return bool(error);
    if (!session.dataset.metadata.issues().empty())
        *named = session.dataset.metadata.issues().front().setting;
    return !session.dataset.metadata.issues().empty();
}

} // namespace

class TestSettingsTable : public QObject {
    Q_OBJECT
private slots:
    void everyEntryIsComplete()
    {
        std::set<std::string> names, keys;
        for (const SettingDescription& s : settingsTable()) {
            QVERIFY2(names.insert(s.name).second, s.name);
            QVERIFY2(s.field && std::string(s.field).find("::") != std::string::npos, s.name);
            QVERIFY2(s.help && *s.help, s.name);
            QVERIFY2(s.example, s.name);
            QVERIFY2(s.sessionKeys[0].name, s.name);
            for (const std::string& key : keysOf(s))
                QVERIFY2(keys.insert(key).second, key.c_str());
            // Every placeholder is filled: a default where the help names one, a range where it states one.
            const QString help = settingHelp(s, {});
            QVERIFY2(!help.contains(QLatin1Char('{')), qPrintable(help));
            QCOMPARE(std::string(s.help).find("{default}") != std::string::npos, s.defaultText != nullptr);
            if (s.defaultText)
                QVERIFY2(help.contains(s.defaultText({})), s.name);
            QVERIFY2(findSetting(s.name) == &s, s.name);
        }
        QVERIFY(!findSetting("no-such-setting"));
        QCOMPARE(settingSessionKey("no-such-setting"), std::string("no-such-setting"));
        // The header's own example.
        QCOMPARE(settingHelp(*findSetting("order"), {}), QStringLiteral("Highest Zernike radial order, 1..15 (default 4)."));
        SettingDefaults noted;
        noted.notes["order"] = QStringLiteral("--preset demo 6");
        QCOMPARE(settingHelp(*findSetting("order"), noted),
                 QStringLiteral("Highest Zernike radial order, 1..15 (default 4; --preset demo 6)."));
    }

    // The session writer's settings sections hold exactly the table's keys (and the metadata's origins).
    void everySessionKeyIsInTheTable()
    {
        std::set<std::string> tableKeys;
        for (const SettingDescription& s : settingsTable())
            for (const std::string& key : keysOf(s))
                tableKeys.insert(key);
        const QJsonObject root = sessionToJson(threePlaneSession(), "/tmp/s.json");
        std::set<std::string> written;
        for (const char* section : {"metadata", "preprocess", "model", "solver"})
            for (const QString& key : root.value(QLatin1String(section)).toObject().keys())
                written.insert(std::string(section) + "." + key.toStdString());
        for (const QString& key : root.value(QStringLiteral("planes")).toArray().first().toObject().keys())
            if (key != QLatin1String("file") && key != QLatin1String("index"))
                written.insert("planes[]." + key.toStdString());
        written.erase("metadata.origin"); // where the values came from, not a setting
        for (const std::string& key : written)
            QVERIFY2(tableKeys.count(key), ("written but not in the settings table: " + key).c_str());
        for (const std::string& key : tableKeys)
            QVERIFY2(written.count(key), ("in the settings table but not written: " + key).c_str());
    }

    // Every setting given as its option (or, for one kept in sessions only, as its JSON) changes its session key
    // and reads back as given.
    void everySettingRoundTripsThroughASession()
    {
        const QJsonObject defaults = sessionToJson(threePlaneSession(), "/tmp/s.json");
        for (const SettingDescription& s : settingsTable()) {
            const std::vector<std::string> keys = keysOf(s);
            QJsonObject written;
            if (s.isOption) {
                Session session = threePlaneSession();
                std::map<std::string, std::string> options = {{s.name, s.example}};
                if (kNeeds.count(s.name))
                    options.insert(kNeeds.at(s.name).begin(), kNeeds.at(s.name).end());
                try {
                    applyRunOptions(MapOptions(options), session, true);
                } catch (const std::exception& e) {
                    QFAIL(qPrintable(QStringLiteral("%1 %2: %3").arg(s.name, s.example, e.what())));
                }
                written = sessionToJson(session, "/tmp/s.json");
            } else {
                const QJsonValue example = QJsonDocument::fromJson(QByteArray("[") + s.example + "]").array().first();
                QVERIFY2(!example.isUndefined(), s.name);
                written = withValue(defaults, keys.front(), example);
            }
            bool changed = false;
            for (const std::string& key : keys)
                changed = changed || valueAt(written, key) != valueAt(defaults, key);
            QVERIFY2(changed, (std::string(s.name) + " " + s.example + " leaves " + keys.front() + " as it was").c_str());
            Session read;
            try {
                read = sessionFromJson(written, "s.json");
            } catch (const SessionError& e) {
                QFAIL(qPrintable(QStringLiteral("%1: %2").arg(s.name, e.what())));
            }
            const QJsonObject again = sessionToJson(read, "/tmp/s.json");
            for (const std::string& key : keys)
                QVERIFY2(valueAt(again, key) == valueAt(written, key), (std::string(s.name) + ": " + key + " does not read back").c_str());
        }
    }

    // Each key's accessor holds a field of its own: changing one key's value through it changes no other key's
    // (two keys aliasing one field would write one value twice and lose the other), and the value reads back as text.
    void everyAccessorHoldsItsOwnField()
    {
        std::vector<const SessionKey*> keys;
        for (const SettingDescription& s : settingsTable())
            for (const SessionKey& key : s.sessionKeys)
                if (key.name && key.access)
                    keys.push_back(&key);
        QVERIFY(keys.size() >= 70);
        const SettingsBundle defaults;
        for (const SessionKey* key : keys) {
            const SettingAccess& a = key->access;
            const SettingValue before = a.get(defaults);
            SettingValue changed;
            switch (a.type) {
            case SettingType::Boolean:
                changed = std::holds_alternative<bool>(before) ? !std::get<bool>(before) : true;
                break;
            case SettingType::Integer:
                changed = std::get<int>(before) + 1;
                break;
            case SettingType::Number:
                changed = std::holds_alternative<double>(before) ? std::get<double>(before) * 2 + 1 : 0.5;
                break;
            case SettingType::Word: {
                const std::vector<std::string> words = a.words();
                QVERIFY2(words.size() >= 2, key->name);
                changed = std::holds_alternative<std::string>(before) && std::get<std::string>(before) == words[0] ? words[1] : words[0];
                break;
            }
            case SettingType::Text:
                changed = std::string("photons");
                break;
            case SettingType::Integers:
                changed = std::vector<int>{2, 4};
                break;
            }
            QVERIFY2(changed != before, key->name);
            SettingsBundle settings;
            a.set(settings, changed);
            QVERIFY2(a.get(settings) == changed, key->name);
            for (const SessionKey* other : keys)
                if (other != key)
                    QVERIFY2(other->access.get(settings) == other->access.get(defaults),
                             (std::string(key->name) + " also changes " + other->name).c_str());
            for (const SettingValue& value : {before, changed}) {
                const auto back = settingValueFromText(a, settingValueText(a, value));
                QVERIFY2(back && *back == value,
                         (std::string(key->name) + " '" + settingValueText(a, value) + "' does not read back").c_str());
            }
        }
        // Text a setting cannot take is refused, not read as something else.
        const SettingAccess& order = findSetting("order")->sessionKeys[0].access;
        QVERIFY(!settingValueFromText(order, "2.5") && !settingValueFromText(order, "") && !settingValueFromText(order, "6x"));
        QVERIFY(!settingValueFromText(findSetting("ordering")->sessionKeys[0].access, "zernike"));
        QVERIFY(!settingValueFromText(findSetting("stages")->sessionKeys[0].access, "2,x"));
        QVERIFY(!settingValueFromText(findSetting("gtol")->sessionKeys[0].access, "nan"));
    }

    // A preparation range the table states is refused where it is given (the option, naming it) and, for settings
    // made in memory as the desktop makes them, by the workflow before any preparation.
    void preparationRangesAreRefusedWhereGiven()
    {
        PreprocessOptions options;
        try {
            applyPreprocessOptions(MapOptions(std::map<std::string, std::string>{{"hot-pixel-ratio", "0.5"}}), options);
            QFAIL("--hot-pixel-ratio 0.5 is taken");
        } catch (const OptionError& e) {
            QCOMPARE(std::string(e.what()), std::string("--hot-pixel-ratio: must be from 1 to 100 (got 0.5)"));
        }
        Session session = threePlaneSession();
        session.dataset.metadata.wavelength = 633e-9;
        session.dataset.preprocess.hotPixelRatio = 0.5;
        try {
            prepareRun(session);
            QFAIL("a hot-pixel ratio of 0.5 is prepared");
        } catch (const SettingsError& e) {
            QCOMPARE(e.setting(), std::string("hot-pixel-ratio"));
        }
    }

    // Each range the table states is the one applied: its ends are taken, just outside them is refused, and the
    // refusal names the setting.
    void everyRangeIsTheChecks()
    {
        int checked = 0;
        for (const SettingDescription& s : settingsTable()) {
            if (!s.isOption || s.range.kind == SettingRange::Kind::None)
                continue;
            std::vector<std::string> inside, outside;
            if (s.range.kind == SettingRange::Kind::Closed) {
                inside = {QString::number(qint64(s.range.lo)).toStdString(), QString::number(qint64(s.range.hi)).toStdString()};
                outside = {QString::number(qint64(s.range.lo) - 1).toStdString(), QString::number(qint64(s.range.hi) + 1).toStdString()};
            } else {
                const PlausibleRange r = plausibleRange(s.range.plausible);
                inside = {QString::number(r.lo, 'g', 17).toStdString(), QString::number(r.hi, 'g', 17).toStdString()};
                outside = {QString::number(r.hi * 10, 'g', 17).toStdString()};
            }
            for (const std::string& text : inside) {
                std::string named;
                QVERIFY2(!refused(s, text, &named, false), (std::string(s.name) + " " + text + " is refused (" + named + ")").c_str());
            }
            for (const std::string& text : outside) {
                std::string named;
                QVERIFY2(refused(s, text, &named, true), (std::string(s.name) + " " + text + " is taken").c_str());
                const std::string option = std::string("--") + s.name;
                QVERIFY2(named == s.name || named == option
                             || (s.range.kind == SettingRange::Kind::Plausible && metadataSettingName(named) == s.name),
                         (std::string(s.name) + " " + text + ": the refusal names " + named).c_str());
            }
            ++checked;
        }
        QVERIFY(checked >= 25);
    }

    // A session whose value is out of range is refused with the table's key for it (before the table, the
    // imaging model's settings were named as "solver.sample_index" and the like).
    void sessionMessagesNameTheTablesKey()
    {
        // Checked when a run is prepared (ModelSettings::geometryError, readNoiseError), not when a session is read.
        const std::set<std::string> checkedLater = {"spiders", "read-noise"};
        const QJsonObject defaults = sessionToJson(Session{}, "/tmp/s.json");
        int checked = 0;
        for (const SettingDescription& s : settingsTable()) {
            const std::string key = s.sessionKeys[0].name;
            if (s.range.kind == SettingRange::Kind::None || checkedLater.count(s.name)
                || (key.rfind("model.", 0) != 0 && key.rfind("solver.", 0) != 0))
                continue;
            const double outside = s.range.kind == SettingRange::Kind::Closed ? s.range.hi + 1 : plausibleRange(s.range.plausible).hi * 10;
            const QJsonValue value = key == "solver.stages" ? QJsonValue(QJsonArray{outside}) : QJsonValue(outside);
            try {
                sessionFromJson(withValue(defaults, key, value), "s.json");
                QFAIL(qPrintable(QStringLiteral("%1 = %2 is read").arg(QString::fromStdString(key)).arg(outside)));
            } catch (const SessionError& e) {
                QVERIFY2(std::string(e.what()).find("\"" + key + "\"") != std::string::npos, e.what());
            }
            ++checked;
        }
        QVERIFY(checked >= 15);
    }

    void manifestColumnsAreTheTablesOptions()
    {
        QCOMPARE(batchOverrideNames(), manifestColumns());
        QCOMPARE(manifestColumns(), (std::vector<std::string>{"defocus", "planes", "wavelength", "sampling", "z-step", "focus-plane"}));
        for (const std::string& column : manifestColumns()) {
            const SettingDescription* s = findSetting(column);
            QVERIFY2(s && s->isOption && s->group == SettingGroup::Metadata, column.c_str());
        }
    }

    void metadataFieldsNameTheirSetting()
    {
        int checked = 0;
        for (const SettingDescription& s : settingsTable()) {
            const std::string field = s.field;
            if (field.rfind("DatasetMetadata::", 0) != 0)
                continue;
            QCOMPARE(metadataSettingName(field.substr(field.find("::") + 2)), std::string(s.name));
            ++checked;
        }
        QCOMPARE(checked, 13);
    }

    // The command line's and the Python module's option lists are the table's options, in its order.
    void optionListsAreTheTable()
    {
        std::vector<std::string> listed, table;
        for (const auto& group : {metadataOptionHelp(), preprocessOptionHelp(), modelOptionHelp(), solverOptionHelp()})
            for (const OptionHelp& o : group)
                listed.push_back(o.name.toStdString());
        for (const SettingDescription& s : settingsTable())
            if (s.isOption)
                table.emplace_back(s.name);
        QCOMPARE(listed, table);
    }
};

QTEST_GUILESS_MAIN(TestSettingsTable)
#include "tst_settingstable.moc"
