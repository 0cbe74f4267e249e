// wavefront-cli in the third hostile round (issue 28 items 5, 9, 11, 12): settings checked on the headers
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
#include <functional>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace wfs::test;

namespace {

struct Run {
    int status = -1; // -1: killed by a signal or still running after 5 minutes (a hang)
    QByteArray out, err;
};

// The CLI in `dir`, with `limit` applied in the child before it starts.
Run cli(const QStringList& args, const QString& dir, const std::function<void()>& limit = {})
{
    QProcess process;
    process.setWorkingDirectory(dir);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("WFS_FFTW_WISDOM_DIR"), QString());
    process.setProcessEnvironment(env);
    if (limit)
        process.setChildProcessModifier(limit);
    process.start(QStringLiteral(WFS_CLI_PATH), args);
    Run r;
    if (!process.waitForFinished(300000)) {
        process.kill();
        process.waitForFinished();
        return r;
    }
    r.status = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    r.out = process.readAllStandardOutput();
    r.err = process.readAllStandardError();
    return r;
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

// A 16-bit FITS cube of `planes` planes of n x n: a flat 100 with a Gaussian spot (written a row at a time).
bool writeStack(const QString& path, int n, int planes)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    QByteArray header;
    for (const QByteArray& card : {QByteArray("SIMPLE  =                    T"), QByteArray("BITPIX  =                   16"),
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
                row[c + 1] = char(std::min(255, int(10 + 240 * std::exp(-(double(c - n / 2) * (c - n / 2) + double(r - n / 2) * (r - n / 2)) / 18.0))));
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

class TestCliHostile2 : public QObject {
    Q_OBJECT

private slots:
    // Item 9: a setting the headers cannot supply is said before the stack's pixels are read. The stack's pixels
    // need 512 MB as doubles; under a 250 MB address-space limit, reading them fails ("not enough memory"), so
    // the settings' message proves they were not read.
    void missingSettingsAreSaidBeforeThePixelsAreRead()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeStack(dir.filePath(QStringLiteral("stack.fits")), 4096, 4));
        const Run noWavelength = cli(args({"reconstruct", "--input", "stack.fits", "--sampling", "2", "--z-step", "1um", "--na", "0.5", "--quiet"}),
                                     dir.path(), addressSpace(250));
        QVERIFY2(noWavelength.status == 2 && noWavelength.err.contains("the wavelength is unknown: give --wavelength"), noWavelength.err.constData());
        const Run noStep = cli(args({"reconstruct", "--input", "stack.fits", "--wavelength", "633nm", "--sampling", "2", "--quiet"}), dir.path(),
                               addressSpace(250));
        QVERIFY2(noStep.status == 2 && noStep.err.contains("stack.fits[0,0] (plane 0): its defocus is unknown"), noStep.err.constData());
        const Run badOrder = cli(args({"reconstruct", "--input", "stack.fits", "--wavelength", "633nm", "--sampling", "2", "--z-step", "1um", "--na",
                                       "0.5", "--order", "99", "--quiet"}),
                                 dir.path(), addressSpace(250));
        QVERIFY2(badOrder.status == 2 && badOrder.err.contains("order"), badOrder.err.constData());
        // With every setting given, the same limit does stop the read: the pixels are needed now, and said so.
        const Run complete = cli(args({"reconstruct", "--input", "stack.fits", "--wavelength", "633nm", "--sampling", "2", "--z-step", "1um", "--na",
                                       "0.5", "--quiet"}),
                                 dir.path(), addressSpace(250));
        QVERIFY2(complete.status == 1 && complete.err.contains("memory"), complete.err.constData());
    }

    // Item 12: an 8000 x 8000 PNG (a few hundred KB) with --crop 64 is fitted under a 1.4 GB address-space limit.
    // Before, it peaked at 1.6 GB resident (the decoded 8-bit rows, a copy of the session, a background-subtracted
    // copy of the whole plane) and the limit stopped it.
    void largePngWithASmallCropFitsInLittleMemory()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QByteArray png = largePng(8000);
        QVERIFY(png.size() < 1 << 20);
        QVERIFY(writeFile(dir.filePath(QStringLiteral("big.png")), png));
        const Run r = cli(args({"reconstruct", "--input", "big.png", "--wavelength", "633nm", "--sampling", "2", "--crop", "64", "--max-iterations",
                                "5", "--quiet", "--json", "r.json"}),
                          dir.path(), addressSpace(1400));
        QVERIFY2(r.status == 0, r.err.constData());
        QVERIFY(QFile::exists(dir.filePath(QStringLiteral("r.json"))));
    }
};

QTEST_GUILESS_MAIN(TestCliHostile2)
#include "tst_clihostile2.moc"
