#include "Conversions.h"

#include "base/QuietQt.h"
#include "base/MemoryBudget.h"
#include "io/ImageReaders.h"
#include "io/OutputTransaction.h"
#include "io/Session.h"

#include <QCoreApplication>
#include <QGuiApplication>

#include <cmath>
#include <limits>

namespace wfs::python {

namespace {

// A number as Python writes it (str: shortest round trip, also for NumPy scalars).
std::string numberText(const py::handle& value)
{
    return py::str(value).cast<std::string>();
}

bool isNumber(const py::handle& value)
{
    return !py::isinstance<py::bool_>(value) && PyNumber_Check(value.ptr()) && !py::isinstance<py::str>(value)
           && !py::isinstance<py::array>(value);
}

std::string typeName(const py::handle& value)
{
    return py::str(py::type::of(value).attr("__name__")).cast<std::string>();
}

// A list's item: a str, a number or (bad_pixels) a pair of them. A pair's own items are never sequences, so a list
// that holds itself, or one nested 100 000 deep, is a TypeError at its second level instead of a recursion without end.
std::string itemText(const py::handle& item, const std::string& name, bool pairAllowed = true)
{
    if (py::isinstance<py::str>(item))
        return item.cast<std::string>();
    if (isNumber(item))
        return numberText(item);
    if (pairAllowed && (py::isinstance<py::tuple>(item) || py::isinstance<py::list>(item))) {
        const py::sequence pair = py::reinterpret_borrow<py::sequence>(item);
        if (pair.size() == 2)
            return itemText(pair[0], name, false) + ":" + itemText(pair[1], name, false);
        throw py::type_error(name + ": expected a list of str or numbers (or of (column, row) pairs), got a " + typeName(item) + " of "
                             + std::to_string(pair.size()) + " items in it");
    }
    throw py::type_error(name + ": expected a str or a number" + std::string(pairAllowed ? "" : " in a pair") + ", got " + typeName(item));
}

} // namespace

const std::vector<OptionHelp>& KeywordOptions::all()
{
    static const std::vector<OptionHelp> options = [] {
        std::vector<OptionHelp> list;
        for (auto group : {metadataOptionHelp(), preprocessOptionHelp(), modelOptionHelp(), solverOptionHelp()})
            list.insert(list.end(), group.begin(), group.end());
        return list;
    }();
    return options;
}

std::string KeywordOptions::pythonName(const std::string& optionName)
{
    std::string name = optionName;
    for (char& c : name)
        if (c == '-')
            c = '_';
    return name;
}

KeywordOptions::KeywordOptions(const py::kwargs& kwargs, const char* function)
{
    for (const auto& [key, value] : kwargs) {
        const std::string name = key.cast<std::string>();
        const OptionHelp* option = nullptr;
        for (const OptionHelp& o : all())
            if (pythonName(o.name.toStdString()) == name)
                option = &o;
        if (!option) {
            py::list names;
            for (const OptionHelp& o : all())
                names.append(pythonName(o.name.toStdString()));
            const py::list near = py::module_::import("difflib").attr("get_close_matches")(name, names, 1);
            throw py::type_error(std::string(function) + "() got an unexpected keyword argument '" + name + "'"
                                 + (near.empty() ? std::string() : "; did you mean '" + near[0].cast<std::string>() + "'?"));
        }
        const std::string optionName = option->name.toStdString();
        if (value.is_none())
            continue;
        if (option->valueName.isEmpty()) { // a switch
            if (!py::isinstance<py::bool_>(value))
                throw py::type_error(name + ": expected True or False");
            if (value.cast<bool>())
                m_values[optionName] = std::string();
            continue;
        }
        if (py::isinstance<py::bool_>(value))
            throw py::type_error(name + ": expected a value (" + option->valueName.toStdString() + "), not True or False");
        if (py::isinstance<py::str>(value) || isNumber(value)) {
            m_values[optionName] = itemText(value, name);
        } else if (py::isinstance<py::sequence>(value) || py::isinstance<py::array>(value)) {
            std::string joined;
            for (const py::handle item : py::iter(value))
                joined += (joined.empty() ? "" : ",") + itemText(item, name);
            m_values[optionName] = joined;
        } else {
            throw py::type_error(name + ": expected a str, a number or a list, got "
                                 + py::str(py::type::of(value).attr("__name__")).cast<std::string>());
        }
    }
}

std::string KeywordOptions::value(const char* name) const
{
    const auto it = m_values.find(name);
    return it == m_values.end() ? std::string() : it->second;
}

Origin originArgument(const py::handle& value, Origin fallback)
{
    if (value.is_none())
        return fallback;
    if (!py::isinstance<py::str>(value))
        throw py::type_error("origin: expected 'lower' or 'upper', got "
                             + py::str(py::type::of(value).attr("__name__")).cast<std::string>());
    const std::string text = value.cast<std::string>();
    if (text == "lower")
        return Origin::Lower;
    if (text == "upper")
        return Origin::Upper;
    throw py::value_error("origin: '" + text
                          + "' is not 'lower' (row 0 at the bottom: FITS, astropy, the default) or 'upper' (row 0 at the top: "
                            "tifffile, PIL, imageio, matplotlib's imshow)");
}

const char* originName(Origin origin)
{
    return origin == Origin::Upper ? "upper" : "lower";
}

ImageFileContent contentFromArray(const py::array& array, const std::string& name, Origin origin)
{
    const char kind = array.dtype().kind();
    if (kind != 'i' && kind != 'u' && kind != 'f')
        throw py::type_error(name + ": the stack's dtype " + py::str(array.dtype()).cast<std::string>()
                             + " is not an integer or floating-point type");
    if (array.ndim() != 2 && array.ndim() != 3)
        throw py::value_error(name + ": expected a (planes, ny, nx) or (ny, nx) array, got " + std::to_string(array.ndim())
                              + " dimensions");
    const bool single = array.ndim() == 2;
    const py::ssize_t planes = single ? 1 : array.shape(0), ny = array.shape(single ? 0 : 1), nx = array.shape(single ? 1 : 2);
    // The sizes a file may have (core's read limits), asked of the shape before a pixel is copied: a broadcast view
    // of 9000 x 9000 costs nothing until it is converted.
    if (const std::string error = imageSizeError(planes, nx, ny); !error.empty())
        throw py::value_error(name + ": shape " + py::str(array.attr("shape")).cast<std::string>() + ": " + error);
    ImageFileContent content;
    const int bits = int(array.dtype().itemsize()) * 8;
    content.bitsPerSample = bits;
    content.floatingPoint = kind == 'f';
    if (kind == 'u')
        content.formatMaximum = std::ldexp(1.0, bits) - 1.0;
    else if (kind == 'i')
        content.formatMaximum = std::ldexp(1.0, bits - 1) - 1.0;
    const size_t planeSize = size_t(ny) * size_t(nx);
    const py::module_ numpy = py::module_::import("numpy");
    for (py::ssize_t k = 0; k < planes; ++k) {
        // One plane at a time to C-ordered doubles (none when it is one already): at most one plane's copy beside the images.
        // NumPy's own conversion, whose error (a MemoryError) is raised as it is, not cleared as array_t::ensure clears it.
        const py::object view = single ? py::object(array) : py::object(array[py::int_(k)]);
        const auto values = numpy.attr("ascontiguousarray")(view, py::arg("dtype") = "float64").cast<py::array_t<double>>();
        Image image{int(nx), int(ny)};
        const double* plane = values.data();
        if (origin == Origin::Lower) {
            std::copy(plane, plane + planeSize, image.pixels.begin());
        } else { // the array's first row is the image's top row
            for (py::ssize_t row = 0; row < ny; ++row)
                std::copy(plane + size_t(row) * size_t(nx), plane + size_t(row + 1) * size_t(nx),
                          image.pixels.begin() + std::ptrdiff_t(size_t(ny - 1 - row) * size_t(nx)));
        }
        image.source = name + "[" + std::to_string(k) + "]";
        content.planes.push_back(std::move(image));
    }
    return content;
}

py::array imageView(const Image& image, std::shared_ptr<const void> owner, Origin origin)
{
    auto* keep = new std::shared_ptr<const void>(std::move(owner));
    const py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<const void>*>(p); });
    const py::ssize_t rowStride = py::ssize_t(image.width) * py::ssize_t(sizeof(double));
    // Top row first: the view starts at the image's last row and steps back, still without a copy.
    const bool upper = origin == Origin::Upper && image.height > 0;
    const double* first = upper ? image.pixels.data() + size_t(image.height - 1) * size_t(image.width) : image.pixels.data();
    py::array view(py::dtype::of<double>(), {py::ssize_t(image.height), py::ssize_t(image.width)},
                   {upper ? -rowStride : rowStride, py::ssize_t(sizeof(double))}, first, base);
    // Every view of a result shares its memory: changing one would change the result.
    view.attr("setflags")(py::arg("write") = false);
    return view;
}

