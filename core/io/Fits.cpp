#include "io/Fits.h"

#include <fitsio.h>
#include <unistd.h>

#include <algorithm>
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

std::string fitsError(int status)
{
    char text[FLEN_STATUS] = {};
    fits_get_errstatus(status, text);
    return text;
}

struct FitsCloser {
    void operator()(fitsfile* f) const
    {
        int status = 0;
        fits_close_file(f, &status);
    }
};
using FitsHandle = std::unique_ptr<fitsfile, FitsCloser>;

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
            std::replace(number.begin(), number.end(), 'D', 'E'); // Fortran exponents
            char* end = nullptr;
            const double parsed = std::strtod(number.c_str(), &end);
            if (end != number.c_str() && std::isfinite(parsed))
                content.numbers[name] = parsed;
        }
    }
}
} // namespace

namespace {

// Reads every image HDU of an open file. `name` is used in messages.
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
            damaged(where + " has " + std::to_string(naxis) + " axes of which more than three are longer than 1; only 2-D images and 3-D cubes are supported");
            break;
        }
        const long width = axes[0], height = axes[1], depth = naxis >= 3 ? axes[2] : 1;
        const std::string size = std::to_string(width) + " x " + std::to_string(height) + (depth > 1 ? " x " + std::to_string(depth) : std::string());
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
            Image image{int(width), int(height)};
            long first[kMaxAxes] = {1, 1, slice + 1, 1, 1, 1, 1, 1, 1};
            double nan = std::numeric_limits<double>::quiet_NaN();
            int anyNull = 0;
            if (fits_read_pix(raw, TDOUBLE, first, width * height, &nan, image.pixels.data(), &anyNull, &status)) {
                fits_clear_errmsg();
                damaged(where + (depth > 1 ? " plane " + std::to_string(slice) : std::string()) + ": pixels unreadable (" + fitsError(status)
                        + "); the file may be truncated");
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
    return content;
}

} // namespace

FitsContent readFits(const std::string& path, const ReadLimits& limits)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        throw ImageReadError(path + ": file not found");
    if (std::filesystem::is_directory(path, ec))
        throw ImageReadError(path + ": is a folder, not a file");
    int status = 0;
    fitsfile* raw = nullptr;
    // The disk-file driver takes the name literally: brackets and "+1" in a path are not CFITSIO syntax.
    if (fits_open_diskfile(&raw, path.c_str(), READONLY, &status)) {
        fits_clear_errmsg();
        throw ImageReadError(path + ": not a readable FITS file (" + fitsError(status) + ")");
    }
    FitsHandle file(raw);
    return readOpenFits(raw, path, limits);
}

FitsContent readFitsBuffer(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits)
{
    if (size < 2880)
        throw ImageReadError(name + ": not a readable FITS file (" + std::to_string(size) + " bytes, shorter than one FITS block)");
    // Through a temporary file and CFITSIO's disk driver, the path real files take: its memory driver
    // reads past buffers whose header promises more data than they hold (found by fuzzing).
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / "wfs-fits-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
        throw ImageReadError(name + ": cannot create a temporary file to read it");
    struct Remove {
        std::string path;
        ~Remove() { ::unlink(path.c_str()); }
    } remove{pattern};
    std::size_t written = 0;
    while (written < size) {
        const ssize_t n = ::write(fd, data + written, size - written);
        if (n <= 0)
            break;
        written += std::size_t(n);
    }
    ::close(fd);
    if (written != size)
        throw ImageReadError(name + ": cannot write a temporary file to read it");
    int status = 0;
    fitsfile* raw = nullptr;
    if (fits_open_diskfile(&raw, pattern.c_str(), READONLY, &status)) {
        fits_clear_errmsg();
        throw ImageReadError(name + ": not a readable FITS file (" + fitsError(status) + ")");
    }
    FitsHandle file(raw);
    return readOpenFits(raw, name, limits);
}

void writeFits(const std::string& path, const std::vector<Image>& planes, const std::vector<FitsKeyword>& keywords, bool float32, bool overwrite)
{
    auto fail = [&](const std::string& what) { return std::runtime_error(path + ": " + what); };
    if (planes.empty())
        throw fail("nothing to write");
    for (const Image& p : planes)
        if (p.width != planes.front().width || p.height != planes.front().height)
            throw fail("planes of different sizes cannot share one FITS cube");
    if (std::filesystem::exists(path) && !overwrite)
        throw fail("file exists; refusing to overwrite it (use --force)");

    const std::string temporary = path + ".part";
    std::filesystem::remove(temporary);
    int status = 0;
    fitsfile* raw = nullptr;
    if (fits_create_file(&raw, temporary.c_str(), &status))
        throw fail("cannot create the file (" + fitsError(status) + ")");
    {
        FitsHandle file(raw);
        long axes[3] = {planes.front().width, planes.front().height, long(planes.size())};
        const int naxis = planes.size() > 1 ? 3 : 2;
        fits_create_img(raw, float32 ? FLOAT_IMG : DOUBLE_IMG, naxis, axes, &status);
        for (const FitsKeyword& k : keywords) {
            char* comment = const_cast<char*>(k.comment.c_str());
            char* name = const_cast<char*>(k.name.c_str());
            if (auto d = std::get_if<double>(&k.value)) {
                double v = *d;
                fits_update_key(raw, TDOUBLE, name, &v, comment, &status);
            } else if (auto l = std::get_if<long long>(&k.value)) {
                LONGLONG v = *l;
                fits_update_key(raw, TLONGLONG, name, &v, comment, &status);
            } else if (auto b = std::get_if<bool>(&k.value)) {
                int v = *b ? 1 : 0;
                fits_update_key(raw, TLOGICAL, name, &v, comment, &status);
            } else {
                const std::string& text = std::get<std::string>(k.value);
                if (text.size() > 68) // the long-string (CONTINUE) convention keeps paths whole
                    fits_update_key_longstr(raw, name, const_cast<char*>(text.c_str()), comment, &status);
                else
                    fits_update_key(raw, TSTRING, name, const_cast<char*>(text.c_str()), comment, &status);
            }
        }
        for (size_t s = 0; s < planes.size() && status == 0; ++s) {
            long first[3] = {1, 1, long(s) + 1};
            fits_write_pix(raw, TDOUBLE, first, long(planes[s].pixels.size()), const_cast<double*>(planes[s].pixels.data()), &status);
        }
        if (status) {
            const std::string message = fitsError(status);
            file.reset();
            std::filesystem::remove(temporary);
            throw fail("write failed (" + message + ")");
        }
        int closeStatus = 0;
        fits_close_file(file.release(), &closeStatus);
        if (closeStatus) {
            std::filesystem::remove(temporary);
            throw fail("write failed (" + fitsError(closeStatus) + ")");
        }
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::filesystem::remove(temporary);
        throw fail("cannot move the finished file into place (" + ec.message() + ")");
    }
}

} // namespace wfs
