#include "io/DatasetPlanes.h"
#include "io/ImageReaders.h"
#include "io/OmeXml.h"
#include "base/Units.h"
#include "base/NumberText.h"

#include "fit/ImageStatistics.h"
#include "optics/Problem.h"
#include "optics/Sampling.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <algorithm>
#include <cstring>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <set>
#include <unistd.h>

namespace wfs {

const char* messageLevelName(MessageLevel level)
{
    switch (level) {
    case MessageLevel::Info:
        return "info";
    case MessageLevel::Warning:
        return "warning";
    case MessageLevel::Error:
        return "error";
    }
    return "?";
}

std::string messagesText(const std::vector<DatasetMessage>& messages, MessageLevel level)
{
    std::string text;
    for (const DatasetMessage& m : messages)
        if (m.level == level)
            text += (text.empty() ? "" : "\n") + m.text;
    return text;
}

namespace {

using detail::format;

} // namespace

// ---- Loading ------------------------------------------------------------------------------------

std::string sha256Of(const std::string& path, long long* bytes)
{
    QFile file;
    const int fd = openRegularFile(path); // no blocking open of a FIFO swapped in after the image was read
    if (fd < 0 || !file.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
        if (fd >= 0)
            ::close(fd);
        return {};
    }
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&file);
    if (bytes)
        *bytes = file.size();
    return hash.result().toHex().toStdString();
}

namespace {

// A later source's value for a field that holds another: kept as a conflict for the user to settle.
void noteConflict(DatasetMetadata& m, const std::string& key, double kept, double other, const std::string& origin)
{
    if (std::abs(kept - other) <= 1e-9 * std::max(std::abs(kept), std::abs(other)))
        return;
    for (const DatasetMetadata::Conflict& c : m.conflicts)
        if (c.key == key && c.other == other)
            return;
    const auto from = m.origin.find(key);
    m.conflicts.push_back({key, kept, from != m.origin.end() ? from->second : std::string("an earlier file"), other, origin});
}

// Sets an optional metadata field when it is still unset, recording where the value came from; a
// different value for a set field is a conflict, never a silent choice.
void fill(DatasetMetadata& m, std::optional<double>& field, const char* key, std::optional<double> value, const std::string& origin)
{
    if (!value || !std::isfinite(*value))
        return;
    if (field) {
        noteConflict(m, key, *field, *value, origin);
        return;
    }
    field = value;
    m.origin[key] = origin;
}

// The immersion index has a default (1), so "set" means "has an origin".
void fillImmersion(DatasetMetadata& m, double value, const std::string& origin)
{
    if (m.origin.count("immersionIndex")) {
        noteConflict(m, "immersionIndex", m.immersionIndex, value, origin);
        return;
    }
    m.immersionIndex = value;
    m.origin["immersionIndex"] = origin;
}

std::optional<double> jsonLength(const QJsonValue& v)
{
    if (v.isDouble())
        return v.toDouble();
    if (v.isString())
        return lengthFromText(v.toString().toStdString());
    return std::nullopt;
}

std::optional<double> jsonNumber(const QJsonValue& v)
{
    if (v.isDouble())
        return v.toDouble();
    if (v.isString()) {
        bool ok = false;
        const double d = v.toString().toDouble(&ok);
        if (ok)
            return d;
    }
    return std::nullopt;
}

// The sidecar: "<file>.json", else "<file without its suffix>.json".
std::string findSidecar(const std::string& path)
{
    const QString p = QString::fromStdString(path);
    const QString first = p + QStringLiteral(".json");
    if (QFileInfo(first).isFile())
        return first.toStdString();
    const QFileInfo info(p);
    const QString second = info.dir().filePath(info.completeBaseName() + QStringLiteral(".json"));
    if (info.suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) != 0 && QFileInfo(second).isFile())
        return second.toStdString();
    return {};
}

// A sidecar's JSON object; none (with a warning) when it is unreadable, too large or not an object.
std::optional<QJsonObject> readSidecar(const DatasetFile& f, const std::string& sidecar, std::vector<DatasetMessage>& messages)
{
    std::string bytes;
    try {
        bytes = readRegularFile(sidecar, 4 << 20, "a metadata sidecar (JSON)");
    } catch (const ImageReadError& e) {
        messages.push_back({MessageLevel::Warning, f.path, std::string(e.what()) + "; the metadata sidecar is ignored"});
        return std::nullopt;
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(bytes), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject()) {
        messages.push_back({MessageLevel::Warning, f.path,
                            sidecar + ": metadata sidecar is not a JSON object (" + error.errorString().toStdString() + " at byte "
                                + std::to_string(error.offset) + "); ignored"});
        return std::nullopt;
    }
    // A file of this program's own beside the image (a result from --json, a session) is not metadata: read
    // as a sidecar it would silently feed a fit's settings and numbers to the next fit of the same image.
    const QJsonObject o = doc.object();
    for (const char* outputKey : {"coefficients", "termination", "format_version"})
        if (o.contains(QLatin1String(outputKey))) {
            messages.push_back(
                {MessageLevel::Warning, f.path,
                 sidecar + ": a result or session of this program (it has \"" + outputKey + "\"), not a metadata sidecar; ignored"});
            return std::nullopt;
        }
    return o;
}

