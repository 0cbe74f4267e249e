// Stacks that are not square (issue 47 item 4): the demo's planes cut to 56 rows x 64 columns and to 64 rows x 56
// columns, written by the formats' own libraries (CFITSIO; libtiff, strips and tiles; Qt's PNG writer; OME-TIFF and
// Micro-Manager's layout), read back by every reader as the same planes (width, height and every pixel, row 0 at the
// bottom); fitted by wavefront-cli from each format to the coefficients of the same planes written as FITS; and the
// exports (model and residual FITS) of the data's shape, model + residual = the data less its offset, pixel for
// pixel. A transposed or flipped plane anywhere changes a shape or a pixel. (The Python module on the same shapes:
// python/tests/test_shapes.py.)
#include "TestSupport.h"
#include "core/ImageTestFiles.h"
#include "core/OmeTestFiles.h"

#include "engine/Presets.h"
#include "io/ImageReaders.h"
#include "io/TiffWriter.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <fitsio.h>

#include <cmath>

using namespace wfs;

namespace {

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// (index, waves) of a result JSON's coefficients.
std::vector<std::pair<int, double>> coefficients(const QString& path)
{
    std::vector<std::pair<int, double>> out;
    for (const QJsonValue& v : QJsonDocument::fromJson(readAll(path)).object().value(QStringLiteral("coefficients")).toArray())
        out.emplace_back(v.toObject().value(QStringLiteral("index")).toInt(), v.toObject().value(QStringLiteral("value_waves")).toDouble());
    return out;
}

// A FITS cube read with CFITSIO itself: its axes and its pixels, plane by plane (row 0 first, as FITS stores it).
struct FitsCube {
    long axes[3] = {0, 0, 0};
    int naxis = 0;
    std::vector<double> pixels;
};
FitsCube readFitsCube(const QString& path)
{
    FitsCube cube;
    int status = 0;
    fitsfile* f = nullptr;
    if (fits_open_image(&f, path.toLocal8Bit().constData(), READONLY, &status))
        return cube;
    fits_get_img_dim(f, &cube.naxis, &status);
    fits_get_img_size(f, 3, cube.axes, &status);
    const long count = cube.axes[0] * cube.axes[1] * (cube.naxis > 2 ? cube.axes[2] : 1);
    cube.pixels.resize(size_t(count));
    long first[3] = {1, 1, 1};
    fits_read_pix(f, TDOUBLE, first, count, nullptr, cube.pixels.data(), nullptr, &status);
    fits_close_file(f, &status);
    if (status)
        cube.naxis = -status;
    return cube;
}

} // namespace

class TestShapes : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    // The demo's three planes (grid 64) cut to width x height about their centre, scaled to a 16-bit camera's counts
    // (peak 60000) and rounded, so that every format holds them exactly.
    static std::vector<Image> planes(int width, int height)
    {
        PresetOptions po;
        po.grid = 64;
        po.order = 4;
        const PresetCase demo = makePreset("demo", po);
        double peak = 0.0;
        for (const PlaneSpec& p : demo.spec.planes)
            for (double v : p.data.pixels)
                peak = std::max(peak, v);
        std::vector<Image> out;
        for (const PlaneSpec& p : demo.spec.planes) {
            const Image& full = p.data;
            Image cut(width, height);
            const int r0 = (full.height - height) / 2, c0 = (full.width - width) / 2;
            for (int r = 0; r < height; ++r)
                for (int c = 0; c < width; ++c)
                    cut.at(r, c) = std::round(std::max(0.0, full.at(r0 + r, c0 + c)) * 60000.0 / peak);
            out.push_back(cut);
        }
        return out;
    }

    // wavefront-cli reconstruct on `inputs` with the demo's metadata; the result JSON's path.
    QString reconstruct(const QStringList& inputs, const QString& name, const QStringList& extra = {})
    {
        QStringList args{QStringLiteral("reconstruct")};
        for (const QString& in : inputs)
            args << QStringLiteral("--input") << in;
        args << QStringLiteral("--wavelength") << QStringLiteral("633nm") << QStringLiteral("--sampling") << QStringLiteral("2")
             << QStringLiteral("--defocus=-1w,0,1w") << QStringLiteral("--data-unit") << QStringLiteral("counts")
             << QStringLiteral("--order") << QStringLiteral("4") << QStringLiteral("--max-iterations") << QStringLiteral("40")
             << QStringLiteral("--json") << path(name + QStringLiteral(".json")) << QStringLiteral("--quiet") << QStringLiteral("--force")
             << extra;
        const test::ProgramRun run = test::runProgramIn(QStringLiteral(WFS_CLI_PATH), args, m_dir.path());
        if (run.status != 0)
            qWarning("%s", run.err.constData());
        return run.status == 0 ? path(name + QStringLiteral(".json")) : QString();
    }

