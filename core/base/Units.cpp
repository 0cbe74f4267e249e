#include "base/Units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace wfs {

namespace {

// Splits "633 nm" into 633 and "nm" (lower case, blanks removed); false when there is no finite number first.
bool splitNumber(const std::string& text, double& value, std::string& unit)
{
    const char* begin = text.c_str();
    while (std::isspace(static_cast<unsigned char>(*begin)))
        ++begin;
    char* end = nullptr;
    value = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(value))
        return false;
    // Decimal numbers only: strtod also reads hexadecimal ("0x10" would be 16, "0x1p3" 8).
    if (!std::all_of(begin, static_cast<const char*>(end),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || std::strchr("+-.eE", c); }))
        return false;
    std::string rest(end);
    rest.erase(std::remove_if(rest.begin(), rest.end(), [](unsigned char c) { return std::isspace(c); }), rest.end());
    std::transform(rest.begin(), rest.end(), rest.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    unit = rest;
    return true;
}

std::string number(double v)
{
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

} // namespace

std::optional<ValueWithUnit> valueFromText(const std::string& text)
{
    double v = 0;
    std::string unit;
    if (!splitNumber(text, v, unit))
        return std::nullopt;
    using Kind = ValueWithUnit::Kind;
    constexpr double arcsec = M_PI / (180.0 * 3600.0);
    if (unit.empty())
        return ValueWithUnit{Kind::Bare, v};
    if (unit == "m")
        return ValueWithUnit{Kind::Length, v};
    if (unit == "cm")
        return ValueWithUnit{Kind::Length, v * 1e-2};
    if (unit == "mm")
        return ValueWithUnit{Kind::Length, v * 1e-3};
    if (unit == "um" || unit == "\xc2\xb5m" || unit == "micron" || unit == "microns")
        return ValueWithUnit{Kind::Length, v * 1e-6};
    if (unit == "nm")
        return ValueWithUnit{Kind::Length, v * 1e-9};
    if (unit == "rad")
        return ValueWithUnit{Kind::Angle, v};
    if (unit == "arcsec" || unit == "as")
        return ValueWithUnit{Kind::Angle, v * arcsec};
    if (unit == "mas")
        return ValueWithUnit{Kind::Angle, v * arcsec * 1e-3};
    if (unit == "deg")
        return ValueWithUnit{Kind::Angle, v * M_PI / 180.0};
    if (unit == "w" || unit == "wave" || unit == "waves")
        return ValueWithUnit{Kind::Waves, v};
    return std::nullopt;
}

std::optional<double> lengthFromText(const std::string& text)
{
    const auto v = valueFromText(text);
    if (!v || (v->kind != ValueWithUnit::Kind::Length && v->kind != ValueWithUnit::Kind::Bare))
        return std::nullopt;
    return v->value; // a bare number is metres
}

std::optional<double> angleFromText(const std::string& text)
{
    const auto v = valueFromText(text);
    if (!v || (v->kind != ValueWithUnit::Kind::Angle && v->kind != ValueWithUnit::Kind::Bare))
        return std::nullopt;
    return v->value; // a bare number is radians
}

bool isLengthSetting(Setting setting)
{
    switch (setting) {
    case Setting::Wavelength:
    case Setting::PixelPitch:
    case Setting::Aperture:
    case Setting::DefocusLength:
    case Setting::ZStep:
    case Setting::ObjectDiameter:
    case Setting::Bandwidth:
    case Setting::EmitterDepth:
    case Setting::CoverslipThickness:
        return true;
    default:
        return false;
    }
}

