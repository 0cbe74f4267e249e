// The Dataset path from files to a ProblemSpec: loading with per-file messages (a bad file never
// loses what loaded), metadata from FITS keywords, JSON sidecars, ImageJ descriptions, OME-XML and Micro-Manager's
// JSON, the
// preparation steps (background, centring, crop, masks, normalisation, warnings), problem building
// and its errors, and an end-to-end check that FITS, TIFF and PNG copies of one simulated stack
// reconstruct to the same, true coefficients (a row flip would change the sign of the odd terms).
#include "ImageTestFiles.h"
#include "OmeTestFiles.h"
#include "TestSupport.h"

#include "engine/Presets.h"
#include "engine/ReconstructionEngine.h"
#include "io/Dataset.h"
#include "io/Fits.h"
#include "io/OmeXml.h"
#include "io/TiffWriter.h"

#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cmath>
#include <random>

using namespace wfs;
using namespace wfs::test;

namespace {

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

bool anyMessage(const std::vector<DatasetMessage>& messages, MessageLevel level, const std::string& part)
{
    for (const DatasetMessage& m : messages)
        if (m.level == level && contains(m.text, part))
            return true;
    return false;
}

std::string allText(const std::vector<DatasetMessage>& messages)
{
    std::string s;
    for (const DatasetMessage& m : messages)
        s += std::string(messageLevelName(m.level)) + ": " + m.text + "\n";
    return s;
}

// A Gaussian spot of `flux` at (x0, y0) (pixels, x = column) on a constant background with Gaussian
// noise of `sigma`.
Image spot(int width, int height, double x0, double y0, double width0, double flux, double background, double sigma, unsigned seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0.0, sigma);
    Image img(width, height);
    const double norm = flux / (2.0 * M_PI * width0 * width0);
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c) {
            const double d2 = (c - x0) * (c - x0) + (r - y0) * (r - y0);
            img.at(r, c) = background + norm * std::exp(-d2 / (2.0 * width0 * width0)) + (sigma > 0.0 ? noise(rng) : 0.0);
        }
    return img;
}

std::string writeFitsFile(const QTemporaryDir& dir, const QString& name, const std::vector<Image>& planes,
                          const std::vector<FitsKeyword>& keywords = {})
{
    const std::string path = dir.filePath(name).toStdString();
    writeFits(path, planes, keywords, false, true);
    return path;
}

double coefficient(const FitResult& r, int index)
{
    for (const CoefficientResult& c : r.coefficients)
        if (c.index == index)
            return c.waves;
    return std::nan("");
}

// Three 16 x 16 planes of counts (exact in 16 bits and in floats).
std::vector<Image> omePlanes()
{
    return {asymmetricImage(16, 16), asymmetricImage(16, 16, 200.0), asymmetricImage(16, 16, 150.0)};
}

// An OME-TIFF of omePlanes() in 32-bit floats, its OME-XML made of `parts`.
QByteArray omeStack(const OmeXmlParts& parts)
{
    return QByteArray::fromStdString(tiffStackBytes(omePlanes(), omeXml(16, 16, 3, "float", parts)));
}

} // namespace

class TestDataset : public QObject {
    Q_OBJECT

private slots:
    void badFilesNeverLoseWhatLoaded()
    {
        QTemporaryDir dir;
        const std::string good = writeFitsFile(dir, QStringLiteral("good.fits"), {asymmetricImage(16, 16), asymmetricImage(16, 16)});
        const QString bad = dir.filePath(QStringLiteral("bad.tif"));
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("II*\0garbage-garbage-garbage", 27);
        f.close();
        const QString png = dir.filePath(QStringLiteral("third.png"));
        writePng(png, asymmetricImage(16, 16), QImage::Format_Grayscale8);

        Dataset data;
        auto messages = addFiles(data, {good, bad.toStdString(), dir.filePath(QStringLiteral("missing.fits")).toStdString()});
        QCOMPARE(data.files.size(), size_t(1));
        QCOMPARE(data.planes.size(), size_t(2));
        QVERIFY2(anyMessage(messages, MessageLevel::Info, "good.fits: FITS, 2 plane(s) of 16 x 16"), allText(messages).c_str());
        QVERIFY2(anyMessage(messages, MessageLevel::Error, "bad.tif"), allText(messages).c_str());
        QVERIFY2(anyMessage(messages, MessageLevel::Error, "missing.fits: file not found"), allText(messages).c_str());
        // A later call adds to what is there.
        messages = addFiles(data, {png.toStdString()});
        QCOMPARE(data.files.size(), size_t(2));
        QCOMPARE(data.planes.size(), size_t(3));
        QCOMPARE(data.planes[2].file, 1);
        QCOMPARE(data.files[1].firstPlane, 2);
        QCOMPARE(data.files[1].sha256.size(), size_t(64));
        QVERIFY(anyMessage(messages, MessageLevel::Info, "dataset plane(s) 2"));
        removeFile(data, 0);
        QCOMPARE(data.planes.size(), size_t(1));
        QCOMPARE(data.planes[0].file, 0);
        QCOMPARE(data.files[0].firstPlane, 0);
    }

    void emptyAndMismatchedPlanesDoNotTakePart()
    {
        QTemporaryDir dir;
        Image nan(16, 16, std::nan("")), zero(16, 16, 0.0);
        const std::string a = writeFitsFile(dir, QStringLiteral("a.fits"), {asymmetricImage(16, 16), nan, zero});
        const std::string b = writeFitsFile(dir, QStringLiteral("b.fits"), {asymmetricImage(20, 16)});
        Dataset data;
        const auto messages = addFiles(data, {a, b});
        QCOMPARE(data.planes.size(), size_t(4));
        QCOMPARE(usedPlanes(data), std::vector<int>{0});
        QVERIFY2(anyMessage(messages, MessageLevel::Warning, "a.fits[0,1]: every pixel is NaN"), allText(messages).c_str());
        QVERIFY2(anyMessage(messages, MessageLevel::Warning, "a.fits[0,2]: the plane is all zero"), allText(messages).c_str());
        QVERIFY2(anyMessage(messages, MessageLevel::Warning, "differ in size"), allText(messages).c_str());
        // Selected anyway, the build says what is wrong with which plane.
        data.metadata.wavelength = 500e-9;
        data.metadata.samplingQ = 2.0;
        selectPlanes(data, {0, 3});
        data.planes[0].defocus = {PlaneDefocus::Kind::Waves, 0.0};
        data.planes[3].defocus = {PlaneDefocus::Kind::Waves, 1.0};
        try {
            buildProblem(data, {});
            QFAIL("planes of different sizes were accepted");
        } catch (const DatasetError& e) {
            QVERIFY2(contains(e.what(), "different sizes") && contains(e.what(), "b.fits[0]"), e.what());
        }
        selectPlanes(data, {1});
        try {
            buildProblem(data, {});
            QFAIL("an all-NaN plane was accepted");
        } catch (const DatasetError& e) {
            QVERIFY2(contains(e.what(), "a.fits[0,1]") && contains(e.what(), "masked or NaN"), e.what());
        }
        selectPlanes(data, {2});
        try {
            buildProblem(data, {});
            QFAIL("an all-zero plane was accepted");
        } catch (const DatasetError& e) {
            QVERIFY2(contains(e.what(), "a.fits[0,2]") && contains(e.what(), "all zero"), e.what());
        }
        try {
            selectPlanes(data, {7});
            QFAIL("a missing plane was selected");
        } catch (const DatasetError& e) {
            QVERIFY(contains(e.what(), "plane 7 does not exist"));
        }
    }

