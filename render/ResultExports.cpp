#include "ResultExports.h"

#include "PhaseImage.h"

#include <stdexcept>

namespace wfs {

QByteArray resultExportBytes(ExportKind kind, const std::string& path, const ResultExportSources& in)
{
    if (!isPictureExport(kind))
        return dataExportBytes(kind, path, in);
    const FitResult& result = in.result;
    if (const std::string why = exportUnavailable(kind, result); !why.empty())
        throw std::runtime_error(why);
    PhaseImageOptions png;
    png.wavelength = result.wavelength;
    png.title = exportTitle(kind, result);
    png.geometry = result.phaseMapGeometry; // the amplitude and the zonal remainder share the phase map's pixels
    switch (kind) {
    case ExportKind::AmplitudePng:
        png.quantity = "field amplitude [relative]";
        return mapPngBytes(result.pupilAmplitude, png);
    case ExportKind::ZonalPng:
        png.unit = in.pngUnit;
        return mapPngBytes(result.zonalRemainderMap, png);
    default: // the phase map
        png.unit = in.pngUnit;
        png.wrapped = in.wrapped;
        return phasePngBytes(result, png);
    }
}

} // namespace wfs
