#pragma once
// Forward-difference gradients around any backend (declared in ModelEvaluator.h).
#include "optics/ModelEvaluator.h"