    // Metadata keywords with values that cannot be meant (a negative read noise, a saturation of 0, a focus plane
    // in words) are said, each by name, and ignored; none is dropped in silence.
    void absurdKeywordsAreSaidAndIgnored()
    {
        QTemporaryDir dir;
        const std::string path =
            writeFitsFile(dir, QStringLiteral("bad.fits"), {asymmetricImage(16, 16)},
                          {{"RDNOISE", -5.0, ""}, {"SATURATE", 0.0, ""}, {"FOCPLANE", std::string("x"), ""}, {"WAVELENG", 6.33e-7, ""}});
        Dataset data;
        const std::vector<DatasetMessage> messages = addFiles(data, {path});
        const std::string said = messagesText(messages, MessageLevel::Warning);
        for (const char* part : {"keyword RDNOISE = -5 is not positive; ignored", "keyword SATURATE = 0 is not positive; ignored",
                                 "keyword FOCPLANE = 'x' is not a number; ignored"})
            QVERIFY2(said.find(part) != std::string::npos, said.c_str());
        QVERIFY(!data.metadata.readNoise && !data.metadata.saturationLevel && !data.metadata.focusPlane);
        WFS_VERIFY_CLOSE(*data.metadata.wavelength, 6.33e-7, 1e-12, 0.0); // the good ones are read as before
    }

    void metadataFromFitsKeywords()
    {
        QTemporaryDir dir;
        const std::string path = writeFitsFile(dir, QStringLiteral("k.fits"), {asymmetricImage(16, 16), asymmetricImage(16, 16)},
                                               {{"WAVELENG", 6.33e-7, ""},
                                                {"XPIXSZ", 5.5, "um"},
                                                {"FOCRATIO", 22.0, ""},
                                                {"IMMERSN", 1.33, ""},
                                                {"ZSTEP", 3e-7, ""},
                                                {"FOCPLANE", 1.0, ""},
                                                {"DEFMODEL", std::string("high-na"), ""},
                                                {"BUNIT", std::string("photons"), ""},
                                                {"SATURATE", 60000.0, ""},
                                                {"DEFOCUS1", -1.0, ""},
                                                {"DEFOCZ2", 4e-7, ""}});
        Dataset data;
        addFiles(data, {path});
        const DatasetMetadata& m = data.metadata;
        WFS_VERIFY_CLOSE(*m.wavelength, 6.33e-7, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*m.pixelPitch, 5.5e-6, 1e-12, 0.0);
        QCOMPARE(*m.fNumber, 22.0);
        QCOMPARE(m.immersionIndex, 1.33);
        WFS_VERIFY_CLOSE(*m.zStep, 3e-7, 1e-12, 0.0);
        QCOMPARE(*m.focusPlane, 1.0);
        QCOMPARE(m.defocusModel, DefocusModel::HighNa);
        QCOMPARE(m.dataUnit, std::string("photons"));
        QCOMPARE(*m.saturationLevel, 60000.0);
        QCOMPARE(data.planes[0].defocus, (PlaneDefocus{PlaneDefocus::Kind::Waves, -1.0}));
        QCOMPARE(data.planes[1].defocus.kind, PlaneDefocus::Kind::Length);
        WFS_VERIFY_CLOSE(data.planes[1].defocus.value, 4e-7, 1e-12, 0.0);
        QCOMPARE(m.origin.at("wavelength"), std::string("k.fits: keyword WAVELENG"));
        QCOMPARE(m.origin.at("pixelPitch"), std::string("k.fits: keyword XPIXSZ"));
        WFS_VERIFY_CLOSE(samplingFromMetadata(m), 6.33e-7 * 22.0 / 5.5e-6, 1e-12, 0.0);
    }

    void sidecarAndImageJMetadata()
    {
        QTemporaryDir dir;
        const QString tif = dir.filePath(QStringLiteral("stack.tif"));
        writeTiff(tif.toStdString(), {asymmetricImage(16, 16), asymmetricImage(16, 16), asymmetricImage(16, 16)}, {});
        QFile sidecar(tif + QStringLiteral(".json"));
        QVERIFY(sidecar.open(QIODevice::WriteOnly));
        sidecar.write(R"({"wavelength": "605nm", "pixel_size": "0.1 um", "na": 1.1, "immersion": 1.33, "defocus_model": "high-na",
                          "defocus": ["-0.3um", 0, "0.3um"], "data_unit": "counts", "saturation": "oops"})");
        sidecar.close();
        Dataset data;
        const auto messages = addFiles(data, {tif.toStdString()});
        const DatasetMetadata& m = data.metadata;
        WFS_VERIFY_CLOSE(*m.wavelength, 605e-9, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*m.pixelPitch, 0.1e-6, 1e-12, 0.0);
        QCOMPARE(*m.numericalAperture, 1.1);
        QCOMPARE(m.immersionIndex, 1.33);
        QCOMPARE(m.defocusModel, DefocusModel::HighNa);
        QCOMPARE(data.planes[0].defocus.kind, PlaneDefocus::Kind::Length);
        WFS_VERIFY_CLOSE(data.planes[0].defocus.value, -0.3e-6, 1e-12, 0.0);
        QCOMPARE(data.planes[1].defocus, (PlaneDefocus{PlaneDefocus::Kind::Waves, 0.0}));
        QCOMPARE(data.files[0].sidecar, (tif + QStringLiteral(".json")).toStdString());
        QVERIFY2(anyMessage(messages, MessageLevel::Warning, "\"saturation\" is not a valid value"), allText(messages).c_str());
        QVERIFY(!m.saturationLevel);
        QCOMPARE(m.origin.at("wavelength"), std::string("stack.tif.json"));

