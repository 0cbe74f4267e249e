// wavefront-cli as a hostile user drives it (issue 12): outputs checked before the fit, '-' for
// standard output, the same file twice or an input as output refused with status 2, a file-size limit
// mid-write leaving nothing, FIFOs refused, implausible values with their range, warnings once and on
// standard error, and byte-identical results from concurrent runs.
#include "ExportChecks.h"
#include "TestSupport.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

#include <sys/resource.h>
#include "io/ImageReaders.h"

#include <sys/stat.h>

namespace {

struct Run {
    int status = -1;
    QByteArray out, err;
};

QProcess* startCli(const QStringList& args, const QString& dir, QObject* parent, bool fileSizeLimit = false)
{
    auto* process = new QProcess(parent);
    process->setWorkingDirectory(dir);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("WFS_FFTW_WISDOM_DIR"), dir + QStringLiteral("/wisdom")); // a fresh wisdom folder per test
    // A fixed time of writing (the reproducible-builds convention): FITS DATE and JSON "date" then do not
    // differ between runs that are compared byte for byte.
    env.insert(QStringLiteral("SOURCE_DATE_EPOCH"), QStringLiteral("1764460800"));
    if (fileSizeLimit)
        wfs::test::isolateFontCache(env); // fontconfig could not write its cache whole either
    process->setProcessEnvironment(env);
    if (fileSizeLimit) // ulimit -f 16: every output beyond 16 KiB hits SIGXFSZ / EFBIG
        process->setChildProcessModifier([] {
            struct rlimit limit = {16384, 16384};
            ::setrlimit(RLIMIT_FSIZE, &limit);
        });
    process->start(QStringLiteral(WFS_CLI_PATH), args);
    return process;
}

Run finish(QProcess* process)
{
    Run run;
    if (!process->waitForFinished(300000)) {
        process->kill();
        process->waitForFinished();
        run.err = "timed out (hung)";
        return run;
    }
    run.status = process->exitStatus() == QProcess::NormalExit ? process->exitCode() : -1;
    run.out = process->readAllStandardOutput();
    run.err = process->readAllStandardError();
    return run;
}

// The keyword names of a FITS file's primary header (80-column cards up to END), in order.
QStringList fitsKeywords(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray bytes = f.readAll();
    QStringList names;
    for (qsizetype at = 0; at + 80 <= bytes.size(); at += 80) {
        const QString name = QString::fromLatin1(bytes.mid(at, 8)).trimmed();
        if (name == QLatin1String("END"))
            break;
        names << name;
    }
    return names;
}

QByteArray md5(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Md5).toHex();
}

} // namespace

