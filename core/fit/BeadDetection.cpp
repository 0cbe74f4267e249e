#include "fit/BeadDetection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace wfs {

namespace {

double median(std::vector<double> values)
{
    if (values.empty())
        return 0.0;
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + long(mid), values.end());
    return values[mid];
}

double robustSigma(const std::vector<double>& values, double centre)
{
    std::vector<double> deviations;
    deviations.reserve(values.size());
    for (double v : values)
        deviations.push_back(std::abs(v - centre));
    return 1.4826 * median(std::move(deviations));
}

std::vector<double> finitePixels(const Image& image)
{
    std::vector<double> values;
    values.reserve(image.pixels.size());
    for (double v : image.pixels)
        if (std::isfinite(v))
            values.push_back(v);
    return values;
}

void checkInput(const std::vector<const Image*>& planes, const BeadDetectionOptions& options)
{
    if (planes.empty() || planes.front()->isEmpty())
        throw std::invalid_argument("no image plane to find beads in");
    for (const Image* plane : planes)
        if (plane->width != planes.front()->width || plane->height != planes.front()->height)
            throw std::invalid_argument("the planes differ in size (" + std::to_string(planes.front()->width) + " x "
                                        + std::to_string(planes.front()->height) + " and " + std::to_string(plane->width) + " x "
                                        + std::to_string(plane->height) + "); a field's stack has one size");
    if (options.crop <= 0 || options.crop % 2 != 0)
        throw std::invalid_argument("the crop must be a positive even number of pixels (got " + std::to_string(options.crop) + ")");
    if (!(options.threshold > 0.0) || !(options.smoothing > 0.0) || options.peakRadius < 1)
        throw std::invalid_argument("the detection threshold, smoothing and peak radius must be positive");
}

// Mean over planes; a pixel NaN in every plane stays NaN.
Image meanProjection(const std::vector<const Image*>& planes)
{
    Image mean(planes.front()->width, planes.front()->height, 0.0);
    std::vector<int> counts(mean.pixels.size(), 0);
    for (const Image* plane : planes)
        for (size_t i = 0; i < plane->pixels.size(); ++i)
            if (std::isfinite(plane->pixels[i])) {
                mean.pixels[i] += plane->pixels[i];
                ++counts[i];
            }
    for (size_t i = 0; i < mean.pixels.size(); ++i)
        mean.pixels[i] = counts[i] ? mean.pixels[i] / counts[i] : std::nan("");
    return mean;
}

// Separable Gaussian smoothing; NaN pixels read as `fill` (the median), edges clamped.
Image smoothed(const Image& image, double sigma, double fill)
{
    const int radius = std::max(1, int(std::ceil(3.0 * sigma)));
    std::vector<double> kernel(size_t(2 * radius + 1));
    double sum = 0.0;
    for (int k = -radius; k <= radius; ++k)
        sum += kernel[size_t(k + radius)] = std::exp(-0.5 * k * k / (sigma * sigma));
    for (double& k : kernel)
        k /= sum;
    const auto pass = [&](const Image& in, bool alongRows) {
        Image out(in.width, in.height, 0.0);
        for (int r = 0; r < in.height; ++r)
            for (int c = 0; c < in.width; ++c) {
                double acc = 0.0;
                for (int k = -radius; k <= radius; ++k) {
                    const int rr = alongRows ? r : std::clamp(r + k, 0, in.height - 1);
                    const int cc = alongRows ? std::clamp(c + k, 0, in.width - 1) : c;
                    const double v = in.at(rr, cc);
                    acc += kernel[size_t(k + radius)] * (std::isfinite(v) ? v : fill);
                }
                out.at(r, c) = acc;
            }
        return out;
    };
    return pass(pass(image, true), false);
}

