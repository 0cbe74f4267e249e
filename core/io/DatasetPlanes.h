#pragma once
// The measured data: the files read, every plane with where it came from and whether it takes part, the metadata
// (settings/MetadataSettings.h) and the preparation (io/Preparation.h), and the operations on files and planes.
#include "io/DatasetMessage.h"
#include "io/ImageReaders.h"
#include "io/Preparation.h"
#include "settings/MetadataSettings.h"
#include "settings/PreparationSettings.h"

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace wfs {

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

// ---- The dataset --------------------------------------------------------------------------------

struct Dataset {
    std::vector<DatasetFile> files;
    std::vector<DatasetPlane> planes; // every plane of every file, in file order
    DatasetMetadata metadata;
    PreprocessOptions preprocess;
    std::optional<Preparation> preparation; // the last prepare(); see isPrepared()
    // A person (or a session, a batch template) chose which planes take part (selectPlanes); unset, a run fits the
    // planes core proposes for a z-stack (io/Assumptions.h) and says so.
    bool planesChosen = false;
};

// Reads the files and appends their planes. Never throws for file problems: each file gets messages
// (Info: "a.tif: 21 planes of 128 x 128, 16-bit"; Error: unreadable, with the reason) and the planes
// that loaded, from this call and earlier ones, stay. Fills unset metadata from headers and sidecars:
// a JSON sidecar first, then an instrument's acquisition log "<name>_settings.txt" (the z step of the
// axis the log names as "Z motion", when its step count equals the file's planes), then the file's
// own headers (FITS keywords; a TIFF's ImageJ or OME-XML description and Micro-Manager's JSON, io/OmeXml.h).
// A value a later source gives differently becomes a metadata conflict and a warning.
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

// Makes exactly the listed dataset planes take part (0-based, in file order) and marks them chosen; throws
// DatasetError for an index out of range or listed twice.
void selectPlanes(Dataset& dataset, const std::vector<int>& planeIndices);
std::vector<int> usedPlanes(const Dataset& dataset);

// The effective defocus of a plane: its own, else from zStep / focusPlane (a length), else Unknown.
PlaneDefocus planeDefocus(const Dataset& dataset, int planeIndex);
// A measured z-stack: a z step is known and it places at least one plane that takes part (a plane without a
// defocus of its own). Core's assumptions for such data: io/Assumptions.h.
bool isZStack(const Dataset& dataset);

// ---- Units (base/Units.h: one parser, one rule for bare numbers) ------------------------------------

// "-1w" (waves of W020), "0", "0.9um" (axial length); std::nullopt if neither.
std::optional<PlaneDefocus> defocusFromText(const std::string& text);

} // namespace wfs
