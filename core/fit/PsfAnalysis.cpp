#include "fit/PsfAnalysis.h"

#include "optics/ModelEvaluator.h"
#include "fit/Results.h"
#include "optics/Fftw.h"

#include <Eigen/Dense>

#include <algorithm>
#include <complex>
#include <limits>
#include <sstream>
#include <cmath>
#include <vector>

namespace wfs {

namespace {
double borderMedian(const Image& image)
{
    std::vector<double> border;
    for (int col = 0; col < image.width; ++col)
        for (int row : {0, image.height - 1})
            if (const double v = image.at(row, col); std::isfinite(v))
                border.push_back(v);
    for (int row = 1; row + 1 < image.height; ++row)
        for (int col : {0, image.width - 1})
            if (const double v = image.at(row, col); std::isfinite(v))
                border.push_back(v);
    if (border.empty())
        return 0.0;
    std::nth_element(border.begin(), border.begin() + long(border.size() / 2), border.end());
    return border[border.size() / 2];
}
} // namespace

PixelBox fluxBox(const Image& image, double fraction)
{
    if (image.isEmpty())
        return {};
    const double background = borderMedian(image);
    // The centre from clearly positive pixels; the enclosed flux from signed values, so that noise
    // about the background cancels instead of adding up over a large frame.
    double positive = 0.0, sx = 0.0, sy = 0.0, total = 0.0, peak = 0.0;
    for (double v : image.pixels)
        if (std::isfinite(v))
            peak = std::max(peak, v - background);
    for (int row = 0; row < image.height; ++row)
        for (int col = 0; col < image.width; ++col) {
            const double v = image.at(row, col) - background;
            if (!std::isfinite(v))
                continue;
            total += v;
            if (v > 0.05 * peak) {
                positive += v;
                sx += v * col;
                sy += v * row;
            }
        }
    if (!(positive > 0.0) || !(total > 0.0))
        return {};
    const double cx = sx / positive, cy = sy / positive;
    // Flux by Chebyshev distance (in whole pixels) from the centre, then the smallest half-size that
    // holds the fraction.
    const int largest = int(std::ceil(std::max({cx, image.width - 1 - cx, cy, image.height - 1 - cy}))) + 1;
    std::vector<double> byDistance(size_t(largest) + 1, 0.0);
    for (int row = 0; row < image.height; ++row)
        for (int col = 0; col < image.width; ++col) {
            const double v = image.at(row, col) - background;
            if (std::isfinite(v)) {
                const int d = int(std::ceil(std::max(std::abs(col - cx), std::abs(row - cy))));
                byDistance[size_t(std::min(d, largest))] += v;
            }
        }
    const double wanted = std::clamp(fraction, 0.0, 1.0) * total;
    double sum = 0.0;
    int half = largest;
    for (int d = 0; d <= largest; ++d) {
        sum += byDistance[size_t(d)];
        if (sum >= wanted) {
            half = d;
            break;
        }
    }
    half = std::max(half + 1, 8);
    const int side = std::min(2 * half, std::max(image.width, image.height));
    PixelBox box;
    box.width = std::min(side, image.width);
    box.height = std::min(side, image.height);
    box.col = std::clamp(int(std::lround(cx)) - box.width / 2, 0, image.width - box.width);
    box.row = std::clamp(int(std::lround(cy)) - box.height / 2, 0, image.height - box.height);
    return box;
}

} // namespace wfs

// ---- The analysis of a fit ----

namespace wfs {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// |FFT(field)|^2 on the N x N grid, shifted so that the zero frequency is at (N/2, N/2).
std::vector<double> intensity(const Problem& problem, const ModelParameters& p, const Eigen::VectorXd& phase)
{
    const int n = problem.gridSize();
    const std::vector<double> raw = inFocusIntensity(problem, p, phase);
    std::vector<double> out(raw.size());
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            out[size_t((r + n / 2) % n) * size_t(n) + size_t((c + n / 2) % n)] = raw[size_t(r) * size_t(n) + size_t(c)];
    return out;
}

// |OTF| / OTF(0) of a centred intensity, itself centred.
std::vector<double> mtf(const std::vector<double>& psf, int n)
{
    fftw::ComplexBuffer<double> buffer(size_t(n) * size_t(n));
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            buffer.data()[size_t((r + n / 2) % n) * size_t(n) + size_t((c + n / 2) % n)] = psf[size_t(r) * size_t(n) + size_t(c)];
    fftw::PlanKey key;
    key.n = n;
    key.axes = fftw::Axes::Full2d;
    key.direction = fftw::Direction::Forward;
    key.measure = false;
    fftw::Traits<double>::execute(fftw::plan<double>(key), buffer.raw(), buffer.raw());
    const double zero = std::abs(buffer.data()[0]);
    std::vector<double> out(size_t(n) * size_t(n));
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c)
            out[size_t((r + n / 2) % n) * size_t(n) + size_t((c + n / 2) % n)] =
                zero > 0 ? std::abs(buffer.data()[size_t(r) * size_t(n) + size_t(c)]) / zero : 0.0;
    return out;
}

