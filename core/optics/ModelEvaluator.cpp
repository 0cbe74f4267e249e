#include "optics/ModelEvaluator.h"

namespace wfs {

const char* backendName(BackendKind kind)
{
    return kind == BackendKind::Cpu ? "cpu" : "gpu";
}

const char* gradientName(GradientKind kind)
{
    return kind == GradientKind::Adjoint ? "adjoint" : "fd";
}

} // namespace wfs
