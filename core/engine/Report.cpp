#include "engine/Report.h"

#include "io/SettingsProblems.h"
#include "optics/Zernike.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <utility>

namespace wfs {

namespace {

std::string format(const char* pattern, ...)
{
    va_list args;
    va_start(args, pattern);
    char buffer[512];
    std::vsnprintf(buffer, sizeof buffer, pattern, args);
    va_end(args);
    return buffer;
}

std::string removedTerms(const FitResult& r)
{
    return r.defocusRemoved ? "piston, tip, tilt, defocus" : "piston, tip, tilt";
}

// The truth of a term in the result's normalisation; 0 for a term the truth does not name.
double truthWaves(const Truth& truth, const CoefficientResult& c, ZernikeNormalization normalization)
{
    for (const TruthTerm& term : truth.terms)
        if (zernike::modeFromIndex(term.index, truth.ordering) == c.mode)
            return term.valueWaves * zernike::normalizationFactor(c.mode, truth.normalization)
                   / zernike::normalizationFactor(c.mode, normalization);
    return 0.0;
}

} // namespace

// The model beyond a Zernike phase on a uniform pupil, and the nuisance parameters with their uncertainties.
std::vector<std::string> pupilFunctionLines(const FitResult& r)
{
    std::vector<std::string> lines;
    if (r.phaseModel != PupilPhaseModel::Zernike || r.amplitudeModel != PupilAmplitudeModel::Uniform) {
        std::string line =
            format("pupil: phase %s, amplitude %s", pupilPhaseModelName(r.phaseModel), pupilAmplitudeModelName(r.amplitudeModel));
        if (std::isfinite(r.zonalRemainderRmsWaves))
            line += format("; beyond the Zernike terms: %.4f waves RMS", r.zonalRemainderRmsWaves);
        if (hasZonalTerms(r.phaseModel, r.amplitudeModel))
            line += format(" (smoothness weight %g)", r.regularization);
        lines.push_back(line);
        if (!r.regularizationChoice.empty()) {
            lines.push_back("smoothness " + r.regularizationChoice);
        } else if (r.regularizationSweep.size() > 1) {
            std::string path;
            for (size_t i = 0; i + 1 < r.regularizationSweep.size(); ++i)
                path += format("%s%g (chi2/pixel %.3f)", i > 0 ? ", " : "", r.regularizationSweep[i].weight,
                               r.regularizationSweep[i].reducedChiSquare);
            lines.push_back(format("smoothness weight %g reached by continuation from flat zonal maps, through ", r.regularization) + path);
        }
    }
    if (!r.detector.isIdentity() || r.gain != 1.0)
        lines.push_back(format(
            "detector: %s%s, gain %.4g electrons per data unit", r.detector.pixelIntegration ? "pixel integration" : "point samples",
            r.detector.objectDiameterPixels > 0.0 ? format(", object %.3g px across (sphere)", r.detector.objectDiameterPixels).c_str()
                                                  : "",
            r.gain));
    if (!r.spectrumWavelengths.empty())
        lines.push_back(format("source: %zu wavelengths, %.1f to %.1f nm (a flat band)", r.spectrumWavelengths.size(),
                               r.spectrumWavelengths.front() * 1e9, r.spectrumWavelengths.back() * 1e9));
    if (r.samplingFit) {
        const SamplingFit& f = *r.samplingFit;
        std::string line = format("sampling Q %.4g +/- %.2g", r.samplingQ, f.samplingQSigma);
        if (f.numericalAperture > 0.0)
            line += format(" (NA %.4g +/- %.2g)", f.numericalAperture, f.numericalApertureSigma);
        line += format(", aperture scale %.4f from a profile of %zu fits%s", f.scale, f.scales.size(),
                       f.zernikeProfile ? " of the Zernike model (a zonal amplitude's as a fitted Gaussian apodisation; the zonal terms "
                                          "fitted at the chosen scale; the sigma is that model's)"
                                        : "");
        if (f.atLimit)
            line += " (at the searched range's end)";
        lines.push_back(line);
    }
    for (size_t i = 0; i < r.parameterLabels.size(); ++i) {
        const std::string& label = r.parameterLabels[i];
        if (label.rfind("defocus ", 0) != 0)
            continue;
        const std::string unit = i < r.parameterUnits.size() ? r.parameterUnits[i] : std::string();
        const double factor = unit == "m" ? 1e6 : 1.0; // offsets in metres are shown in micrometres
        const std::string shown = unit == "m" ? " um" : unit.empty() ? "" : " " + unit;
        lines.push_back(format("%s %.5g +/- %.2g%s", label.c_str(), r.parameterValues[i] * factor, r.parameterUncertainties[i] * factor,
                               shown.c_str()));
    }
    return lines;
}

std::string withSymbols(std::string line)
{
    const std::pair<const char*, const char*> symbols[] = {{"+/-", "\u00b1"}, {"chi2", "\u03c7\u00b2"}};
    for (const auto& [ascii, symbol] : symbols)
        for (size_t at = line.find(ascii); at != std::string::npos; at = line.find(ascii, at + std::strlen(symbol)))
            line.replace(at, std::strlen(ascii), symbol);
    return line;
}

std::string briefReport(const FitResult& r)
{
    std::string line = format(
        "%s after %d iterations, %ld cost / %ld gradient evaluations, %.3f s; %.4f waves RMS = %.1f nm RMS (%s removed); Strehl %.3f",
        terminationName(r.solver.termination), r.solver.iterations, r.solver.costEvaluations, r.solver.gradientEvaluations,
        r.solver.seconds, r.rmsWaves, r.rmsWaves * r.wavelength * 1e9, removedTerms(r).c_str(), r.strehl);
    if (!r.verdict.describesData)
        line += "; but " + r.verdict.text;
    return line;
}

std::string wavefrontLine(const FitResult& r)
{
    std::string line = format("wavefront error (%s removed): %.4f waves RMS = %.1f nm RMS, %.4f waves PV; Strehl %.3f (Marechal %.3f)",
                              removedTerms(r).c_str(), r.rmsWaves, r.rmsWaves * r.wavelength * 1e9, r.pvWaves, r.strehl, r.strehlMarechal);
    if (r.withDefocus)
        line += format("; with defocus: %.4f waves RMS = %.1f nm RMS, %.4f waves PV, Strehl %.3f", r.withDefocus->rmsWaves,
                       r.withDefocus->rmsWaves * r.wavelength * 1e9, r.withDefocus->pvWaves, r.withDefocus->strehl);
    return line;
}

std::vector<std::string> summaryLines(const FitResult& r)
{
    std::vector<std::string> lines;
    lines.push_back(format("backend %s (%s), %s, gradient %s, %zu parameters", r.backend.backend.c_str(), r.backend.device.c_str(),
                           precisionName(r.backend.precision), gradientName(r.gradient), r.parameterValues.size()));
    lines.push_back(format("%s after %d iterations, %ld cost / %ld gradient evaluations, %.3f s", terminationName(r.solver.termination),
                           r.solver.iterations, r.solver.costEvaluations, r.solver.gradientEvaluations, r.solver.seconds));
    lines.push_back("(" + r.solver.message + ")");
    std::string cost = format("cost %.6g -> %.6g", r.solver.initialCost, r.solver.finalCost);
    for (size_t k = 0; k < r.planes.size(); ++k)
        if (std::isfinite(r.planes[k].reducedChiSquare))
            cost += format("%s plane %zu chi2/pixel %.3f", k == 0 ? ";" : ",", k, r.planes[k].reducedChiSquare);
    lines.push_back(cost);
    if (!r.verdict.describesData)
        lines.push_back(std::string(terminationName(r.solver.termination)) + ", but " + r.verdict.text);
    lines.push_back(wavefrontLine(r));
    for (const std::string& line : pupilFunctionLines(r))
        lines.push_back(line);
    lines.push_back(format("Zernike coefficients (%s ordering, %s normalisation, wavelength %.1f nm):", zernike::orderingName(r.ordering),
                           zernike::normalizationName(r.normalization), r.wavelength * 1e9));
    return lines;
}

std::vector<std::string> metadataSourceLines(const Dataset& dataset)
{
    const DatasetMetadata& m = dataset.metadata;
    std::vector<std::string> lines;
    auto source = [&](const std::string& key) {
        const auto it = m.origin.find(key);
        return it == m.origin.end() ? std::string("default") : it->second == "user" ? std::string("set by the user") : it->second;
    };
    for (const auto& [key, value] : metadataNumbers(m))
        if (value)
            lines.push_back(key + " " + metadataValueText(key, *value) + " (" + source(key) + ")");
    lines.push_back("immersionIndex " + metadataValueText("immersionIndex", m.immersionIndex) + " (" + source("immersionIndex") + ")");
    lines.push_back(std::string("defocusModel ") + (m.defocusModel == DefocusModel::HighNa ? "high-na" : "paraxial") + " ("
                    + source("defocusModel") + ")");
    if (m.zStep)
        lines.push_back(std::string("zDirection ") + (m.zIndexDown ? "down" : "up") + " (" + source("zIndexDown") + ")");
    lines.push_back("dataUnit " + (m.dataUnit.empty() ? std::string("counts") : m.dataUnit) + " (" + source("dataUnit") + ")");
    for (int index : usedPlanes(dataset)) {
        const DatasetPlane& plane = dataset.planes[size_t(index)];
        const PlaneDefocus d = planeDefocus(dataset, index);
        const std::string value = d.kind == PlaneDefocus::Kind::Waves    ? format("%.4g waves", d.value)
                                  : d.kind == PlaneDefocus::Kind::Length ? format("%.4g um", d.value * 1e6)
                                                                         : std::string("unknown (taken as in focus)");
        const std::string from = plane.defocus.kind != PlaneDefocus::Kind::Unknown ? source("defocus[" + std::to_string(index) + "]")
                                 : d.kind != PlaneDefocus::Kind::Unknown           ? "the z step and focus plane"
                                                                                   : std::string("no source");
        lines.push_back("defocus of " + plane.raw.source + " " + value + " (" + from + ")");
    }
    return lines;
}

std::string fullReport(const FitResult& r, const std::vector<std::string>& notes, const Truth* truth, const Dataset* data)
{
    std::string text = "Wavefront Studio reconstruction: " + r.problemName + "\n";
    for (const std::string& note : notes)
        text += "  note: " + note + "\n";
    if (data)
        for (const std::string& line : metadataSourceLines(*data))
            text += "  metadata: " + line + "\n";
    for (const std::string& line : summaryLines(r))
        text += "  " + line + "\n";
    text += format("    %5s %3s %4s  %-32s %11s %11s %10s%s\n", "index", "n", "m", "name", "waves", "nm", "+/- waves",
                   truth ? "      truth" : "");
    for (const CoefficientResult& c : r.coefficients) {
        text += format("    %5d %3d %4d  %-32s %11.5f %11.2f %10.5f", c.index, c.mode.n, c.mode.m, c.name.c_str(), c.waves, c.nm,
                       c.uncertaintyWaves);
        if (truth)
            text += format(" %10.5f", truthWaves(*truth, c, r.normalization));
        text += "\n";
    }
    return text;
}

} // namespace wfs
