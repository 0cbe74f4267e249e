// Format detection, the readers' input (io/ReaderInput.h), the PNG and FITS readers and readImageFile; the TIFF
// reader is io/TiffReader.cpp.
#include "io/ImageReaders.h"

#include "io/Fits.h"
#include "io/ReaderInput.h"

#include <png.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace wfs {

using imageio::MemoryStream;
using imageio::OpenFile;
using imageio::streamRead;

void requireReadableFile(const std::string& path, const char* what)
{
    struct stat info = {};
    if (::stat(path.c_str(), &info) != 0) {
        if (errno == EACCES)
            throw ImageReadError(path + ": permission denied (a folder on the way may not be searched)");
        throw ImageReadError(path + ": file not found");
    }
    if (S_ISDIR(info.st_mode))
        throw ImageReadError(path + ": is a folder, not a file");
    if (!S_ISREG(info.st_mode))
        throw ImageReadError(path + ": is not a regular file (a FIFO, device or socket); give " + what);
    if (::access(path.c_str(), R_OK) != 0)
        throw ImageReadError(path + ": permission denied (the file is not readable by this user)");
    if (info.st_size == 0)
        throw ImageReadError(path + ": the file is empty (0 bytes)");
}

int openRegularFile(const std::string& path, std::string* why)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (why)
            *why = std::strerror(errno);
        return -1;
    }
    struct stat info = {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        ::close(fd);
        if (why)
            *why = S_ISDIR(info.st_mode) ? "is a folder, not a file" : "is not a regular file (a FIFO, device or socket)";
        return -1;
    }
    // Regular files never block; the flag only kept the open from waiting on a FIFO.
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

std::string readRegularFile(const std::string& path, std::size_t maxBytes, const char* what)
{
    requireReadableFile(path, what);
    std::string why;
    const int fd = openRegularFile(path, &why);
    if (fd < 0)
        throw ImageReadError(path + ": " + why);
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat info = {};
    ::fstat(fd, &info);
    if (std::size_t(info.st_size) > maxBytes)
        throw ImageReadError(path + ": " + std::to_string(info.st_size) + " bytes is too large for " + what);
    std::string bytes(std::size_t(info.st_size), '\0');
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t got = ::read(fd, bytes.data() + done, bytes.size() - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            throw ImageReadError(path + ": cannot read (" + std::string(std::strerror(errno)) + ")");
        if (got == 0)
            break; // shrank while read
        done += std::size_t(got);
    }
    bytes.resize(done);
    return bytes;
}

const char* imageFormatName(ImageFormat format)
{
    switch (format) {
    case ImageFormat::Fits:
        return "FITS";
    case ImageFormat::Tiff:
        return "TIFF";
    case ImageFormat::Png:
        return "PNG";
    case ImageFormat::Unknown:
        break;
    }
    return "unknown";
}

ImageFormat detectImageFormat(const std::uint8_t* data, std::size_t size)
{
    if (size >= 8 && std::memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0)
        return ImageFormat::Png;
    if (size >= 4
        && (std::memcmp(data, "II*\0", 4) == 0 || std::memcmp(data, "MM\0*", 4) == 0 || std::memcmp(data, "II+\0", 4) == 0
            || std::memcmp(data, "MM\0+", 4) == 0))
        return ImageFormat::Tiff;
    if (size >= 9 && std::memcmp(data, "SIMPLE  =", 9) == 0)
        return ImageFormat::Fits;
    return ImageFormat::Unknown;
}

namespace {

std::string lowerSuffix(const std::string& path)
{
    std::string name = std::filesystem::path(path).filename().string();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (const char* gz : {".gz", ".fz"})
        if (name.size() > 3 && name.ends_with(gz))
            name.resize(name.size() - 3);
    const auto dot = name.rfind('.');
    return dot == std::string::npos ? std::string() : name.substr(dot + 1);
}

ImageFormat formatFromSuffix(const std::string& path)
{
    const std::string suffix = lowerSuffix(path);
    if (suffix == "fits" || suffix == "fit" || suffix == "fts")
        return ImageFormat::Fits;
    if (suffix == "tif" || suffix == "tiff")
        return ImageFormat::Tiff;
    if (suffix == "png")
        return ImageFormat::Png;
    return ImageFormat::Unknown;
}
} // namespace

