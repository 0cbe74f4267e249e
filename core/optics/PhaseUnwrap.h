#pragma once
// Whole-wave jumps taken out of a fitted zonal phase. The model sees the pupil field exp(i phase), so a zonal
// pixel 2 pi away from its neighbours costs the data nothing; a fit of a phase of several waves can settle with
// zones a whole wave apart (the same field), which the smoothness prior would pay for but cannot undo, since its
// gradient never crosses 2 pi. Unwrapping the fitted phase along the pupil's neighbours, brightest pixels first,
// gives the same field with a smooth map and a lower prior: the fit then continues from there.
#include "optics/Problem.h"

#include <optional>
#include <vector>

namespace wfs {

// The parameters with the pupil phase (Zernike plus zonal) unwrapped, or nothing when the phase has no whole-wave
// jump between neighbouring pupil pixels (or the problem has no zonal phase, or the jumps cannot be moved into the
// free parameters, e.g. with fixed Zernike terms). The field exp(i phase) is unchanged to rounding.
std::optional<std::vector<double>> unwrappedPupilPhase(const Problem& problem, const std::vector<double>& parameters);

} // namespace wfs
