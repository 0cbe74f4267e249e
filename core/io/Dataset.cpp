#include "io/Dataset.h"

#include "optics/Problem.h"
#include "optics/Sampling.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>

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

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Larger pixel values overflow when squared and summed (a cost, a centroid).
constexpr double kLargestPixel = 1e150;

std::string format(const char* fmt, double value)
{
    char text[64];
    std::snprintf(text, sizeof text, fmt, value);
    return text;
}

} // namespace

// ---- Loading ------------------------------------------------------------------------------------

namespace {

std::string sha256Of(const std::string& path, long long* bytes)
{
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(&file);
    if (bytes)
        *bytes = file.size();
    return hash.result().toHex().toStdString();
}

// Sets an optional metadata field when it is still unset, recording where the value came from.
void fill(DatasetMetadata& m, std::optional<double>& field, const char* key, std::optional<double> value, const std::string& origin)
{
    if (field || !value || !std::isfinite(*value))
        return;
    field = value;
    m.origin[key] = origin;
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

// Reads a sidecar into the unset metadata fields and the file's planes. Problems become messages.
void applySidecar(Dataset& d, int fileIndex, const std::string& sidecar, std::vector<DatasetMessage>& messages)
{
    const DatasetFile& f = d.files[size_t(fileIndex)];
    QFile file(QString::fromStdString(sidecar));
    if (!file.open(QIODevice::ReadOnly) || file.size() > (4 << 20)) {
        messages.push_back({MessageLevel::Warning, f.path, sidecar + ": metadata sidecar unreadable or too large; ignored"});
        return;
    }
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject()) {
        messages.push_back({MessageLevel::Warning, f.path,
                            sidecar + ": metadata sidecar is not a JSON object (" + error.errorString().toStdString() + " at byte "
                                + std::to_string(error.offset) + "); ignored"});
        return;
    }
    d.files[size_t(fileIndex)].sidecar = sidecar;
    const QJsonObject o = doc.object();
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
    if (o.contains(QLatin1String("immersion")) && !m.origin.count("immersionIndex")) {
        const auto v = jsonNumber(o.value(QLatin1String("immersion")));
        if (!v || *v < 1.0)
            bad.push_back("immersion");
        else {
            m.immersionIndex = *v;
            m.origin["immersionIndex"] = origin;
        }
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
    if (o.contains(QLatin1String("defocus"))) {
        const QJsonArray list = o.value(QLatin1String("defocus")).toArray();
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
                m.origin["defocus[" + std::to_string(f.firstPlane + k) + "]"] = origin;
            }
        }
    }
    for (const std::string& key : bad)
        messages.push_back({MessageLevel::Warning, f.path, sidecar + ": \"" + key + "\" is not a valid value; ignored"});
}

// FITS keywords, ImageJ descriptions and TIFF resolution into unset metadata fields.
void applyHeaders(Dataset& d, int fileIndex)
{
    const DatasetFile& f = d.files[size_t(fileIndex)];
    DatasetMetadata& m = d.metadata;
    const std::string name = QFileInfo(QString::fromStdString(f.path)).fileName().toStdString();
    auto key = [&](const char* k) -> std::optional<double> {
        const auto it = f.numbers.find(k);
        return it == f.numbers.end() ? std::nullopt : std::optional<double>(it->second);
    };
    auto origin = [&](const char* k) { return name + ": keyword " + k; };
    auto positive = [](std::optional<double> v) { return v && *v > 0.0 ? v : std::nullopt; };
    if (f.format == ImageFormat::Fits) {
        fill(m, m.wavelength, "wavelength", positive(key("WAVELENG")), origin("WAVELENG"));
        fill(m, m.samplingQ, "samplingQ", positive(key("SAMPLING")), origin("SAMPLING"));
        fill(m, m.pixelPitch, "pixelPitch", positive(key("PIXPITCH")), origin("PIXPITCH"));
        if (auto um = positive(key("XPIXSZ")))
            fill(m, m.pixelPitch, "pixelPitch", *um * 1e-6, origin("XPIXSZ"));
        fill(m, m.fNumber, "fNumber", positive(key("FOCRATIO")), origin("FOCRATIO"));
        fill(m, m.numericalAperture, "numericalAperture", positive(key("NA")), origin("NA"));
        if (auto mm = positive(key("APTDIA")))
            fill(m, m.aperture, "aperture", *mm * 1e-3, origin("APTDIA"));
        if (auto arcsec = positive(key("PIXSCALE")))
            fill(m, m.pixelAngle, "pixelAngle", *arcsec * M_PI / (180.0 * 3600.0), origin("PIXSCALE"));
        fill(m, m.zStep, "zStep", key("ZSTEP"), origin("ZSTEP"));
        fill(m, m.focusPlane, "focusPlane", key("FOCPLANE"), origin("FOCPLANE"));
        fill(m, m.saturationLevel, "saturationLevel", positive(key("SATURATE")), origin("SATURATE"));
        if (auto n = key("IMMERSN"); n && *n >= 1.0 && !m.origin.count("immersionIndex")) {
            m.immersionIndex = *n;
            m.origin["immersionIndex"] = origin("IMMERSN");
        }
        if (auto it = f.strings.find("DEFMODEL"); it != f.strings.end() && !m.origin.count("defocusModel")) {
            if (it->second == "high-na" || it->second == "paraxial") {
                m.defocusModel = it->second == "high-na" ? DefocusModel::HighNa : DefocusModel::Paraxial;
                m.origin["defocusModel"] = origin("DEFMODEL");
            }
        }
        if (auto it = f.strings.find("BUNIT"); it != f.strings.end() && m.dataUnit.empty()) {
            std::string unit = it->second;
            std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return char(std::tolower(c)); });
            m.dataUnit = unit;
            m.origin["dataUnit"] = origin("BUNIT");
        }
        for (int k = 0; k < f.planeCount; ++k) {
            DatasetPlane& plane = d.planes[size_t(f.firstPlane + k)];
            if (plane.defocus.kind != PlaneDefocus::Kind::Unknown)
                continue;
            const std::string waves = "DEFOCUS" + std::to_string(k + 1), axial = "DEFOCZ" + std::to_string(k + 1);
            if (auto v = key(waves.c_str())) {
                plane.defocus = {PlaneDefocus::Kind::Waves, *v};
                m.origin["defocus[" + std::to_string(f.firstPlane + k) + "]"] = origin(waves.c_str());
            } else if (auto z = key(axial.c_str())) {
                plane.defocus = {PlaneDefocus::Kind::Length, *z};
                m.origin["defocus[" + std::to_string(f.firstPlane + k) + "]"] = origin(axial.c_str());
            }
        }
    }
    if (f.format == ImageFormat::Tiff) {
        // ImageJ writes "ImageJ=...\nspacing=0.3\nunit=micron\n" and the pixel size as 1 / XResolution.
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
}

