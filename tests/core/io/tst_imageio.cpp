// Image readers: round trips for every format, bit depth and layout (write with the format's own
// library, read with ours: same pixels, same place), orientation (row 0 at the bottom after reading
// top-down TIFF and PNG), and bad input (truncated, corrupt, unsupported, absurd sizes) with messages
// that name the file and the problem.
#include "ImageTestFiles.h"
#include "TestSupport.h"

#include "io/Fits.h"
#include "io/ImageReaders.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <cmath>

using namespace wfs;
using namespace wfs::test;

namespace {

bool samePixels(const Image& a, const Image& b, double tolerance = 0.0)
{
    if (a.width != b.width || a.height != b.height)
        return false;
    for (size_t i = 0; i < a.pixels.size(); ++i)
        if (!(std::abs(a.pixels[i] - b.pixels[i]) <= tolerance))
            return false;
    return true;
}

std::string failure(const std::function<void()>& f)
{
    try {
        f();
    } catch (const ImageReadError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("wrong exception type: ") + e.what();
    }
    return {};
}

QByteArray fileBytes(const QString& path)
{
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    return f.readAll();
}

void writeBytes(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(bytes);
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

class TestImageIo : public QObject {
    Q_OBJECT

private slots:
    void formatDetection()
    {
        QTemporaryDir dir;
        const QString tif = dir.filePath(QStringLiteral("a.dat"));
        writeTiff(tif.toStdString(), {asymmetricImage(4, 3)}, {});
        QCOMPARE(detectImageFormat(tif.toStdString()), ImageFormat::Tiff); // by content, whatever the name
        const QString png = dir.filePath(QStringLiteral("b.bin"));
        writePng(png, asymmetricImage(4, 3), QImage::Format_Grayscale8);
        QCOMPARE(detectImageFormat(png.toStdString()), ImageFormat::Png);
        const QString fits = dir.filePath(QStringLiteral("c"));
        writeFitsBitpix(fits.toStdString(), {asymmetricImage(4, 3)}, -32);
        QCOMPARE(detectImageFormat(fits.toStdString()), ImageFormat::Fits);
        QCOMPARE(detectImageFormat(dir.filePath(QStringLiteral("missing.tiff")).toStdString()), ImageFormat::Tiff); // by name
        QCOMPARE(detectImageFormat(dir.filePath(QStringLiteral("missing.xyz")).toStdString()), ImageFormat::Unknown);
    }

    void fitsRoundTrip_data()
    {
        QTest::addColumn<int>("bitpix");
        QTest::addColumn<double>("maximum");
        QTest::newRow("8-bit") << 8 << 255.0;
        QTest::newRow("16-bit unsigned (BZERO 32768)") << 16 << 65535.0;
        QTest::newRow("32-bit") << 32 << 2147483647.0;
        QTest::newRow("float32") << -32 << 0.0;
        QTest::newRow("float64") << -64 << 0.0;
    }
    void fitsRoundTrip()
    {
        QFETCH(int, bitpix);
        QFETCH(double, maximum);
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("x.fits")).toStdString();
        Image a = asymmetricImage(13, 9), b = asymmetricImage(13, 9);
        for (double& v : b.pixels)
            v = bitpix == 16 ? v * 250.0 : v + 1.0; // 16-bit: values above 32767 need the BZERO offset
        writeFitsBitpix(path, {a, b}, bitpix);
        const ImageFileContent c = readImageFile(path);
        QCOMPARE(c.format, ImageFormat::Fits);
        QCOMPARE(c.planes.size(), size_t(2));
        QVERIFY(samePixels(c.planes[0], a));
        QVERIFY(samePixels(c.planes[1], b));
        QCOMPARE(c.planes[0].at(0, 1), a.at(0, 1)); // FITS row 0 is the first stored row: the bottom
        QCOMPARE(c.bitsPerSample, std::abs(bitpix));
        QCOMPARE(c.floatingPoint, bitpix < 0);
        QCOMPARE(c.formatMaximum, maximum);
        QCOMPARE(c.planes[1].source, path + "[0,1]");
    }

    void tiffRoundTrip_data()
    {
        QTest::addColumn<int>("bits");
        QTest::addColumn<int>("format");
        QTest::addColumn<int>("compression");
        QTest::addColumn<bool>("tiled");
        const QList<QPair<int, int>> types = {{8, SAMPLEFORMAT_UINT}, {16, SAMPLEFORMAT_UINT},   {32, SAMPLEFORMAT_UINT},
                                              {16, SAMPLEFORMAT_INT}, {32, SAMPLEFORMAT_IEEEFP}, {64, SAMPLEFORMAT_IEEEFP}};
        const QList<QPair<int, const char*>> compressions = {{COMPRESSION_NONE, "none"},
                                                             {COMPRESSION_LZW, "lzw"},
                                                             {COMPRESSION_ADOBE_DEFLATE, "deflate"},
                                                             {COMPRESSION_PACKBITS, "packbits"}};
        for (const auto& [bits, format] : types)
            for (const auto& [compression, name] : compressions)
                for (bool tiled : {false, true}) {
                    const char* kind = format == SAMPLEFORMAT_IEEEFP ? "float" : format == SAMPLEFORMAT_INT ? "int" : "uint";
                    QTest::addRow("%s%d %s %s", kind, bits, name, tiled ? "tiles" : "strips") << bits << format << compression << tiled;
                }
    }
    void tiffRoundTrip()
    {
        QFETCH(int, bits);
        QFETCH(int, format);
        QFETCH(int, compression);
        QFETCH(bool, tiled);
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("x.tif")).toStdString();
        // 37 x 23: not a multiple of the 16 x 16 tiles or the 8-row strips.
        std::vector<Image> pages = {asymmetricImage(37, 23), asymmetricImage(37, 23), asymmetricImage(37, 23)};
        for (double& v : pages[1].pixels)
            v += 3.0;
        for (double& v : pages[2].pixels)
            v = format == SAMPLEFORMAT_IEEEFP ? v * 0.25 - 10.0 : format == SAMPLEFORMAT_INT ? v - 100.0 : v;
        TiffLayout layout;
        layout.bits = bits;
        layout.sampleFormat = format;
        layout.compression = compression;
        layout.tiled = tiled;
        writeTiff(path, pages, layout);
        const ImageFileContent c = readImageFile(path);
        QCOMPARE(c.format, ImageFormat::Tiff);
        QCOMPARE(c.planes.size(), size_t(3));
        for (size_t k = 0; k < 3; ++k)
            QVERIFY2(samePixels(c.planes[k], pages[k]), qPrintable(QStringLiteral("page %1").arg(k)));
        QCOMPARE(c.bitsPerSample, bits);
        QCOMPARE(c.floatingPoint, format == SAMPLEFORMAT_IEEEFP);
        QVERIFY(c.warnings.empty());
        QCOMPARE(c.planes[2].source, path + "[2]");
    }

