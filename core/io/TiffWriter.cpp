#include "io/TiffWriter.h"

#include <cstdint>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace wfs {

namespace {

void put16(std::string& out, uint16_t v)
{
    out.push_back(char(v & 0xff));
    out.push_back(char(v >> 8));
}

void put32(std::string& out, uint32_t v)
{
    for (int shift = 0; shift < 32; shift += 8)
        out.push_back(char((v >> shift) & 0xff));
}

enum Type : uint16_t { Ascii = 2, Short = 3, Long = 4, Rational = 5 };

struct Entry {
    uint16_t tag;
    uint16_t type;
    uint32_t count;
    uint32_t value; // the value itself (SHORT / LONG, count 1) or the offset of the data
};

// A positive value as numerator / denominator of 32 bits, to about 1e-9 relative: the denominator a power of ten.
std::pair<uint32_t, uint32_t> rational(double value)
{
    uint32_t denominator = 1;
    while (denominator < 1000000000u && value * double(denominator) * 10.0 < 4.0e9)
        denominator *= 10;
    return {uint32_t(std::llround(value * double(denominator))), denominator};
}

} // namespace

std::string tiffStackBytes(const std::vector<Image>& planes, const std::string& descriptionIn, double pixelsPerUnit)
{
    if (!(pixelsPerUnit >= 0.0) || !std::isfinite(pixelsPerUnit) || pixelsPerUnit >= 4.0e9)
        throw std::invalid_argument("TIFF stack: pixels per unit out of range");
    if (planes.empty())
        throw std::invalid_argument("no planes to write");
    const int width = planes.front().width, height = planes.front().height;
    for (const Image& p : planes)
        if (p.width != width || p.height != height || p.pixels.size() != size_t(width) * size_t(height))
            throw std::invalid_argument("TIFF stack: planes of different sizes");
    const uint64_t planeBytes = uint64_t(width) * uint64_t(height) * 4;
    if (planeBytes * planes.size() > 0xF0000000ull)
        throw std::invalid_argument("TIFF stack larger than 4 GiB");
    const std::string description = descriptionIn + '\0';
    std::string out;
    out += "II";
    put16(out, 42);
    const size_t firstIfdOffsetAt = out.size();
    put32(out, 0);
    size_t previousNextOffsetAt = firstIfdOffsetAt;
    for (size_t k = 0; k < planes.size(); ++k) {
        // The pixels, top row first.
        const uint32_t dataOffset = uint32_t(out.size());
        for (int row = height - 1; row >= 0; --row)
            for (int col = 0; col < width; ++col) {
                const float v = float(planes[k].pixels[size_t(row) * size_t(width) + size_t(col)]);
                uint32_t bits;
                std::memcpy(&bits, &v, 4);
                put32(out, bits);
            }
        uint32_t descriptionOffset = 0;
        if (k == 0) {
            descriptionOffset = uint32_t(out.size());
            out += description;
        }
        if (out.size() % 2)
            out.push_back('\0'); // rationals and IFDs start on a word boundary
        uint32_t resolutionOffset = 0;
        if (pixelsPerUnit > 0.0) {
            // XResolution then YResolution, each numerator and denominator.
            const auto [numerator, denominator] = rational(pixelsPerUnit);
            resolutionOffset = uint32_t(out.size());
            for (int i = 0; i < 2; ++i) {
                put32(out, numerator);
                put32(out, denominator);
            }
        }
        std::vector<Entry> entries = {
            {256, Long, 1, uint32_t(width)},
            {257, Long, 1, uint32_t(height)},
            {258, Short, 1, 32},
            {259, Short, 1, 1}, // no compression
            {262, Short, 1, 1}, // black is zero
        };
        if (k == 0)
            entries.push_back({270, Ascii, uint32_t(description.size()), descriptionOffset});
        entries.insert(entries.end(), {
                                          {273, Long, 1, dataOffset},
                                          {277, Short, 1, 1},
                                          {278, Long, 1, uint32_t(height)},
                                          {279, Long, 1, uint32_t(planeBytes)},
                                      });
        if (pixelsPerUnit > 0.0) {
            entries.push_back({282, Rational, 1, resolutionOffset});
            entries.push_back({283, Rational, 1, resolutionOffset + 8});
        }
        entries.push_back({284, Short, 1, 1});
        if (pixelsPerUnit > 0.0)
            entries.push_back({296, Short, 1, 1}); // no absolute unit: the description's says which
        entries.push_back({339, Short, 1, 3});     // IEEE floating point
        const uint32_t ifdOffset = uint32_t(out.size());
        for (int i = 0; i < 4; ++i)
            out[previousNextOffsetAt + size_t(i)] = char((ifdOffset >> (8 * i)) & 0xff);
        put16(out, uint16_t(entries.size()));
        for (const Entry& e : entries) {
            put16(out, e.tag);
            put16(out, e.type);
            put32(out, e.count);
            if (e.type == Short && e.count == 1) {
                put16(out, uint16_t(e.value));
                put16(out, 0);
            } else {
                put32(out, e.value);
            }
        }
        previousNextOffsetAt = out.size();
        put32(out, 0);
    }
    return out;
}

} // namespace wfs
