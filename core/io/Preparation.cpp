// Preparation of a dataset's planes (io/Dataset.h: computePreparation, prepare, isPrepared): masks
// (non-finite, saturated, hot and listed bad pixels), the sigma-clipped border background, centring on
// the peak or centroid, cropping and normalisation, recorded so that a session can say what was done.
#include "io/DatasetPlanes.h"
#include "io/Preparation.h"
#include "io/DatasetProblem.h"
#include "base/NumberText.h"

#include "fit/ImageStatistics.h"
#include "optics/Sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>

namespace wfs {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using detail::format;

} // namespace

namespace {

// The read noise of photon-counting data from the border, squared: for neighbours a and b with the same
// mean m, E[(a - b)^2 / 2] = m + read^2 and E[(a + b) / 2] = m, so the mean of the difference of the two
// is read^2 whatever light (PSF wings) lies on the border, where the border's plain variance would count
// the wings' slope as noise. Pairs with a jump above 5 sigma (hot pixels, cosmic rays) are left out.
double borderReadNoiseSquared(const Image& img, const std::vector<uint8_t>& mask, int border, const RobustStats& stats)
{
    double sum = 0.0;
    size_t pairs = 0;
    const double jump = 5.0 * std::sqrt(2.0) * stats.sigma;
    for (int r = 0; r < img.height; ++r)
        for (int c = 0; c + 1 < img.width; ++c) {
            const bool inFrame = r < border || r >= img.height - border || c < border || c + 1 >= img.width - border;
            const size_t i = size_t(r) * size_t(img.width) + size_t(c);
            if (!inFrame || !mask[i] || !mask[i + 1])
                continue;
            const double a = img.pixels[i], b = img.pixels[i + 1];
            if (!(std::abs(a - b) <= jump))
                continue;
            sum += 0.5 * (a - b) * (a - b) - 0.5 * (a + b);
            ++pairs;
        }
    return pairs > 0 ? sum / double(pairs) : 0.0;
}

struct PlaneStats {
    std::vector<uint8_t> rawMask; // raw layout: 1 used
    RobustStats border;
    double readNoiseSquared = 0.0; // raw units squared, one count per photon (see borderReadNoiseSquared)
    int saturated = 0, bad = 0;
};

PlaneStats planeStats(const DatasetPlane& plane, const PreprocessOptions& o, std::optional<double> saturation, bool& saturationPresent)
{
    const Image& img = plane.raw;
    PlaneStats s;
    s.rawMask.assign(img.pixels.size(), 1);
    for (size_t i = 0; i < img.pixels.size(); ++i)
        if (!std::isfinite(img.pixels[i])) {
            s.rawMask[i] = 0;
            ++s.bad;
        }
    for (const auto& [col, row] : o.badPixels)
        if (col >= 0 && row >= 0 && col < img.width && row < img.height) {
            uint8_t& m = s.rawMask[size_t(row) * size_t(img.width) + size_t(col)];
            if (m) {
                m = 0;
                ++s.bad;
            }
        }
    const double level = saturation ? *saturation : plane.formatMaximum;
    saturationPresent = false;
    if (level > 0.0) {
        for (size_t i = 0; i < img.pixels.size(); ++i)
            if (s.rawMask[i] && img.pixels[i] >= level) {
                saturationPresent = true;
                if (o.maskSaturated) {
                    s.rawMask[i] = 0;
                    ++s.saturated;
                }
            }
    }
    const int border = o.borderWidth > 0 ? o.borderWidth : std::max(2, std::min(img.width, img.height) / 16);
    std::vector<double> frame; // sized once: grown by doubling it would hold twice a large image's frame
    frame.reserve(img.pixels.size() - size_t(std::max(0, img.width - 2 * border)) * size_t(std::max(0, img.height - 2 * border)));
    for (int r = 0; r < img.height; ++r)
        for (int c = 0; c < img.width; ++c)
            if ((r < border || r >= img.height - border || c < border || c >= img.width - border)
                && s.rawMask[size_t(r) * size_t(img.width) + size_t(c)])
                frame.push_back(img.at(r, c));
    s.border = sigmaClipped(std::move(frame), o.clipSigma > 0.0 ? o.clipSigma : 3.0);
    s.readNoiseSquared = borderReadNoiseSquared(img, s.rawMask, border, s.border);
    if (o.maskHotPixels.value_or(false) && s.border.sigma > 0.0) {
        const double b = s.border.mean;
        std::vector<size_t> hot;
        for (int r = 0; r < img.height; ++r)
            for (int c = 0; c < img.width; ++c) {
                const size_t i = size_t(r) * size_t(img.width) + size_t(c);
                if (!s.rawMask[i])
                    continue;
                double brightest = -std::numeric_limits<double>::infinity();
                for (int dr = -1; dr <= 1; ++dr)
                    for (int dc = -1; dc <= 1; ++dc) {
                        const int rr = r + dr, cc = c + dc;
                        if ((dr || dc) && rr >= 0 && cc >= 0 && rr < img.height && cc < img.width && std::isfinite(img.at(rr, cc)))
                            brightest = std::max(brightest, img.at(rr, cc));
                    }
                const double v = img.pixels[i];
                if (std::isfinite(brightest) && v - brightest > o.hotPixelSigma * s.border.sigma
                    && v - b > o.hotPixelRatio * std::max(brightest - b, 0.0))
                    hot.push_back(i);
            }
        for (size_t i : hot) {
            s.rawMask[i] = 0;
            ++s.bad;
        }
    }
    return s;
}

WorkImage workImage(const DatasetPlane& plane, const PlaneStats& s, double background)
{
    WorkImage w;
    w.width = plane.raw.width;
    w.height = plane.raw.height;
    w.v.assign(plane.raw.pixels.size(), 0.0);
    for (size_t i = 0; i < w.v.size(); ++i)
        if (s.rawMask[i])
            w.v[i] = plane.raw.pixels[i] - background;
    return w;
}

std::pair<double, double> findCentre(const WorkImage& w, CentreMethod method, int cropSize)
{
    switch (method) {
    case CentreMethod::Peak:
        return peakOf(w);
    case CentreMethod::Centroid:
        return centroidOf(w, std::max(3, (cropSize > 0 ? cropSize : std::min(w.width, w.height)) / 4));
    case CentreMethod::Auto: // resolved by effectiveCentre before any plane is prepared
    case CentreMethod::None:
        break;
    }
    return {w.width / 2, w.height / 2};
}

using Warn = std::function<void(const DatasetPlane&, const std::string&)>;

// The crop size to use (0 = none) and the options planeStats uses; an odd crop, a crop larger than
// the images or a border wider than half of them are reported and replaced by what works.
int checkWindow(const Dataset& dataset, PreprocessOptions& effective, std::vector<DatasetMessage>& messages)
{
    const PreprocessOptions& o = dataset.preprocess;
    if (o.cropSize < 0 || o.cropSize % 2 != 0)
        messages.push_back({MessageLevel::Warning,
                            {},
                            "crop size " + std::to_string(o.cropSize) + " is not a positive even number; "
                                + (o.cropSize > 0 ? "using " + std::to_string(o.cropSize + 1) : std::string("no crop"))});
    int cropSize = o.cropSize > 0 ? o.cropSize + o.cropSize % 2 : 0;
    // A window larger than the images holds only padding, and its buffers are allocated per plane: an
    // absurd crop (16384 on 64 x 64) is refused before any allocation instead of exhausting memory.
    int largest = 0;
    for (const DatasetPlane& plane : dataset.planes)
        largest = std::max({largest, plane.raw.width + plane.raw.width % 2, plane.raw.height + plane.raw.height % 2});
    int smallest = 0;
    for (const DatasetPlane& plane : dataset.planes)
        smallest = smallest == 0 ? std::min(plane.raw.width, plane.raw.height) : std::min({smallest, plane.raw.width, plane.raw.height});
    if (o.borderWidth > 0 && smallest > 0 && 2 * o.borderWidth >= smallest) {
        // A frame as wide as half the image leaves no inside: the "background" would be the PSF itself.
        messages.push_back({MessageLevel::Error,
                            {},
                            "the border (" + std::to_string(o.borderWidth) + " pixels) leaves nothing inside images of "
                                + std::to_string(smallest) + " pixels across; use a border of at most "
                                + std::to_string(std::max(1, (smallest - 1) / 2))});
        effective.borderWidth = 0;
    }
    if (cropSize > largest && largest > 0) {
        messages.push_back({MessageLevel::Error,
                            {},
                            "the crop (" + std::to_string(cropSize) + " x " + std::to_string(cropSize)
                                + ") is larger than the images (at most " + std::to_string(largest)
                                + " pixels across); use a crop of at most " + std::to_string(largest)});
        cropSize = 0;
    }
    return cropSize;
}

// A common centre: on the sum of the planes that take part (all of the first plane's size); none when
// each plane is centred on its own or the planes differ in size.
std::optional<std::pair<double, double>> commonCentre(const Dataset& dataset, const PreprocessOptions& o,
                                                      const std::vector<PlaneStats>& stats, int cropSize,
                                                      std::vector<DatasetMessage>& messages)
{
    if (o.centre == CentreMethod::None || o.centreEachPlane)
        return std::nullopt;
    WorkImage sum;
    bool ok = false;
    for (size_t k = 0; k < dataset.planes.size(); ++k) {
        const DatasetPlane& plane = dataset.planes[k];
        if (!plane.use)
            continue;
        const WorkImage w = workImage(plane, stats[k], o.subtractBackground ? stats[k].border.mean : 0.0);
        if (!ok) {
            sum = w;
            ok = true;
        } else if (w.width == sum.width && w.height == sum.height) {
            for (size_t i = 0; i < w.v.size(); ++i)
                sum.v[i] += w.v[i];
        } else {
            messages.push_back({MessageLevel::Warning, {}, "the planes that take part differ in size: each is centred on its own"});
            return std::nullopt;
        }
    }
    if (!ok)
        return std::nullopt;
    return findCentre(sum, o.centre, cropSize);
}

// Copies the window of the raw plane around p's crop origin into p.image and p.mask, background
// subtracted; returns the number of window pixels outside the raw image and the sum of those inside.
std::pair<int, double> cutWindow(const Image& raw, const PlaneStats& s, int outW, int outH, PlanePreparation& p)
{
    p.image = Image(outW, outH, kNaN);
    p.image.source = raw.source;
    p.mask.assign(size_t(outW) * size_t(outH), 0);
    int outside = 0;
    double sum = 0.0;
    for (int r = 0; r < outH; ++r)
        for (int c = 0; c < outW; ++c) {
            const int rr = r + p.cropRow, cc = c + p.cropColumn;
            if (rr < 0 || cc < 0 || rr >= raw.height || cc >= raw.width) {
                ++outside;
                continue;
            }
            const size_t i = size_t(rr) * size_t(raw.width) + size_t(cc);
            if (!s.rawMask[i])
                continue;
            const double v = raw.pixels[i] - p.background;
            p.image.at(r, c) = v;
            p.mask[size_t(r) * size_t(outW) + size_t(c)] = 1;
            sum += v;
        }
    return {outside, sum};
}

// Sets p.signal and p.clipped (light at the window's edge: the brightest smoothed pixel of the outer
// two rows and columns above 2 % of the peak and above the noise); returns the smoothed peak and edge.
std::pair<double, double> measureSignal(const PlaneStats& s, PlanePreparation& p)
{
    const int outW = p.image.width, outH = p.image.height;
    p.signal = 0.0;
    WorkImage out;
    out.width = outW;
    out.height = outH;
    out.v.assign(p.image.pixels.size(), 0.0);
    for (size_t i = 0; i < p.image.pixels.size(); ++i)
        if (p.mask[i]) {
            p.signal += p.image.pixels[i];
            out.v[i] = p.image.pixels[i];
        }
    double peak = 0.0, edge = 0.0;
    for (int r = 0; r < outH; ++r)
        for (int c = 0; c < outW; ++c) {
            const double v = out.box(r, c);
            peak = std::max(peak, v);
            if (r < 2 || c < 2 || r >= outH - 2 || c >= outW - 2)
                edge = std::max(edge, v);
        }
    const double noise = s.border.sigma * p.scale;
    p.clipped = peak > 0.0 && edge > std::max(0.02 * peak, 5.0 * noise / 3.0);
    return {peak, edge};
}

// One plane: background, centre, window, normalisation and the checks on what is left.
PlanePreparation preparePlane(const DatasetPlane& plane, const PlaneStats& s, const PreprocessOptions& o, int cropSize,
                              const std::optional<std::pair<double, double>>& common, const Warn& warn)
{
    const Image& raw = plane.raw;
    PlanePreparation p;
    p.saturatedPixels = s.saturated;
    p.badPixels = s.bad;
    p.backgroundSigma = s.border.sigma;
    p.readNoiseSquared = s.readNoiseSquared;
    p.background = o.subtractBackground ? s.border.mean : 0.0;
    if (o.subtractBackground && s.border.count == 0 && plane.use)
        warn(plane, "no usable border pixels: background not estimated");
    // Without centring the window sits on the image's centre: no background-subtracted copy of the whole
    // plane is made (for a large image with a small crop it would double the memory, issue 28 item 12).
    const std::pair<double, double> centre = o.centre == CentreMethod::None ? std::pair<double, double>(raw.width / 2, raw.height / 2)
                                             : common                       ? *common
                                                      : findCentre(workImage(plane, s, p.background), o.centre, cropSize);
    p.centreX = centre.first;
    p.centreY = centre.second;

    // The window: cropSize, or (centring without crop) the image size rounded up to even; the
    // PSF centre lands on the window's pixel (size / 2, size / 2), the model grid's centre.
    int outW = raw.width, outH = raw.height;
    if (cropSize > 0) {
        outW = outH = cropSize;
    } else if (o.centre != CentreMethod::None) {
        outW += outW % 2;
        outH += outH % 2;
    }
    if (cropSize > 0 || o.centre != CentreMethod::None) {
        p.cropColumn = int(std::lround(centre.first)) - outW / 2;
        p.cropRow = int(std::lround(centre.second)) - outH / 2;
    }
    const auto [outside, sum] = cutWindow(raw, s, outW, outH, p);
    if (outside > 0 && plane.use)
        warn(plane, "the " + std::to_string(outW) + " x " + std::to_string(outH) + " window around the centre ("
                        + format("%.1f", centre.first) + ", " + format("%.1f", centre.second) + ") extends beyond the image; "
                        + std::to_string(outside) + " pixels outside it are masked");
    if (o.normalise) {
        if (sum > 0.0) {
            p.scale = 1.0 / sum;
            for (double& v : p.image.pixels)
                if (std::isfinite(v))
                    v *= p.scale;
        } else if (plane.use) {
            warn(plane, "no positive signal after background subtraction: not normalised");
        }
    }
    const auto [peak, edge] = measureSignal(s, p);
    if (p.clipped && plane.use)
        warn(plane, "the PSF reaches the edge of the " + std::string(cropSize > 0 ? "crop" : "image") + " ("
                        + format("%.1f", 100.0 * edge / peak)
                        + " % of the peak there): light outside is lost to the fit; use a larger crop or grid");
    if (plane.use && !(peak > 0.0))
        warn(plane, "no signal above the background");
    return p;
}

} // namespace

