#include "settings/SettingsText.h"

namespace wfs {

const char* defocusModelName(DefocusModel model)
{
    return model == DefocusModel::HighNa ? "high-na" : "paraxial";
}

const char* centreMethodName(CentreMethod method)
{
    switch (method) {
    case CentreMethod::Auto:
        return "auto";
    case CentreMethod::None:
        return "none";
    case CentreMethod::Peak:
        return "peak";
    case CentreMethod::Centroid:
        return "centroid";
    }
    return "?";
}

const char* planeDefocusKindName(PlaneDefocus::Kind kind)
{
    switch (kind) {
    case PlaneDefocus::Kind::Unknown:
        return "unknown";
    case PlaneDefocus::Kind::Waves:
        return "waves";
    case PlaneDefocus::Kind::Length:
        return "length_m";
    }
    return "?";
}

const char* objectiveOptionName(ObjectiveKind kind)
{
    return kind == ObjectiveKind::WeightedLeastSquares ? "weighted" : objectiveName(kind);
}

const char* phaseUnitName(PhaseUnit unit)
{
    switch (unit) {
    case PhaseUnit::Waves:
        return "waves";
    case PhaseUnit::Nanometres:
        return "nm";
    case PhaseUnit::Radians:
        return "rad";
    }
    return "?";
}

} // namespace wfs
