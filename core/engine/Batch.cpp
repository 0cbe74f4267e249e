#include "engine/Batch.h"

#include "io/ImageReaders.h"
#include "io/ResultJson.h"
#include "io/SettingOptions.h"
#include "base/CsvText.h"
#include "base/Units.h"
#include "optics/Zernike.h"
#include "settings/SettingsTable.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace wfs {

namespace {

bool endsWith(const QString& text, const char* suffix)
{
    return text.endsWith(QLatin1String(suffix), Qt::CaseInsensitive);
}

// The file name without image extensions ("bead_01.fits.gz" -> "bead_01").
std::string nameFromPath(const std::string& path)
{
    QString name = QFileInfo(QString::fromStdString(path)).fileName();
    for (const char* ext : {".gz", ".fz"})
        if (endsWith(name, ext))
            name.chop(int(std::strlen(ext)));
    for (const char* ext : {".fits", ".fit", ".fts", ".tiff", ".tif", ".png"})
        if (endsWith(name, ext)) {
            name.chop(int(std::strlen(ext)));
            break;
        }
    return name.toStdString();
}

// RFC 4180 fields of one record: commas separate, double quotes quote, "" is a quote inside quotes.
// Returns false for an unterminated quote.
bool splitCsvLine(const QString& line, QStringList& fields)
{
    fields.clear();
    QString field;
    bool quoted = false;
    for (int i = 0; i < line.size(); ++i) {
        const QChar c = line.at(i);
        if (quoted) {
            if (c == QLatin1Char('"')) {
                if (i + 1 < line.size() && line.at(i + 1) == QLatin1Char('"')) {
                    field += c;
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                field += c;
            }
        } else if (c == QLatin1Char('"')) {
            quoted = true;
        } else if (c == QLatin1Char(',')) {
            fields << field.trimmed();
            field.clear();
        } else {
            field += c;
        }
    }
    fields << field.trimmed();
    return !quoted;
}

QStringList readLines(const std::string& path, const char* what)
{
    std::string bytes;
    try {
        bytes = readRegularFile(path, 64 << 20, (std::string("a ") + what + " (text)").c_str());
    } catch (const std::exception& e) {
        throw BatchError(std::string(what) + " " + e.what());
    }
    QStringList lines = QString::fromUtf8(QByteArray::fromStdString(bytes)).split(QLatin1Char('\n'));
    for (QString& line : lines) // as a text-mode read gives them: Windows line ends read as Unix ones
        if (line.endsWith(QLatin1Char('\r')))
            line.chop(1);
    for (qsizetype k = 0; k < lines.size(); ++k) // a name cut at a NUL would name another file, and messages would end there
        if (lines[k].contains(QChar(0)))
            throw BatchError(path + ": line " + std::to_string(k + 1) + " contains a NUL character; not a " + what);
    return lines;
}

QString resolveAgainst(const QString& folder, const QString& path)
{
    return QDir::isAbsolutePath(path) ? path : QDir(folder).filePath(path);
}

// A manifest's columns by role, from its header row.
struct ManifestColumns {
    QStringList header;
    int file = -1, name = -1, x = -1, y = -1;
    std::map<int, std::string> overrides; // column -> override name (one of batchOverrideNames())
};

ManifestColumns readManifestHeader(const QStringList& fields, const std::string& path)
{
    ManifestColumns columns;
    columns.header = fields;
    // A column named twice would be read twice and the last would silently win (file and path, x and field_x are the
    // same column under two names).
    const auto role = [](const QString& name) {
        const QString column = name.trimmed().toLower();
        if (column == QLatin1String("path"))
            return QStringLiteral("file");
        if (column == QLatin1String("field_x"))
            return QStringLiteral("x");
        if (column == QLatin1String("field_y"))
            return QStringLiteral("y");
        return column;
    };
    for (int c = 0; c < fields.size(); ++c)
        for (int earlier = 0; earlier < c; ++earlier)
            if (role(fields.at(c)) == role(fields.at(earlier)))
                throw BatchError(path + ": the header names column '" + role(fields.at(c)).toStdString() + "' twice (columns "
                                 + std::to_string(earlier + 1) + " and " + std::to_string(c + 1) + ")");
    for (int c = 0; c < fields.size(); ++c) {
        const QString column = fields.at(c).toLower();
        const std::string key = column.toStdString();
        if (column == QLatin1String("file") || column == QLatin1String("path"))
            columns.file = c;
        else if (column == QLatin1String("name"))
            columns.name = c;
        else if (column == QLatin1String("x") || column == QLatin1String("field_x"))
            columns.x = c;
        else if (column == QLatin1String("y") || column == QLatin1String("field_y"))
            columns.y = c;
        else if (std::find(batchOverrideNames().begin(), batchOverrideNames().end(), key) != batchOverrideNames().end())
            columns.overrides[c] = key;
        else {
            std::string known = "file, name, x, y";
            for (const std::string& o : batchOverrideNames())
                known += ", " + o;
            throw BatchError(path + ": unknown column '" + fields.at(c).toStdString() + "' (known: " + known + ")");
        }
    }
    if (columns.file < 0)
        throw BatchError(path + ": the header row has no 'file' column (e.g. file,x,y)");
    if ((columns.x < 0) != (columns.y < 0))
        throw BatchError(path + ": a field position needs both an 'x' and a 'y' column");
    return columns;
}

// Reads a number cell into `target` (an empty cell leaves it unset). A bad cell marks the row as failed
// rather than stopping the batch, so the other rows still run; only the first problem of a row is kept.
void readManifestNumber(const ManifestColumns& columns, const QStringList& fields, int column, const std::string& where, BatchInput& in,
                        std::optional<double>& target)
{
    const QString text = fields.value(column);
    if (text.isEmpty())
        return;
    bool ok = false;
    const double v = text.toDouble(&ok);
    if (!ok || !std::isfinite(v)) {
        if (in.error.empty())
            in.error = where + ": " + columns.header.at(column).toStdString() + " '" + text.toStdString() + "' is not a number";
        return;
    }
    target = v;
}

// One data row of a manifest; `where` names it ("manifest.csv line 7") in its messages.
BatchInput readManifestRow(const ManifestColumns& columns, const QStringList& fields, const QString& folder, const std::string& where,
                           int lineNo)
{
    BatchInput in;
    in.source = where;
    const QString file = fields.value(columns.file);
    const bool named = columns.name >= 0 && !fields.value(columns.name).isEmpty();
    if (file.isEmpty()) {
        in.name = named ? fields.value(columns.name).toStdString() : "line-" + std::to_string(lineNo + 1);
        in.error = where + ": no file given";
        return in;
    }
    in.path = resolveAgainst(folder, file).toStdString();
    in.name = named ? fields.value(columns.name).toStdString() : nameFromPath(in.path);
    if (columns.x >= 0) {
        readManifestNumber(columns, fields, columns.x, where, in, in.fieldX);
        readManifestNumber(columns, fields, columns.y, where, in, in.fieldY);
        if (in.fieldX.has_value() != in.fieldY.has_value() && in.error.empty())
            in.error = where + ": give both x and y, or neither";
    }
    for (const auto& [column, key] : columns.overrides)
        if (!fields.value(column).isEmpty())
            in.overrides[key] = fields.value(column).toStdString();
    return in;
}

void readManifest(const std::string& path, std::vector<BatchInput>& inputs)
{
    const QStringList lines = readLines(path, "manifest");
    const QString folder = QFileInfo(QString::fromStdString(path)).absolutePath();
    const std::string shown = QFileInfo(QString::fromStdString(path)).fileName().toStdString();
    std::optional<ManifestColumns> columns; // set by the first row that is not blank or a comment
    for (int lineNo = 0; lineNo < lines.size(); ++lineNo) {
        QString line = lines.at(lineNo);
        if (line.endsWith(QLatin1Char('\r')))
            line.chop(1);
        if (line.trimmed().isEmpty() || line.trimmed().startsWith(QLatin1Char('#')))
            continue;
        QStringList fields;
        if (!splitCsvLine(line, fields))
            throw BatchError(path + " line " + std::to_string(lineNo + 1) + ": a quoted field is not closed");
        if (!columns)
            columns = readManifestHeader(fields, path);
        else
            inputs.push_back(readManifestRow(*columns, fields, folder, shown + " line " + std::to_string(lineNo + 1), lineNo));
    }
    if (!columns)
        throw BatchError(path + ": the manifest is empty (expected a header row such as file,x,y)");
}

void readList(const std::string& path, std::vector<BatchInput>& inputs)
{
    const QStringList lines = readLines(path, "list file");
    const QString folder = QFileInfo(QString::fromStdString(path)).absolutePath();
    const std::string shown = QFileInfo(QString::fromStdString(path)).fileName().toStdString();
    for (int lineNo = 0; lineNo < lines.size(); ++lineNo) {
        const QString line = lines.at(lineNo).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#')))
            continue;
        BatchInput in;
        in.path = resolveAgainst(folder, line).toStdString();
        in.name = nameFromPath(in.path);
        in.source = shown + " line " + std::to_string(lineNo + 1);
        inputs.push_back(std::move(in));
    }
}

void expandGlob(const std::string& pattern, std::vector<BatchInput>& inputs)
{
    const QFileInfo info(QString::fromStdString(pattern));
    const QString folder = info.path();
    if (QRegularExpression(QStringLiteral("[*?\\[]")).match(folder).hasMatch())
        throw BatchError(pattern + ": wildcards are allowed in the file name only, not in folders");
    const QStringList names = QDir(folder).entryList({info.fileName()}, QDir::Files, QDir::Name);
    if (names.isEmpty())
        throw BatchError(pattern + ": no file matches");
    for (const QString& name : names) {
        BatchInput in;
        in.path = (pattern.find('/') == std::string::npos ? name : QDir(folder).filePath(name)).toStdString();
        in.name = nameFromPath(in.path);
        in.source = pattern;
        inputs.push_back(std::move(in));
    }
}

// A manifest row's overrides as options (io/SettingOptions.h): the columns are the command line's flags, read by
// the same parsers, named by their column in messages.
class ManifestOptions : public OptionSource {
public:
    explicit ManifestOptions(const std::map<std::string, std::string>& overrides)
        : m_overrides(overrides)
    {
    }
    bool has(const char* name) const override { return m_overrides.count(name) > 0; }
    std::string value(const char* name) const override { return m_overrides.at(name); }
    std::string spell(const char* name) const override { return name; }
    std::string origin() const override { return "batch manifest"; }

private:
    const std::map<std::string, std::string>& m_overrides;
};

// Whether a metadata value was set by a person (kept for every input) rather than read from the
// session's own input files (each batch input's files say it for themselves).
bool setByPerson(const DatasetMetadata& m, const std::string& key)
{
    const auto it = m.origin.find(key);
    return it == m.origin.end() || it->second == "command line" || it->second == "user" || it->second == "batch manifest";
}

std::string csvNumber(double v)
{
    if (!std::isfinite(v))
        return {};
    return QString::number(v, 'g', 10).toStdString();
}

// The settings file's JSON object, with an empty "inputs" added when it lists none (a settings file need
// not), so that sessionFromJson can read and check it like any session.
QJsonObject readSettingsObject(const std::string& path)
{
    std::string bytes;
    try {
        bytes = readRegularFile(path, 64 << 20, "a settings file (JSON)");
    } catch (const std::exception& e) {
        throw SessionError(e.what());
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(bytes), &error);
    if (error.error != QJsonParseError::NoError)
        throw SessionError(path + ": not valid JSON (" + error.errorString().toStdString() + " at byte " + std::to_string(error.offset)
                           + ")");
    if (!doc.isObject())
        throw SessionError(path + ": not a settings file (the JSON is not an object)");
    QJsonObject root = doc.object();
    if (!root.contains(QStringLiteral("inputs")))
        root.insert(QStringLiteral("inputs"), QJsonArray());
    return root;
}

} // namespace

DatasetMetadata personSetMetadata(const DatasetMetadata& from)
{
    DatasetMetadata m;
    auto keep = [&](std::optional<double> DatasetMetadata::*field, const char* key) {
        if ((from.*field) && setByPerson(from, key)) {
            m.*field = from.*field;
            if (const auto it = from.origin.find(key); it != from.origin.end())
                m.origin[key] = it->second;
        }
    };
    keep(&DatasetMetadata::wavelength, "wavelength");
    keep(&DatasetMetadata::pixelPitch, "pixelPitch");
    keep(&DatasetMetadata::pixelAngle, "pixelAngle");
    keep(&DatasetMetadata::fNumber, "fNumber");
    keep(&DatasetMetadata::numericalAperture, "numericalAperture");
    keep(&DatasetMetadata::aperture, "aperture");
    keep(&DatasetMetadata::samplingQ, "samplingQ");
    keep(&DatasetMetadata::zStep, "zStep");
    keep(&DatasetMetadata::focusPlane, "focusPlane");
    keep(&DatasetMetadata::saturationLevel, "saturationLevel");
    // The immersion and the defocus model always have a value: one a person set is one the origin map names as set by
    // a person, or (a settings file written by hand, without an origin map) one other than the default. Dropping it
    // while keeping the NA would pair the settings' NA 1.2 with an immersion of 1.
    const DatasetMetadata defaults;
    if (setByPerson(from, "immersionIndex") && (from.origin.count("immersionIndex") || from.immersionIndex != defaults.immersionIndex)) {
        m.immersionIndex = from.immersionIndex;
        if (const auto it = from.origin.find("immersionIndex"); it != from.origin.end())
            m.origin["immersionIndex"] = it->second;
    }
    if (setByPerson(from, "defocusModel") && (from.origin.count("defocusModel") || from.defocusModel != defaults.defocusModel)) {
        m.defocusModel = from.defocusModel;
        if (const auto it = from.origin.find("defocusModel"); it != from.origin.end())
            m.origin["defocusModel"] = it->second;
    }
    if (!from.dataUnit.empty() && setByPerson(from, "dataUnit"))
        m.dataUnit = from.dataUnit;
    return m;
}

namespace {

// The plane template: what a person chose for plane i of the session's first input. The planes carry no
// pixels: prepareBatchRun applies them to each input's planes.
std::vector<DatasetPlane> planeTemplate(const Dataset& stored)
{
    std::vector<DatasetPlane> planes;
    for (size_t i = 0; i < stored.planes.size(); ++i) {
        const DatasetPlane& p = stored.planes[i];
        if (p.file != 0)
            continue;
        DatasetPlane t;
        t.indexInFile = p.indexInFile;
        t.use = p.use;
        if (setByPerson(stored.metadata, "defocus[" + std::to_string(i) + "]"))
            t.defocus = p.defocus;
        planes.push_back(t);
    }
    return planes;
}

// The model settings are checked once, before any worker, so that a bad one (an odd grid, an obscuration of 1.5)
// stops the batch instead of failing every input: by the settings' own validator, which needs no data.
void checkModelSettings(const Session& s, const std::string& path)
{
    if (const auto error = s.model.firstError())
        throw SessionError(path + ": the model settings cannot be used: " + error->what());
}

} // namespace

const std::vector<std::string>& batchOverrideNames()
{
    static const std::vector<std::string> names = manifestColumns(); // settings/SettingsTable.h
    return names;
}

std::vector<BatchInput> resolveBatchInputs(const std::vector<std::string>& arguments, const std::string& manifest)
{
    std::vector<BatchInput> inputs;
    if (!manifest.empty())
        readManifest(manifest, inputs);
    for (const std::string& argument : arguments) {
        const QString a = QString::fromStdString(argument);
        if (QFileInfo(a).fileName().contains(QRegularExpression(QStringLiteral("[*?\\[]"))) && !QFileInfo::exists(a))
            expandGlob(argument, inputs);
        else if (endsWith(a, ".csv"))
            readManifest(argument, inputs);
        else if (endsWith(a, ".txt") || endsWith(a, ".list") || endsWith(a, ".lst"))
            readList(argument, inputs);
        else {
            BatchInput in;
            in.path = argument;
            in.name = nameFromPath(argument);
            in.source = "command line";
            inputs.push_back(std::move(in));
        }
    }
    if (inputs.empty())
        throw BatchError("no inputs: give image files, a glob, a list file or a CSV manifest");
    std::map<std::string, const BatchInput*> byName;
    for (const BatchInput& in : inputs) {
        if (in.name.empty() || in.name == "." || in.name == ".." || in.name.find('/') != std::string::npos || in.name.front() == '.')
            throw BatchError(in.source + ": '" + in.name + "' cannot name a result file; give the row a 'name'");
        // NAME.json, NAME.log and the temporaries beside them (".NAME.json.wfs-XXXXXX") must fit a file name
        // (255 bytes on Linux file systems).
        constexpr size_t kMaxNameBytes = 200;
        if (in.name.size() > kMaxNameBytes)
            throw BatchError(in.source + ": the name '" + in.name.substr(0, 40) + "...' (" + std::to_string(in.name.size())
                             + " bytes) is too long for a result file (at most " + std::to_string(kMaxNameBytes)
                             + " bytes); give the row a shorter 'name'");
        const auto [it, inserted] = byName.emplace(in.name, &in);
        if (!inserted)
            throw BatchError("two inputs have the name '" + in.name + "' (" + it->second->source + ": " + it->second->path + ", and "
                             + in.source + ": " + in.path + "); results would overwrite each other: give a manifest with a 'name' column");
    }
    return inputs;
}

QJsonObject batchInputToJson(const BatchInput& in)
{
    QJsonObject overrides;
    for (const auto& [key, text] : in.overrides)
        overrides.insert(QString::fromStdString(key), QString::fromStdString(text));
    QJsonObject o{{QStringLiteral("name"), QString::fromStdString(in.name)},
                  {QStringLiteral("file"), QString::fromStdString(in.path)},
                  {QStringLiteral("source"), QString::fromStdString(in.source)},
                  {QStringLiteral("overrides"), overrides}};
    if (in.fieldX && in.fieldY) {
        o.insert(QStringLiteral("x"), *in.fieldX);
        o.insert(QStringLiteral("y"), *in.fieldY);
    }
    return o;
}

BatchInput batchInputFromJson(const QJsonObject& o)
{
    BatchInput in;
    in.name = o.value(QStringLiteral("name")).toString().toStdString();
    in.path = o.value(QStringLiteral("file")).toString().toStdString();
    in.source = o.value(QStringLiteral("source")).toString().toStdString();
    if (in.name.empty() || in.path.empty())
        throw BatchError("a batch input needs a name and a file");
    if (o.contains(QStringLiteral("x")) && o.contains(QStringLiteral("y"))) {
        in.fieldX = o.value(QStringLiteral("x")).toDouble();
        in.fieldY = o.value(QStringLiteral("y")).toDouble();
    }
    const QJsonObject overrides = o.value(QStringLiteral("overrides")).toObject();
    for (auto it = overrides.begin(); it != overrides.end(); ++it)
        in.overrides[it.key().toStdString()] = it.value().toString().toStdString();
    return in;
}

Session loadBatchSettings(const std::string& path)
{
    const Session stored = sessionFromJson(readSettingsObject(path), path); // checks the orders and the solver settings

    Session s;
    s.model = stored.model;
    s.solver = stored.solver;
    s.dataset.preprocess = stored.dataset.preprocess;
    s.dataset.metadata = personSetMetadata(stored.dataset.metadata);
    s.dataset.planes = planeTemplate(stored.dataset);
    s.dataset.planesChosen = stored.dataset.planesChosen;
    validateMetadata(s.dataset.metadata); // e.g. a wavelength of 633 (metres) stops the batch here, naming it
    checkModelSettings(s, path);
    return s;
}

namespace {

// The settings with `paths` loaded as one input (a stack's files in plane order) and the plane template applied.
Session sessionForInput(const Session& settings, const std::vector<std::string>& paths, std::vector<DatasetMessage>* warnings = nullptr)
{
    Session s;
    s.model = settings.model;
    s.solver = settings.solver;
    s.dataset.metadata = settings.dataset.metadata; // set first: the input's headers fill what is unset
    s.dataset.preprocess = settings.dataset.preprocess;
    std::string errors;
    for (const DatasetMessage& msg : addFiles(s.dataset, paths))
        if (msg.level == MessageLevel::Error)
            errors += (errors.empty() ? "" : "; ") + msg.text;
        else if (msg.level == MessageLevel::Warning && warnings)
            warnings->push_back(msg);
    if (!errors.empty())
        throw IncompleteFileError(errors);
    if (s.dataset.files.empty())
        throw IncompleteFileError(paths.front() + ": could not be read");
    bool anyTemplate = false;
    for (const DatasetPlane& t : settings.dataset.planes)
        anyTemplate = anyTemplate || !t.use || t.defocus.kind != PlaneDefocus::Kind::Unknown;
    s.dataset.planesChosen = settings.dataset.planesChosen || anyTemplate;
    if (anyTemplate) {
        for (DatasetPlane& p : s.dataset.planes)
            p.use = false;
        for (const DatasetPlane& t : settings.dataset.planes) {
            if (t.indexInFile >= int(s.dataset.planes.size()))
                continue;
            DatasetPlane& p = s.dataset.planes[size_t(t.indexInFile)];
            p.use = t.use;
            if (t.defocus.kind != PlaneDefocus::Kind::Unknown) {
                p.defocus = t.defocus;
                s.dataset.metadata.origin["defocus[" + std::to_string(t.indexInFile) + "]"] = "user";
            }
        }
    }
    return s;
}

// Whether the settings choose planes (a truncated file is then fitted on the planes it still has).
bool settingsChoosePlanes(const Session& settings)
{
    return std::any_of(settings.dataset.planes.begin(), settings.dataset.planes.end(), [](const DatasetPlane& t) { return !t.use; });
}

} // namespace

void applyManifestOverrides(Dataset& data, const std::map<std::string, std::string>& overrides)
{
    for (const auto& [column, text] : overrides)
        if (std::find(batchOverrideNames().begin(), batchOverrideNames().end(), column) == batchOverrideNames().end())
            throw DatasetError("'" + column + "' is not a manifest column");
    try {
        applyMetadataOptions(ManifestOptions(overrides), data);
    } catch (const OptionError& e) {
        throw DatasetError(e.what());
    }
}

PreparedRun prepareBatchRun(const Session& settings, const BatchInput& input)
{
    if (!input.error.empty())
        throw DatasetError(input.error);
    Session s = sessionForInput(settings, {input.path});
    if (!input.overrides.count("planes") && !settingsChoosePlanes(settings))
        requireWholeFiles(s.dataset, "a manifest's planes column, or planes chosen in the settings");
    try {
        applyManifestOverrides(s.dataset, input.overrides);
    } catch (const DatasetError& e) {
        throw DatasetError(input.source + ": " + e.what());
    }
    return prepareRun(std::move(s));
}

PreparedRun prepareStackRun(const Session& settings, const std::vector<std::string>& paths)
{
    if (paths.empty())
        throw DatasetError("a stack needs at least one file");
    std::vector<DatasetMessage> warnings;
    Session s = sessionForInput(settings, paths, &warnings);
    if (!settingsChoosePlanes(settings))
        requireWholeFiles(s.dataset, "planes chosen in the settings");
    PreparedRun run = prepareRun(std::move(s));
    run.messages.insert(run.messages.begin(), warnings.begin(), warnings.end());
    return run;
}

std::string batchResultPath(const std::string& outDir, const BatchInput& input)
{
    return QDir(QString::fromStdString(outDir)).filePath(QString::fromStdString(input.name + ".json")).toStdString();
}

std::string batchLogPath(const std::string& outDir, const BatchInput& input)
{
    return QDir(QString::fromStdString(outDir)).filePath(QString::fromStdString(input.name + ".log")).toStdString();
}

std::optional<QJsonObject> readCompleteResult(const std::string& path)
{
    std::string bytes;
    try {
        bytes = readRegularFile(path, 64 << 20, "a result (JSON)");
    } catch (const std::exception&) {
        return std::nullopt;
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(bytes), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        return std::nullopt;
    const QJsonObject result = doc.object();
    try {
        // Through the readers the result format offers: its coefficients (the truth files' schema)
        // and the solver's record.
        if (truthFromJson(result, QString::fromStdString(path)).terms.empty())
            return std::nullopt;
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (!result.value(QStringLiteral("termination")).isString())
        return std::nullopt;
    return result;
}

QJsonObject batchInputIdentity(const BatchInput& input, const std::string& settingsPath)
{
    const QFileInfo info(QString::fromStdString(input.path));
    long long bytes = 0;
    const std::string sha256 = sha256Of(input.path, &bytes);
    QJsonObject overrides;
    for (const auto& [key, text] : input.overrides)
        overrides.insert(QString::fromStdString(key), QString::fromStdString(text));
    return {{QStringLiteral("path"), info.absoluteFilePath()},
            {QStringLiteral("bytes"), double(bytes)},
            {QStringLiteral("modified"), info.lastModified().toUTC().toString(Qt::ISODateWithMs)},
            {QStringLiteral("sha256"), QString::fromStdString(sha256)},
            {QStringLiteral("settings_sha256"), QString::fromStdString(settingsPath.empty() ? std::string() : sha256Of(settingsPath))},
            {QStringLiteral("overrides"), overrides}};
}

BatchJobs batchJobs(int requested, int threadsPerFit, int hardwareThreads, size_t pending)
{
    const int threads = std::max(1, threadsPerFit), hardware = std::max(1, hardwareThreads);
    BatchJobs out;
    if (requested <= 0) {
        out.jobs = std::max(1, std::min(hardware / threads, int(std::min<size_t>(pending, size_t(hardware)))));
        return out;
    }
    out.jobs = requested;
    if (long(requested) * threads > hardware)
        out.warning = std::to_string(requested) + " jobs x " + std::to_string(threads)
                      + " thread(s) per fit = " + std::to_string(long(requested) * threads) + " threads on " + std::to_string(hardware)
                      + " hardware threads: the fits will share cores and each run slower; --jobs "
                      + std::to_string(std::max(1, hardware / threads)) + " uses every core once";
    return out;
}

std::string staleResultReason(const QJsonObject& result, const QJsonObject& identity)
{
    const QJsonObject then = result.value(QStringLiteral("batch_input")).toObject();
    auto text = [](const QJsonObject& o, const char* key) { return o.value(QLatin1String(key)).toString().toStdString(); };
    if (then.isEmpty())
        return {}; // reconstruct's (the GNU parallel recipe): nothing recorded to check, see the header
    if (then.value(QStringLiteral("path")) != identity.value(QStringLiteral("path")))
        return "the result belongs to another input (" + text(then, "path") + ")";
    // The bytes decide: a copy or a `touch` keeps them (and the result), an edit of the same size does not.
    if (then.value(QStringLiteral("sha256")) != identity.value(QStringLiteral("sha256")))
        return "the input changed since the result (then "
               + QString::number(then.value(QStringLiteral("bytes")).toDouble(), 'f', 0).toStdString() + " bytes, modified "
               + text(then, "modified") + "; now "
               + QString::number(identity.value(QStringLiteral("bytes")).toDouble(), 'f', 0).toStdString() + " bytes, modified "
               + text(identity, "modified") + ")";
    if (then.value(QStringLiteral("settings_sha256")) != identity.value(QStringLiteral("settings_sha256"))
        || then.value(QStringLiteral("overrides")) != identity.value(QStringLiteral("overrides")))
        return "the settings changed since the result (the settings file or the input's manifest row)";
    return {};
}

bool isBatchInputDone(const BatchInput& input, const std::string& outDir)
{
    return readCompleteResult(batchResultPath(outDir, input)).has_value();
}

std::string failureReasonFromLog(const std::string& logPath)
{
    std::string bytes;
    try {
        bytes = readRegularFile(logPath, 64 << 20, "a batch log");
    } catch (const std::exception&) {
        return {};
    }
    const QStringList lines = QString::fromUtf8(QByteArray::fromStdString(bytes)).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
        const qsizetype at = it->indexOf(QLatin1String("error: "));
        if (at >= 0)
            return it->mid(at + 7).trimmed().toStdString();
    }
    return lines.isEmpty() ? std::string() : lines.back().trimmed().toStdString();
}

std::vector<BatchRow> batchRows(const std::vector<BatchInput>& inputs, const std::string& outDir)
{
    std::vector<BatchRow> rows;
    for (const BatchInput& in : inputs) {
        BatchRow row;
        row.name = in.name;
        row.file = in.path;
        row.fieldX = in.fieldX;
        row.fieldY = in.fieldY;
        if (!in.error.empty()) {
            row.status = "failed";
            row.error = in.error;
        } else if (const QFileInfo info(QString::fromStdString(in.path)); !info.isFile()) {
            row.status = "failed";
            row.error =
                in.path
                + (info.exists() ? ": " + std::string(info.isDir() ? "is a folder" : "is not a regular file (a FIFO, device or socket)")
                                       + "; give an image file"
                                 : std::string(": input file not found"))
                + (in.source.empty() || in.source == "command line" ? "" : " (" + in.source + ")");
        } else if (const auto result = readCompleteResult(batchResultPath(outDir, in))) {
            const SolverSummary solver = solverSummaryFromJson(*result);
            const Truth coefficients = truthFromJson(*result, QString::fromStdString(in.name));
            row.termination = terminationName(solver.termination);
            row.seconds = solver.seconds;
            row.ordering = zernike::orderingName(coefficients.ordering);
            for (const TruthTerm& t : coefficients.terms)
                row.coefficientsWaves.emplace_back(t.index, t.valueWaves);
            // Keys of the result contract (the command-line contract: rms_waves, strehl, planes[].reduced_chi_square).
            row.rmsWaves = result->value(QStringLiteral("rms_waves")).toDouble(std::nan(""));
            row.strehl = result->value(QStringLiteral("strehl")).toDouble(std::nan(""));
            double sum = 0.0;
            int count = 0;
            for (const QJsonValue& plane : result->value(QStringLiteral("planes")).toArray()) {
                const double chi = plane.toObject().value(QStringLiteral("reduced_chi_square")).toDouble(std::nan(""));
                if (std::isfinite(chi)) {
                    sum += chi;
                    ++count;
                }
            }
            row.reducedChiSquare = count ? sum / count : std::nan("");
            // A fit whose model does not describe its data (the result's verdict) is a row of its own kind: its numbers are
            // kept, and its reason is the verdict.
            const QJsonObject verdict = result->value(QStringLiteral("verdict")).toObject();
            const bool poorFit = verdict.value(QStringLiteral("describes_data")) == QJsonValue(false);
            row.status = solver.termination == Termination::Failed ? "failed" : poorFit ? "poor-fit" : "ok";
            if (row.status == "failed")
                row.error = solver.message;
            else if (poorFit)
                row.error = verdict.value(QStringLiteral("text")).toString().toStdString();
        } else {
            const std::string reason = failureReasonFromLog(batchLogPath(outDir, in));
            row.status = reason.empty() ? "not-run" : "failed";
            row.error = reason.empty() ? "no result in " + batchResultPath(outDir, in) : reason;
        }
        if (row.status != "ok" && row.status != "poor-fit") {
            row.rmsWaves = row.strehl = row.reducedChiSquare = row.seconds = std::nan("");
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

QByteArray batchSummaryCsv(const std::vector<BatchRow>& rows)
{
    // Coefficient columns: every (ordering, index) any row has, ordering by first appearance, index ascending.
    std::vector<std::pair<std::string, int>> columns;
    for (const BatchRow& r : rows)
        for (const auto& [index, value] : r.coefficientsWaves)
            if (std::find(columns.begin(), columns.end(), std::make_pair(r.ordering, index)) == columns.end())
                columns.emplace_back(r.ordering, index);
    std::vector<std::string> orderings;
    for (const auto& column : columns)
        if (std::find(orderings.begin(), orderings.end(), column.first) == orderings.end())
            orderings.push_back(column.first);
    auto rank = [&](const std::string& o) { return std::find(orderings.begin(), orderings.end(), o) - orderings.begin(); };
    std::sort(columns.begin(), columns.end(), [&](const auto& a, const auto& b) {
        return std::make_pair(rank(a.first), a.second) < std::make_pair(rank(b.first), b.second);
    });
    std::string csv = "name,file,field_x,field_y,status,termination,rms_waves,strehl,reduced_chi_square";
    for (const auto& [ordering, index] : columns)
        csv += "," + ordering + "_" + std::to_string(index) + "_waves";
    csv += ",seconds,error\n";
    for (const BatchRow& r : rows) {
        csv += csvField(r.name) + "," + csvField(r.file) + "," + (r.fieldX ? csvNumber(*r.fieldX) : "") + ","
               + (r.fieldY ? csvNumber(*r.fieldY) : "") + "," + r.status + "," + r.termination + "," + csvNumber(r.rmsWaves) + ","
               + csvNumber(r.strehl) + "," + csvNumber(r.reducedChiSquare);
        for (const auto& column : columns) {
            std::string value;
            if (column.first == r.ordering)
                for (const auto& [index, waves] : r.coefficientsWaves)
                    if (index == column.second)
                        value = csvNumber(waves);
            csv += "," + value;
        }
        csv += "," + csvNumber(r.seconds) + "," + csvField(r.error) + "\n";
    }
    return QByteArray::fromStdString(csv);
}

} // namespace wfs
