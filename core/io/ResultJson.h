#pragma once
// The result JSON of the command-line contract, the coefficient CSV, and the truth files of the simulator (same
// schema as a result's "coefficients").
#include "fit/Results.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>

#include <vector>

namespace wfs {

// The result JSON. Unit rule (resources/schema/result.schema.json, which tests validate every result
// against): a number's unit is the last part of its key (_waves, _nm, _rad, _m, _pupil_radii,
// _data_units, _data_units_per_px) or the key is the unit (seconds); a number whose key names no unit
// is dimensionless (a count, a ratio such as strehl or sampling, an index), except the objective's
// values (cost, initial_cost, final_cost, gradient_max_norm), which are in the scale of the objective
// named by "objective". Also "software" {name, version}, "date" (UTC, ISO 8601), "grid" (N) and
// "sampling" (Q).
QJsonObject resultToJson(const FitResult& result);
// {"name": "Wavefront Studio", "version": ...}
QJsonObject softwareJson();
// The solver's record read back from a result written by resultToJson: termination and its message,
// initial and final cost, gradient max-norm, iterations, evaluations, seconds (parameters stay empty:
// a session stores them beside the result). Missing keys keep SolverSummary's defaults.
SolverSummary solverSummaryFromJson(const QJsonObject& result);
// The sampling fit of a result as resultToJson() wrote it; empty when it has none.
std::optional<SamplingFit> samplingFitFromJson(const QJsonObject& result);

// "convention" object: ordering, normalization, unit, wavelength_m.
QJsonObject conventionJson(ZernikeOrdering ordering, ZernikeNormalization normalization, double wavelength);

// The coefficients as a JSON array: index, n, m, name, value_waves, value_nm, value_rad,
// uncertainty_waves, uncertainty_nm (null when unknown), free. Shared by the result and coefficient files.
QJsonArray coefficientsJsonArray(const FitResult& result);

// Coefficient table as CSV: a header row (index, n, m, name, value_waves, value_nm, value_rad,
// uncertainty_waves, uncertainty_nm, free, ordering, normalization, wavelength_nm), then one row per
// term; the conventions (ordering, normalization, wavelength) are columns, no comment lines.
QString coefficientsCsv(const FitResult& result);

struct TruthTerm {
    int index = 0; // in `ordering`
    double valueWaves = 0.0;
};
struct Truth {
    ZernikeOrdering ordering = ZernikeOrdering::Noll;
    ZernikeNormalization normalization = ZernikeNormalization::Rms;
    std::vector<TruthTerm> terms;
    // What the terms leave out of the simulated pupil, when they are not the whole truth (the pupil preset's
    // phase step projects onto several Zernike terms, so a fit differs from these terms by design).
    std::string note;
};
// Reads {"convention": {...}, "coefficients": [{"index", "value_waves"}...]}; throws std::runtime_error.
Truth truthFromJson(const QJsonObject& object, const QString& source);
QJsonObject truthToJson(const Truth& truth, double wavelength);

// Writes text to a file through a temporary and a rename; refuses to overwrite without `overwrite`.
// Throws std::runtime_error naming the file.
void writeTextFile(const QString& path, const QByteArray& contents, bool overwrite);

} // namespace wfs
