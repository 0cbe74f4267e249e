#include "io/OmeXml.h"

#include <QByteArray>
#include <QString>
#include <QXmlStreamReader>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace wfs {

namespace {

std::string numberText(double v)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

// A value that breaks the schema (a size that is not a number): the whole document is taken as malformed, as an
// XML error would be, so that no half-read document feeds the fit.
struct Malformed {
    std::string why;
};

struct Objective {
    std::optional<double> na;
    QString immersion;
};

// The index each OME Immersion name stands for. A name is not a measurement: the value is marked as assumed in its
// origin, and ObjectiveSettings RefractiveIndex, where given, is preferred.
std::optional<double> immersionIndexOf(const QString& name)
{
    static const std::pair<const char*, double> table[] = {
        {"Oil", 1.518}, {"Water", 1.333}, {"WaterDipping", 1.333}, {"Glycerol", 1.47}, {"Air", 1.0}};
    for (const auto& [key, index] : table)
        if (name == QLatin1String(key))
            return index;
    return std::nullopt;
}

class OmeReader {
public:
    explicit OmeReader(const std::string& xml)
        : m_reader(QByteArray::fromStdString(xml))
    {
    }

    OmeOptics read()
    {
        try {
            // A document broken before its root is still malformed: looksLikeOmeXml() took it for OME-XML.
            if (!readElements() && !m_reader.hasError())
                return {};
        } catch (const Malformed& e) {
            return malformed(e.why);
        }
        if (m_reader.hasError()) {
            std::string why = m_reader.errorString().toStdString();
            if (!why.empty() && why.back() == '.') // Qt's sentences end in one; the message goes on after it
                why.pop_back();
            return malformed(where() + ": " + why);
        }
        resolveWavelength();
        resolveObjective();
        return std::move(m_out);
    }

private:
    OmeOptics malformed(const std::string& why) const
    {
        OmeOptics out;
        out.isOme = true;
        out.malformed = why;
        return out;
    }

    std::string where() const
    {
        return "line " + std::to_string(m_reader.lineNumber()) + ", column " + std::to_string(m_reader.columnNumber());
    }

    // False when the root element is not OME (some other XML description: not ours to judge).
    bool readElements()
    {
        bool root = true;
        int images = 0;
        bool inFirstImage = false;
        while (!m_reader.atEnd()) {
            const QXmlStreamReader::TokenType token = m_reader.readNext();
            if (token == QXmlStreamReader::EndElement && m_reader.name() == QLatin1String("Image")) {
                inFirstImage = false;
                continue;
            }
            if (token != QXmlStreamReader::StartElement)
                continue;
            const QStringView name = m_reader.name();
            const QXmlStreamAttributes a = m_reader.attributes();
            if (root) {
                root = false;
                if (name != QLatin1String("OME"))
                    return false;
                m_out.isOme = true;
            } else if (name == QLatin1String("Image")) {
                // Only the first image: a file of several (positions, series) is fitted as its planes come, and the
                // first image's pixels are the first pages.
                inFirstImage = ++images == 1;
            } else if (name == QLatin1String("Pixels")) {
                countPlanes(a);
                if (inFirstImage)
                    readPixels(a);
            } else if (name == QLatin1String("UUID") && a.hasAttribute(QLatin1String("FileName"))) {
                m_out.refersToOtherFiles = true;
            } else if (name == QLatin1String("Channel") && inFirstImage) {
                if (auto w = length(a, "EmissionWavelength", "nm", "wavelength"))
                    m_wavelengths.push_back(*w);
            } else if (name == QLatin1String("ObjectiveSettings") && inFirstImage) {
                m_objectiveRef = a.value(QLatin1String("ID")).toString();
                if (auto n = number(a, "RefractiveIndex")) {
                    if (*n >= 1.0)
                        m_refractiveIndex = *n;
                    else
                        m_out.notes.push_back({"immersionIndex", "OME-XML RefractiveIndex = " + numberText(*n) + " is below 1"});
                }
            } else if (name == QLatin1String("Objective")) {
                Objective o;
                o.na = number(a, "LensNA");
                o.immersion = a.value(QLatin1String("Immersion")).toString();
                m_objectives[a.value(QLatin1String("ID")).toString()] = o;
            } else if (name == QLatin1String("BinaryOnly")) {
                m_out.companionFile = a.value(QLatin1String("MetadataFile")).toString().toStdString();
            }
        }
        return m_out.isOme;
    }