    void tiffOrientationAndLayouts()
    {
        QTemporaryDir dir;
        const Image img = asymmetricImage(20, 11);
        // Orientation tag bottom-left: the stored first row is the bottom one, so nothing is flipped.
        const std::string bottomUp = dir.filePath(QStringLiteral("bottom.tif")).toStdString();
        TiffLayout layout;
        layout.orientation = ORIENTATION_BOTLEFT;
        writeTiff(bottomUp, {img}, layout);
        QVERIFY(samePixels(readTiff(bottomUp).planes[0], img));

        // Colour, contiguous and separate planes: luminance of (v, v/2, v/4), with a warning.
        for (bool separate : {false, true}) {
            const std::string rgb = dir.filePath(separate ? QStringLiteral("rgb-sep.tif") : QStringLiteral("rgb.tif")).toStdString();
            TiffLayout colour;
            colour.bits = 8;
            colour.samplesPerPixel = 3;
            colour.separate = separate;
            writeTiff(rgb, {img}, colour);
            const ImageFileContent c = readTiff(rgb);
            QCOMPARE(c.warnings.size(), size_t(1));
            QVERIFY(contains(c.warnings[0], "luminance"));
            QVERIFY(contains(c.warnings[0], rgb));
            for (int r = 0; r < img.height; ++r)
                for (int col = 0; col < img.width; ++col) {
                    const double v = img.at(r, col);
                    WFS_VERIFY_CLOSE(c.planes[0].at(r, col), 0.2126 * v + 0.7152 * std::floor(v / 2) + 0.0722 * std::floor(v / 4), 1e-12,
                                     1e-9);
                }
        }
        // Grey plus alpha: the first sample, and a warning that the others are ignored.
        const std::string ga = dir.filePath(QStringLiteral("grey-alpha.tif")).toStdString();
        TiffLayout greyAlpha;
        greyAlpha.bits = 16;
        greyAlpha.samplesPerPixel = 2;
        greyAlpha.photometric = PHOTOMETRIC_MINISBLACK;
        writeTiff(ga, {img}, greyAlpha);
        const ImageFileContent c = readTiff(ga);
        QVERIFY(samePixels(c.planes[0], img));
        QCOMPARE(c.warnings.size(), size_t(1));
        QVERIFY(contains(c.warnings[0], "only the first"));
    }

