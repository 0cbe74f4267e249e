#include "io/Session.h"

#include "io/SettingsProblems.h"

#include "io/ImageReaders.h"
#include "io/SessionJson.h"

#include "io/OutputTransaction.h"
#include "settings/SettingsTable.h"
#include "settings/SettingsText.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <algorithm>
#include <cmath>
#include <map>

namespace wfs {

namespace {

const QString kFormat = QStringLiteral("wavefront-studio-session");

// A settings enum's text (settings/SettingsText.h) as a JSON string.
template <typename E>
QJsonValue settingJson(E value)
{
    return QString::fromLatin1(settingText(value));
}

QJsonObject defocusJson(const PlaneDefocus& d)
{
    if (d.kind == PlaneDefocus::Kind::Unknown)
        return {{QStringLiteral("kind"), settingJson(d.kind)}};
    return {{QStringLiteral("kind"), settingJson(d.kind)}, {QStringLiteral("value"), d.value}};
}

// --- The settings table's keys (settings/SettingsTable.h): each section's keys that carry a typed accessor are
// written and read through it, so a setting's key, field and type are stated once, in the table.

QJsonValue settingJsonValue(const SettingAccess& access, const SettingValue& value)
{
    if (std::holds_alternative<std::monostate>(value))
        return access.unsetWord ? QJsonValue(QString::fromLatin1(access.unsetWord)) : QJsonValue(QJsonValue::Null);
    if (const bool* b = std::get_if<bool>(&value))
        return *b;
    if (const int* i = std::get_if<int>(&value))
        return *i;
    if (const double* d = std::get_if<double>(&value))
        return std::isfinite(*d) ? QJsonValue(*d) : QJsonValue(QJsonValue::Null);
    if (const std::string* text = std::get_if<std::string>(&value))
        return QString::fromStdString(*text);
    QJsonArray list;
    for (int v : std::get<std::vector<int>>(value))
        list.append(v);
    return list;
}

// Calls `visit(key within the section, accessor)` for every key of `section` ("model.") with an accessor.
template <typename Visit>
void forEachTableKey(const QString& section, Visit visit)
{
    for (const SettingDescription& s : settingsTable())
        for (const SessionKey& key : s.sessionKeys)
            if (key.name && key.access && QLatin1String(key.name).startsWith(section))
                visit(QString::fromLatin1(key.name).mid(section.size()), key.access);
}

void insertTableKeys(const QString& section, const SettingsBundle& settings, QJsonObject& object)
{
    forEachTableKey(section, [&](const QString& key, const SettingAccess& access) {
        object.insert(key, settingJsonValue(access, access.get(settings)));
    });
}

SettingValue readSettingValue(const SessionReader& r, const QJsonObject& o, const QString& key, const QString& path,
                              const SettingAccess& access)
{
    const QJsonValue v = o.value(key);
    if (access.canBeUnset && (access.unsetWord ? v == QJsonValue(QString::fromLatin1(access.unsetWord)) : v.isNull()))
        return std::monostate{};
    switch (access.type) {
    case SettingType::Boolean:
        if (access.unsetWord && !v.isBool())
            r.fail(path + key, std::string("must be true, false or \"") + access.unsetWord + "\"");
        return r.boolean(o, key, path, false);
    case SettingType::Integer:
        return r.integer(o, key, path, 0);
    case SettingType::Number:
        return access.canBeUnset ? r.optional(o, key, path).value() : r.number(o, key, path, 0.0);
    case SettingType::Word: {
        QStringList allowed;
        for (const std::string& word : access.words())
            allowed << QString::fromStdString(word);
        return allowed.at(r.choice(o, key, path, allowed, 0)).toStdString();
    }
    case SettingType::Text:
        return r.text(o, key, path, {}).toStdString();
    case SettingType::Integers:
        return r.integers(o, key, path);
    }
    return std::monostate{};
}

// The keys of `section` that `object` holds; the others keep the value `settings` has.
void readTableKeys(const SessionReader& r, const QJsonObject& object, const QString& section, const QString& path, SettingsBundle& settings)
{
    forEachTableKey(section, [&](const QString& key, const SettingAccess& access) {
        if (object.contains(key))
            access.set(settings, readSettingValue(r, object, key, path, access));
    });
}

QJsonObject modelJson(const ModelSettings& md)
{
    SettingsBundle settings;
    settings.model = md;
    QJsonObject model;
    insertTableKeys(QStringLiteral("model."), settings, model);
    return model;
}

QJsonObject solverJson(const SolverSettings& sv)
{
    SettingsBundle settings;
    settings.solver = sv;
    QJsonObject solver;
    insertTableKeys(QStringLiteral("solver."), settings, solver);
    return solver;
}

// The model and solver settings of `root` (a session or one of its runs; `prefix` names it in messages),
// checked as the command line checks them.
void readSettings(const SessionReader& r, const QJsonObject& root, const QString& prefix, ModelSettings& ms, SolverSettings& sv)
{
    SettingsBundle settings;
    settings.model = ms;
    settings.solver = sv;
    readTableKeys(r, r.object(root, QStringLiteral("model"), prefix, false), QStringLiteral("model."), prefix + QStringLiteral("model."),
                  settings);
    readTableKeys(r, r.object(root, QStringLiteral("solver"), prefix, false), QStringLiteral("solver."), prefix + QStringLiteral("solver."),
                  settings);
    ms = settings.model;
    sv = settings.solver;
    settleOrder(ms, sv); // the last stage is the order (settings/SolverSettings.h)
    try {
        checkSettings(ms, sv); // the same checks as the command line's and the desktop's
        for (const auto& error : {ms.geometryError(), ms.readNoiseError()})
            if (error)
                throw *error;
    } catch (const SettingsError& e) {
        r.fail(prefix + QString::fromStdString(settingSessionKey(e.setting())), e.problem()); // settings/SettingsTable.h
    }
}

// --- Writing: one helper per top-level key of the session object, so sessionToJson reads as its layout.

// Each input is stored both absolute and relative to the session's folder, so that a session moved
// together with its data still finds it (openSession tries the relative path second).
QJsonArray inputsJson(const std::vector<DatasetFile>& files, const QDir& sessionFolder)
{
    QJsonArray inputs;
    for (const DatasetFile& f : files) {
        const QString absolute = QFileInfo(QString::fromStdString(f.path)).absoluteFilePath();
        inputs.append(QJsonObject{
            {QStringLiteral("path"), absolute},
            {QStringLiteral("relative_path"), sessionFolder.relativeFilePath(absolute)},
            {QStringLiteral("sha256"), QString::fromStdString(f.sha256)},
            {QStringLiteral("bytes"), double(f.bytes)},
            {QStringLiteral("format"), QString::fromLatin1(imageFormatName(f.format))},
            {QStringLiteral("planes"), f.planeCount},
        });
    }
    return inputs;
}

QJsonArray planesJson(const std::vector<DatasetPlane>& planes)
{
    QJsonArray array;
    for (const DatasetPlane& p : planes)
        array.append(QJsonObject{
            {QStringLiteral("file"), p.file},
            {QStringLiteral("index"), p.indexInFile},
            {QStringLiteral("use"), p.use},
            {QStringLiteral("defocus"), defocusJson(p.defocus)},
        });
    return array;
}

QJsonObject metadataJson(const DatasetMetadata& m)
{
    QJsonObject origin;
    for (const auto& [key, value] : m.origin)
        origin.insert(QString::fromStdString(key), QString::fromStdString(value));
    SettingsBundle settings;
    settings.metadata = m;
    QJsonObject metadata{{QStringLiteral("origin"), origin}};
    insertTableKeys(QStringLiteral("metadata."), settings, metadata);
    return metadata;
}

QJsonObject preprocessJson(const PreprocessOptions& o)
{
    QJsonArray bad;
    for (const auto& [col, row] : o.badPixels)
        bad.append(QJsonArray{col, row});
    SettingsBundle settings;
    settings.preprocess = o;
    QJsonObject preprocess{{QStringLiteral("bad_pixels"), bad}};
    insertTableKeys(QStringLiteral("preprocess."), settings, preprocess);
    return preprocess;
}

QJsonArray numbersJson(const std::vector<double>& values)
{
    QJsonArray array;
    for (double v : values)
        array.append(v);
    return array;
}

QJsonArray runsJson(const std::vector<SessionRun>& runs)
{
    QJsonArray array;
    for (const SessionRun& run : runs)
        array.append(QJsonObject{
            {QStringLiteral("name"), QString::fromStdString(run.name)},
            {QStringLiteral("time"), QString::fromStdString(run.time)},
            {QStringLiteral("model"), modelJson(run.model)},
            {QStringLiteral("solver"), solverJson(run.solver)},
            {QStringLiteral("result"), run.result},
            {QStringLiteral("result_parameters"), numbersJson(run.parameters)},
        });
    return array;
}

// --- Reading: the table's keys in the table's order, then each section's own (origins, bad pixels, planes).

// Refuses files that are not sessions, or sessions written by a newer program, before reading anything else.
void checkSessionFormat(const SessionReader& r, const QJsonObject& root, const std::string& source)
{
    const QString format = r.text(root, QStringLiteral("format"), {}, {});
    if (format != kFormat)
        throw SessionError(source + ": not a Wavefront Studio session (\"format\" is '" + format.toStdString() + "', expected '"
                           + kFormat.toStdString() + "')");
    const int version = r.integer(root, QStringLiteral("format_version"), {}, -1);
    if (version < 1)
        throw SessionError(source + ": \"format_version\" is missing or not a positive integer");
    if (version > kSessionFormatVersion)
        throw SessionError(source + ": session format version " + std::to_string(version) + " is newer than this program reads (up to "
                           + std::to_string(kSessionFormatVersion) + "); open it with a newer Wavefront Studio");
}

ImageFormat imageFormatFromName(const QString& name)
{
    return name == QLatin1String("FITS")   ? ImageFormat::Fits
           : name == QLatin1String("TIFF") ? ImageFormat::Tiff
           : name == QLatin1String("PNG")  ? ImageFormat::Png
                                           : ImageFormat::Unknown;
}

void readInputs(const SessionReader& r, const QJsonObject& root, std::vector<DatasetFile>& files)
{
    const QJsonArray inputs = r.array(root, QStringLiteral("inputs"), {});
    for (int i = 0; i < inputs.size(); ++i) {
        const QString path = QStringLiteral("inputs[%1].").arg(i);
        if (!inputs.at(i).isObject())
            r.fail(QStringLiteral("inputs[%1]").arg(i), "must be an object");
        const QJsonObject o = inputs.at(i).toObject();
        DatasetFile f;
        f.path = r.text(o, QStringLiteral("path"), path, {}).toStdString();
        if (f.path.empty())
            r.fail(path + QStringLiteral("path"), "must be a non-empty string");
        r.text(o, QStringLiteral("relative_path"), path, {}); // type check; openSession uses it
        f.sha256 = r.text(o, QStringLiteral("sha256"), path, {}).toStdString();
        f.bytes = (long long)r.number(o, QStringLiteral("bytes"), path, 0.0);
        f.planeCount = r.integer(o, QStringLiteral("planes"), path, 0);
        f.format = imageFormatFromName(r.text(o, QStringLiteral("format"), path, {}));
        files.push_back(std::move(f));
    }
}

// Needs the inputs read first: each plane must name one of them.
void readPlanes(const SessionReader& r, const QJsonObject& root, Dataset& d)
{
    const QJsonArray planes = r.array(root, QStringLiteral("planes"), {}, false);
    d.planesChosen = !planes.isEmpty(); // a session's planes are what was fitted: never proposed again
    for (int i = 0; i < planes.size(); ++i) {
        const QString path = QStringLiteral("planes[%1].").arg(i);
        if (!planes.at(i).isObject())
            r.fail(QStringLiteral("planes[%1]").arg(i), "must be an object");
        const QJsonObject o = planes.at(i).toObject();
        DatasetPlane p;
        p.file = r.integer(o, QStringLiteral("file"), path, -1);
        if (p.file < 0 || p.file >= int(d.files.size()))
            r.fail(path + QStringLiteral("file"), "must name one of the inputs (0.." + std::to_string(int(d.files.size()) - 1) + ")");
        p.indexInFile = r.integer(o, QStringLiteral("index"), path, -1);
        if (p.indexInFile < 0)
            r.fail(path + QStringLiteral("index"), "must be a plane index (0 or more)");
        p.use = r.boolean(o, QStringLiteral("use"), path, true);
        p.defocus = r.defocus(o.value(QStringLiteral("defocus")), path + QStringLiteral("defocus"));
        d.planes.push_back(std::move(p));
    }
}

void readMetadata(const SessionReader& r, const QJsonObject& root, DatasetMetadata& md)
{
    const QJsonObject m = r.object(root, QStringLiteral("metadata"), {}, false);
    const QString mp = QStringLiteral("metadata.");
    SettingsBundle settings;
    settings.metadata = md;
    readTableKeys(r, m, mp, mp, settings);
    md = settings.metadata;
    const QJsonObject origin = r.object(m, QStringLiteral("origin"), mp, false);
    for (auto it = origin.begin(); it != origin.end(); ++it)
        md.origin[it.key().toStdString()] = it.value().toString().toStdString();
}

void readBadPixels(const SessionReader& r, const QJsonObject& pre, const QString& pp, std::vector<std::pair<int, int>>& badPixels)
{
    const QJsonArray bad = r.array(pre, QStringLiteral("bad_pixels"), pp, false);
    for (int i = 0; i < bad.size(); ++i) {
        const QJsonArray xy = bad.at(i).toArray();
        if (!bad.at(i).isArray() || xy.size() != 2 || !xy.at(0).isDouble() || !xy.at(1).isDouble())
            r.fail(pp + QStringLiteral("bad_pixels"), "must hold [column, row] pairs");
        // QJsonValue::toInt() turns 1e18 or 2.5 into 0, which would mask pixel (0, 0) instead.
        const double column = xy.at(0).toDouble(), row = xy.at(1).toDouble();
        if (column != std::floor(column) || row != std::floor(row) || column < 0 || row < 0 || column > 65535 || row > 65535)
            r.fail(pp + QStringLiteral("bad_pixels"), "must hold whole pixel coordinates from 0 to 65535");
        badPixels.emplace_back(int(column), int(row));
    }
}

void readPreprocess(const SessionReader& r, const QJsonObject& root, PreprocessOptions& o)
{
    const QJsonObject pre = r.object(root, QStringLiteral("preprocess"), {}, false);
    const QString pp = QStringLiteral("preprocess.");
    SettingsBundle settings;
    settings.preprocess = o;
    readTableKeys(r, pre, pp, pp, settings);
    o = settings.preprocess;
    readBadPixels(r, pre, pp, o.badPixels);
    if (o.cropSize < 0 || o.cropSize > 65536 || o.borderWidth < 0 || o.borderWidth > 65536)
        r.fail(pp + QStringLiteral("crop_size"), "and border_width must be between 0 and 65536");
    if (const auto error = o.firstError()) // the ranges --clip-sigma, --crop, ... are held to
        r.fail(QString::fromStdString(settingSessionKey(error->setting())), error->problem());
}

// `key` is an array of numbers (result parameters); `path` names its owner in messages.
std::vector<double> readNumbers(const SessionReader& r, const QJsonObject& o, const QString& key, const QString& path, bool required)
{
    std::vector<double> values;
    for (const QJsonValue& v : r.array(o, key, path, required)) {
        if (!v.isDouble())
            r.fail(path + key, "must hold numbers");
        values.push_back(v.toDouble());
    }
    return values;
}

void readRuns(const SessionReader& r, const QJsonObject& root, std::vector<SessionRun>& runs)
{
    const QJsonArray array = r.array(root, QStringLiteral("runs"), {}, false);
    for (int i = 0; i < array.size(); ++i) {
        const QString path = QStringLiteral("runs[%1].").arg(i);
        if (!array.at(i).isObject())
            r.fail(QStringLiteral("runs[%1]").arg(i), "must be an object");
        const QJsonObject o = array.at(i).toObject();
        SessionRun run;
        run.name = r.text(o, QStringLiteral("name"), path, QStringLiteral("run %1").arg(i + 1)).toStdString();
        run.time = r.text(o, QStringLiteral("time"), path, {}).toStdString();
        readSettings(r, o, path, run.model, run.solver);
        run.result = r.object(o, QStringLiteral("result"), path);
        run.parameters = readNumbers(r, o, QStringLiteral("result_parameters"), path, true);
        runs.push_back(std::move(run));
    }
}

// A session from before runs were kept: its result is its one run.
SessionRun legacyResultRun(const SessionReader& r, const QJsonObject& root, const Session& s)
{
    SessionRun run;
    run.name = "saved result";
    run.time = r.text(root, QStringLiteral("saved"), {}, {}).toStdString();
    run.model = s.model;
    run.solver = s.solver;
    run.result = s.result;
    run.parameters = s.resultParameters;
    return run;
}
} // namespace

QJsonObject sessionToJson(const Session& s, const std::string& sessionPath)
{
    const QDir folder = QFileInfo(QString::fromStdString(sessionPath)).absoluteDir();
    QJsonObject root{
        {QStringLiteral("format"), kFormat},
        {QStringLiteral("format_version"), kSessionFormatVersion},
        {QStringLiteral("saved"), QDateTime::currentDateTimeUtc().toString(Qt::ISODate)},
        {QStringLiteral("inputs"), inputsJson(s.dataset.files, folder)},
        {QStringLiteral("planes"), planesJson(s.dataset.planes)},
        {QStringLiteral("metadata"), metadataJson(s.dataset.metadata)},
        {QStringLiteral("preprocess"), preprocessJson(s.dataset.preprocess)},
        {QStringLiteral("model"), modelJson(s.model)},
        {QStringLiteral("solver"), solverJson(s.solver)},
    };
    if (!s.result.isEmpty()) {
        root.insert(QStringLiteral("result"), s.result);
        root.insert(QStringLiteral("result_parameters"), numbersJson(s.resultParameters));
    }
    if (!s.runs.empty())
        root.insert(QStringLiteral("runs"), runsJson(s.runs));
    if (s.simulated)
        root.insert(QStringLiteral("simulated"), simulatedSourceJson(*s.simulated));
    return root;
}

Session sessionFromJson(const QJsonObject& root, const std::string& source)
{
    const SessionReader r(source);
    checkSessionFormat(r, root, source);

    Session s;
    readInputs(r, root, s.dataset.files);
    readPlanes(r, root, s.dataset);
    readMetadata(r, root, s.dataset.metadata);
    readPreprocess(r, root, s.dataset.preprocess);
    readSettings(r, root, QString(), s.model, s.solver);

    s.result = r.object(root, QStringLiteral("result"), {}, false);
    s.resultParameters = readNumbers(r, root, QStringLiteral("result_parameters"), {}, false);
    readRuns(r, root, s.runs);
    if (root.contains(QStringLiteral("simulated")))
        s.simulated = readSimulatedSource(r, r.object(root, QStringLiteral("simulated"), {}), QStringLiteral("simulated."));
    if (s.simulated && !s.dataset.files.empty())
        r.fail(QStringLiteral("simulated"), "and \"inputs\" both give the data: a session has one source");
    if (s.runs.empty() && !s.result.isEmpty() && !s.resultParameters.empty())
        s.runs.push_back(legacyResultRun(r, root, s));
    return s;
}

QByteArray sessionBytes(const std::string& path, const Session& session)
{
    return QJsonDocument(sessionToJson(session, path)).toJson();
}

void saveSession(const std::string& path, const Session& session, bool overwrite)
{
    try {
        writeFileAtomically(path, sessionBytes(path, session), overwrite);
    } catch (const OutputError& e) {
        throw SessionError(e.what());
    }
}

namespace {

// The session file as JSON. The readability check comes first because a FIFO would block the open forever.
QJsonDocument readSessionDocument(const std::string& path)
{
    std::string bytes;
    try {
        bytes = readRegularFile(path, 64 << 20, "a session file (JSON)");
    } catch (const ImageReadError& e) {
        throw SessionError(e.what());
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(bytes), &error);
    if (error.error != QJsonParseError::NoError)
        throw SessionError(path + ": not valid JSON (" + error.errorString().toStdString() + " at byte " + std::to_string(error.offset)
                           + ")");
    if (!doc.isObject())
        throw SessionError(path + ": not a session (the JSON is not an object)");
    return doc;
}

// The stored absolute path if it still exists, else the path relative to the session's folder (the data
// moved together with the session); empty if neither exists.
std::string resolveInputPath(const DatasetFile& stored, const std::string& relativePath, const QDir& sessionFolder)
{
    std::string resolved = stored.path;
    if (!QFileInfo::exists(QString::fromStdString(resolved)) && !relativePath.empty()) {
        const QString relative = sessionFolder.filePath(QString::fromStdString(relativePath));
        if (QFileInfo::exists(relative))
            resolved = relative.toStdString();
    }
    return QFileInfo::exists(QString::fromStdString(resolved)) ? resolved : std::string();
}

// Warnings for a file that loaded but no longer matches what the session recorded.
void checkLoadedAgainstStored(const DatasetFile& stored, const DatasetFile& loaded, const std::string& resolved,
                              std::vector<DatasetMessage>& messages)
{
    if (!stored.sha256.empty() && !loaded.sha256.empty() && loaded.sha256 != stored.sha256)
        messages.push_back({MessageLevel::Warning, resolved,
                            resolved + ": the file has changed since the session was saved (SHA-256 differs); results may not match"});
    if (stored.planeCount > 0 && loaded.planeCount != stored.planeCount)
        messages.push_back({MessageLevel::Warning, resolved,
                            resolved + ": has " + std::to_string(loaded.planeCount) + " planes, the session expected "
                                + std::to_string(stored.planeCount)});
}

// Loads the session's inputs into opened.session.dataset; returns stored input index -> loaded file index
// for the inputs that loaded (a missing or unreadable input is reported, not fatal, so the rest still opens).
std::map<int, int> loadSessionInputs(const Session& stored, const QJsonArray& inputs, const QDir& sessionFolder, const ReadLimits& limits,
                                     OpenedSession& opened)
{
    Dataset& d = opened.session.dataset;
    std::map<int, int> fileMap;
    for (int i = 0; i < int(stored.dataset.files.size()); ++i) {
        const DatasetFile& f = stored.dataset.files[size_t(i)];
        const std::string relativePath = inputs.at(i).toObject().value(QStringLiteral("relative_path")).toString().toStdString();
        const std::string resolved = resolveInputPath(f, relativePath, sessionFolder);
        if (resolved.empty()) {
            opened.messages.push_back({MessageLevel::Error, f.path,
                                       f.path + ": input of the session not found (also not as " + relativePath
                                           + " beside the session); its planes are missing"});
            continue;
        }
        const size_t before = d.files.size();
        for (DatasetMessage& msg : addFiles(d, {resolved}, limits))
            opened.messages.push_back(std::move(msg));
        if (d.files.size() == before)
            continue; // unreadable: addFiles said why
        fileMap[i] = int(before);
        checkLoadedAgainstStored(f, d.files.back(), resolved, opened.messages);
    }
    return fileMap;
}

// Plane settings of the session replace what loading chose (headers, size checks).
void applyStoredPlanes(const Session& stored, const std::map<int, int>& fileMap, OpenedSession& opened)
{
    Dataset& d = opened.session.dataset;
    if (!stored.dataset.planes.empty())
        for (DatasetPlane& p : d.planes)
            p.use = false;
    d.planesChosen = stored.dataset.planesChosen;
    for (const DatasetPlane& sp : stored.dataset.planes) {
        const auto it = fileMap.find(sp.file);
        if (it == fileMap.end())
            continue;
        const DatasetFile& loaded = d.files[size_t(it->second)];
        if (sp.indexInFile >= loaded.planeCount) {
            opened.messages.push_back(
                {MessageLevel::Warning, loaded.path,
                 loaded.path + ": plane " + std::to_string(sp.indexInFile) + " of the session is missing from the file"});
            continue;
        }
        DatasetPlane& p = d.planes[size_t(loaded.firstPlane + sp.indexInFile)];
        p.use = sp.use;
        p.defocus = sp.defocus;
    }
}

// A value the session says came from an input's header, where that same header now says another: the value was
// edited in the session file (or the file changed since). It is the session's, not the header's, and no conflict
// between the header and itself.
void attributeEditedValues(const std::string& sessionPath, DatasetMetadata& m)
{
    const std::string session = "session " + QFileInfo(QString::fromStdString(sessionPath)).fileName().toStdString();
    for (auto c = m.conflicts.begin(); c != m.conflicts.end();) {
        const auto origin = m.origin.find(c->key);
        if (origin == m.origin.end() || c->keptOrigin != origin->second || c->otherOrigin != origin->second) {
            ++c;
            continue;
        }
        origin->second = session + " (edited: " + c->otherOrigin + " says " + metadataValueText(c->key, c->other) + ")";
        c = m.conflicts.erase(c);
    }
}

} // namespace

OpenedSession openSession(const std::string& path, const ReadLimits& limits)
{
    const QJsonDocument doc = readSessionDocument(path);
    const Session stored = sessionFromJson(doc.object(), path);

    OpenedSession opened;
    opened.session.model = stored.model;
    opened.session.solver = stored.solver;
    opened.session.result = stored.result;
    opened.session.resultParameters = stored.resultParameters;
    opened.session.runs = stored.runs;
    opened.session.simulated = stored.simulated;
    Dataset& d = opened.session.dataset;
    d.metadata = stored.dataset.metadata; // set first: headers only fill what the session left unset
    for (const auto& [key, origin] : d.metadata.origin)
        opened.sessionValues.push_back(key);
    for (const auto& [key, value] : metadataNumbers(d.metadata))
        if (value && !d.metadata.origin.count(key))
            opened.sessionValues.push_back(key);
    d.preprocess = stored.dataset.preprocess;
    const QDir folder = QFileInfo(QString::fromStdString(path)).absoluteDir();
    const QJsonArray inputs = doc.object().value(QStringLiteral("inputs")).toArray();
    const std::map<int, int> fileMap = loadSessionInputs(stored, inputs, folder, limits, opened);
    attributeEditedValues(path, d.metadata);
    applyStoredPlanes(stored, fileMap, opened);
    if (!limits.headersOnly) // no pixels to prepare
        for (DatasetMessage& msg : prepare(d))
            opened.messages.push_back(std::move(msg));
    return opened;
}

void markSessionOrigins(DatasetMetadata& m, const std::string& sessionPath, const std::vector<std::string>& fields)
{
    const std::string session = "session " + QFileInfo(QString::fromStdString(sessionPath)).fileName().toStdString();
    for (const std::string& key : fields) {
        auto it = m.origin.find(key);
        if (it == m.origin.end())
            m.origin[key] = session;
        else if (it->second.rfind("session ", 0) != 0)
            it->second = session + " (" + it->second + ")";
    }
}

} // namespace wfs
