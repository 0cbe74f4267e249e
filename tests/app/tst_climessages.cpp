// What wavefront-cli says (issue 28 items 5, 9, 11, 12): settings checked on the headers
// before a stack's pixels are read, a large PNG read within a memory limit, messages that name the cause,
// and where every metadata value came from.
#include "TestSupport.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <zlib.h>

#include <cmath>
#include <csignal>
#include <functional>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace wfs::test;

namespace {

using Run = ProgramRun; // status -1: killed by a signal or still running after 5 minutes (a hang)

// The CLI in `dir`, with `limit` applied in the child before it starts (setrlimit, or dropping root).
Run cli(const QStringList& args, const QString& dir, const std::function<void()>& limit = {})
{
    return runProgramIn(QStringLiteral(WFS_CLI_PATH), args, dir, limit);
}

std::function<void()> addressSpace(long long megabytes)
{
    return [megabytes] {
        const rlimit l{rlim_t(megabytes) << 20, rlim_t(megabytes) << 20};
        ::setrlimit(RLIMIT_AS, &l);
    };
}

QStringList args(std::initializer_list<const char*> list)
{
    QStringList out;
    for (const char* a : list)
        out << QString::fromUtf8(a);
    return out;
}

// The least address space (in steps of 25 MB) in which `accepted` holds for the run: what the program itself takes
// (its libraries, a CUDA build's too, threads, FFTW), measured here instead of assumed. -1 when no limit up to 8 GB does.
long long addressSpaceFloor(const QStringList& runArgs, const QString& dir, const std::function<bool(const Run&)>& accepted)
{
    long long low = 25, high = 8192; // megabytes: `accepted` fails at low (nothing loads), holds at high
    if (!accepted(cli(runArgs, dir, addressSpace(high))))
        return -1;
    while (high - low > 25) {
        const long long middle = (low + high) / 2;
        (accepted(cli(runArgs, dir, addressSpace(middle))) ? high : low) = middle;
    }
    return high;
}

// A 16-bit FITS cube of `planes` planes of n x n: a flat 100 with a Gaussian spot (written a row at a time).
bool writeStack(const QString& path, int n, int planes)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    QByteArray header;
    for (const QByteArray& card :
         {QByteArray("SIMPLE  =                    T"), QByteArray("BITPIX  =                   16"),
          QByteArray("NAXIS   =                    3"), "NAXIS1  = " + QByteArray::number(n).rightJustified(20),
          "NAXIS2  = " + QByteArray::number(n).rightJustified(20), "NAXIS3  = " + QByteArray::number(planes).rightJustified(20),
          QByteArray("BZERO   =                32768"), QByteArray("END")})
        header += card.leftJustified(80, ' ');
    header = header.leftJustified(int((header.size() + 2879) / 2880 * 2880), ' ');
    f.write(header);
    QByteArray row(n * 2, 0);
    qint64 written = 0;
    for (int k = 0; k < planes; ++k)
        for (int r = 0; r < n; ++r) {
            for (int c = 0; c < n; ++c) {
                const double d2 = double(r - n / 2) * (r - n / 2) + double(c - n / 2) * (c - n / 2);
                const int v = int(100 + 5000 * std::exp(-d2 / (2.0 * (2 + k) * (2 + k)))) - 32768;
                row[2 * c] = char((v >> 8) & 0xff);
                row[2 * c + 1] = char(v & 0xff);
            }
            written += f.write(row);
        }
    f.write(QByteArray(int((2880 - written % 2880) % 2880), '\0'));
    return f.error() == QFile::NoError;
}

QByteArray pngChunk(const char* type, const QByteArray& data)
{
    QByteArray body = QByteArray(type) + data;
    QByteArray out;
    auto be32 = [&out](quint32 v) {
        for (int s = 24; s >= 0; s -= 8)
            out += char((v >> s) & 0xff);
    };
    be32(quint32(data.size()));
    out += body;
    be32(quint32(crc32(0, reinterpret_cast<const Bytef*>(body.constData()), uInt(body.size()))));
    return out;
}

