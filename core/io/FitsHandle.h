#pragma once
// CFITSIO's error text and an owning handle, shared by the FITS reader (Fits.cpp) and writer
// (FitsWriter.cpp). Internal to core/io.
#include <fitsio.h>

#include <memory>
#include <string>

namespace wfs::fitsio {

inline std::string fitsError(int status)
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

} // namespace wfs::fitsio