bool isPeak(const Image& image, int row, int col, int radius)
{
    const double v = image.at(row, col);
    for (int dr = -radius; dr <= radius; ++dr)
        for (int dc = -radius; dc <= radius; ++dc) {
            if ((dr == 0 && dc == 0) || dr * dr + dc * dc > radius * radius)
                continue;
            const int r = row + dr, c = col + dc;
            if (r < 0 || c < 0 || r >= image.height || c >= image.width)
                continue;
            // Ties go to the first pixel in row-major order, so a flat top gives one peak.
            const double w = image.at(r, c);
            if (w > v || (w == v && (dr < 0 || (dr == 0 && dc < 0))))
                return false;
        }
    return true;
}

// The peak's position to a fraction of a pixel: a parabola through the logarithms of the peak pixel and its two
// neighbours along each axis (exact for a Gaussian), in the smoothed projection less its background. A window centroid
// would be pulled towards the peak pixel's centre by the window's own edges.
double peakOffset(double before, double at, double after)
{
    if (!(before > 0.0 && at > 0.0 && after > 0.0))
        return 0.0;
    const double a = std::log(before), b = std::log(at), c = std::log(after);
    const double curvature = a - 2.0 * b + c;
    return curvature < 0.0 ? std::clamp(0.5 * (a - c) / curvature, -0.5, 0.5) : 0.0;
}

void centroid(const Image& smooth, double background, DetectedBead& bead)
{
    const int r = bead.row, c = bead.column;
    const auto level = [&](int row, int col) {
        return row < 0 || col < 0 || row >= smooth.height || col >= smooth.width ? 0.0 : smooth.at(row, col) - background;
    };
    bead.x = c + peakOffset(level(r, c - 1), level(r, c), level(r, c + 1));
    bead.y = r + peakOffset(level(r - 1, c), level(r, c), level(r + 1, c));
}

// The rows and columns of a bead's crop, clipped to the image: [r0, r1) x [c0, c1).
struct Box {
    int r0, r1, c0, c1;
};
Box cropBox(const Image& image, const DetectedBead& bead, int crop)
{
    return {std::max(0, bead.row - crop / 2), std::min(image.height, bead.row + crop / 2), std::max(0, bead.column - crop / 2),
            std::min(image.width, bead.column + crop / 2)};
}

double boxSum(const Image& image, const Box& box, double background)
{
    double sum = 0.0;
    for (int r = box.r0; r < box.r1; ++r)
        for (int c = box.c0; c < box.c1; ++c)
            if (std::isfinite(image.at(r, c)))
                sum += image.at(r, c) - background;
    return sum;
}

// RMS radius around the peak within 4 pixels, in the plane where the bead's peak is highest, less that plane's median.
void measureWidth(const std::vector<const Image*>& planes, const std::vector<double>& planeMedians, DetectedBead& bead)
{
    constexpr int radius = 4;
    double best = -std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < planes.size(); ++k) {
        const double v = planes[k]->at(bead.row, bead.column);
        if (std::isfinite(v) && v - planeMedians[k] > best) {
            best = v - planeMedians[k];
            bead.sharpestPlane = int(k);
        }
    }
    const Image& plane = *planes[size_t(bead.sharpestPlane)];
    const double background = planeMedians[size_t(bead.sharpestPlane)];
    double sum = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0;
    for (int r = std::max(0, bead.row - radius); r <= std::min(plane.height - 1, bead.row + radius); ++r)
        for (int c = std::max(0, bead.column - radius); c <= std::min(plane.width - 1, bead.column + radius); ++c) {
            const double w = std::isfinite(plane.at(r, c)) ? std::max(0.0, plane.at(r, c) - background) : 0.0;
            sum += w;
            sx += w * c;
            sy += w * r;
            sxx += w * (double(c) * c + double(r) * r);
        }
    if (sum <= 0.0)
        return;
    const double mx = sx / sum, my = sy / sum;
    bead.width = std::sqrt(std::max(0.0, sxx / sum - mx * mx - my * my));
}

