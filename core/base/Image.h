#pragma once
// One image plane as the whole program holds it: row-major, row 0 at the bottom (FITS orientation),
// x to the right, y up. Readers of other formats flip rows to match.
#include <cstddef>
#include <string>
#include <vector>

namespace wfs {

struct Image {
    int width = 0;
    int height = 0;
    std::vector<double> pixels; // width * height values; NaN marks a pixel without data
    std::string source;         // where it came from, for messages ("file.fits[2]")

    Image() = default;
    Image(int w, int h, double fill = 0.0)
        : width(w)
        , height(h)
        , pixels(size_t(w) * size_t(h), fill)
    {
    }
    bool isEmpty() const { return width <= 0 || height <= 0; }
    double& at(int row, int col) { return pixels[size_t(row) * size_t(width) + size_t(col)]; }
    double at(int row, int col) const { return pixels[size_t(row) * size_t(width) + size_t(col)]; }
};

} // namespace wfs