std::string bitDescription(const ImageFileContent& c)
{
    if (c.floatingPoint)
        return std::to_string(c.bitsPerSample) + "-bit float";
    return std::to_string(c.bitsPerSample) + "-bit";
}

} // namespace

std::vector<DatasetMessage> addFiles(Dataset& dataset, const std::vector<std::string>& paths, const ReadLimits& limits)
{
    std::vector<DatasetMessage> messages;
    for (const std::string& path : paths) {
        ImageFileContent content;
        try {
            content = readImageFile(path, limits);
        } catch (const std::exception& e) {
            messages.push_back({MessageLevel::Error, path, e.what()});
            continue;
        } catch (...) {
            messages.push_back({MessageLevel::Error, path, path + ": unreadable (unknown error)"});
            continue;
        }
        DatasetFile file;
        file.path = path;
        file.format = content.format;
        file.sha256 = sha256Of(path, &file.bytes);
        file.firstPlane = int(dataset.planes.size());
        file.planeCount = int(content.planes.size());
        file.numbers = content.numbers;
        file.strings = content.strings;
        file.bitsPerSample = content.bitsPerSample;
        file.floatingPoint = content.floatingPoint;
        const int fileIndex = int(dataset.files.size());
        const Image& first = content.planes.front();
        messages.push_back({MessageLevel::Info, path,
                            path + ": " + imageFormatName(content.format) + ", " + std::to_string(content.planes.size()) + " plane(s) of "
                                + std::to_string(first.width) + " x " + std::to_string(first.height) + ", " + bitDescription(content)
                                + " -> dataset plane(s) " + std::to_string(file.firstPlane)
                                + (content.planes.size() > 1 ? ".." + std::to_string(file.firstPlane + int(content.planes.size()) - 1) : std::string())});
        for (const std::string& w : content.warnings)
            messages.push_back({MessageLevel::Warning, path, w});
        for (size_t k = 0; k < content.planes.size(); ++k) {
            DatasetPlane plane;
            plane.raw = std::move(content.planes[k]);
            plane.file = fileIndex;
            plane.indexInFile = int(k);
            plane.formatMaximum = content.formatMaximum;
            size_t finite = 0, nonZero = 0;
            double largest = 0.0;
            for (double v : plane.raw.pixels) {
                finite += std::isfinite(v) ? 1 : 0;
                nonZero += std::isfinite(v) && v != 0.0 ? 1 : 0;
                if (std::isfinite(v))
                    largest = std::max(largest, std::abs(v));
            }
            if (largest > kLargestPixel) {
                // Finite, but squares and sums of such values overflow in the preparation and the fit.
                plane.use = false;
                messages.push_back({MessageLevel::Warning, path, plane.raw.source + ": pixel values reach " + format("%.3g", largest)
                                                                     + ", beyond what can be fitted (at most " + format("%.0e", kLargestPixel)
                                                                     + " in magnitude); scale the data down; the plane does not take part"});
            } else if (finite == 0) {
                plane.use = false;
                messages.push_back({MessageLevel::Warning, path, plane.raw.source + ": every pixel is NaN or blank; the plane does not take part"});
            } else if (nonZero == 0) {
                plane.use = false;
                messages.push_back({MessageLevel::Warning, path, plane.raw.source + ": the plane is all zero; it does not take part"});
            }
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
                                    + " differ in size from dataset plane 0 (" + std::to_string(ref.width) + " x "
                                    + std::to_string(ref.height) + "); they do not take part unless selected with a crop that makes them equal"});
        const std::string sidecar = findSidecar(path);
        if (!sidecar.empty())
            applySidecar(dataset, fileIndex, sidecar, messages);
        applyHeaders(dataset, fileIndex);
    }
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
    for (DatasetPlane& p : dataset.planes)
        p.use = false;
    for (int index : planeIndices)
        dataset.planes[size_t(index)].use = true;
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
        return {PlaneDefocus::Kind::Length, (planeIndex - dataset.metadata.focusPlane.value_or(0.0)) * *dataset.metadata.zStep};
    return {};
}

