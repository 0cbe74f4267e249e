#pragma once
// What `watch` and `bench live` share: the simulated camera's options and a watch run to its end.
#include "CliCommon.h"

#include "engine/LiveCamera.h"
#include "engine/LiveWatch.h"

#include <QCommandLineParser>
#include <QJsonObject>

#include <functional>

namespace wfs::cli {

// --rate, --terms, --photons, --read-noise, --grid: the simulated camera (engine/LiveCamera.h).
void addCameraOptions(QCommandLineParser& parser, bool rateList);
// Those given over the camera's defaults; throws UsageError. --rate is read by the caller when it is a list.
LiveCameraSettings cameraSettingsFrom(const QCommandLineParser& parser, bool readRate);

// Runs a watch on this thread's event loop until it finishes; `camera`, when given, starts once the watch is
// set up (so that its renames count) and stops with it. `onRow` sees each row. Prints a line per stack unless
// `quiet`. Returns the exit status (0, or 1 after the reason when the watch stopped on an error).
int runLiveWatch(const QString& program, const LiveWatchOptions& options, bool quiet, LiveCamera* camera = nullptr,
                 const std::function<void(const QJsonObject&)>& onRow = {});

} // namespace wfs::cli
