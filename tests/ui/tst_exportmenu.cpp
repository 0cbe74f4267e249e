// Issue 27 item 2: exports are one dispatch (core's table io/ExportKinds.h, pictures drawn by render/) used by
// every front end. Every kind of the table is offered by the desktop Export menu (with the table's file
// filter) and accepted by wavefront-cli; the same fit exported by the command line and by the desktop gives the
// same files (byte for byte for the data kinds, the clock's "seconds" aside and the 3-D PSF's pixels to 1e-9; the
// same title for pictures); a
// failed write leaves the previous file as it was.
#include "IsolatedSettings.h"
#include "TestSupport.h"

#include "MainWindow.h"
#include "ResultExports.h"

#include "io/Fits.h"

#include <QApplication>
#include <QFile>
#include <QFileDialog>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMenu>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <csignal>
#include <set>
#include <sys/resource.h>

using namespace wfs;
using namespace wfs::ui;

namespace {

QByteArray readAll(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The solver's wall-clock time differs between two runs of the same fit; everything else must not.
QJsonValue withoutClock(const QJsonValue& value)
{
    if (value.isObject()) {
        QJsonObject object = value.toObject();
        object.remove(QStringLiteral("seconds"));
        for (auto it = object.begin(); it != object.end(); ++it)
            *it = withoutClock(*it);
        return object;
    }
    if (value.isArray()) {
        QJsonArray array = value.toArray();
        for (auto it = array.begin(); it != array.end(); ++it)
            *it = withoutClock(*it);
        return array;
    }
    return value;
}

} // namespace

class TestExportMenu : public QObject {
    Q_OBJECT

private:
    wfs::test::IsolatedSettings m_settings; // declared first: outlives the window
    std::unique_ptr<MainWindow> m_window;   // one window with a finished demo fit
    QTemporaryDir m_dir;

    QMenu* exportMenu() const { return m_window->findChild<QMenu*>(QStringLiteral("exportMenu")); }

private slots:
    void initTestCase()
    {
        QVERIFY2(m_settings.isolate(QStringLiteral("tst_exportmenu")), qPrintable(QSettings().fileName()));
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        // One clock for the FITS headers' DATE and the JSON's "date" of both programs (io/Provenance.h).
        qputenv("SOURCE_DATE_EPOCH", "1700000000");
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1366, 768);
        m_window->show();
        QSignalSpy finished(m_window.get(), &MainWindow::fitFinished);
        m_window->loadDemo(true);
        QVERIFY2(finished.count() > 0 || finished.wait(300000), "the demo fit did not finish");
        QVERIFY(m_window->result() != nullptr);
    }

    // The table: every kind once, keys and file endings unique, pictures titled, the file name's guess.
    void tableHoldsEveryKindOnce()
    {
        std::set<std::string> keys, suffixes;
        std::set<ExportKind> kinds;
        for (const ResultExport& e : resultExports()) {
            QVERIFY2(keys.insert(e.key).second, e.key);
            QVERIFY2(suffixes.insert(e.suffix).second, e.suffix);
            QVERIFY(kinds.insert(e.kind).second);
            QCOMPARE(&resultExport(e.kind), &e);
            QCOMPARE(isPictureExport(e.kind), QByteArray(e.suffix).endsWith(".png"));
        }
        QCOMPARE(int(kinds.size()), int(ExportKind::ModelHdf5) + 1); // the last enumerator: none without an entry
        QCOMPARE(findResultExport("psf_stack_out")->kind, ExportKind::PsfStack);
        QVERIFY(findResultExport("session") == nullptr);
        QCOMPARE(resultExportForFileName("a/b-pupil.fits")->kind, ExportKind::PupilFits);
        QCOMPARE(resultExportForFileName("b.fts")->kind, ExportKind::ResultsFits);
        QVERIFY(resultExportForFileName("b.txt") == nullptr);
        // A data kind is never drawn by core.
        const ExportContext context;
        const ResultExportSources sources{*m_window->result(), context};
        QVERIFY(!test::errorOf([&] { dataExportBytes(ExportKind::PhasePng, "x.png", sources); }).empty());
    }

