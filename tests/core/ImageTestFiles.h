#pragma once
// Writers of test images in every format and layout the readers must handle, written with the
// formats' own libraries (libtiff, CFITSIO) or Qt's PNG writer, so that a reader bug cannot hide
// behind a matching writer bug. Pixel values are given row-major with row 0 at the BOTTOM (the
// program's convention); the writers store them the way each format orders rows (TIFF and PNG top
// row first), so that reading back must flip them.
#include "base/Image.h"

#include <QByteArray>
#include <QImage>
#include <QString>

#include <fitsio.h>
#include <tiffio.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs::test {

// An asymmetric test image: every pixel different, value = 1 + row * 7 + col * 3 (mod `modulo`).
inline Image asymmetricImage(int width, int height, double modulo = 250.0)
{
    Image img(width, height);
    for (int r = 0; r < height; ++r)
        for (int c = 0; c < width; ++c)
            img.at(r, c) = 1.0 + double((r * 7 + c * 3) % int(modulo));
    return img;
}

struct TiffLayout {
    int bits = 16;
    int sampleFormat = SAMPLEFORMAT_UINT;
    int compression = COMPRESSION_NONE;
    bool tiled = false;
    int samplesPerPixel = 1; // 3: RGB
    bool separate = false;   // PLANARCONFIG_SEPARATE
    int photometric = -1;    // -1: MINISBLACK for 1 sample, RGB for 3
    int orientation = ORIENTATION_TOPLEFT;
};

// Writes each image as one page; RGB pages get (v, v / 2, v / 4) so luminance is predictable.
inline void writeTiff(const std::string& path, const std::vector<Image>& pages, const TiffLayout& layout)
{
    TIFF* tif = TIFFOpen(path.c_str(), "w");
    if (!tif)
        throw std::runtime_error("cannot create " + path);
    const int bytes = layout.bits / 8;
    const int spp = layout.samplesPerPixel;
    for (const Image& page : pages) {
        const int w = page.width, h = page.height;
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, std::uint32_t(w));
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, std::uint32_t(h));
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, std::uint16_t(layout.bits));
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, std::uint16_t(spp));
        TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, std::uint16_t(layout.sampleFormat));
        TIFFSetField(tif, TIFFTAG_COMPRESSION, std::uint16_t(layout.compression));
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC,
                     std::uint16_t(layout.photometric >= 0 ? layout.photometric
                                   : spp >= 3              ? PHOTOMETRIC_RGB
                                                           : PHOTOMETRIC_MINISBLACK));
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, std::uint16_t(layout.separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG));
        TIFFSetField(tif, TIFFTAG_ORIENTATION, std::uint16_t(layout.orientation));
        if (spp == 2 || spp == 4) {
            std::uint16_t extra = EXTRASAMPLE_UNASSALPHA;
            TIFFSetField(tif, TIFFTAG_EXTRASAMPLES, 1, &extra);
        }
        if (pages.size() > 1) {
            TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
        }
        const bool bottomUp = layout.orientation == ORIENTATION_BOTLEFT;
        // Stored row `s` (top-down unless bottom-up) holds image row:
        auto imageRow = [&](int s) { return bottomUp ? s : h - 1 - s; };
        auto put = [&](std::uint8_t* p, double v) {
            if (layout.sampleFormat == SAMPLEFORMAT_IEEEFP) {
                if (layout.bits == 32) {
                    const float f = float(v);
                    std::memcpy(p, &f, 4);
                } else {
                    std::memcpy(p, &v, 8);
                }
            } else if (layout.sampleFormat == SAMPLEFORMAT_INT) {
                if (bytes == 1) {
                    const auto x = std::int8_t(v);
                    std::memcpy(p, &x, 1);
                } else if (bytes == 2) {
                    const auto x = std::int16_t(v);
                    std::memcpy(p, &x, 2);
                } else {
                    const auto x = std::int32_t(v);
                    std::memcpy(p, &x, 4);
                }
            } else {
                if (bytes == 1) {
                    const auto x = std::uint8_t(v);
                    std::memcpy(p, &x, 1);
                } else if (bytes == 2) {
                    const auto x = std::uint16_t(v);
                    std::memcpy(p, &x, 2);
                } else {
                    const auto x = std::uint32_t(v);
                    std::memcpy(p, &x, 4);
                }
            }
        };
        auto sample = [&](int row, int col, int s) {
            const double v = page.at(row, col);
            return s == 0 ? v : s == 1 ? std::floor(v / 2) : s == 2 ? std::floor(v / 4) : 255.0;
        };
        const int planes = layout.separate ? spp : 1;
        const int perPixel = layout.separate ? 1 : spp;
        if (layout.tiled) {
            const int tw = 16, th = 16;
            TIFFSetField(tif, TIFFTAG_TILEWIDTH, std::uint32_t(tw));
            TIFFSetField(tif, TIFFTAG_TILELENGTH, std::uint32_t(th));
            std::vector<std::uint8_t> tile(size_t(tw) * th * perPixel * bytes);
            for (int p = 0; p < planes; ++p)
                for (int y0 = 0; y0 < h; y0 += th)
                    for (int x0 = 0; x0 < w; x0 += tw) {
                        std::fill(tile.begin(), tile.end(), 0);
                        for (int y = y0; y < std::min(h, y0 + th); ++y)
                            for (int x = x0; x < std::min(w, x0 + tw); ++x)
                                for (int k = 0; k < perPixel; ++k)
                                    put(tile.data() + ((size_t(y - y0) * tw + size_t(x - x0)) * perPixel + k) * bytes,
                                        sample(imageRow(y), x, layout.separate ? p : k));
                        TIFFWriteTile(tif, tile.data(), std::uint32_t(x0), std::uint32_t(y0), 0, std::uint16_t(p));
                    }
        } else {
            TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, std::uint32_t(std::max(1, 8)));
            std::vector<std::uint8_t> line(size_t(w) * perPixel * bytes);
            for (int p = 0; p < planes; ++p)
                for (int s = 0; s < h; ++s) {
                    for (int x = 0; x < w; ++x)
                        for (int k = 0; k < perPixel; ++k)
                            put(line.data() + (size_t(x) * perPixel + k) * bytes, sample(imageRow(s), x, layout.separate ? p : k));
                    TIFFWriteScanline(tif, line.data(), std::uint32_t(s), std::uint16_t(p));
                }
        }
        TIFFWriteDirectory(tif);
    }
    TIFFClose(tif);
}