// The sidecar's "defocus" list into the file's planes whose defocus is unknown; invalid entries into bad.
void applySidecarDefocus(Dataset& d, const DatasetFile& f, const QJsonArray& list, const std::string& sidecar, const std::string& origin,
                         std::vector<std::string>& bad, std::vector<DatasetMessage>& messages)
{
    if (list.size() != f.planeCount)
        messages.push_back({MessageLevel::Warning, f.path,
                            sidecar + ": \"defocus\" has " + std::to_string(list.size()) + " entries but the file has "
                                + std::to_string(f.planeCount) + " planes; using the first ones"});
    for (int k = 0; k < std::min<int>(int(list.size()), f.planeCount); ++k) {
        const QJsonValue v = list.at(k);
        std::optional<PlaneDefocus> defocus;
        if (v.isDouble())
            defocus = PlaneDefocus{PlaneDefocus::Kind::Waves, v.toDouble()}; // a bare number is waves of W020
        else
            defocus = defocusFromText(v.toString().toStdString());
        if (!defocus) {
            bad.push_back("defocus[" + std::to_string(k) + "]");
            continue;
        }
        DatasetPlane& plane = d.planes[size_t(f.firstPlane + k)];
        if (plane.defocus.kind == PlaneDefocus::Kind::Unknown) {
            plane.defocus = *defocus;
            d.metadata.origin["defocus[" + std::to_string(f.firstPlane + k) + "]"] = origin;
        }
    }
}

// The sidecar's immersion index, defocus model and data unit: each only where no one set it before.
void applySidecarChoices(const QJsonObject& o, DatasetMetadata& m, const std::string& origin, std::vector<std::string>& bad)
{
    if (o.contains(QLatin1String("immersion"))) {
        const auto v = jsonNumber(o.value(QLatin1String("immersion")));
        if (!v || *v < 1.0)
            bad.push_back("immersion");
        else
            fillImmersion(m, *v, origin);
    }
    if (o.contains(QLatin1String("defocus_model")) && !m.origin.count("defocusModel")) {
        const QString model = o.value(QLatin1String("defocus_model")).toString();
        if (model == QLatin1String("high-na"))
            m.defocusModel = DefocusModel::HighNa;
        else if (model == QLatin1String("paraxial"))
            m.defocusModel = DefocusModel::Paraxial;
        else
            bad.push_back("defocus_model");
        m.origin["defocusModel"] = origin;
    }
    if (o.contains(QLatin1String("data_unit")) && m.dataUnit.empty()) {
        m.dataUnit = o.value(QLatin1String("data_unit")).toString().toLower().toStdString();
        m.origin["dataUnit"] = origin;
    }
}

// Reads a sidecar into the unset metadata fields and the file's planes. Problems become messages.
void applySidecar(Dataset& d, int fileIndex, const std::string& sidecar, std::vector<DatasetMessage>& messages)
{
    const DatasetFile& f = d.files[size_t(fileIndex)];
    const std::optional<QJsonObject> object = readSidecar(f, sidecar, messages);
    if (!object)
        return;
    d.files[size_t(fileIndex)].sidecar = sidecar;
    const QJsonObject& o = *object;
    DatasetMetadata& m = d.metadata;
    const std::string origin = QFileInfo(QString::fromStdString(sidecar)).fileName().toStdString();
    std::vector<std::string> bad;
    auto length = [&](const char* key, std::optional<double>& field, const char* name) {
        if (!o.contains(QLatin1String(key)))
            return;
        const auto v = jsonLength(o.value(QLatin1String(key)));
        if (!v || !(*v > 0.0))
            bad.push_back(key);
        else
            fill(m, field, name, v, origin);
    };
    auto number = [&](const char* key, std::optional<double>& field, const char* name) {
        if (!o.contains(QLatin1String(key)))
            return;
        const auto v = jsonNumber(o.value(QLatin1String(key)));
        if (!v)
            bad.push_back(key);
        else
            fill(m, field, name, v, origin);
    };
    length("wavelength", m.wavelength, "wavelength");
    length("pixel_size", m.pixelPitch, "pixelPitch");
    length("pixel_pitch", m.pixelPitch, "pixelPitch");
    length("aperture", m.aperture, "aperture");
    number("f_number", m.fNumber, "fNumber");
    number("na", m.numericalAperture, "numericalAperture");
    number("sampling", m.samplingQ, "samplingQ");
    number("focus_plane", m.focusPlane, "focusPlane");
    number("saturation", m.saturationLevel, "saturationLevel");
    number("read_noise", m.readNoise, "readNoise");
    number("bias", m.cameraOffset, "cameraOffset");
    if (o.contains(QLatin1String("z_step"))) {
        const auto v = jsonLength(o.value(QLatin1String("z_step")));
        if (!v || *v == 0.0)
            bad.push_back("z_step");
        else
            fill(m, m.zStep, "zStep", v, origin);
    }
    if (o.contains(QLatin1String("pixel_angle"))) {
        const QJsonValue v = o.value(QLatin1String("pixel_angle"));
        const auto a = v.isDouble() ? std::optional<double>(v.toDouble()) : angleFromText(v.toString().toStdString());
        if (!a || !(*a > 0.0))
            bad.push_back("pixel_angle");
        else
            fill(m, m.pixelAngle, "pixelAngle", a, origin);
    }
    applySidecarChoices(o, m, origin, bad);
    if (o.contains(QLatin1String("defocus")))
        applySidecarDefocus(d, f, o.value(QLatin1String("defocus")).toArray(), sidecar, origin, bad, messages);
    for (const std::string& key : bad)
        messages.push_back({MessageLevel::Warning, f.path, sidecar + ": \"" + key + "\" is not a valid value; ignored"});
}

