// The desktop's views of stacks that are not square (issue 47 item 4): the demo's planes cut to 56 rows x 64 columns
// and to 64 rows x 56 columns, written as a FITS cube with their metadata, opened and fitted in the main window. The
// data, model and residual views hold images of the file's width and height, the data view's pixels are the file's
// less the preparation's per-plane offset (a constant: a flipped or transposed view would scatter it), every view
// draws square pixels, and the fit's coefficients are wavefront-cli's on the same file with the same order.
#include "IsolatedSettings.h"
#include "TestSupport.h"

#include "ImageView.h"
#include "MainWindow.h"
#include "PlanesPanel.h"
#include "SetupPanel.h"

#include "engine/Presets.h"
#include "io/Fits.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace wfs;
using namespace wfs::ui;

namespace {

constexpr int kGuardMs = 300000;

bool waitFor(QSignalSpy& spy)
{
    return spy.count() > 0 || spy.wait(kGuardMs);
}

} // namespace

class TestNonSquareViews : public QObject {
    Q_OBJECT

private:
    wfs::test::IsolatedSettings m_settings; // declared first: outlives the windows
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_nonsquareviews")), qPrintable(QSettings().fileName()));
        QVERIFY(m_dir.isValid());
    }

    void viewsKeepTheShape_data()
    {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::newRow("56 rows x 64 columns") << 64 << 56;
        QTest::newRow("64 rows x 56 columns") << 56 << 64;
    }

    void viewsKeepTheShape()
    {
        QFETCH(int, width);
        QFETCH(int, height);
        PresetOptions po;
        po.grid = 64;
        po.order = 4;
        const PresetCase demo = makePreset("demo", po);
        std::vector<Image> planes;
        std::vector<FitsKeyword> keywords = {{"WAVELENG", demo.spec.wavelength, ""},
                                             {"SAMPLING", demo.spec.grid.spacing * demo.spec.grid.size / 2.0, ""},
                                             {"BUNIT", std::string("photons"), ""},
                                             {"RDNOISE", demo.spec.readNoise, ""}};
        for (size_t k = 0; k < demo.spec.planes.size(); ++k) {
            const Image& full = demo.spec.planes[k].data;
            Image cut(width, height);
            const int r0 = (full.height - height) / 2, c0 = (full.width - width) / 2;
            for (int r = 0; r < height; ++r)
                for (int c = 0; c < width; ++c)
                    cut.at(r, c) = full.at(r0 + r, c0 + c);
            planes.push_back(cut);
            keywords.push_back({"DEFOCUS" + std::to_string(k + 1), demo.spec.planes[k].diversity.defocusWaves, ""});
        }
        const QString path = m_dir.filePath(QStringLiteral("psf-%1x%2.fits").arg(width).arg(height));
        QVERIFY(test::writeFile(path, QByteArray::fromStdString(fitsBytes(planes, keywords))));

        MainWindow window;
        window.resize(1280, 800);
        window.show();
        QSignalSpy loaded(&window, &MainWindow::dataLoaded);
        window.openFiles({path});
        QVERIFY(waitFor(loaded));
        ModelSettings model = window.setupPanel()->modelSettings();
        model.order = 4;
        window.setupPanel()->setModelSettings(model);
        QSignalSpy finished(&window, &MainWindow::fitFinished);
        window.startFit();
        QVERIFY2(waitFor(finished), "the fit did not finish");
        QVERIFY(window.result());
        QVERIFY(window.showTab(QStringLiteral("planes")));
        QTest::qWait(50);

        auto* panel = window.findChild<PlanesPanel*>();
        QVERIFY(panel);
        for (ImageView* view : {panel->dataView(), panel->modelView(), panel->residualView()}) {
            QVERIFY(view->hasImage());
            QCOMPARE(view->image().width, width);
            QCOMPARE(view->image().height, height);
            if (view->isVisible())
                QVERIFY2(std::abs(view->pixelAspect() - 1.0) < 0.02, qPrintable(QString::number(view->pixelAspect())));
        }
        // The plane shown and the file's plane of that index: the same pixels less a constant.
        const Image& shown = panel->dataView()->image();
        const Image& file = planes[size_t(panel->currentPlane())];
        double low = 1e300, high = -1e300, peak = 0.0;
        for (size_t i = 0; i < file.pixels.size(); ++i) {
            low = std::min(low, file.pixels[i] - shown.pixels[i]);
            high = std::max(high, file.pixels[i] - shown.pixels[i]);
            peak = std::max(peak, file.pixels[i]);
        }
        QVERIFY2(high - low <= 1e-9 * peak, qPrintable(QString::number((high - low) / peak)));

        // wavefront-cli on the same file with the same order: the same coefficients.
        const QString json = m_dir.filePath(QStringLiteral("cli-%1x%2.json").arg(width).arg(height));
        const test::ProgramRun cli =
            test::runProgram(QStringLiteral(WFS_CLI_PATH),
                             {QStringLiteral("reconstruct"), QStringLiteral("--input"), path, QStringLiteral("--order"),
                              QStringLiteral("4"), QStringLiteral("--json"), json, QStringLiteral("--quiet"), QStringLiteral("--force")});
        QVERIFY2(cli.status == 0, cli.err.constData());
        QFile f(json);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray expected = QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("coefficients")).toArray();
        const auto& got = window.result()->coefficients;
        QCOMPARE(size_t(expected.size()), got.size());
        for (size_t i = 0; i < got.size(); ++i) {
            const QJsonObject e = expected[int(i)].toObject();
            QCOMPARE(got[i].index, e.value(QStringLiteral("index")).toInt());
            QVERIFY2(std::abs(got[i].waves - e.value(QStringLiteral("value_waves")).toDouble()) < 1e-6,
                     qPrintable(QStringLiteral("Noll %1: desktop %2, CLI %3")
                                    .arg(got[i].index)
                                    .arg(got[i].waves)
                                    .arg(e.value(QStringLiteral("value_waves")).toDouble())));
        }
    }
};

QTEST_MAIN(TestNonSquareViews)
#include "tst_nonsquareviews.moc"
