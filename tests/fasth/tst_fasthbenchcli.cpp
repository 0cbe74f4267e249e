// The fasth-bench command-line contract: JSON keys per row, every option accepted, exit
// status 2 for bad arguments and 1 for a run that cannot happen (no GPU).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include <cmath>

class TestFasthBenchCli : public QObject {
    Q_OBJECT
private slots:
    void rowsHaveContractKeys();
    void everyOptionWorks();
    void gaussianLayoutHasNoLibraryRows();
    void badArgumentsExitTwo_data();
    void badArgumentsExitTwo();
    void gpuWithoutDeviceExitsOne();
    void help();
    void trainingReportsWhatWasLearnt();
    void trainingRefusesBadLayers();
};

namespace {
struct Run {
    int status = -1;
    QByteArray out;
    QByteArray err;
};

Run runCommand(const QString& command, const QStringList& arguments)
{
    QProcess process;
    process.start(QStringLiteral(WFS_CLI_PATH), QStringList{command} + arguments);
    if (!process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished();
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, process.readAllStandardOutput(),
            process.readAllStandardError()};
}

Run runCli(const QStringList& arguments)
{
    return runCommand(QStringLiteral("fasth-bench"), arguments);
}

QList<QJsonObject> rows(const QByteArray& out)
{
    QList<QJsonObject> result;
    for (const QByteArray& line : out.split('\n')) {
        if (line.trimmed().isEmpty())
            continue;
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(line, &error);
        if (error.error != QJsonParseError::NoError || !document.isObject())
            return {};
        result.append(document.object());
    }
    return result;
}
} // namespace

void TestFasthBenchCli::rowsHaveContractKeys()
{
    const Run run = runCli({QStringLiteral("--d"), QStringLiteral("48"), QStringLiteral("--batch"), QStringLiteral("4"),
                            QStringLiteral("--repeat"), QStringLiteral("3"), QStringLiteral("--block"), QStringLiteral("10")});
    QCOMPARE(run.status, 0);
    const auto parsed = rows(run.out);
    // Six methods times three passes.
    QCOMPARE(parsed.size(), 18);
    const QStringList keys = {"d",         "k",       "batch", "block", "method", "pass",   "backend",      "device",
                              "precision", "threads", "ms",    "ms_q1", "ms_q3",  "gflops", "max_abs_error"};
    QSet<QString> methods;
    for (const QJsonObject& row : parsed) {
        for (const QString& key : keys)
            QVERIFY2(row.contains(key), qPrintable(QStringLiteral("missing key ") + key));
        QCOMPARE(row.value("d").toInt(), 48);
        QCOMPARE(row.value("k").toInt(), 48);
        QCOMPARE(row.value("backend").toString(), QStringLiteral("cpu"));
        QVERIFY(row.value("ms_q1").toDouble() <= row.value("ms").toDouble());
        QVERIFY(row.value("ms").toDouble() <= row.value("ms_q3").toDouble());
        QVERIFY(row.value("gflops").toDouble() > 0);
        QVERIFY2(row.value("max_abs_error").toDouble() < 1e-12, qPrintable(QJsonDocument(row).toJson()));
        methods.insert(row.value("method").toString());
    }
    QCOMPARE(methods, (QSet<QString>{"sequential", "fasth", "ut", "tree", "library", "dense"}));
}

void TestFasthBenchCli::everyOptionWorks()
{
    const Run run = runCli({"--d",           "40,30",
                            "--batch",       "1,3",
                            "--block",       "7",
                            "--reflectors",  "25,35",
                            "--method",      "fasth,tree,svd-inverse,lu-solve,svd-logdet,lu-logdet",
                            "--pass",        "forward,both",
                            "--precision",   "float",
                            "--backend",     "cpu",
                            "--threads",     "1,2",
                            "--repeat",      "2",
                            "--warmup",      "0",
                            "--tree-levels", "2",
                            "--seed",        "5"});
    QCOMPARE(run.status, 0);
    const auto parsed = rows(run.out);
    QVERIFY(!parsed.isEmpty());
    // k = 35 > d = 30 is skipped with a note.
    QVERIFY(run.err.contains("k=35 > d=30"));
    // d=40: k 25 and 35; d=30: k 25; 2 batches, 2 thread counts; fasth and tree with 2 passes, the use
    // cases forward only.
    QCOMPARE(parsed.size(), 3 * 2 * 2 * (2 * 2 + 4));
    for (const QJsonObject& row : parsed) {
        QCOMPARE(row.value("precision").toString(), QStringLiteral("float"));
        QVERIFY(row.value("threads").toInt() == 1 || row.value("threads").toInt() == 2);
        QVERIFY2(row.value("max_abs_error").toDouble() < 1e-3, qPrintable(QJsonDocument(row).toJson()));
        if (row.value("method").toString() == QLatin1String("fasth"))
            QCOMPARE(row.value("block").toInt(), 7);
        if (row.value("method").toString() == QLatin1String("tree"))
            QCOMPARE(row.value("tree_levels").toInt(), 2);
    }
}