// One file's header keywords as metadata values: each with its origin ("a.fits: keyword WAVELENG"), and a keyword
// holding what cannot be used said as a warning and kept for the message that the field is unknown, never
// dropped in silence.
class HeaderKeywords {
public:
    HeaderKeywords(const DatasetFile& f, DatasetMetadata& m, std::vector<DatasetMessage>& messages)
        : m_file(f)
        , m_metadata(m)
        , m_messages(messages)
        , m_name(QFileInfo(QString::fromStdString(f.path)).fileName().toStdString())
    {
    }
    const std::string& fileName() const { return m_name; }
    std::string origin(const char* k) const { return m_name + ": keyword " + k; }
    // A metadata keyword's number; a keyword of the right name holding text is said and ignored (FOCPLANE = 'x').
    std::optional<double> key(const char* k)
    {
        if (const auto it = m_file.numbers.find(k); it != m_file.numbers.end())
            return it->second;
        if (const auto it = m_file.strings.find(k); it != m_file.strings.end())
            ignore(k, "'" + it->second + "' is not a number");
        return std::nullopt;
    }
    // The same for a quantity that must be positive (RDNOISE = -5, SATURATE = 0 are said and ignored).
    std::optional<double> positive(const char* k)
    {
        const std::optional<double> v = key(k);
        if (v && !(*v > 0.0)) {
            ignore(k, format("%.6g", *v) + " is not positive");
            return std::nullopt;
        }
        return v;
    }

private:
    // The metadata field a keyword gives (DEFOCUSk and DEFOCZk: the plane's defocus).
    std::string fieldOf(const std::string& k) const
    {
        static const std::map<std::string, std::string> fields = {
            {"WAVELENG", "wavelength"},    {"SAMPLING", "samplingQ"},       {"PIXPITCH", "pixelPitch"},
            {"XPIXSZ", "pixelPitch"},      {"FOCRATIO", "fNumber"},         {"NA", "numericalAperture"},
            {"APTDIA", "aperture"},        {"PIXSCALE", "pixelAngle"},      {"ZSTEP", "zStep"},
            {"FOCPLANE", "focusPlane"},    {"SATURATE", "saturationLevel"}, {"RDNOISE", "readNoise"},
            {"IMMERSN", "immersionIndex"}, {"BIAS", "cameraOffset"}};
        if (const auto it = fields.find(k); it != fields.end())
            return it->second;
        for (const char* prefix : {"DEFOCUS", "DEFOCZ"})
            if (k.rfind(prefix, 0) == 0 && k.size() > std::strlen(prefix))
                return "defocus[" + std::to_string(m_file.firstPlane + std::atoi(k.c_str() + std::strlen(prefix)) - 1) + "]";
        return k;
    }
    void ignore(const char* k, const std::string& why)
    {
        m_metadata.ignored.emplace(fieldOf(k), origin(k) + " = " + why);
        m_messages.push_back({MessageLevel::Warning, m_file.path, origin(k) + " = " + why + "; ignored"});
    }

    const DatasetFile& m_file;
    DatasetMetadata& m_metadata;
    std::vector<DatasetMessage>& m_messages;
    std::string m_name;
};

// The FITS keywords of the optics, the camera and the data (README "Metadata" lists the same), into unset fields.
void applyFitsKeywords(DatasetMetadata& m, const DatasetFile& f, HeaderKeywords& h)
{
    fill(m, m.wavelength, "wavelength", h.positive("WAVELENG"), h.origin("WAVELENG"));
    fill(m, m.samplingQ, "samplingQ", h.positive("SAMPLING"), h.origin("SAMPLING"));
    fill(m, m.pixelPitch, "pixelPitch", h.positive("PIXPITCH"), h.origin("PIXPITCH"));
    if (auto um = h.positive("XPIXSZ"))
        fill(m, m.pixelPitch, "pixelPitch", *um * 1e-6, h.origin("XPIXSZ"));
    fill(m, m.fNumber, "fNumber", h.positive("FOCRATIO"), h.origin("FOCRATIO"));
    fill(m, m.numericalAperture, "numericalAperture", h.positive("NA"), h.origin("NA"));
    if (auto mm = h.positive("APTDIA"))
        fill(m, m.aperture, "aperture", *mm * 1e-3, h.origin("APTDIA"));
    if (auto arcsec = h.positive("PIXSCALE"))
        fill(m, m.pixelAngle, "pixelAngle", *arcsec * M_PI / (180.0 * 3600.0), h.origin("PIXSCALE"));
    fill(m, m.zStep, "zStep", h.key("ZSTEP"), h.origin("ZSTEP"));
    fill(m, m.focusPlane, "focusPlane", h.key("FOCPLANE"), h.origin("FOCPLANE"));
    fill(m, m.saturationLevel, "saturationLevel", h.positive("SATURATE"), h.origin("SATURATE"));
    fill(m, m.readNoise, "readNoise", h.positive("RDNOISE"), h.origin("RDNOISE"));
    fill(m, m.cameraOffset, "cameraOffset", h.key("BIAS"), h.origin("BIAS"));
    if (auto n = h.key("IMMERSN"); n && *n >= 1.0)
        fillImmersion(m, *n, h.origin("IMMERSN"));
    if (auto it = f.strings.find("DEFMODEL"); it != f.strings.end() && !m.origin.count("defocusModel")) {
        if (it->second == "high-na" || it->second == "paraxial") {
            m.defocusModel = it->second == "high-na" ? DefocusModel::HighNa : DefocusModel::Paraxial;
            m.origin["defocusModel"] = h.origin("DEFMODEL");
        }
    }
    if (auto it = f.strings.find("BUNIT"); it != f.strings.end() && m.dataUnit.empty()) {
        std::string unit = it->second;
        std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        m.dataUnit = unit;
        m.origin["dataUnit"] = h.origin("BUNIT");
    }
}

