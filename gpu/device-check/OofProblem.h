#pragma once
// The OOF benchmark problem (Nikolic 2018) in the GPU model's device layout, built from the
// spec's formulas without the engine, so that the GPU-only harness can time any grid (64 .. 4096) on a
// machine that cannot build the engine. The harness checks this generator against the engine's own OOF
// preset at grid 64 order 4 and grid 128 order 8 (the reference files) before it trusts its timings.
#include "gpu/model/ModelLayout.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace wfs::devicecheck {

// Un-normalised (Born & Wolf, R(1) = 1) Zernike term of OSA/ANSI index j at (r, phi).
inline double oofZernike(int n, int l, double r, double phi)
{
    const int m = l < 0 ? -l : l;
    auto factorial = [](int k) {
        double f = 1;
        for (int i = 2; i <= k; ++i)
            f *= i;
        return f;
    };
    double radial = 0.0;
    for (int s = 0; s <= (n - m) / 2; ++s) {
        const double c = factorial(n - s) / (factorial(s) * factorial((n + m) / 2 - s) * factorial((n - m) / 2 - s));
        radial += ((s % 2) ? -c : c) * std::pow(r, n - 2 * s);
    }
    if (l > 0)
        return radial * std::cos(m * phi);
    if (l < 0)
        return radial * std::sin(m * phi);
    return radial;
}

struct OofCase {
    gpu::ModelInput input;
    std::vector<double> start; // the parameter block at the spec's start p0 = (0, ..., 0, 0, 0, 1)
};

// Grid N x N over [-4, 4]^2 (row index -> x), the open unit disc, J = (order+1)(order+2)/2 terms with
// piston, Gaussian amplitude (sigma 0.72), prime-focus defocus planes dz = 0, -0.05, +0.05 m. Data: the
// model at the start is not needed for timing; zero data keeps the objective's work the same.
inline OofCase makeOofCase(int n, int order, int realBytes)
{
    OofCase c;
    gpu::ModelInput& in = c.input;
    gpu::ModelDims& d = in.dims;
    d.n = n;
    d.planes = 3;
    d.terms = (order + 1) * (order + 2) / 2;
    d.objective = gpu::DeviceObjective::LeastSquares;
    d.gaussian = true;
    d.weighted = false;
    d.realBytes = realBytes;
    const double spacing = 8.0 / (n - 1);
    int rowBegin = n, rowEnd = 0;
    for (int row = 0; row < n; ++row)
        for (int col = 0; col < n; ++col) {
            const double x = -4.0 + spacing * row, y = -4.0 + spacing * col;
            if (!(std::hypot(x, y) < 1.0))
                continue;
            in.pupilIndex.push_back(row * n + col);
            in.x.push_back(x);
            in.y.push_back(y);
            in.transmission.push_back(1.0);
            rowBegin = std::min(rowBegin, row);
            rowEnd = std::max(rowEnd, row + 1);
        }
    d.pixels = int(in.pupilIndex.size());
    d.rowBegin = rowBegin;
    d.bandRows = rowEnd - rowBegin;
    const std::size_t pixels = std::size_t(d.pixels);
    in.basis.resize(std::size_t(d.terms) * pixels);
    int j = 0;
    for (int nn = 0; nn <= order; ++nn)
        for (int l = -nn; l <= nn; l += 2, ++j) {
            // OSA/ANSI index (n (n + 2) + l) / 2 runs with l for each n: j here is that index.
            for (std::size_t p = 0; p < pixels; ++p) {
                const double r = std::hypot(in.x[p], in.y[p]), phi = std::atan2(in.y[p], in.x[p]);
                in.basis[std::size_t(j) * pixels + p] = oofZernike(nn, l, r, phi);
            }
        }
    const double focal = 14.4, dish = 2.8, wavelength = 1.1e-3;
    const double dz[3] = {0.0, -0.05, 0.05};
    in.diversity.resize(3 * pixels);
    for (int k = 0; k < 3; ++k)
        for (std::size_t p = 0; p < pixels; ++p) {
            const double u = std::hypot(in.x[p] * dish, in.y[p] * dish) / (2.0 * focal);
            const double pf = (1.0 - u * u) / (1.0 + u * u) - 1.0;
            in.diversity[std::size_t(k) * pixels + p] = pf * dz[k] / wavelength * 2.0 * M_PI;
        }
    in.data.assign(d.gridElements(), 0.0);
    c.start.assign(std::size_t(d.parameterBlockSize()), 0.0);
    c.start[std::size_t(d.amplitude())] = 1.0;
    c.start[std::size_t(d.sigma())] = 0.72;
    for (int k = 0; k < 3; ++k)
        c.start[std::size_t(d.intensity(k))] = 1.0; // flux 1 times the preset's intensity scale 1
    return c;
}

} // namespace wfs::devicecheck
