// Writing FITS (io/Fits.h). Apart from the readers in Fits.cpp, which the fuzz targets build without Qt.
#include "io/Fits.h"
#include "io/FitsHandle.h"

#include "io/OutputTransaction.h"

#include <fitsio.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace wfs {

namespace {

using fitsio::fitsError;
using fitsio::FitsHandle;

std::string trimmedRight(std::string text)
{
    while (!text.empty() && text.back() == ' ')
        text.pop_back();
    return text;
}

// The longest prefix of `text` of at most `width` characters that ends at a word boundary.
std::string shortenedAtWord(const std::string& text, std::size_t width)
{
    if (text.size() <= width)
        return text;
    std::size_t cut = text.rfind(' ', width);
    if (cut == std::string::npos)
        return {};
    return trimmedRight(text.substr(0, cut));
}

void writeValue(fitsfile* f, const FitsKeyword& k, const std::string& comment, int* status)
{
    char* name = const_cast<char*>(k.name.c_str());
    char* text = const_cast<char*>(comment.c_str());
    if (auto d = std::get_if<double>(&k.value)) {
        double v = *d;
        fits_update_key(f, TDOUBLE, name, &v, text, status);
    } else if (auto l = std::get_if<long long>(&k.value)) {
        LONGLONG v = *l;
        fits_update_key(f, TLONGLONG, name, &v, text, status);
    } else if (auto b = std::get_if<bool>(&k.value)) {
        int v = *b ? 1 : 0;
        fits_update_key(f, TLOGICAL, name, &v, text, status);
    } else {
        const std::string& value = std::get<std::string>(k.value);
        if (value.size() > 68) {                // the long-string (CONTINUE) convention keeps paths whole
            fits_write_key_longwarn(f, status); // LONGSTRN, which announces the convention (once per HDU)
            fits_update_key_longstr(f, name, const_cast<char*>(value.c_str()), text, status);
        } else {
            fits_update_key(f, TSTRING, name, const_cast<char*>(value.c_str()), text, status);
        }
    }
}

void writeCards(fitsfile* f, const std::string& kind, const std::string& text, int* status)
{
    for (const std::string& line : wrapWords(text, 72)) {
        if (kind == "HISTORY")
            fits_write_history(f, line.c_str(), status);
        else
            fits_write_comment(f, line.c_str(), status);
    }
}

void writeKeyword(fitsfile* f, const FitsKeyword& k, int* status)
{
    if (k.name == "COMMENT" || k.name == "HISTORY") {
        const std::string* text = std::get_if<std::string>(&k.value);
        writeCards(f, k.name, text ? *text : k.comment, status);
        return;
    }
    const std::string wanted = trimmedRight(k.comment);
    writeValue(f, k, wanted, status);
    const auto* text = std::get_if<std::string>(&k.value);
    if (*status || wanted.empty() || (text && text->size() > 68))
        return;
    // CFITSIO cuts a comment that overruns the card wherever the card ends: read it back, and when it
    // was cut, write the longest whole-word prefix that fits and the full comment in COMMENT cards.
    char value[FLEN_VALUE] = {}, written[FLEN_COMMENT] = {};
    fits_read_keyword(f, k.name.c_str(), value, written, status);
    if (*status || trimmedRight(written) == wanted)
        return;
    writeValue(f, k, shortenedAtWord(wanted, std::strlen(written)), status);
    writeCards(f, "COMMENT", k.name + ": " + wanted, status);
}

void writeImage(fitsfile* f, const FitsHdu& hdu, bool float32, int* status)
{
    for (const Image& p : hdu.planes)
        if (p.width != hdu.planes.front().width || p.height != hdu.planes.front().height)
            throw std::runtime_error("planes of different sizes cannot share one FITS cube");
    if (hdu.planes.empty()) {
        fits_create_img(f, BYTE_IMG, 0, nullptr, status);
    } else {
        long axes[3] = {hdu.planes.front().width, hdu.planes.front().height, long(hdu.planes.size())};
        fits_create_img(f, float32 ? FLOAT_IMG : DOUBLE_IMG, hdu.planes.size() > 1 ? 3 : 2, axes, status);
    }
    if (!hdu.extname.empty())
        fits_update_key(f, TSTRING, "EXTNAME", const_cast<char*>(hdu.extname.c_str()), const_cast<char*>("extension name"), status);
    for (const FitsKeyword& k : hdu.keywords)
        writeKeyword(f, k, status);
    for (size_t s = 0; s < hdu.planes.size() && *status == 0; ++s) {
        long first[3] = {1, 1, long(s) + 1};
        fits_write_pix(f, TDOUBLE, first, long(hdu.planes[s].pixels.size()), const_cast<double*>(hdu.planes[s].pixels.data()), status);
    }
}

void writeTable(fitsfile* f, const FitsHdu& hdu, int* status)
{
    const size_t columns = hdu.columns.size();
    const size_t rows = hdu.columns.front().texts.empty() ? hdu.columns.front().numbers.size() : hdu.columns.front().texts.size();
    std::vector<std::string> forms(columns);
    for (size_t c = 0; c < columns; ++c) {
        const FitsColumn& column = hdu.columns[c];
        const size_t length = column.texts.empty() ? column.numbers.size() : column.texts.size();
        if (length != rows)
            throw std::runtime_error("the columns of table " + hdu.extname + " differ in length");
        if (column.texts.empty()) {
            forms[c] = "1D";
        } else {
            size_t width = 1;
            for (const std::string& t : column.texts)
                width = std::max(width, t.size());
            forms[c] = std::to_string(width) + "A";
        }
    }
    std::vector<char*> names(columns), formats(columns), units(columns);
    for (size_t c = 0; c < columns; ++c) {
        names[c] = const_cast<char*>(hdu.columns[c].name.c_str());
        formats[c] = const_cast<char*>(forms[c].c_str());
        units[c] = const_cast<char*>(hdu.columns[c].unit.c_str());
    }
    fits_create_tbl(f, BINARY_TBL, LONGLONG(rows), int(columns), names.data(), formats.data(), units.data(),
                    hdu.extname.empty() ? nullptr : const_cast<char*>(hdu.extname.c_str()), status);
    for (const FitsKeyword& k : hdu.keywords)
        writeKeyword(f, k, status);
    for (size_t c = 0; c < columns && *status == 0 && rows > 0; ++c) {
        const FitsColumn& column = hdu.columns[c];
        if (column.texts.empty()) {
            fits_write_col(f, TDOUBLE, int(c) + 1, 1, 1, LONGLONG(rows), const_cast<double*>(column.numbers.data()), status);
        } else {
            std::vector<char*> texts;
            for (const std::string& t : column.texts)
                texts.push_back(const_cast<char*>(t.c_str()));
            fits_write_col(f, TSTRING, int(c) + 1, 1, 1, LONGLONG(rows), texts.data(), status);
        }
    }
}

} // namespace

