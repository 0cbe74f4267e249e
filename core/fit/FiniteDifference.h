#pragma once
// Forward-difference gradients around any backend (declared in ModelEvaluator.h).
#include "fit/ModelEvaluator.h"