// ---- Preparation --------------------------------------------------------------------------------

namespace {

struct RobustStats {
    double mean = 0.0;
    double sigma = 0.0;
    size_t count = 0;
};

double median(std::vector<double> v)
{
    if (v.empty())
        return kNaN;
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + long(mid), v.end());
    double m = v[mid];
    if (v.size() % 2 == 0) {
        const double lower = *std::max_element(v.begin(), v.begin() + long(mid));
        m = 0.5 * (m + lower);
    }
    return m;
}

// Sigma clipping: reject values more than `clip` robust deviations (1.4826 MAD) from the median until
// nothing changes, then the mean and standard deviation of what is left.
RobustStats sigmaClipped(std::vector<double> values, double clip)
{
    RobustStats s;
    for (int iteration = 0; iteration < 20 && !values.empty(); ++iteration) {
        const double m = median(values);
        std::vector<double> deviations(values.size());
        for (size_t i = 0; i < values.size(); ++i)
            deviations[i] = std::abs(values[i] - m);
        double sigma = 1.4826 * median(deviations);
        if (!(sigma > 0.0)) {
            // Quantised data (most border pixels equal): fall back to the standard deviation.
            double mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size()), sq = 0.0;
            for (double v : values)
                sq += (v - mean) * (v - mean);
            sigma = std::sqrt(sq / double(values.size()));
        }
        if (!(sigma > 0.0))
            break;
        std::vector<double> kept;
        kept.reserve(values.size());
        for (double v : values)
            if (std::abs(v - m) <= clip * sigma)
                kept.push_back(v);
        if (kept.size() == values.size() || kept.empty())
            break;
        values.swap(kept);
    }
    s.count = values.size();
    if (values.empty())
        return s;
    s.mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
    double sq = 0.0;
    for (double v : values)
        sq += (v - s.mean) * (v - s.mean);
    s.sigma = values.size() > 1 ? std::sqrt(sq / double(values.size() - 1)) : 0.0;
    return s;
}

// Value at (row, col) or 0 outside / masked; for the smoothing and centroid work images.
struct Work {
    int width = 0, height = 0;
    std::vector<double> v; // background-subtracted, masked = 0
    double at(int r, int c) const { return r < 0 || c < 0 || r >= height || c >= width ? 0.0 : v[size_t(r) * size_t(width) + size_t(c)]; }
    double box(int r, int c) const
    {
        double s = 0.0;
        for (int dr = -1; dr <= 1; ++dr)
            for (int dc = -1; dc <= 1; ++dc)
                s += at(r + dr, c + dc);
        return s / 9.0;
    }
};

// Brightest pixel after 3 x 3 smoothing.
std::pair<double, double> peakOf(const Work& w)
{
    double best = -std::numeric_limits<double>::infinity();
    int br = w.height / 2, bc = w.width / 2;
    for (int r = 0; r < w.height; ++r)
        for (int c = 0; c < w.width; ++c) {
            const double s = w.box(r, c);
            if (s > best) {
                best = s;
                br = r;
                bc = c;
            }
        }
    return {double(bc), double(br)};
}

// Centroid of the positive pixels in a window around the peak, iterated as the window follows it.
std::pair<double, double> centroidOf(const Work& w, int radius)
{
    auto [x, y] = peakOf(w);
    for (int iteration = 0; iteration < 20; ++iteration) {
        double sum = 0.0, sx = 0.0, sy = 0.0;
        const int r0 = std::max(0, int(std::lround(y)) - radius), r1 = std::min(w.height - 1, int(std::lround(y)) + radius);
        const int c0 = std::max(0, int(std::lround(x)) - radius), c1 = std::min(w.width - 1, int(std::lround(x)) + radius);
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c) {
                const double v = w.at(r, c);
                if (v > 0.0) {
                    sum += v;
                    sx += v * c;
                    sy += v * r;
                }
            }
        if (!(sum > 0.0))
            break;
        const double nx = sx / sum, ny = sy / sum;
        const bool settled = std::abs(nx - x) < 1e-3 && std::abs(ny - y) < 1e-3;
        x = nx;
        y = ny;
        if (settled)
            break;
    }
    return {x, y};
}

struct PlaneStats {
    std::vector<uint8_t> rawMask; // raw layout: 1 used
    RobustStats border;
    int saturated = 0, bad = 0;
};

