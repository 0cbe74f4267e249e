// Writing FITS (io/Fits.h). Apart from the readers in Fits.cpp, which the fuzz targets build without Qt.
#include "io/Fits.h"
#include "io/FitsHandle.h"

#include "io/OutputTransaction.h"

#include <fitsio.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace wfs {

namespace {

using fitsio::fitsError;
using fitsio::FitsHandle;

} // namespace

std::string fitsBytes(const std::vector<Image>& planes, const std::vector<FitsKeyword>& keywords, bool float32)
{
    if (planes.empty())
        throw std::runtime_error("nothing to write");
    for (const Image& p : planes)
        if (p.width != planes.front().width || p.height != planes.front().height)
            throw std::runtime_error("planes of different sizes cannot share one FITS cube");
    // CFITSIO writes into memory; the file itself goes through io/OutputTransaction.h. So CFITSIO never
    // sees the output name (no extended file-name syntax: "p[1].fits" is a name) nor creates files.
    struct Memory {
        void* data = nullptr;
        std::size_t size = 0;
        ~Memory() { std::free(data); }
    } memory;
    int status = 0;
    fitsfile* raw = nullptr;
    if (fits_create_memfile(&raw, &memory.data, &memory.size, 2880 * 16, std::realloc, &status)) {
        fits_clear_errmsg();
        throw std::runtime_error("cannot create the FITS data (" + fitsError(status) + ")");
    }
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
    // The end of the (only) HDU's padded data is the file's length; the buffer may be larger.
    LONGLONG headStart = 0, dataStart = 0, dataEnd = 0;
    fits_flush_file(raw, &status);
    fits_get_hduaddrll(raw, &headStart, &dataStart, &dataEnd, &status);
    if (status) {
        fits_clear_errmsg();
        throw std::runtime_error("cannot encode the FITS data (" + fitsError(status) + ")");
    }
    int closeStatus = 0;
    fits_close_file(file.release(), &closeStatus);
    if (closeStatus || std::size_t(dataEnd) > memory.size) {
        fits_clear_errmsg();
        throw std::runtime_error("cannot encode the FITS data (" + fitsError(closeStatus) + ")");
    }
    return std::string(static_cast<const char*>(memory.data), std::size_t(dataEnd));
}

void writeFits(const std::string& path, const std::vector<Image>& planes, const std::vector<FitsKeyword>& keywords, bool float32, bool overwrite)
{
    std::string bytes;
    try {
        bytes = fitsBytes(planes, keywords, float32);
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    writeFileAtomically(path, QByteArray::fromStdString(bytes), overwrite);
}

} // namespace wfs
