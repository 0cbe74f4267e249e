#include "fit/ImageStatistics.h"

#include "optics/Fftw.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace wfs {

double median(std::vector<double> v)
{
    if (v.empty())
        return std::numeric_limits<double>::quiet_NaN();
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + long(mid), v.end());
    double m = v[mid];
    if (v.size() % 2 == 0) {
        const double lower = *std::max_element(v.begin(), v.begin() + long(mid));
        m = 0.5 * (m + lower);
    }
    return m;
}

// Sigma clipping: reject values more than `clip` robust deviations (1.4826 MAD) from the median until
// nothing changes, then the mean and standard deviation of what is left.
RobustStats sigmaClipped(std::vector<double> values, double clip)
{
    RobustStats s;
    bool rejected = false;
    for (int iteration = 0; iteration < 20 && !values.empty(); ++iteration) {
        const double m = median(values);
        std::vector<double> deviations(values.size());
        for (size_t i = 0; i < values.size(); ++i)
            deviations[i] = std::abs(values[i] - m);
        double sigma = 1.4826 * median(deviations);
        if (!(sigma > 0.0)) {
            // Quantised data (most border pixels equal): fall back to the standard deviation.
            double mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size()), sq = 0.0;
            for (double v : values)
                sq += (v - mean) * (v - mean);
            sigma = std::sqrt(sq / double(values.size()));
        }
        if (!(sigma > 0.0))
            break;
        std::vector<double> kept;
        kept.reserve(values.size());
        for (double v : values)
            if (std::abs(v - m) <= clip * sigma)
                kept.push_back(v);
        if (kept.size() == values.size() || kept.empty())
            break;
        rejected = true;
        values.swap(kept);
    }
    s.count = values.size();
    if (values.empty())
        return s;
    s.mean = std::accumulate(values.begin(), values.end(), 0.0) / double(values.size());
    double sq = 0.0;
    for (double v : values)
        sq += (v - s.mean) * (v - s.mean);
    s.sigma = values.size() > 1 ? std::sqrt(sq / double(values.size() - 1)) : 0.0;
    // What is left is a normal distribution cut at +-clip sigma, whose variance is short by the factor
    // 1 - 2 clip phi(clip) / (2 Phi(clip) - 1) (2.7 % at 3 sigma): undo it, so that the noise floor, and
    // a read noise taken from it, are the parent distribution's.
    if (rejected && clip > 0.0) {
        const double density = std::exp(-0.5 * clip * clip) / std::sqrt(2.0 * M_PI);
        const double inside = std::erf(clip / std::sqrt(2.0));
        const double kept = 1.0 - 2.0 * clip * density / inside;
        if (kept > 0.0)
            s.sigma /= std::sqrt(kept);
    }
    return s;
}

// Brightest pixel after 3 x 3 smoothing.
std::pair<double, double> peakOf(const WorkImage& w)
{
    double best = -std::numeric_limits<double>::infinity();
    int br = w.height / 2, bc = w.width / 2;
    for (int r = 0; r < w.height; ++r)
        for (int c = 0; c < w.width; ++c) {
            const double s = w.box(r, c);
            if (s > best) {
                best = s;
                br = r;
                bc = c;
            }
        }
    return {double(bc), double(br)};
}

// Centroid of the positive pixels in a window around the peak, iterated as the window follows it.
std::pair<double, double> centroidOf(const WorkImage& w, int radius)
{
    auto [x, y] = peakOf(w);
    for (int iteration = 0; iteration < 20; ++iteration) {
        double sum = 0.0, sx = 0.0, sy = 0.0;
        const int r0 = std::max(0, int(std::lround(y)) - radius), r1 = std::min(w.height - 1, int(std::lround(y)) + radius);
        const int c0 = std::max(0, int(std::lround(x)) - radius), c1 = std::min(w.width - 1, int(std::lround(x)) + radius);
        for (int r = r0; r <= r1; ++r)
            for (int c = c0; c <= c1; ++c) {
                const double v = w.at(r, c);
                if (v > 0.0) {
                    sum += v;
                    sx += v * c;
                    sy += v * r;
                }
            }
        if (!(sum > 0.0))
            break;
        const double nx = sx / sum, ny = sy / sum;
        const bool settled = std::abs(nx - x) < 1e-3 && std::abs(ny - y) < 1e-3;
        x = nx;
        y = ny;
        if (settled)
            break;
    }
    return {x, y};
}