PlaneStats planeStats(const DatasetPlane& plane, const PreprocessOptions& o, std::optional<double> saturation, bool& saturationPresent)
{
    const Image& img = plane.raw;
    PlaneStats s;
    s.rawMask.assign(img.pixels.size(), 1);
    for (size_t i = 0; i < img.pixels.size(); ++i)
        if (!std::isfinite(img.pixels[i])) {
            s.rawMask[i] = 0;
            ++s.bad;
        }
    for (const auto& [col, row] : o.badPixels)
        if (col >= 0 && row >= 0 && col < img.width && row < img.height) {
            uint8_t& m = s.rawMask[size_t(row) * size_t(img.width) + size_t(col)];
            if (m) {
                m = 0;
                ++s.bad;
            }
        }
    const double level = saturation ? *saturation : plane.formatMaximum;
    saturationPresent = false;
    if (level > 0.0) {
        for (size_t i = 0; i < img.pixels.size(); ++i)
            if (s.rawMask[i] && img.pixels[i] >= level) {
                saturationPresent = true;
                if (o.maskSaturated) {
                    s.rawMask[i] = 0;
                    ++s.saturated;
                }
            }
    }
    const int border = o.borderWidth > 0 ? o.borderWidth : std::max(2, std::min(img.width, img.height) / 16);
    std::vector<double> frame;
    for (int r = 0; r < img.height; ++r)
        for (int c = 0; c < img.width; ++c)
            if ((r < border || r >= img.height - border || c < border || c >= img.width - border) && s.rawMask[size_t(r) * size_t(img.width) + size_t(c)])
                frame.push_back(img.at(r, c));
    s.border = sigmaClipped(std::move(frame), o.clipSigma > 0.0 ? o.clipSigma : 3.0);
    if (o.maskHotPixels && s.border.sigma > 0.0) {
        const double b = s.border.mean;
        std::vector<size_t> hot;
        for (int r = 0; r < img.height; ++r)
            for (int c = 0; c < img.width; ++c) {
                const size_t i = size_t(r) * size_t(img.width) + size_t(c);
                if (!s.rawMask[i])
                    continue;
                double brightest = -std::numeric_limits<double>::infinity();
                for (int dr = -1; dr <= 1; ++dr)
                    for (int dc = -1; dc <= 1; ++dc) {
                        const int rr = r + dr, cc = c + dc;
                        if ((dr || dc) && rr >= 0 && cc >= 0 && rr < img.height && cc < img.width && std::isfinite(img.at(rr, cc)))
                            brightest = std::max(brightest, img.at(rr, cc));
                    }
                const double v = img.pixels[i];
                if (std::isfinite(brightest) && v - brightest > o.hotPixelSigma * s.border.sigma && v - b > 3.0 * std::max(brightest - b, 0.0))
                    hot.push_back(i);
            }
        for (size_t i : hot) {
            s.rawMask[i] = 0;
            ++s.bad;
        }
    }
    return s;
}

Work workImage(const DatasetPlane& plane, const PlaneStats& s, double background)
{
    Work w;
    w.width = plane.raw.width;
    w.height = plane.raw.height;
    w.v.assign(plane.raw.pixels.size(), 0.0);
    for (size_t i = 0; i < w.v.size(); ++i)
        if (s.rawMask[i])
            w.v[i] = plane.raw.pixels[i] - background;
    return w;
}

std::pair<double, double> findCentre(const Work& w, CentreMethod method, int cropSize)
{
    switch (method) {
    case CentreMethod::Peak:
        return peakOf(w);
    case CentreMethod::Centroid:
        return centroidOf(w, std::max(3, (cropSize > 0 ? cropSize : std::min(w.width, w.height)) / 4));
    case CentreMethod::None:
        break;
    }
    return {w.width / 2, w.height / 2};
}

} // namespace