    // Each image's SizeZ x SizeC x SizeT, summed; unknown when an image leaves one out (the schema requires them).
    void countPlanes(const QXmlStreamAttributes& a)
    {
        const auto sizeZ = number(a, "SizeZ"), sizeC = number(a, "SizeC"), sizeT = number(a, "SizeT");
        if (!sizeZ || !sizeC || !sizeT) {
            m_planesUnknown = true;
            m_out.declaredPlanes.reset();
            return;
        }
        if (!m_planesUnknown)
            m_out.declaredPlanes = m_out.declaredPlanes.value_or(0.0) + *sizeZ * *sizeC * *sizeT;
    }

    void readPixels(const QXmlStreamAttributes& a)
    {
        const auto x = length(a, "PhysicalSizeX", "\xc2\xb5m", "pixelPitch");
        const auto y = length(a, "PhysicalSizeY", "\xc2\xb5m", "pixelPitch");
        if (x)
            m_out.pixelPitch = OmeValue{*x, "PhysicalSizeX"};
        else if (y)
            m_out.pixelPitch = OmeValue{*y, "PhysicalSizeY"};
        // The model has square pixels: X is the pitch, and the difference is said, not averaged away in silence.
        if (x && y && std::abs(*x - *y) > 1e-6 * std::max(*x, *y))
            m_out.notes.push_back({"", "OME-XML PhysicalSizeX (" + numberText(*x * 1e6) + " um) and PhysicalSizeY (" + numberText(*y * 1e6)
                                           + " um) differ: the pixels are not square, and the model's are; the pixel pitch is "
                                             "taken from PhysicalSizeX"});
        // PhysicalSizeZ is the step between the pages only where they are the Z planes in order: of a single plane it
        // is the section's thickness, and pages that interleave Z with channels or time points are not steps apart.
        const auto sizeZ = number(a, "SizeZ"), sizeC = number(a, "SizeC"), sizeT = number(a, "SizeT");
        const QString order = a.value(QLatin1String("DimensionOrder")).toString();
        const auto z = length(a, "PhysicalSizeZ", "\xc2\xb5m", "zStep");
        if (!z || (sizeZ && *sizeZ <= 1.0))
            return;
        if (sizeC.value_or(1.0) * sizeT.value_or(1.0) > 1.0 && !order.startsWith(QLatin1String("XYZ")))
            m_out.notes.push_back({"zStep", "OME-XML PhysicalSizeZ = " + numberText(*z * 1e6) + " um: the pages interleave Z with "
                                                + "channels or time points (DimensionOrder " + order.left(8).toStdString()
                                                + "), so consecutive planes are not z steps apart"});
        else
            m_out.zStep = OmeValue{*z, "PhysicalSizeZ"};
    }

    // An attribute's number; none when absent; a value that is not a finite number makes the document malformed.
    std::optional<double> number(const QXmlStreamAttributes& a, const char* attribute)
    {
        const QString key = QLatin1String(attribute);
        if (!a.hasAttribute(key))
            return std::nullopt;
        const QString text = a.value(key).toString();
        bool ok = false;
        const double v = text.toDouble(&ok);
        if (!ok || !std::isfinite(v))
            throw Malformed{where() + ": " + attribute + "=\"" + text.left(40).toStdString() + "\" is not a number"};
        return v;
    }

    // A positive length with its unit attribute (`attribute` + "Unit", else the schema's default) in metres; a unit
    // this program does not read, or a value not above zero, is a note and no value.
    std::optional<double> length(const QXmlStreamAttributes& a, const char* attribute, const char* defaultUnit, const char* field)
    {
        const std::optional<double> v = number(a, attribute);
        if (!v)
            return std::nullopt;
        const QString unitKey = QLatin1String(attribute) + QLatin1String("Unit");
        const std::string unit = a.hasAttribute(unitKey) ? a.value(unitKey).toString().toStdString() : std::string(defaultUnit);
        const std::optional<double> metres = omeLengthInMetres(*v, unit);
        const std::string said = "OME-XML " + std::string(attribute) + " = " + numberText(*v) + " " + unit;
        if (!metres) {
            m_out.notes.push_back(
                {field, said + ": '" + unit + "' is not a length unit this program reads (m, mm, um, nm, \xc3\x85, ...)"});
            return std::nullopt;
        }
        if (!(*metres > 0.0)) {
            m_out.notes.push_back({field, said + " is not positive"});
            return std::nullopt;
        }
        return metres;
    }