const char* settingName(Setting setting)
{
    switch (setting) {
    case Setting::Wavelength:
        return "wavelength";
    case Setting::PixelPitch:
        return "pixel pitch";
    case Setting::PixelAngle:
        return "pixel angle";
    case Setting::FNumber:
        return "f-number";
    case Setting::NumericalAperture:
        return "numerical aperture";
    case Setting::ImmersionIndex:
        return "immersion index";
    case Setting::Aperture:
        return "aperture";
    case Setting::SamplingQ:
        return "sampling Q";
    case Setting::DefocusWaves:
        return "defocus";
    case Setting::DefocusLength:
        return "defocus";
    case Setting::ZStep:
        return "z step";
    case Setting::ReadNoise:
        return "read noise";
    case Setting::ZernikeWaves:
        return "Zernike coefficient";
    case Setting::Gain:
        return "camera gain";
    case Setting::CameraOffset:
        return "camera offset";
    case Setting::ObjectDiameter:
        return "object diameter";
    case Setting::Regularization:
        return "regularisation weight";
    case Setting::Bandwidth:
        return "bandwidth";
    case Setting::SampleIndex:
        return "sample index";
    case Setting::CoverslipIndex:
        return "coverslip index";
    case Setting::EmitterDepth:
        return "emitter depth";
    case Setting::CoverslipThickness:
        return "coverslip thickness";
    }
    return "value";
}

PlausibleRange plausibleRange(Setting setting)
{
    PlausibleRange r;
    switch (setting) {
    case Setting::Wavelength:
        r = {1e-9, 1.0, false, "from 1 nm to 1 m"};
        break;
    case Setting::PixelPitch:
        r = {1e-9, 1e-3, false, "from 1 nm to 1 mm, a detector pixel or its image in the sample plane"};
        break;
    case Setting::PixelAngle:
        r = {1e-12, 0.1, false, "from 1e-12 to 0.1 rad (0.2 uas to 5.7 deg)"};
        break;
    case Setting::FNumber:
        r = {0.5, 1e4, false, "from 0.5 to 10000"};
        break;
    case Setting::NumericalAperture:
        r = {1e-3, 1.7, false, "from 0.001 to 1.7"};
        break;
    case Setting::ImmersionIndex:
        r = {1.0, 3.0, false, "from 1 to 3"};
        break;
    case Setting::Aperture:
        r = {1e-4, 1e3, false, "from 0.1 mm to 1 km"};
        break;
    case Setting::SamplingQ:
        r = {0.1, 100.0, false, "from 0.1 to 100"};
        break;
    case Setting::DefocusWaves:
        r = {0.0, 1e3, true, "at most 1000 waves of W020 either way"};
        break;
    case Setting::DefocusLength:
        r = {0.0, 1.0, true, "at most 1 m either way"};
        break;
    case Setting::ZStep:
        r = {1e-9, 0.1, true, "from 1 nm to 10 cm (either sign)"};
        break;
    case Setting::ReadNoise:
        r = {0.0, 1e9, false, "from 0 to 1e9 counts RMS"};
        break;
    case Setting::ZernikeWaves:
        r = {0.0, 1e3, true, "at most 1000 waves either way"};
        break;
    case Setting::Gain:
        r = {1e-3, 1e3, false, "from 0.001 to 1000 electrons per data unit"};
        break;
    case Setting::CameraOffset:
        r = {0.0, 1e9, true, "at most 1e9 data units either way"};
        break;
    case Setting::ObjectDiameter:
        r = {0.0, 1e-3, false, "from 0 to 1 mm"};
        break;
    case Setting::Regularization:
        r = {1e-12, 1e12, false, "from 1e-12 to 1e12 (positive)"};
        break;
    case Setting::Bandwidth:
        r = {0.0, 1e-6, false, "from 0 to 1 um"};
        break;
    case Setting::SampleIndex:
        r = {1.0, 3.0, false, "from 1 to 3 (water 1.33, cytosol about 1.37, glycerol 1.47, mounting media up to 1.52)"};
        break;
    case Setting::CoverslipIndex:
        r = {1.0, 3.0, false, "from 1 to 3 (glass 1.52)"};
        break;
    case Setting::EmitterDepth:
        r = {0.0, 1e-3, false, "from 0 to 1 mm below the coverslip"};
        break;
    case Setting::CoverslipThickness:
        r = {0.0, 2e-3, false, "from 0 to 2 mm (a #1.5 coverslip is 170 um)"};
        break;
    }
    return r;
}

