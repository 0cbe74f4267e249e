#pragma once
// Between Python and core: keyword arguments as core's named options (io/SettingOptions.h), NumPy arrays
// as image planes and back, and core's exceptions as Python's. Nothing here parses or checks a setting:
// the values go to core as text, the way the command line hands them over.
#include "io/Dataset.h"
#include "io/SettingOptions.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace wfs::python {

namespace py = pybind11;

// The options of a reconstruction as keyword arguments: the command line's names with '_' for '-'
// (pixel_scale for --pixel-scale), in messages too.
class KeywordOptions : public OptionSource {
public:
    // Each value as the command line would get it: a str as is, a number as Python writes it, a list or
    // tuple joined by commas (a pair as "a:b", for bad_pixels), True for a switch (False and None: not
    // given). Throws TypeError for an unknown name (naming the nearest) or a value of the wrong kind.
    KeywordOptions(const py::kwargs& kwargs, const char* function);
    bool has(const char* name) const override { return m_values.count(name) > 0; }
    std::string value(const char* name) const override;
    std::string spell(const char* name) const override { return pythonName(name); }
    bool empty() const { return m_values.empty(); }

    static std::string pythonName(const std::string& optionName);
    // Every option a reconstruction takes, as core lists them (metadata, preparation, model, solver).
    static const std::vector<OptionHelp>& all();

private:
    std::map<std::string, std::string> m_values; // by the command line's name
};

// How an array's rows run, in matplotlib's words (imshow's `origin`). Core holds every image with row 0 at the
// bottom (FITS orientation, as astropy reads a cube): Lower is that, array row k = image row k. Upper is the
// order tifffile, PIL, imageio and imshow's default use, top row first: array row k = image row ny - 1 - k.
enum class Origin { Lower, Upper };
// "lower" or "upper"; None gives `fallback`. Anything else raises ValueError naming the keyword and the
// allowed values, or TypeError for a value that is not a str.
Origin originArgument(const py::handle& value, Origin fallback = Origin::Lower);
const char* originName(Origin origin);

// A (planes, ny, nx) or (ny, nx) array of any integer or float dtype, in any memory order, as planes named
// "name[k]" held with row 0 at the bottom: the array's first row is the bottom row for Origin::Lower, the
// top row for Origin::Upper. An integer dtype's largest value is the default saturation level, as a file's
// stored type is.
ImageFileContent contentFromArray(const py::array& array, const std::string& name, Origin origin = Origin::Lower);

// Views without a copy: the image's pixels as a read-only (ny, nx) float64 array that keeps `owner` alive
// (for Origin::Upper a view whose rows run top first, by a negative row stride).
py::array imageView(const Image& image, std::shared_ptr<const void> owner, Origin origin = Origin::Lower);
// A (planes, ny, nx) float64 array (a copy: the planes are separate buffers), rows as `origin` says.
py::array imageStack(const std::vector<const Image*>& planes, Origin origin = Origin::Lower);
py::array vectorArray(const std::vector<double>& values);

// A str or path-like object (pathlib.Path) as a file name.
std::string pathArgument(const py::handle& path);

// Registers the translations: OptionError, SettingsError, DatasetError -> ValueError; ImageReadError,
// SessionError, OutputError -> OSError (FileNotFoundError for a path that does not exist).
void registerExceptions();

// The dataset's messages: errors raise ValueError (joined), warnings go to Python's warnings module
// (UserWarning), and the notes are returned.
std::vector<std::string> takeMessages(const std::vector<DatasetMessage>& messages);

// Drawing text into a PNG needs a QGuiApplication (fonts); made once, headless, when none exists.
void ensureGuiApplication();

} // namespace wfs::python
