// wfs-device-check: the GPU backend's device check without the engine (no Qt, FFTW, Eigen or core):
//   wfs-device-check check --reference DIR [--quick]
//       reads and validates the reference files (`wavefront-cli device-reference`, CPU backend), then,
//       with a device, holds the CUDA model and FastH against them: model against the CPU's costs,
//       gradients and images; FastH against the CPU's products and gradients; CUDA graphs against
//       stream launches; float32 against float64; out of memory, then recovery. Without a device the
//       device cases are reported "SKIP ... no device" and counted as skipped. Closing line:
//       "N passed, N failed, N skipped (...)"; exit status 0 when nothing failed.
//   wfs-device-check bench-oof [--grid LIST] [--order N] [--precision LIST] [--launch LIST] [--eval-repeat E]
//                              [--budget SECONDS]
//   wfs-device-check bench-fasth [--d LIST] [--batch LIST] [--block LIST] [--precision LIST] [--repeat R]
//                                [--budget SECONDS]
//       timings, one JSON object per line; rows that do not fit the budget are left out and counted in a
//       closing {"kind": "trimmed", ...} row.
#include "Benchmarks.h"
#include "CheckSupport.h"
#include "FasthCases.h"
#include "ModelCases.h"
#include "gpu/model/ReferenceFormat.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace wfs::devicecheck;
namespace dc = wfs::devicecheck;
namespace gpu = wfs::gpu;

namespace {

int runCheck(const std::string& folder, bool quick)
{
    Tally tally;
    const std::string noDevice = deviceProblem();
    if (noDevice.empty()) {
        const gpu::DeviceProbe probe = gpu::probeDevices();
        const gpu::DeviceInfo& info = probe.devices.front();
        std::printf("device: %s, sm_%d%d, %.1f GiB\n", info.name.c_str(), info.computeMajor, info.computeMinor,
                    double(info.memoryBytes) / double(1 << 30));
    } else {
        std::printf("device: none (%s): the device cases are skipped; the reference data are still read and checked\n", noDevice.c_str());
    }
    std::printf("reference: %s%s\n", folder.c_str(), quick ? " (quick subset)" : "");

    std::vector<ModelCase> models;
    std::vector<FasthCase> fasths;
    std::vector<dc::IndexEntry> index;
    tally.run("reference/index", [&]() -> std::string {
        index = dc::readIndex(folder);
        return {};
    });
    for (const dc::IndexEntry& entry : index) {
        if (quick && entry.name != "oof-64-4" && entry.name != "d64-k64-m1-b12")
            continue;
        tally.run("reference/" + entry.kind + "/" + entry.name + "/read", [&]() -> std::string {
            const dc::ReferenceFile file(folder + "/" + entry.file);
            if (entry.kind == "model")
                models.push_back(loadModelCase(file, entry.name));
            else
                fasths.push_back(loadFasthCase(file, entry.name));
            return {};
        });
    }
    // Host checks of the files against each other and against the spec (no device needed).
    for (const ModelCase& c : models)
        checkModelFile(tally, c);
    for (const FasthCase& c : fasths)
        checkFasthFile(tally, c);
    // Device cases.
    for (const ModelCase& c : models)
        checkModelOnDevice(tally, c, quick, noDevice);
    for (const FasthCase& c : fasths)
        checkFasthOnDevice(tally, c, quick, noDevice);
    checkOutOfMemory(tally, models, quick, noDevice);

    std::printf("%d passed, %d failed, %d skipped%s\n", tally.passed(), tally.failed(), tally.skipped(),
                noDevice.empty() ? "" : (" (no device: " + noDevice + ")").c_str());
    return tally.failed() == 0 ? 0 : 1;
}

void usage(FILE* to)
{
    std::fprintf(to, "usage: wfs-device-check check --reference DIR [--quick]\n"
                     "       wfs-device-check bench-oof [--grid LIST] [--order N] [--precision double,float] [--launch graph,stream]\n"
                     "                                  [--eval-repeat E] [--budget SECONDS]\n"
                     "       wfs-device-check bench-fasth [--d LIST] [--batch LIST] [--block LIST] [--precision float,double]\n"
                     "                                    [--repeat R] [--budget SECONDS]\n");
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const std::string command = argv[1];
    Options o;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0) {
            std::fprintf(stderr, "wfs-device-check: unexpected argument '%s'\n", arg.c_str());
            return 2;
        }
        if (arg == "--quick") {
            o.values["quick"] = "1";
        } else if (i + 1 < argc) {
            o.values[arg.substr(2)] = argv[++i];
        } else {
            std::fprintf(stderr, "wfs-device-check: %s needs a value\n", arg.c_str());
            return 2;
        }
    }
    try {
        if (command == "check") {
            if (!o.values.count("reference")) {
                usage(stderr);
                return 2;
            }
            return runCheck(o.values["reference"], o.values.count("quick") > 0);
        }
        if (command == "bench-oof")
            return runBenchOof(o);
        if (command == "bench-fasth")
            return runBenchFasth(o);
        if (command == "--help" || command == "-h") {
            usage(stdout);
            return 0;
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wfs-device-check: %s\n", e.what());
        return 1;
    }
    usage(stderr);
    return 2;
}
