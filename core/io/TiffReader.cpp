// The TIFF reader (libtiff on an io/ReaderInput.h stream): readTiff and readTiffMemory of io/ImageReaders.h.
#include "io/ImageReaders.h"
#include "io/ReaderInput.h"

#include <tiffio.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

namespace wfs {

using imageio::MemoryStream;
using imageio::OpenFile;
using imageio::streamRead;

namespace {

std::string sizeText(long long width, long long height)
{
    return std::to_string(width) + " x " + std::to_string(height);
}

tmsize_t tiffRead(thandle_t handle, void* buffer, tmsize_t count)
{
    if (count <= 0)
        return 0;
    return tmsize_t(streamRead(*static_cast<MemoryStream*>(handle), buffer, std::size_t(count)));
}

tmsize_t tiffWrite(thandle_t, void*, tmsize_t)
{
    return 0;
}

toff_t tiffSeek(thandle_t handle, toff_t offset, int whence)
{
    auto* s = static_cast<MemoryStream*>(handle);
    long double target = 0;
    switch (whence) {
    case SEEK_SET:
        target = (long double)offset;
        break;
    case SEEK_CUR:
        target = (long double)s->position + (long double)(std::int64_t)offset;
        break;
    case SEEK_END:
        target = (long double)s->size + (long double)(std::int64_t)offset;
        break;
    default:
        return toff_t(-1);
    }
    if (target < 0 || target > (long double)std::numeric_limits<std::size_t>::max() / 2)
        return toff_t(-1);
    s->position = std::size_t(target);
    return toff_t(s->position);
}

int tiffClose(thandle_t)
{
    return 0;
}

toff_t tiffSize(thandle_t handle)
{
    return toff_t(static_cast<MemoryStream*>(handle)->size);
}

int tiffMap(thandle_t, void**, toff_t*)
{
    return 0;
}

void tiffUnmap(thandle_t, void*, toff_t)
{
}

int tiffError(TIFF*, void* user, const char* module, const char* format, va_list args)
{
    auto* s = static_cast<MemoryStream*>(user);
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    if (!s->errors.empty())
        s->errors += "; ";
    s->errors += (module && *module ? std::string(module) + ": " : std::string()) + text;
    if (s->errors.size() > 2000)
        s->errors.resize(2000);
    return 1; // handled: libtiff does not print it
}

int tiffWarning(TIFF*, void* user, const char*, const char* format, va_list args)
{
    char text[512];
    std::vsnprintf(text, sizeof text, format, args);
    static_cast<MemoryStream*>(user)->lastWarning = text; // unknown tags and the like: not worth telling
    return 1;
}

// Micro-Manager's summary metadata (its acquisition settings, "z-step_um" and "PixelSize_um" among them): JSON that its
// multi-page TIFF writer puts at byte 40, after the marker 2355492 and the length at bytes 32 and 36, in the file's
// byte order. Empty for any other file.
std::string micromanagerSummary(MemoryStream& stream)
{
    const std::size_t saved = stream.position;
    std::string json;
    std::uint8_t head[40];
    stream.position = 0;
    const bool little = stream.size > 40 && streamRead(stream, head, 40) == 40 && head[0] == 'I' && head[1] == 'I';
    const bool big = !little && stream.position == 40 && head[0] == 'M' && head[1] == 'M';
    if (little || big) {
        auto word = [&](int at) {
            return little ? std::uint32_t(head[at]) | std::uint32_t(head[at + 1]) << 8 | std::uint32_t(head[at + 2]) << 16
                                | std::uint32_t(head[at + 3]) << 24
                          : std::uint32_t(head[at + 3]) | std::uint32_t(head[at + 2]) << 8 | std::uint32_t(head[at + 1]) << 16
                                | std::uint32_t(head[at]) << 24;
        };
        const std::uint32_t length = word(36);
        if (word(32) == 2355492u && length > 0 && length <= (4u << 20) && 40 + std::size_t(length) <= stream.size) {
            json.resize(length);
            if (streamRead(stream, json.data(), length) != length)
                json.clear();
        }
    }
    stream.position = saved;
    return json;
}

// Micro-Manager's per-image metadata of the current page ("PixelSizeUm" among them): JSON in its private tag 51123,
// which libtiff reads as an anonymous field (counted bytes). Empty when the page has none.
std::string micromanagerImageMetadata(TIFF* tif)
{
    constexpr ttag_t kMicroManagerTag = 51123;
    const TIFFField* field = TIFFFindField(tif, kMicroManagerTag, TIFF_ANY);
    if (!field)
        return {};
    const TIFFDataType type = TIFFFieldDataType(field);
    if (type != TIFF_ASCII && type != TIFF_BYTE && type != TIFF_UNDEFINED)
        return {};
    const char* data = nullptr;
    std::size_t count = 0;
    if (TIFFFieldPassCount(field)) {
        void* value = nullptr;
        if (TIFFFieldReadCount(field) == TIFF_VARIABLE2) {
            std::uint32_t n = 0;
            if (TIFFGetField(tif, kMicroManagerTag, &n, &value))
                count = n;
        } else {
            std::uint16_t n = 0;
            if (TIFFGetField(tif, kMicroManagerTag, &n, &value))
                count = n;
        }
        data = static_cast<const char*>(value);
    } else if (type == TIFF_ASCII) {
        char* value = nullptr;
        if (TIFFGetField(tif, kMicroManagerTag, &value) && value) {
            data = value;
            count = std::strlen(value);
        }
    }
    if (!data)
        return {};
    std::string json(data, std::min<std::size_t>(count, 4u << 20));
    while (!json.empty() && json.back() == '\0')
        json.pop_back();
    return json;
}

struct TiffCloser {
    void operator()(TIFF* t) const { TIFFClose(t); }
};

struct TiffPage {
    std::uint32_t width = 0, height = 0;
    std::uint16_t bitsPerSample = 1, samplesPerPixel = 1, sampleFormat = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG;
    std::uint16_t photometric = PHOTOMETRIC_MINISBLACK, orientation = ORIENTATION_TOPLEFT, compression = COMPRESSION_NONE;
};

// One decoded sample as a double; data already in host byte order (libtiff swaps).
double sampleValue(const std::uint8_t* p, const TiffPage& page)
{
    switch (page.sampleFormat) {
    case SAMPLEFORMAT_IEEEFP:
        if (page.bitsPerSample == 32) {
            float v;
            std::memcpy(&v, p, 4);
            return v;
        } else {
            double v;
            std::memcpy(&v, p, 8);
            return v;
        }
    case SAMPLEFORMAT_INT:
        switch (page.bitsPerSample) {
        case 8:
            return double(std::int8_t(*p));
        case 16: {
            std::int16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        default: {
            std::int32_t v;
            std::memcpy(&v, p, 4);
            return v;
        }
        }
    default:
        switch (page.bitsPerSample) {
        case 8:
            return *p;
        case 16: {
            std::uint16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        default: {
            std::uint32_t v;
            std::memcpy(&v, p, 4);
            return v;
        }
        }
    }
}

double formatMaximumOf(const TiffPage& page)
{
    if (page.sampleFormat == SAMPLEFORMAT_IEEEFP)
        return 0.0;
    if (page.sampleFormat == SAMPLEFORMAT_INT)
        return std::ldexp(1.0, page.bitsPerSample - 1) - 1.0;
    return std::ldexp(1.0, page.bitsPerSample) - 1.0;
}

// Reads the current directory into `image` (top-down rows as stored); returns an error text or "".
std::string readTiffPage(TIFF* tif, const TiffPage& page, Image& image, bool& colour, MemoryStream& stream)
{
    const int spp = page.samplesPerPixel;
    const int bytes = page.bitsPerSample / 8;
    const bool separate = page.planar == PLANARCONFIG_SEPARATE && spp > 1;
    const bool rgb = page.photometric == PHOTOMETRIC_RGB && spp >= 3;
    colour = rgb;
    // Which samples make the value: luminance of R, G, B or the first sample (grey, extra samples ignored).
    const int used = rgb ? 3 : 1;
    const double weights[3] = {0.2126, 0.7152, 0.0722};
    const int w = int(page.width), h = int(page.height);
    auto accumulate = [&](int row, int col, int sample, const std::uint8_t* p) {
        if (sample >= used)
            return;
        const double v = sampleValue(p, page);
        double& target = image.at(row, col);
        target = used == 1 ? v : (sample == 0 ? 0.0 : target) + weights[sample] * v;
    };
    auto failed = [&](const char* what) {
        return std::string(what) + (stream.errors.empty() ? std::string() : " (" + stream.errors + ")");
    };

    if (TIFFIsTiled(tif)) {
        std::uint32_t tileWidth = 0, tileHeight = 0;
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tileWidth);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &tileHeight);
        const tmsize_t tileSize = TIFFTileSize(tif);
        if (tileWidth == 0 || tileHeight == 0 || tileSize <= 0 || tileWidth > 65536 || tileHeight > 65536
            || (unsigned long long)tileSize < (unsigned long long)tileWidth * tileHeight * bytes * (separate ? 1 : spp)
            || tileSize > (256 << 20))
            return failed("bad tile layout");
        std::vector<std::uint8_t> tile(static_cast<std::size_t>(tileSize));
        const int planes = separate ? spp : 1;
        for (int s = 0; s < planes; ++s) {
            for (std::uint32_t y0 = 0; y0 < page.height; y0 += tileHeight) {
                for (std::uint32_t x0 = 0; x0 < page.width; x0 += tileWidth) {
                    if (TIFFReadTile(tif, tile.data(), x0, y0, 0, std::uint16_t(s)) < 0)
                        return failed("tile unreadable");
                    const std::uint32_t rows = std::min(tileHeight, page.height - y0), cols = std::min(tileWidth, page.width - x0);
                    for (std::uint32_t r = 0; r < rows; ++r)
                        for (std::uint32_t c = 0; c < cols; ++c) {
                            const std::size_t base = (std::size_t(r) * tileWidth + c) * std::size_t(separate ? 1 : spp);
                            if (separate)
                                accumulate(int(y0 + r), int(x0 + c), s, tile.data() + base * bytes);
                            else
                                for (int k = 0; k < spp; ++k)
                                    accumulate(int(y0 + r), int(x0 + c), k, tile.data() + (base + std::size_t(k)) * bytes);
                        }
                }
            }
        }
        return {};
    }

    const tmsize_t lineSize = TIFFScanlineSize(tif);
    if (lineSize <= 0 || (unsigned long long)lineSize < (unsigned long long)w * bytes * (separate ? 1 : spp) || lineSize > (256 << 20))
        return failed("bad strip layout");
    std::vector<std::uint8_t> line(static_cast<std::size_t>(lineSize));
    const int planes = separate ? spp : 1;
    for (int s = 0; s < planes; ++s) {
        if (separate && s >= used)
            break;
        for (int r = 0; r < h; ++r) {
            if (TIFFReadScanline(tif, line.data(), std::uint32_t(r), std::uint16_t(s)) < 0)
                return failed(("row " + std::to_string(r) + " unreadable").c_str());
            for (int c = 0; c < w; ++c) {
                if (separate)
                    accumulate(r, c, s, line.data() + std::size_t(c) * std::size_t(bytes));
                else
                    for (int k = 0; k < spp; ++k)
                        accumulate(r, c, k, line.data() + (std::size_t(c) * std::size_t(spp) + std::size_t(k)) * std::size_t(bytes));
            }
        }
    }
    return {};
}

// Pages libtiff can only decode as 8-bit RGBA (YCbCr, CMYK, palette, old-style JPEG, ...).
std::string readTiffPageRgba(TIFF* tif, const TiffPage& page, Image& image, MemoryStream& stream)
{
    std::vector<std::uint32_t> rgba(std::size_t(page.width) * page.height);
    if (!TIFFReadRGBAImageOriented(tif, page.width, page.height, rgba.data(), ORIENTATION_TOPLEFT, 0))
        return "cannot decode the page" + (stream.errors.empty() ? std::string() : " (" + stream.errors + ")");
    for (std::uint32_t r = 0; r < page.height; ++r)
        for (std::uint32_t c = 0; c < page.width; ++c) {
            const std::uint32_t v = rgba[std::size_t(r) * page.width + c];
            image.at(int(r), int(c)) = 0.2126 * TIFFGetR(v) + 0.7152 * TIFFGetG(v) + 0.0722 * TIFFGetB(v);
        }
    return {};
}

// An OME-XML description holds an element per plane: a long acquisition's exceeds 64 KiB, and a truncated one is no
// longer XML. The bound keeps a hostile file's description from taking more memory than its pixels would.
constexpr std::size_t kDescriptionBytes = 4u << 20;

// Long on purpose: one loop over the pages in which every check on hostile input ends the loop through
// damaged(), keeping the pages read before it; split up, each exit would need a status passed back.
ImageFileContent readTiffStream(MemoryStream& stream, const std::string& name, const ReadLimits& limits)
{
    auto fail = [&](const std::string& what) { return ImageReadError(name + ": " + what); };
    std::unique_ptr<TIFFOpenOptions, void (*)(TIFFOpenOptions*)> options(TIFFOpenOptionsAlloc(), TIFFOpenOptionsFree);
    TIFFOpenOptionsSetErrorHandlerExtR(options.get(), tiffError, &stream);
    TIFFOpenOptionsSetWarningHandlerExtR(options.get(), tiffWarning, &stream);
    // Caps every allocation libtiff makes for this file (strip tables, decoding buffers).
    TIFFOpenOptionsSetMaxSingleMemAlloc(options.get(), tmsize_t(std::min<long long>(limits.maxPlanePixels * 16LL, 1LL << 31)));
    std::unique_ptr<TIFF, TiffCloser> tif(TIFFClientOpenExt(name.c_str(), "rm", &stream, tiffRead, tiffWrite, tiffSeek, tiffClose, tiffSize,
                                                            tiffMap, tiffUnmap, options.get()));
    if (!tif)
        throw fail("not a readable TIFF file" + (stream.errors.empty() ? std::string() : " (" + stream.errors + ")"));

    ImageFileContent content;
    content.format = ImageFormat::Tiff;
    if (std::string summary = micromanagerSummary(stream); !summary.empty())
        content.strings["MicroManagerSummary"] = std::move(summary);
    long long total = 0;
    bool colourWarned = false, extraWarned = false;
    int pageIndex = 0;
    auto damaged = [&](const std::string& what) {
        if (content.planes.empty())
            throw fail(what);
        content.warnings.push_back(name + ": " + what + "; kept the " + std::to_string(content.planes.size()) + " page(s) before it");
        content.damage = content.warnings.back();
    };
    do {
        stream.errors.clear();
        const std::string where = "page " + std::to_string(pageIndex);
        TiffPage page;
        if (!TIFFGetField(tif.get(), TIFFTAG_IMAGEWIDTH, &page.width) || !TIFFGetField(tif.get(), TIFFTAG_IMAGELENGTH, &page.height)) {
            damaged(where + " has no image size");
            break;
        }
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_BITSPERSAMPLE, &page.bitsPerSample);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLESPERPIXEL, &page.samplesPerPixel);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_SAMPLEFORMAT, &page.sampleFormat);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_PLANARCONFIG, &page.planar);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_ORIENTATION, &page.orientation);
        TIFFGetFieldDefaulted(tif.get(), TIFFTAG_COMPRESSION, &page.compression);
        if (!TIFFGetField(tif.get(), TIFFTAG_PHOTOMETRIC, &page.photometric))
            page.photometric = page.samplesPerPixel >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;
        if (page.width == 0 || page.height == 0) {
            damaged(where + " has a zero-size image (" + sizeText(page.width, page.height) + ")");
            break;
        }
        const long long pixels = (long long)page.width * page.height;
        if (page.width > std::uint32_t(limits.maxDimension) || page.height > std::uint32_t(limits.maxDimension)
            || pixels > limits.maxPlanePixels || total + pixels > limits.maxPixels || pageIndex >= limits.maxPlanes) {
            damaged(where + " is " + sizeText(page.width, page.height) + " pixels, more than this program loads (at most "
                    + std::to_string(limits.maxPlanePixels) + " pixels per plane, " + std::to_string(limits.maxPixels) + " per file, "
                    + std::to_string(limits.maxPlanes) + " pages)");
            break;
        }
        if (page.samplesPerPixel == 0 || page.samplesPerPixel > 16) {
            damaged(where + ": " + std::to_string(page.samplesPerPixel) + " samples per pixel is not supported");
            break;
        }
        if (!TIFFIsCODECConfigured(page.compression)) {
            damaged(where + ": compression scheme " + std::to_string(page.compression) + " is not supported by the installed libtiff");
            break;
        }
        const bool direct = (page.photometric == PHOTOMETRIC_MINISBLACK || page.photometric == PHOTOMETRIC_MINISWHITE
                             || (page.photometric == PHOTOMETRIC_RGB && page.samplesPerPixel >= 3))
                            && page.compression != COMPRESSION_OJPEG;
        const bool sampleOk =
            page.sampleFormat == SAMPLEFORMAT_IEEEFP ? (page.bitsPerSample == 32 || page.bitsPerSample == 64)
            : (page.sampleFormat == SAMPLEFORMAT_UINT || page.sampleFormat == SAMPLEFORMAT_INT || page.sampleFormat == SAMPLEFORMAT_VOID)
                ? (page.bitsPerSample == 8 || page.bitsPerSample == 16 || page.bitsPerSample == 32)
                : false;
        if (page.sampleFormat == SAMPLEFORMAT_VOID)
            page.sampleFormat = SAMPLEFORMAT_UINT;
        Image image = limits.headersOnly ? Image{} : Image(int(page.width), int(page.height));
        image.width = int(page.width);
        image.height = int(page.height);
        std::string error;
        bool colour = false;
        if (!limits.headersOnly && direct && sampleOk) {
            error = readTiffPage(tif.get(), page, image, colour, stream);
            if (page.photometric == PHOTOMETRIC_MINISWHITE && error.empty()) {
                const double top = formatMaximumOf(page);
                for (double& v : image.pixels)
                    v = top > 0.0 ? top - v : -v;
                if (pageIndex == 0)
                    content.warnings.push_back(name + ": photometric 'min-is-white': values inverted so that light is high");
            }
        } else if (!sampleOk && direct) {
            const char* kind = page.sampleFormat == SAMPLEFORMAT_IEEEFP          ? "floating-point"
                               : page.sampleFormat == SAMPLEFORMAT_INT           ? "signed"
                               : page.sampleFormat == SAMPLEFORMAT_UINT          ? "unsigned"
                               : page.sampleFormat == SAMPLEFORMAT_COMPLEXINT    ? "complex integer"
                               : page.sampleFormat == SAMPLEFORMAT_COMPLEXIEEEFP ? "complex floating-point"
                                                                                 : "unknown-format";
            damaged(where + ": " + std::to_string(page.bitsPerSample) + "-bit " + kind
                    + " samples are not supported (8, 16 or 32-bit integers, 32 or 64-bit floats)");
            break;
        } else if (limits.headersOnly) {
            colour = !direct || page.photometric == PHOTOMETRIC_RGB;
        } else {
            // Palette, YCbCr, CMYK, ...: libtiff's RGBA decoder, 8 bits per channel.
            error = readTiffPageRgba(tif.get(), page, image, stream);
            colour = true;
            page.bitsPerSample = 8;
            page.sampleFormat = SAMPLEFORMAT_UINT;
        }
        if (!error.empty()) {
            damaged(where + ": " + error + "; the file may be truncated or corrupt");
            break;
        }
        if (colour && !colourWarned) {
            content.warnings.push_back(
                name + ": colour image converted to luminance (0.2126 R + 0.7152 G + 0.0722 B); PSF data should be greyscale");
            colourWarned = true;
        }
        if (!colour && page.samplesPerPixel > 1 && !extraWarned) {
            content.warnings.push_back(name + ": " + std::to_string(page.samplesPerPixel) + " samples per pixel; only the first is used");
            extraWarned = true;
        }
        // TIFF rows run top-down (orientation 1) unless the tag says otherwise; the program's run bottom-up.
        const bool bottomUp = page.orientation == ORIENTATION_BOTLEFT || page.orientation == ORIENTATION_BOTRIGHT;
        const bool mirrored = page.orientation == ORIENTATION_TOPRIGHT || page.orientation == ORIENTATION_BOTRIGHT;
        if (page.orientation > ORIENTATION_BOTLEFT && pageIndex == 0)
            content.warnings.push_back(name + ": TIFF orientation " + std::to_string(page.orientation)
                                       + " (transposed) is not supported; read as top-left");
        Image oriented = limits.headersOnly ? std::move(image) : Image(image.width, image.height);
        if (!limits.headersOnly)
            for (int r = 0; r < image.height; ++r)
                for (int c = 0; c < image.width; ++c)
                    oriented.at(bottomUp ? r : image.height - 1 - r, mirrored ? image.width - 1 - c : c) = image.at(r, c);
        oriented.source = name + "[" + std::to_string(pageIndex) + "]";
        if (content.planes.empty()) {
            content.bitsPerSample = page.bitsPerSample;
            content.floatingPoint = page.sampleFormat == SAMPLEFORMAT_IEEEFP;
            content.formatMaximum = formatMaximumOf(page);
            char* text = nullptr;
            if (TIFFGetField(tif.get(), TIFFTAG_IMAGEDESCRIPTION, &text) && text)
                content.strings["ImageDescription"] = std::string(text).substr(0, kDescriptionBytes);
            if (std::string json = micromanagerImageMetadata(tif.get()); !json.empty())
                content.strings["MicroManagerMetadata"] = std::move(json);
            if (TIFFGetField(tif.get(), TIFFTAG_SOFTWARE, &text) && text)
                content.strings["Software"] = std::string(text).substr(0, 1024);
            if (TIFFGetField(tif.get(), TIFFTAG_DATETIME, &text) && text)
                content.strings["DateTime"] = std::string(text).substr(0, 64);
            float resolution = 0;
            std::uint16_t unit = RESUNIT_NONE;
            if (TIFFGetField(tif.get(), TIFFTAG_XRESOLUTION, &resolution) && resolution > 0) {
                content.numbers["XResolution"] = resolution;
                TIFFGetFieldDefaulted(tif.get(), TIFFTAG_RESOLUTIONUNIT, &unit);
                content.numbers["ResolutionUnit"] = unit;
            }
        }
        content.planes.push_back(std::move(oriented));
        total += pixels;
        ++pageIndex;
        stream.errors.clear();
        const int next = TIFFReadDirectory(tif.get());
        if (!next) {
            if (!stream.errors.empty()) {
                content.warnings.push_back(name + ": page " + std::to_string(pageIndex) + " unreadable (" + stream.errors
                                           + "); the file may be truncated; kept the " + std::to_string(content.planes.size())
                                           + " page(s) before it");
                content.damage = content.warnings.back();
            }
            break;
        }
    } while (true);
    // ImageJ declares the file's page count ("images=N" in its description): a file that holds fewer is cut short,
    // or still being written. Damage, as for a page that cannot be read.
    if (const auto description = content.strings.find("ImageDescription");
        content.damage.empty() && description != content.strings.end() && description->second.rfind("ImageJ=", 0) == 0) {
        const std::string& text = description->second;
        const std::size_t at = text.find("\nimages=");
        const long long declared = at == std::string::npos ? 0 : std::atoll(text.c_str() + at + 8);
        if (declared > (long long)content.planes.size() && declared <= limits.maxPlanes) {
            const std::string held = std::to_string(content.planes.size());
            content.warnings.push_back(name + ": its ImageJ description declares images=" + std::to_string(declared)
                                       + " and the file holds " + held + " page(s); it is cut short or still being written; kept the "
                                       + held + " page(s) it holds");
            content.damage = content.warnings.back();
        }
    }
    return content;
}
} // namespace

ImageFileContent readTiffMemory(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits)
{
    MemoryStream stream{data, size, 0, {}, {}, -1};
    return readTiffStream(stream, name, limits);
}

ImageFileContent readTiff(const std::string& path, const ReadLimits& limits)
{
    const OpenFile file(path, limits);
    MemoryStream stream{nullptr, file.size, 0, {}, {}, file.fd};
    return readTiffStream(stream, path, limits);
}

} // namespace wfs
