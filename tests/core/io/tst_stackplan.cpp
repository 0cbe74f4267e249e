// Opening a stack (issue 23): the plane proposal from per-plane statistics, the z step from an
// instrument's acquisition log, contradicting metadata kept as conflicts, and the list of every missing
// or invalid setting at once (settingsProblems), which must agree with what the workflow refuses.
#include "TestSupport.h"

#include "engine/Workflow.h"
#include "io/SettingsProblems.h"
#include "io/StackPlan.h"
#include "io/TiffWriter.h"

#include <QFile>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>

using namespace wfs;

namespace {

// Statistics of a stack whose peak falls off away from `focus`.
std::vector<PlaneStatistics> stackWithFocus(int planes, int focus)
{
    std::vector<PlaneStatistics> stats;
    for (int k = 0; k < planes; ++k) {
        PlaneStatistics s;
        s.plane = k;
        s.peak = 1000.0 / (1.0 + (k - focus) * (k - focus));
        s.signal = 5000.0;
        stats.push_back(s);
    }
    return stats;
}

bool names(const std::vector<SettingProblem>& problems, const std::string& setting, MessageLevel level = MessageLevel::Error)
{
    return std::any_of(problems.begin(), problems.end(), [&](const SettingProblem& p) { return p.setting == setting && p.level == level; });
}

std::string listText(const std::vector<SettingProblem>& problems)
{
    std::string text;
    for (const SettingProblem& p : problems)
        text += std::string(messageLevelName(p.level)) + " " + p.setting + ": " + p.message + "\n";
    return text;
}

int errorCount(const std::vector<SettingProblem>& problems)
{
    return int(std::count_if(problems.begin(), problems.end(), [](const SettingProblem& p) { return p.level == MessageLevel::Error; }));
}

Session beadSession()
{
    Session session;
    const auto messages = addFiles(session.dataset, {test::dataPath(QStringLiteral("bead_zstack_BIL113.tif")).toStdString()});
    for (const DatasetMessage& m : messages)
        if (m.level == MessageLevel::Error)
            qFatal("%s", m.text.c_str());
    return session;
}

} // namespace

class TestStackPlan : public QObject {
    Q_OBJECT

private slots:
    void spreadsAroundTheBrightestPlane()
    {
        StackPlanOptions options;
        options.zStep = 0.3e-6;
        const StackPlan plan = proposeStackPlan(stackWithFocus(21, 10), options);
        QCOMPARE(plan.focusPlane, 10);
        QVERIFY(!plan.focusFromMetadata);
        QCOMPARE(plan.planes, (std::vector<int>{0, 5, 10, 15, 20}));
        QCOMPARE(plan.offsetSteps, (std::vector<int>{-10, -5, 0, 5, 10}));
        QCOMPARE(plan.zOffsets.size(), size_t(5));
        for (size_t k = 0; k < 5; ++k)
            WFS_VERIFY_CLOSE(plan.zOffsets[k], plan.offsetSteps[k] * 0.3e-6, 1e-12, 1e-18);

        // The index running along -z flips the offsets, not the planes.
        options.zIndexDown = true;
        const StackPlan down = proposeStackPlan(stackWithFocus(21, 10), options);
        QCOMPARE(down.planes, plan.planes);
        QCOMPARE(down.offsetSteps, (std::vector<int>{10, 5, 0, -5, -10}));
        WFS_VERIFY_CLOSE(down.zOffsets.front(), 3e-6, 1e-12, 0.0);
    }

