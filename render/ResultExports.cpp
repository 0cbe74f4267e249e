#include "ResultExports.h"

#include "PhaseImage.h"

#include <stdexcept>

namespace wfs {

QByteArray resultExportBytes(ExportKind kind, const std::string& path, const ResultExportSources& in)
{
    if (!isPictureExport(kind))
        return dataExportBytes(kind, path, in);
    const FitResult& result = in.result;
    PhaseImageOptions png;
    png.wavelength = result.wavelength;
    png.title = exportTitle(kind, result);
    switch (kind) {
    case ExportKind::AmplitudePng:
        if (result.pupilAmplitude.isEmpty())
            throw std::runtime_error("the fit has no pupil amplitude (fit one with --pupil-amplitude zonal or gaussian)");
        png.quantity = "field amplitude [relative]";
        return mapPngBytes(result.pupilAmplitude, png);
    case ExportKind::ZonalPng:
        if (result.zonalRemainderMap.isEmpty())
            throw std::runtime_error("the fit has no zonal phase (fit one with --pupil-phase zonal or both)");
        png.unit = in.pngUnit;
        return mapPngBytes(result.zonalRemainderMap, png);
    default: // the phase map
        png.unit = in.pngUnit;
        png.wrapped = in.wrapped;
        return phasePngBytes(result, png);
    }
}

} // namespace wfs
