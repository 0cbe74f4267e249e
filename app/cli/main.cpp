// wavefront-cli: the headless front end. Parses the sub-command and hands over; all work is in core/.
#include "Commands.h"

#include <QCoreApplication>
#include <QTextStream>

#include <cstdio>
#include <functional>
#include <map>

namespace {
void printUsage(FILE* stream)
{
    std::fprintf(stream,
                 "Usage: wavefront-cli <command> [options]\n\n"
                 "Commands:\n"
                 "  simulate      write synthetic PSF data with known aberrations (FITS)\n"
                 "  reconstruct   fit Zernike coefficients to PSF images (a preset or your files)\n"
                 "  bench oof     time the OOF benchmark problem, one JSON object per line\n"
#ifdef WFS_HAVE_FASTH_BENCH
                 "  fasth-bench   time Householder products (FastH), one JSON object per line\n"
#endif
                 "\nRun 'wavefront-cli <command> --help' for the options of a command.\n");
}
} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("wavefront-cli"));
    QCoreApplication::setApplicationVersion(QStringLiteral(WFS_VERSION));

    QStringList args = QCoreApplication::arguments();
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
        {QStringLiteral("reconstruct"), wfs::cli::runReconstruct},
        {QStringLiteral("bench"), wfs::cli::runBench},
#ifdef WFS_HAVE_FASTH_BENCH
        {QStringLiteral("fasth-bench"), wfs::cli::runFasthBench},
#endif
    };
    const auto it = commands.find(command);
    if (it == commands.end()) {
        std::fprintf(stderr, "wavefront-cli: unknown command '%s' (try --help)\n", qPrintable(command));
        return 2;
    }
    return it->second(rest);
}
