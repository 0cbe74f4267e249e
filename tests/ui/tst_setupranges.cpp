// Issue 27 item 1: the setup panel's boxes offer what core accepts, no less and no more: the pupil geometry's boxes
// (obscuration, spider vanes and their width) end at the last value core's model check (ModelSettings::geometryError,
// the command line's and a session's check) accepts, the next value a box could show being refused; the immersion
// index box spans core's plausible range (base/Units.h), as the Imaging model box's do.
#include "SetupPanel.h"

#include "base/Units.h"
#include "settings/ModelSettings.h"

#include <QDoubleSpinBox>
#include <QSpinBox>
#include <QTest>

#include <cmath>
#include <functional>

using namespace wfs;
using namespace wfs::ui;

namespace {

bool geometryAccepts(const std::function<void(ModelSettings&)>& set)
{
    ModelSettings model;
    set(model);
    return !model.geometryError();
}

} // namespace

class TestSetupRanges : public QObject {
    Q_OBJECT

private slots:
    void geometryBoxesEndWhereCoreDoes_data()
    {
        QTest::addColumn<QString>("box");
        QTest::newRow("obscuration") << QStringLiteral("field_obscuration");
        QTest::newRow("spider width") << QStringLiteral("field_spider_width");
    }

    void geometryBoxesEndWhereCoreDoes()
    {
        QFETCH(QString, box);
        SetupPanel panel;
        auto* spin = panel.findChild<QDoubleSpinBox*>(box);
        QVERIFY(spin);
        const double step = std::pow(10.0, -spin->decimals()); // the finest value the box shows
        const auto set = [&](double v) {
            return [box, v](ModelSettings& m) { (box == QLatin1String("field_obscuration") ? m.obscuration : m.spiderWidth) = v; };
        };
        QCOMPARE(spin->minimum(), 0.0);
        QVERIFY(geometryAccepts(set(spin->minimum())));
        QVERIFY(!geometryAccepts(set(spin->minimum() - step)));
        QVERIFY2(geometryAccepts(set(spin->maximum())), qPrintable(QString::number(spin->maximum())));
        QVERIFY2(!geometryAccepts(set(spin->maximum() + step)), qPrintable(QString::number(spin->maximum() + step)));
    }

    void spiderCountEndsWhereCoreDoes()
    {
        SetupPanel panel;
        auto* spin = panel.findChild<QSpinBox*>(QStringLiteral("field_spiders"));
        QVERIFY(spin);
        const auto set = [](int n) { return [n](ModelSettings& m) { m.spiderCount = n; }; };
        QCOMPARE(spin->minimum(), 0);
        QVERIFY(!geometryAccepts(set(-1)));
        QVERIFY2(geometryAccepts(set(spin->maximum())), qPrintable(QString::number(spin->maximum())));
        QVERIFY2(!geometryAccepts(set(spin->maximum() + 1)), qPrintable(QString::number(spin->maximum() + 1)));
        QCOMPARE(spin->maximum(), 64); // the number core's message states ("from 0 to 64")
    }

    void immersionSpansCoresPlausibleRange()
    {
        SetupPanel panel;
        auto* spin = panel.findChild<QDoubleSpinBox*>(QStringLiteral("immersionSpin"));
        QVERIFY(spin);
        const PlausibleRange range = plausibleRange(Setting::ImmersionIndex);
        QCOMPARE(spin->minimum(), range.lo);
        QCOMPARE(spin->maximum(), range.hi);
        QVERIFY(plausibilityError(Setting::ImmersionIndex, spin->maximum()).empty());
        QVERIFY(!plausibilityError(Setting::ImmersionIndex, spin->maximum() + 0.001).empty());
    }
};

QTEST_MAIN(TestSetupRanges)
#include "tst_setupranges.moc"