    void pngRoundTrip()
    {
        QTemporaryDir dir;
        const Image img = asymmetricImage(17, 10);
        const QString grey8 = dir.filePath(QStringLiteral("g8.png"));
        writePng(grey8, img, QImage::Format_Grayscale8);
        ImageFileContent c = readImageFile(grey8.toStdString());
        QCOMPARE(c.format, ImageFormat::Png);
        QVERIFY(samePixels(c.planes[0], img)); // includes the flip: PNG rows run top-down
        QCOMPARE(c.bitsPerSample, 8);
        QCOMPARE(c.formatMaximum, 255.0);
        QVERIFY(c.warnings.empty());

        Image wide = img;
        for (double& v : wide.pixels)
            v *= 250.0; // up to 62500: needs 16 bits
        const QString grey16 = dir.filePath(QStringLiteral("g16.png"));
        writePng(grey16, wide, QImage::Format_Grayscale16);
        c = readPng(grey16.toStdString());
        QVERIFY(samePixels(c.planes[0], wide));
        QCOMPARE(c.bitsPerSample, 16);
        QCOMPARE(c.formatMaximum, 65535.0);

        const QString indexed = dir.filePath(QStringLiteral("indexed.png"));
        writePng(indexed, img, QImage::Format_Indexed8);
        c = readPng(indexed.toStdString());
        QVERIFY(samePixels(c.planes[0], img, 1e-9)); // grey palette: luminance = the grey value

        const QString rgb = dir.filePath(QStringLiteral("rgb.png"));
        writePng(rgb, img, QImage::Format_RGB32);
        c = readPng(rgb.toStdString());
        QVERIFY(!c.warnings.empty());
        QVERIFY(contains(c.warnings[0], "luminance"));
        const double v = img.at(3, 5);
        WFS_VERIFY_CLOSE(c.planes[0].at(3, 5), 0.2126 * v + 0.7152 * std::floor(v / 2) + 0.0722 * std::floor(v / 4), 1e-12, 1e-9);
    }

    void missingAndUnknownFiles()
    {
        QTemporaryDir dir;
        std::string m = failure([&] { readImageFile(dir.filePath(QStringLiteral("absent.tif")).toStdString()); });
        QVERIFY2(contains(m, "absent.tif") && contains(m, "not found"), m.c_str());
        const QString text = dir.filePath(QStringLiteral("notes.txt"));
        writeBytes(text, "hello, these are not pixels");
        m = failure([&] { readImageFile(text.toStdString()); });
        QVERIFY2(contains(m, "notes.txt") && contains(m, "unsupported file format"), m.c_str());
        m = failure([&] { readImageFile(dir.path().toStdString()); });
        QVERIFY2(contains(m, "folder") || contains(m, "unsupported"), m.c_str());
    }

