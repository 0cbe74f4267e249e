#include "optics/Pupil.h"

#include <cmath>

namespace wfs {

PupilGrid PupilGrid::centred(int size, double samplingQ)
{
    PupilGrid grid;
    grid.size = size;
    grid.spacing = 2.0 * samplingQ / size; // radius 1 spans size / (2 Q) samples
    grid.origin = -grid.spacing * (size / 2);
    grid.rowIsX = false;
    return grid;
}

PupilGrid PupilGrid::oofSquare(int size)
{
    PupilGrid grid;
    grid.size = size;
    grid.origin = -4.0;
    grid.spacing = 8.0 / (size - 1);
    grid.rowIsX = true;
    return grid;
}

double PupilSpec::transmission(double x, double y) const
{
    // The disc is open (r < 1): where the pupil radius is a whole number of samples (grid 256 at
    // Q = 2), the closed disc would add one pixel at each of its four extreme points, bumps that show
    // in every phase map. Square OOF grids of even size never sample r = 1 exactly, so they keep
    // the spec's `hypot(x, y) <= 1` pupil.
    const double r = std::hypot(x, y);
    if (r >= 1.0 || r < obscuration)
        return 0.0;
    if (spiderCount > 0 && spiderWidth > 0) {
        // Each vane is a half-line from the centre; its half-width is in pupil radii (diameter = 2).
        const double halfWidth = spiderWidth; // fraction of diameter * 2 radii / 2
        for (int v = 0; v < spiderCount; ++v) {
            const double angle = (spiderAngleDeg + 360.0 * v / spiderCount) * M_PI / 180.0;
            const double ux = std::cos(angle), uy = std::sin(angle);
            const double along = x * ux + y * uy;
            const double across = std::abs(-x * uy + y * ux);
            if (along >= 0 && across <= halfWidth)
                return 0.0;
        }
    }
    return 1.0;
}

double illuminationProfile(const Illumination& illumination, double x, double y)
{
    if (!illumination.gaussian)
        return 1.0;
    const double dx = x - illumination.x0, dy = y - illumination.y0;
    return std::exp(-(dx * dx + dy * dy) / (2.0 * illumination.sigma * illumination.sigma));
}

} // namespace wfs
