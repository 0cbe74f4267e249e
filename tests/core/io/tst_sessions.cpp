// Sessions (io/Session.h) as JSON, without files: every setting a session holds, each changed alone from its
// default, written and read back unchanged: the model and solver settings (of the session and of a kept run),
// the preparation options, the metadata, the planes; and a bad value of each section refused with its key named.
// Also what is not a session (another format, a newer version, broken JSON, no file). (Re-reading the input files,
// moved data and changed checksums are tst_exports' sessionRoundTrip.)
#include "TestSupport.h"

#include "io/Session.h"

#include <QJsonDocument>
#include <QTemporaryDir>

#include <functional>

using namespace wfs;

namespace {

template <class T>
using Change = std::pair<const char*, std::function<void(T&)>>;

// A session with one input file of four planes (sessionFromJson does not open it).
Session emptySession()
{
    Session s;
    DatasetFile file;
    file.path = "/data/stack.tif";
    file.format = ImageFormat::Tiff;
    file.sha256 = "ab12";
    file.bytes = 1234;
    file.planeCount = 4;
    s.dataset.files.push_back(file);
    for (int k = 0; k < 4; ++k) {
        DatasetPlane plane;
        plane.indexInFile = k;
        s.dataset.planes.push_back(plane);
    }
    return s;
}

Session roundTrip(const Session& s)
{
    const QJsonObject json = QJsonDocument::fromJson(sessionBytes("/sessions/s.json", s)).object();
    return sessionFromJson(json, "s.json");
}

// The metadata a session stores: every field but readNoise (the data's RDNOISE keyword, read again from the files)
// and conflicts (resolved before a session is saved).
bool sameMetadata(const DatasetMetadata& a, const DatasetMetadata& b)
{
    return a.wavelength == b.wavelength && a.pixelPitch == b.pixelPitch && a.pixelAngle == b.pixelAngle && a.fNumber == b.fNumber
           && a.numericalAperture == b.numericalAperture && a.immersionIndex == b.immersionIndex && a.aperture == b.aperture
           && a.samplingQ == b.samplingQ && a.zStep == b.zStep && a.focusPlane == b.focusPlane && a.zIndexDown == b.zIndexDown
           && a.defocusModel == b.defocusModel && a.dataUnit == b.dataUnit && a.saturationLevel == b.saturationLevel
           && a.origin == b.origin;
}

std::vector<Change<ModelSettings>> modelChanges()
{
    return {
        {"order", [](ModelSettings& m) { m.order = 7; }},
        {"ordering", [](ModelSettings& m) { m.ordering = ZernikeOrdering::Ansi; }},
        {"normalization", [](ModelSettings& m) { m.normalization = ZernikeNormalization::Unit; }},
        {"objective", [](ModelSettings& m) { m.objective = ObjectiveKind::WeightedLeastSquares; }},
        {"readNoise", [](ModelSettings& m) { m.readNoise = 2.5; }},
        {"grid", [](ModelSettings& m) { m.grid = 96; }},
        {"obscuration", [](ModelSettings& m) { m.obscuration = 0.33; }},
        {"spiderCount", [](ModelSettings& m) { m.spiderCount = 4; }},
        {"spiderWidth", [](ModelSettings& m) { m.spiderWidth = 0.015; }},
        {"spiderAngleDeg", [](ModelSettings& m) { m.spiderAngleDeg = 45.0; }},
        {"fitFlux", [](ModelSettings& m) { m.fitFlux = false; }},
        {"fitBackground", [](ModelSettings& m) { m.fitBackground = false; }},
        {"fitShift", [](ModelSettings& m) { m.fitShift = true; }},
        {"fixedTerms",
         [](ModelSettings& m) {
             m.fixedTerms = {4, 11};
         }},
        {"phaseModel", [](ModelSettings& m) { m.phaseModel = PupilPhaseModel::Both; }},
        {"amplitudeModel", [](ModelSettings& m) { m.amplitudeModel = PupilAmplitudeModel::Zonal; }},
        {"regularization", [](ModelSettings& m) { m.regularization = 0.25; }},
        {"pixelIntegration", [](ModelSettings& m) { m.pixelIntegration = true; }},
        {"objectDiameter", [](ModelSettings& m) { m.objectDiameter = 170e-9; }},
        {"gain", [](ModelSettings& m) { m.gain = 0.46; }},
        {"offset", [](ModelSettings& m) { m.offset = 100.0; }},
        {"estimateOffset", [](ModelSettings& m) { m.estimateOffset = true; }},
        {"bandwidth", [](ModelSettings& m) { m.bandwidth = 20e-9; }},
        {"spectralSamples", [](ModelSettings& m) { m.spectralSamples = 5; }},
        {"fitDefocusScale", [](ModelSettings& m) { m.fitDefocusScale = true; }},
        {"fitDefocusOffsets", [](ModelSettings& m) { m.fitDefocusOffsets = true; }},
        {"fitSampling", [](ModelSettings& m) { m.fitSampling = true; }},
    };
}

std::vector<Change<SolverSettings>> solverChanges()
{
    return {
        {"backend", [](SolverSettings& s) { s.backend = BackendKind::Gpu; }},
        {"gradient", [](SolverSettings& s) { s.gradient = GradientKind::FiniteDifference; }},
        {"optimizer", [](SolverSettings& s) { s.optimizer = OptimizerKind::Lbfgs; }},
        {"precision", [](SolverSettings& s) { s.precision = Precision::Float; }},
        {"threads", [](SolverSettings& s) { s.threads = 6; }},
        {"maxIterations", [](SolverSettings& s) { s.maxIterations = 77; }},
        {"gradientTolerance", [](SolverSettings& s) { s.gradientTolerance = 3e-8; }},
        {"functionTolerance", [](SolverSettings& s) { s.functionTolerance = 4e-13; }},
        {"stages",
         [](SolverSettings& s) {
             s.stages = {2, 4};
         }},
        {"removeDefocus", [](SolverSettings& s) { s.removeDefocus = true; }},
        {"computeUncertainty", [](SolverSettings& s) { s.computeUncertainty = false; }},
    };
}

std::vector<Change<PreprocessOptions>> preprocessChanges()
{
    return {
        {"subtractBackground", [](PreprocessOptions& o) { o.subtractBackground = false; }},
        {"borderWidth", [](PreprocessOptions& o) { o.borderWidth = 5; }},
        {"clipSigma", [](PreprocessOptions& o) { o.clipSigma = 2.5; }},
        {"centre", [](PreprocessOptions& o) { o.centre = CentreMethod::Peak; }},
        {"centreEachPlane", [](PreprocessOptions& o) { o.centreEachPlane = true; }},
        {"cropSize", [](PreprocessOptions& o) { o.cropSize = 48; }},
        {"maskSaturated", [](PreprocessOptions& o) { o.maskSaturated = false; }},
        {"maskHotPixels", [](PreprocessOptions& o) { o.maskHotPixels = true; }},
        {"hotPixelSigma", [](PreprocessOptions& o) { o.hotPixelSigma = 5.5; }},
        {"hotPixelRatio", [](PreprocessOptions& o) { o.hotPixelRatio = 4.5; }},
        {"badPixels",
         [](PreprocessOptions& o) {
             o.badPixels = {{3, 7}, {0, 65535}};
         }},
        {"normalise", [](PreprocessOptions& o) { o.normalise = true; }},
    };
}

std::vector<Change<DatasetMetadata>> metadataChanges()
{
    return {
        {"wavelength", [](DatasetMetadata& m) { m.wavelength = 605e-9; }},
        {"pixelPitch", [](DatasetMetadata& m) { m.pixelPitch = 6.5e-6; }},
        {"pixelAngle", [](DatasetMetadata& m) { m.pixelAngle = 4.8e-7; }},
        {"fNumber", [](DatasetMetadata& m) { m.fNumber = 12.5; }},
        {"numericalAperture", [](DatasetMetadata& m) { m.numericalAperture = 1.2; }},
        {"immersionIndex", [](DatasetMetadata& m) { m.immersionIndex = 1.518; }},
        {"aperture", [](DatasetMetadata& m) { m.aperture = 2.4; }},
        {"samplingQ", [](DatasetMetadata& m) { m.samplingQ = 2.7; }},
        {"zStep", [](DatasetMetadata& m) { m.zStep = 0.2e-6; }},
        {"focusPlane", [](DatasetMetadata& m) { m.focusPlane = 10.5; }},
        {"zIndexDown", [](DatasetMetadata& m) { m.zIndexDown = true; }},
        {"defocusModel", [](DatasetMetadata& m) { m.defocusModel = DefocusModel::HighNa; }},
        {"dataUnit", [](DatasetMetadata& m) { m.dataUnit = "photons"; }},
        {"saturationLevel", [](DatasetMetadata& m) { m.saturationLevel = 4095.0; }},
        {"origin", [](DatasetMetadata& m) { m.origin["wavelength"] = "command line"; }},
    };
}

std::string sessionError(const QByteArray& json)
{
    try {
        sessionFromJson(QJsonDocument::fromJson(json).object(), "s.json");
    } catch (const SessionError& e) {
        return e.what();
    }
    return "accepted";
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

class TestSessions : public QObject {
    Q_OBJECT

private slots:
    // Each model setting alone, away from its default, in the session and in a kept run (the runs' settings are
    // written by their own code): read back equal. The change is checked to be one, so a new default cannot hide it.
    void everyModelSettingRoundTrips()
    {
        for (const auto& [name, change] : modelChanges()) {
            Session s = emptySession();
            change(s.model);
            QVERIFY2(!(s.model == ModelSettings{}), name);
            SessionRun run;
            run.name = "aligned";
            run.model = s.model;
            run.parameters = {0.1};
            s.runs.push_back(run);
            const Session back = roundTrip(s);
            QVERIFY2(back.model == s.model, name);
            QCOMPARE(back.runs.size(), size_t(1));
            QVERIFY2(back.runs[0].model == s.model, name);
            QVERIFY2(back.solver == SolverSettings{}, name);
        }
    }

    void everySolverSettingRoundTrips()
    {
        for (const auto& [name, change] : solverChanges()) {
            Session s = emptySession();
            change(s.solver);
            QVERIFY2(!(s.solver == SolverSettings{}), name);
            if (!s.solver.stages.empty())
                s.model.order = s.solver.stages.back(); // one carrier of the order (fittedOrders)
            SessionRun run;
            run.model = s.model;
            run.solver = s.solver;
            run.parameters = {0.1};
            s.runs.push_back(run);
            const Session back = roundTrip(s);
            QVERIFY2(back.solver == s.solver, name);
            QVERIFY2(back.runs[0].solver == s.solver, name);
        }
    }

    void everyPreparationOptionRoundTrips()
    {
        for (const auto& [name, change] : preprocessChanges()) {
            Session s = emptySession();
            change(s.dataset.preprocess);
            QVERIFY2(!(s.dataset.preprocess == PreprocessOptions{}), name);
            QVERIFY2(roundTrip(s).dataset.preprocess == s.dataset.preprocess, name);
        }
    }

    void everyMetadataValueRoundTrips()
    {
        for (const auto& [name, change] : metadataChanges()) {
            Session s = emptySession();
            change(s.dataset.metadata);
            QVERIFY2(!sameMetadata(s.dataset.metadata, DatasetMetadata{}), name);
            QVERIFY2(sameMetadata(roundTrip(s).dataset.metadata, s.dataset.metadata), name);
        }
    }

    // The planes (which file, which page, in use, own defocus of either kind), the inputs, the last result and its
    // parameters, and a run's name, time, result and parameters.
    void planesResultsAndRunsRoundTrip()
    {
        Session s = emptySession();
        s.dataset.planes[1].use = false;
        s.dataset.planes[2].defocus = {PlaneDefocus::Kind::Waves, -0.75};
        s.dataset.planes[3].defocus = {PlaneDefocus::Kind::Length, 1.5e-6};
        s.result = QJsonObject{{QStringLiteral("strehl"), 0.8}};
        s.resultParameters = {0.1, -0.2, 3.0};
        SessionRun run;
        run.name = "before alignment";
        run.time = "2026-12-02T10:00:00Z";
        run.result = QJsonObject{{QStringLiteral("strehl"), 0.5}};
        run.parameters = {0.4, 0.5};
        s.runs.push_back(run);
        const Session back = roundTrip(s);
        QCOMPARE(back.dataset.files.size(), size_t(1));
        QCOMPARE(back.dataset.files[0].path, s.dataset.files[0].path);
        QCOMPARE(back.dataset.files[0].sha256, s.dataset.files[0].sha256);
        QCOMPARE(back.dataset.files[0].bytes, s.dataset.files[0].bytes);
        QCOMPARE(back.dataset.files[0].planeCount, 4);
        QCOMPARE(back.dataset.files[0].format, ImageFormat::Tiff);
        QCOMPARE(back.dataset.planes.size(), size_t(4));
        for (size_t k = 0; k < 4; ++k) {
            QCOMPARE(back.dataset.planes[k].indexInFile, int(k));
            QCOMPARE(back.dataset.planes[k].use, s.dataset.planes[k].use);
            QCOMPARE(back.dataset.planes[k].defocus, s.dataset.planes[k].defocus);
        }
        QCOMPARE(back.result, s.result);
        QCOMPARE(back.resultParameters, s.resultParameters);
        QCOMPARE(back.runs.size(), size_t(1));
        QCOMPARE(back.runs[0].name, run.name);
        QCOMPARE(back.runs[0].time, run.time);
        QCOMPARE(back.runs[0].result, run.result);
        QCOMPARE(back.runs[0].parameters, run.parameters);
    }

    // A bad value in each section is refused with the file and the key as the session spells it.
    void errorsNameTheKey_data()
    {
        QTest::addColumn<QByteArray>("fields");
        QTest::addColumn<QString>("key");
        QTest::newRow("model number") << QByteArray(R"("model": {"gain": "high"})") << QStringLiteral("\"model.gain\" must be a number");
        QTest::newRow("model range") << QByteArray(R"("model": {"spectral_samples": 40})") << QStringLiteral("\"model.spectral_samples\"");
        QTest::newRow("model choice") << QByteArray(R"("model": {"pupil_phase": "wavy"})")
                                      << QStringLiteral("\"model.pupil_phase\" must be one of zernike|zonal|both");
        QTest::newRow("model flag") << QByteArray(R"("model": {"estimate_offset": 1})")
                                    << QStringLiteral("\"model.estimate_offset\" must be true or false");
        QTest::newRow("solver range") << QByteArray(R"("solver": {"threads": 0})") << QStringLiteral("\"solver.threads\"");
        QTest::newRow("solver integer") << QByteArray(R"("solver": {"max_iterations": 2.5})")
                                        << QStringLiteral("\"solver.max_iterations\" must be an integer");
        QTest::newRow("preprocess") << QByteArray(R"("preprocess": {"centre_each_plane": "yes"})")
                                    << QStringLiteral("\"preprocess.centre_each_plane\" must be true or false");
        QTest::newRow("bad pixels") << QByteArray(R"("preprocess": {"bad_pixels": [[1.5, 2]]})")
                                    << QStringLiteral("\"preprocess.bad_pixels\"");
        QTest::newRow("metadata") << QByteArray(R"("metadata": {"z_direction": "sideways"})")
                                  << QStringLiteral("\"metadata.z_direction\" must be one of up|down");
        QTest::newRow("plane defocus") << QByteArray(R"("planes": [{"file": 0, "index": 0, "defocus": {"kind": "waves", "value": "x"}}])")
                                       << QStringLiteral("\"planes[0].defocus.value\"");
        QTest::newRow("run model") << QByteArray(R"("runs": [{"model": {"order": 99}, "result": {}, "result_parameters": []}])")
                                   << QStringLiteral("\"runs[0].model.order\"");
        QTest::newRow("run parameters") << QByteArray(R"("runs": [{"result": {}, "result_parameters": ["a"]}])")
                                        << QStringLiteral("\"runs[0].result_parameters\" must hold numbers");
    }

    void malformedSessions()
    {
        std::string m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 2, "inputs": []})");
        QVERIFY2(contains(m, "s.json") && contains(m, "version 2 is newer than this program reads (up to 1)"), m.c_str());
        m = sessionError(R"({"format": "something-else", "format_version": 1})");
        QVERIFY2(contains(m, "not a Wavefront Studio session"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session"})");
        QVERIFY2(contains(m, "format_version"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": {}})");
        QVERIFY2(contains(m, "\"inputs\" must be an array"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "model": {"order": "six"}})");
        QVERIFY2(contains(m, "\"model.order\" must be an integer"), m.c_str());
        m = sessionError(R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "model": {"order": 40}})");
        QVERIFY2(contains(m, "\"model.order\" must be between 1 and 15"), m.c_str());
        m = sessionError(
            R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "planes": [{"file": 3, "index": 0}]})");
        QVERIFY2(contains(m, "\"planes[0].file\" must name one of the inputs"), m.c_str());
        m = sessionError(
            R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "preprocess": {"centre": "middle"}})");
        QVERIFY2(contains(m, "\"preprocess.centre\" must be one of auto|none|peak|centroid"), m.c_str());
        m = sessionError(
            R"({"format": "wavefront-studio-session", "format_version": 1, "inputs": [], "metadata": {"wavelength_m": "red"}})");
        QVERIFY2(contains(m, "\"metadata.wavelength_m\" must be a number or null"), m.c_str());

        QTemporaryDir dir;
        const QString broken = dir.filePath(QStringLiteral("broken.json"));
        QVERIFY(test::writeFile(broken, "{\"format\": \"wavefront-studio-session\", "));
        try {
            openSession(broken.toStdString());
            QFAIL("broken JSON was accepted");
        } catch (const SessionError& e) {
            QVERIFY2(contains(e.what(), "broken.json: not valid JSON"), e.what());
        }
        try {
            openSession(dir.filePath(QStringLiteral("none.json")).toStdString());
            QFAIL("a missing session was opened");
        } catch (const SessionError& e) {
            QVERIFY(contains(e.what(), "none.json: file not found"));
        }
    }

    void errorsNameTheKey()
    {
        QFETCH(QByteArray, fields);
        QFETCH(QString, key);
        const QByteArray json = R"({"format": "wavefront-studio-session", "format_version": 1,
            "inputs": [{"path": "/data/a.fits", "planes": 1}], )"
                                + fields + "}";
        const std::string message = sessionError(json);
        QVERIFY2(message.rfind("s.json: ", 0) == 0 && message.find(key.toStdString()) != std::string::npos, message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestSessions)
#include "tst_sessions.moc"