std::string number(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

void setAside(DetectedBead& bead, BeadStatus status, std::string reason)
{
    if (bead.status != BeadStatus::Accepted)
        return; // the first reason found stands
    bead.status = status;
    bead.reason = std::move(reason);
}

void rejectEdgesAndSaturation(const std::vector<const Image*>& planes, const BeadDetectionOptions& options,
                              std::vector<DetectedBead>& beads)
{
    const Image& first = *planes.front();
    const int half = options.crop / 2;
    for (DetectedBead& bead : beads) {
        if (bead.row - half < 0 || bead.column - half < 0 || bead.row + half > first.height || bead.column + half > first.width)
            setAside(bead, BeadStatus::Edge,
                     "its " + std::to_string(options.crop) + " x " + std::to_string(options.crop) + " crop does not fit in the image");
        if (!options.saturationLevel)
            continue;
        const Box box = cropBox(first, bead, options.crop);
        for (size_t k = 0; k < planes.size() && bead.status != BeadStatus::Saturated; ++k)
            for (int r = box.r0; r < box.r1; ++r)
                for (int c = box.c0; c < box.c1; ++c)
                    if (planes[k]->at(r, c) >= *options.saturationLevel) {
                        setAside(bead, BeadStatus::Saturated,
                                 "plane " + std::to_string(k) + " reaches the saturation level " + number(*options.saturationLevel)
                                     + " at column " + std::to_string(c) + ", row " + std::to_string(r));
                        r = box.r1;
                        break;
                    }
    }
}

void rejectNeighbours(const BeadDetectionOptions& options, std::vector<DetectedBead>& beads)
{
    const double distance = options.neighbourDistance > 0.0 ? options.neighbourDistance : 0.75 * options.crop;
    for (size_t i = 0; i < beads.size(); ++i)
        for (size_t j = 0; j < beads.size(); ++j) {
            const double d = std::hypot(beads[i].x - beads[j].x, beads[i].y - beads[j].y);
            if (i != j && d < distance)
                setAside(beads[i], BeadStatus::Neighbour,
                         "another bead " + number(d) + " pixels away (at " + number(beads[j].x) + ", " + number(beads[j].y)
                             + "), closer than " + number(distance));
        }
}

// Brightness (log) and width against the accepted beads' medians, in robust sigmas; at least 3 beads to compare.
void rejectOutliers(const BeadDetectionOptions& options, std::vector<DetectedBead>& beads)
{
    std::vector<double> logBrightness, widths;
    for (const DetectedBead& bead : beads)
        if (bead.status == BeadStatus::Accepted && bead.brightness > 0.0) {
            logBrightness.push_back(std::log(bead.brightness));
            widths.push_back(bead.width);
        }
    if (logBrightness.size() < 3)
        return;
    const double mb = median(logBrightness), mw = median(widths);
    // A floor on the spreads: identical beads (a simulation without noise) would make every tiny difference an outlier.
    const double sb = std::max(robustSigma(logBrightness, mb), 0.05), sw = std::max(robustSigma(widths, mw), 0.02 * mw);
    for (DetectedBead& bead : beads) {
        if (bead.status != BeadStatus::Accepted)
            continue;
        const double zb = bead.brightness > 0.0 ? (std::log(bead.brightness) - mb) / sb : 0.0, zw = (bead.width - mw) / sw;
        if (zb > options.outlierSigma)
            setAside(bead, BeadStatus::Aggregate,
                     number(std::exp(std::log(bead.brightness) - mb)) + " times as bright as the median bead (" + number(zb)
                         + " robust sigmas): a doublet or an aggregate");
        else if (zw > options.outlierSigma)
            setAside(bead, BeadStatus::Aggregate,
                     "RMS radius " + number(bead.width) + " pixels against the median " + number(mw) + " (" + number(zw)
                         + " robust sigmas): a doublet or an aggregate");
    }
}

// Removes the peaks that lie in a much brighter bead's halo (beads sorted by significance, brightest first); returns
// how many.
int dropHaloPeaks(const BeadDetectionOptions& options, std::vector<DetectedBead>& beads)
{
    const double distance = options.haloDistance > 0.0 ? options.haloDistance : 2.0 * options.crop;
    std::vector<DetectedBead> kept;
    for (const DetectedBead& bead : beads) {
        const bool halo = std::any_of(kept.begin(), kept.end(), [&](const DetectedBead& bright) {
            return bright.significance > options.haloRatio * bead.significance
                   && std::hypot(bright.x - bead.x, bright.y - bead.y) < distance;
        });
        if (!halo)
            kept.push_back(bead);
    }
    const int dropped = int(beads.size() - kept.size());
    beads = std::move(kept);
    return dropped;
}

} // namespace

