#include "fit/ModelEvaluator.h"

namespace wfs {

const char* precisionName(Precision precision)
{
    return precision == Precision::Double ? "double" : "float";
}

const char* gradientName(GradientKind kind)
{
    return kind == GradientKind::Adjoint ? "adjoint" : "fd";
}

} // namespace wfs
