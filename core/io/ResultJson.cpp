#include "io/ResultJson.h"

#include "io/OutputTransaction.h"
#include "io/Provenance.h"
#include "base/CsvText.h"
#include "base/Units.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <stdexcept>

namespace wfs {

namespace {
QJsonValue number(double v)
{
    return std::isfinite(v) ? QJsonValue(v) : QJsonValue(QJsonValue::Null); // JSON has no NaN
}

ZernikeOrdering orderingFrom(const QString& text, const QString& source)
{
    if (text.isEmpty() || text == QLatin1String("noll"))
        return ZernikeOrdering::Noll;
    if (text == QLatin1String("ansi") || text == QLatin1String("osa"))
        return ZernikeOrdering::Ansi;
    throw std::runtime_error(source.toStdString() + ": unknown Zernike ordering '" + text.toStdString() + "' (noll or ansi)");
}
} // namespace

QJsonObject softwareJson()
{
    return QJsonObject{{QStringLiteral("name"), QString::fromLatin1(softwareName())},
                       {QStringLiteral("version"), QString::fromLatin1(softwareVersion())}};
}

QJsonObject conventionJson(ZernikeOrdering ordering, ZernikeNormalization normalization, double wavelength)
{
    return QJsonObject{
        {QStringLiteral("ordering"), QString::fromLatin1(zernike::orderingName(ordering))},
        {QStringLiteral("normalization"), QString::fromLatin1(zernike::normalizationName(normalization))},
        {QStringLiteral("unit"), QStringLiteral("waves")},
        {QStringLiteral("wavelength_m"), wavelength},
    };
}

QJsonArray coefficientsJsonArray(const FitResult& r)
{
    QJsonArray coefficients;
    for (const CoefficientResult& c : r.coefficients) {
        coefficients.append(QJsonObject{
            {QStringLiteral("index"), c.index},
            {QStringLiteral("n"), c.mode.n},
            {QStringLiteral("m"), c.mode.m},
            {QStringLiteral("name"), QString::fromStdString(c.name)},
            {QStringLiteral("value_waves"), c.waves},
            {QStringLiteral("value_nm"), c.nm},
            {QStringLiteral("value_rad"), c.radians},
            {QStringLiteral("uncertainty_waves"), number(c.uncertaintyWaves)},
            {QStringLiteral("uncertainty_nm"), number(c.uncertaintyWaves * r.wavelength * 1e9)},
            {QStringLiteral("free"), c.free},
        });
    }
    return coefficients;
}

namespace {

// The sampling fit: the fitted Q and NA with their 1-sigma errors, and the profile (aperture scale, final cost).
QJsonObject samplingFitJson(const FitResult& r)
{
    const SamplingFit& f = *r.samplingFit;
    QJsonArray profile;
    for (size_t i = 0; i < f.scales.size(); ++i)
        profile.append(QJsonObject{{QStringLiteral("aperture_scale"), f.scales[i]}, {QStringLiteral("cost"), number(f.costs[i])}});
    QJsonObject fit{
        {QStringLiteral("aperture_scale"), f.scale},
        {QStringLiteral("aperture_scale_sigma"), number(f.scaleSigma)},
        {QStringLiteral("sampling_q_sigma"), number(f.samplingQSigma)},
        {QStringLiteral("numerical_aperture"), f.numericalAperture},
        {QStringLiteral("numerical_aperture_sigma"), number(f.numericalApertureSigma)},
        {QStringLiteral("at_limit"), f.atLimit},
        {QStringLiteral("profile"), profile},
    };
    if (f.zernikeProfile) // the profile's costs are the Zernike model's, not the final fit's
        fit.insert(QStringLiteral("profile_model"), QStringLiteral("zernike"));
    return fit;
}

// The imaging model (README "Model"): scalar, or the vectorial model's objective, sample, coverslip, depth and dipole.
QJsonObject imagingModelJson(const FitResult& r)
{
    QJsonObject model{{QStringLiteral("model"), QString::fromLatin1(imagingModelName(r.imagingModel))}};
    if (r.imagingModel != ImagingModel::Vectorial)
        return model;
    const VectorialSpec& v = r.vectorial;
    model.insert(QStringLiteral("numerical_aperture"), v.numericalAperture);
    model.insert(QStringLiteral("immersion_index"), v.immersionIndex);
    model.insert(QStringLiteral("sample_index"), v.sampleIndex);
    model.insert(QStringLiteral("coverslip_index"), v.coverslipIndex > 0.0 ? v.coverslipIndex : v.immersionIndex);
    model.insert(QStringLiteral("coverslip_thickness_m"), v.coverslipThickness);
    model.insert(QStringLiteral("emitter_depth_start_m"), v.emitterDepth);
    model.insert(QStringLiteral("fit_emitter_depth"), v.fitEmitterDepth);
    model.insert(QStringLiteral("dipole"), QString::fromStdString(dipoleText(v.dipole)));
    model.insert(QStringLiteral("apodisation"), QStringLiteral("aplanatic, 1/sqrt(cos theta_immersion)"));
    return model;
}

// One entry per plane: its diversity, cost, reduced chi-square and used pixels.
QJsonArray planesJson(const FitResult& r)
{
    QJsonArray planes;
    for (const PlaneResult& p : r.planes) {
        planes.append(QJsonObject{
            {QStringLiteral("diversity"), QString::fromStdString(p.diversity)},
            {QStringLiteral("cost"), p.cost},
            {QStringLiteral("reduced_chi_square"), number(p.reducedChiSquare)},
            {QStringLiteral("used_pixels"), p.usedPixels},
        });
    }
    return planes;
}

// Every fitted parameter with its uncertainty.
QJsonArray parametersJson(const FitResult& r)
{
    QJsonArray parameters;
    for (size_t i = 0; i < r.parameterLabels.size(); ++i) {
        // The unit rule (result.schema.json): the unit is the last part of the key.
        const std::string unit = i < r.parameterUnits.size() ? r.parameterUnits[i] : std::string();
        const QString suffix = unit.empty() ? QString() : QStringLiteral("_") + QString::fromStdString(unit);
        parameters.append(QJsonObject{
            {QStringLiteral("name"), QString::fromStdString(r.parameterLabels[i])},
            {QStringLiteral("value") + suffix, r.parameterValues[i]},
            {QStringLiteral("uncertainty") + suffix, number(r.parameterUncertainties[i])},
        });
    }
    return parameters;
}

// The model beyond the Zernike basis (README "Pupil function"); units in the keys as everywhere.
QJsonObject pupilFunctionJson(const FitResult& r)
{
    QJsonObject pupilFunction{
        {QStringLiteral("phase"), QString::fromLatin1(pupilPhaseModelName(r.phaseModel))},
        {QStringLiteral("amplitude"), QString::fromLatin1(pupilAmplitudeModelName(r.amplitudeModel))},
        {QStringLiteral("regularization"), r.regularization},
        {QStringLiteral("zonal_remainder_rms_waves"), number(r.zonalRemainderRmsWaves)},
        {QStringLiteral("pixel_integration"), r.detector.pixelIntegration},
        {QStringLiteral("object_diameter_px"), r.detector.objectDiameterPixels},
        {QStringLiteral("gain_electrons_per_data_unit"), r.gain},
    };
    QJsonArray wavelengths;
    for (double w : r.spectrumWavelengths)
        wavelengths.append(w);
    if (!r.regularizationChoice.empty())
        pupilFunction.insert(QStringLiteral("regularization_choice"), QString::fromStdString(r.regularizationChoice));
    if (!wavelengths.isEmpty())
        pupilFunction.insert(QStringLiteral("spectrum_wavelengths_m"), wavelengths);
    if (r.samplingFit)
        pupilFunction.insert(QStringLiteral("sampling_fit"), samplingFitJson(r));
    pupilFunction.insert(QStringLiteral("imaging_model"), imagingModelJson(r));
    return pupilFunction;
}

// Whether the model describes its data (FitResult::verdict): null where no noise model judges it.
QJsonValue verdictJson(const FitVerdict& v)
{
    if (!v.judged)
        return QJsonValue();
    return QJsonObject{
        {QStringLiteral("describes_data"), v.describesData},
        {QStringLiteral("worst_plane"), v.worstPlane},
        {QStringLiteral("worst_chi2_per_pixel"),
         std::isfinite(v.worstReducedChiSquare) ? QJsonValue(v.worstReducedChiSquare) : QJsonValue()},
        {QStringLiteral("cause"), QString::fromStdString(v.cause)},
        {QStringLiteral("text"), QString::fromStdString(v.text)},
    };
}

QJsonArray assumptionsJson(const std::vector<Assumption>& assumptions)
{
    QJsonArray array;
    for (const Assumption& a : assumptions)
        array.append(QJsonObject{{QStringLiteral("setting"), QString::fromStdString(a.setting)},
                                 {QStringLiteral("value"), QString::fromStdString(a.value)},
                                 {QStringLiteral("reason"), QString::fromStdString(a.reason)}});
    return array;
}

} // namespace

QJsonObject resultToJson(const FitResult& r)
{
    const QJsonArray coefficients = coefficientsJsonArray(r);
    const QJsonArray planes = planesJson(r);
    const QJsonArray parameters = parametersJson(r);
    QJsonArray warnings;
    for (const std::string& w : r.warnings)
        warnings.append(QString::fromStdString(w));
    const QJsonObject pupilFunction = pupilFunctionJson(r);
    return QJsonObject{
        {QStringLiteral("software"), softwareJson()},
        {QStringLiteral("date"), QString::fromStdString(creationDateUtc()) + QLatin1Char('Z')},
        {QStringLiteral("grid"), r.gridSize},
        {QStringLiteral("sampling"), number(r.samplingQ)},
        {QStringLiteral("objective"), QString::fromLatin1(objectiveName(r.objective))},
        {QStringLiteral("problem"), QString::fromStdString(r.problemName)},
        {QStringLiteral("convention"), conventionJson(r.ordering, r.normalization, r.wavelength)},
        {QStringLiteral("coefficients"), coefficients},
        {QStringLiteral("rms_waves"), r.rmsWaves},
        {QStringLiteral("pv_waves"), r.pvWaves},
        {QStringLiteral("rms_nm"), r.rmsWaves * r.wavelength * 1e9},
        {QStringLiteral("pv_nm"), r.pvWaves * r.wavelength * 1e9},
        {QStringLiteral("wavefront_removed_terms"),
         r.defocusRemoved ? QStringLiteral("piston, tip, tilt, defocus") : QStringLiteral("piston, tip, tilt")},
        {QStringLiteral("strehl"), r.strehl},
        {QStringLiteral("strehl_marechal"), r.strehlMarechal},
        {QStringLiteral("wavefront_with_defocus"), r.withDefocus
                                                       ? QJsonValue(QJsonObject{{QStringLiteral("rms_waves"), r.withDefocus->rmsWaves},
                                                                                {QStringLiteral("pv_waves"), r.withDefocus->pvWaves},
                                                                                {QStringLiteral("strehl"), r.withDefocus->strehl}})
                                                       : QJsonValue()},
        {QStringLiteral("verdict"), verdictJson(r.verdict)},
        {QStringLiteral("assumptions"), assumptionsJson(r.assumptions)},
        {QStringLiteral("initial_cost"), r.solver.initialCost},
        {QStringLiteral("final_cost"), r.solver.finalCost},
        {QStringLiteral("gradient_max_norm"), r.solver.gradientMaxNorm},
        {QStringLiteral("iterations"), r.solver.iterations},
        {QStringLiteral("cost_evaluations"), double(r.solver.costEvaluations)},
        {QStringLiteral("gradient_evaluations"), double(r.solver.gradientEvaluations)},
        {QStringLiteral("seconds"), r.solver.seconds},
        {QStringLiteral("backend"), QString::fromStdString(r.backend.backend)},
        {QStringLiteral("device"), QString::fromStdString(r.backend.device)},
        {QStringLiteral("precision"), QString::fromLatin1(precisionName(r.backend.precision))},
        {QStringLiteral("threads"), r.backend.threads},
        {QStringLiteral("gradient"), QString::fromLatin1(gradientName(r.gradient))},
        {QStringLiteral("termination"), QString::fromLatin1(terminationName(r.solver.termination))},
        {QStringLiteral("termination_message"), QString::fromStdString(r.solver.message)},
        {QStringLiteral("planes"), planes},
        {QStringLiteral("parameters"), parameters},
        {QStringLiteral("pupil_function"), pupilFunction},
        {QStringLiteral("warnings"), warnings},
    };
}

QString coefficientsCsv(const FitResult& r)
{
    // One header row, then one row per term. The conventions are columns (the same in every row), not a
    // comment line: spreadsheets and CSV readers take the file as it is, and a row copied elsewhere
    // keeps its meaning. Phase = 2 pi * waves; nm = waves * wavelength.
    QString csv = QStringLiteral(
        "index,n,m,name,value_waves,value_nm,value_rad,uncertainty_waves,uncertainty_nm,free,ordering,normalization,wavelength_nm\n");
    const QString ordering = QString::fromLatin1(zernike::orderingName(r.ordering));
    const QString normalization = QString::fromLatin1(zernike::normalizationName(r.normalization));
    const QString wavelength = QString::number(r.wavelength * 1e9, 'g', 8);
    for (const CoefficientResult& c : r.coefficients) {
        const bool known = std::isfinite(c.uncertaintyWaves);
        csv += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13\n")
                   .arg(c.index)
                   .arg(c.mode.n)
                   .arg(c.mode.m)
                   .arg(QString::fromStdString(csvQuoted(c.name)))
                   .arg(c.waves, 0, 'g', 10)
                   .arg(c.nm, 0, 'g', 10)
                   .arg(c.radians, 0, 'g', 10)
                   .arg(known ? QString::number(c.uncertaintyWaves, 'g', 4) : QString())
                   .arg(known ? QString::number(c.uncertaintyWaves * r.wavelength * 1e9, 'g', 4) : QString())
                   .arg(c.free ? QStringLiteral("yes") : QStringLiteral("no"))
                   .arg(ordering, normalization, wavelength);
    }
    return csv;
}

Truth truthFromJson(const QJsonObject& object, const QString& source)
{
    Truth truth;
    const QJsonObject convention = object.value(QStringLiteral("convention")).toObject();
    truth.ordering = orderingFrom(convention.value(QStringLiteral("ordering")).toString(), source);
    const QString norm = convention.value(QStringLiteral("normalization")).toString();
    if (norm == QLatin1String("unit"))
        truth.normalization = ZernikeNormalization::Unit;
    else if (!norm.isEmpty() && norm != QLatin1String("rms"))
        throw std::runtime_error(source.toStdString() + ": unknown normalization '" + norm.toStdString() + "' (rms or unit)");
    const QJsonValue list = object.value(QStringLiteral("coefficients"));
    if (!list.isArray())
        throw std::runtime_error(source.toStdString() + ": no \"coefficients\" array");
    for (const QJsonValue& v : list.toArray()) {
        const QJsonObject c = v.toObject();
        if (!c.contains(QStringLiteral("index")) || !c.contains(QStringLiteral("value_waves")))
            throw std::runtime_error(source.toStdString() + ": every coefficient needs \"index\" and \"value_waves\"");
        const double waves = c.value(QStringLiteral("value_waves")).toDouble(std::nan(""));
        const double index = c.value(QStringLiteral("index")).toDouble(std::nan(""));
        // The value as written, for a message: "x", true, null, [1] are not numbers (not "coefficient nan").
        auto written = [&](const char* key) {
            const QJsonValue v = c.value(QLatin1String(key));
            return v.isString() ? std::string("\"").append(v.toString().toStdString()).append("\"")
                                : QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact).mid(1).chopped(1).toStdString();
        };
        if (!c.value(QStringLiteral("index")).isDouble())
            throw std::runtime_error(source.toStdString() + ": coefficient index " + written("index")
                                     + " is not a number (a Zernike index, a whole number from 1)");
        if (!(index >= 1 && index <= 1000 && index == std::floor(index)))
            throw std::runtime_error(source.toStdString() + ": coefficient index "
                                     + c.value(QStringLiteral("index")).toVariant().toString().toStdString()
                                     + " is not a Zernike index (a whole number from 1)");
        if (!c.value(QStringLiteral("value_waves")).isDouble())
            throw std::runtime_error(source.toStdString() + ": index " + std::to_string(int(index)) + ": value_waves "
                                     + written("value_waves") + " is not a number (waves, e.g. 0.1)");
        if (const std::string error = plausibilityError(Setting::ZernikeWaves, waves); !error.empty())
            throw std::runtime_error(source.toStdString() + ": index " + std::to_string(int(index)) + ": " + error);
        for (const TruthTerm& t : truth.terms) // one value per term: which of two would be the truth?
            if (t.index == int(index))
                throw std::runtime_error(source.toStdString() + ": index " + std::to_string(int(index)) + " is given twice ("
                                         + std::to_string(t.valueWaves) + " and " + std::to_string(waves) + " waves)");
        truth.terms.push_back({int(index), waves});
    }
    return truth;
}