        // ImageJ: "spacing" and "unit" in the description, the pixel size as 1 / XResolution.
        const QString ij = dir.filePath(QStringLiteral("ij.tif"));
        TIFF* t = TIFFOpen(ij.toStdString().c_str(), "w");
        for (int page = 0; page < 2; ++page) {
            TIFFSetField(t, TIFFTAG_IMAGEWIDTH, 4u);
            TIFFSetField(t, TIFFTAG_IMAGELENGTH, 4u);
            TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, 16);
            TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, 1);
            TIFFSetField(t, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
            TIFFSetField(t, TIFFTAG_IMAGEDESCRIPTION, "ImageJ=1.52\nimages=2\nslices=2\nunit=micron\nspacing=0.25\n");
            TIFFSetField(t, TIFFTAG_XRESOLUTION, 8.0f);
            TIFFSetField(t, TIFFTAG_YRESOLUTION, 8.0f);
            TIFFSetField(t, TIFFTAG_RESOLUTIONUNIT, RESUNIT_NONE);
            std::uint16_t row[4] = {1, 2, 3, 4};
            for (std::uint32_t r = 0; r < 4; ++r)
                TIFFWriteScanline(t, row, r, 0);
            TIFFWriteDirectory(t);
        }
        TIFFClose(t);
        Dataset imagej;
        addFiles(imagej, {ij.toStdString()});
        WFS_VERIFY_CLOSE(*imagej.metadata.zStep, 0.25e-6, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*imagej.metadata.pixelPitch, 0.125e-6, 1e-12, 0.0);
    }

    // OME-TIFF (issue 40): the OME-XML's pixel size, z step, emission wavelength, objective NA and immersion index,
    // each with its unit and its origin; ObjectiveSettings RefractiveIndex before the index an Immersion name stands for.
    void omeXmlMetadata()
    {
        QTemporaryDir dir;
        OmeXmlParts parts;
        parts.pixels = "PhysicalSizeX=\"0.1\" PhysicalSizeXUnit=\"\xc2\xb5m\" PhysicalSizeY=\"0.1\" PhysicalSizeZ=\"0.3\"";
        parts.channel = "EmissionWavelength=\"605\" EmissionWavelengthUnit=\"nm\"";
        parts.instrument =
            "<Instrument ID=\"Instrument:0\"><Objective ID=\"Objective:0\" LensNA=\"1.1\" Immersion=\"Water\"/></Instrument>";
        parts.imageChildren = "<InstrumentRef ID=\"Instrument:0\"/><ObjectiveSettings ID=\"Objective:0\" RefractiveIndex=\"1.33\"/>";
        const QString path = dir.filePath(QStringLiteral("bead.ome.tif"));
        QVERIFY(writeFile(path, omeStack(parts)));
        Dataset data;
        const auto messages = addFiles(data, {path.toStdString()});
        QVERIFY2(!anyMessage(messages, MessageLevel::Warning, ""), allText(messages).c_str());
        QCOMPARE(data.planes.size(), size_t(3));
        const DatasetMetadata& m = data.metadata;
        QVERIFY(m.pixelPitch && m.zStep && m.wavelength && m.numericalAperture);
        WFS_VERIFY_CLOSE(*m.pixelPitch, 0.1e-6, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*m.zStep, 0.3e-6, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*m.wavelength, 605e-9, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*m.numericalAperture, 1.1, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(m.immersionIndex, 1.33, 1e-12, 0.0);
        QCOMPARE(m.origin.at("pixelPitch"), std::string("bead.ome.tif: OME-XML PhysicalSizeX"));
        QCOMPARE(m.origin.at("zStep"), std::string("bead.ome.tif: OME-XML PhysicalSizeZ"));
        QCOMPARE(m.origin.at("wavelength"), std::string("bead.ome.tif: OME-XML EmissionWavelength"));
        QCOMPARE(m.origin.at("numericalAperture"), std::string("bead.ome.tif: OME-XML LensNA"));
        QCOMPARE(m.origin.at("immersionIndex"), std::string("bead.ome.tif: OME-XML RefractiveIndex"));
        QVERIFY(m.conflicts.empty());
        // Known: with these the sampling is determined (lambda / (2 NA pitch)), where before it was "undetermined".
        WFS_VERIFY_CLOSE(samplingFromMetadata(m), 605e-9 / (2.0 * 1.1 * 0.1e-6), 1e-9, 0.0);
    }

    // Other units of OME's UnitsLength convert to metres; an Immersion name without a RefractiveIndex gives its usual
    // index, marked as assumed in its origin.
    void omeXmlUnitsConvert()
    {
        QTemporaryDir dir;
        OmeXmlParts parts;
        parts.pixels = "PhysicalSizeX=\"100\" PhysicalSizeXUnit=\"nm\" PhysicalSizeY=\"100\" PhysicalSizeYUnit=\"nm\" "
                       "PhysicalSizeZ=\"0.0003\" PhysicalSizeZUnit=\"mm\"";
        parts.channel = "EmissionWavelength=\"6050\" EmissionWavelengthUnit=\"\xc3\x85\"";
        parts.instrument = "<Instrument ID=\"Instrument:0\"><Objective ID=\"Objective:0\" LensNA=\"1.4\" Immersion=\"Oil\"/></Instrument>";
        const QString path = dir.filePath(QStringLiteral("nm.ome.tif"));
        QVERIFY(writeFile(path, omeStack(parts)));
        Dataset data;
        const auto messages = addFiles(data, {path.toStdString()});
        QVERIFY2(!anyMessage(messages, MessageLevel::Warning, ""), allText(messages).c_str());
        const DatasetMetadata& m = data.metadata;
        QVERIFY(m.pixelPitch && m.zStep && m.wavelength && m.numericalAperture);
        WFS_VERIFY_CLOSE(*m.pixelPitch, 100e-9, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*m.zStep, 0.3e-6, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*m.wavelength, 605e-9, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*m.numericalAperture, 1.4, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(m.immersionIndex, 1.518, 1e-12, 0.0);
        QCOMPARE(m.origin.at("immersionIndex"), std::string("nm.ome.tif: OME-XML Immersion=Oil (index 1.518 assumed for oil)"));
        QCOMPARE(*omeLengthInMetres(2.0, "\xce\xbcm"), 2e-6); // the Greek mu as well as the micro sign
        QVERIFY(!omeLengthInMetres(1.0, "pixel"));
    }

    // A long acquisition's OME-XML (an element per plane) exceeds 64 KiB: it is read whole, not cut into malformed XML.
    void omeXmlLongDescriptionRead()
    {
        QTemporaryDir dir;
        OmeXmlParts parts;
        parts.imageChildren = "<Description>" + std::string(200000, 'x') + "</Description>";
        parts.pixels = "PhysicalSizeX=\"0.1\" PhysicalSizeY=\"0.1\" PhysicalSizeZ=\"0.3\"";
        const QString path = dir.filePath(QStringLiteral("long.ome.tif"));
        QVERIFY(writeFile(path, omeStack(parts)));
        Dataset data;
        const auto messages = addFiles(data, {path.toStdString()});
        QVERIFY2(!anyMessage(messages, MessageLevel::Warning, ""), allText(messages).c_str());
        QVERIFY(data.metadata.zStep);
        WFS_VERIFY_CLOSE(*data.metadata.zStep, 0.3e-6, 1e-12, 0.0);
    }

    // What cannot be used is said, naming the file, and the rest still read: a unit the program does not read (the
    // value unused, and named when the field is reported unknown), pixels that are not square (X taken).
    void omeXmlUnusableValuesSaid()
    {
        QTemporaryDir dir;
        OmeXmlParts parts;
        parts.pixels = "PhysicalSizeX=\"0.1\" PhysicalSizeY=\"0.12\" PhysicalSizeZ=\"2\" PhysicalSizeZUnit=\"pixel\"";
        const QString path = dir.filePath(QStringLiteral("odd.ome.tif"));
        QVERIFY(writeFile(path, omeStack(parts)));
        Dataset data;
        const auto messages = addFiles(data, {path.toStdString()});
        const DatasetMetadata& m = data.metadata;
        QVERIFY(!m.zStep);
        QVERIFY2(anyMessage(messages, MessageLevel::Warning, "odd.ome.tif: OME-XML PhysicalSizeZ = 2 pixel: 'pixel' is not a length unit"),
                 allText(messages).c_str());
        QVERIFY(contains(ignoredNote(m, {"zStep"}), "odd.ome.tif: OME-XML PhysicalSizeZ"));
        QVERIFY2(
            anyMessage(messages, MessageLevel::Warning, "odd.ome.tif: OME-XML PhysicalSizeX (0.1 um) and PhysicalSizeY (0.12 um) differ"),
            allText(messages).c_str());
        QVERIFY(m.pixelPitch);
        WFS_VERIFY_CLOSE(*m.pixelPitch, 0.1e-6, 1e-12, 0.0);

        // Pages that interleave Z with channels are not z steps apart: said, and no z step.
        std::string interleaved = omeXml(16, 16, 3, "float");
        for (const auto& [from, to] : {std::pair<std::string, std::string>{"DimensionOrder=\"XYZCT\"", "DimensionOrder=\"XYCZT\""},
                                       std::pair<std::string, std::string>{"SizeC=\"1\"", "SizeC=\"3\""}})
            interleaved.replace(interleaved.find(from), from.size(), to);
        const QString channels = dir.filePath(QStringLiteral("xycz.ome.tif"));
        QVERIFY(writeFile(channels, QByteArray::fromStdString(tiffStackBytes(omePlanes(), interleaved))));
        Dataset other;
        const auto otherMessages = addFiles(other, {channels.toStdString()});
        QVERIFY(!other.metadata.zStep);
        QVERIFY(other.metadata.pixelPitch);
        QVERIFY2(anyMessage(otherMessages, MessageLevel::Warning, "xycz.ome.tif: OME-XML PhysicalSizeZ = 1 um: the pages interleave Z"),
                 allText(otherMessages).c_str());
    }

    // A malformed OME-XML (not well-formed, or a size that is not a number) is named and ignored as a whole; the
    // pixels still read.
    void omeXmlMalformedIgnored()
    {
        QTemporaryDir dir;
        const std::vector<Image> planes = omePlanes();
        std::string broken = omeXml(16, 16, 3, "float");
        broken.erase(broken.find("</Pixels>"), 9); // </Image> now closes <Pixels>
        const QString a = dir.filePath(QStringLiteral("broken.ome.tif"));
        QVERIFY(writeFile(a, QByteArray::fromStdString(tiffStackBytes(planes, broken))));
        OmeXmlParts parts;
        parts.pixels = "PhysicalSizeX=\"0.1um\" PhysicalSizeZ=\"0.3\"";
        const QString b = dir.filePath(QStringLiteral("text.ome.tif"));
        QVERIFY(writeFile(b, omeStack(parts)));
        const QString c = dir.filePath(QStringLiteral("cut.ome.tif")); // cut inside the root element's tag
        QVERIFY(writeFile(c, QByteArray::fromStdString(tiffStackBytes(planes, omeXml(16, 16, 3, "float").substr(0, 60)))));
        for (const QString& path : {a, b, c}) {
            Dataset data;
            const auto messages = addFiles(data, {path.toStdString()});
            const std::string name = QFileInfo(path).fileName().toStdString();
            QVERIFY2(anyMessage(messages, MessageLevel::Warning, name + ": the OME-XML is malformed (line 1, column "),
                     allText(messages).c_str());
            QVERIFY2(anyMessage(messages, MessageLevel::Warning, "; its metadata are ignored"), allText(messages).c_str());
            QVERIFY(!anyMessage(messages, MessageLevel::Error, ""));
            QCOMPARE(data.planes.size(), size_t(3));
            QCOMPARE(data.planes[1].raw.at(3, 5), planes[1].at(3, 5));
            QVERIFY(!data.metadata.pixelPitch && !data.metadata.zStep);
        }
        Dataset data;
        const auto messages = addFiles(data, {b.toStdString()});
        QVERIFY2(anyMessage(messages, MessageLevel::Warning, "PhysicalSizeX=\"0.1um\" is not a number"), allText(messages).c_str());
    }

    // The OME-XML against a sidecar that says otherwise: a conflict, both values and both origins shown, as between
    // any two sources; a value the two agree on is no conflict.
    void omeXmlConflictWithSidecar()
    {
        QTemporaryDir dir;
        OmeXmlParts parts;
        parts.pixels = "PhysicalSizeX=\"0.1\" PhysicalSizeY=\"0.1\" PhysicalSizeZ=\"0.3\"";
        const QString path = dir.filePath(QStringLiteral("c.ome.tif"));
        QVERIFY(writeFile(path, omeStack(parts)));
        QVERIFY(writeFile(path + QStringLiteral(".json"), QByteArray(R"({"z_step": "0.25um", "pixel_size": "100nm"})")));
        Dataset data;
        const auto messages = addFiles(data, {path.toStdString()});
        const DatasetMetadata& m = data.metadata;
        QCOMPARE(m.conflicts.size(), size_t(1));
        const DatasetMetadata::Conflict& c = m.conflicts.front();
        QCOMPARE(c.key, std::string("zStep"));
        WFS_VERIFY_CLOSE(c.kept, 0.25e-6, 1e-12, 0.0);
        QCOMPARE(c.keptOrigin, std::string("c.ome.tif.json"));
        WFS_VERIFY_CLOSE(c.other, 0.3e-6, 1e-12, 0.0);
        QCOMPARE(c.otherOrigin, std::string("c.ome.tif: OME-XML PhysicalSizeZ"));
        QVERIFY2(
            anyMessage(messages, MessageLevel::Warning, "zStep is 2.5e-07 (c.ome.tif.json) but 3e-07 (c.ome.tif: OME-XML PhysicalSizeZ)"),
            allText(messages).c_str());
        QCOMPARE(m.origin.at("pixelPitch"), std::string("c.ome.tif.json"));
    }

    // Micro-Manager's JSON: the image metadata's PixelSizeUm (tag 51123) and the summary's z-step_um (the block at
    // byte 40), in micrometres, with their origins; in a Micro-Manager OME-TIFF they repeat the OME-XML, which names
    // them, and the two copies are not a conflict.
    void micromanagerMetadata()
    {
        QTemporaryDir dir;
        const std::vector<Image> planes = omePlanes();
        const QString mm = dir.filePath(QStringLiteral("MMStack_Pos0.tif"));
        QVERIFY(writeFile(mm, micromanagerTiff(planes, "", R"({"PixelSizeUm":"0.108","Camera":"Demo"})",
                                               R"({"z-step_um":0.2,"PixelSize_um":0.108,"Slices":3})")));
        Dataset data;
        const auto messages = addFiles(data, {mm.toStdString()});
        QVERIFY2(!anyMessage(messages, MessageLevel::Warning, ""), allText(messages).c_str());
        QCOMPARE(data.planes.size(), size_t(3));
        QCOMPARE(data.planes[2].raw.at(3, 5), planes[2].at(3, 5));
        const DatasetMetadata& m = data.metadata;
        QVERIFY(m.pixelPitch && m.zStep);
        WFS_VERIFY_CLOSE(*m.pixelPitch, 0.108e-6, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(*m.zStep, 0.2e-6, 1e-12, 0.0);
        QCOMPARE(m.origin.at("pixelPitch"), std::string("MMStack_Pos0.tif: Micro-Manager image metadata PixelSizeUm"));
        QCOMPARE(m.origin.at("zStep"), std::string("MMStack_Pos0.tif: Micro-Manager summary z-step_um"));

        OmeXmlParts parts;
        parts.pixels = "PhysicalSizeX=\"0.1083\" PhysicalSizeY=\"0.1083\" PhysicalSizeZ=\"0.2\"";
        const QString both = dir.filePath(QStringLiteral("MMStack_Pos1.ome.tif"));
        QVERIFY(writeFile(
            both, micromanagerTiff(planes, omeXml(16, 16, 3, "uint16", parts), R"({"PixelSizeUm":0.108333})", R"({"z-step_um":0.2})")));
        Dataset ome;
        const auto omeMessages = addFiles(ome, {both.toStdString()});
        QVERIFY2(!anyMessage(omeMessages, MessageLevel::Warning, ""), allText(omeMessages).c_str());
        QVERIFY(ome.metadata.conflicts.empty());
        QCOMPARE(ome.metadata.origin.at("pixelPitch"), std::string("MMStack_Pos1.ome.tif: OME-XML PhysicalSizeX"));
        QCOMPARE(ome.metadata.origin.at("zStep"), std::string("MMStack_Pos1.ome.tif: OME-XML PhysicalSizeZ"));
    }

    void units()
    {
        QCOMPARE(*lengthFromText("633nm"), 633e-9);
        WFS_VERIFY_CLOSE(*lengthFromText(" 5.5 um"), 5.5e-6, 1e-12, 0.0);
        QCOMPARE(*lengthFromText("2.4m"), 2.4);
        QVERIFY(!lengthFromText("3 parsecs"));
        QVERIFY(!lengthFromText("nm"));
        WFS_VERIFY_CLOSE(*angleFromText("1arcsec"), M_PI / 648000.0, 1e-12, 0.0);
        QCOMPARE(*defocusFromText("-1w"), (PlaneDefocus{PlaneDefocus::Kind::Waves, -1.0}));
        QCOMPARE(*defocusFromText("0"), (PlaneDefocus{PlaneDefocus::Kind::Waves, 0.0}));
        QCOMPARE(defocusFromText("0.9um")->kind, PlaneDefocus::Kind::Length);
        QVERIFY(!defocusFromText("2"));
    }

    void backgroundCentreAndCrop()
    {
        // A spot at (40.3, 27.8) on a 100-count background with noise 3.
        Dataset data;
        DatasetPlane plane;
        plane.raw = spot(96, 80, 40.3, 27.8, 2.0, 5e4, 100.0, 3.0, 7);
        plane.raw.source = "synthetic";
        data.planes.push_back(plane);
        data.preprocess.centre = CentreMethod::Centroid;
        data.preprocess.cropSize = 32;
        const auto messages = prepare(data);
        QVERIFY(isPrepared(data));
        const PlanePreparation& p = data.preparation->planes[0];
        // Border: (96 * 80 - 84 * 68) = 1968 pixels of noise 3: the mean is good to 3 / sqrt(1968) = 0.07.
        WFS_VERIFY_CLOSE(p.background, 100.0, 0.0, 0.3);
        WFS_VERIFY_CLOSE(p.backgroundSigma, 3.0, 0.1, 0.0);
        WFS_VERIFY_CLOSE(p.centreX, 40.3, 0.0, 0.05);
        WFS_VERIFY_CLOSE(p.centreY, 27.8, 0.0, 0.05);
        QCOMPARE(p.image.width, 32);
        QCOMPARE(p.image.height, 32);
        QCOMPARE(p.cropColumn, 40 - 16);
        QCOMPARE(p.cropRow, 28 - 16);
        // The brightest prepared pixel is at the window's centre (16, 16), the model grid's centre.
        int br = 0, bc = 0;
        for (int r = 0; r < 32; ++r)
            for (int c = 0; c < 32; ++c)
                if (p.image.at(r, c) > p.image.at(br, bc)) {
                    br = r;
                    bc = c;
                }
        QCOMPARE(bc, 16);
        QCOMPARE(br, 16);
        WFS_VERIFY_CLOSE(p.signal, 5e4, 0.01, 0.0);
        QVERIFY(!p.clipped);
        QVERIFY2(messages.empty(), allText(messages).c_str());

        // Peak centring finds the brightest pixel.
        data.preprocess.centre = CentreMethod::Peak;
        prepare(data);
        QCOMPARE(data.preparation->planes[0].centreX, 40.0);
        QCOMPARE(data.preparation->planes[0].centreY, 28.0);
        // A crop too small for the spot is reported as clipping.
        data.preprocess.cropSize = 8;
        const auto clipped = prepare(data);
        QVERIFY(data.preparation->planes[0].clipped);
        QVERIFY2(anyMessage(clipped, MessageLevel::Warning, "synthetic: the PSF reaches the edge of the crop"), allText(clipped).c_str());
        // A window running off the image is padded with masked pixels, and said so.
        data.planes[0].raw = spot(96, 80, 4.0, 27.0, 1.5, 5e4, 100.0, 3.0, 8);
        data.preprocess.cropSize = 32;
        const auto padded = prepare(data);
        const PlanePreparation& q = data.preparation->planes[0];
        QCOMPARE(q.cropColumn, -12);
        QCOMPARE(q.mask[size_t(16) * 32 + 0], uint8_t(0));
        QVERIFY(std::isnan(q.image.at(16, 0)));
        QVERIFY2(anyMessage(padded, MessageLevel::Warning, "extends beyond the image"), allText(padded).c_str());
        // Preparation is deterministic (sessions rely on it).
        const Preparation again = computePreparation(data);
        QCOMPARE(again.planes[0].image.pixels.size(), q.image.pixels.size());
        for (size_t i = 0; i < q.image.pixels.size(); ++i)
            QVERIFY(again.planes[0].image.pixels[i] == q.image.pixels[i]
                    || (std::isnan(q.image.pixels[i]) && std::isnan(again.planes[0].image.pixels[i])));
        // Changing an option makes the stored preparation stale.
        data.preprocess.clipSigma = 2.5;
        QVERIFY(!isPrepared(data));
    }

    void commonCentreKeepsRelativePositions()
    {
        Dataset data;
        for (double dx : {-2.0, 0.0, 2.0}) { // a drift of 2 pixels per plane
            DatasetPlane plane;
            plane.raw = spot(64, 64, 30.0 + dx, 33.0, 2.0, 2e4, 10.0, 0.0, 1);
            data.planes.push_back(plane);
        }
        data.preprocess.centre = CentreMethod::Centroid;
        data.preprocess.cropSize = 32;
        prepare(data);
        for (const PlanePreparation& p : data.preparation->planes) {
            WFS_VERIFY_CLOSE(p.centreX, 30.0, 0.0, 0.05); // one centre: the sum's
            QCOMPARE(p.cropColumn, 14);
        }
        data.preprocess.centreEachPlane = true;
        prepare(data);
        WFS_VERIFY_CLOSE(data.preparation->planes[0].centreX, 28.0, 0.0, 0.05);
        WFS_VERIFY_CLOSE(data.preparation->planes[2].centreX, 32.0, 0.0, 0.05);
    }

    void masks()
    {
        Dataset data;
        DatasetPlane plane;
        plane.raw = spot(48, 48, 24.0, 24.0, 1.2, 6e5, 100.0, 2.0, 3);
        plane.formatMaximum = 65535.0;
        int saturated = 0;
        for (double& v : plane.raw.pixels)
            if (v >= 65535.0) {
                v = 65535.0; // a 16-bit camera clips
                ++saturated;
            }
        QVERIFY(saturated > 0);
        plane.raw.at(5, 40) = 5000.0; // an isolated hot pixel
        plane.raw.at(10, 10) = std::nan("");
        plane.raw.source = "cam";
        data.planes.push_back(plane);
        data.preprocess.maskHotPixels = true;
        data.preprocess.badPixels = {{3, 4}};
        auto messages = prepare(data);
        const PlanePreparation& p = data.preparation->planes[0];
        QCOMPARE(p.saturatedPixels, saturated);
        QCOMPARE(p.badPixels, 3); // NaN, listed, hot
        QCOMPARE(p.mask[size_t(5) * 48 + 40], uint8_t(0));
        QCOMPARE(p.mask[size_t(4) * 48 + 3], uint8_t(0));
        QCOMPARE(p.mask[size_t(10) * 48 + 10], uint8_t(0));
        QCOMPARE(p.mask[size_t(24) * 48 + 24], uint8_t(0)); // the saturated peak
        QCOMPARE(p.mask[size_t(24) * 48 + 25], uint8_t(1)); // its unsaturated neighbour
        QVERIFY(std::isnan(p.image.at(24, 24)));
        QVERIFY2(anyMessage(messages, MessageLevel::Warning, "cam: " + std::to_string(saturated) + " saturated pixel(s) masked"),
                 allText(messages).c_str());

        // A sharp but unsaturated PSF peak is not a hot pixel.
        data.planes[0].raw = spot(48, 48, 24.0, 24.0, 1.0, 1e5, 100.0, 2.0, 4);
        prepare(data);
        QCOMPARE(data.preparation->planes[0].mask[size_t(24) * 48 + 24], uint8_t(1));
        QCOMPARE(data.preparation->planes[0].badPixels, 1); // only the listed one

        // Saturation left in the fit is warned about.
        data.planes[0] = plane;
        data.preprocess.maskSaturated = false;
        messages = prepare(data);
        QCOMPARE(data.preparation->planes[0].saturatedPixels, 0);
        QVERIFY2(anyMessage(messages, MessageLevel::Warning, "not masked"), allText(messages).c_str());
        // An explicit saturation level replaces the format's.
        data.preprocess.maskSaturated = true;
        data.metadata.saturationLevel = 30000.0;
        QVERIFY(!isPrepared(data));
        prepare(data);
        QVERIFY(data.preparation->planes[0].saturatedPixels > saturated);
    }

    // Issue 45's setting added through the table alone (hot-pixel-ratio): a pixel 3.5 times as bright as its brightest
    // neighbour above the background is hot by the default ratio of 3, and kept with a ratio of 4.
    void hotPixelRatioIsTheSettings()
    {
        Dataset data;
        DatasetPlane plane;
        plane.raw = spot(48, 48, 24.0, 24.0, 1.5, 1e4, 100.0, 2.0, 7);
        plane.raw.at(8, 40) = 1500.0;
        plane.raw.at(8, 41) = 500.0;
        data.planes.push_back(plane);
        data.preprocess.maskHotPixels = true;
        prepare(data);
        QCOMPARE(data.preparation->planes[0].mask[size_t(8) * 48 + 40], uint8_t(0));
        QCOMPARE(data.preparation->planes[0].mask[size_t(8) * 48 + 41], uint8_t(1));
        data.preprocess.hotPixelRatio = 4.0;
        QVERIFY(!isPrepared(data));
        prepare(data);
        QCOMPARE(data.preparation->planes[0].mask[size_t(8) * 48 + 40], uint8_t(1));
        QCOMPARE(data.preparation->planes[0].badPixels, 0);
        data.preprocess.hotPixelRatio = 0.5; // below the table's range: refused by name
        QVERIFY(data.preprocess.firstError() && data.preprocess.firstError()->setting() == "hot-pixel-ratio");
    }

    void normalisation()
    {
        Dataset data;
        DatasetPlane plane;
        plane.raw = spot(32, 32, 16.0, 16.0, 2.0, 1e4, 50.0, 1.0, 5);
        data.planes.push_back(plane);
        data.preprocess.normalise = true;
        prepare(data);
        const PlanePreparation& p = data.preparation->planes[0];
        double sum = 0.0;
        for (size_t i = 0; i < p.image.pixels.size(); ++i)
            if (p.mask[i])
                sum += p.image.pixels[i];
        WFS_VERIFY_CLOSE(sum, 1.0, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(p.scale, 1e-4, 0.02, 0.0);
    }

    // --offset auto: camera counts = electrons / gain + bias + read noise. The border's photon transfer recovers the
    // bias when the read noise is known (and refuses without it); with a known bias and gain the Poisson read noise
    // from the border is the excess over the photon noise, not over the counts.
    void cameraOffsetFromTheBorder()
    {
        const double gain = 0.5, bias = 100.0, read = 6.0, backgroundElectrons = 40.0; // e-/count, counts, counts RMS, e-
        Dataset data;
        std::mt19937 rng(3);
        std::normal_distribution<double> readNoise(0.0, read);
        for (int k = 0; k < 3; ++k) {
            const Image light = spot(96, 96, 48.0, 48.0, 2.0, 2e5, backgroundElectrons, 0.0, 1); // electrons, noise-free
            DatasetPlane plane;
            plane.raw = Image(96, 96);
            for (size_t i = 0; i < light.pixels.size(); ++i) {
                std::poisson_distribution<long long> electrons(light.pixels[i]);
                plane.raw.pixels[i] = double(electrons(rng)) / gain + bias + readNoise(rng);
            }
            plane.raw.source = "cam[" + std::to_string(k) + "]";
            plane.defocus = {PlaneDefocus::Kind::Waves, double(k - 1)};
            data.planes.push_back(plane);
        }
        data.metadata.wavelength = 633e-9;
        data.metadata.samplingQ = 2.0;
        ModelSettings model;
        model.objective = ObjectiveKind::Poisson;
        model.gain = gain;
        model.estimateOffset = true;
        try {
            buildProblem(data, model);
            QFAIL("--offset auto without the read noise was accepted");
        } catch (const DatasetError& e) {
            QVERIFY2(contains(e.what(), "needs the read noise"), e.what());
        }
        model.readNoise = read;
        BuiltProblem built = buildProblem(data, model);
        QVERIFY2(anyMessage(built.messages, MessageLevel::Info, "camera offset"), allText(built.messages).c_str());
        // The counts lose the estimated bias: the background's start value is the background light in counts.
        qInfo("background after the estimated offset: %.2f counts (true %.1f)", built.spec.planes[0].background,
              backgroundElectrons / gain);
        WFS_VERIFY_CLOSE(built.spec.planes[0].background, backgroundElectrons / gain, 0.0, 6.0);
        // A known bias and gain: the read noise from the border.
        model.estimateOffset = false;
        model.offset = bias;
        model.readNoise = 0.0;
        built = buildProblem(data, model);
        qInfo("read noise from the border: %.3f counts (true %.1f)", built.spec.readNoise, read);
        WFS_VERIFY_CLOSE(built.spec.readNoise, read, 0.2, 0.0);
        // Weighted least squares subtracts the background: no offset is estimated, and it says so.
        model.objective = ObjectiveKind::WeightedLeastSquares;
        model.estimateOffset = true;
        built = buildProblem(data, model);
        QVERIFY2(anyMessage(built.messages, MessageLevel::Info, "offset is not estimated"), allText(built.messages).c_str());
    }

    void buildProblemErrorsAndWarnings()
    {
        Dataset data;
        for (int k = 0; k < 3; ++k) {
            DatasetPlane plane;
            plane.raw = spot(32, 32, 16.0, 16.0, 1.5, 1e4, 10.0, 1.0, unsigned(k + 1));
            plane.raw.source = "s[" + std::to_string(k) + "]";
            data.planes.push_back(plane);
        }
        auto fails = [&](const std::string& part) {
            try {
                buildProblem(data, {});
            } catch (const DatasetError& e) {
                return contains(e.what(), part) ? std::string() : std::string(e.what());
            }
            return std::string("no error");
        };
        std::string m = fails("wavelength is unknown");
        QVERIFY2(m.empty(), m.c_str());
        data.metadata.wavelength = 633e-9;
        m = fails("sampling is undetermined");
        QVERIFY2(m.empty(), m.c_str());
        data.metadata.pixelPitch = 5e-6;
        data.metadata.fNumber = 12.0; // Q = 1.52
        m = fails("s[0] (plane 0): its defocus is unknown");
        QVERIFY2(m.empty(), m.c_str());
        data.planes[0].defocus = {PlaneDefocus::Kind::Waves, -1.0};
        data.planes[1].defocus = {PlaneDefocus::Kind::Waves, 0.0};
        data.planes[2].defocus = {PlaneDefocus::Kind::Length, 20e-6};
        data.metadata.fNumber.reset();
        data.metadata.samplingQ = 1.52;
        m = fails("needs the numerical aperture or the f-number");
        QVERIFY2(m.empty(), m.c_str());
        data.metadata.fNumber = 12.0;
        BuiltProblem built = buildProblem(data, {});
        QVERIFY2(anyMessage(built.messages, MessageLevel::Warning, "below Nyquist"), allText(built.messages).c_str());
        QCOMPARE(built.spec.planes.size(), size_t(3));
        QCOMPARE(built.spec.planes[0].diversity.kind, DiversityKind::ZernikeDefocus);
        QCOMPARE(built.spec.planes[0].diversity.defocusWaves, -1.0);
        QCOMPARE(built.spec.planes[1].diversity.kind, DiversityKind::None);
        QCOMPARE(built.spec.planes[2].diversity.kind, DiversityKind::AxialParaxial);
        WFS_VERIFY_CLOSE(built.spec.planes[2].diversity.numericalAperture, 1.0 / 24.0, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(built.samplingQ, 1.52, 1e-12, 0.0); // Q given directly wins
        QCOMPARE(built.spec.grid.size, 32);
        QCOMPARE(int(built.start.size()), Problem(built.spec).parameterCount());
        // Counts (the default unit): weighted least squares with the border noise as read noise.
        QCOMPARE(built.spec.objective, ObjectiveKind::WeightedLeastSquares);
        WFS_VERIFY_CLOSE(built.spec.readNoise, 1.0, 0.15, 0.0);
        WFS_VERIFY_CLOSE(built.spec.planes[0].flux, 1e4, 0.02, 0.0);
        QCOMPARE(built.spec.planes[0].background, 0.0); // subtracted
        // Photons: Poisson on the counts as measured (background added back, and its start value).
        data.metadata.dataUnit = "photons";
        built = buildProblem(data, {});
        QCOMPARE(built.spec.objective, ObjectiveKind::Poisson);
        WFS_VERIFY_CLOSE(built.spec.planes[0].background, 10.0, 0.0, 0.2);
        WFS_VERIFY_CLOSE(built.spec.planes[0].data.at(0, 0), data.planes[0].raw.at(0, 0), 1e-12, 1e-9);
        // Normalised planes: least squares; Poisson refused.
        data.preprocess.normalise = true;
        built = buildProblem(data, {});
        QCOMPARE(built.spec.objective, ObjectiveKind::LeastSquares);
        ModelSettings poisson;
        poisson.objective = ObjectiveKind::Poisson;
        try {
            buildProblem(data, poisson);
            QFAIL("Poisson on normalised data was accepted");
        } catch (const DatasetError& e) {
            QVERIFY(contains(e.what(), "Poisson objective needs counts"));
        }
        data.preprocess.normalise = false;
        // One in-focus plane: allowed, with the sign-ambiguity warning; a grid too small is refused.
        selectPlanes(data, {1});
        built = buildProblem(data, {});
        QVERIFY2(anyMessage(built.messages, MessageLevel::Warning, "cannot tell the sign of even aberrations"),
                 allText(built.messages).c_str());
        ModelSettings small;
        small.grid = 16;
        try {
            buildProblem(data, small);
            QFAIL("a grid smaller than the data was accepted");
        } catch (const DatasetError& e) {
            QVERIFY(contains(e.what(), "smaller than the prepared planes"));
        }
        selectPlanes(data, {});
        m = fails("no plane takes part");
        QVERIFY2(m.empty(), m.c_str());
    }

    void stackDefocusFromZStep()
    {
        Dataset data;
        for (int k = 0; k < 5; ++k) {
            DatasetPlane plane;
            plane.raw = spot(32, 32, 16.0, 16.0, 1.5, 1e4, 10.0, 1.0, unsigned(k + 11));
            data.planes.push_back(plane);
        }
        data.metadata.wavelength = 605e-9;
        data.metadata.numericalAperture = 1.1;
        data.metadata.immersionIndex = 1.33;
        data.metadata.pixelPitch = 0.1e-6;
        data.metadata.zStep = 0.3e-6;
        data.metadata.focusPlane = 2;
        data.metadata.defocusModel = DefocusModel::HighNa;
        data.planes[4].defocus = {PlaneDefocus::Kind::Waves, 0.5}; // its own value wins
        selectPlanes(data, {0, 2, 4});
        const BuiltProblem built = buildProblem(data, {});
        QCOMPARE(built.planes, (std::vector<int>{0, 2, 4}));
        QCOMPARE(built.spec.planes[0].diversity.kind, DiversityKind::AxialHighNa);
        WFS_VERIFY_CLOSE(built.spec.planes[0].diversity.axialDistance, -0.6e-6, 1e-12, 0.0);
        QCOMPARE(built.spec.planes[0].diversity.immersionIndex, 1.33);
        QCOMPARE(built.spec.planes[1].diversity.kind, DiversityKind::None);
        QCOMPARE(built.spec.planes[2].diversity.kind, DiversityKind::ZernikeDefocus);
        WFS_VERIFY_CLOSE(built.samplingQ, 605e-9 / (2.0 * 1.1 * 0.1e-6), 1e-12, 0.0);
    }

    // One simulated stack (demo aberrations, odd and even terms) written as FITS, 16-bit TIFF and
    // 16-bit PNG: each must reconstruct the truth. A reader that forgot to flip rows would flip the
    // sign of the sine terms (Z5, Z7, Z9) and fail.
    void sameStackThroughEveryFormat()
    {
        PresetOptions options;
        options.grid = 64;
        options.noise = false;
        const PresetCase c = makePreset("demo", options);
        std::vector<Image> planes;
        double peak = 0.0;
        for (const PlaneSpec& p : c.spec.planes) {
            planes.push_back(p.data);
            for (double v : p.data.pixels)
                peak = std::max(peak, v);
        }
        for (Image& img : planes)
            for (double& v : img.pixels)
                v = std::round(v * 60000.0 / peak); // 16-bit counts
        QTemporaryDir dir;
        const std::string fits = dir.filePath(QStringLiteral("s.fits")).toStdString();
        writeFits(fits, planes, {}, false, false);
        const std::string tif = dir.filePath(QStringLiteral("s.tif")).toStdString();
        writeTiff(tif, planes, {});
        std::vector<std::string> pngs;
        for (size_t k = 0; k < planes.size(); ++k) {
            pngs.push_back(dir.filePath(QStringLiteral("s%1.png").arg(k)).toStdString());
            writePng(QString::fromStdString(pngs.back()), planes[k], QImage::Format_Grayscale16);
        }
        for (const std::vector<std::string>& files : {std::vector<std::string>{fits}, std::vector<std::string>{tif}, pngs}) {
            Dataset data;
            const auto messages = addFiles(data, files);
            QVERIFY2(!anyMessage(messages, MessageLevel::Error, ""), allText(messages).c_str());
            QCOMPARE(data.planes.size(), size_t(3));
            data.metadata.wavelength = 633e-9;
            data.metadata.samplingQ = 2.0;
            data.planes[0].defocus = {PlaneDefocus::Kind::Waves, -1.0};
            data.planes[1].defocus = {PlaneDefocus::Kind::Waves, 0.0};
            data.planes[2].defocus = {PlaneDefocus::Kind::Waves, 1.0};
            ModelSettings model;
            model.order = 4;
            ReconstructionRequest request;
            const BuiltProblem built = buildProblem(data, model);
            request.spec = built.spec;
            request.start = built.start;
            request.evaluator.measurePlans = false;
            request.solver.gradientTolerance = 1e-7;
            request.solver.functionTolerance = 1e-13;
            request.analysis.computeUncertainty = false;
            const FitResult r = reconstruct(request, {}, nullptr);
            for (const TruthTerm& t : c.truth.terms)
                WFS_VERIFY_CLOSE(coefficient(r, t.index), t.valueWaves, 0.0, 0.005);
        }
    }
};

QTEST_GUILESS_MAIN(TestDataset)
#include "tst_dataset.moc"
