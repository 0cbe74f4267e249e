#pragma once
// The floating-point precision of a computation: one enum for the model backends, FastH, the engine and
// every front end.
#include <optional>
#include <string_view>

namespace wfs {

enum class Precision { Double, Float };
const char* precisionName(Precision precision); // "double" / "float"
// "double" or "float64", "float" or "float32"; std::nullopt for anything else.
std::optional<Precision> precisionFromName(std::string_view name);

} // namespace wfs