// An 8-bit grey PNG of n x n that compresses to a few hundred KB: black with a spot in the middle.
QByteArray largePng(int n)
{
    QByteArray raw;
    raw.reserve(qsizetype(n) * (n + 1));
    for (int r = 0; r < n; ++r) {
        QByteArray row(n + 1, '\0');
        if (std::abs(r - n / 2) < 12)
            for (int c = n / 2 - 12; c < n / 2 + 12; ++c)
                row[c + 1] = char(
                    std::min(255, int(10 + 240 * std::exp(-(double(c - n / 2) * (c - n / 2) + double(r - n / 2) * (r - n / 2)) / 18.0))));
        for (int c = 1; c <= n; c += 997)
            row[c] = 10; // a faint background: a border with some spread
        raw += row;
    }
    uLongf size = compressBound(uLong(raw.size()));
    QByteArray packed(qsizetype(size), '\0');
    compress2(reinterpret_cast<Bytef*>(packed.data()), &size, reinterpret_cast<const Bytef*>(raw.constData()), uLong(raw.size()), 9);
    packed.resize(qsizetype(size));
    QByteArray ihdr;
    for (quint32 v : {quint32(n), quint32(n)})
        for (int s = 24; s >= 0; s -= 8)
            ihdr += char((v >> s) & 0xff);
    ihdr += QByteArray("\x08\x00\x00\x00\x00", 5);
    return QByteArray("\x89PNG\r\n\x1a\n", 8) + pngChunk("IHDR", ihdr) + pngChunk("IDAT", packed) + pngChunk("IEND", {});
}

} // namespace

