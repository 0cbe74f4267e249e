// Runs of a session: two results compared (coefficients matched by (n, m), differences, the phase
// difference map and its RMS) against a hand-made pair whose answers are worked out below; and runs
// saved in and read back from a session file, old sessions (no runs) included.
#include "engine/RunComparison.h"
#include "io/Session.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

#include <cmath>
#include <numbers>

using namespace wfs;

namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;
const double kNan = std::nan("");

CoefficientResult term(int nollIndex, double waves)
{
    CoefficientResult c;
    c.index = nollIndex;
    c.mode = zernike::modeFromIndex(nollIndex, ZernikeOrdering::Noll);
    c.name = zernike::name(c.mode);
    c.waves = waves;
    c.radians = kTwoPi * waves;
    return c;
}

// A 3 x 3 phase map in radians from values in waves (NaN = outside the pupil).
Image phaseWaves(const std::vector<double>& waves, int size)
{
    Image image(size, size);
    for (size_t i = 0; i < waves.size(); ++i)
        image.pixels[i] = kTwoPi * waves[i];
    return image;
}

bool near(double a, double b, double tolerance = 1e-12)
{
    return std::abs(a - b) <= tolerance;
}

} // namespace

class TestRunComparison : public QObject {
    Q_OBJECT

private slots:
    void coefficientsMatchedAndDifferenced()
    {
        FitResult first, second;
        first.wavelength = second.wavelength = 633e-9;
        first.coefficients = {term(4, 0.10), term(5, 0.05)};
        second.coefficients = {term(6, -0.02), term(4, 0.15)}; // another order of terms; 5 not fitted, 6 new
        first.phaseMap = phaseWaves({kNan, 0.1, kNan, 0.0, 0.2, 0.0, kNan, 0.1, kNan}, 3);
        second.phaseMap = phaseWaves({kNan, 0.3, kNan, 0.1, 0.2, 0.1, kNan, kNan, kNan}, 3);

        const RunComparison c = compareRuns(first, second);
        QCOMPARE(c.terms.size(), size_t(3));
        QCOMPARE(c.terms[0].index, 4);
        QCOMPARE(c.terms[1].index, 5);
        QCOMPARE(c.terms[2].index, 6);
        QVERIFY(c.terms[0].firstWaves && c.terms[0].secondWaves);
        QVERIFY(near(c.terms[0].differenceWaves, 0.05));
        QVERIFY(c.terms[1].firstWaves && !c.terms[1].secondWaves);
        QVERIFY(near(c.terms[1].differenceWaves, -0.05));
        QVERIFY(!c.terms[2].firstWaves && c.terms[2].secondWaves);
        QVERIFY(near(c.terms[2].differenceWaves, -0.02));
        QVERIFY(near(c.coefficientRmsWaves, std::sqrt(0.05 * 0.05 + 0.05 * 0.05 + 0.02 * 0.02)));
        QCOMPARE(c.terms[0].mode, (ZernikeMode{2, 0}));

        // Differences where both pupils have a value: 0.2, 0.1, 0.0, 0.1 (the lower middle pixel is
        // outside the second pupil, so NaN). Mean 0.1, RMS about it sqrt(0.02 / 4), PV 0.2.
        QCOMPARE(c.pupilPixels, 4);
        const Image& d = c.phaseDifferenceWaves;
        QCOMPARE(d.width, 3);
        QVERIFY(near(d.at(0, 1), 0.2));
        QVERIFY(near(d.at(1, 0), 0.1));
        QVERIFY(near(d.at(1, 1), 0.0));
        QVERIFY(near(d.at(1, 2), 0.1));
        QVERIFY(std::isnan(d.at(2, 1)));
        QVERIFY(std::isnan(d.at(0, 0)));
        QVERIFY(near(c.rmsDifferenceWaves, std::sqrt(0.02 / 4)));
        QVERIFY(near(c.pvDifferenceWaves, 0.2));
        QVERIFY(c.notes.empty());
    }

    void orderingsAndSizesDiffer()
    {
        // The second run in ANSI indices and on a map twice as fine: matched by (n, m), sampled on the
        // first one's pixels. The second map is the first plus 0.05 waves everywhere: a pure piston,
        // so the RMS about the mean is 0 and PV 0.
        FitResult first, second;
        first.wavelength = second.wavelength = 500e-9;
        first.coefficients = {term(7, 0.02)}; // Noll 7 = (3, -1)
        CoefficientResult ansi = term(7, 0.07);
        second.ordering = ZernikeOrdering::Ansi;
        ansi.index = zernike::indexFromMode(ansi.mode, ZernikeOrdering::Ansi);
        second.coefficients = {ansi};
        const std::vector<double> coarse = {kNan, 0.1, kNan, 0.0, 0.2, 0.3, kNan, 0.1, kNan};
        first.phaseMap = phaseWaves(coarse, 3);
        Image fine(6, 6);
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c)
                fine.at(r, c) = kTwoPi * (coarse[size_t((r / 2) * 3 + c / 2)] + 0.05);
        second.phaseMap = fine;