namespace imageio {

std::size_t streamRead(MemoryStream& s, void* buffer, std::size_t count)
{
    if (s.position >= s.size)
        return 0;
    const std::size_t n = std::min(count, s.size - s.position);
    if (s.fd < 0) {
        std::memcpy(buffer, s.data + s.position, n);
        s.position += n;
        return n;
    }
    std::size_t done = 0;
    while (done < n) {
        const ssize_t got = ::pread(s.fd, static_cast<std::uint8_t*>(buffer) + done, n - done, off_t(s.position + done));
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        done += std::size_t(got);
    }
    s.position += done;
    return done;
}

OpenFile::OpenFile(const std::string& path, const ReadLimits& limits)
{
    requireReadableFile(path);
    std::string why;
    fd = openRegularFile(path, &why);
    struct stat info = {};
    if (fd < 0 || ::fstat(fd, &info) != 0)
        throw ImageReadError(path + ": cannot open the file for reading (" + why + ")");
    // Compressed data may expand, but never beyond what a stored file could hold: 16 bytes per pixel
    // (a 64-bit float RGBA sample) plus headers.
    const unsigned long long maxBytes = (unsigned long long)limits.maxPixels * 16ULL + (64ULL << 20);
    if ((unsigned long long)info.st_size > maxBytes)
        throw ImageReadError(path + ": the file is " + std::to_string(info.st_size) + " bytes, more than this program loads ("
                             + std::to_string(maxBytes) + ")");
    size = std::size_t(info.st_size);
}

OpenFile::~OpenFile()
{
    if (fd >= 0)
        ::close(fd);
}

} // namespace imageio

// ---- PNG --------------------------------------------------------------------------------------

