// The third hostile round (issue 28 items 9, 11 and 12) in core: a stack's headers read without its pixels
// and the run's settings checked on them, PNG decoded a row at a time (interlaced files too), and the
// messages that named the wrong cause.
#include "ImageTestFiles.h"
#include "TestSupport.h"

#include "engine/Workflow.h"
#include "io/Dataset.h"
#include "io/ImageReaders.h"
#include "io/Session.h"

#include <QTemporaryDir>

#include <png.h>

#include <cstdio>

using namespace wfs;
using namespace wfs::test;

namespace {

ReadLimits headersOnly()
{
    ReadLimits limits;
    limits.headersOnly = true;
    return limits;
}

// A PNG written with libpng itself, Adam7-interlaced, 16-bit grey (Qt's writer does not interlace).
bool writeInterlacedPng(const std::string& path, const Image& img)
{
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return false;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        std::fclose(f);
        return false;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, png_uint_32(img.width), png_uint_32(img.height), 16, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_ADAM7,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    std::vector<std::vector<png_byte>> rows(size_t(img.height), std::vector<png_byte>(size_t(img.width) * 2));
    std::vector<png_bytep> pointers;
    for (int r = 0; r < img.height; ++r) {
        for (int c = 0; c < img.width; ++c) {
            const auto v = std::uint16_t(img.at(img.height - 1 - r, c)); // PNG's first row is the image's top
            rows[size_t(r)][size_t(c) * 2] = png_byte(v >> 8);
            rows[size_t(r)][size_t(c) * 2 + 1] = png_byte(v & 0xff);
        }
        pointers.push_back(rows[size_t(r)].data());
    }
    png_write_image(png, pointers.data());
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return std::fclose(f) == 0;
}

// A Gaussian spot on a flat background, the same in every plane (row 0 at the bottom).
Image spot(int size, double sigma)
{
    Image img(size, size, 100.0);
    for (int r = 0; r < size; ++r)
        for (int c = 0; c < size; ++c)
            img.at(r, c) += 5000.0 * std::exp(-((r - size / 2) * (r - size / 2) + (c - size / 2) * (c - size / 2)) / (2.0 * sigma * sigma));
    return img;
}

} // namespace

class TestHostile3 : public QObject {
    Q_OBJECT

private slots:
    // Item 9: headers only: every plane's size and source and the keywords, no pixels, in each format.
    void headersOnlyReadsSizesAndKeywordsWithoutPixels()
    {
        QTemporaryDir dir;
        const std::string fits = dir.filePath(QStringLiteral("s.fits")).toStdString();
        writeFitsBitpix(fits, {spot(48, 2), spot(48, 3), spot(48, 4)}, 16);
        const ImageFileContent header = readImageFile(fits, headersOnly());
        const ImageFileContent full = readImageFile(fits);
        QCOMPARE(header.planes.size(), size_t(3));
        for (size_t k = 0; k < 3; ++k) {
            QCOMPARE(header.planes[k].width, 48);
            QCOMPARE(header.planes[k].height, 48);
            QVERIFY(header.planes[k].pixels.empty());
            QCOMPARE(header.planes[k].source, full.planes[k].source);
        }
        QCOMPARE(header.numbers, full.numbers);
        QCOMPARE(header.formatMaximum, full.formatMaximum);

        const std::string tif = dir.filePath(QStringLiteral("s.tif")).toStdString();
        TiffLayout layout;
        writeTiff(tif, {spot(40, 2), spot(40, 3)}, layout);
        const ImageFileContent pages = readImageFile(tif, headersOnly());
        QCOMPARE(pages.planes.size(), size_t(2));
        QCOMPARE(pages.planes[1].width, 40);
        QVERIFY(pages.planes[1].pixels.empty());
        QCOMPARE(pages.planes[1].source, readImageFile(tif).planes[1].source);

        const QString png = dir.filePath(QStringLiteral("s.png"));
        writePng(png, spot(36, 2), QImage::Format_Grayscale16);
        const ImageFileContent image = readImageFile(png.toStdString(), headersOnly());
        QCOMPARE(image.planes.size(), size_t(1));
        QCOMPARE(image.planes[0].width, 36);
        QVERIFY(image.planes[0].pixels.empty());
        QCOMPARE(image.bitsPerSample, 16);

        // Through the data layer: the planes take part (nothing to judge them by), no checksum is made.
        Dataset data;
        const std::vector<DatasetMessage> messages = addFiles(data, {fits}, headersOnly());
        QVERIFY2(messagesText(messages, MessageLevel::Error).empty(), messagesText(messages, MessageLevel::Error).c_str());
        QCOMPARE(usedPlanes(data), (std::vector<int>{0, 1, 2}));
        QVERIFY(data.files.front().sha256.empty());
    }

