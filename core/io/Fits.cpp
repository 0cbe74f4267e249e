#include "io/Fits.h"
#include "io/FitsHandle.h"
#include "io/ReaderInput.h"

#include <fitsio.h>
#include <zlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace wfs {

namespace {

using fitsio::fitsError;
using fitsio::FitsHandle;

void readKeywords(fitsfile* f, FitsContent& content)
{
    int status = 0, count = 0;
    fits_get_hdrspace(f, &count, nullptr, &status);
    for (int i = 1; i <= count && status == 0; ++i) {
        char name[FLEN_KEYWORD] = {}, value[FLEN_VALUE] = {}, comment[FLEN_COMMENT] = {};
        int keyStatus = 0;
        fits_read_keyn(f, i, name, value, comment, &keyStatus);
        if (keyStatus != 0 || value[0] == '\0')
            continue;
        // Parse the value card we already have instead of looking the keyword up again by name:
        // CFITSIO's lookup treats names as wildcard patterns, and a fuzzed name made it loop forever.
        const std::string v = value;
        if (v.front() == '\'') {
            std::string text;
            for (size_t c = 1; c < v.size(); ++c) {
                if (v[c] == '\'') {
                    if (c + 1 < v.size() && v[c + 1] == '\'') { // '' is an escaped quote
                        text += '\'';
                        ++c;
                        continue;
                    }
                    break;
                }
                text += v[c];
            }
            while (!text.empty() && text.back() == ' ') // trailing blanks are not significant
                text.pop_back();
            content.strings[name] = text;
        } else {
            std::string number = v;
            while (!number.empty() && number.back() == ' ')
                number.pop_back();
            std::replace(number.begin(), number.end(), 'D', 'E'); // Fortran exponents
            char* end = nullptr;
            const double parsed = std::strtod(number.c_str(), &end);
            // Only a whole finite number is one ("6.33E-07x", "NAN", a logical T are not): anything else is kept as
            // its text, so that a metadata keyword holding it is said with its value rather than taken as absent.
            if (end != number.c_str() && *end == '\0' && std::isfinite(parsed))
                content.numbers[name] = parsed;
            else
                content.strings[name] = number;
        }
    }
}
} // namespace

