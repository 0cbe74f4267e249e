// The session file's "simulated" object (io/SessionJson.h): what remakes a preset's planes exactly.
#include "io/SessionJson.h"

#include <QJsonValue>

#include <stdexcept>

namespace wfs {

namespace {

// Seeds are read back as JSON numbers: exact up to 2^53.
constexpr double kLargestExactSeed = 9007199254740992.0;

QJsonObject truthJson(const Truth& truth)
{
    QJsonArray coefficients;
    for (const TruthTerm& t : truth.terms)
        coefficients.append(QJsonObject{{QStringLiteral("index"), t.index}, {QStringLiteral("value_waves"), t.valueWaves}});
    QJsonObject o{{QStringLiteral("convention"),
                   QJsonObject{{QStringLiteral("ordering"), QString::fromLatin1(settingText(truth.ordering))},
                               {QStringLiteral("normalization"), QString::fromLatin1(settingText(truth.normalization))}}},
                  {QStringLiteral("coefficients"), coefficients}};
    if (!truth.note.empty())
        o.insert(QStringLiteral("note"), QString::fromStdString(truth.note));
    return o;
}

} // namespace

QJsonObject simulatedSourceJson(const SimulatedSource& source)
{
    const PresetOptions& o = source.options;
    QJsonObject json{
        {QStringLiteral("preset"), QString::fromStdString(source.preset)},
        {QStringLiteral("grid"), o.grid},
        {QStringLiteral("order"), o.order},
        {QStringLiteral("seed"), double(o.seed)},
        {QStringLiteral("noise"), o.noise},
        {QStringLiteral("objective"),
         source.objective ? QJsonValue(QString::fromLatin1(settingText(*source.objective))) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("read_noise"), source.readNoise ? QJsonValue(*source.readNoise) : QJsonValue(QJsonValue::Null)},
    };
    if (o.photons != 0.0) // absent: the preset's own
        json.insert(QStringLiteral("photons"), o.photons);
    if (o.truth)
        json.insert(QStringLiteral("truth"), truthJson(*o.truth));
    return json;
}

SimulatedSource readSimulatedSource(const SessionReader& r, const QJsonObject& object, const QString& path)
{
    SimulatedSource source;
    source.preset = r.text(object, QStringLiteral("preset"), path, QString()).toStdString();
    if (source.preset.empty())
        r.fail(path + QStringLiteral("preset"), "must name a preset (demo, oof, pupil, vectorial or air)");
    PresetOptions& o = source.options;
    o.grid = r.integer(object, QStringLiteral("grid"), path, 0);
    o.order = r.integer(object, QStringLiteral("order"), path, 0);
    const double seed = r.number(object, QStringLiteral("seed"), path, double(o.seed));
    if (!(seed >= 0.0 && seed <= kLargestExactSeed && seed == std::floor(seed)))
        r.fail(path + QStringLiteral("seed"), "must be a whole number from 0 to 2^53");
    o.seed = std::uint64_t(seed);
    o.noise = r.boolean(object, QStringLiteral("noise"), path, true);
    o.photons = r.number(object, QStringLiteral("photons"), path, 0.0);
    if (!(o.photons >= 0.0 && std::isfinite(o.photons)))
        r.fail(path + QStringLiteral("photons"), "must be a positive number of photons per plane (absent: the preset's)");
    source.objective = r.optionalSetting<ObjectiveKind>(object, QStringLiteral("objective"), path);
    source.readNoise = r.optional(object, QStringLiteral("read_noise"), path);
    if (source.readNoise) // the range --read-noise is held to (base/Units.h)
        if (const std::string error = plausibilityError(Setting::ReadNoise, *source.readNoise); !error.empty())
            r.fail(path + QStringLiteral("read_noise"), error);
    if (object.contains(QStringLiteral("truth"))) {
        const QJsonObject truth = r.object(object, QStringLiteral("truth"), path);
        try {
            o.truth = truthFromJson(truth, QString());
        } catch (const std::runtime_error& e) {
            // truthFromJson's message follows the source it names (none here): ": coefficient index 0 ...".
            r.fail(path + QStringLiteral("truth"), std::string("is not a truth") + e.what());
        }
        o.truth->note = r.text(truth, QStringLiteral("note"), path + QStringLiteral("truth."), QString()).toStdString();
    }
    return source;
}

} // namespace wfs
