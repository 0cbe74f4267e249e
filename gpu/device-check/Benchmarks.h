#pragma once
// The benchmarks of wfs-device-check: the OOF model per evaluation (grids, precisions, graphs or
// streams) and FastH against its baselines, one JSON object per line, trimmed to a time budget.
#include "CheckSupport.h"

namespace wfs::devicecheck {

int runBenchOof(const Options& o);
int runBenchFasth(const Options& o);

} // namespace wfs::devicecheck