// DEFOCUSk (waves) or DEFOCZk (metres): the defocus of the file's plane k (1-based), where the plane has none yet.
void applyFitsPlaneDefocus(Dataset& d, const DatasetFile& f, HeaderKeywords& h)
{
    for (int k = 0; k < f.planeCount; ++k) {
        DatasetPlane& plane = d.planes[size_t(f.firstPlane + k)];
        if (plane.defocus.kind != PlaneDefocus::Kind::Unknown)
            continue;
        const std::string waves = "DEFOCUS" + std::to_string(k + 1), axial = "DEFOCZ" + std::to_string(k + 1);
        if (auto v = h.key(waves.c_str())) {
            plane.defocus = {PlaneDefocus::Kind::Waves, *v};
            d.metadata.origin["defocus[" + std::to_string(f.firstPlane + k) + "]"] = h.origin(waves.c_str());
        } else if (auto z = h.key(axial.c_str())) {
            plane.defocus = {PlaneDefocus::Kind::Length, *z};
            d.metadata.origin["defocus[" + std::to_string(f.firstPlane + k) + "]"] = h.origin(axial.c_str());
        }
    }
}

// ImageJ writes "ImageJ=...\nspacing=0.3\nunit=micron\n" and the pixel size as 1 / XResolution.
void applyImageJDescription(DatasetMetadata& m, const DatasetFile& f, const std::string& name)
{
    const auto it = f.strings.find("ImageDescription");
    if (it == f.strings.end() || it->second.rfind("ImageJ=", 0) != 0)
        return;
    std::map<std::string, std::string> values;
    size_t start = 0;
    const std::string& text = it->second;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos)
            end = text.size();
        const std::string line = text.substr(start, end - start);
        const size_t eq = line.find('=');
        if (eq != std::string::npos)
            values[line.substr(0, eq)] = line.substr(eq + 1);
        start = end + 1;
    }
    double unitScale = 0.0;
    const std::string unit = values.count("unit") ? values["unit"] : std::string();
    if (unit == "micron" || unit == "um" || unit == "\\u00B5m" || unit == "\xc2\xb5m")
        unitScale = 1e-6;
    else if (unit == "nm")
        unitScale = 1e-9;
    else if (unit == "mm")
        unitScale = 1e-3;
    if (unitScale == 0.0)
        return;
    const std::string from = name + ": ImageJ description";
    if (values.count("spacing") && f.planeCount > 1) {
        const double spacing = std::atof(values["spacing"].c_str());
        if (spacing > 0.0)
            fill(m, m.zStep, "zStep", spacing * unitScale, from);
    }
    if (auto xres = f.numbers.find("XResolution"); xres != f.numbers.end() && xres->second > 0.0)
        fill(m, m.pixelPitch, "pixelPitch", unitScale / xres->second, from);
}

// An OME-TIFF's OME-XML description (io/OmeXml.h): the pixel size, z step, emission wavelength, objective NA and
// immersion index, each with its origin ("a.ome.tif: OME-XML PhysicalSizeZ"). A value that cannot be used is said
// and kept for the message that the field is unknown; a malformed document is said and ignored as a whole. Returns
// the fields it gave.
std::set<std::string> applyOmeXml(DatasetMetadata& m, const DatasetFile& f, const std::string& name, std::vector<DatasetMessage>& messages)
{
    const auto it = f.strings.find("ImageDescription");
    if (it == f.strings.end() || !looksLikeOmeXml(it->second))
        return {};
    const OmeOptics ome = readOmeXml(it->second);
    if (!ome.malformed.empty()) {
        messages.push_back(
            {MessageLevel::Warning, f.path, name + ": the OME-XML is malformed (" + ome.malformed + "); its metadata are ignored"});
        return {};
    }
    if (!ome.isOme)
        return {};
    std::set<std::string> given;
    auto put = [&](std::optional<double>& field, const char* key, const std::optional<OmeValue>& v) {
        if (!v)
            return;
        fill(m, field, key, v->value, name + ": OME-XML " + v->attribute);
        given.insert(key);
    };
    put(m.pixelPitch, "pixelPitch", ome.pixelPitch);
    if (f.planeCount > 1) // a single plane has no z step, whatever the Pixels say
        put(m.zStep, "zStep", ome.zStep);
    put(m.wavelength, "wavelength", ome.wavelength);
    put(m.numericalAperture, "numericalAperture", ome.numericalAperture);
    if (ome.immersionIndex) {
        fillImmersion(m, ome.immersionIndex->value, name + ": OME-XML " + ome.immersionIndex->attribute);
        given.insert("immersionIndex");
    }
    for (const OmeNote& note : ome.notes) {
        if (!note.field.empty()) {
            m.ignored.emplace(note.field, name + ": " + note.text);
            messages.push_back({MessageLevel::Warning, f.path, name + ": " + note.text + "; the value is not used"});
        } else {
            messages.push_back({MessageLevel::Warning, f.path, name + ": " + note.text});
        }
    }
    if (!ome.companionFile.empty())
        messages.push_back({MessageLevel::Warning, f.path,
                            name + ": the OME-XML is in the companion file " + ome.companionFile
                                + ", which this program does not read; give the pixel size, z step and optics as settings"});
    return given;
}