py::array imageStack(const std::vector<const Image*>& planes, Origin origin)
{
    const py::ssize_t ny = planes.empty() ? 0 : planes.front()->height, nx = planes.empty() ? 0 : planes.front()->width;
    py::array_t<double> stack({py::ssize_t(planes.size()), ny, nx});
    double* out = stack.mutable_data();
    for (const Image* image : planes) {
        if (origin == Origin::Lower) {
            out = std::copy(image->pixels.begin(), image->pixels.end(), out);
            continue;
        }
        for (py::ssize_t row = ny - 1; row >= 0; --row) // top row first
            out = std::copy(image->pixels.begin() + std::ptrdiff_t(size_t(row) * size_t(nx)),
                            image->pixels.begin() + std::ptrdiff_t(size_t(row + 1) * size_t(nx)), out);
    }
    return stack;
}

py::array vectorArray(const std::vector<double>& values)
{
    py::array_t<double> array(py::ssize_t(values.size()));
    std::copy(values.begin(), values.end(), array.mutable_data());
    return array;
}

std::string pathArgument(const py::handle& path)
{
    // fsdecode: a bytes path (b"d.fits") is a path too, not the str "b'd.fits'".
    const py::module_ os = py::module_::import("os");
    return os.attr("fsdecode")(os.attr("fspath")(path)).cast<std::string>();
}

