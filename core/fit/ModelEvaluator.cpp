#include "fit/ModelEvaluator.h"

namespace wfs {

const char* gradientName(GradientKind kind)
{
    return kind == GradientKind::Adjoint ? "adjoint" : "fd";
}

} // namespace wfs
