// Issue 27 item 1: the setup panel's metadata boxes (and the read noise) end where core's plausible ranges do
// (base/Units.h), so a value core accepts from a file or a session is shown as it is, never clipped, and the box's
// top is itself accepted. The pupil geometry's boxes end at core's named limits (settings/ModelSettings.h).
#include "SetupPanel.h"

#include "base/Units.h"
#include "settings/ModelSettings.h"

#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QTest>

#include <cmath>

using namespace wfs;
using namespace wfs::ui;

class TestSetupMetadataRanges : public QObject {
    Q_OBJECT

private slots:
    void boxesEndAtCoresRange_data()
    {
        QTest::addColumn<QString>("box");
        QTest::addColumn<int>("setting");
        QTest::addColumn<double>("scale"); // SI units per box unit
        QTest::newRow("wavelength") << QStringLiteral("wavelengthSpin") << int(Setting::Wavelength) << 1e-9;
        QTest::newRow("pixel pitch") << QStringLiteral("pixelPitchSpin") << int(Setting::PixelPitch) << 1e-6;
        QTest::newRow("f-number") << QStringLiteral("fNumberSpin") << int(Setting::FNumber) << 1.0;
        QTest::newRow("na") << QStringLiteral("naSpin") << int(Setting::NumericalAperture) << 1.0;
        QTest::newRow("sampling") << QStringLiteral("samplingQSpin") << int(Setting::SamplingQ) << 1.0;
        QTest::newRow("z step") << QStringLiteral("zStepSpin") << int(Setting::ZStep) << 1e-6;
        QTest::newRow("read noise") << QStringLiteral("field_read_noise") << int(Setting::ReadNoise) << 1.0;
    }

    void boxesEndAtCoresRange()
    {
        QFETCH(QString, box);
        QFETCH(int, setting);
        QFETCH(double, scale);
        SetupPanel panel;
        auto* spin = panel.findChild<QDoubleSpinBox*>(box);
        QVERIFY(spin);
        const Setting s = Setting(setting);
        const double top = spin->maximum() * scale;
        // The top is core's, to rounding of the unit conversion (1e-12 relative).
        QVERIFY2(std::abs(top - plausibleRange(s).hi) <= 1e-12 * plausibleRange(s).hi,
                 qPrintable(QStringLiteral("%1: box ends at %2, core at %3").arg(box).arg(top).arg(plausibleRange(s).hi)));
        QVERIFY2(plausibilityError(s, spin->maximum() * scale * (1.0 - 1e-12)).empty(), qPrintable(box));
        QVERIFY(!plausibilityError(s, plausibleRange(s).hi * 1.01).empty());
        // The bottom is 0 ("unknown" for the metadata, "from the data" for the read noise): never below core's.
        QCOMPARE(spin->minimum(), 0.0);
        QVERIFY(spin->minimum() <= plausibleRange(s).lo);
        // A value from a file near core's top is shown, not clipped to an older, narrower box.
        spin->setValue(0.5 * plausibleRange(s).hi / scale);
        QCOMPARE(spin->value(), 0.5 * plausibleRange(s).hi / scale);
    }

    void geometryBoxesEndAtNamedLimits()
    {
        SetupPanel panel;
        auto* obscuration = panel.findChild<QDoubleSpinBox*>(QStringLiteral("field_obscuration"));
        auto* spiders = panel.findChild<QSpinBox*>(QStringLiteral("field_spiders"));
        auto* width = panel.findChild<QDoubleSpinBox*>(QStringLiteral("field_spider_width"));
        QVERIFY(obscuration && spiders && width);
        QCOMPARE(spiders->maximum(), kMaxSpiderCount);
        QVERIFY(obscuration->maximum() < kObscurationBelow);
        QVERIFY(width->maximum() < kSpiderWidthBelow);
        QVERIFY(obscuration->maximum() + std::pow(10.0, -obscuration->decimals()) >= kObscurationBelow - 1e-12);
        QVERIFY(width->maximum() + std::pow(10.0, -width->decimals()) >= kSpiderWidthBelow - 1e-12);
        QVERIFY(spiders->toolTip().contains(QString::number(kMaxSpiderCount)));
    }
};

QTEST_MAIN(TestSetupMetadataRanges)
#include "tst_setupmetadataranges.moc"
