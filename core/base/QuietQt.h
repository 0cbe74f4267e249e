#pragma once
// Keeps Qt's own diagnostics off the terminal of both programs and the Python module's notebook: scripts read standard error, where
// each program prints its own messages (one line per problem, as the command-line contract says), and a user cannot act on
// "QStandardPaths: wrong permissions on runtime directory" or a platform plugin's notes. Qt's debug,
// info and warning messages are dropped unless WFS_QT_MESSAGES=1 (for debugging Qt itself); critical
// and fatal ones still print. Call before creating the application object.
#include <QByteArray>
#include <QtGlobal>

#include <cerrno>
#include <cstdio>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace wfs {

inline void quietQtMessages()
{
    // Without XDG_RUNTIME_DIR (a cron job, a container, sudo) Qt picks /tmp/runtime-USER; the same folder
    // is chosen here, so that nothing needs saying about it.
    if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
        const std::string runtime = "/tmp/runtime-" + std::to_string(getuid());
        if (mkdir(runtime.c_str(), 0700) == 0 || errno == EEXIST)
            qputenv("XDG_RUNTIME_DIR", QByteArray::fromStdString(runtime));
    }
    if (qEnvironmentVariableIntValue("WFS_QT_MESSAGES") == 1)
        return;
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& message) {
        if (type == QtCriticalMsg || type == QtFatalMsg)
            std::fprintf(stderr, "%s\n", qPrintable(message));
    });
}

} // namespace wfs
