#pragma once
// Opening a stack: which of its planes to fit and where focus is. A measured z-stack has many more planes
// than a fit needs (21 planes of a bead, most far from focus or nearly alike); a handful spread around
// focus carries the phase diversity at a fraction of the cost. Core computes the proposal from per-plane
// statistics; the desktop program's loading step draws it and lets the user change it.
//
//     std::vector<PlaneStatistics> stats = stackStatistics(dataset);     // numerical: on a worker
//     StackPlan plan = proposeStackPlan(stats, planOptionsFor(dataset));
//     applyStackPlan(dataset, plan);                                      // selects planes, sets the focus plane
#include "io/DatasetPlanes.h"

#include <optional>
#include <string>
#include <vector>

namespace wfs {

// What the proposal needs to know of one plane.
struct PlaneStatistics {
    int plane = 0;           // dataset plane index
    bool usable = true;      // holds signal and has the size of the stack's first plane (DatasetPlane::use as loaded)
    double background = 0.0; // sigma-clipped border level (data units)
    double noise = 0.0;      // robust standard deviation of the border (data units)
    double peak = 0.0;       // brightest 3 x 3 mean above the background (data units): largest at best focus
    double signal = 0.0;     // sum above the background (data units)
};

// Per-plane statistics of every plane, from the border background (PreprocessOptions' defaults, no crop). A plane is
// usable as it takes part (DatasetPlane::use), or with `everyPlaneWithData` whenever it holds data of the first such
// plane's size, whichever take part.
std::vector<PlaneStatistics> stackStatistics(const Dataset& dataset, bool everyPlaneWithData = false);

struct StackPlanOptions {
    int count = 5;                    // planes to propose (the focus plane among them); all when the stack has fewer
    std::optional<double> focusPlane; // given (metadata): taken as focus instead of the brightest plane
    std::optional<double> zStep;      // metres per plane; unset: offsets in steps only
    bool zIndexDown = false;          // DatasetMetadata::zIndexDown
    // Metres: lambda n / NA^2 (Born & Wolf's depth of focus), when the wavelength and NA are known. With a z step, the
    // planes are spread over at least +-kPlanSpreadDepths of it: far enough for the defocus to tell the aberrations'
    // signs (about one wave of W020 at the outer planes), near enough that the planes still hold signal.
    std::optional<double> depthOfFocus;
};
constexpr double kPlanSpreadDepths = 2.0;
// A plane whose 3 x 3 peak is below this many noise deviations of its border is mostly noise (and hot pixels): it is
// never proposed.
constexpr double kPlaneSignalToNoise = 5.0;
// The options from a dataset's metadata (focus plane, z step, z direction, depth of focus).
StackPlanOptions planOptionsFor(const Dataset& dataset, int count = 5);

struct StackPlan {
    int focusPlane = -1;            // dataset plane index taken as focus; -1 when no plane is usable
    bool focusFromMetadata = false; // the given focus plane, not the brightest
    std::vector<int> planes;        // proposed dataset planes, ascending (the focus plane among them)
    std::vector<int> offsetSteps;   // per proposed plane: signed planes from focus along +z
    std::vector<double> zOffsets;   // per proposed plane: metres from focus along +z (empty without a z step)
    std::string spread;             // how the planes are spread: "5 of 21 planes, every 3 planes (0.9 um)"; empty for one
    std::string reason;             // one sentence: how focus was found and how the planes are spread
};

// Chooses options.count usable planes around focus (the given focus plane, else the plane with the
// highest peak), at equal steps, balanced where the focus is off-centre. The step: the smallest that reaches
// +-kPlanSpreadDepths depths of focus when the z step and the depth of focus are known (21 planes of 0.3 um at NA 1.1
// in water, 605 nm, focus at 10: 4, 7, 10, 13, 16), else the widest at which the planes fit (0, 5, 10, 15, 20).
// Unusable planes and planes that are mostly noise (kPlaneSignalToNoise) are never chosen; a stack with no more such
// planes than options.count gives all of them.
StackPlan proposeStackPlan(const std::vector<PlaneStatistics>& statistics, const StackPlanOptions& options);

// Makes the plan's planes take part (selectPlanes) and, unless the metadata give one, sets the focus plane
// with its origin as core assumes it (io/Assumptions.h: "assumed: the brightest plane; ..."). Throws DatasetError for a plane out of range.
void applyStackPlan(Dataset& dataset, const StackPlan& plan);

} // namespace wfs