    // One wavelength for the stack: the channels that give one must agree (a fit has one wavelength).
    void resolveWavelength()
    {
        if (m_wavelengths.empty())
            return;
        std::string listed;
        bool differ = false;
        for (double w : m_wavelengths) {
            differ = differ || std::abs(w - m_wavelengths.front()) > 1e-9 * w;
            listed += (listed.empty() ? "" : ", ") + numberText(w * 1e9) + " nm";
        }
        if (differ)
            m_out.notes.push_back(
                {"wavelength", "OME-XML channels give different EmissionWavelengths (" + listed + "), and a fit has one; none is used"});
        else
            m_out.wavelength = OmeValue{m_wavelengths.front(), "EmissionWavelength"};
    }

    // The image's objective (its ObjectiveSettings ID; without one, the only objective of the file).
    void resolveObjective()
    {
        const Objective* objective = nullptr;
        if (const auto it = m_objectives.find(m_objectiveRef); !m_objectiveRef.isEmpty() && it != m_objectives.end())
            objective = &it->second;
        else if (m_objectiveRef.isEmpty() && m_objectives.size() == 1)
            objective = &m_objectives.begin()->second;
        if (objective && objective->na) {
            if (*objective->na > 0.0)
                m_out.numericalAperture = OmeValue{*objective->na, "LensNA"};
            else
                m_out.notes.push_back({"numericalAperture", "OME-XML LensNA = " + numberText(*objective->na) + " is not positive"});
        }
        if (m_refractiveIndex) {
            m_out.immersionIndex = OmeValue{*m_refractiveIndex, "RefractiveIndex"};
        } else if (objective && !objective->immersion.isEmpty()) {
            const std::string name = objective->immersion.left(40).toStdString();
            if (const auto n = immersionIndexOf(objective->immersion))
                m_out.immersionIndex = OmeValue{*n, "Immersion=" + name + " (index " + numberText(*n) + " assumed for "
                                                        + QString::fromStdString(name).toLower().toStdString() + ")"};
            else
                m_out.notes.push_back({"immersionIndex", "OME-XML Immersion = " + name + " names no refractive index"});
        }
    }

    QXmlStreamReader m_reader;
    OmeOptics m_out;
    std::vector<double> m_wavelengths;
    std::map<QString, Objective> m_objectives;
    QString m_objectiveRef;
    bool m_planesUnknown = false; // an image without its three sizes: the document's plane count is not known
    std::optional<double> m_refractiveIndex;
};

} // namespace

bool looksLikeOmeXml(const std::string& description)
{
    const size_t first = description.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || description[first] != '<')
        return false;
    return description.find("<OME") != std::string::npos || description.find("openmicroscopy.org/Schemas/OME") != std::string::npos;
}

OmeOptics readOmeXml(const std::string& xml)
{
    return OmeReader(xml).read();
}

std::optional<double> omeLengthInMetres(double value, const std::string& unit)
{
    // The OME UnitsLength symbols a microscope's sizes come in, with the spellings writers use for micrometres
    // (the micro sign U+00B5, the Greek mu U+03BC, "um") and for the angstrom (U+00C5, U+212B).
    static const std::pair<const char*, double> table[] = {
        {"m", 1.0},       {"km", 1e3},      {"dm", 1e-1}, {"cm", 1e-2},  {"mm", 1e-3},        {"\xc2\xb5m", 1e-6},     {"\xce\xbcm", 1e-6},
        {"um", 1e-6},     {"micron", 1e-6}, {"nm", 1e-9}, {"pm", 1e-12}, {"\xc3\x85", 1e-10}, {"\xe2\x84\xab", 1e-10}, {"in", 0.0254},
        {"thou", 25.4e-6}};
    for (const auto& [symbol, scale] : table)
        if (unit == symbol)
            return value * scale;
    return std::nullopt;
}

} // namespace wfs
