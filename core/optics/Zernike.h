#pragma once
// Zernike polynomials: orderings (Noll, OSA/ANSI), normalisations, names, evaluation.
// Conventions: m > 0 multiplies cos(m theta), m < 0 multiplies sin(|m| theta); theta counter-clockwise
// from +x; radius normalised to 1 at the pupil edge.
#include <string>
#include <vector>

namespace wfs {

enum class ZernikeOrdering {
    Noll, // Noll (1976): j = 1 is piston; even j cosine, odd j sine
    Ansi, // OSA/ANSI Z80.28: j = (n (n + 2) + m) / 2, j = 0 is piston
};

enum class ZernikeNormalization {
    Rms,  // Noll 1976: unit RMS over the unit disc (orthonormal), sqrt(2 (n + 1)) or sqrt(n + 1) factors
    Unit, // Born & Wolf: R(1) = 1, no factor (the OOF preset)
};

struct ZernikeMode {
    int n = 0; // radial order
    int m = 0; // signed azimuthal frequency
    bool operator==(const ZernikeMode&) const = default;
};

namespace zernike {

constexpr int kMaxOrder = 15; // highest radial order the program supports
// The one range rule of a Zernike radial order (a model's order, each coarse-to-fine stage, a benchmark's
// orders): empty within 1..kMaxOrder, else "must be between 1 and 15 (got 16)".
std::string orderError(int order);

int termCount(int maxOrder);                                    // (n + 1)(n + 2) / 2 terms of radial order <= n
int firstIndex(ZernikeOrdering ordering);                       // 1 for Noll, 0 for ANSI (both are piston)
ZernikeMode modeFromIndex(int index, ZernikeOrdering ordering); // throws std::invalid_argument
int indexFromMode(ZernikeMode mode, ZernikeOrdering ordering);  // throws std::invalid_argument
int convertIndex(int index, ZernikeOrdering from, ZernikeOrdering to);

// The modes of radial order <= maxOrder, in the given ordering (piston first).
std::vector<ZernikeMode> modes(int maxOrder, ZernikeOrdering ordering);

// Classical name ("Defocus", "Horizontal coma", ...) or "Z(n,m)" for the unnamed ones.
std::string name(ZernikeMode mode);

const char* orderingName(ZernikeOrdering ordering);       // "noll" / "ansi"
const char* normalizationName(ZernikeNormalization norm); // "rms" / "unit"

double normalizationFactor(ZernikeMode mode, ZernikeNormalization norm);
double radial(int n, int absM, double r);
double evaluate(ZernikeMode mode, ZernikeNormalization norm, double r, double theta);

// Every mode at every point (x[p], y[p]): out[p + t * count] for mode t (column-major, as Eigen
// stores a points x modes matrix). The radial coefficients are worked out once per mode and the
// powers of r and multiples of theta once per point, which is what makes large pupils quick.
void evaluateBasis(const std::vector<ZernikeMode>& modes, ZernikeNormalization norm, const double* x, const double* y, size_t count,
                   double* out);

} // namespace zernike
} // namespace wfs
