#pragma once
// Data that are simulated, not read: a built-in preset (engine/Presets.h) named with the options that remake its
// planes exactly (grid, order, seed, noise, the injected aberrations) and the model settings a front end gave over
// the preset's own. A session holding one (Session::simulated) is run, saved and reopened as a file session is;
// engine/Workflow.h's prepareRun rebuilds the planes instead of reading files.
#include "io/ResultJson.h"
#include "optics/ProblemSpec.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace wfs {

struct PresetOptions {
    int grid = 0;  // 0: the preset's default (oof 128, demo 256)
    int order = 0; // 0: the preset's default (oof 8, demo 4)
    std::uint64_t seed = 20180518;
    bool noise = true;          // false: data equal the model at the truth
    std::optional<Truth> truth; // replaces the preset's injected aberrations
    // Checked between the simulation's steps and planes (base/Cancellation.h): makePreset throws OperationCancelled.
    // Not a setting: never saved.
    const std::atomic<bool>* cancel = nullptr;
    double photons = 0.0; // photons per plane; 0: the preset's (demo 1e6, pupil 1e6, vectorial 2e5, air 1e6); not oof
};

struct SimulatedSource {
    std::string preset;                     // one of presetNames()
    PresetOptions options;                  // grid and order (0: the preset's), seed, noise, truth
    std::optional<ObjectiveKind> objective; // unset: the preset's
    std::optional<double> readNoise;        // unset: the preset's (counts RMS)
};

} // namespace wfs