class TestCliMessages : public QObject {
    Q_OBJECT

private slots:
    // Item 9: a setting the headers cannot supply is said before the stack's pixels are read. The stack's pixels
    // need 512 MB as doubles; with 150 MB more address space than the same refusal of a 32 x 32 stack takes,
    // reading them fails ("not enough memory"), so the settings' message proves they were not read.
    void missingSettingsAreSaidBeforeThePixelsAreRead()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeStack(dir.filePath(QStringLiteral("small.fits")), 32, 4));
        const long long floor =
            addressSpaceFloor(args({"reconstruct", "--input", "small.fits", "--sampling", "2", "--quiet"}), dir.path(),
                              [](const Run& r) { return r.status == 2 && r.err.contains("the wavelength is unknown"); });
        QVERIFY2(floor > 0, "the refusal of a small stack was not seen under any limit");
        const auto limit = addressSpace(floor + 150);
        QVERIFY(writeStack(dir.filePath(QStringLiteral("stack.fits")), 4096, 4));
        const Run noWavelength =
            cli(args({"reconstruct", "--input", "stack.fits", "--sampling", "2", "--z-step", "1um", "--na", "0.5", "--quiet"}), dir.path(),
                limit);
        QVERIFY2(noWavelength.status == 2 && noWavelength.err.contains("the wavelength is unknown: give --wavelength"),
                 noWavelength.err.constData());
        const Run noStep =
            cli(args({"reconstruct", "--input", "stack.fits", "--wavelength", "633nm", "--sampling", "2", "--quiet"}), dir.path(), limit);
        QVERIFY2(noStep.status == 2 && noStep.err.contains("stack.fits[0,0] (plane 0): its defocus is unknown"), noStep.err.constData());
        const Run badOrder = cli(args({"reconstruct", "--input", "stack.fits", "--wavelength", "633nm", "--sampling", "2", "--z-step",
                                       "1um", "--na", "0.5", "--order", "99", "--quiet"}),
                                 dir.path(), limit);
        QVERIFY2(badOrder.status == 2 && badOrder.err.contains("order"), badOrder.err.constData());
        // With every setting given, the same limit does stop the read: the pixels are needed now, and said so.
        const Run complete = cli(args({"reconstruct", "--input", "stack.fits", "--wavelength", "633nm", "--sampling", "2", "--z-step",
                                       "1um", "--na", "0.5", "--quiet"}),
                                 dir.path(), limit);
        QVERIFY2(complete.status == 1 && complete.err.contains("memory"), complete.err.constData());
    }

    // Item 12: an 8000 x 8000 PNG (a few hundred KB) with --crop 64 is fitted with 1100 MB more address space than a
    // 32 x 32 fit takes; the image itself is 512 MB as doubles. Before, it took 1.6 GB resident more or less (the
    // decoded 8-bit rows, a copy of the session, a background-subtracted copy of the whole plane) and the limit stopped it.
    void largePngWithASmallCropFitsInLittleMemory()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeStack(dir.filePath(QStringLiteral("small.fits")), 32, 1));
        const long long floor = addressSpaceFloor(
            args({"reconstruct", "--input", "small.fits", "--wavelength", "633nm", "--sampling", "2", "--max-iterations", "5", "--quiet"}),
            dir.path(), [](const Run& r) { return r.status == 0; });
        QVERIFY2(floor > 0, "a small fit did not run under any limit");
        const QByteArray png = largePng(8000);
        QVERIFY(png.size() < 1 << 20);
        QVERIFY(writeFile(dir.filePath(QStringLiteral("big.png")), png));
        const Run r = cli(args({"reconstruct", "--input", "big.png", "--wavelength", "633nm", "--sampling", "2", "--crop", "64",
                                "--max-iterations", "5", "--quiet", "--json", "r.json"}),
                          dir.path(), addressSpace(floor + 1100));
        QVERIFY2(r.status == 0, r.err.constData());
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("r.json"))));
    }

    // Issue 41 item 7: the CUDA libraries (about 1.5 GB of address space) are loaded only when a GPU is asked for, so
    // under the limit where every command used to die before main (1490 MB) the CLI starts and fits on the CPU, and
    // asked for the GPU it says why there is none: in a CUDA build, that its backend could not be loaded, and why.
    void cudaIsLoadedOnlyWhenTheGpuIsAskedFor()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeStack(dir.filePath(QStringLiteral("small.fits")), 32, 1));
        const auto limit = addressSpace(1490);
        const Run version = cli(args({"--version"}), dir.path(), limit);
        QVERIFY2(version.status == 0 && version.out.startsWith("wavefront-cli "), version.err.constData());
        const QStringList fit =
            args({"reconstruct", "--input", "small.fits", "--wavelength", "633nm", "--sampling", "2", "--max-iterations", "5", "--quiet"});
        const Run cpu = cli(fit, dir.path(), limit);
        QVERIFY2(cpu.status == 0, cpu.err.constData());
        const Run gpu = cli(fit + args({"--backend", "gpu"}), dir.path(), limit);
        QVERIFY2(gpu.status != 0 && gpu.err.contains("no GPU"), gpu.err.constData());
        if (!gpu.err.contains("CUDA not built"))
            QVERIFY2(gpu.err.contains("could not be loaded") && gpu.err.contains("ulimit -v"), gpu.err.constData());
    }

    // Item 11: a refusal shows the data's warnings behind it; the result JSON's "warnings" hold the data's warnings.
    void warningsReachTheRefusalAndTheResult()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QCOMPARE(cli(args({"simulate", "--grid", "32", "--order", "2", "--out", "d.fits"}), dir.path()).status, 0);
        QFile fits(dir.filePath(QStringLiteral("d.fits")));
        QVERIFY(fits.open(QIODevice::ReadOnly));
        QByteArray bytes = fits.readAll();
        fits.close();
        const qsizetype at = bytes.indexOf("WAVELENG=");
        QVERIFY(at > 0);
        QByteArray bad = bytes;
        bad.replace(at, 80, QByteArray("WAVELENG= 'abc'").leftJustified(80, ' '));
        QVERIFY(writeFile(dir.filePath(QStringLiteral("w.fits")), bad));
        const Run refused = cli(args({"reconstruct", "--input", "w.fits", "--quiet"}), dir.path());
        QVERIFY2(refused.status == 2 && refused.err.contains("warning: w.fits: keyword WAVELENG = 'abc' is not a number; ignored")
                     && refused.err.contains(
                         "the wavelength is unknown: give --wavelength (e.g. 633nm); w.fits: keyword WAVELENG = 'abc' is not a number"),
                 refused.err.constData());

        // The simulated PSF reaches the edge of its 32 x 32 planes: a preparation warning, now in the JSON too.
        const Run fitted =
            cli(args({"reconstruct", "--input", "d.fits", "--max-iterations", "5", "--quiet", "--json", "r.json"}), dir.path());
        QVERIFY2(fitted.status == 0 && fitted.err.contains("the PSF reaches the edge of the image"), fitted.err.constData());
        QFile json(dir.filePath(QStringLiteral("r.json")));
        QVERIFY(json.open(QIODevice::ReadOnly));
        const QJsonArray warnings = QJsonDocument::fromJson(json.readAll()).object().value(QStringLiteral("warnings")).toArray();
        bool edge = false;
        for (const QJsonValue& w : warnings)
            edge = edge || w.toString().contains(QLatin1String("the PSF reaches the edge of the image"));
        QVERIFY2(edge, QJsonDocument(warnings).toJson().constData());
    }

    // Item 11: a batch whose outputs the file system refuses (RLIMIT_FSIZE of 1 KB: the results and the logs
    // cannot be written, as on a full disk) says why for every input, in its progress and its summary (before:
    // "FAILED: 2", the last line of a log cut short, or "not run" for an empty log).
    void fullDiskInBatchIsSaidPerInput()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QCOMPARE(cli(args({"simulate", "--grid", "32", "--order", "2", "--out", "a.fits"}), dir.path()).status, 0);
        QCOMPARE(cli(args({"simulate", "--grid", "32", "--order", "2", "--seed", "5", "--out", "b.fits"}), dir.path()).status, 0);
        const Run r = cli(args({"batch", "--out", "out", "--jobs", "1", "a.fits", "b.fits"}), dir.path(), [] {
            const rlimit l{1024, 1024};
            ::setrlimit(RLIMIT_FSIZE, &l);
            std::signal(SIGXFSZ, SIG_IGN);
        });
        QVERIFY2(r.status == 1, r.err.constData());
        QVERIFY2(r.out.contains("[1/2] a: FAILED: out/a.json: write failed (File too large)")
                     && r.out.contains("[2/2] b: FAILED: out/b.json: write failed (File too large)") && !r.out.contains("not run"),
                 r.out.constData());
        QFile summary(dir.filePath(QStringLiteral("out/summary.csv")));
        QVERIFY(summary.open(QIODevice::ReadOnly));
        const QByteArray rows = summary.readAll();
        QCOMPARE(rows.count("failed,,,,,,out/"), 2);
        QVERIFY2(rows.count("write failed (File too large)") == 2, rows.constData());
    }

    // Item 11: FIFOs where a session, a truth file or a manifest belongs are named as what was expected.
    void fifosAreToldWhatWasExpected()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QCOMPARE(::mkfifo(dir.filePath(QStringLiteral("pipe")).toLocal8Bit().constData(), 0600), 0);
        const Run session = cli(args({"reconstruct", "--session", "pipe"}), dir.path());
        QVERIFY2(session.status == 1 && session.err.contains("give a session file (JSON)"), session.err.constData());
        const Run truth = cli(args({"simulate", "--grid", "32", "--truth", "pipe", "--out", "o.fits"}), dir.path());
        QVERIFY2(truth.status == 1 && truth.err.contains("give a truth file (JSON)"), truth.err.constData());
        const Run manifest = cli(args({"batch", "--out", "out", "--manifest", "pipe"}), dir.path());
        QVERIFY2(manifest.status == 1 && manifest.err.contains("give a manifest (text)"), manifest.err.constData());
        const Run input = cli(args({"batch", "--out", "out", "pipe"}), dir.path());
        QVERIFY2(input.out.contains("pipe: is not a regular file (a FIFO, device or socket); give an image file")
                     && !input.out.contains("not found"),
                 input.out.constData());
    }

    // Item 5: the run's report says where every metadata value came from: a header keyword, a sidecar, the command
    // line, the session, or the default.
    void reportSaysWhereEveryMetadataValueCameFrom()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QCOMPARE(cli(args({"simulate", "--grid", "32", "--order", "2", "--out", "d.fits"}), dir.path()).status, 0);
        QVERIFY(writeFile(dir.filePath(QStringLiteral("d.fits.json")), R"({"pixel_pitch": "6.5um", "na": 0.1})"));
        const Run files =
            cli(args({"reconstruct", "--input", "d.fits", "--immersion", "1.33", "--max-iterations", "3", "--save-session", "s.json"}),
                dir.path());
        QVERIFY2(files.status == 0, files.err.constData());
        for (const char* line :
             {"metadata: wavelength 633 nm (d.fits: keyword WAVELENG)", "metadata: samplingQ 2 (d.fits: keyword SAMPLING)",
              "metadata: pixelPitch 6.5 um (d.fits.json)", "metadata: numericalAperture 0.1 (d.fits.json)",
              "metadata: immersionIndex 1.33 (command line)", "metadata: defocusModel paraxial (default)",
              "metadata: defocus of d.fits[0,0] -1 waves (d.fits: keyword DEFOCUS1)"})
            QVERIFY2(files.out.contains(line),
                     qPrintable(QStringLiteral("%1 not in\n%2").arg(QString::fromUtf8(line), QString::fromUtf8(files.out))));
        QCOMPARE(files.out.count("metadata: wavelength"), 1);

        const Run session = cli(args({"reconstruct", "--session", "s.json", "--wavelength", "600nm", "--max-iterations", "3"}), dir.path());
        QVERIFY2(session.status == 0, session.err.constData());
        for (const char* line :
             {"metadata: wavelength 600 nm (command line)", "metadata: immersionIndex 1.33 (session s.json (command line))",
              "metadata: pixelPitch 6.5 um (session s.json (d.fits.json))"})
            QVERIFY2(session.out.contains(line),
                     qPrintable(QStringLiteral("%1 not in\n%2").arg(QString::fromUtf8(line), QString::fromUtf8(session.out))));
    }

    // The recount's nonsense accepted: a truncated stack fitted as the planes it kept, --grid 0 taken as the data's
    // size, --planes 0,0 fitting plane 0 once. Each is refused now, saying how to ask for what was meant.
    void nonsenseIsRefused()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QCOMPARE(cli(args({"simulate", "--grid", "32", "--order", "2", "--out", "d.fits"}), dir.path()).status, 0);
        QFile fits(dir.filePath(QStringLiteral("d.fits")));
        QVERIFY(fits.open(QIODevice::ReadOnly));
        const QByteArray bytes = fits.readAll();
        for (qsizetype size : {bytes.size() / 2, bytes.size() - 1}) {
            QVERIFY(writeFile(dir.filePath(QStringLiteral("t.fits")), bytes.left(size)));
            const Run r =
                cli(args({"reconstruct", "--input", "t.fits", "--quiet", "--max-iterations", "5", "--json", "r.json"}), dir.path());
            QVERIFY2(r.status == 1 && r.err.contains("the file may be truncated")
                         && r.err.contains("the planes left are not the stack the file holds") && r.err.count("pixels unreadable") == 1
                         && !QFile::exists(dir.filePath(QStringLiteral("r.json"))),
                     r.err.constData());
        }
        const Run chosen =
            cli(args({"reconstruct", "--input", "t.fits", "--planes", "0,1", "--quiet", "--max-iterations", "5"}), dir.path());
        QVERIFY2(chosen.status == 0 && chosen.err.contains("kept the 2 plane(s) before it"), chosen.err.constData());

        const Run grid = cli(args({"reconstruct", "--input", "d.fits", "--grid", "0", "--quiet"}), dir.path());
        QVERIFY2(grid.status == 2 && grid.err.contains("--grid: 0 is not a grid size"), grid.err.constData());
        const Run presetGrid = cli(args({"reconstruct", "--preset", "demo", "--grid", "0", "--quiet"}), dir.path());
        QVERIFY2(presetGrid.status == 2 && presetGrid.err.contains("--grid: 0 is not a grid size"), presetGrid.err.constData());
        const Run twice = cli(args({"reconstruct", "--input", "d.fits", "--planes", "0,0", "--quiet"}), dir.path());
        QVERIFY2(twice.status == 2 && twice.err.contains("plane 0 is listed twice"), twice.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCliMessages)
#include "tst_climessages.moc"
