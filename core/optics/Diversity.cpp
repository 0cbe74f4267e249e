#include "optics/Diversity.h"

#include <cmath>
#include <cstdio>

namespace wfs {

double DiversitySpec::phase(double x, double y, double wavelength) const
{
    const double rho2 = x * x + y * y;
    const double k = 2.0 * M_PI / wavelength;
    switch (kind) {
    case DiversityKind::None:
        return 0.0;
    case DiversityKind::ZernikeDefocus:
        if (measure == DefocusMeasure::PeakToValley)
            return 2.0 * M_PI * defocusWaves * rho2;
        return 2.0 * M_PI * defocusWaves * std::sqrt(3.0) * (2.0 * rho2 - 1.0);
    case DiversityKind::AxialParaxial:
        return k * axialDistance * numericalAperture * numericalAperture * rho2 / (2.0 * immersionIndex);
    case DiversityKind::AxialHighNa: {
        const double n = immersionIndex;
        const double s = n * n - numericalAperture * numericalAperture * rho2;
        return k * axialDistance * (n - std::sqrt(std::max(s, 0.0)));
    }
    case DiversityKind::PrimeFocus: {
        const double u = std::hypot(x * dishRadius, y * dishRadius) / (2.0 * focalLength);
        const double pf = (1.0 - u * u) / (1.0 + u * u) - 1.0;
        return pf * axialDistance / wavelength * 2.0 * M_PI;
    }
    }
    return 0.0;
}

double DiversitySpec::amount() const
{
    switch (kind) {
    case DiversityKind::None:
        return 0.0;
    case DiversityKind::ZernikeDefocus:
        return defocusWaves;
    default:
        return axialDistance;
    }
}

void DiversitySpec::setAmount(double value)
{
    if (kind == DiversityKind::ZernikeDefocus)
        defocusWaves = value;
    else if (kind != DiversityKind::None)
        axialDistance = value;
}

const char* DiversitySpec::amountUnit() const
{
    return kind == DiversityKind::None ? "" : kind == DiversityKind::ZernikeDefocus ? "waves" : "m";
}

std::string DiversitySpec::describe() const
{
    char text[128];
    switch (kind) {
    case DiversityKind::None:
        return "in focus";
    case DiversityKind::ZernikeDefocus:
        std::snprintf(text, sizeof text, "defocus %+g wave %s", defocusWaves,
                      measure == DefocusMeasure::PeakToValley ? "(W020, edge to centre)" : "RMS");
        return text;
    case DiversityKind::AxialParaxial:
        std::snprintf(text, sizeof text, "z = %+g um (paraxial, NA %g, n %g)", axialDistance * 1e6, numericalAperture, immersionIndex);
        return text;
    case DiversityKind::AxialHighNa:
        std::snprintf(text, sizeof text, "z = %+g um (high NA %g, n %g)", axialDistance * 1e6, numericalAperture, immersionIndex);
        return text;
    case DiversityKind::PrimeFocus:
        std::snprintf(text, sizeof text, "prime focus dz = %+g mm (F %g m, R %g m)", axialDistance * 1e3, focalLength, dishRadius);
        return text;
    }
    return {};
}

} // namespace wfs