    // Every kind of the table is in the Export menu under the table's label, and the menu's file dialog offers
    // the table's filter and writes through the dispatch.
    void menuOffersEveryKindWithItsFilter()
    {
        QMenu* menu = exportMenu();
        QVERIFY(menu);
        QMap<QString, QAction*> offered;
        for (QAction* action : menu->actions())
            offered.insert(action->data().toString(), action);
        QCOMPARE(offered.size(), qsizetype(resultExports().size()));
        // Opened, the menu greys out what the demo's fit has nothing of (no fitted amplitude, no zonal phase), saying why.
        emit menu->aboutToShow();
        for (const ResultExport& e : resultExports()) {
            QAction* action = offered.value(QString::fromLatin1(e.key));
            const bool none = e.kind == ExportKind::AmplitudePng || e.kind == ExportKind::ZonalPng;
            QVERIFY2(action && action->isEnabled() == !none, e.key);
            if (none)
                QVERIFY2(action->toolTip().contains(QStringLiteral("has no")), qPrintable(action->toolTip()));
        }
        for (const ResultExport& e : resultExports()) {
            const QString key = QString::fromLatin1(e.key);
            QAction* action = offered.value(key);
            QVERIFY2(action, e.key);
            QCOMPARE(action->text(), QString::fromLatin1(e.label) + QStringLiteral("…"));
            if (!action->isEnabled())
                continue; // tst_mainwindow checks the refusal of exportResult for these
            const QString path = m_dir.filePath(QStringLiteral("dialog") + QString::fromLatin1(e.suffix));
            QStringList filters;
            QTimer::singleShot(0, this, [&] {
                auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
                if (!dialog)
                    return;
                filters = dialog->nameFilters();
                dialog->selectFile(path);
                QMetaObject::invokeMethod(dialog, "accept"); // accept() is protected; the slot is not
            });
            QSignalSpy errors(m_window.get(), &MainWindow::errorShown);
            QSignalSpy done(m_window.get(), &MainWindow::exportFinished);
            action->trigger();
            QVERIFY2(done.count() > 0 || done.wait(60000), e.key); // made on a worker
            if (e.kind == ExportKind::SplineMat) {
                // The demo's planes are defocused in waves and its sampling given as Q: a spline needs a pixel size,
                // and says so.
                QCOMPARE(done.front().front().toBool(), false);
                QVERIFY2(m_window->lastError().contains(QStringLiteral("pixel size")), qPrintable(m_window->lastError()));
                QVERIFY(!QFileInfo::exists(path));
                continue;
            }
            QCOMPARE(done.front().front().toBool(), true);
            QCOMPARE(filters, QString::fromLatin1(e.fileFilter).split(QStringLiteral(";;")));
            QVERIFY2(QFileInfo(path).size() > 0, qPrintable(key + QStringLiteral(": ") + m_window->lastError()));
            QCOMPARE(errors.count(), 0);
        }
    }

