// wavefront-studio: the desktop program. Parses the command line, shows the main window, and for
// documentation and tests can save a screenshot (after the fit with --quit-after-fit) and exit.
#include "FieldPanel.h"
#include "LivePanel.h"
#include "MainWindow.h"
#include "SetupPanel.h"
#include "../common/EventLoopGaps.h"
#include "base/QuietQt.h"

#include <QAction>
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

namespace {

void addStudioOptions(QCommandLineParser& parser, const QCommandLineOption& help, const QCommandLineOption& version)
{
    parser.setApplicationDescription(QStringLiteral("Wavefront Studio: wavefront reconstruction from PSF images, live."));
    parser.addOption(help);
    parser.addOption(version);
    parser.addOptions({
        {QStringLiteral("demo"), QStringLiteral("Open the built-in demo data and start a reconstruction at once (with --tab field, "
                                                "also run the Field tab on its simulated bead slide).")},
        {QStringLiteral("preset"),
         QStringLiteral("Like --demo with a built-in case: demo, or pupil (five planes of a pupil with a phase step, "
                        "apodisation and dust, fitted with a Zernike + zonal phase, a zonal amplitude and the "
                        "defocus scale), or vectorial (a bead 3 um deep in water under an NA 1.4 oil "
                        "objective, fitted with the vectorial model), or air (a bead under a dry NA 0.85 objective "
                        "over a camera's bias, fitted with the full pupil recipe: the NA and the smoothness weight "
                        "found from the data, a zonal phase and amplitude)."),
         QStringLiteral("NAME")},
        {QStringLiteral("screenshot"), QStringLiteral("Save a picture of the main window to FILE.png and exit."),
         QStringLiteral("FILE.png")},
        {QStringLiteral("fit"), QStringLiteral("Start a fit as soon as the data (FILE... or --session) have loaded, with the session's "
                                               "or the default settings.")},
        {QStringLiteral("quit-after-fit"),
         QStringLiteral("Exit when the fit has finished (status 0, or 1 when it failed or was refused), and the Field tab's run "
                        "when --demo starts one, after the --screenshot if one is asked for. Needs a fit: --demo, --preset or --fit.")},
        {QStringLiteral("session"), QStringLiteral("Open a saved session."), QStringLiteral("FILE.json")},
        {QStringLiteral("watch"),
         QStringLiteral("Live mode: fit every stack written into DIR with the default settings, on the Live tab "
                        "(the log is DIR/live.jsonl)."),
         QStringLiteral("DIR")},
        {QStringLiteral("present"), QStringLiteral("Start in presentation mode, for teaching from a projector: large text and thick lines "
                                                   "(View > Presentation mode, F5).")},
        {QStringLiteral("live-demo"),
         QStringLiteral("Start the live demo: a simulated camera writes stacks that live mode fits, on the Live tab "
                        "(with --screenshot: the picture is taken after 12 stacks).")},
        {QStringLiteral("hold-reference-after"),
         QStringLiteral("Live mode: once N stacks are in, hold the stack shown as the reference "
                        "(the Live tab then shows differences from it, as its Hold reference button)."),
         QStringLiteral("N")},
        {QStringLiteral("measure-stalls"),
         QStringLiteral("Live mode: from the first fitted stack on, measure the desktop's event loop for SECONDS "
                        "(the gaps between ticks of a 5 ms timer while the Live tab updates), print one "
                        "JSON line (max_gap_ms, p99_gap_ms, median_gap_ms, gaps_over_50ms, ...) and exit."),
         QStringLiteral("SECONDS")},
        {QStringLiteral("tab"),
         QStringLiteral("Show this tab first: phase, planes, psf, runs, speedup, fasth, live or field (default: phase)."),
         QStringLiteral("NAME")},
        {QStringLiteral("dock"),
         QStringLiteral("Bring this panel on the right to the front: coefficients, results or messages "
                        "(default: coefficients)."),
         QStringLiteral("NAME")},
        {QStringLiteral("setup-section"),
         QStringLiteral("Scroll the setup panel on the left to this box: data, metadata, preparation, model, imaging-model, "
                        "pupil-function or solver (for a screenshot of a box below the fold)."),
         QStringLiteral("NAME")},
        {QStringLiteral("size"), QStringLiteral("Window size in pixels, e.g. 1600x1000 (default); a screenshot has exactly this size."),
         QStringLiteral("WxH")},
    });
    parser.addPositionalArgument(QStringLiteral("files"), QStringLiteral("PSF images to open (FITS, TIFF, PNG)."),
                                 QStringLiteral("[FILE...]"));
}

void printHelp(const QCommandLineParser& parser)
{
    // Qt's usage line names the program by argv[0], which it reads from the application object.
    QString text = parser.helpText();
    const qsizetype lineEnd = text.indexOf(QLatin1Char('\n'));
    const qsizetype options = text.left(lineEnd).indexOf(QLatin1String(" [options]"));
    text.replace(0, lineEnd, QStringLiteral("Usage: wavefront-studio") + (options >= 0 ? text.left(lineEnd).mid(options) : QString()));
    std::fputs(qPrintable(text), stdout);
}

// --size WxH, or 1600x1000 when not given; nullopt (after saying why) when it is not a usable size.
std::optional<QSize> windowSize(const QCommandLineParser& parser)
{
    if (!parser.isSet(QStringLiteral("size")))
        return QSize(1600, 1000);
    const QStringList parts = parser.value(QStringLiteral("size")).split(QLatin1Char('x'));
    bool okW = false, okH = false;
    const int w = parts.size() == 2 ? parts[0].toInt(&okW) : 0, h = parts.size() == 2 ? parts[1].toInt(&okH) : 0;
    if (!okW || !okH || w < 200 || h < 200 || w > 16384 || h > 16384) {
        std::fprintf(stderr, "wavefront-studio: --size wants WIDTHxHEIGHT in pixels (at least 200x200), e.g. 1600x1000; got \"%s\"\n",
                     qPrintable(parser.value(QStringLiteral("size"))));
        return std::nullopt;
    }
    return QSize(w, h);
}

// Saves a picture of the window to `screenshot` (when one is asked for) and exits, with status 1 when the
// picture, the fit or the field run failed: when the fit has finished if `afterFit` and the Field tab's run if
// `afterField` (both when both), otherwise after 1.5 s; the setup panel scrolled to `setupSection` first when one is given.
void scheduleExit(wfs::ui::MainWindow& window, const QString& screenshot, bool afterFit, bool afterField, const QString& setupSection)
{
    auto saveAndQuit = [&window, screenshot, setupSection] {
        // The setup panel scrolled where its boxes are laid out for good (loading data changes the plane table's height).
        if (!setupSection.isEmpty())
            window.showSetupSection(setupSection);
        // Give queued replots one turn of the event loop before grabbing.
        QTimer::singleShot(200, &window, [&window, screenshot] {
            const bool ok = screenshot.isEmpty() || window.grab().save(screenshot);
            if (!ok)
                std::fprintf(stderr, "wavefront-studio: could not write %s\n", qPrintable(screenshot));
            QApplication::exit(ok ? 0 : 1);
        });
    };
    // The picture once every job waited for has ended.
    auto pending = std::make_shared<int>(int(afterFit) + int(afterField));
    auto oneDone = [pending, saveAndQuit] {
        if (--*pending == 0)
            saveAndQuit();
    };
    if (afterFit) {
        QObject::connect(&window, &wfs::ui::MainWindow::fitFinished, &window, oneDone);
        QObject::connect(&window, &wfs::ui::MainWindow::fitFailed, &window, [](const QString& message) {
            std::fprintf(stderr, "wavefront-studio: the fit failed: %s\n", qPrintable(message));
            QApplication::exit(1);
        });
    }
    if (afterField) {
        wfs::ui::FieldPanel* field = window.fieldPanel();
        QObject::connect(field, &wfs::ui::FieldPanel::runFinished, &window, [field, oneDone](bool ok) {
            if (ok) {
                oneDone();
                return;
            }
            std::fprintf(stderr, "wavefront-studio: the field run did not finish: %s\n", qPrintable(field->statusText()));
            QApplication::exit(1);
        });
    }
    if (afterFit || afterField)
        return;
    if (window.livePanel()->isWatching()) {
        // A live run: the picture once a dozen stacks are in the trend.
        QObject::connect(window.livePanel(), &wfs::ui::LivePanel::rowAdded, &window, [saveAndQuit, done = false](int rows) mutable {
            if (rows >= 12 && !done) {
                done = true;
                saveAndQuit();
            }
        });
    } else {
        QTimer::singleShot(1500, &window, saveAndQuit);
    }
}

// --demo with --tab field: the Field tab runs core's simulated bead slide as well, and then shows the brightest fitted
// bead's own fit (what a click shows); true when it started.
bool startFieldDemo(wfs::ui::MainWindow& window, const QCommandLineParser& parser)
{
    wfs::ui::FieldPanel* field = window.fieldPanel();
    if (!parser.isSet(QStringLiteral("demo")) || parser.value(QStringLiteral("tab")) != QLatin1String("field")
        || !field->runSimulatedField())
        return false;
    QObject::connect(field, &wfs::ui::FieldPanel::runFinished, field, [field](bool ok) {
        const std::shared_ptr<const wfs::FieldRun> run = field->fieldRun();
        if (!ok || !run)
            return;
        const auto& beads = run->beads;
        const auto fitted = std::find_if(beads.begin(), beads.end(), [](const wfs::FieldBead& bead) { return bead.status == "ok"; });
        if (fitted != beads.end())
            field->selectBead(int(fitted - beads.begin()));
    });
    return true;
}

// --hold-reference-after N: the Live tab's "Hold reference" once N stacks are in (the first shown after that).
void holdReferenceAfter(wfs::ui::MainWindow& window, int stacks)
{
    wfs::ui::LivePanel* live = window.livePanel();
    QObject::connect(live, &wfs::ui::LivePanel::rowAdded, &window, [live, stacks, done = false](int rows) mutable {
        if (!done && rows >= stacks)
            done = live->holdReference(); // false until a stack is shown (the panel pulls at display rate)
    });
}

// --measure-stalls SECONDS: the GUI thread's event loop while live mode updates the Live tab, from the first fitted
// stack on; one JSON line on standard output, then exit.
void measureStalls(wfs::ui::MainWindow& window, wfs::app::EventLoopGaps& gaps, double seconds)
{
    wfs::ui::LivePanel* live = window.livePanel();
    auto firstRows = std::make_shared<int>(0);
    QObject::connect(live, &wfs::ui::LivePanel::rowAdded, &window, [&window, &gaps, live, seconds, firstRows](int rows) {
        if (*firstRows > 0)
            return;
        *firstRows = rows;
        gaps.start();
        QTimer::singleShot(int(seconds * 1000), &window, [&window, &gaps, live, seconds, firstRows] {
            gaps.stop();
            const auto number = [](double v) { return std::isfinite(v) ? QJsonValue(v) : QJsonValue(); };
            const QJsonObject line{
                {QStringLiteral("measure"), QStringLiteral("event_loop_stalls")},
                {QStringLiteral("seconds"), seconds},
                {QStringLiteral("timer_interval_ms"), gaps.intervalMs()},
                {QStringLiteral("ticks"), gaps.ticks()},
                {QStringLiteral("max_gap_ms"), number(gaps.maxMs())},
                {QStringLiteral("p99_gap_ms"), number(gaps.quantileMs(0.99))},
                {QStringLiteral("median_gap_ms"), number(gaps.quantileMs(0.5))},
                {QStringLiteral("gaps_over_50ms"), gaps.countOver(50.0)},
                {QStringLiteral("stacks_shown"), live->stacksShown() - *firstRows},
                {QStringLiteral("reference_held"), live->referenceStack() > 0},
                {QStringLiteral("window"), QStringLiteral("%1x%2").arg(window.width()).arg(window.height())},
                {QStringLiteral("load_1min"), number(wfs::app::loadAverage())},
            };
            std::printf("%s\n", QJsonDocument(line).toJson(QJsonDocument::Compact).constData());
            std::fflush(stdout);
            live->stop();
            QApplication::exit(0);
        });
    });
}

// The data to start with: the demo, else a session, else the image files given; and live mode.
void openStartupData(wfs::ui::MainWindow& window, const QCommandLineParser& parser)
{
    if (parser.isSet(QStringLiteral("watch")))
        window.watchFolder(parser.value(QStringLiteral("watch")));
    else if (parser.isSet(QStringLiteral("live-demo")))
        window.startLiveDemo();
    if (parser.isSet(QStringLiteral("demo")))
        window.loadDemo(true);
    else if (parser.isSet(QStringLiteral("preset")))
        window.loadDemo(true, parser.value(QStringLiteral("preset")));
    else if (parser.isSet(QStringLiteral("session")) || !parser.positionalArguments().isEmpty()) {
        if (parser.isSet(QStringLiteral("fit")))
            window.fitWhenLoaded();
        if (parser.isSet(QStringLiteral("session")))
            window.openSessionFrom(parser.value(QStringLiteral("session")));
        else
            window.openFiles(parser.positionalArguments());
    }
}

// What main needs of the options, checked before the application object (like --help and --version) so that
// no display is needed to hear a mistake; none, after the message, when one is wrong.
struct CheckedOptions {
    QString section;
    int holdAfter = 0;
    double stallSeconds = 0.0;
};

std::optional<CheckedOptions> checkedOptions(const QCommandLineParser& parser)
{
    const QString preset = parser.value(QStringLiteral("preset")), dock = parser.value(QStringLiteral("dock"));
    if (parser.isSet(QStringLiteral("preset")) && !wfs::ui::MainWindow::presetSessionNames().contains(preset)) {
        std::fprintf(stderr, "wavefront-studio: --preset wants %s; got \"%s\"\n",
                     qPrintable(wfs::ui::MainWindow::presetSessionNames().join(QStringLiteral(", "))), qPrintable(preset));
        return std::nullopt;
    }
    CheckedOptions checked;
    checked.section = parser.value(QStringLiteral("setup-section"));
    if (parser.isSet(QStringLiteral("setup-section")) && !wfs::ui::SetupPanel::sectionKeys().contains(checked.section)) {
        std::fprintf(stderr, "wavefront-studio: --setup-section wants one of %s; got \"%s\"\n",
                     qPrintable(wfs::ui::SetupPanel::sectionKeys().join(QStringLiteral(", "))), qPrintable(checked.section));
        return std::nullopt;
    }
    if (parser.isSet(QStringLiteral("dock")) && !wfs::ui::MainWindow::dockKeys().contains(dock)) {
        std::fprintf(stderr, "wavefront-studio: --dock wants one of %s; got \"%s\"\n",
                     qPrintable(wfs::ui::MainWindow::dockKeys().join(QStringLiteral(", "))), qPrintable(dock));
        return std::nullopt;
    }

    // Where the screenshot goes is checked now, not after a fit of minutes.
    if (const QString shot = parser.value(QStringLiteral("screenshot")); !shot.isEmpty()) {
        const QFileInfo target(shot);
        if (!target.absoluteDir().exists() || !QFileInfo(target.absolutePath()).isWritable() || target.isDir()) {
            std::fprintf(stderr, "wavefront-studio: --screenshot %s: the folder %s does not exist or cannot be written\n", qPrintable(shot),
                         qPrintable(target.absolutePath()));
            return std::nullopt;
        }
    }
    const bool live = parser.isSet(QStringLiteral("live-demo")) || parser.isSet(QStringLiteral("watch"));
    bool okNumber = false;
    checked.holdAfter = parser.value(QStringLiteral("hold-reference-after")).toInt(&okNumber);
    if (parser.isSet(QStringLiteral("hold-reference-after")) && (!okNumber || checked.holdAfter < 1 || !live)) {
        std::fprintf(stderr,
                     "wavefront-studio: --hold-reference-after wants a number of stacks (1 or more) and live mode "
                     "(--live-demo or --watch DIR); got \"%s\"\n",
                     qPrintable(parser.value(QStringLiteral("hold-reference-after"))));
        return std::nullopt;
    }
    checked.stallSeconds = parser.value(QStringLiteral("measure-stalls")).toDouble(&okNumber);
    if (parser.isSet(QStringLiteral("measure-stalls"))
        && (!okNumber || !(checked.stallSeconds >= 0.5 && checked.stallSeconds <= 3600) || !live)) {
        std::fprintf(stderr,
                     "wavefront-studio: --measure-stalls wants seconds (0.5 to 3600) and live mode (--live-demo or --watch DIR); "
                     "got \"%s\"\n",
                     qPrintable(parser.value(QStringLiteral("measure-stalls"))));
        return std::nullopt;
    }
    const bool fitStarts =
        parser.isSet(QStringLiteral("demo")) || parser.isSet(QStringLiteral("preset")) || parser.isSet(QStringLiteral("fit"));
    if (parser.isSet(QStringLiteral("quit-after-fit")) && !fitStarts) {
        std::fprintf(stderr, "wavefront-studio: --quit-after-fit waits for a fit, and none starts: add --fit (with FILE... or "
                             "--session), --demo or --preset\n");
        return std::nullopt;
    }
    if (parser.isSet(QStringLiteral("fit")) && !parser.isSet(QStringLiteral("session")) && parser.positionalArguments().isEmpty()) {
        std::fprintf(stderr, "wavefront-studio: --fit needs data: FILE... or --session FILE.json\n");
        return std::nullopt;
    }
    return checked;
}

} // namespace

