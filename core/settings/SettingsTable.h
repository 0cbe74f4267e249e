#pragma once
// One description per setting, the one place a setting is declared: its name (the command line's flag without
// the dashes; the Python module's keyword argument with '_' for '-'), its session-file keys, the settings
// struct field it fills, its help text with the default read from that struct, its unit, its range, and
// whether a batch manifest may give it per input. Generated from it: wavefront-cli's flags and help
// (io/SettingOptions.h, optionHelp), the Python module's keyword arguments and docstring, the batch manifest's
// override columns (engine/Batch.h), the session keys that session-file messages name (io/Session.cpp).
// Checked against it by tests/core/settings/tst_settingstable.cpp and tests/app/tst_clitable.cpp: every session key
// written round-trips, every flag is in --help with its default, every range is the one the checks apply.
//
// Each session key carries its field's typed accessor (settings/SettingAccess.h): the session file is read and
// written through them (io/Session.cpp), so a key, its field and its type are written once, here.
//
// A new setting: a field in its struct (settings/*.h), an entry here, and its parse in io/SettingOptions.cpp;
// the tests name whichever is missing.
//
//   findSetting("order")->sessionKeys[0].name -> "model.order"
//   settingHelp(*findSetting("order"), {})   -> "Highest Zernike radial order, 1..15 (default 4)."
#include "base/Units.h"
#include "settings/SettingAccess.h"
#include "settings/MetadataSettings.h"
#include "settings/ModelSettings.h"
#include "settings/PreparationSettings.h"
#include "settings/SolverSettings.h"

#include <QString>

#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace wfs {

// Which of the command line's option lists a setting is listed in (its help's group; the field says which
// struct it fills: z-direction is listed with the model but is the metadata's).
enum class SettingGroup { Metadata, Preparation, Model, Solver };

// The values a setting accepts, as the checks apply them (ModelSettings::firstError, the option parsers).
struct SettingRange {
    enum class Kind {
        None,      // said in words in the help (a sign, an even size), or a word list (settings/SettingsText.h)
        Plausible, // base/Units.h's plausibleRange(plausible), in the setting's SI unit
        Closed,    // lo..hi inclusive (whole numbers for integer settings)
    };
    Kind kind = Kind::None;
    Setting plausible = Setting::Wavelength;
    double lo = 0.0, hi = 0.0;
};

// The defaults a help text states: the structs' own unless a front end shows others (bench's solver), and notes
// added to some defaults ("--preset demo 64, oof 128"), by setting name.
struct SettingDefaults : SettingsBundle {
    std::map<std::string, QString> notes;
};

// One key of a session file and the field it holds; keys without an accessor (per-plane values, the bad-pixel
// list) are read and written by io/Session.cpp itself.
struct SessionKey {
    const char* name = nullptr;
    SettingAccess access;
    SessionKey() = default;
    SessionKey(const char* keyName, SettingAccess keyAccess = {})
        : name(keyName)
        , access(keyAccess)
    {
    }
};

struct SettingDescription {
    const char* name; // the flag without dashes ("pixel-scale"); SettingsError::setting() uses the same
    SettingGroup group;
    bool isOption; // false: kept in session files only (no flag, no keyword argument)
    // The session file's keys ("model.order"); the first is the one messages name. Per-plane settings are
    // under "planes[]". Empty entries have no name.
    std::array<SessionKey, 3> sessionKeys;
    const char* field;     // "ModelSettings::order": the struct member it fills
    const char* valueName; // the flag's value in --help ("length"); nullptr: a switch (given or not)
    const char* unit;      // the stored value's unit: "m", "rad", "waves", or "" for plain numbers and words
    SettingRange range;
    // The help text; "{default}" stands for defaultText's value, "{range}" for a closed range ("1..15").
    const char* help;
    QString (*defaultText)(const SettingDefaults&); // nullptr: the help says the default in words
    // A valid value other than the default (the tests' round trip): the option's text, or for a setting that is
    // not an option, its session JSON. A switch's is "".
    const char* example;
    // A preset's run takes it over the preset's own setting (a simulated session, io/SimulatedSource.h); the other
    // metadata, preparation and model options describe files, whose data and optics a preset brings itself.
    bool withPreset = false;
    int manifestColumn = 0; // 1, 2, ...: a batch manifest column that overrides it per input, in this order
};

// Every setting, in the order the command line lists them within each group.
const std::vector<SettingDescription>& settingsTable();
// By name (the flag without dashes); nullptr when there is none.
const SettingDescription* findSetting(std::string_view name);
// The help text with the default (from `defaults`), the range and any note for it.
QString settingHelp(const SettingDescription& setting, const SettingDefaults& defaults);
// The session file's key for a setting as SettingsError names it ("spectral-samples" -> "model.spectral_samples");
// the name itself when the table has no key for it.
std::string settingSessionKey(const std::string& name);
// A value outside the closed range the table states for the setting `name` (its only statement: the checks of
// settings/*.h call this), as a SettingsError naming it; nullopt inside, or for a setting without a closed range.
std::optional<SettingsError> closedRangeError(std::string_view name, double value);
// The batch manifest's override columns, in their order (engine/Batch.h).
std::vector<std::string> manifestColumns();

} // namespace wfs
