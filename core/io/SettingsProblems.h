#pragma once
// Everything that stops a session from being fitted, listed at once. The workflow (engine/Workflow.h)
// throws on the first problem it meets, which suits a command line; a front end that wants to show the
// user every missing or invalid setting in one place, beside its field, asks settingsProblems() instead.
// Both use the same checks (validateMetadata, checkSettings and its parts, the sampling), so a session
// without Error problems passes the workflow's settings checks (the data may still fail to fit: an empty
// plane, a gain photon transfer cannot estimate).
#include "io/Session.h"

#include <string>
#include <vector>

namespace wfs {

struct SettingProblem {
    // The setting concerned, as the command line spells it: "wavelength", "pixel-scale", "na", "f-number",
    // "immersion", "sampling", "aperture", "z-step", "focus-plane", "defocus-model", "defocus" (with
    // `plane`), "planes", "grid", "crop", "order", "stages", "read-noise", "gain", ... (SettingsError::setting()).
    std::string setting;
    int plane = -1;                           // the dataset plane concerned ("defocus"), else -1
    std::vector<std::string> alternatives;    // settings that would also settle it ("f-number" for a missing NA)
    MessageLevel level = MessageLevel::Error; // Error: the fit cannot start; Warning: it can, but check
    std::string message;                      // a whole sentence with a typical value
};

// Every problem of the session's data selection, metadata (missing, implausible, contradicting), model and
// solver settings, errors first. Cheap (no preparation): a front end may call it on every edit.
std::vector<SettingProblem> settingsProblems(const Session& session);

// Each problem of the metadata values that are set: implausible values (base/Units.h) with their origin, and
// an NA above the immersion index. validateMetadata() throws the first of them.
std::vector<SettingProblem> metadataProblems(const DatasetMetadata& metadata);

// A metadata value (DatasetMetadata's field name as in `origin`) in the unit people write it in: "633 nm", "6.5 um", "0.1 arcsec".
std::string metadataValueText(const std::string& key, double value);

// Whether any problem is an Error.
bool hasErrors(const std::vector<SettingProblem>& problems);

} // namespace wfs
