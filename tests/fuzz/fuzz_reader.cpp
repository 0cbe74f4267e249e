// libFuzzer target, one per reader (WFS_FUZZ_READ names it: readTiffMemory, readPngMemory,
// readFitsMemory): the reader must either return planes or throw ImageReadError, never crash, leak,
// overrun or allocate without bound. Any other exception escapes and counts as a finding.
#include "io/ImageReaders.h"

#include <cstddef>
#include <cstdint>

#ifndef WFS_FUZZ_READ
#error "WFS_FUZZ_READ must name the reader under test"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    wfs::ReadLimits limits; // small, so that a header cannot make the fuzzer allocate gigabytes
    limits.maxPixels = 1 << 22;
    limits.maxPlanePixels = 1 << 20;
    limits.maxDimension = 8192;
    limits.maxPlanes = 1000;
    try {
        const wfs::ImageFileContent content = wfs::WFS_FUZZ_READ(data, size, "fuzz", limits);
        for (const wfs::Image& plane : content.planes)
            if (plane.pixels.size() != std::size_t(plane.width) * std::size_t(plane.height))
                __builtin_trap(); // a plane whose buffer does not match its size
    } catch (const wfs::ImageReadError&) {
    }
    return 0;
}
