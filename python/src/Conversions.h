#pragma once
// Between Python and core: keyword arguments as core's named options (io/SettingOptions.h), NumPy arrays
// as image planes and back, and core's exceptions as Python's. Nothing here parses or checks a setting:
// the values go to core as text, the way the command line hands them over.
#include "io/Dataset.h"
#include "io/SettingOptions.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
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
// SessionError, OutputError -> OSError (FileNotFoundError for a path that does not exist); MemoryLimitError -> MemoryError.
void registerExceptions();

// The dataset's messages: errors raise ValueError (joined), warnings go to Python's warnings module
// (UserWarning), and the notes are returned.
std::vector<std::string> takeMessages(const std::vector<DatasetMessage>& messages);

// Runs `work(cancel)`, a core computation that checks `cancel` (base/Cancellation.h), on a thread of its own while
// this thread waits without the GIL, taking it back every 20 ms to let Python see a signal. On Ctrl-C (or any
// exception a signal handler raises) the flag is set, the worker is waited for (core stops at its next check) and the
// KeyboardInterrupt propagates. Otherwise returns the work's value or rethrows its exception. Call with the GIL held.
template <typename Work>
auto runInterruptible(Work work) -> decltype(work(std::declval<const std::atomic<bool>&>()))
{
    using Value = decltype(work(std::declval<const std::atomic<bool>&>()));
    std::atomic<bool> cancel{false};
    std::packaged_task<Value()> task([&work, &cancel] { return work(cancel); });
    std::future<Value> done = task.get_future();
    std::thread worker;
    {
        py::gil_scoped_release nogil;
        worker = std::thread(std::move(task));
    }
    const auto join = [&worker] {
        py::gil_scoped_release nogil;
        worker.join();
    };
    for (;;) {
        bool ready = false;
        {
            py::gil_scoped_release nogil;
            ready = done.wait_for(std::chrono::milliseconds(20)) == std::future_status::ready;
        }
        if (ready)
            break;
        if (PyErr_CheckSignals() != 0) {
            cancel = true;
            join();
            throw py::error_already_set();
        }
    }
    join();
    return done.get();
}

// Drawing text into a PNG needs a QGuiApplication (fonts); made once, headless, when none exists.
void ensureGuiApplication();

} // namespace wfs::python
