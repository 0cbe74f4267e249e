#include "io/StackPlan.h"
#include "io/Assumptions.h"
#include "base/NumberText.h"

#include <algorithm>
#include <cmath>

namespace wfs {

using detail::format;

std::vector<PlaneStatistics> stackStatistics(const Dataset& dataset, bool everyPlaneWithData)
{
    Dataset plain;
    plain.planes = dataset.planes;
    if (everyPlaneWithData) {
        const DatasetPlane* first = nullptr;
        for (DatasetPlane& p : plain.planes) {
            p.use = p.raw.width > 0 && unusablePlaneReason(p.raw.pixels).empty();
            first = first ? first : p.use ? &p : nullptr;
            p.use = p.use && p.raw.width == first->raw.width && p.raw.height == first->raw.height;
        }
    }
    plain.metadata.saturationLevel = dataset.metadata.saturationLevel;
    // The defaults (border background, saturation mask, no crop, no centring) measure every plane alike.
    const Preparation prep = computePreparation(plain);
    std::vector<PlaneStatistics> stats;
    for (size_t k = 0; k < dataset.planes.size(); ++k) {
        const PlanePreparation& p = prep.planes[k];
        PlaneStatistics s;
        s.plane = int(k);
        s.usable = plain.planes[k].use;
        s.background = p.background;
        s.noise = p.backgroundSigma;
        s.signal = p.signal;
        const Image& img = p.image;
        auto at = [&](int r, int c) {
            if (r < 0 || c < 0 || r >= img.height || c >= img.width)
                return 0.0;
            const double v = img.pixels[size_t(r) * size_t(img.width) + size_t(c)];
            return std::isfinite(v) ? v : 0.0;
        };
        // The 3 x 3 mean, so that one hot pixel does not make a plane the brightest.
        double peak = 0.0;
        for (int r = 0; r < img.height; ++r)
            for (int c = 0; c < img.width; ++c) {
                double sum = 0.0;
                for (int dr = -1; dr <= 1; ++dr)
                    for (int dc = -1; dc <= 1; ++dc)
                        sum += at(r + dr, c + dc);
                peak = std::max(peak, sum / 9.0);
            }
        s.peak = peak;
        stats.push_back(s);
    }
    return stats;
}

StackPlanOptions planOptionsFor(const Dataset& dataset, int count)
{
    StackPlanOptions o;
    o.count = count;
    // An assumed focus plane is the plan's own (the brightest): derived again, and said as such.
    const auto focusOrigin = dataset.metadata.origin.find("focusPlane");
    if (focusOrigin == dataset.metadata.origin.end() || !isAssumedOrigin(focusOrigin->second))
        o.focusPlane = dataset.metadata.focusPlane;
    o.zStep = dataset.metadata.zStep;
    o.zIndexDown = dataset.metadata.zIndexDown;
    const DatasetMetadata& m = dataset.metadata;
    if (m.wavelength && m.numericalAperture && *m.numericalAperture > 0.0)
        o.depthOfFocus = *m.wavelength * m.immersionIndex / (*m.numericalAperture * *m.numericalAperture);
    return o;
}

StackPlan proposeStackPlan(const std::vector<PlaneStatistics>& statistics, const StackPlanOptions& options)
{
    StackPlan plan;
    // What may be proposed: planes with data whose peak stands out of the noise. (The brightest plane is taken as focus
    // among all usable ones.)
    auto proposable = [&](const PlaneStatistics& s) { return s.usable && !(s.noise > 0.0 && s.peak < kPlaneSignalToNoise * s.noise); };
    std::vector<int> usable;
    for (const PlaneStatistics& s : statistics)
        if (proposable(s))
            usable.push_back(s.plane);
    if (usable.empty()) {
        plan.reason = "no plane holds usable data";
        return plan;
    }
    const int planeCount = int(statistics.size());
    if (options.focusPlane && std::isfinite(*options.focusPlane) && *options.focusPlane >= 0.0 && *options.focusPlane <= planeCount - 1) {
        plan.focusPlane = int(std::lround(*options.focusPlane));
        plan.focusFromMetadata = true;
    } else {
        const auto brightest =
            std::max_element(statistics.begin(), statistics.end(), [](const PlaneStatistics& a, const PlaneStatistics& b) {
                return (a.usable ? a.peak : -1.0) < (b.usable ? b.peak : -1.0);
            });
        plan.focusPlane = brightest->plane;
    }
    const int focus = plan.focusPlane;
    const int wanted = std::max(1, options.count);
    auto isUsable = [&](int index) { return index >= 0 && index < planeCount && proposable(statistics[size_t(index)]); };

    if (int(usable.size()) <= wanted) {
        plan.planes = usable;
        if (!isUsable(focus))
            plan.planes.push_back(focus); // the given focus plane, unusable: still the reference, never fitted
        plan.planes.erase(std::remove_if(plan.planes.begin(), plan.planes.end(), [&](int i) { return !isUsable(i); }), plan.planes.end());
    } else {
        // The widest step at which wanted - 1 further usable planes fit on the two sides, as evenly as the
        // stack's ends allow: the largest diversity the stack offers, in equal steps. Each side that has a
        // usable plane keeps at least one: planes on both sides of focus tell the sign of the defocus.
        auto reachAt = [&](int step, int direction) {
            int n = 0;
            while (isUsable(focus + direction * (n + 1) * step))
                ++n;
            return n;
        };
        const int needBelow = std::min(1, reachAt(1, -1)), needAbove = std::min(1, reachAt(1, +1));
        int widest = std::max(1, (planeCount - 1) / std::max(1, wanted - 1));
        if (options.zStep && options.depthOfFocus && *options.zStep != 0.0) {
            // The smallest step whose outer planes reach +-kPlanSpreadDepths depths of focus.
            const double reach = kPlanSpreadDepths * *options.depthOfFocus / std::abs(*options.zStep);
            const int perSide = std::max(1, (wanted - 1) / 2);
            widest = std::clamp(int(std::ceil(reach / perSide - 1e-9)), 1, widest);
        }
        for (int step = widest; step >= 1 && plan.planes.empty(); --step) {
            const int below = reachAt(step, -1), above = reachAt(step, +1);
            const int others = wanted - (isUsable(focus) ? 1 : 0);
            if (below + above < others || (others >= 2 && (below < needBelow || above < needAbove)))
                continue;
            int takeBelow = std::min(below, others / 2), takeAbove = std::min(above, others - takeBelow);
            takeBelow = others - takeAbove; // what one side lacks, the other gives
            std::vector<int> chosen;
            for (int k = takeBelow; k >= 1; --k)
                chosen.push_back(focus - k * step);
            if (isUsable(focus))
                chosen.push_back(focus);
            for (int k = 1; k <= takeAbove; ++k)
                chosen.push_back(focus + k * step);
            plan.planes = chosen;
        }
    }
    const double direction = options.zIndexDown ? -1.0 : 1.0;
    for (int index : plan.planes) {
        plan.offsetSteps.push_back(int(direction) * (index - focus));
        if (options.zStep)
            plan.zOffsets.push_back(direction * (index - focus) * *options.zStep);
    }
    const std::string focusText = plan.focusFromMetadata ? "plane " + std::to_string(focus) + " is at focus (from the metadata)"
                                                         : "plane " + std::to_string(focus) + " is the brightest and is taken as focus";
    if (plan.planes.size() > 1) {
        const int step = std::abs(plan.planes[1] - plan.planes[0]);
        plan.spread = std::to_string(plan.planes.size()) + " of " + std::to_string(planeCount) + " planes, every " + std::to_string(step)
                      + (step == 1 ? " plane" : " planes")
                      + (options.zStep ? " (" + format("%.4g", step * std::abs(*options.zStep) * 1e6) + " um)" : std::string());
    }
    if (options.depthOfFocus && options.zStep && plan.planes.size() > 1)
        plan.spread += format(", to +-%.2g depths of focus",
                              (plan.planes.back() - plan.planes.front()) / 2.0 * std::abs(*options.zStep) / *options.depthOfFocus)
                       + format(" (%.3g um each)", *options.depthOfFocus * 1e6);
    plan.reason = focusText + (plan.spread.empty() ? std::string() : "; " + plan.spread);
    return plan;
}

void applyStackPlan(Dataset& dataset, const StackPlan& plan)
{
    if (plan.planes.empty())
        return;
    selectPlanes(dataset, plan.planes);
    if (!dataset.metadata.focusPlane && plan.focusPlane >= 0) {
        dataset.metadata.focusPlane = plan.focusPlane;
        dataset.metadata.origin["focusPlane"] = assumedOrigin(focusPlaneAssumption(plan).reason);
    }
}

} // namespace wfs