Preparation computePreparation(const Dataset& dataset)
{
    const PreprocessOptions& o = dataset.preprocess;
    Preparation result;
    result.options = o;
    result.saturationLevel = dataset.metadata.saturationLevel;
    auto warn = [&](const DatasetPlane& plane, const std::string& text) {
        result.messages.push_back({MessageLevel::Warning, dataset.files.empty() ? std::string() : dataset.files[size_t(plane.file)].path,
                                   plane.raw.source + ": " + text});
    };
    if (o.cropSize < 0 || o.cropSize % 2 != 0)
        result.messages.push_back({MessageLevel::Warning, {}, "crop size " + std::to_string(o.cropSize) + " is not a positive even number; "
                                                              + (o.cropSize > 0 ? "using " + std::to_string(o.cropSize + 1) : std::string("no crop"))});
    int cropSize = o.cropSize > 0 ? o.cropSize + o.cropSize % 2 : 0;
    // A window larger than the images holds only padding, and its buffers are allocated per plane: an
    // absurd crop (16384 on 64 x 64) is refused before any allocation instead of exhausting memory.
    int largest = 0;
    for (const DatasetPlane& plane : dataset.planes)
        largest = std::max({largest, plane.raw.width + plane.raw.width % 2, plane.raw.height + plane.raw.height % 2});
    int smallest = 0;
    for (const DatasetPlane& plane : dataset.planes)
        smallest = smallest == 0 ? std::min(plane.raw.width, plane.raw.height) : std::min({smallest, plane.raw.width, plane.raw.height});
    PreprocessOptions effective = o; // what planeStats uses
    if (o.borderWidth > 0 && smallest > 0 && 2 * o.borderWidth >= smallest) {
        // A frame as wide as half the image leaves no inside: the "background" would be the PSF itself.
        result.messages.push_back({MessageLevel::Error, {}, "the border (" + std::to_string(o.borderWidth) + " pixels) leaves nothing inside images of "
                                                            + std::to_string(smallest) + " pixels across; use a border of at most "
                                                            + std::to_string(std::max(1, (smallest - 1) / 2))});
        effective.borderWidth = 0;
    }
    if (cropSize > largest && largest > 0) {
        result.messages.push_back({MessageLevel::Error, {}, "the crop (" + std::to_string(cropSize) + " x " + std::to_string(cropSize)
                                                            + ") is larger than the images (at most " + std::to_string(largest)
                                                            + " pixels across); use a crop of at most " + std::to_string(largest)});
        cropSize = 0;
    }

    std::vector<PlaneStats> stats(dataset.planes.size());
    for (size_t k = 0; k < dataset.planes.size(); ++k) {
        const DatasetPlane& plane = dataset.planes[k];
        bool saturationPresent = false;
        stats[k] = planeStats(plane, effective, dataset.metadata.saturationLevel, saturationPresent);
        if (plane.use && saturationPresent && !o.maskSaturated)
            warn(plane, "pixels at the saturation level are not masked; the fit will be biased (enable saturation masking)");
        if (plane.use && stats[k].saturated > 0)
            warn(plane, std::to_string(stats[k].saturated) + " saturated pixel(s) masked");
    }

    // A common centre: on the sum of the planes that take part (all of the first plane's size).
    std::optional<std::pair<double, double>> common;
    if (o.centre != CentreMethod::None && !o.centreEachPlane) {
        Work sum;
        bool ok = false;
        for (size_t k = 0; k < dataset.planes.size(); ++k) {
            const DatasetPlane& plane = dataset.planes[k];
            if (!plane.use)
                continue;
            const Work w = workImage(plane, stats[k], o.subtractBackground ? stats[k].border.mean : 0.0);
            if (!ok) {
                sum = w;
                ok = true;
            } else if (w.width == sum.width && w.height == sum.height) {
                for (size_t i = 0; i < w.v.size(); ++i)
                    sum.v[i] += w.v[i];
            } else {
                ok = false;
                result.messages.push_back({MessageLevel::Warning, {}, "the planes that take part differ in size: each is centred on its own"});
                break;
            }
        }
        if (ok)
            common = findCentre(sum, o.centre, cropSize);
    }

    result.planes.resize(dataset.planes.size());
    for (size_t k = 0; k < dataset.planes.size(); ++k) {
        const DatasetPlane& plane = dataset.planes[k];
        const Image& raw = plane.raw;
        PlanePreparation& p = result.planes[k];
        const PlaneStats& s = stats[k];
        p.saturatedPixels = s.saturated;
        p.badPixels = s.bad;
        p.backgroundSigma = s.border.sigma;
        p.background = o.subtractBackground ? s.border.mean : 0.0;
        if (o.subtractBackground && s.border.count == 0 && plane.use)
            warn(plane, "no usable border pixels: background not estimated");
        const Work w = workImage(plane, s, p.background);
        std::pair<double, double> centre = common ? *common : findCentre(w, o.centre, cropSize);
        if (o.centre == CentreMethod::None)
            centre = {raw.width / 2, raw.height / 2};
        p.centreX = centre.first;
        p.centreY = centre.second;

        // The window: cropSize, or (centring without crop) the image size rounded up to even; the
        // PSF centre lands on the window's pixel (size / 2, size / 2), the model grid's centre.
        int outW = raw.width, outH = raw.height;
        if (cropSize > 0) {
            outW = outH = cropSize;
        } else if (o.centre != CentreMethod::None) {
            outW += outW % 2;
            outH += outH % 2;
        }
        if (cropSize > 0 || o.centre != CentreMethod::None) {
            p.cropColumn = int(std::lround(centre.first)) - outW / 2;
            p.cropRow = int(std::lround(centre.second)) - outH / 2;
        }
        p.image = Image(outW, outH, kNaN);
        p.image.source = raw.source;
        p.mask.assign(size_t(outW) * size_t(outH), 0);
        int outside = 0;
        double sum = 0.0;
        for (int r = 0; r < outH; ++r)
            for (int c = 0; c < outW; ++c) {
                const int rr = r + p.cropRow, cc = c + p.cropColumn;
                if (rr < 0 || cc < 0 || rr >= raw.height || cc >= raw.width) {
                    ++outside;
                    continue;
                }
                const size_t i = size_t(rr) * size_t(raw.width) + size_t(cc);
                if (!s.rawMask[i])
                    continue;
                const double v = raw.pixels[i] - p.background;
                p.image.at(r, c) = v;
                p.mask[size_t(r) * size_t(outW) + size_t(c)] = 1;
                sum += v;
            }
        if (outside > 0 && plane.use)
            warn(plane, "the " + std::to_string(outW) + " x " + std::to_string(outH) + " window around the centre (" + format("%.1f", centre.first)
                            + ", " + format("%.1f", centre.second) + ") extends beyond the image; " + std::to_string(outside)
                            + " pixels outside it are masked");
        if (o.normalise) {
            if (sum > 0.0) {
                p.scale = 1.0 / sum;
                for (double& v : p.image.pixels)
                    if (std::isfinite(v))
                        v *= p.scale;
            } else if (plane.use) {
                warn(plane, "no positive signal after background subtraction: not normalised");
            }
        }
        p.signal = 0.0;
        double peak = 0.0;
        Work out;
        out.width = outW;
        out.height = outH;
        out.v.assign(p.image.pixels.size(), 0.0);
        for (size_t i = 0; i < p.image.pixels.size(); ++i)
            if (p.mask[i]) {
                p.signal += p.image.pixels[i];
                out.v[i] = p.image.pixels[i];
            }
        for (int r = 0; r < outH; ++r)
            for (int c = 0; c < outW; ++c)
                peak = std::max(peak, out.box(r, c));
        // Light at the window's edge: the brightest smoothed pixel of the outer two rows and columns.
        double edge = 0.0;
        for (int r = 0; r < outH; ++r)
            for (int c = 0; c < outW; ++c)
                if (r < 2 || c < 2 || r >= outH - 2 || c >= outW - 2)
                    edge = std::max(edge, out.box(r, c));
        const double noise = s.border.sigma * p.scale;
        p.clipped = peak > 0.0 && edge > std::max(0.02 * peak, 5.0 * noise / 3.0);
        if (p.clipped && plane.use)
            warn(plane, "the PSF reaches the edge of the " + std::string(cropSize > 0 ? "crop" : "image") + " (" + format("%.1f", 100.0 * edge / peak)
                            + " % of the peak there): light outside is lost to the fit; use a larger crop or grid");
        if (plane.use && !(peak > 0.0))
            warn(plane, "no signal above the background");
    }
    return result;
}

