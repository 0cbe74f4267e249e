#pragma once
// FITS images through CFITSIO: every image HDU, 2-D images and 3-D cubes (one plane per slice),
// BITPIX 8/16/32/64/-32/-64 with BZERO/BSCALE applied, BLANK and NaN pixels read as NaN. FITS row 0 is
// the bottom row, which is the program's convention, so nothing is flipped.
#include "io/Image.h"
#include "io/ImageReaders.h"

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace wfs {

struct FitsKeyword {
    std::string name;
    std::variant<double, long long, bool, std::string> value;
    std::string comment;
};

struct FitsContent {
    std::vector<Image> planes;                   // every plane of every image HDU, in file order
    std::map<std::string, double> numbers;       // numeric keywords of the first image HDU
    std::map<std::string, std::string> strings;  // string keywords of the first image HDU
    std::vector<std::string> warnings;           // e.g. later HDUs or slices unreadable (planes before them kept)
    int bitpix = 0;                              // BITPIX of the first image HDU
    double formatMaximum = 0.0;                  // largest scaled value of an integer BITPIX, 0 for floats
};

// Throws ImageReadError (a std::runtime_error) with a message that names the file and the problem.
// Sizes are checked against `limits` before pixel buffers are allocated. The path is opened as a
// plain disk file (no CFITSIO extended file-name syntax). When a later HDU or slice is unreadable,
// the planes read before it are kept and a warning says what was lost.
FitsContent readFits(const std::string& path, const ReadLimits& limits = {});
// The same on bytes in memory; `name` is used in messages and Image::source.
FitsContent readFitsBuffer(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits = {});

// Planes (all the same size) as the bytes of one 2-D image or a 3-D cube, float32 or float64, with
// the keywords in the primary header. Throws std::runtime_error. (Written in FitsWriter.cpp.)
std::string fitsBytes(const std::vector<Image>& planes, const std::vector<FitsKeyword>& keywords, bool float32 = false);
// The same written through io/OutputTransaction.h: a temporary made with O_EXCL beside the target,
// every write checked, renamed into place, so a failure never leaves a half-written file or a
// temporary; the name is used as it is (no CFITSIO syntax). Refuses to replace an existing file
// unless `overwrite`.
void writeFits(const std::string& path, const std::vector<Image>& planes, const std::vector<FitsKeyword>& keywords,
               bool float32 = false, bool overwrite = false);

} // namespace wfs