int main(int argc, char** argv)
{
    // Read the arguments before QApplication: it removes X11 session options (-session, --session)
    // from argv, and --session FILE.json is ours. They are parsed before it too, so that --help,
    // --version and a bad option work without a display (QApplication aborts when it finds none).
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments << QString::fromLocal8Bit(argv[i]);

    QCommandLineParser parser;
    // Our own help and version: Qt's --help-all would offer Qt's options, and Qt's handlers need the application object.
    const QCommandLineOption help({QStringLiteral("h"), QStringLiteral("help")}, QStringLiteral("Show this help and exit."));
    const QCommandLineOption version({QStringLiteral("v"), QStringLiteral("version")},
                                     QStringLiteral("Show the program's version and exit."));
    addStudioOptions(parser, help, version);
    if (!parser.parse(arguments)) {
        QString error = parser.errorText();
        if (error.endsWith(QLatin1Char('.')))
            error.chop(1);
        std::fprintf(stderr, "wavefront-studio: %s (see --help)\n", qPrintable(error));
        return 2;
    }
    if (parser.isSet(help)) {
        printHelp(parser);
        return 0;
    }
    if (parser.isSet(version)) {
        std::printf("wavefront-studio %s\n", WFS_VERSION);
        return 0;
    }

    const std::optional<CheckedOptions> checked = checkedOptions(parser);
    if (!checked)
        return 2;
    const QString section = checked->section;

    // Without a display Qt aborts in QApplication's constructor ("Reinstalling the application may fix
    // this problem"); say what is missing instead.
    const bool display = qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY")
                         || qEnvironmentVariableIsSet("QT_QPA_PLATFORM");
    if (!display) {
        std::fprintf(stderr, "wavefront-studio: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set). Run it on a desktop, "
                             "set QT_QPA_PLATFORM=offscreen for --screenshot without one, or use wavefront-cli, which needs none.\n");
        return 1;
    }

    wfs::quietQtMessages(); // no Qt notes on the terminal (core/base/QuietQt.h)
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("WavefrontStudio"));
    QApplication::setApplicationName(QStringLiteral("wavefront-studio"));
    QApplication::setApplicationVersion(QStringLiteral(WFS_VERSION));

    const std::optional<QSize> size = windowSize(parser);
    if (!size)
        return 2;
    wfs::ui::MainWindow window;
    if (parser.isSet(QStringLiteral("tab")) && !window.showTab(parser.value(QStringLiteral("tab")))) {
        std::fprintf(stderr, "wavefront-studio: --tab wants one of %s; got \"%s\"\n",
                     qPrintable(window.tabKeys().join(QStringLiteral(", "))), qPrintable(parser.value(QStringLiteral("tab"))));
        return 2;
    }
    if (parser.isSet(QStringLiteral("dock")))
        window.showDock(parser.value(QStringLiteral("dock")));
    if (parser.isSet(QStringLiteral("present")))
        window.presentationAction()->setChecked(true);
    window.resize(*size);
    window.show();

    const QString screenshot = parser.value(QStringLiteral("screenshot"));
    const bool afterFit = parser.isSet(QStringLiteral("quit-after-fit"));
    openStartupData(window, parser); // loads and fits on workers: what follows is connected before any ends
    const bool afterField = startFieldDemo(window, parser);
    if (parser.isSet(QStringLiteral("hold-reference-after")))
        holdReferenceAfter(window, checked->holdAfter);
    wfs::app::EventLoopGaps gaps(5);
    if (parser.isSet(QStringLiteral("measure-stalls")))
        measureStalls(window, gaps, checked->stallSeconds);
    if (!screenshot.isEmpty() || afterFit)
        scheduleExit(window, screenshot, afterFit, afterField, section);
    else if (!section.isEmpty())
        QTimer::singleShot(0, &window, [&window, section] { window.showSetupSection(section); });
    return QApplication::exec();
}