std::vector<DatasetMessage> prepare(Dataset& dataset)
{
    dataset.preparation = computePreparation(dataset);
    return dataset.preparation->messages;
}

bool isPrepared(const Dataset& dataset)
{
    return dataset.preparation && dataset.preparation->options == dataset.preprocess
           && dataset.preparation->saturationLevel == dataset.metadata.saturationLevel
           && dataset.preparation->planes.size() == dataset.planes.size();
}

// ---- The problem --------------------------------------------------------------------------------

double samplingFromMetadata(const DatasetMetadata& m, std::vector<DatasetMessage>* messages)
{
    if (!m.samplingQ && !m.wavelength)
        throw DatasetError("the wavelength is unknown: set it (e.g. 633 nm)");
    SamplingInput in;
    in.wavelength = m.wavelength.value_or(0.0);
    in.samplingQ = m.samplingQ;
    in.pixelPitch = m.pixelPitch;
    in.fNumber = m.fNumber;
    in.numericalAperture = m.numericalAperture;
    in.immersionIndex = m.immersionIndex;
    in.pixelAngle = m.pixelAngle;
    in.aperture = m.aperture;
    // A pitch with both an f-number and an NA: the NA describes a microscope's sample-plane pitch.
    if (in.pixelPitch && in.fNumber && in.numericalAperture)
        in.fNumber.reset();
    if (in.pixelAngle && !in.aperture && in.pixelPitch)
        in.pixelAngle.reset();
    Sampling s;
    try {
        s = computeSampling(in);
    } catch (const std::invalid_argument& e) {
        throw DatasetError(e.what());
    }
    if (messages)
        for (const std::string& w : s.warnings)
            messages->push_back({MessageLevel::Warning, {}, w});
    return s.q;
}

void validateMetadata(const DatasetMetadata& m)
{
    auto check = [&](Setting setting, std::optional<double> value, const char* key) {
        if (!value)
            return;
        const std::string error = plausibilityError(setting, *value);
        if (error.empty())
            return;
        const auto origin = m.origin.find(key);
        throw DatasetError(error + (origin != m.origin.end() ? " (from " + origin->second + ")" : std::string()));
    };
    check(Setting::Wavelength, m.wavelength, "wavelength");
    check(Setting::PixelPitch, m.pixelPitch, "pixelPitch");
    check(Setting::PixelAngle, m.pixelAngle, "pixelAngle");
    check(Setting::FNumber, m.fNumber, "fNumber");
    check(Setting::NumericalAperture, m.numericalAperture, "numericalAperture");
    check(Setting::ImmersionIndex, m.immersionIndex, "immersionIndex");
    check(Setting::Aperture, m.aperture, "aperture");
    check(Setting::SamplingQ, m.samplingQ, "samplingQ");
    check(Setting::ZStep, m.zStep, "zStep");
    if (m.numericalAperture && *m.numericalAperture > m.immersionIndex)
        throw DatasetError("the numerical aperture " + format("%.4g", *m.numericalAperture) + " exceeds the immersion index "
                           + format("%.4g", m.immersionIndex) + " (NA = n sin(theta) cannot exceed n): set the immersion index (e.g. 1.518 for oil)");
}