// PNG through Qt's writer: Grayscale8, Grayscale16, RGB32 (colour: (v, v/2, v/4)) or Indexed8.
inline void writePng(const QString& path, const Image& img, QImage::Format format)
{
    QImage q(img.width, img.height, format == QImage::Format_Indexed8 ? QImage::Format_Indexed8 : format);
    if (format == QImage::Format_Indexed8) {
        QVector<QRgb> table;
        for (int i = 0; i < 256; ++i)
            table.append(qRgb(i, i, i));
        q.setColorTable(table);
    }
    for (int r = 0; r < img.height; ++r)
        for (int c = 0; c < img.width; ++c) {
            const int y = img.height - 1 - r; // PNG rows run top-down
            const int v = int(img.at(r, c));
            switch (format) {
            case QImage::Format_Grayscale16:
                reinterpret_cast<quint16*>(q.scanLine(y))[c] = quint16(v);
                break;
            case QImage::Format_Grayscale8:
            case QImage::Format_Indexed8:
                q.scanLine(y)[c] = uchar(v);
                break;
            default:
                q.setPixel(c, y, qRgb(v, v / 2, v / 4));
            }
        }
    if (!q.save(path, "PNG"))
        throw std::runtime_error("cannot write " + path.toStdString());
}

// FITS through CFITSIO with the given BITPIX (integer types get BZERO for unsigned 16-bit).
inline void writeFitsBitpix(const std::string& path, const std::vector<Image>& planes, int bitpix)
{
    int status = 0;
    fitsfile* f = nullptr;
    fits_create_file(&f, ("!" + path).c_str(), &status);
    const int type = bitpix == 16 ? USHORT_IMG : bitpix;
    long axes[3] = {planes.front().width, planes.front().height, long(planes.size())};
    fits_create_img(f, type, planes.size() > 1 ? 3 : 2, axes, &status);
    for (size_t k = 0; k < planes.size(); ++k) {
        long first[3] = {1, 1, long(k) + 1};
        fits_write_pix(f, TDOUBLE, first, long(planes[k].pixels.size()), const_cast<double*>(planes[k].pixels.data()), &status);
    }
    fits_close_file(f, &status);
    if (status)
        throw std::runtime_error("CFITSIO error " + std::to_string(status) + " writing " + path);
}

// A little-endian TIFF header and one IFD with the given entries (tag, type, count, value); the
// caller controls every field, so absurd and inconsistent files can be made.
struct IfdEntry {
    std::uint16_t tag, type;
    std::uint32_t count, value;
};
inline QByteArray rawTiff(const std::vector<IfdEntry>& entries, const QByteArray& payload = {})
{
    QByteArray b("II*\0", 4);
    auto u16 = [&](std::uint16_t v) { b.append(char(v & 0xff)).append(char(v >> 8)); };
    auto u32 = [&](std::uint32_t v) {
        for (int i = 0; i < 4; ++i)
            b.append(char((v >> (8 * i)) & 0xff));
    };
    u32(8);
    u16(std::uint16_t(entries.size()));
    for (const IfdEntry& e : entries) {
        u16(e.tag);
        u16(e.type);
        u32(e.count);
        u32(e.value);
    }
    u32(0);
    b.append(payload);
    return b;
}

inline std::uint32_t crc32(const QByteArray& data)
{
    std::uint32_t crc = 0xffffffffu;
    for (char ch : data) {
        crc ^= std::uint8_t(ch);
        for (int k = 0; k < 8; ++k)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

// A PNG signature, an IHDR claiming the given size and an empty IDAT.
inline QByteArray pngWithHeader(std::uint32_t width, std::uint32_t height, int bitDepth = 16, int colourType = 0)
{
    QByteArray chunk("IHDR");
    auto be32 = [](QByteArray& b, std::uint32_t v) {
        for (int i = 3; i >= 0; --i)
            b.append(char((v >> (8 * i)) & 0xff));
    };
    be32(chunk, width);
    be32(chunk, height);
    chunk.append(char(bitDepth)).append(char(colourType)).append('\0').append('\0').append('\0');
    QByteArray png("\x89PNG\r\n\x1a\n", 8);
    be32(png, 13);
    png.append(chunk);
    be32(png, crc32(chunk));
    be32(png, 0); // an empty IDAT, where libpng stops reading the header
    png.append("IDAT");
    be32(png, crc32("IDAT"));
    return png;
}

} // namespace wfs::test
