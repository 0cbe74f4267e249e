#pragma once
// Values with units, and the ranges a real instrument's values fall in. The one parser the CLI, the
// desktop program, sidecars and sessions use, with one rule for bare numbers: a number without a unit
// is in SI base units (metres, radians), except a defocus, where a bare non-zero number is refused
// because waves and metres are both common (write "1w" or "0.9um").
//
// Plausible ranges (also in the README): values outside them are refused with a message that gives the
// range and, where a unit was probably left out, the value that was meant ("did you mean 633nm?").
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
    PixelPitch,         // metres: 1 nm .. 10 cm
    PixelAngle,         // radians: 1e-12 .. 0.1
    FNumber,            // 0.5 .. 10000
    NumericalAperture,  // 0.001 .. 1.7 (and at most the immersion index)
    ImmersionIndex,     // 1 .. 3
    Aperture,           // metres: 0.1 mm .. 1 km
    SamplingQ,          // 0.1 .. 100
    DefocusWaves,       // |W020| <= 1000 waves
    DefocusLength,      // |z| <= 1 m
    ZStep,              // |step| 1 nm .. 1 m
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

} // namespace wfs