namespace {
// Names the cause when no plane takes part: empty planes (all NaN, BLANK or zero) say so, rather than
// suggesting the user deselected them.
std::string whyNoPlaneTakesPart(const Dataset& dataset)
{
    int empty = 0;
    std::string example;
    for (const DatasetPlane& plane : dataset.planes) {
        bool anyFinite = false, anyNonZero = false, huge = false;
        for (double v : plane.raw.pixels) {
            anyFinite = anyFinite || std::isfinite(v);
            anyNonZero = anyNonZero || (std::isfinite(v) && v != 0.0);
            huge = huge || (std::isfinite(v) && std::abs(v) > kLargestPixel);
        }
        if (!anyNonZero || huge) {
            if (example.empty())
                example = plane.raw.source + (huge ? " has values too large to fit" : anyFinite ? " is all zero" : " has only NaN or blank pixels");
            ++empty;
        }
    }
    if (empty == int(dataset.planes.size()))
        return "no plane holds usable data (" + example + "); there is no signal to fit";
    if (empty > 0)
        return std::to_string(empty) + " of " + std::to_string(dataset.planes.size()) + " planes hold no usable data (" + example
               + ") and the others are not selected or differ in size; select at least one plane with signal";
    return "select at least one plane";
}
} // namespace

BuiltProblem buildProblem(const Dataset& dataset, const ModelSettings& model)
{
    BuiltProblem built;
    const DatasetMetadata& m = dataset.metadata;
    built.planes = usedPlanes(dataset);
    if (built.planes.empty())
        throw DatasetError(dataset.planes.empty() ? "no data: load PSF images first" : "no plane takes part: " + whyNoPlaneTakesPart(dataset));
    if (!m.wavelength)
        throw DatasetError("the wavelength is unknown: set it (e.g. 633 nm)");
    validateMetadata(m);
    if (!(model.readNoise >= 0.0) || !plausibilityError(Setting::ReadNoise, model.readNoise).empty())
        throw DatasetError(plausibilityError(Setting::ReadNoise, model.readNoise) + "; 0 means the border noise of the data");
    built.samplingQ = samplingFromMetadata(m, &built.messages);

    const Preparation fresh = isPrepared(dataset) ? Preparation{} : computePreparation(dataset);
    const Preparation& prep = isPrepared(dataset) ? *dataset.preparation : fresh;
    for (const DatasetMessage& msg : prep.messages)
        built.messages.push_back(msg);

    // Objective and which data it sees.
    const std::string& unit = m.dataUnit;
    ObjectiveKind objective;
    if (model.objective)
        objective = *model.objective;
    else if (unit == "relative" || dataset.preprocess.normalise)
        objective = ObjectiveKind::LeastSquares;
    else if (unit == "photons" || unit == "electrons" || unit == "photon" || unit == "e-")
        objective = ObjectiveKind::Poisson;
    else
        objective = ObjectiveKind::WeightedLeastSquares;
    if (objective == ObjectiveKind::Poisson && dataset.preprocess.normalise)
        throw DatasetError("the Poisson objective needs counts: turn normalisation off or choose least squares");

    ProblemSpec& spec = built.spec;
    spec.name = dataset.files.empty() ? std::string("data") : QFileInfo(QString::fromStdString(dataset.files.front().path)).fileName().toStdString();
    spec.wavelength = *m.wavelength;
    spec.objective = objective;
    spec.basis.maxOrder = model.order;
    spec.basis.ordering = model.ordering;
    spec.basis.normalization = model.normalization;
    spec.basis.fixedTerms = model.fixedTerms;
    spec.pupil.obscuration = model.obscuration;
    spec.pupil.spiderCount = model.spiderCount;
    spec.pupil.spiderWidth = model.spiderWidth;
    spec.pupil.spiderAngleDeg = model.spiderAngleDeg;

    const Image& first = prep.planes[size_t(built.planes.front())].image;
    std::vector<double> sigmas;
    double na = m.numericalAperture.value_or(0.0);
    if (na == 0.0 && m.fNumber)
        na = 1.0 / (2.0 * *m.fNumber);
    bool anyDefocus = false;
    for (int index : built.planes) {
        const PlanePreparation& p = prep.planes[size_t(index)];
        if (p.image.width != first.width || p.image.height != first.height)
            throw DatasetError("planes of different sizes take part: " + p.image.source + " is " + std::to_string(p.image.width) + " x "
                               + std::to_string(p.image.height) + ", " + first.source + " is " + std::to_string(first.width) + " x "
                               + std::to_string(first.height) + "; crop them to one size or select planes of one size");
        size_t used = 0;
        for (uint8_t keep : p.mask)
            used += keep;
        if (used == 0)
            throw DatasetError(p.image.source + ": every pixel is masked or NaN; it cannot take part");
        PlaneSpec ps;
        ps.data = p.image;
        ps.mask = p.mask;
        if (objective == ObjectiveKind::Poisson) {
            // Counts as measured: add the subtracted background back; it is the start value.
            for (size_t i = 0; i < ps.data.pixels.size(); ++i)
                if (p.mask[i])
                    ps.data.pixels[i] = ps.data.pixels[i] / p.scale + p.background;
            ps.background = std::max(p.background, 0.0);
        } else {
            ps.background = 0.0;
        }
        bool allZero = true;
        for (size_t i = 0; i < ps.data.pixels.size() && allZero; ++i)
            allZero = !(p.mask[i] && ps.data.pixels[i] != 0.0);
        if (allZero)
            throw DatasetError(p.image.source + ": the plane is all zero after preparation (no signal to fit)");
        ps.flux = p.signal > 0.0 ? p.signal : 1.0;
        ps.fitFlux = model.fitFlux;
        ps.fitBackground = model.fitBackground;
        ps.fitShift = model.fitShift;
        const PlaneDefocus d = planeDefocus(dataset, index);
        if (d.kind != PlaneDefocus::Kind::Unknown) {
            const std::string error = plausibilityError(d.kind == PlaneDefocus::Kind::Waves ? Setting::DefocusWaves : Setting::DefocusLength, d.value);
            if (!error.empty())
                throw DatasetError(p.image.source + " (plane " + std::to_string(index) + "): " + error);
        }
        if (d.kind == PlaneDefocus::Kind::Unknown) {
            if (built.planes.size() > 1)
                throw DatasetError(p.image.source + " (plane " + std::to_string(index)
                                   + "): its defocus is unknown; set it for every plane (e.g. -1w, 0, 1w) or give the stack's z step and focus plane");
            built.messages.push_back({MessageLevel::Info, {}, p.image.source + ": defocus unknown; taken as in focus"});
        } else if (d.kind == PlaneDefocus::Kind::Waves) {
            if (d.value != 0.0) {
                ps.diversity.kind = DiversityKind::ZernikeDefocus;
                ps.diversity.defocusWaves = d.value;
                ps.diversity.measure = DefocusMeasure::PeakToValley;
                anyDefocus = true;
            }
        } else if (d.value != 0.0) {
            if (!(na > 0.0))
                throw DatasetError(p.image.source + ": the defocus is given as a length (" + format("%.4g", d.value * 1e6)
                                   + " um); converting it to phase needs the numerical aperture or the f-number");
            ps.diversity.kind = m.defocusModel == DefocusModel::HighNa ? DiversityKind::AxialHighNa : DiversityKind::AxialParaxial;
            ps.diversity.axialDistance = d.value;
            ps.diversity.numericalAperture = na;
            ps.diversity.immersionIndex = m.immersionIndex;
            anyDefocus = true;
        }
        sigmas.push_back(p.backgroundSigma * p.scale);
        spec.planes.push_back(std::move(ps));
    }
    if (!anyDefocus)
        built.messages.push_back({MessageLevel::Warning, {},
                                  "no plane is defocused: a single in-focus image cannot tell the sign of even aberrations; add defocused planes"});
    if (objective == ObjectiveKind::WeightedLeastSquares) {
        spec.readNoise = model.readNoise > 0.0 ? model.readNoise : std::max(median(sigmas), 1e-12);
        if (!(model.readNoise > 0.0))
            built.messages.push_back({MessageLevel::Info, {}, "weighted least squares with the border noise " + format("%.4g", spec.readNoise)
                                                                  + " (data units) as read noise"});
    } else {
        spec.readNoise = model.readNoise;
    }

    int grid = model.grid;
    if (grid == 0) {
        grid = std::max(first.width, first.height);
        grid += grid % 2;
        grid = std::max(grid, 16);
    }
    if (grid < std::max(first.width, first.height))
        throw DatasetError("the model grid (" + std::to_string(grid) + ") is smaller than the prepared planes (" + std::to_string(first.width) + " x "
                           + std::to_string(first.height) + "); crop them or use a larger grid");
    spec.grid = PupilGrid::centred(grid, built.samplingQ);
    try {
        const Problem problem(spec);
        built.start = problem.initialParameters();
    } catch (const std::invalid_argument& e) {
        throw DatasetError(e.what());
    }
    // More parameters than measurements has no unique solution, yet BFGS would still report convergence.
    std::size_t pixels = 0;
    for (const PlaneSpec& ps : spec.planes) {
        if (ps.mask.empty())
            pixels += ps.data.pixels.size();
        for (uint8_t keep : ps.mask)
            pixels += keep;
    }
    if (pixels < built.start.size())
        throw DatasetError(std::to_string(built.start.size()) + " parameters cannot be fitted to " + std::to_string(pixels)
                           + " pixels: use larger images or crop (at least as many pixels as parameters) or a lower Zernike order");
    return built;
}

} // namespace wfs
