#pragma once
// The description of a reconstruction problem: grid, pupil, Zernike basis, planes with their data and
// diversity, the objective. A value object: front ends fill it, Problem compiles and validates it.
#include "io/Image.h"
#include "optics/Diversity.h"
#include "optics/Pupil.h"
#include "optics/Zernike.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace wfs {

enum class ObjectiveKind {
    LeastSquares,         // sum (D - M)^2 (the OOF preset)
    Poisson,              // sum (M - D ln M): negative log-likelihood of photon counts
    WeightedLeastSquares, // sum (D - M)^2 / (max(D, 0) + readNoise^2): Poisson plus read noise
};

const char* objectiveName(ObjectiveKind kind); // "least-squares", "poisson", "weighted-least-squares"

// Half the Poisson deviance of data d under model m > 0: m - d + d ln(d / m). It has the gradient of
// the negative log-likelihood and is about chi^2 / 2 at a good fit, which keeps tolerances meaningful.
inline double poissonDeviance(double d, double m)
{
    return d > 0.0 ? m - d + d * (std::log(d) - std::log(m)) : m - d;
}

struct BasisSpec {
    int maxOrder = 4; // highest radial order n, at most zernike::kMaxOrder
    ZernikeOrdering ordering = ZernikeOrdering::Noll;
    ZernikeNormalization normalization = ZernikeNormalization::Rms;
    // Terms held fixed at their start value, by index in `ordering`. Piston is always fixed.
    std::vector<int> fixedTerms;
    // Start values in radians, by position in the ordering (0 = piston); missing entries are 0.
    std::vector<double> start;
};

struct PlaneSpec {
    DiversitySpec diversity;
    Image data;                  // observed PSF; smaller than the grid = compared with the grid's centre
    std::vector<uint8_t> mask;   // per data pixel, 0 = excluded (saturated, bad); empty = all used
    double flux = 1.0;           // photons in the plane for an unaberrated PSF (see ProblemSpec::intensityScale)
    bool fitFlux = false;
    double background = 0.0;     // per pixel
    bool fitBackground = false;
    bool fitShift = false;       // per-plane tip/tilt (radians at the pupil edge), for image drift
    double shiftX = 0.0;         // start values of that tip/tilt
    double shiftY = 0.0;
};

struct ProblemSpec {
    std::string name;
    PupilGrid grid;
    PupilSpec pupil;
    BasisSpec basis;
    std::vector<PlaneSpec> planes;
    ObjectiveKind objective = ObjectiveKind::LeastSquares;
    double readNoise = 0.0;       // counts RMS, WeightedLeastSquares only
    double wavelength = 633e-9;   // metres
    // Model intensity = flux * intensityScale * |field|^2 + background, with the field's inverse DFT
    // including the 1/N^2 factor. 0 = choose the scale so that flux is the total of an unaberrated
    // plane over the whole grid (the OOF preset sets 1 with flux fixed at 1).
    double intensityScale = 0.0;
};

} // namespace wfs
