// wavefront-cli: the headless front end. Parses the sub-command and hands over; all work is in core/.
#include "Commands.h"
#include "CliCommon.h"
#include "base/QuietQt.h"

#include <QCoreApplication>
#include <QGuiApplication>
#include <QTextStream>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <new>
#include <string>

namespace {
void printUsage(FILE* stream)
{
    std::fprintf(stream, "Usage: wavefront-cli <command> [options]\n\n"
                         "Commands:\n"
                         "  simulate      write synthetic PSF data with known aberrations (FITS)\n"
                         "  reconstruct   fit Zernike coefficients to PSF images (a preset or your files)\n"
                         "  psf           write a microscope's 3-D PSF without data (scalar or vectorial model)\n"
                         "  bench oof     time the OOF benchmark problem, one JSON object per line\n"
                         "  bench pupil   time the pupil-function fit (zonal phase and amplitude), one JSON object per line\n"
                         "  bench field   beads per second of the field pipeline on a simulated bead slide\n"
                         "  bench live    stacks per second and latency of live mode against a writer at a given rate\n"
                         "  fasth-bench   time Householder products (FastH), one JSON object per line\n"
                         "  fasth-train   train an SVD layer built from Householder reflections (FastH), JSON summary\n"
                         "  batch         reconstruct many inputs with one settings file: a result per input, a summary CSV\n"
                         "  field         find and fit every bead of a wide-field stack; aberrations across the field\n"
                         "  watch         live mode: fit every stack written into a folder, one JSON line per stack\n"
                         "  device-reference  write the GPU device check's reference data (CPU backend)\n"
                         "\nRun 'wavefront-cli <command> --help' for the options of a command.\n");
}
// Names the command closest to a mistyped one, if any. Returns the usage status.
int unknownCommand(const QString& command, const QStringList& names)
{
    const QString near = wfs::cli::closestName(command, names);
    if (!near.isEmpty())
        std::fprintf(stderr, "wavefront-cli: unknown command '%s'; did you mean '%s'?\n", qPrintable(command), qPrintable(near));
    else
        std::fprintf(stderr, "wavefront-cli: unknown command '%s' (try --help)\n", qPrintable(command));
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    // Under an address-space limit just above what the libraries take (ulimit -v), an allocation can fail inside
    // Qt's noexcept code (QCommandLineParser's lists), which ends in std::terminate whatever main catches. So the
    // headroom every command needs to start is asked for first: without it the program says so and stops.
    constexpr std::size_t kStartHeadroom = std::size_t(64) << 20;
    if (void* probe = std::malloc(kStartHeadroom)) {
        std::free(probe);
    } else {
        std::fprintf(stderr, "%s%s%s: error: %s\n", argv[0], argc > 1 ? " " : "", argc > 1 ? argv[1] : "", wfs::cli::kOutOfMemory);
        return 1;
    }
    // Over a file-size limit (ulimit -f) a write then fails with EFBIG, which the output layer reports
    // with the file's name and cleans up after, instead of SIGXFSZ killing the program mid-write (or
    // while a library such as fontconfig updates a cache of its own).
    std::signal(SIGXFSZ, SIG_IGN);
    // A headless QGuiApplication: drawing text into a PNG (the phase map's colour bar, render/) needs
    // fonts, which Qt offers only with one; the offscreen platform needs no display. It gets the program
    // name only, since Qt takes options of its own out of argv (-session, -platform...), which would eat
    // `reconstruct --session FILE`: the command's options stay ours.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    wfs::quietQtMessages(); // before Qt says anything (core/base/QuietQt.h)
    // Never destroyed: Qt's teardown initialises fontconfig only to destroy it (QFontconfigDatabase's destructor)
    // when no text was drawn, and under a memory limit fontconfig 2.14 crashes there (FcRuleDestroy after a failed
    // parse), after the program has said its error and chosen its exit status. The system reclaims it at exit; held
    // by a static, it is not a leak to a leak checker.
    static int guiArgc = 1;
    static QGuiApplication* application = new QGuiApplication(guiArgc, argv);
    Q_UNUSED(application);
    QCoreApplication::setApplicationName(QStringLiteral("wavefront-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(WFS_VERSION));

    QStringList args;
    for (int i = 0; i < argc; ++i)
        args.append(QString::fromLocal8Bit(argv[i]));
    if (args.size() < 2) {
        printUsage(stderr);
        return 2;
    }
    const QString command = args.at(1);
    if (command == QLatin1String("--help") || command == QLatin1String("-h") || command == QLatin1String("help")) {
        printUsage(stdout);
        return 0;
    }
    if (command == QLatin1String("--version")) {
        std::printf("wavefront-cli %s\n", WFS_VERSION);
        return 0;
    }
    // Each command sees "wavefront-cli <command>" as its program name, then its own options.
    QStringList rest = args.mid(2);
    rest.prepend(args.at(0) + QLatin1Char(' ') + command);

    const std::map<QString, std::function<int(const QStringList&)>> commands = {
        {QStringLiteral("simulate"), wfs::cli::runSimulate},
        {QStringLiteral("psf"), wfs::cli::runPsf},
        {QStringLiteral("reconstruct"), wfs::cli::runReconstruct},
        {QStringLiteral("bench"), wfs::cli::runBench},
        {QStringLiteral("fasth-bench"), wfs::cli::runFasthBench},
        {QStringLiteral("fasth-train"), wfs::cli::runFasthTrain},
        {QStringLiteral("batch"), wfs::cli::runBatch},
        {QStringLiteral("field"), wfs::cli::runField},
        {QStringLiteral("watch"), wfs::cli::runWatch},
        {QStringLiteral("device-reference"), wfs::cli::runDeviceReference},
    };
    const auto it = commands.find(command);
    if (it == commands.end()) {
        QStringList names;
        for (const auto& entry : commands)
            names << entry.first;
        return unknownCommand(command, names);
    }
    try {
        return it->second(rest);
    } catch (const std::bad_alloc&) {
        // Where a command has no handler of its own yet: under a tight memory limit even building its options can
        // fail (QCommandLineParser allocates). Said without allocating, since the handler runs just as short.
        std::fprintf(stderr, "%s %s: error: %s\n", argv[0], argv[1], wfs::cli::kOutOfMemory);
        return 1;
    }
}