        const RunComparison c = compareRuns(first, second);
        QCOMPARE(c.terms.size(), size_t(1));
        QCOMPARE(c.terms[0].index, 7);
        QVERIFY(near(c.terms[0].differenceWaves, 0.05));
        QCOMPARE(c.pupilPixels, 5);
        for (int r = 0; r < 3; ++r)
            for (int col = 0; col < 3; ++col)
                QVERIFY(std::isnan(coarse[size_t(r * 3 + col)]) ? std::isnan(c.phaseDifferenceWaves.at(r, col))
                                                                : near(c.phaseDifferenceWaves.at(r, col), 0.05, 1e-12));
        QVERIFY(near(c.rmsDifferenceWaves, 0.0, 1e-9));
        QVERIFY(near(c.pvDifferenceWaves, 0.0, 1e-12));
        QCOMPARE(c.notes.size(), size_t(2)); // orderings, map sizes
    }

    void runsSavedAndReadBack()
    {
        Session session;
        session.model.order = 4;
        SessionRun before;
        before.name = "before alignment";
        before.time = "2026-11-30T10:00:00Z";
        before.model.order = 2;
        before.model.grid = 64;
        before.solver.maxIterations = 50;
        before.result = QJsonObject{{QStringLiteral("rms_waves"), 0.12}};
        before.parameters = {0.1, -0.2, 0.3};
        SessionRun after = before;
        after.name = "after alignment";
        after.model.order = 4;
        after.solver.stages = {2, 4};
        after.parameters = {0.5};
        session.runs = {before, after};

        const QJsonObject json = sessionToJson(session, "/tmp/x.json");
        QCOMPARE(json.value(QStringLiteral("runs")).toArray().size(), 2);
        const Session back = sessionFromJson(QJsonDocument::fromJson(QJsonDocument(json).toJson()).object(), "x.json");
        QCOMPARE(back.runs.size(), size_t(2));
        QCOMPARE(back.runs[0].name, before.name);
        QCOMPARE(back.runs[0].time, before.time);
        QCOMPARE(back.runs[0].model.order, 2);
        QCOMPARE(back.runs[0].model.grid, 64);
        QVERIFY(back.runs[0].solver == before.solver);
        QCOMPARE(back.runs[0].result, before.result);
        QCOMPARE(back.runs[0].parameters, before.parameters);
        QCOMPARE(back.runs[1].name, after.name);
        QCOMPARE(back.runs[1].solver.stages, (std::vector<int>{2, 4}));
        QCOMPARE(back.runs[1].parameters, after.parameters);
    }

    void oldSessionsLoad()
    {
        // Written before runs were kept: no "runs"; its saved result reads back as the one run.
        Session old;
        old.model.order = 3;
        old.result = QJsonObject{{QStringLiteral("rms_waves"), 0.2}};
        old.resultParameters = {1.0, 2.0};
        QJsonObject json = sessionToJson(old, "/tmp/old.json");
        QVERIFY(!json.contains(QStringLiteral("runs")));
        const Session back = sessionFromJson(json, "old.json");
        QCOMPARE(back.runs.size(), size_t(1));
        QCOMPARE(back.runs[0].name, std::string("saved result"));
        QCOMPARE(back.runs[0].model.order, 3);
        QCOMPARE(back.runs[0].parameters, old.resultParameters);
        // Without a result there is no run.
        json.remove(QStringLiteral("result"));
        json.remove(QStringLiteral("result_parameters"));
        QVERIFY(sessionFromJson(json, "old.json").runs.empty());
    }

    void badRunsNamed()
    {
        QJsonObject json = sessionToJson(Session{}, "/tmp/bad.json");
        json.insert(QStringLiteral("runs"), QJsonArray{3});
        try {
            sessionFromJson(json, "bad.json");
            QFAIL("a run that is not an object was accepted");
        } catch (const SessionError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("runs[0]")), e.what());
        }
        QJsonObject run{{QStringLiteral("name"), QStringLiteral("r")},
                        {QStringLiteral("model"), QJsonObject{{QStringLiteral("order"), 99}}},
                        {QStringLiteral("result"), QJsonObject{}},
                        {QStringLiteral("result_parameters"), QJsonArray{}}};
        json.insert(QStringLiteral("runs"), QJsonArray{run});
        try {
            sessionFromJson(json, "bad.json");
            QFAIL("a run with order 99 was accepted");
        } catch (const SessionError& e) {
            QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("runs[0].model.order")), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestRunComparison)
#include "tst_runcomparison.moc"
