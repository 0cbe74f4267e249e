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
#include "io/ImageReaders.h"
#include "base/Units.h"
#include "optics/ProblemSpec.h"
#include "settings/MetadataSettings.h"
#include "settings/ModelSettings.h"
#include "settings/PreparationSettings.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace wfs {

class DatasetError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class MessageLevel { Info, Warning, Error };
const char* messageLevelName(MessageLevel level); // "info", "warning", "error"

struct DatasetMessage {
    MessageLevel level = MessageLevel::Info;
    std::string file; // the file concerned (as given), or empty
    std::string text; // a whole sentence that already names the file or plane
};
// The texts of the messages at `level`, one per line (empty when there are none).
std::string messagesText(const std::vector<DatasetMessage>& messages, MessageLevel level);

// ---- Metadata (the struct: settings/MetadataSettings.h) -------------------------------------------

// The metadata's optional numbers by field name (as in `origin`): wavelength, pixelPitch, pixelAngle, fNumber,
// numericalAperture, aperture, samplingQ, zStep, focusPlane, saturationLevel, readNoise.
std::vector<std::pair<std::string, std::optional<double>>> metadataNumbers(const DatasetMetadata& metadata);

// Why the sources' values of `fields` were ignored, as "; a.fits: keyword WAVELENG = 'abc' is not a number
// (ignored)", to end a message that a value is unknown; empty when no source gave one.
std::string ignoredNote(const DatasetMetadata& metadata, std::initializer_list<std::string> fields);

// ---- Files and planes ---------------------------------------------------------------------------

// Larger pixel values overflow when squared and summed (a cost, a centroid): addFiles warns, buildProblem refuses.
constexpr double kLargestPixel = 1e150;
// Smaller largest pixel values underflow when squared (the cost is 0 for any model): addFiles warns.
constexpr double kSmallestPixel = 1e-150;

// Why a plane's pixels cannot be fitted, as a phrase ("the plane is all zero", "every pixel is NaN or
// blank", values beyond kLargestPixel or all below kSmallestPixel, a negative total such as a BSCALE of -1
// gives); empty when they can. (A constant plane is all zero once its background is taken: buildProblem.)
std::string unusablePlaneReason(const std::vector<double>& pixels);

// The SHA-256 of a file's bytes, lower-case hex, and its size in `bytes`; empty when it cannot be read.
std::string sha256Of(const std::string& path, long long* bytes = nullptr);

struct DatasetFile {
    std::string path; // as given (absolute or relative to the working directory)
    ImageFormat format = ImageFormat::Unknown;
    std::string sha256; // of the file's bytes, lower-case hex; sessions use it to detect changes
    long long bytes = 0;
    int firstPlane = 0; // index of its first plane in Dataset::planes
    int planeCount = 0;
    std::map<std::string, double> numbers; // header keywords (FITS), see ImageFileContent
    std::map<std::string, std::string> strings;
    std::string sidecar; // path of the JSON sidecar that was read, empty when none
    std::string damage;  // the reader's note on planes it could not read (a truncated file), empty when none
    int bitsPerSample = 0;
    bool floatingPoint = false;
};

struct DatasetPlane {
    Image raw;                  // as read, row 0 at the bottom; raw.source = "path[k]"
    int file = 0;               // index into Dataset::files
    int indexInFile = 0;        // 0-based plane (page, slice) within that file
    bool use = true;            // takes part in the fit
    PlaneDefocus defocus;       // this plane's own defocus; Unknown = from zStep or none
    double formatMaximum = 0.0; // the stored type's largest value, 0 for floats (saturation default)
};

// ---- Preparation (the options: settings/PreparationSettings.h) ----------------------------------

struct PlanePreparation {
    Image image;               // prepared pixels (background subtracted, cropped, scaled); NaN where masked
    std::vector<uint8_t> mask; // per prepared pixel: 1 = used, 0 = excluded (saturated, bad, NaN)
    int cropColumn = 0;        // raw-image column and row of the prepared image's pixel (0, 0)
    int cropRow = 0;
    double centreX = 0.0; // raw-image coordinates (pixels, x = column, y = row) of the found centre
    double centreY = 0.0;
    double background = 0.0;       // subtracted per pixel (raw units)
    double backgroundSigma = 0.0;  // robust standard deviation of the border (raw units): the noise floor
    double readNoiseSquared = 0.0; // from the border's neighbour differences, for photon counts (raw units^2)
    double scale = 1.0;            // factor applied after background subtraction (normalisation)
    double signal = 0.0;           // sum of the prepared, unmasked pixels
    int saturatedPixels = 0;
    int badPixels = 0;    // listed, hot, or NaN in the raw image
    bool clipped = false; // the PSF's light reaches the crop (or image) edge
};

