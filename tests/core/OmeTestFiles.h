#pragma once
// OME-TIFF and Micro-Manager test files: the OME-XML of one Z stack as Micro-Manager 2, Bio-Formats and tifffile
// write it, with the parts the metadata readers take chosen by the test, and a Micro-Manager multi-page TIFF written
// byte by byte (libtiff cannot place Micro-Manager's summary block at byte 32, where Micro-Manager puts it).
#include "base/Image.h"

#include <QByteArray>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace wfs::test {

// What an OME-XML document says beyond its layout, each as the text it adds: attributes of Pixels and of its one
// Channel, an Instrument before the Image (with its Objective), and elements of the Image before its Pixels (its
// ObjectiveSettings). The default is the pixel size and z step alone.
struct OmeXmlParts {
    std::string pixels = "PhysicalSizeX=\"0.1\" PhysicalSizeY=\"0.1\" PhysicalSizeZ=\"1.0\"";
    std::string channel;
    std::string instrument;
    std::string imageChildren;
};

// The OME-XML of one Z stack of `planes` planes (the 2016-06 schema): one image, one channel, one time point, the
// planes in IFDs 0.. in Z order.
inline std::string omeXml(int width, int height, int planes, const char* type, const OmeXmlParts& parts = {})
{
    std::string planeList;
    for (int z = 0; z < planes; ++z)
        planeList += "<Plane TheC=\"0\" TheT=\"0\" TheZ=\"" + std::to_string(z) + "\" PositionZ=\"" + std::to_string(z - 1) + "\"/>";
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
           "<OME xmlns=\"http://www.openmicroscopy.org/Schemas/OME/2016-06\" "
           "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" Creator=\"wavefront-studio tests\">"
           + parts.instrument + "<Image ID=\"Image:0\" Name=\"stack\">" + parts.imageChildren
           + "<Pixels ID=\"Pixels:0\" DimensionOrder=\"XYZCT\" Type=\"" + std::string(type) + "\" SizeX=\"" + std::to_string(width)
           + "\" SizeY=\"" + std::to_string(height) + "\" SizeZ=\"" + std::to_string(planes) + "\" SizeC=\"1\" SizeT=\"1\" " + parts.pixels
           + "><Channel ID=\"Channel:0:0\" SamplesPerPixel=\"1\" " + parts.channel + "/><TiffData FirstZ=\"0\" IFD=\"0\" PlaneCount=\""
           + std::to_string(planes) + "\"/>" + planeList + "</Pixels></Image></OME>";
}

// A Micro-Manager multi-page TIFF, little-endian, 16-bit pages top row first: the summary metadata `summaryJson` at
// byte 40 (after the marker 2355492 and its length at bytes 32 and 36; none when empty), `description` on the first
// page, and `imageJson` in every page's tag 51123 (none when empty). Pixel values are rounded and clamped to 16 bits.
inline QByteArray micromanagerTiff(const std::vector<Image>& planes, const std::string& description, const std::string& imageJson,
                                   const std::string& summaryJson)
{
    QByteArray b;
    auto u16 = [&](std::uint16_t v) { b.append(char(v & 0xff)).append(char(v >> 8)); };
    auto u32 = [&](std::uint32_t v) {
        for (int i = 0; i < 4; ++i)
            b.append(char((v >> (8 * i)) & 0xff));
    };
    auto patch32 = [&](qsizetype at, std::uint32_t v) {
        for (int i = 0; i < 4; ++i)
            b[at + i] = char((v >> (8 * i)) & 0xff);
    };
    auto align = [&] {
        if (b.size() % 2)
            b.append('\0');
    };
    b.append("II", 2);
    u16(42);
    u32(0); // the first IFD's offset, patched below
    b.append(QByteArray(24, '\0'));
    if (!summaryJson.empty()) {
        u32(2355492);
        u32(std::uint32_t(summaryJson.size()));
        b.append(summaryJson.data(), qsizetype(summaryJson.size()));
    }
    align();
    qsizetype linkAt = 4; // where the offset of the next IFD goes
    for (size_t k = 0; k < planes.size(); ++k) {
        const Image& p = planes[k];
        const auto pixelsAt = std::uint32_t(b.size());
        for (int r = p.height - 1; r >= 0; --r)
            for (int c = 0; c < p.width; ++c)
                u16(std::uint16_t(std::clamp(std::lround(p.at(r, c)), 0L, 65535L)));
        auto text = [&](const std::string& s) {
            align();
            const auto at = std::uint32_t(b.size());
            b.append(s.data(), qsizetype(s.size()));
            b.append('\0');
            return at;
        };
        const bool withDescription = k == 0 && !description.empty();
        const std::uint32_t descriptionAt = withDescription ? text(description) : 0;
        const std::uint32_t jsonAt = imageJson.empty() ? 0 : text(imageJson);
        align();
        patch32(linkAt, std::uint32_t(b.size()));
        struct Entry {
            std::uint16_t tag, type;
            std::uint32_t count, value;
        };
        std::vector<Entry> entries = {
            {256, 4, 1, std::uint32_t(p.width)}, {257, 4, 1, std::uint32_t(p.height)}, {258, 3, 1, 16}, {259, 3, 1, 1}, {262, 3, 1, 1}};
        if (withDescription)
            entries.push_back({270, 2, std::uint32_t(description.size() + 1), descriptionAt});
        entries.push_back({273, 4, 1, pixelsAt});
        entries.push_back({277, 3, 1, 1});
        entries.push_back({278, 4, 1, std::uint32_t(p.height)});
        entries.push_back({279, 4, 1, std::uint32_t(p.width) * std::uint32_t(p.height) * 2});
        if (!imageJson.empty())
            entries.push_back({51123, 2, std::uint32_t(imageJson.size() + 1), jsonAt});
        u16(std::uint16_t(entries.size()));
        for (const Entry& e : entries) {
            u16(e.tag);
            u16(e.type);
            u32(e.count);
            u32(e.value);
        }
        linkAt = b.size();
        u32(0);
    }
    return b;
}

} // namespace wfs::test
