#pragma once
// A value a run assumed where neither the user nor the files gave one (io/Assumptions.h decides them): which setting,
// the value taken and why. It travels with the result (FitResult::assumptions), so that the report, the result JSON,
// batch's and live mode's logs and the desktop program all say the same.
#include <string>

namespace wfs {

struct Assumption {
    std::string setting; // as the command line spells it: "focus-plane", "planes", "defocus-model", "centre", ...
    std::string value;   // as shown: "10", "4, 7, 10, 13, 16", "high-na", "peak"
    std::string reason;  // why, a phrase: "the brightest plane; no header gives the focus plane"
    bool operator==(const Assumption&) const = default;
};

// "focus-plane 10 (assumed: the brightest plane; no header gives the focus plane)"
inline std::string assumptionText(const Assumption& a)
{
    return a.setting + " " + a.value + " (assumed: " + a.reason + ")";
}

} // namespace wfs