const char* beadStatusName(BeadStatus status)
{
    switch (status) {
    case BeadStatus::Accepted:
        return "accepted";
    case BeadStatus::Edge:
        return "edge";
    case BeadStatus::Neighbour:
        return "neighbour";
    case BeadStatus::Saturated:
        return "saturated";
    case BeadStatus::Aggregate:
        return "aggregate";
    case BeadStatus::FitFailed:
        return "fit-failed";
    }
    return "accepted";
}

BeadDetection detectBeads(const std::vector<Image>& planes, const BeadDetectionOptions& options)
{
    std::vector<const Image*> pointers;
    for (const Image& plane : planes)
        pointers.push_back(&plane);
    return detectBeads(pointers, options);
}

BeadDetection detectBeads(const std::vector<const Image*>& planes, const BeadDetectionOptions& options)
{
    checkInput(planes, options);
    BeadDetection out;
    out.projection = meanProjection(planes);
    const double fill = median(finitePixels(out.projection));
    const Image smooth = smoothed(out.projection, options.smoothing, fill);
    out.background = median(smooth.pixels);
    out.noise = robustSigma(smooth.pixels, out.background);
    out.threshold = out.background + options.threshold * out.noise;
    std::vector<double> planeMedians;
    for (const Image* plane : planes)
        planeMedians.push_back(median(finitePixels(*plane)));
    for (int r = 0; r < smooth.height; ++r)
        for (int c = 0; c < smooth.width; ++c) {
            if (!(smooth.at(r, c) > out.threshold) || !isPeak(smooth, r, c, options.peakRadius))
                continue;
            DetectedBead bead;
            bead.row = r;
            bead.column = c;
            bead.significance = out.noise > 0.0 ? (smooth.at(r, c) - out.background) / out.noise : INFINITY;
            centroid(smooth, out.background, bead);
            bead.brightness = boxSum(out.projection, cropBox(out.projection, bead, options.crop), fill);
            measureWidth(planes, planeMedians, bead);
            out.beads.push_back(bead);
        }
    std::stable_sort(out.beads.begin(), out.beads.end(),
                     [](const DetectedBead& a, const DetectedBead& b) { return a.significance > b.significance; });
    out.haloPeaks = dropHaloPeaks(options, out.beads);
    rejectEdgesAndSaturation(planes, options, out.beads);
    rejectNeighbours(options, out.beads);
    rejectOutliers(options, out.beads);
    return out;
}

Image cropAround(const Image& plane, const DetectedBead& bead, int crop)
{
    Image out(crop, crop, std::nan(""));
    for (int r = 0; r < crop; ++r)
        for (int c = 0; c < crop; ++c) {
            const int rr = bead.row - crop / 2 + r, cc = bead.column - crop / 2 + c;
            if (rr >= 0 && cc >= 0 && rr < plane.height && cc < plane.width)
                out.at(r, c) = plane.at(rr, cc);
        }
    out.source = plane.source + " around (" + std::to_string(bead.column) + ", " + std::to_string(bead.row) + ")";
    return out;
}

} // namespace wfs