    // The same fit, by wavefront-cli from the desktop's saved session and by the desktop: the data kinds are
    // the same bytes, the pictures have the same title.
    void cliAndDesktopWriteTheSameFiles()
    {
        // Every kind is an option of `reconstruct` (the amplitude and zonal maps, which the demo's fit has none of, only so).
        const test::ProgramRun help =
            test::runProgram(QStringLiteral(WFS_CLI_PATH), {QStringLiteral("reconstruct"), QStringLiteral("--help")});
        // Each with the table's value name and help (the help's wrapped lines joined).
        const QByteArray joined = help.out.simplified();
        for (const ResultExport& e : resultExports()) {
            QVERIFY2(help.out.contains(QByteArray("--") + e.key + " <" + e.valueName + "> "), e.key);
            QVERIFY2(joined.contains(QByteArray("--") + e.key + " <" + e.valueName + "> " + e.help), e.help);
        }
        const QString session = m_dir.filePath(QStringLiteral("same-session.json"));
        QVERIFY(m_window->saveSessionTo(session));
        const QString cliDir = m_dir.filePath(QStringLiteral("cli")), desktopDir = m_dir.filePath(QStringLiteral("desktop"));
        QVERIFY(QDir().mkpath(cliDir) && QDir().mkpath(desktopDir));
        QStringList args = {QStringLiteral("reconstruct"), QStringLiteral("--session"), session, QStringLiteral("--quiet")};
        for (const ResultExport& e : resultExports()) {
            if (e.kind == ExportKind::AmplitudePng || e.kind == ExportKind::ZonalPng || e.kind == ExportKind::SplineMat)
                continue; // nothing of these in the demo's fit (the spline needs a pixel size)
            args << QStringLiteral("--") + QString::fromLatin1(e.key)
                 << QDir(cliDir).filePath(QStringLiteral("same") + QString::fromLatin1(e.suffix));
        }
        const test::ProgramRun cli = test::runProgram(QStringLiteral(WFS_CLI_PATH), args);
        QVERIFY2(cli.status == 0, cli.err.constData());
        const FitResult& shown = *m_window->result();
        for (const ResultExport& e : resultExports()) {
            if (e.kind == ExportKind::AmplitudePng || e.kind == ExportKind::ZonalPng || e.kind == ExportKind::SplineMat)
                continue;
            const QString name = QStringLiteral("same") + QString::fromLatin1(e.suffix);
            const QString desktopPath = QDir(desktopDir).filePath(name);
            QVERIFY2(m_window->exportResult(QString::fromLatin1(e.key), desktopPath), qPrintable(m_window->lastError()));
            const QByteArray fromCli = readAll(QDir(cliDir).filePath(name)), fromDesktop = readAll(desktopPath);
            QVERIFY2(!fromCli.isEmpty(), e.key);
            if (e.kind == ExportKind::PhasePng) {
                const QImage a = QImage::fromData(fromCli), b = QImage::fromData(fromDesktop);
                const QString title = QString::fromStdString(exportTitle(e.kind, shown));
                QVERIFY(title.startsWith(QStringLiteral("Wavefront ")));
                QCOMPARE(a.text(QStringLiteral("Title")), title);
                QCOMPARE(b.text(QStringLiteral("Title")), title);
            } else if (e.kind == ExportKind::PsfStack) {
                // A fresh computation in each program, through FFT plans each process chooses for itself: the same
                // header, and pixels to the last few bits.
                const qsizetype headerEnd = fromCli.indexOf("END     ");
                QVERIFY(headerEnd > 0);
                QCOMPARE(fromCli.left(headerEnd), fromDesktop.left(headerEnd));
                const FitsContent a = readFits(QDir(cliDir).filePath(name).toStdString()), b = readFits(desktopPath.toStdString());
                QCOMPARE(a.planes.size(), b.planes.size());
                for (size_t p = 0; p < a.planes.size(); ++p)
                    for (size_t i = 0; i < a.planes[p].pixels.size(); ++i)
                        if (!test::closeTo(b.planes[p].pixels[i], a.planes[p].pixels[i], 1e-9, 1e-15))
                            QFAIL(qPrintable(QStringLiteral("psf stack plane %1 pixel %2: %3 vs %4")
                                                 .arg(p)
                                                 .arg(i)
                                                 .arg(a.planes[p].pixels[i])
                                                 .arg(b.planes[p].pixels[i])));
            } else if (e.kind == ExportKind::ModelHdf5) {
                // The PSF stack inside is such a fresh computation too: the same layout, so the same size.
                QCOMPARE(fromCli.size(), fromDesktop.size());
                QVERIFY(fromCli.startsWith("\x89HDF"));
            } else if (e.kind == ExportKind::ResultJson) {
                QCOMPARE(withoutClock(QJsonDocument::fromJson(fromCli).object()),
                         withoutClock(QJsonDocument::fromJson(fromDesktop).object()));
            } else {
                QVERIFY2(fromCli == fromDesktop, qPrintable(QStringLiteral("%1: %2 bytes from the CLI, %3 from the desktop")
                                                                .arg(QString::fromLatin1(e.key))
                                                                .arg(fromCli.size())
                                                                .arg(fromDesktop.size())));
            }
        }
    }

    // A write that fails half-way (here the file-size limit) says why and leaves the previous file whole.
    void failedWriteKeepsThePreviousFile()
    {
        const QString path = m_dir.filePath(QStringLiteral("kept-results.fits"));
        const QByteArray previous(1000, 'p');
        QVERIFY(test::writeFile(path, previous));
        rlimit saved{};
        QVERIFY(getrlimit(RLIMIT_FSIZE, &saved) == 0);
        const auto oldHandler = std::signal(SIGXFSZ, SIG_IGN); // a write past the limit fails with EFBIG instead
        rlimit small = saved;
        small.rlim_cur = 64 * 1024; // the results file of the demo is several megabytes
        QVERIFY(setrlimit(RLIMIT_FSIZE, &small) == 0);
        QSignalSpy errors(m_window.get(), &MainWindow::errorShown);
        const bool written = m_window->exportResult(QStringLiteral("results-fits"), path);
        setrlimit(RLIMIT_FSIZE, &saved);
        std::signal(SIGXFSZ, oldHandler);
        QVERIFY(!written);
        QCOMPARE(errors.count(), 1);
        QVERIFY2(m_window->lastError().contains(path), qPrintable(m_window->lastError()));
        QCOMPARE(readAll(path), previous);
        const QStringList left = QDir(m_dir.path()).entryList({QStringLiteral("*kept-results*")}, QDir::Files | QDir::Hidden);
        QCOMPARE(left, QStringList{QStringLiteral("kept-results.fits")}); // no partial file beside it
    }

    void cleanupTestCase() { m_window.reset(); }
};

QTEST_MAIN(TestExportMenu)
#include "tst_exportmenu.moc"
