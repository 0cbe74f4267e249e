#pragma once
// Reading PSF images from FITS, TIFF and PNG files into the program's one image type (row 0 at the
// bottom: TIFF and PNG rows are flipped on reading, FITS rows are kept).
//
// - FITS through CFITSIO (see io/Fits.h): every image HDU, 2-D images and 3-D cubes.
// - TIFF through libtiff: single and multi-page files; 8, 16 and 32-bit unsigned and signed integers,
//   32 and 64-bit IEEE floats; strips or tiles; contiguous or separate planes; every compression the
//   installed libtiff decodes (none, LZW, Deflate, PackBits, ZSTD, ...). Colour pages are converted to
//   luminance (Rec. 709 weights) with a warning.
// - PNG through libpng: 1 to 16-bit greyscale; palette and colour images are converted to luminance
//   with a warning; alpha is ignored with a warning.
//
// Sizes are checked against ReadLimits before any pixel buffer is allocated. A file whose later planes
// are unreadable (a truncated stack) keeps the planes read before the damage, with a warning; a file
// with no readable plane throws ImageReadError, whose message names the file and the problem.
#include "base/Image.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

class ImageReadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Throws ImageReadError unless `path` is a regular file this process may read: "file not found", "is a
// folder", "is not a regular file (a FIFO, device or socket)" (reading one could block forever),
// "permission denied", "the file is empty". Every reader calls it before opening anything; `what` names the
// kind of file expected ("an image file", "a session file (JSON)", "a truth file (JSON)", "a manifest").
void requireReadableFile(const std::string& path, const char* what = "an image file");

// Opens `path` for reading with one open call and checks the opened descriptor, not the path: opened without
// blocking (a FIFO swapped in after requireReadableFile opens at once) and kept only when it is a regular file. The
// descriptor (blocking reads again), or -1 with `why` set. Every read of a path goes through it or
// readRegularFile: no check-then-open race.
int openRegularFile(const std::string& path, std::string* why = nullptr);
// The whole of a small file (settings, sessions, manifests, sidecars, logs) read through openRegularFile. Throws
// ImageReadError naming the file and why: requireReadableFile's reasons, or more than `maxBytes` bytes ("too large
// for `what`").
std::string readRegularFile(const std::string& path, std::size_t maxBytes, const char* what);

enum class ImageFormat { Unknown, Fits, Tiff, Png };
const char* imageFormatName(ImageFormat format); // "FITS", "TIFF", "PNG", "unknown"

// The format from the file's first bytes (magic numbers), else from its suffix; Unknown when neither
// tells. Never throws.
ImageFormat detectImageFormat(const std::string& path);
ImageFormat detectImageFormat(const std::uint8_t* data, std::size_t size);

// The default limits are documented in the README ("Limits, plausible values and outputs").
struct ReadLimits {
    long long maxPixels = 1LL << 28;      // all planes of one file together (2 GiB as doubles)
    long long maxPlanePixels = 1LL << 26; // one plane (8192 x 8192)
    int maxDimension = 65536;             // width or height
    int maxPlanes = 100000;               // pages or slices of one file
    // Sizes and keywords only: every plane keeps its width, height and source but no pixels (Image::pixels
    // empty), so that a run's settings can be checked on a large stack's headers before its pixels are read.
    bool headersOnly = false;
};

// Empty when `planes` planes of `width` x `height` pixels are within `limits`, else a sentence saying which limit the
// size exceeds: what a reader refuses in a file, for images that come from elsewhere (the Python module's arrays),
// asked before their pixels are copied.
std::string imageSizeError(long long planes, long long width, long long height, const ReadLimits& limits = {});

struct ImageFileContent {
    ImageFormat format = ImageFormat::Unknown;
    std::vector<Image> planes;             // in file order; Image::source = "path[k]"
    std::map<std::string, double> numbers; // FITS: numeric keywords of the first image HDU
    // FITS: string keywords; TIFF: ImageDescription (ImageJ text or OME-XML), Software, DateTime, and Micro-Manager's
    // JSON: MicroManagerMetadata (the first page's tag 51123), MicroManagerSummary (the block at byte 40).
    std::map<std::string, std::string> strings;
    std::vector<std::string> warnings; // each names the file
    std::string damage;                // the warning that planes after the first were unreadable, also in `warnings`
    int bitsPerSample = 0;             // of the stored data (FITS: |BITPIX|)
    bool floatingPoint = false;        // stored as IEEE floats
    // The largest value the stored integer type holds after scaling (255 for 8-bit, 65535 for 16-bit
    // unsigned, BZERO + BSCALE * max for FITS), used as the default saturation level; 0 for floats.
    double formatMaximum = 0.0;
};

// By format (detectImageFormat); throws ImageReadError naming the file and the problem.
ImageFileContent readImageFile(const std::string& path, const ReadLimits& limits = {});

ImageFileContent readTiff(const std::string& path, const ReadLimits& limits = {});
ImageFileContent readPng(const std::string& path, const ReadLimits& limits = {});
ImageFileContent readFitsImage(const std::string& path, const ReadLimits& limits = {});

// The same readers on bytes in memory (`name` is used in messages and Image::source); the fuzz targets
// and tests use them. (FITS goes through a temporary file: CFITSIO's memory driver is not safe on
// malformed input.)
ImageFileContent readTiffMemory(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits = {});
ImageFileContent readPngMemory(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits = {});
ImageFileContent readFitsMemory(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits = {});

} // namespace wfs