namespace {

// Reads every image HDU of an open file. `name` is used in messages. Long on purpose, like the TIFF
// reader: one loop over the HDUs whose every check on hostile input keeps the planes read before it.
FitsContent readOpenFits(fitsfile* raw, const std::string& name, const ReadLimits& limits)
{
    auto fail = [&](const std::string& what) { return ImageReadError(name + ": " + what); };
    int status = 0;
    int hduCount = 0;
    if (fits_get_num_hdus(raw, &hduCount, &status))
        throw fail("not a readable FITS file (" + fitsError(status) + ")");
    FitsContent content;
    bool keywordsRead = false;
    long long total = 0;
    // Problems after the first plane keep what was read: a warning instead of an exception.
    auto damaged = [&](const std::string& what) {
        if (content.planes.empty())
            throw fail(what);
        content.warnings.push_back(name + ": " + what + "; kept the " + std::to_string(content.planes.size()) + " plane(s) before it");
        content.damage = content.warnings.back();
    };
    for (int hdu = 1; hdu <= hduCount; ++hdu) {
        int type = 0;
        status = 0;
        const std::string where = "HDU " + std::to_string(hdu);
        if (fits_movabs_hdu(raw, hdu, &type, &status)) {
            fits_clear_errmsg();
            damaged(where + " is unreadable (" + fitsError(status) + "); the file may be truncated");
            break;
        }
        if (type != IMAGE_HDU)
            continue;
        constexpr int kMaxAxes = 9;
        int naxis = 0, bitpix = 0;
        long axes[kMaxAxes] = {};
        if (fits_get_img_param(raw, kMaxAxes, &bitpix, &naxis, axes, &status)) {
            fits_clear_errmsg();
            damaged(where + ": bad image header (" + fitsError(status) + ")");
            break;
        }
        if (naxis == 0)
            continue; // an empty primary HDU before extensions
        if (naxis < 2 || naxis > kMaxAxes) {
            damaged(where + " has " + std::to_string(naxis) + " axes; only 2-D images and 3-D cubes are supported");
            break;
        }
        bool degenerate = true; // axes beyond the third must have length 1
        for (int a = 3; a < naxis; ++a)
            degenerate = degenerate && axes[a] == 1;
        if (!degenerate) {
            damaged(where + " has " + std::to_string(naxis)
                    + " axes of which more than three are longer than 1; only 2-D images and 3-D cubes are supported");
            break;
        }
        const long width = axes[0], height = axes[1], depth = naxis >= 3 ? axes[2] : 1;
        const std::string size =
            std::to_string(width) + " x " + std::to_string(height) + (depth > 1 ? " x " + std::to_string(depth) : std::string());
        if (width <= 0 || height <= 0 || depth <= 0) {
            damaged(where + " has a zero-size image (" + size + ")");
            break;
        }
        if (width > limits.maxDimension || height > limits.maxDimension || (long long)width * height > limits.maxPlanePixels
            || depth > limits.maxPlanes || total + (long long)width * height * depth > limits.maxPixels) {
            damaged(where + " is " + size + " pixels, more than this program loads (at most " + std::to_string(limits.maxPlanePixels)
                    + " pixels per plane, " + std::to_string(limits.maxPixels) + " per file)");
            break;
        }
        total += (long long)width * height * depth;
        if (!keywordsRead) {
            readKeywords(raw, content);
            keywordsRead = true;
            content.bitpix = bitpix;
            if (bitpix > 0) {
                // The largest stored integer after scaling: 255 for BITPIX 8, 65535 for 16 with BZERO 32768.
                const double zero = content.numbers.count("BZERO") ? content.numbers["BZERO"] : 0.0;
                const double scale = content.numbers.count("BSCALE") ? content.numbers["BSCALE"] : 1.0;
                const double stored = bitpix == 8 ? 255.0 : std::ldexp(1.0, bitpix - 1) - 1.0;
                content.formatMaximum = zero + scale * stored;
            }
        }
        bool stop = false;
        for (long slice = 0; slice < depth; ++slice) {
            Image image = limits.headersOnly ? Image{} : Image{int(width), int(height)};
            image.width = int(width);
            image.height = int(height);
            long first[kMaxAxes] = {1, 1, slice + 1, 1, 1, 1, 1, 1, 1};
            double nan = std::numeric_limits<double>::quiet_NaN();
            int anyNull = 0;
            if (!limits.headersOnly && fits_read_pix(raw, TDOUBLE, first, width * height, &nan, image.pixels.data(), &anyNull, &status)) {
                fits_clear_errmsg();
                damaged(where + (depth > 1 ? " plane " + std::to_string(slice) : std::string()) + ": pixels unreadable ("
                        + fitsError(status) + "); the file may be truncated");
                stop = true;
                break;
            }
            image.source = name;
            image.source += '[';
            image.source += std::to_string(hdu - 1);
            if (depth > 1)
                image.source += ',' + std::to_string(slice);
            image.source += ']';
            content.planes.push_back(std::move(image));
        }
        if (stop)
            break;
    }
    if (content.planes.empty())
        throw fail("no image data in the file");
    // A writer that declares the stack's plane count (this program's NPLANES) and a file that holds fewer: cut short,
    // or still being written (a camera writing one HDU at a time). Damage, so that no front end fits the planes left
    // as if they were the stack.
    const auto declared = content.numbers.find("NPLANES");
    if (content.damage.empty() && declared != content.numbers.end() && declared->second > double(content.planes.size())
        && declared->second <= double(limits.maxPlanes)) {
        const std::string held = std::to_string(content.planes.size());
        content.warnings.push_back(name + ": its header declares NPLANES = " + std::to_string((long long)declared->second)
                                   + " planes and the file holds " + held + "; it is cut short or still being written; kept the " + held
                                   + " plane(s) it holds");
        content.damage = content.warnings.back();
    }
    return content;
}

} // namespace

