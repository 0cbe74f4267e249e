#pragma once
// Values with units, and the ranges a real instrument's values fall in. The one parser the CLI, the
// desktop program, sidecars and sessions use, with one rule for bare numbers: a number without a unit
// is in SI base units (metres, radians), except a defocus, where a bare non-zero number is refused
// because waves and metres are both common (write "1w" or "0.9um").
//
// Plausible ranges (also in the README): values outside them are refused with a message that gives the
// range and, where a unit was probably left out, the value that was meant ("did you mean 633nm?"). The
// ranges are the instruments' (a pixel pitch is a detector pixel or its image in the sample, at most 1 mm),
// so a bare "0.1" meant as 0.1 um is refused as 0.1 m rather than taken.
#include <optional>
#include <string>

namespace wfs {

struct ValueWithUnit {
    enum class Kind { Bare, Length, Angle, Waves };
    Kind kind = Kind::Bare;
    double value = 0.0; // SI: metres, radians; waves for Kind::Waves; as written for Kind::Bare
};
// "633nm", "0.3 um", "2.4m", "5mas", "0.1arcsec", "-1w", "5e-7"; std::nullopt when the number is
// missing, not finite, or the unit unknown.
std::optional<ValueWithUnit> valueFromText(const std::string& text);
// "633nm", "0.3 um", "2.4m", "5e-7" (bare numbers are metres); std::nullopt if not a length.
std::optional<double> lengthFromText(const std::string& text);
// "0.1arcsec", "5mas", "1e-6rad" (bare numbers are radians); std::nullopt if not an angle.
std::optional<double> angleFromText(const std::string& text);

// The settings with a plausible range.
enum class Setting {
    Wavelength,         // metres: 1 nm .. 1 m
    PixelPitch,         // metres: 1 nm .. 1 mm (a detector pixel, or its image in the sample plane)
    PixelAngle,         // radians: 1e-12 .. 0.1
    FNumber,            // 0.5 .. 10000
    NumericalAperture,  // 0.001 .. 1.7 (and at most the immersion index)
    ImmersionIndex,     // 1 .. 3
    Aperture,           // metres: 0.1 mm .. 1 km
    SamplingQ,          // 0.1 .. 100
    DefocusWaves,       // |W020| <= 1000 waves
    DefocusLength,      // |z| <= 1 m
    ZStep,              // |step| 1 nm .. 10 cm (a focus stage's step; a detector moved in a slow beam)
    ReadNoise,          // counts RMS: 0 .. 1e9
    ZernikeWaves,       // |coefficient| <= 1000 waves (aberrations to inject or to start from)
    Gain,               // electrons per data unit: 1e-3 .. 1e3
    CameraOffset,       // data units: -1e9 .. 1e9
    ObjectDiameter,     // metres: 0 .. 1 mm
    Regularization,     // weight of the zonal terms' smoothness prior: 1e-12 .. 1e12 (positive)
    Bandwidth,          // metres: 0 .. 1 um (and below half the wavelength, checked with it)
    SampleIndex,        // the vectorial model's sample around the emitter: 1 .. 3 (water 1.33)
    CoverslipIndex,     // the vectorial model's coverslip, actual or design: 1 .. 3 (glass 1.52)
    EmitterDepth,       // metres below the coverslip: 0 .. 1 mm
    CoverslipThickness, // metres: 0 .. 2 mm (a #1.5 coverslip is 170 um)
};
const char* settingName(Setting setting); // "wavelength", "pixel pitch", ...
// Whether the setting is a length in metres (wavelength, pixel pitch, aperture, z step, depths, thicknesses...).
bool isLengthSetting(Setting setting);

// A setting's plausible range, in its SI unit (metres, radians) or as a plain number: |v| in [lo, hi] where
// `symmetric`, else v in [lo, hi]; `text` says it in words. Front ends take their controls' bounds from it.
struct PlausibleRange {
    double lo = 0.0, hi = 0.0;
    bool symmetric = false;
    const char* text = "";
};
PlausibleRange plausibleRange(Setting setting);

// Empty when `value` is plausible for `setting`, else a sentence that names the setting and the value
// and gives the range (and a guess at the intended value where one is likely).
std::string plausibilityError(Setting setting, double value);

// What a number written without its unit probably meant, for a length setting: the number in the first of
// the setting's usual units (the wavelength's nm, the pixel pitch's and z step's um, ...) that makes it
// plausible ("0.1um" for a pixel pitch of 0.1); empty when none does or the setting is no length.
std::string likelyMeaning(Setting setting, double bareNumber);

// A value typed into a field of its own for `setting` (the desktop program's): core's parser and plausible
// range, and one rule more for lengths, because a field cannot tell "0.1" meant as um from 0.1 m: a bare
// number other than 0 is questioned, never taken, and the message says what it would be in metres and what
// was likely meant. (The command line and files keep the bare-number-is-SI rule, checked by the ranges.)
struct TypedValue {
    enum class Verdict {
        Empty,      // nothing typed
        Taken,      // a plausible value, with its unit where the setting has one
        Questioned, // a length without a unit: not taken; `message` asks for the unit
        Refused,    // no number, not a length, or implausible: not taken; `message` says why
    };
    Verdict verdict = Verdict::Empty;
    double value = 0.0;  // SI (metres for lengths) when Taken
    std::string message; // names the setting; empty when Taken or Empty
};
TypedValue typedValue(Setting setting, const std::string& text);

} // namespace wfs