    void truncatedAndCorruptTiff()
    {
        QTemporaryDir dir;
        const QString good = dir.filePath(QStringLiteral("stack.tif"));
        std::vector<Image> pages(4, asymmetricImage(64, 64));
        writeTiff(good.toStdString(), pages, {});
        const QByteArray bytes = fileBytes(good);

        // Cut inside the third page's pixels: the pages before it stay, with a warning.
        const QString cut = dir.filePath(QStringLiteral("cut.tif"));
        writeBytes(cut, bytes.left(8 + 2 * 64 * 64 * 2 + 3000));
        const ImageFileContent c = readTiff(cut.toStdString());
        QVERIFY2(c.planes.size() >= 1 && c.planes.size() < 4, qPrintable(QString::number(c.planes.size())));
        QVERIFY(samePixels(c.planes[0], pages[0]));
        QVERIFY(!c.warnings.empty());
        QVERIFY2(contains(c.warnings.back(), "cut.tif") && contains(c.warnings.back(), "kept the"), c.warnings.back().c_str());

        // Cut inside the first page: nothing readable.
        const QString early = dir.filePath(QStringLiteral("early.tif"));
        writeBytes(early, bytes.left(2000));
        std::string m = failure([&] { readTiff(early.toStdString()); });
        QVERIFY2(contains(m, "early.tif") && !m.empty(), m.c_str());

        // A TIFF header followed by garbage.
        const QString garbage = dir.filePath(QStringLiteral("garbage.tif"));
        writeBytes(garbage, QByteArray("II*\0\x08\0\0\0", 8) + QByteArray(200, '\x7f'));
        m = failure([&] { readTiff(garbage.toStdString()); });
        QVERIFY2(contains(m, "garbage.tif") && contains(m, "TIFF"), m.c_str());
    }

    void unsupportedTiffSamples()
    {
        QTemporaryDir dir;
        const Image img = asymmetricImage(8, 8, 15);
        // Half floats: a sample format the reader refuses by name.
        const std::string half = dir.filePath(QStringLiteral("half.tif")).toStdString();
        const QByteArray payload(8 * 8 * 2, '\0');
        const QByteArray raw = rawTiff({{256, 3, 1, 8},
                                        {257, 3, 1, 8},
                                        {258, 3, 1, 16},
                                        {259, 3, 1, 1},
                                        {262, 3, 1, 1},
                                        {273, 4, 1, 8 + 2 + 12 * 10 + 4},
                                        {277, 3, 1, 1},
                                        {278, 3, 1, 8},
                                        {279, 4, 1, 128},
                                        {339, 3, 1, 3}},
                                       payload);
        writeBytes(QString::fromStdString(half), raw);
        std::string m = failure([&] { readTiff(half); });
        QVERIFY2(contains(m, "half.tif") && contains(m, "16-bit floating-point samples are not supported"), m.c_str());
        // 4-bit grey.
        const std::string nibble = dir.filePath(QStringLiteral("nibble.tif")).toStdString();
        const QByteArray raw4 = rawTiff({{256, 3, 1, 8},
                                         {257, 3, 1, 8},
                                         {258, 3, 1, 4},
                                         {259, 3, 1, 1},
                                         {262, 3, 1, 1},
                                         {273, 4, 1, 8 + 2 + 12 * 9 + 4},
                                         {277, 3, 1, 1},
                                         {278, 3, 1, 8},
                                         {279, 4, 1, 32}},
                                        QByteArray(32, '\x11'));
        writeBytes(QString::fromStdString(nibble), raw4);
        m = failure([&] { readTiff(nibble); });
        QVERIFY2(contains(m, "nibble.tif") && contains(m, "4-bit unsigned samples are not supported"), m.c_str());
    }