struct Preparation {
    PreprocessOptions options;             // the options that produced it
    std::optional<double> saturationLevel; // DatasetMetadata::saturationLevel when it was made
    std::vector<PlanePreparation> planes;  // one per dataset plane, also the unused ones
    std::vector<DatasetMessage> messages;  // warnings (saturation, clipped PSF, empty plane, ...)
};

// ---- The dataset --------------------------------------------------------------------------------

struct Dataset {
    std::vector<DatasetFile> files;
    std::vector<DatasetPlane> planes; // every plane of every file, in file order
    DatasetMetadata metadata;
    PreprocessOptions preprocess;
    std::optional<Preparation> preparation; // the last prepare(); see isPrepared()
};

// Reads the files and appends their planes. Never throws for file problems: each file gets messages
// (Info: "a.tif: 21 planes of 128 x 128, 16-bit"; Error: unreadable, with the reason) and the planes
// that loaded, from this call and earlier ones, stay. Fills unset metadata from headers and sidecars:
// a JSON sidecar first, then an instrument's acquisition log "<name>_settings.txt" (the z step of the
// axis the log names as "Z motion", when its step count equals the file's planes), then the file's
// own headers. A value a later source gives differently becomes a metadata conflict and a warning.
// Drops the stored preparation (the plane list changed).
std::vector<DatasetMessage> addFiles(Dataset& dataset, const std::vector<std::string>& paths, const ReadLimits& limits = {});

// Planes handed over in memory (the Python module's arrays, a preset's simulated cube) appended as addFiles()
// appends a file's: `name` stands for the file in messages and Image::source; `content.numbers` and `strings`
// are read as a FITS header's keywords. No sidecar is looked for. Throws DatasetError for no plane or a plane
// whose pixel count is not its width x height.
std::vector<DatasetMessage> addImages(Dataset& dataset, ImageFileContent content, const std::string& name);

// The files beside an image that addFiles() reads as its metadata, those that exist: its JSON sidecar and an
// instrument's acquisition log. They are inputs too, which no output may overwrite.
std::vector<std::string> metadataFilesBeside(const std::string& imagePath);

// A fit that was not asked for particular planes refuses a file that lost planes when read (DatasetFile::damage):
// the planes left are not the stack the file holds (a truncated cube fitted as one in-focus plane). Throws
// DatasetError naming the damage and how to fit the planes left on purpose; front ends call it unless the user
// chose the planes.
void requireWholeFiles(const Dataset& dataset, const std::string& howToChoose);

// Removes a file and its planes (indices of later planes shift down).
void removeFile(Dataset& dataset, int fileIndex);

// Makes exactly the listed dataset planes take part (0-based, in file order); throws DatasetError for
// an index out of range or listed twice.
void selectPlanes(Dataset& dataset, const std::vector<int>& planeIndices);
std::vector<int> usedPlanes(const Dataset& dataset);

// The effective defocus of a plane: its own, else from zStep / focusPlane (a length), else Unknown.
PlaneDefocus planeDefocus(const Dataset& dataset, int planeIndex);

// Applies dataset.preprocess to every plane, stores the result in dataset.preparation and returns its
// messages. Deterministic: the same planes and options give the same result (sessions rely on it).
std::vector<DatasetMessage> prepare(Dataset& dataset);
// The same without storing it.
Preparation computePreparation(const Dataset& dataset);
// Whether dataset.preparation exists and matches the current planes and options.
bool isPrepared(const Dataset& dataset);

// ---- The model (the settings: settings/ModelSettings.h) -------------------------------------------

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
// immersion index, sample-plane pixel size) on a size x size grid under `model`'s imaging model and Zernike basis, one
// in-focus plane with the high-NA defocus (fit/PsfStack.h images it at any z). Throws DatasetError naming what is
// missing or out of range; info messages (a vectorial model at low NA) go to *messages.
ProblemSpec psfGeneratorSpec(const DatasetMetadata& metadata, const ModelSettings& model, int size, std::vector<DatasetMessage>* messages);

// ---- Units (base/Units.h: one parser, one rule for bare numbers) ------------------------------------

// "-1w" (waves of W020), "0", "0.9um" (axial length); std::nullopt if neither.
std::optional<PlaneDefocus> defocusFromText(const std::string& text);

} // namespace wfs
