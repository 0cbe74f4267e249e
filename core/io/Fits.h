#pragma once
// FITS images through CFITSIO: every image HDU, 2-D images and 3-D cubes (one plane per slice),
// BITPIX 8/16/32/64/-32/-64 with BZERO/BSCALE applied, BLANK and NaN pixels read as NaN. FITS row 0 is
// the bottom row, which is the program's convention, so nothing is flipped.
#include "base/Image.h"
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
    std::vector<Image> planes;                  // every plane of every image HDU, in file order
    std::map<std::string, double> numbers;      // numeric keywords of the first image HDU
    std::map<std::string, std::string> strings; // string keywords of the first image HDU
    std::vector<std::string> warnings;          // e.g. later HDUs or slices unreadable (planes before them kept)
    std::string damage;                         // that warning (planes lost), also in `warnings`
    int bitpix = 0;                             // BITPIX of the first image HDU
    double formatMaximum = 0.0;                 // largest scaled value of an integer BITPIX, 0 for floats
};

// Throws ImageReadError (a std::runtime_error) with a message that names the file and the problem.
// Sizes are checked against `limits` before pixel buffers are allocated. The path is opened as a
// plain disk file (no CFITSIO extended file-name syntax). When a later HDU or slice is unreadable,
// the planes read before it are kept and a warning says what was lost.
FitsContent readFits(const std::string& path, const ReadLimits& limits = {});
// The same on bytes in memory; `name` is used in messages and Image::source.
FitsContent readFitsBuffer(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits = {});

// ---- Writing (FitsWriter.cpp) -------------------------------------------------------------------
//
// Keywords are written in order. A keyword named "COMMENT" or "HISTORY" is written as such cards, its
// text (the value's string) wrapped at word boundaries. A comment that does not fit on its keyword's
// 80-column card is shortened at a word boundary (never cut mid-word) and written whole in COMMENT
// cards after it. Strings longer than a card use the long-string (CONTINUE) convention.

// One binary-table column: numbers (written as 64-bit floats) or, when `texts` is not empty, strings.
struct FitsColumn {
    std::string name; // TTYPEn
    std::string unit; // TUNITn; empty = none
    std::vector<double> numbers;
    std::vector<std::string> texts;
};

// One header-data unit: an image (a 2-D plane, or a cube with one plane per slice), or a binary table
// (columns, all of one length), or a header only (neither).
struct FitsHdu {
    std::string extname; // EXTNAME; empty = not written
    std::vector<Image> planes;
    std::vector<FitsColumn> columns;
    std::vector<FitsKeyword> keywords;
};

// The HDUs as the bytes of one FITS file, images float32 or float64. The first HDU is the primary one
// (it must not be a table; a file starting with a table gets an empty primary HDU in front). Throws
// std::runtime_error.
std::string fitsBytes(const std::vector<FitsHdu>& hdus, bool float32 = false);
// Planes (all the same size) as the bytes of one 2-D image or a 3-D cube, with the keywords in the
// primary header: fitsBytes({{"", planes, {}, keywords}}, float32).
std::string fitsBytes(const std::vector<Image>& planes, const std::vector<FitsKeyword>& keywords, bool float32 = false);
// The same written through io/OutputTransaction.h: a temporary made with O_EXCL beside the target,
// every write checked, renamed into place, so a failure never leaves a half-written file or a
// temporary; the name is used as it is (no CFITSIO syntax). Refuses to replace an existing file
// unless `overwrite`.
void writeFits(const std::string& path, const std::vector<Image>& planes, const std::vector<FitsKeyword>& keywords, bool float32 = false,
               bool overwrite = false);

// Splits text into lines of at most `width` characters at spaces (a word longer than `width` is the
// only thing ever split). For COMMENT and HISTORY cards (width 72).
std::vector<std::string> wrapWords(const std::string& text, std::size_t width);

} // namespace wfs