    // Item 9: the settings a fit needs are checked on the headers, with prepareRun's messages.
    void settingsAreCheckedOnTheHeaders()
    {
        QTemporaryDir dir;
        const std::string fits = dir.filePath(QStringLiteral("s.fits")).toStdString();
        writeFitsBitpix(fits, {spot(48, 2), spot(48, 3), spot(48, 4)}, 16);
        Session session;
        addFiles(session.dataset, {fits}, headersOnly());
        auto refusal = [&]() -> std::string {
            try {
                checkSettingsBeforePixels(session);
            } catch (const std::exception& e) {
                return e.what();
            }
            return {};
        };
        QVERIFY2(refusal().find("the wavelength is unknown") != std::string::npos, refusal().c_str());
        session.dataset.metadata.wavelength = 633e-9;
        session.dataset.metadata.samplingQ = 2.0;
        QVERIFY2(refusal().find("s.fits[0,0] (plane 0): its defocus is unknown") != std::string::npos, refusal().c_str());
        session.dataset.metadata.zStep = 0.5e-6;
        QVERIFY2(refusal().find("numerical aperture or the f-number") != std::string::npos, refusal().c_str());
        session.dataset.metadata.numericalAperture = 0.5;
        QVERIFY2(refusal().empty(), refusal().c_str());
        session.solver.threads = 0;
        QVERIFY2(refusal().find("threads") != std::string::npos, refusal().c_str());
        session.solver.threads = 1;
        selectPlanes(session.dataset, {1}); // one plane needs no defocus
        session.dataset.metadata.zStep.reset();
        QVERIFY2(refusal().empty(), refusal().c_str());

        // The same dataset read whole passes prepareRun, so the early check refuses nothing a fit accepts.
        Session whole;
        addFiles(whole.dataset, {fits});
        whole.dataset.metadata = session.dataset.metadata;
        selectPlanes(whole.dataset, {1});
        const PreparedRun run = prepareRun(whole);
        QCOMPARE(run.problem.planes, (std::vector<int>{1}));
    }

    // Item 12: PNG rows are decoded one at a time into the image; an interlaced file (whose passes need the
    // whole image) reads the same values.
    void pngRowByRowAndInterlacedReadTheSame()
    {
        QTemporaryDir dir;
        const Image img = asymmetricImage(37, 23, 60000.0);
        const QString plain = dir.filePath(QStringLiteral("p.png"));
        writePng(plain, img, QImage::Format_Grayscale16);
        const std::string interlaced = dir.filePath(QStringLiteral("i.png")).toStdString();
        QVERIFY(writeInterlacedPng(interlaced, img));
        const ImageFileContent a = readImageFile(plain.toStdString());
        const ImageFileContent b = readImageFile(interlaced);
        QCOMPARE(a.planes.front().pixels, img.pixels);
        QCOMPARE(b.planes.front().pixels, img.pixels);
        // Truncated in its rows: refused with the file named, never partly filled.
        QFile whole(QString::fromStdString(interlaced));
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QByteArray bytes = whole.readAll();
        const QString cut = dir.filePath(QStringLiteral("cut.png"));
        QVERIFY(writeFile(cut, bytes.left(bytes.size() - 40)));
        try {
            readImageFile(cut.toStdString());
            QFAIL("a truncated PNG was read");
        } catch (const ImageReadError& e) {
            QVERIFY2(QByteArray(e.what()).contains("cut.png: not a readable PNG file"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestHostile3)
#include "tst_hostile3.moc"
