#pragma once
// The step from a prepared data set to the fit: the metadata's checks and sampling, and the ProblemSpec with start
// values built under a model (the settings: settings/ModelSettings.h). Throws DatasetError naming the file, plane
// or quantity.
#include "io/DatasetMessage.h"
#include "io/DatasetPlanes.h"
#include "optics/ProblemSpec.h"
#include "settings/MetadataSettings.h"
#include "settings/ModelSettings.h"

#include <vector>

namespace wfs {

struct BuiltProblem {
    ProblemSpec spec;          // with the prepared data of the planes that take part
    std::vector<double> start; // start parameters (zero aberration, flux and background from the data)
    std::vector<int> planes;   // dataset plane index of each problem plane
    double samplingQ = 0.0;
    std::vector<DatasetMessage> messages; // warnings: Q < 2, one in-focus plane only, preparation warnings
};

// Throws DatasetError when a value is outside its plausible range (base/Units.h) or the numerical
// aperture exceeds the immersion index; the message names the value's origin. buildProblem calls it.
void validateMetadata(const DatasetMetadata& metadata);

// The sampling Q from the metadata (throws DatasetError naming what is missing), with its warnings.
double samplingFromMetadata(const DatasetMetadata& metadata, std::vector<DatasetMessage>* messages = nullptr);

// The checks of buildProblem that need no pixels, for a dataset whose planes may hold headers only
// (ReadLimits::headersOnly). Throw DatasetError with buildProblem's messages.
// The metadata and the read noise (the wavelength, validateMetadata, the sampling); returns Q with its warnings.
double checkedSamplingQ(const DatasetMetadata& metadata, const ModelSettings& model, std::vector<DatasetMessage>* messages = nullptr);
// The defocus of dataset plane `index` as the fit needs it: plausible, known unless it is the only plane that
// takes part, and a length only with an NA or f-number that turns it into phase.
void checkPlaneDefocus(const Dataset& dataset, const ModelSettings& model, int index, bool onlyPlane);

// Builds the problem from the planes that take part, prepared with dataset.preprocess (the stored
// preparation when current, else a fresh one). Throws DatasetError for missing metadata (wavelength,
// sampling, defocus of a plane in a multi-plane fit), no plane taking part, planes of different sizes,
// a plane larger than the grid, or an empty (all-NaN, all-zero) plane, naming the plane's source.
BuiltProblem buildProblem(const Dataset& dataset, const ModelSettings& model);

// The problem of a PSF generator without data (wavefront-cli psf): the microscope of `metadata` (wavelength, NA,
// immersion index, sample-plane pixel size) on a size x size grid (an odd size: the next even one) under `model`'s imaging model and Zernike basis, one
// in-focus plane with the high-NA defocus (fit/PsfStack.h images it at any z). Throws DatasetError naming what is
// missing or out of range; info messages (a vectorial model at low NA) go to *messages.
ProblemSpec psfGeneratorSpec(const DatasetMetadata& metadata, const ModelSettings& model, int size, std::vector<DatasetMessage>* messages);

} // namespace wfs
