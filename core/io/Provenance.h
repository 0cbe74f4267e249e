#pragma once
// Who wrote an export and when: the program's name and version (the CMake project version, compiled
// into Provenance.cpp only) and the time of writing, for FITS headers (CREATOR, DATE) and result JSON
// ("software", "date").
#include <string>

namespace wfs {

const char* softwareName();    // "Wavefront Studio"
const char* softwareVersion(); // "0.1.0": project(... VERSION) in the top-level CMakeLists.txt
std::string softwareText();    // "Wavefront Studio 0.1.0"

// The time of writing in UTC as ISO 8601 without zone ("2026-11-30T17:45:47", the FITS DATE format).
// When SOURCE_DATE_EPOCH is set (the reproducible-builds convention: seconds since 1970), that time
// instead, so that runs meant to give identical bytes can (tests compare output checksums).
std::string creationDateUtc();

} // namespace wfs