// A Micro-Manager JSON number: Micro-Manager 1.4 writes numbers as text ("0.108").
std::optional<double> micromanagerNumber(const QJsonObject& o, const char* key)
{
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined() || v.isNull())
        return std::nullopt;
    const std::optional<double> n = jsonNumber(v);
    return n && std::isfinite(*n) ? n : std::nullopt;
}

// Micro-Manager's own metadata (io/ImageReaders.h: MicroManagerSummary, MicroManagerMetadata): the pixel size
// (PixelSizeUm per image, PixelSize_um in the summary) and the z step (z-step_um), in micrometres. They repeat what
// Micro-Manager's OME-XML of the same file says, so a field the OME-XML gave (`fromOme`), or the image metadata
// before the summary, is left to it: two copies of one number written by one program are not two sources.
// Micro-Manager writes 0 for "not calibrated" and "no z stack": such values are no values.
void applyMicroManager(DatasetMetadata& m, const DatasetFile& f, const std::string& name, const std::set<std::string>& fromOme,
                       std::vector<DatasetMessage>& messages)
{
    std::set<std::string> given = fromOme;
    struct Source {
        const char* key;   // in DatasetFile::strings
        const char* label; // in the origin
    };
    for (const Source& source :
         {Source{"MicroManagerMetadata", "Micro-Manager image metadata"}, Source{"MicroManagerSummary", "Micro-Manager summary"}}) {
        const auto it = f.strings.find(source.key);
        if (it == f.strings.end())
            continue;
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(it->second), &error);
        if (error.error != QJsonParseError::NoError || !doc.isObject()) {
            messages.push_back({MessageLevel::Warning, f.path,
                                name + ": the " + source.label + " is not a JSON object (" + error.errorString().toStdString() + " at byte "
                                    + std::to_string(error.offset) + "); ignored"});
            continue;
        }
        // Micro-Manager 1.4 nests the summary in each image's metadata as "Summary".
        QJsonObject o = doc.object();
        const QJsonObject nested = o.value(QLatin1String("Summary")).toObject();
        for (auto k = nested.begin(); k != nested.end(); ++k)
            if (!o.contains(k.key()))
                o.insert(k.key(), k.value());
        const std::string from = name + ": " + source.label + " ";
        if (!given.count("pixelPitch"))
            for (const char* key : {"PixelSizeUm", "PixelSize_um"})
                if (const auto um = micromanagerNumber(o, key); um && *um > 0.0) {
                    fill(m, m.pixelPitch, "pixelPitch", *um * 1e-6, from + key);
                    given.insert("pixelPitch");
                    break;
                }
        // The sign stays: a negative step is a stack recorded downwards, as a sidecar's or ZSTEP's would be.
        if (!given.count("zStep") && f.planeCount > 1)
            if (const auto um = micromanagerNumber(o, "z-step_um"); um && *um != 0.0) {
                fill(m, m.zStep, "zStep", *um * 1e-6, from + "z-step_um");
                given.insert("zStep");
            }
    }
}

// FITS keywords, ImageJ descriptions, TIFF resolution, OME-XML and Micro-Manager's metadata into unset metadata fields.
void applyHeaders(Dataset& d, int fileIndex, std::vector<DatasetMessage>& messages)
{
    const DatasetFile& f = d.files[size_t(fileIndex)];
    HeaderKeywords keywords(f, d.metadata, messages);
    if (f.format == ImageFormat::Fits) {
        applyFitsKeywords(d.metadata, f, keywords);
        applyFitsPlaneDefocus(d, f, keywords);
    }
    if (f.format == ImageFormat::Tiff) {
        applyImageJDescription(d.metadata, f, keywords.fileName());
        const std::set<std::string> fromOme = applyOmeXml(d.metadata, f, keywords.fileName(), messages);
        applyMicroManager(d.metadata, f, keywords.fileName(), fromOme, messages);
    }
}

// The acquisition log some microscopes write beside a stack, "<name>_settings.txt" (e.g. the lattice
// light-sheet software's "***** Waveform *****" section): the stage that moved along z ("Z motion :
// Sample piezo") and, per stage, "S PZT Offset, Interval (um), # of Pixels for Excitation (0) :
// <offset> <interval> <count>". The interval is the z step when the count equals the file's planes.
std::string findInstrumentLog(const std::string& path)
{
    const QFileInfo info(QString::fromStdString(path));
    for (const char* suffix : {"_settings.txt", "_Settings.txt"}) {
        const QString candidate = info.dir().filePath(info.completeBaseName() + QLatin1String(suffix));
        if (QFileInfo(candidate).isFile())
            return candidate.toStdString();
    }
    return {};
}

