// wavefront-cli's vectorial model from the outside: `psf` writes the high-NA 3-D PSF as FITS and as TIFF (the same
// planes in both, an even height's TIFF pages one row higher so that each file's own reading has the axis at row N / 2),
// a free dipole's PSF keeps the circular pupil's mirror symmetries about that axis at every z, odd and even, and bad optics are
// refused with status 2 and the setting named; `bench vectorial` rows carry their keys. Rows only: speed is never
// asserted.
#include "TestSupport.h"

#include "io/ImageReaders.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

class TestCliVectorial : public QObject {
    Q_OBJECT

private:
    using Run = wfs::test::ProgramRun;

    static Run cli(const QStringList& args) { return wfs::test::runProgram(QStringLiteral(WFS_CLI_PATH), args); }

    // The PSF-generator case at a test's size: NA 1.4 oil onto a water sample, 2 um deep, 5 planes.
    static QStringList psf(const QStringList& extra)
    {
        return QStringList{QStringLiteral("psf"),       QStringLiteral("--model"),
                           QStringLiteral("vectorial"), QStringLiteral("--na"),
                           QStringLiteral("1.4"),       QStringLiteral("--immersion"),
                           QStringLiteral("1.515"),     QStringLiteral("--sample-index"),
                           QStringLiteral("1.33"),      QStringLiteral("--emitter-depth"),
                           QStringLiteral("2um"),       QStringLiteral("--wavelength"),
                           QStringLiteral("600nm"),     QStringLiteral("--pixel-scale"),
                           QStringLiteral("65nm"),      QStringLiteral("--size"),
                           QStringLiteral("32"),        QStringLiteral("--psf-z=-1um:1um:500nm")}
               + extra;
    }

    QTemporaryDir m_dir;

    QString path(const QString& name) const { return m_dir.filePath(name); }

private slots:
    void fitsAndTiffHoldTheSamePlanes()
    {
        const Run fits = cli(psf({QStringLiteral("--out"), path(QStringLiteral("psf.fits"))}));
        QVERIFY2(fits.status == 0, fits.err.constData());
        const Run tiff = cli(psf({QStringLiteral("--out"), path(QStringLiteral("psf.tif"))}));
        QVERIFY2(tiff.status == 0, tiff.err.constData());
        const wfs::ImageFileContent a = wfs::readImageFile(path(QStringLiteral("psf.fits")).toStdString());
        const wfs::ImageFileContent b = wfs::readImageFile(path(QStringLiteral("psf.tif")).toStdString());
        QCOMPARE(int(a.planes.size()), 5); // -1, -0.5, 0, 0.5, 1 um
        QCOMPARE(int(b.planes.size()), 5);
        for (size_t k = 0; k < a.planes.size(); ++k) {
            QCOMPARE(a.planes[k].width, 32);
            QCOMPARE(a.planes[k].height, 32);
            QCOMPARE(b.planes[k].width, 32);
            QCOMPARE(b.planes[k].height, 32);
            // A FITS cube stores the bottom row first, a TIFF page the top one: for the axis to be at row 16 of both
            // files as stored, the TIFF page is the window one row higher. Read back into the program's frame (row 0 at
            // the bottom), its row r is the FITS plane's row r + 1.
            double peak = 0.0, largest = 0.0;
            for (int r = 0; r + 1 < 32; ++r)
                for (int c = 0; c < 32; ++c) {
                    peak = std::max(peak, a.planes[k].at(r + 1, c));
                    largest = std::max(largest, std::abs(a.planes[k].at(r + 1, c) - b.planes[k].at(r, c)));
                }
            QVERIFY2(peak > 0.0, qPrintable(QStringLiteral("plane %1 is empty").arg(k)));
            // Both formats store 32-bit floats or better: the same values to float rounding.
            QVERIFY2(largest <= 1e-6 * peak,
                     qPrintable(QStringLiteral("plane %1: FITS and TIFF differ by %2 of the peak").arg(k).arg(largest / peak)));
        }
    }

    void freeDipoleKeepsTheMirrorSymmetries()
    {
        // A free dipole (a bead) behind a circular, unaberrated pupil: every plane is unchanged by x -> -x and
        // y -> -y about the grid's centre (the pixel at N/2), whatever the depth's aberration does along z.
        const Run run = cli(psf({QStringLiteral("--out"), path(QStringLiteral("sym.fits"))}));
        QVERIFY2(run.status == 0, run.err.constData());
        const wfs::ImageFileContent content = wfs::readImageFile(path(QStringLiteral("sym.fits")).toStdString());
        QCOMPARE(int(content.planes.size()), 5);
        for (size_t k = 0; k < content.planes.size(); ++k) {
            const wfs::Image& p = content.planes[k];
            double peak = 0.0, asymmetry = 0.0;
            for (int r = 1; r < 32; ++r)
                for (int c = 1; c < 32; ++c) {
                    peak = std::max(peak, p.at(r, c));
                    asymmetry = std::max(asymmetry, std::abs(p.at(r, c) - p.at(r, 32 - c)));
                    asymmetry = std::max(asymmetry, std::abs(p.at(r, c) - p.at(32 - r, c)));
                }
            QVERIFY2(asymmetry <= 1e-5 * peak,
                     qPrintable(QStringLiteral("plane %1: mirror asymmetry %2 of the peak").arg(k).arg(asymmetry / peak)));
        }
    }

