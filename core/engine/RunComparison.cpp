#include "engine/RunComparison.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace wfs {

namespace {

int indexIn(ZernikeMode mode, ZernikeOrdering ordering)
{
    try {
        return zernike::indexFromMode(mode, ordering);
    } catch (const std::invalid_argument&) {
        return 1 << 20; // beyond every supported order: sorts last
    }
}

} // namespace

RunComparison compareRuns(const FitResult& first, const FitResult& second)
{
    RunComparison c;
    c.ordering = first.ordering;
    c.wavelength = first.wavelength;
    if (first.wavelength > 0 && second.wavelength > 0 && std::abs(first.wavelength - second.wavelength) > 1e-6 * first.wavelength)
        c.notes.push_back("the runs have different wavelengths; each is in waves of its own");
    if (first.normalization != second.normalization)
        c.notes.push_back("the runs use different Zernike normalisations; coefficients are not directly comparable");
    if (first.ordering != second.ordering)
        c.notes.push_back(std::string("terms matched by (n, m); indices in the first run's ordering (")
                          + zernike::orderingName(first.ordering) + ")");

    for (const CoefficientResult& a : first.coefficients)
        c.terms.push_back({a.mode, indexIn(a.mode, c.ordering), zernike::name(a.mode), a.waves, std::nullopt, 0.0});
    for (const CoefficientResult& b : second.coefficients) {
        auto it = std::find_if(c.terms.begin(), c.terms.end(), [&](const ComparedTerm& t) { return t.mode == b.mode; });
        if (it == c.terms.end())
            c.terms.push_back({b.mode, indexIn(b.mode, c.ordering), zernike::name(b.mode), std::nullopt, b.waves, 0.0});
        else
            it->secondWaves = b.waves;
    }
    std::sort(c.terms.begin(), c.terms.end(), [](const ComparedTerm& x, const ComparedTerm& y) { return x.index < y.index; });
    double squares = 0.0;
    for (ComparedTerm& t : c.terms) {
        t.differenceWaves = t.secondWaves.value_or(0.0) - t.firstWaves.value_or(0.0);
        squares += t.differenceWaves * t.differenceWaves;
    }
    c.coefficientRmsWaves = std::sqrt(squares);

    const Image& a = first.phaseMap;
    const Image& b = second.phaseMap;
    if (a.isEmpty() || b.isEmpty()) {
        c.notes.push_back("a run has no phase map; no difference map");
        return c;
    }
    if (a.width != b.width || a.height != b.height)
        c.notes.push_back("the phase maps differ in size (" + std::to_string(a.width) + " and " + std::to_string(b.width)
                          + " pixels across); the second is sampled on the first one's pixels");
    const double toWaves = 1.0 / (2.0 * std::numbers::pi); // the maps are in radians
    Image& d = c.phaseDifferenceWaves;
    c.phaseDifferenceGeometry = first.phaseMapGeometry;
    d = Image(a.width, a.height, std::nan(""));
    double sum = 0.0, sumSquares = 0.0, low = INFINITY, high = -INFINITY;
    for (int row = 0; row < a.height; ++row)
        for (int col = 0; col < a.width; ++col) {
            // The same normalised position across the pupil box.
            const int rb = std::clamp(int(std::floor((row + 0.5) * b.height / a.height)), 0, b.height - 1);
            const int cb = std::clamp(int(std::floor((col + 0.5) * b.width / a.width)), 0, b.width - 1);
            const double pa = a.at(row, col), pb = b.at(rb, cb);
            if (!std::isfinite(pa) || !std::isfinite(pb))
                continue;
            const double v = (pb - pa) * toWaves;
            d.at(row, col) = v;
            sum += v;
            sumSquares += v * v;
            low = std::min(low, v);
            high = std::max(high, v);
            ++c.pupilPixels;
        }
    if (c.pupilPixels > 0) {
        const double mean = sum / c.pupilPixels;
        c.rmsDifferenceWaves = std::sqrt(std::max(0.0, sumSquares / c.pupilPixels - mean * mean));
        c.pvDifferenceWaves = high - low;
    } else {
        c.notes.push_back("the pupils do not overlap; no difference map");
    }
    return c;
}

} // namespace wfs
