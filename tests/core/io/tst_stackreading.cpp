// Reading a stack (issue 28 items 9, 11 and 12) in core: a stack's headers read without its pixels
// and the run's settings checked on them, PNG decoded a row at a time (interlaced files too), and the
// messages that name the cause (lost or odd pages, unusable header values, files of the wrong kind).
#include "ImageTestFiles.h"
#include "TestSupport.h"

#include "engine/Workflow.h"
#include "io/Dataset.h"
#include "io/ImageReaders.h"
#include "io/ResultJson.h"
#include "io/Session.h"
#include "io/SettingOptions.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>

#include <sys/stat.h>

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

// Options as a front end gives them, by name.
struct MapOptions : OptionSource {
    std::map<std::string, std::string> values;
    bool has(const char* name) const override { return values.count(name) > 0; }
    std::string value(const char* name) const override { return values.at(name); }
    std::string spell(const char* name) const override { return std::string("--") + name; }
};

// A FITS file of one 16 x 16 plane (BITPIX -64) whose header holds `cards` (80 columns each, padded here).
QByteArray fitsWithCards(const std::vector<QByteArray>& cards)
{
    QByteArray header;
    for (const QByteArray& card : {QByteArray("SIMPLE  =                    T"), QByteArray("BITPIX  =                  -64"),
                                   QByteArray("NAXIS   =                    2"), QByteArray("NAXIS1  =                   16"),
                                   QByteArray("NAXIS2  =                   16")})
        header += card.leftJustified(80, ' ');
    for (const QByteArray& card : cards)
        header += card.leftJustified(80, ' ');
    header += QByteArray("END").leftJustified(80, ' ');
    header = header.leftJustified(int((header.size() + 2879) / 2880 * 2880), ' ');
    QByteArray data;
    for (int i = 0; i < 256; ++i) {
        const double v = (i == 136 ? 1000.0 : 1.0) + i % 3;
        quint64 bits;
        std::memcpy(&bits, &v, 8);
        for (int b = 7; b >= 0; --b)
            data += char((bits >> (8 * b)) & 0xff);
    }
    return header + data.leftJustified(2880, '\0');
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

class TestStackReading : public QObject {
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

    // Item 11: a stack that lost pages, or holds a page of another size, is said as such where the defocus list
    // no longer matches (before: only "--defocus has 3 entries but 2 planes take part").
    void lostAndOddPagesAreNamedWhereTheDefocusListMisses()
    {
        QTemporaryDir dir;
        const std::string tif = dir.filePath(QStringLiteral("t.tif")).toStdString();
        TiffLayout layout;
        writeTiff(tif, {spot(64, 2), spot(64, 3), spot(64, 4)}, layout);
        QFile file(QString::fromStdString(tif));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        file.close();
        const QString cut = dir.filePath(QStringLiteral("cut.tif"));
        QVERIFY(writeFile(cut, bytes.left(bytes.size() * 3 / 4)));
        MapOptions options;
        options.values = {{"defocus", "-1w,0,1w"}};
        Dataset truncated;
        addFiles(truncated, {cut.toStdString()});
        QVERIFY(truncated.planes.size() < 3);
        QVERIFY(!truncated.files.front().damage.empty());
        const std::string lost = errorOf([&] { applyMetadataOptions(options, truncated); });
        QVERIFY2(lost.find("--defocus has 3 entries but " + std::to_string(truncated.planes.size()) + " planes take part")
                         != std::string::npos
                     && lost.find("cut.tif: page " + std::to_string(truncated.planes.size())) != std::string::npos
                     && lost.find("truncated") != std::string::npos,
                 lost.c_str());

        const std::string odd = dir.filePath(QStringLiteral("odd.tif")).toStdString();
        writeTiff(odd, {spot(64, 2), spot(48, 3), spot(64, 4)}, layout);
        Dataset mixed;
        addFiles(mixed, {odd});
        const std::string other = errorOf([&] { applyMetadataOptions(options, mixed); });
        QVERIFY2(other.find("3 plane(s) read from the files, 1 of them not taking part") != std::string::npos, other.c_str());
    }

    // Item 11: a FITS metadata keyword whose value cannot be used is named with that value where the quantity is
    // missing (before: "the wavelength is unknown", "its defocus is unknown", nothing about the header).
    void unusableHeaderValuesAreNamedWithTheirValue()
    {
        QTemporaryDir dir;
        struct Case {
            QByteArray card;
            std::string expected;
        };
        for (const Case& c : {Case{"WAVELENG= abc", "keyword WAVELENG = 'abc' is not a number"},
                              Case{"WAVELENG= 6.33E-07x", "keyword WAVELENG = '6.33E-07x' is not a number"},
                              Case{"WAVELENG= -6.33E-07", "keyword WAVELENG = -6.33e-07 is not positive"}}) {
            const QString path = dir.filePath(QStringLiteral("w.fits"));
            QVERIFY(writeFile(path, fitsWithCards({c.card, "SAMPLING=                   2."})));
            Dataset data;
            const std::string warnings = messagesText(addFiles(data, {path.toStdString()}), MessageLevel::Warning);
            QVERIFY2(warnings.find(c.expected) != std::string::npos, warnings.c_str());
            const std::string why = errorOf([&] { checkedSamplingQ(data.metadata, ModelSettings{}); });
            QVERIFY2(why.find("the wavelength is unknown") != std::string::npos && why.find(c.expected) != std::string::npos, why.c_str());
        }
        const QString sampling = dir.filePath(QStringLiteral("s.fits"));
        QVERIFY(writeFile(sampling, fitsWithCards({"WAVELENG=             6.33E-07", "SAMPLING= T"})));
        Dataset data;
        addFiles(data, {sampling.toStdString()});
        const std::string why = errorOf([&] { checkedSamplingQ(data.metadata, ModelSettings{}); });
        QVERIFY2(why.find("keyword SAMPLING = 'T' is not a number") != std::string::npos, why.c_str());

        // DEFOCUSk of a plane in a stack: its defocus is unknown, and why.
        const std::string fits = dir.filePath(QStringLiteral("d.fits")).toStdString();
        writeFitsBitpix(fits, {spot(32, 2), spot(32, 3)}, -64);
        Dataset stack;
        addFiles(stack, {fits});
        stack.metadata.ignored["defocus[1]"] = "d.fits: keyword DEFOCUS2 = 'one' is not a number";
        stack.planes[0].defocus = {PlaneDefocus::Kind::Waves, -1.0};
        const std::string plane = errorOf([&] { checkPlaneDefocus(stack, ModelSettings{}, 1, false); });
        QVERIFY2(plane.find("its defocus is unknown") != std::string::npos
                     && plane.find("DEFOCUS2 = 'one' is not a number (ignored)") != std::string::npos,
                 plane.c_str());
    }

    // Item 11: a truth value that is not a number, a NUL in a session's text, and files of the wrong kind are said
    // as what they are.
    void wrongValuesAndFilesAreSaidAsWhatTheyAre()
    {
        const QJsonObject truth{
            {QStringLiteral("coefficients"),
             QJsonArray{QJsonObject{{QStringLiteral("index"), 4}, {QStringLiteral("value_waves"), QStringLiteral("x")}}}}};
        const std::string x = errorOf([&] { truthFromJson(truth, QStringLiteral("t.json")); });
        QVERIFY2(x.find("t.json: index 4: value_waves \"x\" is not a number") != std::string::npos, x.c_str());
        const QJsonObject noIndex{{QStringLiteral("coefficients"), QJsonArray{QJsonObject{{QStringLiteral("index"), QStringLiteral("four")},
                                                                                          {QStringLiteral("value_waves"), 0.1}}}}};
        const std::string four = errorOf([&] { truthFromJson(noIndex, QStringLiteral("t.json")); });
        QVERIFY2(four.find("coefficient index \"four\" is not a number") != std::string::npos, four.c_str());

        QJsonObject session{{QStringLiteral("format"), QStringLiteral("wavefront-studio-session")}, {QStringLiteral("format_version"), 1}};
        session.insert(QStringLiteral("inputs"),
                       QJsonArray{QJsonObject{{QStringLiteral("path"), QStringLiteral("a") + QChar(0) + QStringLiteral("b.fits")}}});
        const std::string nul = errorOf([&] { sessionFromJson(session, "s.json"); });
        QVERIFY2(nul.find("inputs[0].path") != std::string::npos && nul.find("NUL") != std::string::npos, nul.c_str());

        QTemporaryDir dir;
        const std::string fifo = dir.filePath(QStringLiteral("s.json")).toStdString();
        QCOMPARE(::mkfifo(fifo.c_str(), 0600), 0);
        const std::string opened = errorOf([&] { openSession(fifo); });
        QVERIFY2(opened.find("is not a regular file (a FIFO, device or socket); give a session file (JSON)") != std::string::npos,
                 opened.c_str());
    }
};

QTEST_GUILESS_MAIN(TestStackReading)
#include "tst_stackreading.moc"