namespace {

struct UnitScale {
    const char* unit;
    double metres;
};

// The units a setting is usually written in, most likely first: a bare number meant in one of them.
std::vector<UnitScale> usualUnits(Setting setting)
{
    switch (setting) {
    case Setting::Wavelength:
        return {{"nm", 1e-9}, {"um", 1e-6}};
    case Setting::PixelPitch:
        return {{"um", 1e-6}, {"nm", 1e-9}};
    case Setting::Aperture:
        return {{"mm", 1e-3}, {"cm", 1e-2}};
    case Setting::DefocusLength:
    case Setting::ZStep:
        return {{"um", 1e-6}, {"nm", 1e-9}, {"mm", 1e-3}};
    case Setting::ObjectDiameter:
    case Setting::Bandwidth:
        return {{"nm", 1e-9}, {"um", 1e-6}};
    case Setting::EmitterDepth:
    case Setting::CoverslipThickness:
        return {{"um", 1e-6}, {"mm", 1e-3}};
    default:
        return {};
    }
}

bool plausible(Setting setting, double v)
{
    const PlausibleRange r = plausibleRange(setting);
    const double a = r.symmetric ? std::abs(v) : v;
    return std::isfinite(v) && a >= r.lo && a <= r.hi;
}

// A length as people write it: "5 cm", "6.5 um", "605 nm".
std::string readableLength(double metres)
{
    const double a = std::abs(metres);
    if (a >= 1.0 || a == 0.0)
        return number(metres) + " m";
    if (a >= 1e-2)
        return number(metres * 1e2) + " cm";
    if (a >= 1e-3)
        return number(metres * 1e3) + " mm";
    if (a >= 1e-6)
        return number(metres * 1e6) + " um";
    return number(metres * 1e9) + " nm";
}

std::string trimmed(const std::string& text)
{
    const size_t begin = text.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos)
        return {};
    return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

} // namespace

std::string likelyMeaning(Setting setting, double v)
{
    for (const UnitScale& u : usualUnits(setting))
        if (plausible(setting, v * u.metres))
            return number(v) + u.unit;
    return {};
}

std::string plausibilityError(Setting setting, double v)
{
    if (plausible(setting, v))
        return {};
    const PlausibleRange r = plausibleRange(setting);
    std::string message = std::string("the ") + settingName(setting) + " " + number(v) + (isLengthSetting(setting) ? " m" : "")
                          + " is not plausible: expected " + r.text;
    // A unit left out: a bare 633 taken as metres was meant as 633nm, a bare 0.1 pitch as 0.1um.
    if (isLengthSetting(setting) && std::abs(v) > r.hi)
        if (const std::string meant = likelyMeaning(setting, v); !meant.empty())
            message += "; did you mean " + meant + "?";
    return message;
}

TypedValue typedValue(Setting setting, const std::string& text)
{
    using Verdict = TypedValue::Verdict;
    const std::string typed = trimmed(text);
    if (typed.empty())
        return {};
    const bool length = isLengthSetting(setting);
    const auto parsed = valueFromText(typed);
    const bool fits = parsed && (parsed->kind == ValueWithUnit::Kind::Bare || (length && parsed->kind == ValueWithUnit::Kind::Length));
    if (!fits)
        return {Verdict::Refused, 0.0,
                std::string("the ") + settingName(setting) + " '" + typed + "' is not "
                    + (length ? "a length; write it with its unit (nm, um, mm, cm or m)" : "a number")};
    const double v = parsed->value;
    if (length && parsed->kind == ValueWithUnit::Kind::Bare && v != 0.0) {
        // A field of its own cannot tell 0.1 meant as um from 0.1 m: asked, never assumed. (No ": " in the
        // sentence: the desktop shows a message up to its first colon beside the field.)
        const std::string meant = likelyMeaning(setting, v);
        std::string message = std::string("the ") + settingName(setting) + " '" + typed + "' has no unit";
        message += meant.empty() ? "; as metres" : "; did you mean " + meant + "? As metres";
        message += plausible(setting, v) ? " it would be " + readableLength(v)
                                         : ", " + number(v) + " m is not plausible (expected " + plausibleRange(setting).text + ")";
        return {Verdict::Questioned, 0.0, message + ". Write the unit, nm, um, mm, cm or m"};
    }
    if (const std::string error = plausibilityError(setting, v); !error.empty())
        return {Verdict::Refused, 0.0, error};
    return {Verdict::Taken, v, {}};
}

} // namespace wfs