void TestFasthBenchCli::gaussianLayoutHasNoLibraryRows()
{
    const Run run =
        runCli({"--d", "40", "--batch", "2", "--repeat", "2", "--pass", "forward", "--block", "8", "--reflector-layout", "gaussian"});
    QCOMPARE(run.status, 0);
    const auto parsed = rows(run.out);
    QCOMPARE(parsed.size(), 5); // the six default methods but the library
    for (const QJsonObject& row : parsed) {
        QVERIFY(row.value("method").toString() != QLatin1String("library"));
        QCOMPARE(row.value("reflector_layout").toString(), QStringLiteral("gaussian"));
        QVERIFY(row.value("max_abs_error").toDouble() < 1e-12);
    }
    QVERIFY(run.err.contains("LAPACK-layout"));
}

void TestFasthBenchCli::badArgumentsExitTwo_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::newRow("bad layout") << QStringList{"--reflector-layout", "sparse"};
    QTest::newRow("unknown method") << QStringList{"--method", "magic"};
    QTest::newRow("unknown pass") << QStringList{"--pass", "sideways"};
    QTest::newRow("not a number") << QStringList{"--d", "abc"};
    QTest::newRow("zero batch") << QStringList{"--batch", "0"};
    QTest::newRow("zero repeat") << QStringList{"--repeat", "0"};
    QTest::newRow("k above every d") << QStringList{"--d", "16", "--reflectors", "32"};
    QTest::newRow("unknown backend") << QStringList{"--backend", "tpu"};
    QTest::newRow("unknown option") << QStringList{"--frobnicate"};
    QTest::newRow("bad precision") << QStringList{"--precision", "half"};
}

void TestFasthBenchCli::badArgumentsExitTwo()
{
    QFETCH(QStringList, arguments);
    const Run run = runCli(arguments);
    QCOMPARE(run.status, 2);
    QVERIFY(run.out.isEmpty());
    QCOMPARE(run.err.count('\n'), 1);
}

void TestFasthBenchCli::gpuWithoutDeviceExitsOne()
{
    const Run run = runCli({"--backend", "gpu", "--d", "32", "--repeat", "1"});
    if (run.status == 0)
        QSKIP("a CUDA device is present; the no-GPU path cannot be exercised here");
    QCOMPARE(run.status, 1);
    QVERIFY2(run.err.contains("GPU") || run.err.contains("CUDA"), run.err.constData());
}

void TestFasthBenchCli::help()
{
    const Run run = runCli({"--help"});
    QCOMPARE(run.status, 0);
    // QCommandLineParser lists the one-letter option as -d; --d is accepted as well (rowsHaveContractKeys).
    for (const char* option :
         {"-d <", "--batch", "--block", "--reflectors", "--method", "--pass", "--precision", "--backend", "--threads", "--repeat"})
        QVERIFY2(run.out.contains(option), option);
}

// fasth-train drives core's SVD-layer training job (the FastH panel's): a small layer learns the target's
// singular values, and its inverse and log-determinant agree with LU's.
void TestFasthBenchCli::trainingReportsWhatWasLearnt()
{
    const Run run =
        runCommand(QStringLiteral("fasth-train"),
                   {QStringLiteral("--d"), QStringLiteral("16"), QStringLiteral("--k"), QStringLiteral("16"), QStringLiteral("--steps"),
                    QStringLiteral("400"), QStringLiteral("--learning-rate"), QStringLiteral("0.05"), QStringLiteral("--quiet")});
    QVERIFY2(run.status == 0, run.err.constData());
    const auto parsed = rows(run.out);
    QCOMPARE(parsed.size(), 1);
    const QJsonObject r = parsed.front();
    QCOMPARE(r.value(QStringLiteral("d")).toInt(), 16);
    QCOMPARE(r.value(QStringLiteral("sigma")).toArray().size(), 16);
    QVERIFY(r.value(QStringLiteral("final_loss")).toDouble() < 0.1 * r.value(QStringLiteral("initial_loss")).toDouble());
    QVERIFY(r.value(QStringLiteral("inverse_residual")).toDouble() < 1e-8);
    QVERIFY(std::abs(r.value(QStringLiteral("log_abs_det_svd")).toDouble() - r.value(QStringLiteral("log_abs_det_lu")).toDouble()) < 1e-8);
    QCOMPARE(r.value(QStringLiteral("det_sign_svd")).toInt(), r.value(QStringLiteral("det_sign_lu")).toInt());
}

void TestFasthBenchCli::trainingRefusesBadLayers()
{
    const Run run =
        runCommand(QStringLiteral("fasth-train"), {QStringLiteral("--d"), QStringLiteral("8"), QStringLiteral("--k"), QStringLiteral("9")});
    QCOMPARE(run.status, 2);
    QVERIFY(run.err.contains("k <= d"));
}

QTEST_GUILESS_MAIN(TestFasthBenchCli)
#include "tst_fasthbenchcli.moc"