PhotonTransfer estimatePhotonTransfer(const std::vector<Image>& planes, const std::vector<double>& floorVariance, double samplingQ)
{
    PhotonTransfer out;
    if (planes.empty() || planes.size() != floorVariance.size()) {
        out.problem = "no planes";
        return out;
    }
    const int width = planes.front().width, height = planes.front().height;
    int n = std::max(width, height);
    n += n % 2;
    const double cutoff = 1.0 / samplingQ + 3.0 / double(std::min(width, height));
    std::vector<double> window(size_t(width) * size_t(height));
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c)
            window[size_t(r) * size_t(width) + size_t(c)] = std::sin(M_PI * (r + 0.5) / height) * std::sin(M_PI * (r + 0.5) / height)
                                                            * std::sin(M_PI * (c + 0.5) / width) * std::sin(M_PI * (c + 0.5) / width);
    std::vector<size_t> outOfBand;
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
            const double fy = double(r < n / 2 ? r : r - n) / n, fx = double(c < n / 2 ? c : c - n) / n;
            if (std::hypot(fx, fy) > cutoff)
                outOfBand.push_back(size_t(r) * size_t(n) + size_t(c));
        }
    out.outOfBandFraction = double(outOfBand.size()) / (double(n) * double(n));
    if (outOfBand.size() < 64) {
        out.problem = "the sampling (Q " + std::to_string(samplingQ).substr(0, 4)
                      + ") leaves no frequencies without light: photon transfer needs Q above about 1.3";
        return out;
    }
    fftw::PlanKey key;
    key.n = n;
    key.axes = fftw::Axes::Full2d;
    key.direction = fftw::Direction::Forward;
    key.measure = false;
    const auto plan = fftw::plan<double>(key);
    fftw::ComplexBuffer<double> buffer(size_t(n) * size_t(n));
    double sumSignalSquared = 0.0, sumSignalExcess = 0.0;
    for (size_t k = 0; k < planes.size(); ++k) {
        const Image& image = planes[k];
        if (image.width != width || image.height != height) {
            out.problem = "planes of different sizes";
            return out;
        }
        std::fill(buffer.data(), buffer.data() + buffer.size(), std::complex<double>(0.0, 0.0));
        double signal = 0.0, weightSquares = 0.0;
        for (int r = 0; r < height; ++r)
            for (int c = 0; c < width; ++c) {
                const size_t i = size_t(r) * size_t(width) + size_t(c);
                const double v = image.pixels[i];
                if (!std::isfinite(v))
                    continue;
                const double w = window[i];
                buffer.data()[size_t(r) * size_t(n) + size_t(c)] = w * v;
                signal += w * w * v; // unbiased: E[v] is the signal, negative noise included
                weightSquares += w * w;
            }
        fftw::Traits<double>::execute(plan, buffer.raw(), buffer.raw());
        double power = 0.0;
        for (size_t index : outOfBand)
            power += std::norm(buffer.data()[index]);
        power /= double(outOfBand.size());
        const PhotonTransferPlane point{signal, power - floorVariance[k] * weightSquares};
        out.planes.push_back(point);
        sumSignalSquared += point.signal * point.signal;
        sumSignalExcess += point.signal * point.excessPower;
    }
    if (!(sumSignalSquared > 0.0) || !(sumSignalExcess > 0.0)) {
        out.problem = "no photon noise above the noise floor could be measured (too little signal)";
        return out;
    }
    out.gain = sumSignalSquared / sumSignalExcess;
    return out;
}

} // namespace wfs
