#pragma once
// The input the TIFF and PNG readers decode from (bytes in memory or an open file read as needed), shared by
// io/ImageReaders.cpp and io/TiffReader.cpp. Internal to core/io.
#include "io/ImageReaders.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace wfs::imageio {

// The file's bytes in memory, or read from an open file as they are needed (`fd`), so that a reader holds
// only what it decodes: a header-only read touches the directories, not the pixels.
struct MemoryStream {
    const std::uint8_t* data = nullptr;
    std::size_t size = 0;
    std::size_t position = 0;
    std::string errors; // libtiff's error messages for this file
    std::string lastWarning;
    int fd = -1; // >= 0: read with pread instead of from `data`
};

// Up to `count` bytes at the stream's position; fewer at the end of the data or on a read error.
std::size_t streamRead(MemoryStream& s, void* buffer, std::size_t count);

// An open, readable regular file of at most the size `limits` allow (the whole file, were it held in memory);
// throws ImageReadError naming the file otherwise.
struct OpenFile {
    int fd = -1;
    std::size_t size = 0;
    OpenFile(const std::string& path, const ReadLimits& limits);
    ~OpenFile();
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
};

} // namespace wfs::imageio
