#pragma once
// The sub-commands of wavefront-cli (spec/cli.md). Each takes the arguments after its own name and
// returns the process exit status: 0 success, 1 a failed run, 2 bad arguments.
#include <QStringList>

namespace wfs::cli {
int runSimulate(const QStringList& args);
int runReconstruct(const QStringList& args);
int runBench(const QStringList& args);
int runFasthBench(const QStringList& args);
int runFasthTrain(const QStringList& args);
int runBatch(const QStringList& args);
int runDeviceReference(const QStringList& args);
} // namespace wfs::cli