bool effectiveHotPixelMask(const Dataset& dataset)
{
    if (dataset.preprocess.maskHotPixels)
        return *dataset.preprocess.maskHotPixels;
    try {
        return samplingReaches(samplingFromMetadata(dataset.metadata), kHotPixelSafeSampling);
    } catch (const DatasetError&) {
        return false; // sampling unknown: an undersampled PSF's core would look like a hot pixel
    }
}

CentreMethod effectiveCentre(const Dataset& dataset)
{
    if (dataset.preprocess.centre != CentreMethod::Auto)
        return dataset.preprocess.centre;
    // A measured z-stack sits wherever the bead was: centring on the peak puts its light on the model grid's centre,
    // where the fitted tip and tilt stay small. Other data (simulations, a camera's defocused pairs) are kept as made.
    return isZStack(dataset) ? CentreMethod::Peak : CentreMethod::None;
}

Preparation computePreparation(const Dataset& dataset)
{
    PreprocessOptions o = dataset.preprocess;
    o.centre = effectiveCentre(dataset);
    Preparation result;
    result.options = dataset.preprocess;
    result.centre = o.centre;
    result.saturationLevel = dataset.metadata.saturationLevel;
    const Warn warn = [&](const DatasetPlane& plane, const std::string& text) {
        result.messages.push_back({MessageLevel::Warning, dataset.files.empty() ? std::string() : dataset.files[size_t(plane.file)].path,
                                   plane.raw.source + ": " + text});
    };
    PreprocessOptions effective = o; // what planeStats uses
    effective.maskHotPixels = result.hotPixelMask = effectiveHotPixelMask(dataset);
    const int cropSize = checkWindow(dataset, effective, result.messages);

    std::vector<PlaneStats> stats(dataset.planes.size());
    for (size_t k = 0; k < dataset.planes.size(); ++k) {
        const DatasetPlane& plane = dataset.planes[k];
        bool saturationPresent = false;
        stats[k] = planeStats(plane, effective, dataset.metadata.saturationLevel, saturationPresent);
        if (plane.use && saturationPresent && !o.maskSaturated)
            warn(plane, "pixels at the saturation level are not masked; the fit will be biased (enable saturation masking)");
        if (plane.use && stats[k].saturated > 0)
            warn(plane, std::to_string(stats[k].saturated) + " saturated pixel(s) masked");
    }
    const auto common = commonCentre(dataset, o, stats, cropSize, result.messages);
    result.planes.reserve(dataset.planes.size());
    for (size_t k = 0; k < dataset.planes.size(); ++k)
        result.planes.push_back(preparePlane(dataset.planes[k], stats[k], o, cropSize, common, warn));
    return result;
}

std::vector<DatasetMessage> prepare(Dataset& dataset)
{
    dataset.preparation = computePreparation(dataset);
    return dataset.preparation->messages;
}

bool isPrepared(const Dataset& dataset)
{
    return dataset.preparation && dataset.preparation->options == dataset.preprocess
           && dataset.preparation->saturationLevel == dataset.metadata.saturationLevel
           && dataset.preparation->planes.size() == dataset.planes.size() && dataset.preparation->centre == effectiveCentre(dataset)
           && dataset.preparation->hotPixelMask == effectiveHotPixelMask(dataset);
}

} // namespace wfs