void registerExceptions()
{
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p)
                std::rethrow_exception(p);
        } catch (const OptionError& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const SettingsError& e) {
            // Named as a keyword argument (core names the setting as the command line does).
            PyErr_SetString(PyExc_ValueError, (KeywordOptions::pythonName(e.setting()) + ": " + e.problem()).c_str());
        } catch (const DatasetError& e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        } catch (const ImageReadError& e) {
            PyErr_SetString(PyExc_OSError, e.what());
        } catch (const SessionError& e) {
            PyErr_SetString(PyExc_OSError, e.what());
        } catch (const OutputError& e) {
            PyErr_SetString(PyExc_OSError, e.what());
        } catch (const MemoryLimitError& e) {
            // Refused before allocating (base/MemoryBudget.h): the size and the limit in the message.
            PyErr_SetString(PyExc_MemoryError, e.what());
        }
    });
}

std::vector<std::string> takeMessages(const std::vector<DatasetMessage>& messages)
{
    std::string errors;
    std::vector<std::string> notes;
    for (const DatasetMessage& m : messages) {
        if (m.level == MessageLevel::Error)
            errors += (errors.empty() ? "" : "; ") + m.text;
        else if (m.level == MessageLevel::Warning)
            PyErr_WarnEx(PyExc_UserWarning, m.text.c_str(), 2) == 0 ? void() : throw py::error_already_set();
        else
            notes.push_back(m.text);
    }
    if (!errors.empty())
        throw py::value_error(errors);
    return notes;
}

void ensureGuiApplication()
{
    if (QCoreApplication::instance())
        return;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    quietQtMessages();
    static int argc = 1;
    static char name[] = "wavefront_studio";
    static char* argv[] = {name, nullptr};
    // Never deleted: a static one would be torn down after the interpreter, whose exit may already have
    // unloaded what Qt's destructor calls.
    static QGuiApplication* application = new QGuiApplication(argc, argv);
    (void)application;
}

} // namespace wfs::python
