#pragma once
// A simulated whole field to test the field pipeline against (`wavefront-cli simulate --preset field`, issue 43 item 7):
// a wide-field z-stack of a bead slide whose beads sit at random positions and whose aberrations vary across the
// field in known ways, with photon and read noise, and beads planted to be set aside: doublets (two beads 2 pixels
// apart), saturated beads and beads at the edge.
//
// The field's truth, in waves RMS (Noll, RMS-normalised), at a field position (x, y) pixels, with u = (x - cx) / R and
// v = (y - cy) / R over the field radius R (half the image's diagonal) about its centre (cx, cy):
//   Z4 (defocus, field curvature)      0.03 + 0.15 (u^2 + v^2)
//   Z5 (oblique astigmatism)           0.16 u v
//   Z6 (vertical astigmatism)          0.08 (u^2 - v^2)
//   Z7 (vertical coma)                 0.06 v
//   Z8 (horizontal coma)               0.06 u
//   Z11 (primary spherical)            0.04
// The optics: 600 nm, NA 0.9, sampling Q 2 (pixels of 166.7 nm in the sample plane); 9 planes from -1 to +1 wave of
// W020 (edge-to-centre); 2e4 photons per bead and plane (0.8 to 1.2 times, at random), background 10, read noise 2
// counts RMS; saturation at 60000 counts.
#include "io/Fits.h"
#include "io/ResultJson.h"

#include <QByteArray>
#include <QJsonObject>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace wfs {

struct FieldSimulationOptions {
    int width = 512, height = 512; // pixels
    int beads = 100;               // single beads to fit, besides the planted ones below
    int doublets = 3, saturated = 2, edge = 4;
    int planes = 9;
    int crop = 32;        // the field run's crop: beads are placed so that singles' crops hold no other bead
    double photons = 2e4; // per bead and plane (mean)
    bool noise = true;
    std::uint64_t seed = 20180518;
    const std::atomic<bool>* cancel = nullptr; // checked per bead (base/Cancellation.h)
};

// A bead as placed: "single", "doublet" (the first of its pair; the second is `partnerX`, `partnerY`), "saturated" or "edge".
struct PlantedBead {
    std::string kind;
    double x = 0.0, y = 0.0;               // pixels (fit/BeadDetection.h's convention)
    double partnerX = 0.0, partnerY = 0.0; // doublets only
    double photons = 0.0;                  // per plane
    Truth truth;                           // its aberrations (Noll, waves RMS): fieldTruthAt(x, y)
};

struct FieldSimulation {
    std::vector<Image> planes;         // width x height each, photons + background + noise, clipped at the saturation level
    std::vector<FitsKeyword> keywords; // the cube's header: optics, defocus per plane, noise, saturation
    std::vector<PlantedBead> beads;
    double centreX = 0.0, centreY = 0.0, radius = 0.0; // the truth's field coordinates (pixels)
    double pixelPitch = 0.0;                           // metres, sample plane
};

constexpr double kFieldSimulationWavelength = 600e-9, kFieldSimulationNa = 0.9, kFieldSimulationQ = 2.0;
constexpr double kFieldSimulationSaturation = 60000.0;
constexpr int kFieldSimulationOrder = 4; // the truth's highest radial order (Z11)

// The truth at a field position of a field of this size (see above).
Truth fieldTruthAt(double x, double y, int width, int height);

// Throws std::invalid_argument for sizes too small for the beads asked for, OperationCancelled when cancelled.
FieldSimulation simulateField(const FieldSimulationOptions& options);

// The cube as `wavefront-cli simulate --preset field` writes it, and its truth (the planted beads and the field's
// formula, FILE.truth.json).
QByteArray fieldFitsBytes(const FieldSimulation& field);
QJsonObject fieldTruthJson(const FieldSimulation& field);

// The simulated field as a user's session: its cube read as `wavefront-cli field` reads the file (header keywords as
// metadata), fitted with the Poisson objective at Zernike order `order`. For `bench field`, the tests and Python.
struct Session;
Session simulatedFieldSession(const FieldSimulation& field, int order);

} // namespace wfs
