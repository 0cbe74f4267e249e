#include "io/Assumptions.h"

#include "base/NumberText.h"
#include "io/DatasetProblem.h"
#include "io/Preparation.h"
#include "settings/SettingsText.h"

#include <algorithm>
#include <cmath>

namespace wfs {

using detail::format;

namespace {

constexpr const char* kAssumedPrefix = "assumed: ";

std::string planeList(const std::vector<int>& planes)
{
    std::string text;
    for (int p : planes)
        text += (text.empty() ? "" : ", ") + std::to_string(p);
    return text;
}

// An earlier step's assumption of `key` (the desktop's Load tab), from its origin.
void carryOver(const Dataset& dataset, const std::string& key, const std::string& setting, const std::string& value,
               std::vector<Assumption>& assumptions)
{
    const auto it = dataset.metadata.origin.find(key);
    if (it != dataset.metadata.origin.end() && isAssumedOrigin(it->second))
        assumptions.push_back({setting, value, it->second.substr(std::string(kAssumedPrefix).size())});
}

void assumeForZStack(Dataset& dataset, std::vector<Assumption>& assumptions)
{
    DatasetMetadata& m = dataset.metadata;
    const bool needFocus = !m.focusPlane;
    int usableCount = 0;
    for (const DatasetPlane& p : dataset.planes)
        usableCount += unusablePlaneReason(p.raw.pixels).empty() ? 1 : 0;
    const StackPlanOptions options = planOptionsFor(dataset);
    const bool needPlanes = !dataset.planesChosen && usableCount > options.count;
    if (needFocus || needPlanes) {
        // Every plane that holds data counts, whichever take part: the focus is the stack's brightest plane even when the
        // user chose others to fit.
        const StackPlan plan = proposeStackPlan(stackStatistics(dataset, true), options);
        if (needFocus && plan.focusPlane >= 0) {
            const Assumption focus = focusPlaneAssumption(plan);
            m.focusPlane = plan.focusPlane;
            m.origin["focusPlane"] = assumedOrigin(focus.reason);
            assumptions.push_back(focus);
        }
        if (needPlanes && !plan.planes.empty()) {
            selectPlanes(dataset, plan.planes);
            dataset.planesChosen = false; // still core's proposal: a changed stack gets a new one
            assumptions.push_back({"planes", planeList(plan.planes), plan.spread + "; give --planes to choose others"});
        }
    }
    if (!needFocus && m.focusPlane)
        carryOver(dataset, "focusPlane", "focus-plane", format("%g", *m.focusPlane), assumptions);
    if (dataset.preprocess.centre == CentreMethod::Auto)
        assumptions.push_back({"centre", centreMethodName(effectiveCentre(dataset)),
                               "a z-stack: the stack centred on its peak, so that the light sits on the model grid's centre"});
}

void assumeHotPixelMask(const Dataset& dataset, std::vector<Assumption>& assumptions)
{
    if (dataset.preprocess.maskHotPixels)
        return;
    const bool masked = effectiveHotPixelMask(dataset);
    assumptions.push_back({"hot-pixels", masked ? format("%g", dataset.preprocess.hotPixelSigma) : std::string("off"),
                           masked ? format("the sampling is Q >= %g", kHotPixelSafeSampling) + ", where a PSF has no isolated bright pixel"
                                  : format("the sampling is below Q = %g or unknown", kHotPixelSafeSampling)
                                        + ", where a PSF's core could look like a hot pixel"});
}

} // namespace

std::string assumedOrigin(const std::string& reason)
{
    return kAssumedPrefix + reason;
}

bool isAssumedOrigin(const std::string& origin)
{
    return origin.rfind(kAssumedPrefix, 0) == 0;
}

Assumption focusPlaneAssumption(const StackPlan& plan)
{
    return {"focus-plane", std::to_string(plan.focusPlane), "the brightest plane; no header, sidecar or setting gives the focus plane"};
}

std::optional<Assumption> assumeDefocusModel(Dataset& dataset)
{
    DatasetMetadata& m = dataset.metadata;
    const auto given = m.origin.find("defocusModel");
    if (given != m.origin.end() && !isAssumedOrigin(given->second))
        return std::nullopt; // the user's or a file's
    // Unset or assumed before (the optics may have changed since): decided again.
    bool lengths = false;
    for (int index : usedPlanes(dataset))
        lengths = lengths || planeDefocus(dataset, index).kind == PlaneDefocus::Kind::Length;
    const double ratio = m.numericalAperture ? *m.numericalAperture / m.immersionIndex : 0.0;
    if (!lengths || !(ratio > kHighNaThreshold)) {
        if (given != m.origin.end()) { // an earlier assumption the optics no longer call for
            m.defocusModel = DefocusModel::Paraxial;
            m.origin.erase(given);
        }
        return std::nullopt;
    }
    m.defocusModel = DefocusModel::HighNa;
    const std::string reason =
        format("NA / n = %.2f", ratio) + format(" is above %.2g", kHighNaThreshold) + ", where the paraxial defocus is inaccurate";
    m.origin["defocusModel"] = assumedOrigin(reason);
    return Assumption{"defocus-model", defocusModelName(DefocusModel::HighNa), reason};
}

std::vector<Assumption> assumeUnset(Dataset& dataset)
{
    std::vector<Assumption> assumptions;
    if (isZStack(dataset))
        assumeForZStack(dataset, assumptions);
    if (std::optional<Assumption> model = assumeDefocusModel(dataset))
        assumptions.push_back(std::move(*model));
    assumeHotPixelMask(dataset, assumptions);
    return assumptions;
}

} // namespace wfs