namespace {

// A temporary file that is removed when it goes out of scope.
struct TemporaryFile {
    std::string path;
    int fd = -1;
    explicit TemporaryFile(const std::string& name)
    {
        std::error_code ec;
        path = (std::filesystem::temp_directory_path(ec) / "wfs-fits-XXXXXX").string();
        fd = ::mkstemp(path.data());
        if (fd < 0)
            throw ImageReadError(name + ": cannot create a temporary file to read it");
    }
    ~TemporaryFile()
    {
        if (fd >= 0)
            ::close(fd);
        ::unlink(path.c_str());
    }
    bool write(const void* data, std::size_t size)
    {
        const char* p = static_cast<const char*>(data);
        while (size > 0) {
            const ssize_t n = ::write(fd, p, size);
            if (n <= 0)
                return false;
            p += n;
            size -= std::size_t(n);
        }
        return true;
    }
};

// The compression CFITSIO would undo in memory by itself (sizing its buffer from what the file claims),
// or nullptr: FITS itself starts with "SIMPLE".
const char* compressionName(const unsigned char* head, std::size_t size)
{
    if (size < 2)
        return nullptr;
    if (head[0] == 0x1f && head[1] == 0x8b)
        return "gzip";
    if (head[0] == 0x1f && head[1] == 0x9d)
        return "Unix compress (.Z)";
    if (head[0] == 0x1f && head[1] == 0x1e)
        return "pack (.z)";
    if (size >= 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4)
        return "zip";
    if (size >= 3 && head[0] == 'B' && head[1] == 'Z' && head[2] == 'h')
        return "bzip2";
    return nullptr;
}

// Inflates a gzip file into `out` in bounded chunks, stopping with an error once the data exceed what a
// file within `limits` can hold: memory stays small whatever the file claims to hold.
void inflateGzip(const std::string& gzPath, TemporaryFile& out, const std::string& name, const ReadLimits& limits)
{
    const unsigned long long maxBytes = (unsigned long long)limits.maxPixels * 8ULL + (16ULL << 20);
    gzFile in = gzopen(gzPath.c_str(), "rb");
    if (!in)
        throw ImageReadError(name + ": cannot open the gzip-compressed file");
    struct Closer {
        gzFile f;
        ~Closer() { gzclose(f); }
    } closer{in};
    std::vector<char> chunk(1 << 20);
    unsigned long long total = 0;
    for (;;) {
        const int n = gzread(in, chunk.data(), unsigned(chunk.size()));
        if (n < 0) {
            int code = 0;
            throw ImageReadError(name + ": corrupt gzip data (" + std::string(gzerror(in, &code)) + ")");
        }
        if (n == 0)
            break;
        total += (unsigned long long)n;
        if (total > maxBytes)
            throw ImageReadError(name + ": the gzip-compressed data expand to more than " + std::to_string(maxBytes)
                                 + " bytes, more than a FITS file this program loads holds (at most " + std::to_string(limits.maxPixels)
                                 + " pixels per file)");
        if (!out.write(chunk.data(), std::size_t(n)))
            throw ImageReadError(name + ": cannot write a temporary file to decompress it");
    }
}

FitsContent openAndRead(const std::string& diskPath, const std::string& name, const ReadLimits& limits)
{
    int status = 0;
    fitsfile* raw = nullptr;
    // The disk-file driver takes the name literally: brackets and "+1" in a path are not CFITSIO syntax.
    if (fits_open_diskfile(&raw, diskPath.c_str(), READONLY, &status)) {
        fits_clear_errmsg();
        throw ImageReadError(name + ": not a readable FITS file (" + fitsError(status) + ")");
    }
    FitsHandle file(raw);
    return readOpenFits(raw, name, limits);
}

// Opens `diskPath` (whose first bytes are `head`): compressed files are refused or inflated (gzip) to
// a temporary first, so CFITSIO never decompresses into memory itself.
FitsContent readFitsFile(const std::string& diskPath, const unsigned char* head, std::size_t headSize, const std::string& name,
                         const ReadLimits& limits)
{
    const char* compression = compressionName(head, headSize);
    if (!compression)
        return openAndRead(diskPath, name, limits);
    if (std::string(compression) != "gzip")
        throw ImageReadError(name + ": compressed with " + compression + ", which this program does not read; decompress it first");
    TemporaryFile inflated(name);
    inflateGzip(diskPath, inflated, name, limits);
    ::close(inflated.fd);
    inflated.fd = -1;
    return openAndRead(inflated.path, name, limits);
}

} // namespace

FitsContent readFits(const std::string& path, const ReadLimits& limits)
{
    // One open, its checks on the opened descriptor (a regular file, opened without blocking): CFITSIO and zlib then
    // read that same file through /proc/self/fd, so a FIFO swapped in after the checks cannot block the reader.
    const imageio::OpenFile file(path, limits);
    unsigned char head[4] = {};
    const ssize_t got = ::pread(file.fd, head, sizeof head, 0);
    if (got < 0)
        throw ImageReadError(path + ": cannot read the file (" + std::string(std::strerror(errno)) + ")");
    std::string opened = path;
#ifdef __linux__
    const std::string byDescriptor = "/proc/self/fd/" + std::to_string(file.fd);
    if (::access(byDescriptor.c_str(), R_OK) == 0)
        opened = byDescriptor;
#endif
    return readFitsFile(opened, head, std::size_t(got), path, limits);
}

FitsContent readFitsBuffer(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits)
{
    if (size < 2880 && !compressionName(data, size))
        throw ImageReadError(name + ": not a readable FITS file (" + std::to_string(size) + " bytes, shorter than one FITS block)");
    // Through a temporary file and CFITSIO's disk driver, the path real files take: its memory driver
    // reads past buffers whose header promises more data than they hold (found by fuzzing).
    TemporaryFile copy(name);
    if (!copy.write(data, size))
        throw ImageReadError(name + ": cannot write a temporary file to read it");
    ::close(copy.fd);
    copy.fd = -1;
    return readFitsFile(copy.path, data, size, name, limits);
}

} // namespace wfs