private slots:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void everyReaderAndTheCli_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::newRow("56 rows x 64 columns") << 64 << 56;
        QTest::newRow("64 rows x 56 columns") << 56 << 64;
    }

    void everyReaderAndTheCli()
    {
        QFETCH(int, width);
        QFETCH(int, height);
        const std::vector<Image> source = planes(width, height);
        const QString tag = QStringLiteral("%1x%2").arg(width).arg(height);
        const auto file = [&](const char* name) { return path(tag + QLatin1String(name)); };

        // Every layout, written by the formats' own libraries.
        test::writeFitsBitpix(file("-f64.fits").toStdString(), source, -64);
        test::writeFitsBitpix(file("-u16.fits").toStdString(), source, 16);
        test::writeTiff(file("-strips.tif").toStdString(), source, test::TiffLayout{});
        test::TiffLayout tiles;
        tiles.tiled = true; // 16 x 16 tiles: 56 is not a multiple of 16, so the last tiles are partial
        test::writeTiff(file("-tiles.tif").toStdString(), source, tiles);
        QStringList pngs;
        for (size_t k = 0; k < source.size(); ++k) {
            pngs << file("-z%1.png").arg(k);
            test::writePng(pngs.back(), source[k], QImage::Format_Grayscale16);
        }
        QVERIFY(test::writeFile(
            file(".ome.tif"), QByteArray::fromStdString(tiffStackBytes(source, test::omeXml(width, height, int(source.size()), "float")))));
        QVERIFY(test::writeFile(file("-mm.ome.tif"),
                                test::micromanagerTiff(source, test::omeXml(width, height, int(source.size()), "uint16"), "", "")));

        // Every reader: the same planes, pixel for pixel.
        const QStringList stacks = {file("-f64.fits"),  file("-u16.fits"), file("-strips.tif"),
                                    file("-tiles.tif"), file(".ome.tif"),  file("-mm.ome.tif")};
        for (const QString& name : stacks) {
            const ImageFileContent content = readImageFile(name.toStdString());
            QCOMPARE(content.planes.size(), source.size());
            for (size_t k = 0; k < source.size(); ++k) {
                QCOMPARE(content.planes[k].width, width);
                QCOMPARE(content.planes[k].height, height);
                QVERIFY2(content.planes[k].pixels == source[k].pixels, qPrintable(name + QStringLiteral(" plane %1").arg(k)));
            }
        }
        for (size_t k = 0; k < source.size(); ++k) {
            const ImageFileContent content = readImageFile(pngs[int(k)].toStdString());
            QCOMPARE(content.planes.size(), size_t(1));
            QCOMPARE(content.planes.front().width, width);
            QCOMPARE(content.planes.front().height, height);
            QVERIFY2(content.planes.front().pixels == source[k].pixels, qPrintable(pngs[int(k)]));
        }

        // wavefront-cli on the FITS cube, with its model and residual exports; then on every other format.
        const QString model = file("-model.fits"), residual = file("-residual.fits");
        const QString reference = reconstruct({file("-f64.fits")}, tag + QStringLiteral("-f64"),
                                              {QStringLiteral("--model-out"), model, QStringLiteral("--residual-out"), residual});
        QVERIFY(!reference.isEmpty());
        const auto expected = coefficients(reference);
        QVERIFY(expected.size() >= 10);
        for (const auto& [inputs, name] :
             {std::pair{QStringList{file("-u16.fits")}, QStringLiteral("-u16")},
              std::pair{QStringList{file("-strips.tif")}, QStringLiteral("-strips")},
              std::pair{QStringList{file("-tiles.tif")}, QStringLiteral("-tiles")},
              std::pair{QStringList{file(".ome.tif")}, QStringLiteral("-ome")}, std::pair{pngs, QStringLiteral("-png")}}) {
            const QString json = reconstruct(inputs, tag + name);
            QVERIFY2(!json.isEmpty(), qPrintable(name));
            const auto got = coefficients(json);
            QCOMPARE(got.size(), expected.size());
            for (size_t i = 0; i < got.size(); ++i) {
                QCOMPARE(got[i].first, expected[i].first);
                QVERIFY2(std::abs(got[i].second - expected[i].second) <= 1e-12,
                         qPrintable(QStringLiteral("%1 Noll %2: %3 vs the FITS cube's %4")
                                        .arg(name)
                                        .arg(got[i].first)
                                        .arg(got[i].second)
                                        .arg(expected[i].second)));
            }
        }

        // The exports: the data's shape (NAXIS1 = width, NAXIS2 = height), and model + residual = the data.
        const FitsCube m = readFitsCube(model), r = readFitsCube(residual);
        for (const FitsCube* cube : {&m, &r}) {
            QCOMPARE(cube->naxis, 3);
            QCOMPARE(cube->axes[0], long(width));
            QCOMPARE(cube->axes[1], long(height));
            QCOMPARE(cube->axes[2], long(source.size()));
        }
        // model + residual is the data less the camera offset the preparation takes off each plane (a constant): its
        // spread over the plane is rounding (1e-9 of the peak), where a flipped or transposed export scatters it by
        // the PSF's own contrast.
        double worst = 0.0;
        for (size_t k = 0; k < source.size(); ++k) {
            double low = 1e300, high = -1e300;
            for (size_t i = 0; i < source[k].pixels.size(); ++i) {
                const size_t at = k * source[k].pixels.size() + i;
                const double offset = source[k].pixels[i] - (m.pixels[at] + r.pixels[at]);
                low = std::min(low, offset);
                high = std::max(high, offset);
            }
            worst = std::max(worst, high - low);
        }
        QVERIFY2(worst <= 1e-9 * 60000.0, qPrintable(QString::number(worst)));
    }
};

QTEST_MAIN(TestShapes)
#include "tst_shapes.moc"
