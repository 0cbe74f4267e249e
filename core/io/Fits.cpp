#include "io/Fits.h"

#include <fitsio.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>

namespace wfs {

namespace {
constexpr long long kMaxPixels = 1LL << 28; // 268 M pixels (2 GiB as doubles): refuse beyond

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
        std::string v = value;
        if (v.front() == '\'') {
            char text[FLEN_VALUE] = {};
            int s = 0;
            fits_read_key(f, TSTRING, name, text, nullptr, &s);
            if (s == 0)
                content.strings[name] = text;
        } else {
            double number = 0;
            int s = 0;
            fits_read_key(f, TDOUBLE, name, &number, nullptr, &s);
            if (s == 0)
                content.numbers[name] = number;
        }
    }
}
} // namespace

FitsContent readFits(const std::string& path)
{
    auto fail = [&](const std::string& what) { return std::runtime_error(path + ": " + what); };
    if (!std::filesystem::exists(path))
        throw fail("file not found");
    int status = 0;
    fitsfile* raw = nullptr;
    if (fits_open_file(&raw, path.c_str(), READONLY, &status))
        throw fail("not a readable FITS file (" + fitsError(status) + ")");
    FitsHandle file(raw);
    int hduCount = 0;
    fits_get_num_hdus(raw, &hduCount, &status);
    FitsContent content;
    bool keywordsRead = false;
    for (int hdu = 1; hdu <= hduCount; ++hdu) {
        int type = 0;
        status = 0;
        if (fits_movabs_hdu(raw, hdu, &type, &status))
            throw fail("HDU " + std::to_string(hdu) + " is unreadable (" + fitsError(status) + "); the file may be truncated");
        if (type != IMAGE_HDU)
            continue;
        int naxis = 0, bitpix = 0;
        long axes[3] = {0, 0, 0};
        if (fits_get_img_param(raw, 3, &bitpix, &naxis, axes, &status))
            throw fail("HDU " + std::to_string(hdu) + ": bad image header (" + fitsError(status) + ")");
        if (naxis == 0)
            continue; // an empty primary HDU before extensions
        if (naxis < 2 || naxis > 3)
            throw fail("HDU " + std::to_string(hdu) + " has " + std::to_string(naxis) + " axes; only 2-D images and 3-D cubes are supported");
        const long width = axes[0], height = axes[1], depth = naxis == 3 ? axes[2] : 1;
        if (width <= 0 || height <= 0 || depth <= 0)
            throw fail("HDU " + std::to_string(hdu) + " has a zero-size image");
        if ((long long)width * height * depth > kMaxPixels)
            throw fail("HDU " + std::to_string(hdu) + " is " + std::to_string(width) + " x " + std::to_string(height) + " x "
                       + std::to_string(depth) + " pixels, more than this program loads (" + std::to_string(kMaxPixels) + ")");
        if (!keywordsRead) {
            readKeywords(raw, content);
            keywordsRead = true;
        }
        for (long slice = 0; slice < depth; ++slice) {
            Image image{int(width), int(height)};
            long first[3] = {1, 1, slice + 1};
            double nan = std::numeric_limits<double>::quiet_NaN();
            int anyNull = 0;
            if (fits_read_pix(raw, TDOUBLE, first, width * height, &nan, image.pixels.data(), &anyNull, &status))
                throw fail("HDU " + std::to_string(hdu) + (depth > 1 ? " plane " + std::to_string(slice) : std::string())
                           + ": pixels unreadable (" + fitsError(status) + "); the file may be truncated");
            image.source = path + "[" + std::to_string(hdu - 1) + (depth > 1 ? "," + std::to_string(slice) : std::string()) + "]";
            content.planes.push_back(std::move(image));
        }
    }
    if (content.planes.empty())
        throw fail("no image data in the file");
    return content;
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
                fits_update_key(raw, TSTRING, name, const_cast<char*>(std::get<std::string>(k.value).c_str()), comment, &status);
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