    void focusOffCentreAndUnusablePlanes()
    {
        // Focus near the start: the step shrinks until four more planes fit, as balanced as the end allows.
        const StackPlan early = proposeStackPlan(stackWithFocus(21, 3), {});
        QCOMPARE(early.focusPlane, 3);
        QCOMPARE(early.planes.size(), size_t(5));
        QVERIFY(std::find(early.planes.begin(), early.planes.end(), 3) != early.planes.end());
        const int step = early.planes[1] - early.planes[0];
        for (size_t k = 1; k < early.planes.size(); ++k)
            QCOMPARE(early.planes[k] - early.planes[k - 1], step); // equal steps
        // Steps 5 and 4 leave no plane below focus; step 3 keeps plane 0 below and three above.
        QCOMPARE(early.planes, (std::vector<int>{0, 3, 6, 9, 12}));
        QVERIFY(early.zOffsets.empty()); // no z step: offsets in planes only
        QCOMPARE(early.offsetSteps, (std::vector<int>{-3, 0, 3, 6, 9}));

        // An empty plane is never proposed, and never taken as the brightest.
        std::vector<PlaneStatistics> stats = stackWithFocus(21, 10);
        stats[5].usable = false;
        stats[0].usable = false;
        stats[0].peak = 1e9;
        const StackPlan skipping = proposeStackPlan(stats, {});
        QCOMPARE(skipping.focusPlane, 10);
        for (int index : skipping.planes)
            QVERIFY(stats[size_t(index)].usable);
        QCOMPARE(skipping.planes.size(), size_t(5));

        // A focus plane from the metadata wins over the brightest.
        StackPlanOptions given;
        given.focusPlane = 12.0;
        const StackPlan fromMetadata = proposeStackPlan(stackWithFocus(21, 10), given);
        QCOMPARE(fromMetadata.focusPlane, 12);
        QVERIFY(fromMetadata.focusFromMetadata);

        // Fewer planes than wanted: all of them.
        QCOMPARE(proposeStackPlan(stackWithFocus(3, 1), {}).planes, (std::vector<int>{0, 1, 2}));
    }

    void beadStack()
    {
        Session session = beadSession();
        Dataset& data = session.dataset;
        QCOMPARE(int(data.planes.size()), 21);
        // The z step from the instrument's log (sample piezo, 0.3 um, 21 steps).
        QVERIFY(data.metadata.zStep);
        WFS_VERIFY_CLOSE(*data.metadata.zStep, 0.3e-6, 1e-9, 0.0);
        QVERIFY2(data.metadata.origin.at("zStep").find("bead_zstack_BIL113_settings.txt") != std::string::npos,
                 data.metadata.origin.at("zStep").c_str());
        QVERIFY(data.metadata.conflicts.empty());

        const std::vector<PlaneStatistics> stats = stackStatistics(data);
        QCOMPARE(int(stats.size()), 21);
        const int brightest =
            int(std::max_element(stats.begin(), stats.end(), [](auto& a, auto& b) { return a.peak < b.peak; }) - stats.begin());
        // A bead through focus: the peak falls off on both sides of the brightest plane.
        QVERIFY(brightest > 2 && brightest < 18);
        QVERIFY(stats[size_t(brightest)].peak > 3.0 * stats.front().peak);
        QVERIFY(stats[size_t(brightest)].peak > 3.0 * stats.back().peak);

        const StackPlan plan = proposeStackPlan(stats, planOptionsFor(data));
        QCOMPARE(plan.focusPlane, brightest);
        QCOMPARE(plan.planes.size(), size_t(5));
        QVERIFY(std::find(plan.planes.begin(), plan.planes.end(), brightest) != plan.planes.end());
        QCOMPARE(plan.zOffsets.size(), size_t(5));
        for (double z : plan.zOffsets) {
            const double steps = z / 0.3e-6;
            QVERIFY2(std::abs(steps - std::round(steps)) < 1e-9, qPrintable(QString::number(z)));
        }
        QVERIFY(*std::min_element(plan.zOffsets.begin(), plan.zOffsets.end()) < 0.0);
        QVERIFY(*std::max_element(plan.zOffsets.begin(), plan.zOffsets.end()) > 0.0);

        applyStackPlan(data, plan);
        QCOMPARE(usedPlanes(data), plan.planes);
        QCOMPARE(*data.metadata.focusPlane, double(brightest));
        for (size_t k = 0; k < plan.planes.size(); ++k) {
            const PlaneDefocus d = planeDefocus(data, plan.planes[k]);
            QCOMPARE(d.kind, PlaneDefocus::Kind::Length);
            WFS_VERIFY_CLOSE(d.value, plan.zOffsets[k], 1e-12, 1e-18);
        }

        // Every missing setting at once: the wavelength, the pixel pitch and the NA (or f-number); no chain.
        const std::vector<SettingProblem> missing = settingsProblems(session);
        QVERIFY2(names(missing, "wavelength"), listText(missing).c_str());
        QVERIFY2(names(missing, "pixel-scale"), listText(missing).c_str());
        QVERIFY2(names(missing, "na"), listText(missing).c_str());
        QCOMPARE(errorCount(missing), 3);
        const auto na = std::find_if(missing.begin(), missing.end(), [](const SettingProblem& p) { return p.setting == "na"; });
        QVERIFY(std::find(na->alternatives.begin(), na->alternatives.end(), "f-number") != na->alternatives.end());
        // The workflow refuses the same session.
        QVERIFY_THROWS_EXCEPTION(DatasetError, prepareRun(session));

        // Filled: no error is left and the workflow builds the problem.
        DatasetMetadata& m = data.metadata;
        m.wavelength = 605e-9;
        m.pixelPitch = 0.1e-6;
        m.numericalAperture = 1.1;
        m.immersionIndex = 1.33;
        const std::vector<SettingProblem> filled = settingsProblems(session);
        QVERIFY2(!hasErrors(filled), listText(filled).c_str());
        // At NA 1.1 in water the paraxial defocus is a poor model: unless chosen, the high-NA model is assumed (issue 40),
        // so nothing is questioned; a paraxial model chosen there is (tst_assumptions).
        QVERIFY2(!names(filled, "defocus-model", MessageLevel::Warning), listText(filled).c_str());
        m.defocusModel = DefocusModel::HighNa;
        QVERIFY(settingsProblems(session).empty());
        const PreparedRun run = prepareRun(session);
        QCOMPARE(run.problem.spec.planes.size(), size_t(5));
        WFS_VERIFY_CLOSE(run.problem.samplingQ, 605e-9 / (2.0 * 1.1 * 0.1e-6), 1e-12, 0.0);
    }

