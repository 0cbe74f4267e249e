#pragma once
// Internal to core/io: the session file's typed JSON reading (io/Session.cpp) and its "simulated" object
// (io/SessionSimulated.cpp), so that the session code stays in files of a readable size.
#include "io/Session.h"
#include "settings/SettingsText.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QStringList>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace wfs {

// Reads typed values out of the session object; every problem names the file and the key.
class SessionReader {
public:
    explicit SessionReader(std::string source)
        : m_source(std::move(source))
    {
    }

    [[noreturn]] void fail(const QString& key, const std::string& what) const
    {
        throw SessionError(m_source + ": \"" + key.toStdString() + "\" " + what);
    }
    QJsonObject object(const QJsonObject& o, const QString& key, const QString& path, bool required = true) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined() && !required)
            return {};
        if (!v.isObject())
            fail(path + key, "must be an object");
        return v.toObject();
    }
    QJsonArray array(const QJsonObject& o, const QString& key, const QString& path, bool required = true) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined() && !required)
            return {};
        if (!v.isArray())
            fail(path + key, "must be an array");
        return v.toArray();
    }
    double number(const QJsonObject& o, const QString& key, const QString& path, double fallback) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            return fallback;
        if (!v.isDouble())
            fail(path + key, "must be a number");
        return v.toDouble();
    }
    std::optional<double> optional(const QJsonObject& o, const QString& key, const QString& path) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined() || v.isNull())
            return std::nullopt;
        if (!v.isDouble())
            fail(path + key, "must be a number or null");
        return v.toDouble();
    }
    int integer(const QJsonObject& o, const QString& key, const QString& path, int fallback) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            return fallback;
        const double d = v.toDouble(std::nan(""));
        if (!v.isDouble() || d != std::floor(d) || std::abs(d) > 1e9)
            fail(path + key, "must be an integer");
        return int(d);
    }
    bool boolean(const QJsonObject& o, const QString& key, const QString& path, bool fallback) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            return fallback;
        if (!v.isBool())
            fail(path + key, "must be true or false");
        return v.toBool();
    }
    QString text(const QJsonObject& o, const QString& key, const QString& path, const QString& fallback) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            return fallback;
        if (!v.isString())
            fail(path + key, "must be a string");
        // No file name or setting holds one, and C strings (messages, file names) would end there.
        if (v.toString().contains(QChar(0)))
            fail(path + key, "contains a NUL character (\\u0000)");
        return v.toString();
    }
    // One of `allowed` (index returned).
    int choice(const QJsonObject& o, const QString& key, const QString& path, const QStringList& allowed, int fallback) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined())
            return fallback;
        const int i = v.isString() ? int(allowed.indexOf(v.toString())) : -1;
        if (i < 0)
            fail(path + key, "must be one of " + allowed.join(QLatin1Char('|')).toStdString());
        return i;
    }
    // A settings enum by its text (settings/SettingsText.h); `fallback` when the key is absent.
    template <typename E>
    E setting(const QJsonObject& o, const QString& key, const QString& path, E fallback) const
    {
        QStringList allowed;
        for (const std::string& text : settingTexts<E>())
            allowed << QString::fromStdString(text);
        return SettingEnum<E>::values[choice(o, key, path, allowed, settingIndex(fallback))];
    }
    // A settings enum that may be absent or null (unset).
    template <typename E>
    std::optional<E> optionalSetting(const QJsonObject& o, const QString& key, const QString& path) const
    {
        if (o.value(key).isUndefined() || o.value(key).isNull())
            return std::nullopt;
        return setting(o, key, path, SettingEnum<E>::values[0]);
    }
    std::vector<int> integers(const QJsonObject& o, const QString& key, const QString& path) const
    {
        std::vector<int> values;
        const QJsonArray a = array(o, key, path, false);
        for (int i = 0; i < a.size(); ++i) {
            const double d = a.at(i).toDouble(std::nan(""));
            if (!a.at(i).isDouble() || d != std::floor(d) || std::abs(d) > 1e9)
                fail(path + key, "must hold integers");
            values.push_back(int(d));
        }
        return values;
    }
    PlaneDefocus defocus(const QJsonValue& v, const QString& path) const
    {
        if (v.isUndefined() || v.isNull())
            return {};
        if (!v.isObject())
            fail(path, "must be an object {\"kind\", \"value\"}");
        const QJsonObject o = v.toObject();
        const PlaneDefocus::Kind kind = setting(o, QStringLiteral("kind"), path + QLatin1Char('.'), PlaneDefocus::Kind::Unknown);
        if (kind == PlaneDefocus::Kind::Unknown)
            return {};
        const double value = number(o, QStringLiteral("value"), path + QLatin1Char('.'), std::nan(""));
        if (!std::isfinite(value))
            fail(path + QStringLiteral(".value"), "must be a finite number");
        return {kind, value};
    }

private:
    std::string m_source;
};

// A session's simulated data (Session::simulated) as the "simulated" object: {"preset", "grid", "order", "seed",
// "noise", "objective", "read_noise", "truth"} (grid and order 0: the preset's; objective and read noise null: the
// preset's; truth absent: the preset's injected aberrations).
QJsonObject simulatedSourceJson(const SimulatedSource& source);
// Throws SessionError naming the key for a malformed value (whether the preset exists is prepareRun's to say).
SimulatedSource readSimulatedSource(const SessionReader& r, const QJsonObject& object, const QString& path);

} // namespace wfs