void applyInstrumentLog(Dataset& d, int fileIndex, const std::string& log, std::vector<DatasetMessage>& messages)
{
    const DatasetFile& f = d.files[size_t(fileIndex)];
    std::string bytes;
    try {
        bytes = readRegularFile(log, 4 << 20, "an acquisition log");
    } catch (const ImageReadError& e) {
        messages.push_back({MessageLevel::Warning, f.path, std::string(e.what()) + "; the acquisition log is ignored"});
        return;
    }
    const QStringList lines = QString::fromLatin1(QByteArray::fromStdString(bytes)).split(QLatin1Char('\n'));
    QString stage;
    for (const QString& line : lines)
        if (line.startsWith(QLatin1String("Z motion"))) {
            const QString motion = line.section(QLatin1Char(':'), 1).trimmed().toLower();
            stage = motion.startsWith(QLatin1String("sample")) ? QStringLiteral("S PZT")
                    : motion.contains(QLatin1String("galvo"))  ? QStringLiteral("Z Galvo")
                    : motion.contains(QLatin1String("piezo"))  ? QStringLiteral("Z PZT")
                                                               : QString();
        }
    if (stage.isEmpty())
        return;
    const QString name = QFileInfo(QString::fromStdString(log)).fileName();
    for (const QString& line : lines) {
        if (!line.startsWith(stage + QLatin1String(" Offset, Interval (um)")))
            continue;
        const QStringList numbers = line.section(QLatin1Char(':'), 1).split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
        bool okStep = false, okCount = false;
        const double interval = numbers.size() == 3 ? numbers[1].toDouble(&okStep) : 0.0;
        const int count = numbers.size() == 3 ? numbers[2].toInt(&okCount) : 0;
        if (okStep && okCount && interval != 0.0 && count == f.planeCount)
            fill(d.metadata, d.metadata.zStep, "zStep", interval * 1e-6, name.toStdString() + ": " + stage.toStdString() + " interval");
        return;
    }
}

std::string bitDescription(const ImageFileContent& c)
{
    if (c.floatingPoint)
        return std::to_string(c.bitsPerSample) + "-bit float";
    return std::to_string(c.bitsPerSample) + "-bit";
}

// Leaves out of the fit a plane that holds nothing usable (unusablePlaneReason).
void excludeUnusable(DatasetPlane& plane, const std::string& path, std::vector<DatasetMessage>& messages)
{
    if (const std::string reason = unusablePlaneReason(plane.raw.pixels); !reason.empty()) {
        plane.use = false;
        messages.push_back({MessageLevel::Warning, path, plane.raw.source + ": " + reason + "; the plane does not take part"});
    }
}

} // namespace

std::string unusablePlaneReason(const std::vector<double>& pixels)
{
    size_t finite = 0, nonZero = 0;
    double largest = 0.0, sum = 0.0;
    for (double v : pixels) {
        if (!std::isfinite(v))
            continue;
        ++finite;
        nonZero += v != 0.0 ? 1 : 0;
        largest = std::max(largest, std::abs(v));
        sum += v;
    }
    if (largest > kLargestPixel) // finite, but squares and sums of such values overflow in the preparation and the fit
        return "pixel values reach " + format("%.3g", largest) + ": values too large to fit (at most " + format("%.0e", kLargestPixel)
               + " in magnitude); scale the data down";
    if (finite == 0)
        return "every pixel is NaN or blank";
    if (nonZero == 0)
        return "the plane is all zero";
    if (largest < kSmallestPixel) // their squares underflow: the cost is 0 whatever the model, a "perfect" fit
        return "pixel values are at most " + format("%.3g", largest) + " in magnitude, below what can be fitted (at least "
               + format("%.0e", kSmallestPixel) + "); check the file's scaling (BSCALE) or scale the data up";
    if (sum <= 0.0)
        return "the pixels sum to " + format("%.4g", sum)
               + ": an intensity image sums to a positive total; check the file's scaling (a negative BSCALE) or the data";
    return {};
}

std::vector<std::pair<std::string, std::optional<double>>> metadataNumbers(const DatasetMetadata& m)
{
    return {{"wavelength", m.wavelength},
            {"pixelPitch", m.pixelPitch},
            {"pixelAngle", m.pixelAngle},
            {"fNumber", m.fNumber},
            {"numericalAperture", m.numericalAperture},
            {"aperture", m.aperture},
            {"samplingQ", m.samplingQ},
            {"zStep", m.zStep},
            {"focusPlane", m.focusPlane},
            {"saturationLevel", m.saturationLevel},
            {"readNoise", m.readNoise}};
}

std::string ignoredNote(const DatasetMetadata& metadata, std::initializer_list<std::string> fields)
{
    std::string note;
    for (const std::string& field : fields)
        if (const auto it = metadata.ignored.find(field); it != metadata.ignored.end())
            note += "; " + it->second + " (ignored)";
    return note;
}

std::vector<std::string> metadataFilesBeside(const std::string& imagePath)
{
    std::vector<std::string> files;
    for (const std::string& path : {findSidecar(imagePath), findInstrumentLog(imagePath)})
        if (!path.empty())
            files.push_back(path);
    return files;
}

