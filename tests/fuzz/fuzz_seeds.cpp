// Writes the seed corpus of the fuzz targets: small valid files in the layouts the readers handle
// (TIFF: bit depths, compressions, tiles, planar, colour, several pages; PNG: grey, 16-bit, palette,
// colour; FITS: every BITPIX, cubes, BLANK), so that fuzzing starts from every code path.
// Usage: fuzz_seeds DIR  (writes DIR/tiff, DIR/png, DIR/fits)
#include "ImageTestFiles.h"

#include <QDir>

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

using namespace wfs::test;

int main(int argc, char** argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_seeds DIR\n");
        return 2;
    }
    const QDir root(QString::fromLocal8Bit(argv[1]));
    for (const char* sub : {"tiff", "png", "fits"})
        if (!root.mkpath(QString::fromLatin1(sub)))
            return 1;
    const auto path = [&](const char* sub, const QString& name) {
        return root.filePath(QString::fromLatin1(sub) + QLatin1Char('/') + name).toStdString();
    };
    try {
        const wfs::Image small = asymmetricImage(13, 9, 200);
        int n = 0;
        for (int bits : {8, 16, 32})
            for (int compression : {COMPRESSION_NONE, COMPRESSION_LZW, COMPRESSION_ADOBE_DEFLATE, COMPRESSION_PACKBITS})
                for (bool tiled : {false, true}) {
                    TiffLayout layout;
                    layout.bits = bits;
                    layout.compression = compression;
                    layout.tiled = tiled;
                    layout.sampleFormat = bits == 32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT;
                    writeTiff(path("tiff", QStringLiteral("t%1.tif").arg(n++)), {small, small}, layout);
                }
        TiffLayout rgb;
        rgb.bits = 8;
        rgb.samplesPerPixel = 3;
        writeTiff(path("tiff", QStringLiteral("rgb.tif")), {small}, rgb);
        rgb.separate = true;
        writeTiff(path("tiff", QStringLiteral("rgb-separate.tif")), {small}, rgb);
        TiffLayout signedInts;
        signedInts.sampleFormat = SAMPLEFORMAT_INT;
        signedInts.orientation = ORIENTATION_BOTLEFT;
        writeTiff(path("tiff", QStringLiteral("int16-bottom-up.tif")), {small}, signedInts);

        writePng(QString::fromStdString(path("png", QStringLiteral("grey8.png"))), small, QImage::Format_Grayscale8);
        writePng(QString::fromStdString(path("png", QStringLiteral("grey16.png"))), small, QImage::Format_Grayscale16);
        writePng(QString::fromStdString(path("png", QStringLiteral("indexed.png"))), small, QImage::Format_Indexed8);
        writePng(QString::fromStdString(path("png", QStringLiteral("rgb.png"))), small, QImage::Format_RGB32);
        writePng(QString::fromStdString(path("png", QStringLiteral("argb.png"))), small, QImage::Format_ARGB32);

        for (int bitpix : {8, 16, 32, -32, -64})
            writeFitsBitpix(path("fits", QStringLiteral("b%1.fits").arg(bitpix < 0 ? 100 - bitpix : bitpix)), {small, small}, bitpix);
        // A gzip-compressed FITS file, so that mutations reach the bounded inflation (io/Fits.cpp).
        {
            std::ifstream plain(path("fits", QStringLiteral("b16.fits")), std::ios::binary);
            const std::string bytes((std::istreambuf_iterator<char>(plain)), std::istreambuf_iterator<char>());
            gzFile packed = gzopen(path("fits", QStringLiteral("b16.fits.gz")).c_str(), "wb");
            if (!packed || gzwrite(packed, bytes.data(), unsigned(bytes.size())) != int(bytes.size()) || gzclose(packed) != Z_OK)
                throw std::runtime_error("cannot write the gzip seed");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz_seeds: %s\n", e.what());
        return 1;
    }
    return 0;
}
