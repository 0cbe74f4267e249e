#pragma once
// The sub-commands of wavefront-cli. Their names, options, JSON keys and exit statuses are the command-line
// contract that scripts and benchmarks rely on (tests/app/tst_cli.cpp holds the program to it; add, never rename).
// Each takes the arguments after its own name and returns the process exit status: 0 success, 1 a failed run,
// 2 bad arguments.
#include <QStringList>

namespace wfs::cli {
int runSimulate(const QStringList& args);
int runPsf(const QStringList& args);
int runReconstruct(const QStringList& args);
int runBench(const QStringList& args);
int runBenchLive(const QStringList& args); // `bench live`, dispatched by runBench
int runFasthBench(const QStringList& args);
int runFasthTrain(const QStringList& args);
int runBatch(const QStringList& args);
int runWatch(const QStringList& args);
int runDeviceReference(const QStringList& args);
int runField(const QStringList& args);
int runBenchField(const QStringList& args); // `bench field`, dispatched by runBench
} // namespace wfs::cli