    void oddSizesKeepTheAxisInTheMiddle()
    {
        // Issue 40: 61 pixels (what many deconvolution tools expect) are made, not refused, with the axis on the middle
        // pixel (30) of both files: the free dipole's planes mirror-symmetric about it, and the TIFF's the same planes
        // (an odd height's flip maps the middle row onto itself).
        const Run fits =
            cli(psf({QStringLiteral("--size"), QStringLiteral("61"), QStringLiteral("--out"), path(QStringLiteral("odd.fits"))}));
        QVERIFY2(fits.status == 0, fits.err.constData());
        const Run tiff =
            cli(psf({QStringLiteral("--size"), QStringLiteral("61"), QStringLiteral("--out"), path(QStringLiteral("odd.tif"))}));
        QVERIFY2(tiff.status == 0, tiff.err.constData());
        const wfs::ImageFileContent a = wfs::readImageFile(path(QStringLiteral("odd.fits")).toStdString());
        const wfs::ImageFileContent b = wfs::readImageFile(path(QStringLiteral("odd.tif")).toStdString());
        QCOMPARE(int(a.planes.size()), 5);
        QCOMPARE(int(b.planes.size()), 5);
        for (size_t k = 0; k < a.planes.size(); ++k) {
            const wfs::Image& p = a.planes[k];
            QCOMPARE(p.width, 61);
            QCOMPARE(p.height, 61);
            double peak = 0.0, asymmetry = 0.0, difference = 0.0;
            for (int r = 0; r < 61; ++r)
                for (int c = 0; c < 61; ++c) {
                    peak = std::max(peak, p.at(r, c));
                    asymmetry = std::max({asymmetry, std::abs(p.at(r, c) - p.at(r, 60 - c)), std::abs(p.at(r, c) - p.at(60 - r, c))});
                    difference = std::max(difference, std::abs(p.at(r, c) - b.planes[k].at(r, c)));
                }
            QVERIFY2(asymmetry <= 1e-5 * peak,
                     qPrintable(QStringLiteral("plane %1: asymmetry about pixel 30: %2 of the peak").arg(k).arg(asymmetry / peak)));
            QVERIFY2(difference <= 1e-6 * peak,
                     qPrintable(QStringLiteral("plane %1: FITS and TIFF differ by %2 of the peak").arg(k).arg(difference / peak)));
        }
    }

    void badOpticsAreRefusedByName_data()
    {
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<QString>("named");
        QTest::newRow("NA above the immersion index")
            << QStringList{QStringLiteral("--na"), QStringLiteral("1.6")} << QStringLiteral("exceeds the immersion index");
        QTest::newRow("sample index below 1") << QStringList{QStringLiteral("--sample-index"), QStringLiteral("0.8")}
                                              << QStringLiteral("--sample-index");
        QTest::newRow("negative depth") << QStringList{QStringLiteral("--emitter-depth"), QStringLiteral("-1um")}
                                        << QStringLiteral("--emitter-depth");
        QTest::newRow("dipole angle out of range")
            << QStringList{QStringLiteral("--dipole"), QStringLiteral("200,0")} << QStringLiteral("--dipole");
    }

    void badOpticsAreRefusedByName()
    {
        QFETCH(QStringList, extra);
        QFETCH(QString, named);
        // Later flags win: the bad value replaces the good one of psf().
        const QString out = path(QStringLiteral("refused.fits"));
        const Run run = cli(psf(extra + QStringList{QStringLiteral("--out"), out}));
        QCOMPARE(run.status, 2);
        QVERIFY2(QString::fromUtf8(run.err).contains(named), run.err.constData());
        QVERIFY2(!QFileInfo::exists(out), "a refused PSF left a file");
    }

    void aMicroscopeIsNeeded()
    {
        // No NA: a telescope's settings, which the vectorial model (an objective's high-NA focus) cannot take.
        const Run run = cli({QStringLiteral("psf"), QStringLiteral("--model"), QStringLiteral("vectorial"), QStringLiteral("--wavelength"),
                             QStringLiteral("600nm"), QStringLiteral("--pixel-scale"), QStringLiteral("65nm"), QStringLiteral("--size"),
                             QStringLiteral("32"), QStringLiteral("--psf-z=-100nm:100nm:100nm"), QStringLiteral("--out"),
                             path(QStringLiteral("telescope.fits"))});
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("numerical aperture"), run.err.constData());
    }

    void benchVectorialRowsCarryTheirKeys()
    {
        const Run run = cli({QStringLiteral("bench"), QStringLiteral("vectorial"), QStringLiteral("--grid"), QStringLiteral("32"),
                             QStringLiteral("--eval-repeat"), QStringLiteral("2")});
        QVERIFY2(run.status == 0, run.err.constData());
        const QList<QByteArray> lines = run.out.trimmed().split('\n');
        QVERIFY(!lines.isEmpty());
        for (const QByteArray& line : lines) {
            const QJsonObject row = QJsonDocument::fromJson(line).object();
            QCOMPARE(row.value(QStringLiteral("grid")).toInt(), 32);
            for (const char* key : {"planes", "order", "fields", "eval_ms", "ratio_to_scalar"})
                QVERIFY2(row.contains(QLatin1String(key)),
                         qPrintable(QStringLiteral("no %1 in %2").arg(QLatin1String(key), QString::fromUtf8(line))));
            QVERIFY(row.value(QStringLiteral("eval_ms")).toDouble() > 0.0);
        }
    }
};

QTEST_GUILESS_MAIN(TestCliVectorial)
#include "tst_clivectorial.moc"