namespace {

// A single-file OME-TIFF declares its page count in its OME-XML (SizeZ x SizeC x SizeT, every image together), as
// ImageJ's "images=" (which io/TiffReader.cpp checks): a file holding fewer is cut short or still being written, and
// that is damage. Empty when complete, or when the document describes a dataset over several files (io/OmeXml.h).
std::string omePlanesMissing(const ImageFileContent& content, const std::string& name)
{
    const auto it = content.strings.find("ImageDescription");
    if (content.format != ImageFormat::Tiff || it == content.strings.end() || !looksLikeOmeXml(it->second))
        return {};
    const OmeOptics ome = readOmeXml(it->second);
    if (!ome.malformed.empty() || !ome.declaredPlanes || ome.refersToOtherFiles || !ome.companionFile.empty()
        || *ome.declaredPlanes <= double(content.planes.size()))
        return {};
    const std::string held = std::to_string(content.planes.size());
    char declared[32];
    std::snprintf(declared, sizeof declared, "%.15g", *ome.declaredPlanes);
    return name + ": its OME-XML declares " + declared + " planes (SizeZ x SizeC x SizeT) and the file holds " + held
           + " page(s); it is cut short or still being written; kept the " + held + " page(s) it holds";
}

// Appends one file's planes (read from disk or handed over in memory as `path`) with their messages; returns the
// file's index. Planes of another size than the dataset's first stay loaded, not taking part.
int appendContent(Dataset& dataset, ImageFileContent& content, DatasetFile file, std::vector<DatasetMessage>& messages)
{
    const std::string path = file.path;
    file.format = content.format;
    file.firstPlane = int(dataset.planes.size());
    file.planeCount = int(content.planes.size());
    file.numbers = content.numbers;
    file.strings = content.strings;
    file.bitsPerSample = content.bitsPerSample;
    file.damage = content.damage.empty() ? omePlanesMissing(content, path) : content.damage;
    if (file.damage != content.damage)
        content.warnings.push_back(file.damage);
    file.floatingPoint = content.floatingPoint;
    const int fileIndex = int(dataset.files.size());
    const Image& first = content.planes.front();
    messages.push_back(
        {MessageLevel::Info, path,
         path + ": " + imageFormatName(content.format) + ", " + std::to_string(content.planes.size()) + " plane(s) of "
             + std::to_string(first.width) + " x " + std::to_string(first.height) + ", " + bitDescription(content) + " -> dataset plane(s) "
             + std::to_string(file.firstPlane)
             + (content.planes.size() > 1 ? ".." + std::to_string(file.firstPlane + int(content.planes.size()) - 1) : std::string())});
    for (const std::string& w : content.warnings)
        messages.push_back({MessageLevel::Warning, path, w});
    for (size_t k = 0; k < content.planes.size(); ++k) {
        DatasetPlane plane;
        plane.raw = std::move(content.planes[k]);
        plane.file = fileIndex;
        plane.indexInFile = int(k);
        plane.formatMaximum = content.formatMaximum;
        if (!plane.raw.pixels.empty()) // a header-only read (ReadLimits::headersOnly) has none to judge
            excludeUnusable(plane, path, messages);
        dataset.planes.push_back(std::move(plane));
    }
    dataset.files.push_back(std::move(file));
    // Planes of another size than the dataset's first cannot be fitted with it (unless a crop makes
    // them equal): they stay loaded, not taking part.
    const Image& ref = dataset.planes.front().raw;
    int differing = 0, differingWidth = 0, differingHeight = 0;
    for (int k = dataset.files.back().firstPlane; k < int(dataset.planes.size()); ++k) {
        DatasetPlane& plane = dataset.planes[size_t(k)];
        if ((plane.raw.width != ref.width || plane.raw.height != ref.height) && plane.use) {
            plane.use = false;
            if (differing++ == 0) {
                differingWidth = plane.raw.width;
                differingHeight = plane.raw.height;
            }
        }
    }
    if (differing > 0)
        messages.push_back({MessageLevel::Warning, path,
                            path + ": " + std::to_string(differing) + " plane(s) of " + std::to_string(differingWidth) + " x "
                                + std::to_string(differingHeight) + (differing > 1 ? " (the first of them)" : "")
                                + " differ in size from dataset plane 0 (" + std::to_string(ref.width) + " x " + std::to_string(ref.height)
                                + "); they do not take part unless selected with a crop that makes them equal"});
    return fileIndex;
}

// The conflicts found since `knownConflicts`, said as warnings about `path`.
void warnConflicts(const DatasetMetadata& metadata, size_t knownConflicts, const std::string& path, std::vector<DatasetMessage>& messages)
{
    for (size_t k = knownConflicts; k < metadata.conflicts.size(); ++k) {
        const DatasetMetadata::Conflict& c = metadata.conflicts[k];
        messages.push_back({MessageLevel::Warning, path,
                            path + ": " + c.key + " is " + format("%.6g", c.kept) + " (" + c.keptOrigin + ") but " + format("%.6g", c.other)
                                + " (" + c.otherOrigin + "); keeping " + format("%.6g", c.kept) + " -- check which is right"});
    }
}

} // namespace

std::vector<DatasetMessage> addFiles(Dataset& dataset, const std::vector<std::string>& paths, const ReadLimits& limits)
{
    std::vector<DatasetMessage> messages;
    for (const std::string& path : paths) {
        ImageFileContent content;
        try {
            content = readImageFile(path, limits);
        } catch (const std::bad_alloc&) {
            messages.push_back({MessageLevel::Error, path,
                                path
                                    + ": not enough memory to read it (the process's memory limit, ulimit -v, or the machine's); crop it "
                                      "or raise the limit"});
            continue;
        } catch (const std::exception& e) {
            messages.push_back({MessageLevel::Error, path, e.what()});
            continue;
        } catch (...) {
            messages.push_back({MessageLevel::Error, path, path + ": unreadable (unknown error)"});
            continue;
        }
        DatasetFile file;
        file.path = path;
        if (!limits.headersOnly)
            file.sha256 = sha256Of(path, &file.bytes);
        const int fileIndex = appendContent(dataset, content, std::move(file), messages);
        const size_t knownConflicts = dataset.metadata.conflicts.size();
        const std::string sidecar = findSidecar(path);
        if (!sidecar.empty())
            applySidecar(dataset, fileIndex, sidecar, messages);
        if (const std::string log = findInstrumentLog(path); !log.empty())
            applyInstrumentLog(dataset, fileIndex, log, messages);
        applyHeaders(dataset, fileIndex, messages);
        warnConflicts(dataset.metadata, knownConflicts, path, messages);
    }
    dataset.preparation.reset();
    return messages;
}