namespace {

struct PngContext {
    MemoryStream stream;
    char error[256] = {};
};

void pngRead(png_structp png, png_bytep out, png_size_t count)
{
    auto* c = static_cast<PngContext*>(png_get_io_ptr(png));
    if (streamRead(c->stream, out, count) != count) {
        std::snprintf(c->error, sizeof c->error, "unexpected end of file");
        png_longjmp(png, 1);
    }
}

void pngError(png_structp png, png_const_charp message)
{
    auto* c = static_cast<PngContext*>(png_get_error_ptr(png));
    if (c->error[0] == '\0')
        std::snprintf(c->error, sizeof c->error, "%s", message);
    png_longjmp(png, 1);
}

void pngWarning(png_structp, png_const_charp)
{
}

struct PngReadState {
    png_structp png = nullptr;
    png_infop info = nullptr;
    ~PngReadState() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

// What the PNG header says, and the layout of the rows libpng hands over after its transformations.
struct PngLayout {
    png_uint_32 width = 0, height = 0;
    int sourceBitDepth = 0, sourceColourType = 0;
    int channels = 0, bytes = 1; // per decoded sample
    bool colour = false, alpha = false;
};

// One decoded row (top-down row `row` of the file) into the image, whose rows run bottom-up.
void storePngRow(const std::uint8_t* data, const PngLayout& layout, png_uint_32 row, Image& image)
{
    double* out = image.pixels.data() + std::size_t(layout.height - 1 - row) * layout.width;
    for (png_uint_32 c = 0; c < layout.width; ++c) {
        auto sample = [&](int k) -> double {
            const std::uint8_t* p = data + (std::size_t(c) * std::size_t(layout.channels) + std::size_t(k)) * std::size_t(layout.bytes);
            if (layout.bytes == 1)
                return *p;
            std::uint16_t v;
            std::memcpy(&v, p, 2);
            return v;
        };
        out[c] = layout.colour ? 0.2126 * sample(0) + 0.7152 * sample(1) + 0.0722 * sample(2) : sample(0);
    }
}

// Decodes with libpng straight into `image`, a row at a time (an interlaced file's passes need the whole
// decoded image first), so that no more than the image itself is held. Everything that must survive a
// longjmp lives in objects created before setjmp and is only modified through references.
std::string decodePng(PngContext& context, PngReadState& state, PngLayout& layout, Image& image, std::vector<std::uint8_t>& buffer,
                      const ReadLimits& limits)
{
    state.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &context, pngError, pngWarning);
    if (!state.png)
        return "out of memory";
    state.info = png_create_info_struct(state.png);
    if (!state.info)
        return "out of memory";
    if (setjmp(png_jmpbuf(state.png)))
        return context.error[0] ? context.error : "corrupt PNG data";
    png_set_read_fn(state.png, &context, pngRead);
    png_set_user_limits(state.png, 0x7fffffffu, 0x7fffffffu); // sizes are checked below, with a message that says them
    png_set_chunk_malloc_max(state.png, 8u << 20);            // text and ICC chunks; the image rows are ours
    png_read_info(state.png, state.info);
    int interlace = PNG_INTERLACE_NONE;
    png_get_IHDR(state.png, state.info, &layout.width, &layout.height, &layout.sourceBitDepth, &layout.sourceColourType, &interlace,
                 nullptr, nullptr);
    if ((long long)layout.width * layout.height > limits.maxPlanePixels || (long long)layout.width * layout.height > limits.maxPixels
        || layout.width > png_uint_32(limits.maxDimension) || layout.height > png_uint_32(limits.maxDimension)) {
        std::snprintf(context.error, sizeof context.error,
                      "the image is %u x %u pixels, more than this program loads (at most %lld pixels)", unsigned(layout.width),
                      unsigned(layout.height), limits.maxPlanePixels);
        return context.error;
    }
    if (layout.sourceColourType == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(state.png);
    if (layout.sourceBitDepth < 8)
        png_set_packing(state.png); // one byte per sample, values kept (0..3 for 2-bit grey)
    if (layout.sourceBitDepth == 16)
        png_set_swap(state.png); // PNG stores big-endian; the host order is read below
    const int passes = png_set_interlace_handling(state.png);
    png_read_update_info(state.png, state.info);
    const int colourType = png_get_color_type(state.png, state.info);
    layout.bytes = png_get_bit_depth(state.png, state.info) == 16 ? 2 : 1;
    layout.channels = png_get_channels(state.png, state.info);
    layout.colour = (colourType & PNG_COLOR_MASK_COLOR) != 0;
    layout.alpha = (colourType & PNG_COLOR_MASK_ALPHA) != 0;
    const png_size_t rowBytes = png_get_rowbytes(state.png, state.info);
    if (rowBytes < png_size_t(layout.width) * png_size_t(layout.channels) * png_size_t(layout.bytes))
        return "inconsistent row size";
    // Deflate expands at most 1032:1, so a small file cannot hold a huge image: refuse it before
    // allocating what the header claims (a 62 KB file declaring 8000 x 8000 RGBA).
    const int storedChannels = layout.sourceColourType == PNG_COLOR_TYPE_RGB_ALPHA    ? 4
                               : layout.sourceColourType == PNG_COLOR_TYPE_RGB        ? 3
                               : layout.sourceColourType == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                                                                                      : 1;
    const unsigned long long stored =
        ((unsigned long long)layout.width * unsigned(layout.sourceBitDepth) * unsigned(storedChannels) + 7) / 8 * layout.height
        + layout.height;
    if (stored > (unsigned long long)context.stream.size * 1032ULL + 4096ULL) {
        std::snprintf(
            context.error, sizeof context.error,
            "the image is declared as %u x %u pixels, more than the file's %zu bytes of compressed data can hold; the file is corrupt",
            unsigned(layout.width), unsigned(layout.height), context.stream.size);
        return context.error;
    }
    if (limits.headersOnly)
        return {};
    image = Image(int(layout.width), int(layout.height));
    if (passes > 1) {
        // Not zero-filled: a truncated file's missing rows are never touched.
        buffer.resize(rowBytes * layout.height);
        std::vector<png_bytep> rows(layout.height);
        for (png_uint_32 r = 0; r < layout.height; ++r)
            rows[r] = buffer.data() + std::size_t(r) * rowBytes;
        png_read_image(state.png, rows.data());
        for (png_uint_32 r = 0; r < layout.height; ++r)
            storePngRow(rows[r], layout, r, image);
    } else {
        buffer.resize(rowBytes);
        for (png_uint_32 r = 0; r < layout.height; ++r) {
            png_read_row(state.png, buffer.data(), nullptr);
            storePngRow(buffer.data(), layout, r, image);
        }
    }
    png_read_end(state.png, nullptr);
    return {};
}

ImageFileContent readPngStream(PngContext& context, const std::string& name, const ReadLimits& limits)
{
    auto fail = [&](const std::string& what) { return ImageReadError(name + ": " + what); };
    std::uint8_t signature[8] = {};
    if (streamRead(context.stream, signature, 8) != 8 || png_sig_cmp(signature, 0, 8) != 0)
        throw fail("not a PNG file (no PNG signature)");
    context.stream.position = 0;
    PngReadState state;
    PngLayout layout;
    Image image;
    std::vector<std::uint8_t> buffer;
    const std::string error = decodePng(context, state, layout, image, buffer, limits);
    if (!error.empty())
        throw fail("not a readable PNG file (" + error + ")");
    if (layout.width == 0 || layout.height == 0)
        throw fail("zero-size image");

    ImageFileContent content;
    content.format = ImageFormat::Png;
    content.bitsPerSample = layout.sourceColourType == PNG_COLOR_TYPE_PALETTE ? 8 : layout.sourceBitDepth;
    content.formatMaximum = std::ldexp(1.0, content.bitsPerSample) - 1.0;
    if (layout.colour)
        content.warnings.push_back(
            name + ": colour image converted to luminance (0.2126 R + 0.7152 G + 0.0722 B); PSF data should be greyscale");
    if (layout.alpha)
        content.warnings.push_back(name + ": the alpha channel is ignored");
    image.width = int(layout.width);
    image.height = int(layout.height);
    image.source = name + "[0]";
    content.planes.push_back(std::move(image));
    return content;
}

} // namespace

ImageFileContent readPngMemory(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits)
{
    PngContext context;
    context.stream = {data, size, 0, {}, {}, -1};
    return readPngStream(context, name, limits);
}

// ---- Files --------------------------------------------------------------------------------------

namespace {
ImageFileContent fromFits(FitsContent fits)
{
    ImageFileContent content;
    content.format = ImageFormat::Fits;
    content.planes = std::move(fits.planes);
    content.numbers = std::move(fits.numbers);
    content.strings = std::move(fits.strings);
    content.warnings = std::move(fits.warnings);
    content.damage = std::move(fits.damage);
    content.bitsPerSample = std::abs(fits.bitpix);
    content.floatingPoint = fits.bitpix < 0;
    content.formatMaximum = fits.formatMaximum;
    return content;
}
} // namespace

ImageFileContent readFitsMemory(const std::uint8_t* data, std::size_t size, const std::string& name, const ReadLimits& limits)
{
    return fromFits(readFitsBuffer(data, size, name, limits));
}

ImageFileContent readFitsImage(const std::string& path, const ReadLimits& limits)
{
    return fromFits(readFits(path, limits));
}

ImageFileContent readPng(const std::string& path, const ReadLimits& limits)
{
    const OpenFile file(path, limits);
    PngContext context;
    context.stream = {nullptr, file.size, 0, {}, {}, file.fd};
    return readPngStream(context, path, limits);
}

std::string imageSizeError(long long planes, long long width, long long height, const ReadLimits& limits)
{
    const std::string size = std::to_string(planes) + " plane" + (planes == 1 ? "" : "s") + " of " + std::to_string(width) + " x "
                             + std::to_string(height) + " pixels";
    if (planes < 1 || width < 1 || height < 1)
        return size + " hold no pixels";
    // Each factor bounded first, so that the products below cannot overflow.
    if (width > limits.maxDimension || height > limits.maxDimension || planes > limits.maxPlanes || width * height > limits.maxPlanePixels
        || planes * width * height > limits.maxPixels)
        return size + (planes == 1 ? " is" : " are") + " more than this program loads (at most " + std::to_string(limits.maxDimension)
               + " pixels across, " + std::to_string(limits.maxPlanePixels) + " pixels per plane, " + std::to_string(limits.maxPixels)
               + " in all)";
    return {};
}

ImageFormat detectImageFormat(const std::string& path)
{
    std::uint8_t head[16] = {};
    if (const int fd = openRegularFile(path); fd >= 0) {
        const ssize_t got = ::pread(fd, head, sizeof head, 0);
        ::close(fd);
        const std::size_t size = got > 0 ? std::size_t(got) : 0;
        const ImageFormat byContent = detectImageFormat(head, size);
        if (byContent != ImageFormat::Unknown)
            return byContent;
        if (size >= 2 && head[0] == 0x1f && head[1] == 0x8b && formatFromSuffix(path) == ImageFormat::Fits)
            return ImageFormat::Fits; // gzip-compressed FITS, which CFITSIO reads
    }
    return formatFromSuffix(path);
}

ImageFileContent readImageFile(const std::string& path, const ReadLimits& limits)
{
    requireReadableFile(path);
    switch (detectImageFormat(path)) {
    case ImageFormat::Fits:
        return readFitsImage(path, limits);
    case ImageFormat::Tiff:
        return readTiff(path, limits);
    case ImageFormat::Png:
        return readPng(path, limits);
    case ImageFormat::Unknown:
        break;
    }
    throw ImageReadError(path + ": unsupported file format (not FITS, TIFF or PNG by its first bytes or its name)");
}

} // namespace wfs