QJsonObject truthToJson(const Truth& truth, double wavelength)
{
    QJsonArray coefficients;
    for (const TruthTerm& t : truth.terms) {
        const ZernikeMode mode = zernike::modeFromIndex(t.index, truth.ordering);
        coefficients.append(QJsonObject{
            {QStringLiteral("index"), t.index},
            {QStringLiteral("n"), mode.n},
            {QStringLiteral("m"), mode.m},
            {QStringLiteral("name"), QString::fromStdString(zernike::name(mode))},
            {QStringLiteral("value_waves"), t.valueWaves},
            {QStringLiteral("value_nm"), t.valueWaves * wavelength * 1e9},
        });
    }
    return QJsonObject{{QStringLiteral("convention"), conventionJson(truth.ordering, truth.normalization, wavelength)},
                       {QStringLiteral("coefficients"), coefficients}};
}

void writeTextFile(const QString& path, const QByteArray& contents, bool overwrite)
{
    writeFileAtomically(path.toStdString(), contents, overwrite);
}

std::optional<SamplingFit> samplingFitFromJson(const QJsonObject& result)
{
    const QJsonObject o = result.value(QStringLiteral("pupil_function")).toObject().value(QStringLiteral("sampling_fit")).toObject();
    if (!(o.value(QStringLiteral("aperture_scale")).toDouble() > 0.0))
        return std::nullopt;
    const auto numberOr = [&](const char* key) {
        return o.value(QLatin1String(key)).isDouble() ? o.value(QLatin1String(key)).toDouble() : std::nan("");
    };
    SamplingFit f;
    f.scale = o.value(QStringLiteral("aperture_scale")).toDouble();
    f.scaleSigma = numberOr("aperture_scale_sigma");
    f.samplingQSigma = numberOr("sampling_q_sigma");
    f.numericalAperture = o.value(QStringLiteral("numerical_aperture")).toDouble();
    f.numericalApertureSigma = numberOr("numerical_aperture_sigma");
    f.atLimit = o.value(QStringLiteral("at_limit")).toBool();
    f.zernikeProfile = o.value(QStringLiteral("profile_model")).toString() == QStringLiteral("zernike");
    for (const QJsonValue& point : o.value(QStringLiteral("profile")).toArray()) {
        f.scales.push_back(point.toObject().value(QStringLiteral("aperture_scale")).toDouble());
        f.costs.push_back(point.toObject().value(QStringLiteral("cost")).toDouble(std::nan("")));
    }
    return f;
}

SolverSummary solverSummaryFromJson(const QJsonObject& saved)
{
    SolverSummary summary;
    summary.initialCost = saved.value(QStringLiteral("initial_cost")).toDouble();
    summary.finalCost = saved.value(QStringLiteral("final_cost")).toDouble();
    summary.gradientMaxNorm = saved.value(QStringLiteral("gradient_max_norm")).toDouble();
    summary.iterations = saved.value(QStringLiteral("iterations")).toInt();
    summary.costEvaluations = long(saved.value(QStringLiteral("cost_evaluations")).toDouble());
    summary.gradientEvaluations = long(saved.value(QStringLiteral("gradient_evaluations")).toDouble());
    summary.seconds = saved.value(QStringLiteral("seconds")).toDouble();
    summary.message = saved.value(QStringLiteral("termination_message")).toString().toStdString();
    const QString termination = saved.value(QStringLiteral("termination")).toString();
    for (Termination t :
         {Termination::Converged, Termination::MaxIterations, Termination::Stalled, Termination::Cancelled, Termination::Failed})
        if (termination == QLatin1String(terminationName(t)))
            summary.termination = t;
    return summary;
}

} // namespace wfs
