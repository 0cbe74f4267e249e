#pragma once
// Two fits of a session compared (e.g. before and after an alignment step): their Zernike
// coefficients matched by mode (n, m) so that runs of different orders or orderings line up, the
// differences (second minus first), and the phase difference map with its RMS and PV. Computed here
// so that the desktop program's Runs tab only draws it.
#include "fit/Results.h"

#include <optional>
#include <string>
#include <vector>

namespace wfs {

struct ComparedTerm {
    ZernikeMode mode;
    int index = 0; // in the comparison's ordering (the first run's)
    std::string name;
    std::optional<double> firstWaves; // absent when the run did not fit this term
    std::optional<double> secondWaves;
    double differenceWaves = 0.0; // second - first, an absent term counting as 0
};

struct RunComparison {
    ZernikeOrdering ordering = ZernikeOrdering::Noll;
    double wavelength = 0.0;         // metres, the first run's
    std::vector<ComparedTerm> terms; // every term of either run, by index in `ordering`
    // (second - first) phase in waves over the first run's pupil box, NaN outside the pupil of either.
    // Where the maps differ in size, the second is sampled (nearest pixel, same normalised pupil
    // coordinates) on the first one's pixels.
    Image phaseDifferenceWaves;
    PupilMapGeometry phaseDifferenceGeometry; // where the map lies in the pupil: the first run's map's
    double rmsDifferenceWaves = 0.0;          // RMS of the map about its mean (piston removed), over the pupil
    double pvDifferenceWaves = 0.0;           // peak to valley of the map
    double coefficientRmsWaves = 0.0;         // sqrt(sum of squared coefficient differences)
    int pupilPixels = 0;                      // pixels of the map inside both pupils
    std::vector<std::string> notes;           // what makes the two not strictly comparable (wavelength, ordering, sampling)
};

// Compares two results; each coefficient in waves of its own run's wavelength.
RunComparison compareRuns(const FitResult& first, const FitResult& second);

} // namespace wfs