// Azimuthal average of a row-major image about (cx, cy), one bin per whole pixel of radius.
std::vector<double> radialAverage(const std::vector<double>& values, int width, int height, double cx, double cy, int bins)
{
    std::vector<double> sum(size_t(bins), 0.0), count(size_t(bins), 0.0);
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c) {
            const double v = values[size_t(r) * size_t(width) + size_t(c)];
            const int bin = int(std::lround(std::hypot(c - cx, r - cy)));
            if (bin < bins && std::isfinite(v)) {
                sum[size_t(bin)] += v;
                count[size_t(bin)] += 1.0;
            }
        }
    for (int b = 0; b < bins; ++b)
        sum[size_t(b)] = count[size_t(b)] > 0 ? sum[size_t(b)] / count[size_t(b)] : kNaN;
    return sum;
}

Image centreCut(const std::vector<double>& grid, int n, int half, double scale)
{
    Image image(2 * half + 1, 2 * half + 1);
    for (int r = -half; r <= half; ++r)
        for (int c = -half; c <= half; ++c)
            image.at(r + half, c + half) = grid[size_t(n / 2 + r) * size_t(n) + size_t(n / 2 + c)] * scale;
    return image;
}

// Full width at half maximum through the brightest pixel: the mean of the widths along the row and
// the column, each side found by linear interpolation between the samples about the half level.
double fwhm(const std::vector<double>& grid, int n)
{
    const size_t top = size_t(std::max_element(grid.begin(), grid.end()) - grid.begin());
    const int row = int(top / size_t(n)), col = int(top % size_t(n));
    const double half = 0.5 * grid[top];
    if (!(half > 0))
        return kNaN;
    auto side = [&](int dr, int dc) {
        double previous = grid[top];
        for (int step = 1; step < n / 2; ++step) {
            const int r = row + dr * step, c = col + dc * step;
            if (r < 0 || c < 0 || r >= n || c >= n)
                break;
            const double v = grid[size_t(r) * size_t(n) + size_t(c)];
            if (v < half)
                return double(step - 1) + (previous - half) / (previous - v);
            previous = v;
        }
        return kNaN;
    };
    return 0.5 * (side(0, 1) + side(0, -1) + side(1, 0) + side(-1, 0));
}

// Encircled energy of the fitted and the ideal PSF within whole-pixel radii of the grid centre
// (piston, tip and tilt are removed, so the PSFs sit there).
void addEncircledEnergy(const std::vector<double>& fitted, const std::vector<double>& ideal, int n, int bins, PsfAnalysis& a)
{
    double totalFitted = 0.0, totalIdeal = 0.0;
    std::vector<double> ringFitted(size_t(bins), 0.0), ringIdeal(size_t(bins), 0.0);
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
            const size_t g = size_t(r) * size_t(n) + size_t(c);
            totalFitted += fitted[g];
            totalIdeal += ideal[g];
            const int bin = int(std::ceil(std::hypot(c - n / 2, r - n / 2)));
            if (bin < bins) {
                ringFitted[size_t(bin)] += fitted[g];
                ringIdeal[size_t(bin)] += ideal[g];
            }
        }
    double sumFitted = 0.0, sumIdeal = 0.0;
    for (int b = 0; b < bins; ++b) {
        sumFitted += ringFitted[size_t(b)];
        sumIdeal += ringIdeal[size_t(b)];
        a.radius.push_back(b);
        a.encircledFitted.push_back(sumFitted / totalFitted);
        a.encircledDiffraction.push_back(sumIdeal / totalIdeal);
    }
}

// Data and model radial profiles per plane, both about the model's centroid.
void addPlaneProfiles(ModelEvaluator& evaluator, const std::vector<double>& parameters, int bins, PsfAnalysis& a)
{
    const Problem& problem = evaluator.problem();
    const std::vector<Image> models = modelImagesInDataLayout(evaluator, parameters);
    for (int k = 0; k < problem.planeCount(); ++k) {
        const Image& data = problem.spec().planes[size_t(k)].data;
        const Image& model = models[size_t(k)];
        double total = 0.0, sx = 0.0, sy = 0.0;
        for (int r = 0; r < model.height; ++r)
            for (int c = 0; c < model.width; ++c)
                if (const double v = model.at(r, c); std::isfinite(v) && v > 0) {
                    total += v;
                    sx += v * c;
                    sy += v * r;
                }
        const double cx = total > 0 ? sx / total : model.width / 2, cy = total > 0 ? sy / total : model.height / 2;
        std::vector<double> d = radialAverage(data.pixels, data.width, data.height, cx, cy, bins);
        std::vector<double> m = radialAverage(model.pixels, model.width, model.height, cx, cy, bins);
        a.planeNames.push_back(problem.spec().planes[size_t(k)].diversity.describe());
        a.dataProfiles.push_back(std::move(d));
        a.modelProfiles.push_back(std::move(m));
    }
}

