#pragma once
// The one dispatch every front end calls to make a result export (the command line's output options, the
// desktop Export menu, the Python module's Result.save): the table and the data kinds are core's
// (io/ExportKinds.h); the picture kinds are drawn here, because a PNG with a colour bar and a title is drawn
// with text, which core (QtCore only) cannot do.
#include "fit/PsfStack.h"
#include "io/ExportKinds.h"

#include <QByteArray>

#include <string>

namespace wfs {

// The bytes of the export `kind`: pictures drawn here, titled by exportTitle; every other kind by core's
// dataExportBytes. Throws std::runtime_error when the fit has nothing to export of this kind (e.g. an
// amplitude map from a fit without a fitted amplitude).
QByteArray resultExportBytes(ExportKind kind, const std::string& path, const ResultExportSources& in);

} // namespace wfs