std::vector<DatasetMessage> addImages(Dataset& dataset, ImageFileContent content, const std::string& name)
{
    std::vector<DatasetMessage> messages;
    if (content.planes.empty())
        throw DatasetError(name + ": no image planes");
    for (const Image& plane : content.planes)
        if (plane.isEmpty() || plane.pixels.size() != size_t(plane.width) * size_t(plane.height))
            throw DatasetError(name + ": a plane of " + std::to_string(plane.width) + " x " + std::to_string(plane.height)
                               + " pixels holds " + std::to_string(plane.pixels.size()) + " values");
    DatasetFile file;
    file.path = name;
    const int fileIndex = appendContent(dataset, content, std::move(file), messages);
    const size_t knownConflicts = dataset.metadata.conflicts.size();
    applyHeaders(dataset, fileIndex, messages);
    warnConflicts(dataset.metadata, knownConflicts, name, messages);
    dataset.preparation.reset();
    return messages;
}

void removeFile(Dataset& dataset, int fileIndex)
{
    if (fileIndex < 0 || fileIndex >= int(dataset.files.size()))
        return;
    const DatasetFile removed = dataset.files[size_t(fileIndex)];
    dataset.planes.erase(dataset.planes.begin() + removed.firstPlane, dataset.planes.begin() + removed.firstPlane + removed.planeCount);
    dataset.files.erase(dataset.files.begin() + fileIndex);
    for (DatasetFile& f : dataset.files)
        if (f.firstPlane > removed.firstPlane)
            f.firstPlane -= removed.planeCount;
    for (DatasetPlane& p : dataset.planes)
        if (p.file > fileIndex)
            --p.file;
    dataset.preparation.reset();
}

void selectPlanes(Dataset& dataset, const std::vector<int>& planeIndices)
{
    for (int index : planeIndices)
        if (index < 0 || index >= int(dataset.planes.size()))
            throw DatasetError("plane " + std::to_string(index) + " does not exist (the data have " + std::to_string(dataset.planes.size())
                               + " planes, numbered from 0)");
    for (size_t k = 0; k < planeIndices.size(); ++k)
        if (std::find(planeIndices.begin(), planeIndices.begin() + std::ptrdiff_t(k), planeIndices[k])
            != planeIndices.begin() + std::ptrdiff_t(k))
            throw DatasetError("plane " + std::to_string(planeIndices[k]) + " is listed twice (a plane takes part once)");
    for (DatasetPlane& p : dataset.planes)
        p.use = false;
    for (int index : planeIndices)
        dataset.planes[size_t(index)].use = true;
    dataset.planesChosen = true;
}

void requireWholeFiles(const Dataset& dataset, const std::string& howToChoose)
{
    for (const DatasetFile& f : dataset.files)
        if (!f.damage.empty())
            throw IncompleteFileError(
                f.damage + ": the planes left are not the stack the file holds; repair the file, or fit the planes left on purpose ("
                + howToChoose + ")");
}

std::vector<int> usedPlanes(const Dataset& dataset)
{
    std::vector<int> used;
    for (size_t k = 0; k < dataset.planes.size(); ++k)
        if (dataset.planes[k].use)
            used.push_back(int(k));
    return used;
}

PlaneDefocus planeDefocus(const Dataset& dataset, int planeIndex)
{
    const DatasetPlane& plane = dataset.planes.at(size_t(planeIndex));
    if (plane.defocus.kind != PlaneDefocus::Kind::Unknown)
        return plane.defocus;
    if (dataset.metadata.zStep)
        return {PlaneDefocus::Kind::Length, (dataset.metadata.zIndexDown ? -1.0 : 1.0)
                                                * (planeIndex - dataset.metadata.focusPlane.value_or(0.0)) * *dataset.metadata.zStep};
    return {};
}

bool isZStack(const Dataset& dataset)
{
    if (!dataset.metadata.zStep)
        return false;
    return std::any_of(dataset.planes.begin(), dataset.planes.end(),
                       [](const DatasetPlane& p) { return p.use && p.defocus.kind == PlaneDefocus::Kind::Unknown; });
}

std::optional<PlaneDefocus> defocusFromText(const std::string& text)
{
    const auto v = valueFromText(text);
    if (!v)
        return std::nullopt;
    switch (v->kind) {
    case ValueWithUnit::Kind::Waves:
        return PlaneDefocus{PlaneDefocus::Kind::Waves, v->value};
    case ValueWithUnit::Kind::Length:
        return PlaneDefocus{PlaneDefocus::Kind::Length, v->value};
    case ValueWithUnit::Kind::Bare:
        if (v->value == 0.0)
            return PlaneDefocus{PlaneDefocus::Kind::Waves, 0.0}; // "0" is in focus whatever the unit
        return std::nullopt;                                     // waves or metres? ambiguous
    case ValueWithUnit::Kind::Angle:
        break;
    }
    return std::nullopt;
}

} // namespace wfs