    // Whenever the workflow refuses a session for a setting, the list names that setting.
    void listAgreesWithTheWorkflow_data()
    {
        QTest::addColumn<QString>("setting");
        QTest::newRow("wavelength") << QStringLiteral("wavelength");
        QTest::newRow("na above n") << QStringLiteral("na");
        QTest::newRow("z step") << QStringLiteral("z-step");
        QTest::newRow("grid") << QStringLiteral("grid");
        QTest::newRow("order") << QStringLiteral("order");
        QTest::newRow("threads") << QStringLiteral("threads");
        QTest::newRow("implausible pitch") << QStringLiteral("pixel-scale");
    }

    void listAgreesWithTheWorkflow()
    {
        QFETCH(QString, setting);
        Session session = beadSession();
        Dataset& data = session.dataset;
        selectPlanes(data, {5, 10, 15});
        DatasetMetadata& m = data.metadata;
        m.wavelength = 605e-9;
        m.pixelPitch = 0.1e-6;
        m.numericalAperture = 1.1;
        m.immersionIndex = 1.33;
        m.focusPlane = 10;
        m.defocusModel = DefocusModel::HighNa;
        QVERIFY2(settingsProblems(session).empty(), listText(settingsProblems(session)).c_str());
        if (setting == QLatin1String("wavelength"))
            m.wavelength.reset();
        else if (setting == QLatin1String("na"))
            m.immersionIndex = 1.0;
        else if (setting == QLatin1String("z-step"))
            m.zStep.reset();
        else if (setting == QLatin1String("grid"))
            session.model.grid = 64;
        else if (setting == QLatin1String("order"))
            session.model.order = 0;
        else if (setting == QLatin1String("threads"))
            session.solver.threads = 0;
        else if (setting == QLatin1String("pixel-scale"))
            m.pixelPitch = 1.0; // 1 m: beyond any detector
        const std::vector<SettingProblem> problems = settingsProblems(session);
        QVERIFY2(names(problems, setting.toStdString()), listText(problems).c_str());
        bool refused = false;
        std::string why;
        try {
            prepareRun(session);
        } catch (const std::exception& e) {
            refused = true;
            why = e.what();
        }
        QVERIFY(refused);
        // The workflow's own message (the command line's) is among the list's texts where it is a metadata check.
        if (setting == QLatin1String("na") || setting == QLatin1String("order") || setting == QLatin1String("threads")
            || setting == QLatin1String("grid"))
            QVERIFY2(std::any_of(problems.begin(), problems.end(), [&](const SettingProblem& p) { return p.message == why; }),
                     (why + "\n" + listText(problems)).c_str());
    }

