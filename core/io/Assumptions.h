#pragma once
// What a run assumes where neither the user nor the files say, decided here once for every front end: prepareRun
// (engine/Workflow.h) applies it to the runs of wavefront-cli, the desktop program, batch, live mode and the Python
// module, and the desktop's Load tab shows the same stack plan before a run (io/StackPlan.h). Nothing set is
// overwritten: an assumption fills an unset value, records its origin as "assumed: <why>" where the value has an
// origin, and is returned, so that the report, the result JSON (FitResult::assumptions) and the desktop say it.
//
// For a z-stack (isZStack: a z step places the planes):
//   focus plane   the brightest plane (3 x 3 peak), unless a header, sidecar or the user gives it
//   planes        proposeStackPlan's: planes with signal spread over at least +-2 depths of focus, unless chosen
//   centre        the peak (PreprocessOptions::centre auto; effectiveCentre)
// For every dataset:
//   hot pixels    masked when the sampling is known to be Q >= 2 (PreprocessOptions::maskHotPixels unset)
//   defocus model high-NA when axial lengths are converted at NA / n above kHighNaThreshold (unless given)
// The headline without defocus for defocus-diverse data is the workflow's (it needs the problem's planes).
#include "base/Assumption.h"
#include "io/DatasetPlanes.h"
#include "io/StackPlan.h"

#include <optional>
#include <vector>

namespace wfs {

// Above this NA / n the paraxial defocus phase k z NA^2 rho^2 / (2 n) is off by more than about 7 % at the pupil's
// edge (1 - sqrt(1 - s^2) against s^2 / 2 at s = 0.5), so the high-NA model is assumed.
constexpr double kHighNaThreshold = 0.5;

// The origin text of an assumed value ("assumed: the brightest plane; ..."), and whether an origin is one.
std::string assumedOrigin(const std::string& reason);
bool isAssumedOrigin(const std::string& origin);

// The defocus model where no source chose it (or core assumed it before, for other optics): high-NA when the planes'
// lengths are converted at NA / n above kHighNaThreshold, paraxial otherwise. Returns the assumption when it applies. A
// front end that shows the settings before a run (the desktop's Load tab) calls it to show what the run will use.
std::optional<Assumption> assumeDefocusModel(Dataset& dataset);

// The focus plane a stack plan takes when no source gives one.
Assumption focusPlaneAssumption(const StackPlan& plan);

// Fills what is unset (above) and returns every assumption the run makes, including values an earlier step assumed
// (an origin "assumed: ..." that the desktop's Load tab recorded). Reads the planes' pixels (stack statistics).
std::vector<Assumption> assumeUnset(Dataset& dataset);

} // namespace wfs
