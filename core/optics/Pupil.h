#pragma once
// The pupil: where the grid's samples sit in normalised pupil coordinates, and which of them transmit
// light with what amplitude (aperture, obscuration, spider vanes, custom mask, Gaussian illumination).
#include <vector>

namespace wfs {

// Grid geometry. Pupil coordinates are normalised to radius 1; angles counter-clockwise from +x.
struct PupilGrid {
    int size = 256;              // N: the model works on N x N samples (N even)
    double origin = -2.0;        // pupil coordinate of sample 0
    double spacing = 1.0 / 64.0; // pupil radii per sample
    bool rowIsX = false;         // the OOF preset's convention; otherwise rows run along y (row 0 at the bottom)

    // The pupil diameter spans size / Q samples, centred on sample size / 2 (the FFT's zero frequency),
    // so the PSF is sampled at Q = lambda F# / pixel.
    static PupilGrid centred(int size, double samplingQ);
    // The OOF benchmark: [-4, 4] x [-4, 4] with both end points included, rows along x.
    static PupilGrid oofSquare(int size);

    double coordinate(int index) const { return origin + spacing * index; }
    double x(int row, int col) const { return coordinate(rowIsX ? row : col); }
    double y(int row, int col) const { return coordinate(rowIsX ? col : row); }
};

struct Illumination {
    bool gaussian = false; // false: uniform amplitude over the aperture
    double x0 = 0.0;       // Gaussian centre, pupil radii
    double y0 = 0.0;
    double sigma = 0.72;    // Gaussian width (standard deviation of the amplitude), pupil radii
    double amplitude = 1.0; // field amplitude scale (the OOF preset's "amp")
    bool fitCentre = false; // x0, y0 free (Gaussian only)
    bool fitSigma = false;  // sigma free (Gaussian only)
    bool fitAmplitude = false;
};

struct PupilSpec {
    double obscuration = 0.0;      // central obscuration diameter / pupil diameter, [0, 1)
    int spiderCount = 0;           // number of vanes, evenly spaced in angle
    double spiderWidth = 0.0;      // vane width as a fraction of the pupil diameter
    double spiderAngleDeg = 0.0;   // angle of the first vane from +x, counter-clockwise
    std::vector<float> customMask; // optional N x N transmission in grid layout; multiplies the rest
    Illumination illumination;

    // Geometric transmission (0 or 1, or the custom mask's value) at pupil point (x, y).
    double transmission(double x, double y) const;
};

// Gaussian (or uniform) illumination profile without the amplitude factor.
double illuminationProfile(const Illumination& illumination, double x, double y);

} // namespace wfs
