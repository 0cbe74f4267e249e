#pragma once
// What the optics were: the metadata of a data set, with each value's origin. Unset fields are unknown;
// addFiles() (io/Dataset.h) fills them from FITS keywords and JSON sidecars, the user (GUI fields, CLI flags)
// overrides by assigning. isValid() checks the values that are set (their plausible ranges, base/Units.h); whether
// enough is known to fit is the workflow's question (settingsProblems, io/SettingsProblems.h).
#include "settings/SettingsError.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wfs {

// The known diversity of one plane: waves of W020 (W(rho) = W020 rho^2), an axial displacement of the
// detector or sample, or not known (then DatasetMetadata::zStep may supply it, see planeDefocus()).
struct PlaneDefocus {
    enum class Kind { Unknown, Waves, Length };
    Kind kind = Kind::Unknown;
    double value = 0.0; // waves (Kind::Waves) or metres (Kind::Length)
    bool operator==(const PlaneDefocus&) const = default;
};

enum class DefocusModel {
    Paraxial, // phase = k z NA^2 rho^2 / (2 n)
    HighNa,   // phase = k z (n - sqrt(n^2 - NA^2 rho^2)), for microscope objectives
};

// One problem of the metadata values that are set: the setting as the command line spells it, the settings
// that would also settle it, and a whole sentence (with the value's origin).
struct MetadataIssue {
    std::string setting;
    std::vector<std::string> alternatives;
    std::string message;
};

// What the optics were. Unset fields are unknown; addFiles() fills unset fields from FITS keywords and
// JSON sidecars (README "Metadata"), the user (GUI fields, CLI flags) overrides by assigning.
struct DatasetMetadata {
    std::optional<double> wavelength;        // metres
    std::optional<double> pixelPitch;        // metres: detector pitch (with fNumber) or sample-plane pitch (with NA)
    std::optional<double> pixelAngle;        // radians per pixel (with aperture)
    std::optional<double> fNumber;           // Q = lambda F# / pitch
    std::optional<double> numericalAperture; // Q = lambda / (2 NA pitch)
    double immersionIndex = 1.0;             // refractive index of the immersion medium (NA < n)
    std::optional<double> aperture;          // metres, telescope diameter (Q = lambda / (D angle))
    std::optional<double> samplingQ;         // given directly: overrides the quantities above
    // Microscope stacks: plane i (dataset plane index) is at axial position (i - focusPlane) * zStep,
    // used for every plane whose own defocus is unknown.
    std::optional<double> zStep;      // metres
    std::optional<double> focusPlane; // dataset plane index at focus (may be fractional)
    // Which way the plane index runs along +z (README "Conventions"): up (the default) puts plane i at
    // (i - focusPlane) * zStep, down at -(i - focusPlane) * zStep, for stacks recorded the other way.
    bool zIndexDown = false;
    DefocusModel defocusModel = DefocusModel::Paraxial;
    std::string dataUnit;                  // FITS BUNIT: "photons", "counts", "adu", "relative"; empty = counts
    std::optional<double> saturationLevel; // data units; unset = the format's maximum (65535 for 16-bit)
    std::optional<double> readNoise;       // counts RMS (FITS RDNOISE); unset = estimated (ModelSettings::readNoise)
    // The camera's bias in data units, as the file states it (FITS BIAS, a sidecar's "bias"): the Poisson objective
    // removes it where ModelSettings::offset is not given (io/DatasetProblem.h).
    std::optional<double> cameraOffset;
    // Where each value came from, by field name ("wavelength", "pixelPitch", "defocus[3]", ...):
    // "a.fits: keyword WAVELENG", "a.tif.json", "command line", "user". Informational only.
    std::map<std::string, std::string> origin;
    // Values a source gave that could not be used, by field name as in `origin`: "a.fits: keyword WAVELENG = 'abc' is
    // not a number". addFiles() warns; a message that a field is unknown names them (ignoredNote).
    std::map<std::string, std::string> ignored;
    // Values that two sources gave differently (a sidecar's z step and the ImageJ spacing, two files'
    // WAVELENG): the first source's value is kept, and addFiles() warns. A front end asks the user to
    // choose (settingsProblems() lists each as an error) and removes the entry once chosen.
    struct Conflict {
        std::string key;   // field name, as in `origin`
        double kept = 0.0; // the value in the field (SI units)
        std::string keptOrigin;
        double other = 0.0; // the value the later source gave
        std::string otherOrigin;
    };
    std::vector<Conflict> conflicts;

    // Each problem of the values that are set: implausible values (base/Units.h) with their origin, and an NA above
    // the immersion index. Unknown values are not problems here.
    std::vector<MetadataIssue> issues() const;
    bool isValid(std::string* why) const;
};

// A metadata field name (as in `origin`: "pixelPitch") as the command line spells the setting ("pixel-scale");
// other keys unchanged.
std::string metadataSettingName(const std::string& field);

// The data units a data set may declare (FITS BUNIT, --data-unit), in the order front ends list them.
const std::vector<std::string>& dataUnitNames(); // photons, electrons, counts, adu, relative

} // namespace wfs
