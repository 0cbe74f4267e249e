#pragma once
// Diversity screens: the known phase each plane adds to the shared aberration (defocus, mostly).
#include <string>
#include <utility>
#include <vector>

namespace wfs {

// What is said, once, when no plane is defocused (the data layer and the fit's result say the same words).
inline constexpr const char* kNoDefocusWarning = "no plane is defocused: a single in-focus image cannot tell the sign of even aberrations "
                                                 "(defocus, astigmatism, spherical); add defocused planes";

enum class DiversityKind {
    None,
    ZernikeDefocus, // defocusWaves of the classical defocus, see DefocusMeasure
    AxialParaxial,  // axial displacement z: phase = k z NA^2 rho^2 / (2 n)
    AxialHighNa,    // axial displacement z, angular spectrum: phase = k z (n - sqrt(n^2 - NA^2 rho^2))
    PrimeFocus,     // the OOF preset's prime-focus telescope geometry (Nikolic 2018)
};

enum class DefocusMeasure {
    PeakToValley, // W020: W(rho) = W020 rho^2, so the edge-to-centre path difference is W020 waves
    Rms,          // coefficient of the RMS-normalised Zernike defocus sqrt(3) (2 rho^2 - 1), in waves RMS
};

struct DiversitySpec {
    DiversityKind kind = DiversityKind::None;
    double defocusWaves = 0.0; // ZernikeDefocus
    DefocusMeasure measure = DefocusMeasure::PeakToValley;
    double axialDistance = 0.0;                     // metres; Axial*: detector/sample displacement, PrimeFocus: dz
    double numericalAperture = 0.0;                 // Axial*: image-side NA (1 / (2 F#) for an f-number system)
    double immersionIndex = 1.0;                    // Axial*: refractive index n
    double focalLength = 0.0;                       // PrimeFocus: F, metres
    double dishRadius = 0.0;                        // PrimeFocus: R, metres
    std::vector<std::pair<int, double>> extraTerms; // known Zernike terms (problem's ordering index, radians)

    // Every kind is linear in one amount: defocusWaves (ZernikeDefocus, unit "waves") or axialDistance
    // (the others, unit "m"); 0 for None. The defocus nuisance parameters scale and offset it.
    double amount() const;
    void setAmount(double value);
    const char* amountUnit() const; // "waves", "m", or "" (None)

    // Phase in radians at pupil point (x, y), without extraTerms (the Problem adds those with its basis).
    double phase(double x, double y, double wavelength) const;
    std::string describe() const; // "defocus -1 wave (W020)", "z = 0.3 um (high NA)", ...
};

} // namespace wfs
