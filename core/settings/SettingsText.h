#pragma once
// The text <-> enum tables of every setting, each written once (Ceres' types.h: one StringToX / XToString pair
// per enum). Session files, the command line, the Python module and the desktop program's lists all go through
// them. The text of an enum whose type lives lower in core (optics, fit) is that layer's name function
// (pupilPhaseModelName, ...), so each word exists once; a table adds the order front ends list the values in and
// the way back from text. The command line uses the same words except where SettingEnum::option spells its own
// (--objective weighted for weighted-least-squares).
//
//   settingText(PupilPhaseModel::Zonal)         -> "zonal"
//   settingFromText<PupilPhaseModel>("both")    -> PupilPhaseModel::Both
//   settingTexts<PupilPhaseModel>()             -> {"zernike", "zonal", "both"}
//   settingIndex(PupilPhaseModel::Both)         -> 2 (its place in the list: a combo box's row)
#include "base/Precision.h"
#include "optics/ModelEvaluator.h"
#include "fit/Solver.h"
#include "optics/ProblemSpec.h"
#include "optics/Vectorial.h"
#include "settings/MetadataSettings.h"
#include "settings/OutputSettings.h"
#include "settings/PreparationSettings.h"

#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wfs {

const char* defocusModelName(DefocusModel model);       // "paraxial", "high-na"
const char* centreMethodName(CentreMethod method);      // "auto", "none", "peak", "centroid"
const char* planeDefocusKindName(PlaneDefocus::Kind k); // "unknown", "waves", "length_m" (a session's plane defocus)
const char* objectiveOptionName(ObjectiveKind kind);    // the command line's: "least-squares", "poisson", "weighted"

// Every value of a settings enum in the order front ends list it (`values`), and its text (`text`); `option`,
// where present, is the command line's spelling when it differs.
template <typename E>
struct SettingEnum;

#define WFS_SETTING_ENUM(Type, nameFunction, ...)                                                                                          \
    template <>                                                                                                                            \
    struct SettingEnum<Type> {                                                                                                             \
        static constexpr Type values[] = {__VA_ARGS__};                                                                                    \
        static const char* text(Type value) { return nameFunction(value); }                                                                \
    }

WFS_SETTING_ENUM(ZernikeOrdering, zernike::orderingName, ZernikeOrdering::Noll, ZernikeOrdering::Ansi);
WFS_SETTING_ENUM(ZernikeNormalization, zernike::normalizationName, ZernikeNormalization::Rms, ZernikeNormalization::Unit);
WFS_SETTING_ENUM(PupilPhaseModel, pupilPhaseModelName, PupilPhaseModel::Zernike, PupilPhaseModel::Zonal, PupilPhaseModel::Both);
WFS_SETTING_ENUM(PupilAmplitudeModel, pupilAmplitudeModelName, PupilAmplitudeModel::Uniform, PupilAmplitudeModel::Gaussian,
                 PupilAmplitudeModel::Zonal);
WFS_SETTING_ENUM(DefocusModel, defocusModelName, DefocusModel::Paraxial, DefocusModel::HighNa);
WFS_SETTING_ENUM(CentreMethod, centreMethodName, CentreMethod::Auto, CentreMethod::None, CentreMethod::Peak, CentreMethod::Centroid);
WFS_SETTING_ENUM(PlaneDefocus::Kind, planeDefocusKindName, PlaneDefocus::Kind::Unknown, PlaneDefocus::Kind::Waves,
                 PlaneDefocus::Kind::Length);
WFS_SETTING_ENUM(BackendKind, backendName, BackendKind::Cpu, BackendKind::Gpu);
WFS_SETTING_ENUM(GradientKind, gradientName, GradientKind::Adjoint, GradientKind::FiniteDifference);
WFS_SETTING_ENUM(OptimizerKind, optimizerName, OptimizerKind::Bfgs, OptimizerKind::Lbfgs);
WFS_SETTING_ENUM(Precision, precisionName, Precision::Double, Precision::Float);
WFS_SETTING_ENUM(PhaseUnit, phaseUnitName, PhaseUnit::Radians, PhaseUnit::Waves, PhaseUnit::Nanometres);
WFS_SETTING_ENUM(ImagingModel, imagingModelName, ImagingModel::Scalar, ImagingModel::Vectorial);
#undef WFS_SETTING_ENUM

// Session files write the objective's full name; the command line lists Poisson first and says "weighted".
template <>
struct SettingEnum<ObjectiveKind> {
    static constexpr ObjectiveKind values[] = {ObjectiveKind::LeastSquares, ObjectiveKind::Poisson, ObjectiveKind::WeightedLeastSquares};
    static constexpr ObjectiveKind optionValues[] = {ObjectiveKind::Poisson, ObjectiveKind::LeastSquares,
                                                     ObjectiveKind::WeightedLeastSquares};
    static const char* text(ObjectiveKind value) { return objectiveName(value); }
    static const char* option(ObjectiveKind value) { return objectiveOptionName(value); }
};

template <typename E>
const char* settingText(E value)
{
    return SettingEnum<E>::text(value);
}

template <typename E>
std::optional<E> settingFromText(std::string_view text)
{
    for (E value : SettingEnum<E>::values)
        if (text == SettingEnum<E>::text(value))
            return value;
    return std::nullopt;
}

template <typename E>
std::vector<std::string> settingTexts()
{
    std::vector<std::string> texts;
    for (E value : SettingEnum<E>::values)
        texts.emplace_back(SettingEnum<E>::text(value));
    return texts;
}

template <typename E>
int settingIndex(E value)
{
    const auto& values = SettingEnum<E>::values;
    for (size_t i = 0; i < std::size(values); ++i)
        if (values[i] == value)
            return int(i);
    return 0;
}

// The command line's spelling (SettingEnum::option where it has one) and its order.
template <typename E>
const char* optionText(E value)
{
    if constexpr (requires { SettingEnum<E>::option(value); })
        return SettingEnum<E>::option(value);
    else
        return SettingEnum<E>::text(value);
}

template <typename E>
std::vector<E> optionValues()
{
    if constexpr (requires { SettingEnum<E>::optionValues; })
        return {std::begin(SettingEnum<E>::optionValues), std::end(SettingEnum<E>::optionValues)};
    else
        return {std::begin(SettingEnum<E>::values), std::end(SettingEnum<E>::values)};
}

template <typename E>
std::optional<E> optionFromText(std::string_view text)
{
    for (E value : optionValues<E>())
        if (text == optionText(value))
            return value;
    return std::nullopt;
}

template <typename E>
std::vector<std::string> optionTexts()
{
    std::vector<std::string> texts;
    for (E value : optionValues<E>())
        texts.emplace_back(optionText(value));
    return texts;
}

} // namespace wfs
