// The desktop program's coarse-to-fine stages are refused as the command line's are (issue 27): every stage typed
// reaches core's one check (SolverSettings::stagesError), which names the field, instead of the setup panel
// dropping a bad stage unseen.
#include "SetupPanel.h"

#include <QLineEdit>
#include <QSpinBox>
#include <QTest>

#include <algorithm>

using namespace wfs;
using namespace wfs::ui;

namespace {

bool names(const std::vector<SettingProblem>& problems, const std::string& setting)
{
    return std::any_of(problems.begin(), problems.end(),
                       [&](const SettingProblem& p) { return p.setting == setting && p.level == MessageLevel::Error; });
}

} // namespace

class TestSetupStages : public QObject {
    Q_OBJECT
private slots:
    void badStagesAreRefusedNotDropped()
    {
        SetupPanel panel;
        ModelSettings model;
        model.order = 4;
        panel.setModelSettings(model);
        auto* stages = panel.findChild<QLineEdit*>(QStringLiteral("stagesEdit"));
        QVERIFY(stages);
        const Dataset noData;

        stages->setText(QStringLiteral("2"));
        QCOMPARE(panel.solverSettings().stages, (std::vector<int>{2, 4})); // then the order above
        QVERIFY(!names(panel.checkSettings(noData), "stages"));

        // A stage at or above the order: the command line refuses --stages 2,4,4, so does the panel.
        stages->setText(QStringLiteral("2,4"));
        QCOMPARE(panel.solverSettings().stages, (std::vector<int>{2, 4, 4}));
        QVERIFY(names(panel.checkSettings(noData), "stages"));
        QVERIFY(panel.problemText("stages").contains(QLatin1String("increasing")));

        stages->setText(QStringLiteral("0,2"));
        QVERIFY(names(panel.checkSettings(noData), "stages"));
        stages->setText(QStringLiteral("3,2"));
        QVERIFY(names(panel.checkSettings(noData), "stages"));

        // Text that is no order is named with the field, not read as no stages.
        stages->setText(QStringLiteral("2,x"));
        QVERIFY(names(panel.checkSettings(noData), "stages"));
        QVERIFY(panel.problemText("stages").contains(QLatin1String("2,x")));

        stages->clear();
        QVERIFY(panel.solverSettings().stages.empty());
        QVERIFY(!names(panel.checkSettings(noData), "stages"));
    }

    void solverFieldsStartAtTheSettingsDefaults()
    {
        SetupPanel panel;
        const SolverSettings defaults;
        const SolverSettings shown = panel.solverSettings();
        QCOMPARE(shown.gradientTolerance, defaults.gradientTolerance);
        QCOMPARE(shown.functionTolerance, defaults.functionTolerance);
        QCOMPARE(panel.findChild<QSpinBox*>(QStringLiteral("orderSpin"))->maximum(), zernike::kMaxOrder);
    }
};

QTEST_MAIN(TestSetupStages)
#include "tst_setupstages.moc"
