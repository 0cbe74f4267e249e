#pragma once
// The FastH panel's texts: what the timing methods compare and what this machine measured (the
// "What is compared" page), and the trained layer's inverse and determinant against LU.
#include "engine/FasthJobs.h"

#include <QString>

#include <optional>
#include <vector>

namespace wfs::ui {

// The explanation page: the methods, why the speed-up depends on the machine, the block size, the SVD
// layer; then, after a sweep, the times at the largest d for the pass shown and the best block size.
QString fasthExplanationHtml(const std::optional<FasthSweepResults>& sweep, const std::vector<FasthTimingRow>& rows, fasth::Pass pass);
// The trained layer's W^-1 Y and log|det W| against LU, as a table; a sentence when there is none.
QString fasthUseCaseHtml(const std::optional<FasthTrainingResult>& training);

} // namespace wfs::ui
