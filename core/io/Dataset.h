#pragma once
// Measured data between the files and the fit: the image planes with where they came from, their
// metadata, the preparation (background, centring, crop, masks) and its results, and the step that
// turns all of it into a ProblemSpec with start values. The desktop program and wavefront-cli share
// this one path, so both read, prepare and model data the same way.
//
// Typical use (GUI or CLI):
//     Dataset data;
//     for (const DatasetMessage& m : addFiles(data, {"stack.tif"})) show(m);   // never throws for bad files
//     data.metadata.wavelength = 605e-9;                                       // edit metadata
//     data.preprocess.cropSize = 64;  data.preprocess.centre = CentreMethod::Peak;
//     for (const DatasetMessage& m : prepare(data)) show(m);                   // masks, background, crop
//     BuiltProblem built = buildProblem(data, model);                          // throws DatasetError
//     request.spec = built.spec;  request.start = built.start;
//
// Every function is a plain function on value types: no Qt signals, no threads; a Dataset may be
// copied to a worker thread. Errors the user can cause are messages (addFiles, prepare) or a
// DatasetError whose text names the file, plane or quantity (buildProblem).
//
// This header gathers the data layer's parts, each in its own header: the messages (io/DatasetMessage.h), the
// files, planes and data set (io/DatasetPlanes.h), the preparation (io/Preparation.h) and the problem built from
// them (io/DatasetProblem.h). Code that needs one part includes that one.
#include "io/DatasetMessage.h"
#include "io/DatasetPlanes.h"
#include "io/DatasetProblem.h"
#include "io/Preparation.h"
#include "base/Units.h"