std::vector<std::string> wrapWords(const std::string& text, std::size_t width)
{
    std::vector<std::string> lines;
    std::string line;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ')
            ++i;
        std::size_t end = text.find(' ', i);
        if (end == std::string::npos)
            end = text.size();
        std::string word = text.substr(i, end - i);
        i = end;
        if (word.empty())
            break;
        while (word.size() > width) { // only a word longer than a line is ever split
            if (!line.empty())
                lines.push_back(line), line.clear();
            lines.push_back(word.substr(0, width));
            word = word.substr(width);
        }
        if (!line.empty() && line.size() + 1 + word.size() > width)
            lines.push_back(line), line.clear();
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty() || lines.empty())
        lines.push_back(line);
    return lines;
}

std::string fitsBytes(const std::vector<FitsHdu>& hdusIn, bool float32)
{
    if (hdusIn.empty())
        throw std::runtime_error("nothing to write");
    std::vector<FitsHdu> hdus = hdusIn;
    if (!hdus.front().columns.empty())
        hdus.insert(hdus.begin(), FitsHdu{}); // a table cannot be the primary HDU
    for (const FitsHdu& h : hdus)
        if (!h.columns.empty() && !h.planes.empty())
            throw std::runtime_error("an HDU holds an image or a table, not both");
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
    for (const FitsHdu& hdu : hdus) {
        if (status)
            break;
        if (hdu.columns.empty())
            writeImage(raw, hdu, float32, &status);
        else
            writeTable(raw, hdu, &status);
    }
    // The end of the last HDU's padded data is the file's length; the buffer may be larger.
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

std::string fitsBytes(const std::vector<Image>& planes, const std::vector<FitsKeyword>& keywords, bool float32)
{
    if (planes.empty())
        throw std::runtime_error("nothing to write");
    return fitsBytes(std::vector<FitsHdu>{FitsHdu{"", planes, {}, keywords}}, float32);
}

void writeFits(const std::string& path, const std::vector<Image>& planes, const std::vector<FitsKeyword>& keywords, bool float32,
               bool overwrite)
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
