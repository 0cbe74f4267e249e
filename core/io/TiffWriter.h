#pragma once
// Image planes as one multi-page TIFF (32-bit IEEE floats, uncompressed, little-endian): the stack format
// ImageJ / Fiji, deconvolution and localisation software read. Rows are written top first, so a plane
// (row 0 at the bottom, base/Image.h) reads back upright, as the readers in io/ImageReaders.h give it.
#include "base/Image.h"

#include <string>
#include <vector>

namespace wfs {

// `pixelsPerUnit` > 0: the XResolution and YResolution tags (pixels per unit, as a rational) with ResolutionUnit
// none, the way ImageJ writes a calibrated stack: the unit is the description's "unit=" (ImageJ, tifffile's
// imagej_metadata). 0 writes no resolution.
// Throws std::invalid_argument for no planes, planes of different sizes, or more than 4 GiB.
std::string tiffStackBytes(const std::vector<Image>& planes, const std::string& description, double pixelsPerUnit = 0.0);

} // namespace wfs
