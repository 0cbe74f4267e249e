#pragma once
// The optics an OME-XML document states: the OME data model that an OME-TIFF carries in its first page's
// ImageDescription (Micro-Manager 2, Bio-Formats and tifffile write it). Only what the fit uses is read: the pixel
// size and z step of the first image's Pixels, its channels' emission wavelength, and its objective's NA and
// immersion. io/Dataset.cpp turns the values into metadata with their origin.
#include <optional>
#include <string>
#include <vector>

namespace wfs {

// One value the document gives: SI units (metres) or a plain number (NA, refractive index), and where it was
// ("PhysicalSizeZ", "LensNA", "Immersion=Oil (index 1.518 assumed for oil)") for the metadata's origin.
struct OmeValue {
    double value = 0.0;
    std::string attribute;
};

// A value the document gives that is not used, said to the user: the metadata field it would have filled (as in
// DatasetMetadata::origin; empty when it concerns none alone) and a phrase without the file's name.
struct OmeNote {
    std::string field;
    std::string text;
};

struct OmeOptics {
    bool isOme = false;                        // the root element is OME (else nothing below is set)
    std::string malformed;                     // not empty: "line L, column C: why"; nothing below is set
    std::optional<OmeValue> pixelPitch;        // Pixels PhysicalSizeX (else PhysicalSizeY), metres
    std::optional<OmeValue> zStep;             // Pixels PhysicalSizeZ, metres
    std::optional<OmeValue> wavelength;        // Channel EmissionWavelength, when the channels that give one agree, metres
    std::optional<OmeValue> numericalAperture; // the image's Objective LensNA
    std::optional<OmeValue> immersionIndex;    // ObjectiveSettings RefractiveIndex, else derived from Objective Immersion
    std::string companionFile;                 // BinaryOnly MetadataFile: the metadata are in that file, not read
    // The planes the document describes, all images together (each Pixels' SizeZ x SizeC x SizeT), and whether its
    // TiffData name other files (a UUID with a FileName: a dataset over several files, whose pages this one does
    // not hold all of). A single-file OME-TIFF with fewer pages than declared is cut short (io/TiffReader.cpp).
    std::optional<double> declaredPlanes;
    bool refersToOtherFiles = false;
    std::vector<OmeNote> notes; // values not used (an unknown unit) and choices made (X and Y differ)
};

// Whether an image description is meant as OME-XML (it starts with '<' and names the OME element or schema), so
// that a malformed one is said to be malformed rather than taken for other text.
bool looksLikeOmeXml(const std::string& description);

// Reads the document. Never throws: a document that is not well-formed XML, or whose sizes are not numbers, comes
// back with `malformed` set and no values.
OmeOptics readOmeXml(const std::string& xml);

// A length in an OME UnitsLength symbol ("µm", "nm", "Å", ...) as metres; std::nullopt for a unit that is not a
// length this program takes (pixel, reference frame, an unknown symbol).
std::optional<double> omeLengthInMetres(double value, const std::string& unit);

} // namespace wfs