    void unchangedWorkflowMessages()
    {
        // validateMetadata keeps its first message: what the command line prints.
        DatasetMetadata m;
        m.numericalAperture = 1.4;
        m.immersionIndex = 1.0;
        try {
            validateMetadata(m);
            QFAIL("an NA above the immersion index passed");
        } catch (const DatasetError& e) {
            QCOMPARE(std::string(e.what()),
                     std::string("the numerical aperture 1.4 exceeds the immersion index 1 (NA = n sin(theta) cannot exceed n): "
                                 "the immersion medium is not given; set its index (water 1.333, glycerol 1.47, silicone oil 1.406, "
                                 "oil 1.518)"));
        }
        m = {};
        m.wavelength = 633.0; // metres: a unit left out
        m.origin["wavelength"] = "a.fits: keyword WAVELENG";
        try {
            validateMetadata(m);
            QFAIL("a wavelength of 633 m passed");
        } catch (const DatasetError& e) {
            QVERIFY2(std::string(e.what()).find("(from a.fits: keyword WAVELENG)") != std::string::npos, e.what());
        }
    }

    void contradictingMetadata()
    {
        // A sidecar says 0.3 um per plane, the ImageJ description 0.5 um: both are kept in view, none chosen silently.
        QTemporaryDir dir;
        const QString tif = dir.filePath(QStringLiteral("stack.tif"));
        std::vector<Image> planes(3, Image{});
        for (Image& img : planes) {
            img.width = img.height = 16;
            img.pixels.assign(256, 10.0);
            img.pixels[8 * 16 + 8] = 1000.0;
        }
        // An ImageJ stack whose z step (0.5 um) its sidecar contradicts (0.3 um).
        const std::string bytes = tiffStackBytes(planes, "ImageJ=1.11a\nimages=3\nslices=3\nunit=micron\nspacing=0.5\n");
        QVERIFY(wfs::test::writeFile(tif, QByteArray::fromStdString(bytes)));
        QVERIFY(wfs::test::writeFile(tif + QStringLiteral(".json"), R"({"z_step": "0.3um", "immersion": 1.33})"));
        Session session;
        const auto messages = addFiles(session.dataset, {tif.toStdString()});
        const DatasetMetadata& m = session.dataset.metadata;
        QCOMPARE(m.conflicts.size(), size_t(1));
        const DatasetMetadata::Conflict& c = m.conflicts.front();
        QCOMPARE(c.key, std::string("zStep"));
        WFS_VERIFY_CLOSE(c.kept, 0.3e-6, 1e-12, 0.0);
        WFS_VERIFY_CLOSE(c.other, 0.5e-6, 1e-12, 0.0);
        QCOMPARE(c.keptOrigin, std::string("stack.tif.json"));
        QVERIFY2(c.otherOrigin.find("ImageJ") != std::string::npos, c.otherOrigin.c_str());
        QVERIFY(std::any_of(messages.begin(), messages.end(), [](const DatasetMessage& msg) {
            return msg.level == MessageLevel::Warning && msg.text.find("zStep") != std::string::npos;
        }));
        const std::vector<SettingProblem> problems = settingsProblems(session);
        const auto z = std::find_if(problems.begin(), problems.end(), [](const SettingProblem& p) { return p.setting == "z-step"; });
        QVERIFY2(z != problems.end(), listText(problems).c_str());
        QCOMPARE(z->level, MessageLevel::Error);
        QVERIFY2(z->message.find("0.3 um") != std::string::npos && z->message.find("0.5 um") != std::string::npos, z->message.c_str());

        // An NA above the immersion index shows both values.
        session.dataset.metadata.conflicts.clear();
        session.dataset.metadata.numericalAperture = 1.4;
        const std::vector<SettingProblem> na = settingsProblems(session);
        const auto above = std::find_if(na.begin(), na.end(), [](const SettingProblem& p) { return p.setting == "na"; });
        QVERIFY2(above != na.end(), listText(na).c_str());
        QVERIFY(above->message.find("1.4") != std::string::npos && above->message.find("1.33") != std::string::npos);
        QVERIFY(std::find(above->alternatives.begin(), above->alternatives.end(), "immersion") != above->alternatives.end());
    }
};

QTEST_GUILESS_MAIN(TestStackPlan)
#include "tst_stackplan.moc"