    void absurdSizesAreRefusedBeforeAllocation()
    {
        QTemporaryDir dir;
        // TIFF claiming 60000 x 60000 16-bit pixels (7.2 GB) in a 200-byte file.
        const QString tif = dir.filePath(QStringLiteral("huge.tif"));
        writeBytes(tif, rawTiff({{256, 4, 1, 60000},
                                 {257, 4, 1, 60000},
                                 {258, 3, 1, 16},
                                 {259, 3, 1, 1},
                                 {262, 3, 1, 1},
                                 {273, 4, 1, 200},
                                 {277, 3, 1, 1},
                                 {278, 4, 1, 60000},
                                 {279, 4, 1, 64}},
                                QByteArray(64, '\0')));
        std::string m = failure([&] { readTiff(tif.toStdString()); });
        QVERIFY2(contains(m, "huge.tif") && contains(m, "60000 x 60000") && contains(m, "more than this program loads"), m.c_str());

        // FITS header claiming 100000 x 100000 doubles, without the data.
        QByteArray header;
        for (const char* card : {"SIMPLE  =                    T", "BITPIX  =                  -64", "NAXIS   =                    2",
                                 "NAXIS1  =               100000", "NAXIS2  =               100000", "END"})
            header += QByteArray(card).leftJustified(80, ' ');
        header = header.leftJustified(2880, ' ');
        const QString fits = dir.filePath(QStringLiteral("huge.fits"));
        writeBytes(fits, header);
        m = failure([&] { readImageFile(fits.toStdString()); });
        QVERIFY2(contains(m, "huge.fits") && contains(m, "100000 x 100000") && contains(m, "more than this program loads"), m.c_str());

        // PNG IHDR claiming 100000 x 100000.
        const QString png = dir.filePath(QStringLiteral("huge.png"));
        writeBytes(png, pngWithHeader(100000, 100000));
        m = failure([&] { readPng(png.toStdString()); });
        QVERIFY2(contains(m, "huge.png") && (contains(m, "100000 x 100000") || contains(m, "exceeds")), m.c_str());

        // Limits are the caller's: a normal file refused by a small limit says so too.
        const QString small = dir.filePath(QStringLiteral("small.tif"));
        writeTiff(small.toStdString(), {asymmetricImage(40, 30)}, {});
        ReadLimits limits;
        limits.maxPlanePixels = 1000;
        m = failure([&] { readImageFile(small.toStdString(), limits); });
        QVERIFY2(contains(m, "40 x 30"), m.c_str());
    }

    void zeroSizeImages()
    {
        QTemporaryDir dir;
        QByteArray header;
        for (const char* card : {"SIMPLE  =                    T", "BITPIX  =                   16", "NAXIS   =                    2",
                                 "NAXIS1  =                    0", "NAXIS2  =                   10", "END"})
            header += QByteArray(card).leftJustified(80, ' ');
        const QString fits = dir.filePath(QStringLiteral("empty.fits"));
        writeBytes(fits, header.leftJustified(2880, ' '));
        std::string m = failure([&] { readImageFile(fits.toStdString()); });
        QVERIFY2(contains(m, "empty.fits") && (contains(m, "zero-size") || contains(m, "no image data")), m.c_str());
        const QString png = dir.filePath(QStringLiteral("empty.png"));
        writeBytes(png, pngWithHeader(0, 10));
        m = failure([&] { readPng(png.toStdString()); });
        QVERIFY2(contains(m, "empty.png"), m.c_str());
    }

    void truncatedAndCorruptPng()
    {
        QTemporaryDir dir;
        const QString good = dir.filePath(QStringLiteral("good.png"));
        writePng(good, asymmetricImage(64, 64), QImage::Format_Grayscale16);
        const QByteArray bytes = fileBytes(good);
        const QString cut = dir.filePath(QStringLiteral("cut.png"));
        writeBytes(cut, bytes.left(bytes.size() / 2));
        std::string m = failure([&] { readPng(cut.toStdString()); });
        QVERIFY2(contains(m, "cut.png") && contains(m, "not a readable PNG"), m.c_str());
        QByteArray flipped = bytes;
        flipped[40] = char(flipped[40] ^ 0x55); // inside the first chunk after IHDR: a CRC error
        const QString corrupt = dir.filePath(QStringLiteral("corrupt.png"));
        writeBytes(corrupt, flipped);
        m = failure([&] { readPng(corrupt.toStdString()); });
        QVERIFY2(contains(m, "corrupt.png"), m.c_str());
    }