class TestCliOutputs : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    Run cli(const QStringList& args, bool fileSizeLimit = false)
    {
        QObject owner;
        return finish(startCli(args, m_dir.path(), &owner, fileSizeLimit));
    }
    QStringList files() const
    {
        return QDir(m_dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot, QDir::Name);
    }
    // A reconstruct of the simulated data that takes a moment: outputs are written after it.
    static QStringList quickFit()
    {
        return {QStringLiteral("reconstruct"),      QStringLiteral("--input"), QStringLiteral("d.fits"),
                QStringLiteral("--max-iterations"), QStringLiteral("15"),      QStringLiteral("--quiet")};
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        const Run sim = cli({QStringLiteral("simulate"), QStringLiteral("--grid"), QStringLiteral("32"), QStringLiteral("--order"),
                             QStringLiteral("2"), QStringLiteral("--out"), QStringLiteral("d.fits")});
        QVERIFY2(sim.status == 0, sim.err.constData());
    }

    void dashIsStandardOutput()
    {
        // Defect 13: `--csv -` used to write a file named "-".
        const Run run = cli(quickFit() << QStringLiteral("--csv") << QStringLiteral("-"));
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(run.out.startsWith("index,n,m,name,value_waves,"), run.out.constData()); // the table (its header row), not the summary
        QVERIFY(run.err.contains("Wavefront Studio reconstruction"));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("-"))));
        const Run two =
            cli(quickFit() << QStringLiteral("--csv") << QStringLiteral("-") << QStringLiteral("--json") << QStringLiteral("-"));
        QCOMPARE(two.status, 2);
        QCOMPARE(cli(quickFit() << QStringLiteral("--phase-out") << QStringLiteral("-")).status, 2); // FITS is not text
    }

    void everyFitsOutputPassesFitsverify()
    {
        // Issue 14: each FITS a run writes (phase, model, residual, PSF, the multi-extension results),
        // for file input and for a preset, passes fitsverify; the result JSON passes the schema; the
        // preset's headers carry the same keywords as the file input's.
        Run run = cli(quickFit() << QStringLiteral("--phase-out") << QStringLiteral("f-phase.fits") << QStringLiteral("--model-out")
                                 << QStringLiteral("f-model.fits") << QStringLiteral("--residual-out") << QStringLiteral("f-res.fits")
                                 << QStringLiteral("--psf-out") << QStringLiteral("f-psf.fits") << QStringLiteral("--results-fits")
                                 << QStringLiteral("f-all.fits") << QStringLiteral("--json") << QStringLiteral("f.json"));
        QVERIFY2(run.status == 0, run.err.constData());
        run = cli({QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("demo"), QStringLiteral("--grid"),
                   QStringLiteral("32"), QStringLiteral("--max-iterations"), QStringLiteral("5"), QStringLiteral("--quiet"),
                   QStringLiteral("--phase-out"), QStringLiteral("p-phase.fits"), QStringLiteral("--results-fits"),
                   QStringLiteral("p-all.fits"), QStringLiteral("--psf-out"), QStringLiteral("p-psf.fits"), QStringLiteral("--json"),
                   QStringLiteral("p.json")});
        QVERIFY2(run.status == 0, run.err.constData());
        for (const QString& name : {QStringLiteral("d.fits"), QStringLiteral("f-phase.fits"), QStringLiteral("f-model.fits"),
                                    QStringLiteral("f-res.fits"), QStringLiteral("f-psf.fits"), QStringLiteral("f-all.fits"),
                                    QStringLiteral("p-phase.fits"), QStringLiteral("p-all.fits"), QStringLiteral("p-psf.fits")}) {
            const wfs::test::ToolResult verified = wfs::test::fitsverify(m_dir.filePath(name));
            if (verified.missing)
                QSKIP("fitsverify is not installed (scripts/setup.sh installs it)");
            QVERIFY2(verified.ok, qPrintable(name + QStringLiteral(":\n") + verified.output));
        }
        QFile all(m_dir.filePath(QStringLiteral("f-all.fits")));
        QVERIFY(all.open(QIODevice::ReadOnly));
        const QByteArray bytes = all.readAll();
        qsizetype at = 0;
        for (const char* ext : {"DATA", "MODEL", "RESIDUAL", "NRESID", "PHASE"}) { // in this order
            at = bytes.indexOf(QByteArray("EXTNAME = '") + ext, at);
            QVERIFY2(at > 0, ext);
        }
        const wfs::test::ToolResult schema =
            wfs::test::validateResultJson({m_dir.filePath(QStringLiteral("f.json")), m_dir.filePath(QStringLiteral("p.json"))});
        if (!schema.missing)
            QVERIFY2(schema.ok, qPrintable(schema.output));
        // The same header keywords for a preset as for a file (apart from what names the input).
        auto described = [](QStringList names) {
            names.removeIf([](const QString& n) {
                return n.startsWith(QLatin1String("INPUT")) || n.startsWith(QLatin1String("ZC")) || n.startsWith(QLatin1String("ZE"))
                       || n == QLatin1String("PRESET") || n == QLatin1String("LONGSTRN") || n == QLatin1String("COMMENT")
                       || n == QLatin1String("CONTINUE");
            });
            return names;
        };
        const QStringList file = described(fitsKeywords(m_dir.filePath(QStringLiteral("f-phase.fits"))));
        const QStringList preset = described(fitsKeywords(m_dir.filePath(QStringLiteral("p-phase.fits"))));
        QCOMPARE(preset, file);
        for (const char* key : {"SAMPLING", "PUPSAMP", "OBSCUR", "SPIDERS", "DATE", "CREATOR", "BUNIT", "CTYPE1", "CRVAL2"})
            QVERIFY2(preset.contains(QLatin1String(key)), key);
        QVERIFY(fitsKeywords(m_dir.filePath(QStringLiteral("p-phase.fits"))).contains(QStringLiteral("PRESET")));
        // Written at SOURCE_DATE_EPOCH.
        QFile phase(m_dir.filePath(QStringLiteral("p-phase.fits")));
        QVERIFY(phase.open(QIODevice::ReadOnly));
        QVERIFY(phase.readAll().contains("DATE    = '2025-11-30T00:00:00'"));
    }

    // Issue 13: the pupil-function outputs of the "pupil" preset (zonal phase and amplitude): the pupil FITS with its
    // three maps and the 3-D PSF stack pass fitsverify, the TIFF stack has one page per plane, the PNGs and the
    // result JSON (with pupil_function) are written and valid; bad settings are usage errors before any fit.
    void pupilFunctionOutputs()
    {
        const Run run = cli({QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("pupil"), QStringLiteral("--quiet"),
                             QStringLiteral("--no-uncertainty"), QStringLiteral("--pupil-out"), QStringLiteral("pupil.fits"),
                             QStringLiteral("--amplitude-png"), QStringLiteral("amp.png"), QStringLiteral("--zonal-png"),
                             QStringLiteral("zonal.png"), QStringLiteral("--psf-stack-out"), QStringLiteral("stack.fits"),
                             QStringLiteral("--psf-z=-2w:2w:0.5w"), QStringLiteral("--json"), QStringLiteral("pupil.json")});
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY2(run.out.contains("pupil: phase both, amplitude zonal; beyond the Zernike terms:"), run.out.constData());
        const Run tiff = cli({QStringLiteral("reconstruct"), QStringLiteral("--preset"), QStringLiteral("pupil"), QStringLiteral("--quiet"),
                              QStringLiteral("--no-uncertainty"), QStringLiteral("--psf-stack-out"), QStringLiteral("stack.tif"),
                              QStringLiteral("--psf-crop"), QStringLiteral("33")}); // odd sizes are fine (issue 40)
        QVERIFY2(tiff.status == 0, tiff.err.constData());
        QFile tif(m_dir.filePath(QStringLiteral("stack.tif")));
        QVERIFY(tif.open(QIODevice::ReadOnly));
        const QByteArray tifBytes = tif.readAll();
        const wfs::ImageFileContent pages =
            wfs::readTiffMemory(reinterpret_cast<const std::uint8_t*>(tifBytes.constData()), size_t(tifBytes.size()), "stack.tif");
        QCOMPARE(int(pages.planes.size()), 21); // the default: 21 planes over the fitted range
        QCOMPARE(pages.planes.front().width, 33);
        QFile fits(m_dir.filePath(QStringLiteral("pupil.fits")));
        QVERIFY(fits.open(QIODevice::ReadOnly));
        const QByteArray bytes = fits.readAll();
        for (const char* ext : {"PHASE", "AMPLITUDE", "ZONAL"})
            QVERIFY2(bytes.contains(QByteArray("EXTNAME = '") + ext), ext);
        for (const QString& png : {QStringLiteral("amp.png"), QStringLiteral("zonal.png")})
            QVERIFY2(QFileInfo(m_dir.filePath(png)).size() > 1000, qPrintable(png));
        for (const QString& name : {QStringLiteral("pupil.fits"), QStringLiteral("stack.fits")}) {
            const wfs::test::ToolResult verified = wfs::test::fitsverify(m_dir.filePath(name));
            if (!verified.missing)
                QVERIFY2(verified.ok, qPrintable(name + QStringLiteral(":\n") + verified.output));
        }
        const wfs::test::ToolResult schema = wfs::test::validateResultJson({m_dir.filePath(QStringLiteral("pupil.json"))});
        if (!schema.missing)
            QVERIFY2(schema.ok, qPrintable(schema.output));

        // Refused before any fitting, naming the setting.
        const std::pair<QStringList, const char*> bad[] = {
            {{QStringLiteral("--regularization"), QStringLiteral("0")}, "regularisation weight"},
            {{QStringLiteral("--regularization"), QStringLiteral("nan")}, "regularization"},
            {{QStringLiteral("--gain"), QStringLiteral("-1")}, "camera gain"},
            {{QStringLiteral("--pupil-phase"), QStringLiteral("zonall")}, "pupil-phase"},
            {{QStringLiteral("--psf-z"), QStringLiteral("1um:-1um:0.1um"), QStringLiteral("--psf-stack-out"), QStringLiteral("x.fits")},
             "--psf-z"},
            {{QStringLiteral("--psf-crop"), QStringLiteral("32")}, "applies to --psf-stack-out"},
            {{QStringLiteral("--psf-crop"), QStringLiteral("nan"), QStringLiteral("--psf-stack-out"), QStringLiteral("x.fits")},
             "--psf-crop"},
            {{QStringLiteral("--psf-crop"), QStringLiteral("0"), QStringLiteral("--psf-stack-out"), QStringLiteral("x.fits")},
             "positive number of pixels"},
            {{QStringLiteral("--psf-pixel"), QStringLiteral("banana"), QStringLiteral("--psf-stack-out"), QStringLiteral("x.fits")},
             "--psf-pixel"},
        };
        for (const auto& [flags, message] : bad) {
            const Run refused = cli(quickFit() << flags);
            QVERIFY2(refused.status == 2, qPrintable(flags.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromUtf8(refused.err)));
            QVERIFY2(refused.err.contains(message), refused.err.constData());
            QVERIFY2(refused.out.isEmpty(), refused.out.constData()); // no fit was reported: refused before it
        }
    }

    void conflictingOutputsAreUsageErrors()
    {
        // Defect 7: the same file twice, or an input as an output (even with --force), exit 2 before fitting.
        const QStringList before = files();
        Run run =
            cli(quickFit() << QStringLiteral("--json") << QStringLiteral("s.out") << QStringLiteral("--csv") << QStringLiteral("./s.out"));
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("name the same file"), run.err.constData());
        const QByteArray input = md5(m_dir.filePath(QStringLiteral("d.fits")));
        run = cli(quickFit() << QStringLiteral("--phase-out") << QStringLiteral("d.fits") << QStringLiteral("--force"));
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("is an input"), run.err.constData());
        QCOMPARE(md5(m_dir.filePath(QStringLiteral("d.fits"))), input);
        QCOMPARE(files(), before);
        // simulate: --out whose truth file is the --truth input.
        run = cli({QStringLiteral("simulate"), QStringLiteral("--grid"), QStringLiteral("32"), QStringLiteral("--truth"),
                   QStringLiteral("d.truth.json"), QStringLiteral("--out"), QStringLiteral("d.fits"), QStringLiteral("--force")});
        QCOMPARE(run.status, 2);
        QCOMPARE(md5(m_dir.filePath(QStringLiteral("d.fits"))), input);
    }

    void outputsAreCheckedBeforeTheFit()
    {
        // Defect 8: a missing folder fails at once (no progress, no summary), exit 1, naming the file.
        const Run run = cli(quickFit() << QStringLiteral("--csv") << QStringLiteral("c.csv") << QStringLiteral("--json")
                                       << QStringLiteral("missing/r.json"));
        QCOMPARE(run.status, 1);
        QVERIFY2(run.err.contains("missing/r.json") && run.err.contains("does not exist"), run.err.constData());
        QVERIFY(!run.out.contains("Wavefront Studio reconstruction"));
        QVERIFY(!QFile::exists(m_dir.filePath(QStringLiteral("c.csv"))));
    }

    void fullDiskLeavesNoOutput()
    {
        // Defect 1 through a real limit: with ulimit -f 16 KiB the model cube (3 x 32 x 32 doubles) cannot
        // be written; exit 1 naming it, and neither it, the JSON and CSV written before it, nor a temporary remain.
        const QStringList before = files();
        const Run run = cli(quickFit() << QStringLiteral("--json") << QStringLiteral("r.json") << QStringLiteral("--csv")
                                       << QStringLiteral("c.csv") << QStringLiteral("--model-out") << QStringLiteral("m.fits"),
                            true);
        QCOMPARE(run.status, 1);
        QVERIFY2(run.err.contains("m.fits") && run.err.contains("File too large"), run.err.constData());
        QCOMPARE(files(), before);
    }

    void fifoInputIsRefused()
    {
        // Defect 3: used to hang forever.
        QCOMPARE(::mkfifo(m_dir.filePath(QStringLiteral("pipe.fits")).toLocal8Bit().constData(), 0600), 0);
        const Run run = cli({QStringLiteral("reconstruct"), QStringLiteral("--input"), QStringLiteral("pipe.fits"),
                             QStringLiteral("--wavelength"), QStringLiteral("633nm")});
        QCOMPARE(run.status, 1);
        QVERIFY2(run.err.contains("not a regular file"), run.err.constData());
        QFile::remove(m_dir.filePath(QStringLiteral("pipe.fits")));
    }

    void implausibleValuesGiveTheRange()
    {
        // Defects 10, 11.
        Run run = cli(quickFit() << QStringLiteral("--wavelength") << QStringLiteral("633"));
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("did you mean 633nm?"), run.err.constData());
        run = cli(quickFit() << QStringLiteral("--defocus") << QStringLiteral("-1e9w,0,1e9w"));
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("at most 1000 waves"), run.err.constData());
        run = cli(quickFit() << QStringLiteral("--read-noise") << QStringLiteral("-3"));
        QCOMPARE(run.status, 2);
        run = cli(quickFit() << QStringLiteral("--stages") << QStringLiteral("4,2"));
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("--stages") && !run.err.contains("--order"), run.err.constData());
        run = cli(quickFit() << QStringLiteral("--max-iterations") << QStringLiteral("99999999999"));
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("out of range"), run.err.constData());
        run = cli(quickFit() << QStringLiteral("--crop") << QStringLiteral("16384"));
        QCOMPARE(run.status, 1);
        QVERIFY2(run.err.contains("larger than the images") && !run.err.contains("bad_alloc"), run.err.constData());
        QCOMPARE(run.err.count("larger than the images"), 1); // said once, not once per pass over the data
        run = cli(quickFit() << QStringLiteral("--crop") << QStringLiteral("2"));
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("parameters cannot be fitted"), run.err.constData());
    }

    void warningsOnceOnStandardError()
    {
        // One in-focus plane: the sign-ambiguity warning, once, on stderr only.
        const Run run =
            cli(quickFit() << QStringLiteral("--planes") << QStringLiteral("1") << QStringLiteral("--defocus") << QStringLiteral("0"));
        QVERIFY2(run.status == 0, run.err.constData());
        QVERIFY(!run.out.contains("warning"));
        QCOMPARE(run.err.count("no plane is defocused"), 1);
        QCOMPARE(run.err.count("cannot tell the sign"), 1); // one warning in one wording (there were two)
    }

    void wholeNumbersWithAnExponent()
    {
        // --max-iterations 1e3 is a thousand iterations (it was "out of range (at most 2147483647)").
        Run run = cli(quickFit() << QStringLiteral("--max-iterations") << QStringLiteral("1e3"));
        QVERIFY2(run.status == 0, run.err.constData());
        run = cli(quickFit() << QStringLiteral("--max-iterations") << QStringLiteral("1e10"));
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("out of range"), run.err.constData());
        run = cli(quickFit() << QStringLiteral("--max-iterations") << QStringLiteral("2.5"));
        QCOMPARE(run.status, 2);
        QVERIFY2(run.err.contains("not an integer"), run.err.constData());
    }

    void concurrentRunsAreByteIdentical()
    {
        // Defect 12: measured FFTW plans come from shared wisdom (written atomically, under a lock),
        // sums in a fixed order: three concurrent runs and one after them agree to the byte.
        QObject owner;
        QList<QProcess*> runs;
        for (int i = 0; i < 3; ++i)
            runs << startCli(quickFit() << QStringLiteral("--threads") << QStringLiteral("2") << QStringLiteral("--csv")
                                        << QStringLiteral("c%1.csv").arg(i) << QStringLiteral("--phase-out")
                                        << QStringLiteral("p%1.fits").arg(i),
                             m_dir.path(), &owner);
        for (QProcess* p : runs) {
            const Run r = finish(p);
            QVERIFY2(r.status == 0, r.err.constData());
        }
        const Run last = cli(quickFit() << QStringLiteral("--threads") << QStringLiteral("2") << QStringLiteral("--csv")
                                        << QStringLiteral("c3.csv") << QStringLiteral("--phase-out") << QStringLiteral("p3.fits"));
        QVERIFY2(last.status == 0, last.err.constData());
        for (int i = 1; i < 4; ++i) {
            QCOMPARE(md5(m_dir.filePath(QStringLiteral("c%1.csv").arg(i))), md5(m_dir.filePath(QStringLiteral("c0.csv"))));
            QCOMPARE(md5(m_dir.filePath(QStringLiteral("p%1.fits").arg(i))), md5(m_dir.filePath(QStringLiteral("p0.fits"))));
        }
        QVERIFY(!md5(m_dir.filePath(QStringLiteral("c0.csv"))).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestCliOutputs)
#include "tst_clioutputs.moc"