// MTF: radial out to the cutoff (N / Q bins from the centre), and the 2-D maps around it.
void addMtf(const std::vector<double>& fitted, const std::vector<double>& ideal, int n, PsfAnalysis& a)
{
    const std::vector<double> mtfF = mtf(fitted, n), mtfI = mtf(ideal, n);
    const int cutoffBins = std::min(n / 2 - 1, int(std::ceil(a.cutoffCyclesPerPixel * n)));
    const std::vector<double> radialF = radialAverage(mtfF, n, n, n / 2, n / 2, cutoffBins + 1);
    const std::vector<double> radialI = radialAverage(mtfI, n, n, n / 2, n / 2, cutoffBins + 1);
    for (int b = 0; b <= cutoffBins; ++b) {
        a.frequency.push_back(double(b) / n);
        a.mtfFitted.push_back(radialF[size_t(b)]);
        a.mtfDiffraction.push_back(radialI[size_t(b)]);
    }
    a.mtfFitted2d = centreCut(mtfF, n, cutoffBins, 1.0);
    a.mtfDiffraction2d = centreCut(mtfI, n, cutoffBins, 1.0);
    a.mtfFitted2d.source = "MTF of the fitted system";
    a.mtfDiffraction2d.source = "MTF of the diffraction-limited system";
}
} // namespace

PsfAnalysis analysePsf(ModelEvaluator& evaluator, const std::vector<double>& parameters)
{
    const Problem& problem = evaluator.problem();
    const int n = problem.gridSize();
    const ModelParameters p = problem.unpack(parameters.data());
    PsfAnalysis a;
    const double spacing = problem.spec().grid.spacing;
    a.lambdaOverDPerPixel = 2.0 / (n * spacing);
    a.cutoffCyclesPerPixel = a.lambdaOverDPerPixel;

    const Eigen::VectorXd phase = flattenedPhase(problem, p, false);
    const std::vector<double> fitted = intensity(problem, p, phase);
    const std::vector<double> ideal = intensity(problem, p, Eigen::VectorXd::Zero(phase.size()));
    const double peak = *std::max_element(ideal.begin(), ideal.end());
    if (!(peak > 0))
        throw std::runtime_error("the pupil passes no light: no PSF to analyse");
    a.strehl = *std::max_element(fitted.begin(), fitted.end()) / peak;
    // The cut holds about 12 Airy-core radii (1.22 lambda / D each).
    const int half = std::clamp(int(std::ceil(15.0 / a.lambdaOverDPerPixel)), 8, n / 2 - 1);
    a.fittedPsf = centreCut(fitted, n, half, 1.0 / peak);
    a.diffractionPsf = centreCut(ideal, n, half, 1.0 / peak);
    a.fittedPsf.source = "fitted PSF";
    a.diffractionPsf.source = "diffraction-limited PSF";

    const int bins = n / 2;
    a.fwhmFittedPixels = fwhm(fitted, n);
    a.fwhmDiffractionPixels = fwhm(ideal, n);
    addEncircledEnergy(fitted, ideal, n, bins, a);
    addPlaneProfiles(evaluator, parameters, bins, a);
    addMtf(fitted, ideal, n, a);
    return a;
}

std::string psfAnalysisCsv(const PsfAnalysis& a)
{
    std::ostringstream out;
    out.precision(10);
    // One header row, no comment lines (spreadsheets read the file as it is); the summary numbers are
    // columns of the first row.
    out << "strehl,fwhm_fitted_px,fwhm_diffraction_px,lambda_over_d_per_px,mtf_cutoff_cycles_per_px,radius_px,radius_lambda_over_d,"
           "encircled_energy_fitted_fraction,encircled_energy_diffraction_fraction";
    for (size_t k = 0; k < a.planeNames.size(); ++k)
        out << ",data_profile_plane" << k << "_counts,model_profile_plane" << k << "_counts";
    out << ",frequency_cycles_per_px,frequency_of_cutoff_fraction,mtf_fitted,mtf_diffraction\n";
    const size_t rows = std::max(a.radius.size(), a.frequency.size());
    auto number = [&out](double v) {
        if (std::isfinite(v))
            out << v;
    };
    for (size_t i = 0; i < rows; ++i) {
        if (i == 0)
            out << a.strehl << ',' << a.fwhmFittedPixels << ',' << a.fwhmDiffractionPixels << ',' << a.lambdaOverDPerPixel << ','
                << a.cutoffCyclesPerPixel << ',';
        else
            out << ",,,,,";
        if (i < a.radius.size()) {
            out << a.radius[i] << ',' << a.radius[i] * a.lambdaOverDPerPixel << ',' << a.encircledFitted[i] << ','
                << a.encircledDiffraction[i];
        } else {
            out << ",,,";
        }
        for (size_t k = 0; k < a.planeNames.size(); ++k) {
            out << ',';
            if (i < a.dataProfiles[k].size())
                number(a.dataProfiles[k][i]);
            out << ',';
            if (i < a.modelProfiles[k].size())
                number(a.modelProfiles[k][i]);
        }
        if (i < a.frequency.size())
            out << ',' << a.frequency[i] << ',' << a.frequency[i] / a.cutoffCyclesPerPixel << ',' << a.mtfFitted[i] << ','
                << a.mtfDiffraction[i];
        else
            out << ",,,,";
        out << '\n';
    }
    return out.str();
}

} // namespace wfs