    void truncatedFitsCubeKeepsEarlierPlanes()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("cube.fits")).toStdString();
        std::vector<Image> planes(4, asymmetricImage(64, 64));
        writeFitsBitpix(path, planes, -64);
        const QByteArray bytes = fileBytes(QString::fromStdString(path));
        const QString cut = dir.filePath(QStringLiteral("cut.fits"));
        writeBytes(cut, bytes.left(2880 + 64 * 64 * 8 * 2 + 100)); // two whole planes and a bit
        const ImageFileContent c = readImageFile(cut.toStdString());
        QVERIFY2(c.planes.size() == 2, qPrintable(QString::number(c.planes.size())));
        QVERIFY(samePixels(c.planes[1], planes[1]));
        QCOMPARE(c.warnings.size(), size_t(1));
        QVERIFY2(contains(c.warnings[0], "cut.fits") && contains(c.warnings[0], "plane 2"), c.warnings[0].c_str());
    }

    // Inputs that once crashed a reader under the fuzzer (tests/data/fuzz/<format>/): each must now
    // read or fail with a message, in every build (the sanitizer build included).
    void fuzzRegressionInputs()
    {
        int count = 0;
        for (const QString& format : {QStringLiteral("tiff"), QStringLiteral("png"), QStringLiteral("fits")}) {
            const QDir dir(dataPath(QStringLiteral("fuzz/") + format));
            for (const QString& name : dir.entryList(QDir::Files | QDir::Hidden)) {
                if (name == QLatin1String(".gitkeep")) // a placeholder that keeps the folder in git, not an input
                    continue;
                const QByteArray bytes = fileBytes(dir.filePath(name));
                const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.constData());
                ReadLimits limits;
                limits.maxPixels = 1 << 22;
                limits.maxPlanePixels = 1 << 20;
                try {
                    const ImageFileContent c =
                        format == QLatin1String("tiff")  ? readTiffMemory(data, size_t(bytes.size()), name.toStdString(), limits)
                        : format == QLatin1String("png") ? readPngMemory(data, size_t(bytes.size()), name.toStdString(), limits)
                                                         : readFitsMemory(data, size_t(bytes.size()), name.toStdString(), limits);
                    for (const Image& plane : c.planes)
                        QCOMPARE(plane.pixels.size(), size_t(plane.width) * size_t(plane.height));
                } catch (const ImageReadError& e) {
                    QVERIFY2(contains(e.what(), name.toStdString()), e.what());
                }
                ++count;
            }
        }
        QVERIFY(count >= 3);
        QVERIFY2(count >= 4, qPrintable(QStringLiteral("%1 regression inputs; tests/data/fuzz/fits alone holds four").arg(count)));
    }

    void memoryReadersMatchFileReaders()
    {
        QTemporaryDir dir;
        const QString tif = dir.filePath(QStringLiteral("m.tif"));
        writeTiff(tif.toStdString(), {asymmetricImage(9, 7)}, {});
        const QByteArray t = fileBytes(tif);
        QVERIFY(samePixels(readTiffMemory(reinterpret_cast<const std::uint8_t*>(t.constData()), size_t(t.size()), "mem").planes[0],
                           asymmetricImage(9, 7)));
        const QString fits = dir.filePath(QStringLiteral("m.fits"));
        writeFitsBitpix(fits.toStdString(), {asymmetricImage(9, 7)}, 16);
        const QByteArray f = fileBytes(fits);
        QVERIFY(samePixels(readFitsMemory(reinterpret_cast<const std::uint8_t*>(f.constData()), size_t(f.size()), "mem").planes[0],
                           asymmetricImage(9, 7)));
        std::string m = failure([&] { readFitsMemory(reinterpret_cast<const std::uint8_t*>("SIMPLE"), 6, "tiny"); });
        QVERIFY2(contains(m, "tiny"), m.c_str());
    }
};

QTEST_GUILESS_MAIN(TestImageIo)
#include "tst_imageio.moc"
