#include "io/Hdf5Model.h"

#include "fit/PsfStack.h"
#include "io/Provenance.h"
#include "optics/Zernike.h"
#include "settings/SettingsText.h"

#include <hdf5.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs {

namespace {

// libhdf5 (Debian's serial build) is not thread-safe: one file at a time.
std::mutex& hdf5Mutex()
{
    static std::mutex m;
    return m;
}

// An HDF5 handle closed on every path.
class Handle {
public:
    Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what)
        : m_id(id)
        , m_close(close)
    {
        if (id < 0)
            throw std::runtime_error("libhdf5 could not " + what);
    }
    ~Handle()
    {
        if (m_id >= 0)
            m_close(m_id);
    }
    Handle(Handle&& other) noexcept
        : m_id(other.m_id)
        , m_close(other.m_close)
    {
        other.m_id = -1;
    }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    hid_t id() const { return m_id; }

private:
    hid_t m_id;
    herr_t (*m_close)(hid_t);
};

void check(herr_t status, const std::string& what)
{
    if (status < 0)
        throw std::runtime_error("libhdf5 could not " + what);
}

// Creation properties without the objects' times: the same model makes the same bytes.
Handle untimed(hid_t propertyClass)
{
    Handle properties(H5Pcreate(propertyClass), H5Pclose, "make creation properties");
    check(H5Pset_obj_track_times(properties.id(), false), "leave out the objects' times");
    return properties;
}

void textAttribute(hid_t on, const char* name, const std::string& value)
{
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose, "make a string type");
    check(H5Tset_size(type.id(), H5T_VARIABLE), "size a string type");
    check(H5Tset_cset(type.id(), H5T_CSET_UTF8), "set a string's character set");
    Handle space(H5Screate(H5S_SCALAR), H5Sclose, "make a scalar space");
    Handle attribute(H5Acreate2(on, name, type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                     std::string("create the attribute ") + name);
    const char* data = value.c_str();
    check(H5Awrite(attribute.id(), type.id(), &data), std::string("write the attribute ") + name);
}

void numberAttribute(hid_t on, const char* name, const std::vector<double>& values)
{
    const hsize_t size = values.size();
    Handle space(values.size() == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &size, nullptr), H5Sclose, "make a space");
    Handle attribute(H5Acreate2(on, name, H5T_IEEE_F64LE, space.id(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                     std::string("create the attribute ") + name);
    check(H5Awrite(attribute.id(), H5T_NATIVE_DOUBLE, values.data()), std::string("write the attribute ") + name);
}

// A dataset of doubles (dims empty: a scalar) with its unit; returns it open for more attributes.
std::unique_ptr<Handle> doubles(hid_t group, const char* name, const std::vector<hsize_t>& dims, const double* data,
                                const std::string& units)
{
    Handle space(dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose, "make a space");
    const Handle properties = untimed(H5P_DATASET_CREATE);
    auto set = std::make_unique<Handle>(H5Dcreate2(group, name, H5T_IEEE_F64LE, space.id(), H5P_DEFAULT, properties.id(), H5P_DEFAULT),
                                        H5Dclose, std::string("create the dataset ") + name);
    hsize_t count = 1;
    for (hsize_t d : dims)
        count *= d;
    if (count > 0) // an empty table is a dataset of size 0, nothing to write
        check(H5Dwrite(set->id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), std::string("write the dataset ") + name);
    textAttribute(set->id(), "units", units);
    return set;
}

void integers(hid_t group, const char* name, const std::vector<int>& values, const std::string& units)
{
    const hsize_t size = values.size();
    Handle space(H5Screate_simple(1, &size, nullptr), H5Sclose, "make a space");
    const Handle properties = untimed(H5P_DATASET_CREATE);
    Handle set(H5Dcreate2(group, name, H5T_STD_I32LE, space.id(), H5P_DEFAULT, properties.id(), H5P_DEFAULT), H5Dclose,
               std::string("create the dataset ") + name);
    if (!values.empty())
        check(H5Dwrite(set.id(), H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), std::string("write the dataset ") + name);
    textAttribute(set.id(), "units", units);
}

void scalar(hid_t group, const char* name, double value, const std::string& units, const std::string& description)
{
    const auto set = doubles(group, name, {}, &value, units);
    textAttribute(set->id(), "description", description);
}

// A map over the pupil (row 0 at the bottom) with its geometry.
void pupilMap(hid_t group, const char* name, const Image& map, const PupilMapGeometry& geometry, const std::string& units,
              const std::string& description)
{
    const auto set = doubles(group, name, {hsize_t(map.height), hsize_t(map.width)}, map.pixels.data(), units);
    textAttribute(set->id(), "description", description);
    textAttribute(set->id(), "row_order", "row 0 at the bottom (y up), x to the right; NaN outside the pupil");
    numberAttribute(set->id(), "first_column", {geometry.firstColumn});
    numberAttribute(set->id(), "first_row", {geometry.firstRow});
    numberAttribute(set->id(), "spacing", {geometry.spacing});
    numberAttribute(set->id(), "columns_along_x", {geometry.columnsAlongX ? 1.0 : 0.0});
    textAttribute(set->id(), "coordinates",
                  "pupil coordinates of pixel (row r, column c): first_column + c * spacing, first_row + r * spacing, radius 1 "
                  "at the pupil's edge");
}

Handle group(hid_t in, const char* name)
{
    const Handle properties = untimed(H5P_GROUP_CREATE);
    return Handle(H5Gcreate2(in, name, H5P_DEFAULT, properties.id(), H5P_DEFAULT), H5Gclose, std::string("create the group ") + name);
}

} // namespace

QByteArray hdf5ModelBytes(const PsfStack& stack, const FitResult& result, const ExportContext& context)
{
    if (stack.planes.empty())
        throw std::runtime_error("the PSF stack has no planes");
    std::lock_guard<std::mutex> lock(hdf5Mutex());
    // No error stacks printed on stderr: a failure becomes the exception's message.
    H5E_auto2_t oldHandler = nullptr;
    void* oldData = nullptr;
    H5Eget_auto2(H5E_DEFAULT, &oldHandler, &oldData);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    struct Restore {
        H5E_auto2_t handler;
        void* data;
        ~Restore() { H5Eset_auto2(H5E_DEFAULT, handler, data); }
    } restore{oldHandler, oldData};

    // In memory (the core driver without a backing store); a name of its own per file made.
    static std::atomic<unsigned> counter{0};
    const std::string name = "wavefront-studio-model-" + std::to_string(counter++) + ".h5";
    Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "make file access properties");
    check(H5Pset_fapl_core(access.id(), 1 << 20, 0), "keep the file in memory");
    QByteArray bytes;
    {
        const Handle creation = untimed(H5P_FILE_CREATE);
        Handle file(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, creation.id(), access.id()), H5Fclose, "create the file in memory");
        const hid_t root = file.id();
        textAttribute(root, "format", "wavefront-studio-psf-model");
        numberAttribute(root, "format_version", {1.0});
        textAttribute(root, "software", "Wavefront Studio " + std::string(softwareVersion()));
        textAttribute(root, "problem", result.problemName);
        textAttribute(root, "conventions",
                      "Images row 0 at the bottom (y up), x to the right; pupil coordinates normalised to radius 1, angle "
                      "counter-clockwise from +x; Zernike terms in the ordering and normalisation of /zernike; units in each "
                      "dataset's 'units' attribute. One PSF for the whole field (no field model). README Conventions.");

        {
            Handle optics = group(root, "optics");
            scalar(optics.id(), "wavelength", result.wavelength, "m", "the wavelength the pupil phase is given at");
            scalar(optics.id(), "sampling_q", result.samplingQ, "1", "Q = lambda / (2 NA pixel) of the data's pixels, as fitted");
            if (context.numericalAperture > 0.0) {
                scalar(optics.id(), "numerical_aperture", context.numericalAperture, "1", "the objective's NA");
                scalar(optics.id(), "immersion_index", context.immersionIndex, "1", "refractive index of the immersion medium");
            }
            if (context.samplePixelPitch > 0.0)
                scalar(optics.id(), "pixel_size", context.samplePixelPitch, "m", "the data's pixel in the sample plane");
            if (context.apertureDiameter > 0.0)
                scalar(optics.id(), "aperture_diameter", context.apertureDiameter, "m", "the telescope's aperture");
            textAttribute(optics.id(), "imaging_model", imagingModelName(result.imagingModel));
        }
        {
            Handle pupil = group(root, "pupil");
            if (!result.phaseMap.isEmpty())
                pupilMap(pupil.id(), "phase", result.phaseMap, result.phaseMapGeometry, "rad",
                         "the fitted pupil phase (Zernike and zonal terms)");
            if (!result.aberrationMap.isEmpty())
                pupilMap(pupil.id(), "aberration", result.aberrationMap, result.phaseMapGeometry, "rad",
                         std::string("the phase less piston, tip, tilt") + (result.defocusRemoved ? " and defocus" : ""));
            if (!result.pupilAmplitude.isEmpty())
                pupilMap(pupil.id(), "amplitude", result.pupilAmplitude, result.phaseMapGeometry, "1",
                         std::string("the field amplitude (") + pupilAmplitudeModelName(result.amplitudeModel) + ")");
            if (!result.zonalRemainderMap.isEmpty())
                pupilMap(pupil.id(), "zonal_remainder", result.zonalRemainderMap, result.phaseMapGeometry, "rad",
                         "the phase the Zernike terms do not describe");
        }
        {
            Handle zernike = group(root, "zernike");
            std::vector<int> index, n, m, free;
            std::vector<double> waves, nm, sigma;
            for (const CoefficientResult& c : result.coefficients) {
                index.push_back(c.index);
                n.push_back(c.mode.n);
                m.push_back(c.mode.m);
                free.push_back(c.free ? 1 : 0);
                waves.push_back(c.waves);
                nm.push_back(c.nm);
                sigma.push_back(c.uncertaintyWaves);
            }
            const std::vector<hsize_t> dims{hsize_t(index.size())};
            integers(zernike.id(), "index", index, "1");
            integers(zernike.id(), "n", n, "1");
            integers(zernike.id(), "m", m, "1");
            integers(zernike.id(), "free", free, "1");
            doubles(zernike.id(), "value", dims, waves.data(), "waves");
            doubles(zernike.id(), "value_nm", dims, nm.data(), "nm");
            doubles(zernike.id(), "uncertainty", dims, sigma.data(), "waves");
            textAttribute(zernike.id(), "ordering", zernike::orderingName(result.ordering));
            textAttribute(zernike.id(), "normalisation",
                          result.normalization == ZernikeNormalization::Rms ? "rms (Noll 1976: each term's RMS over the pupil is its value)"
                                                                            : "unit (Born & Wolf: R(1) = 1)");
            numberAttribute(zernike.id(), "wavelength", {result.wavelength});
            textAttribute(zernike.id(), "wavelength_units", "m");
            textAttribute(zernike.id(), "description",
                          "every term but piston; index in the ordering, (n, m) radial order and signed azimuthal frequency; "
                          "uncertainty one standard deviation, NaN where not available, 0 for fixed terms");
        }
        {
            Handle psf = group(root, "psf");
            const Image& first = stack.planes.front();
            std::vector<double> cube;
            for (const Image& plane : stack.planes)
                cube.insert(cube.end(), plane.pixels.begin(), plane.pixels.end());
            const auto set =
                doubles(psf.id(), "stack", {hsize_t(stack.planes.size()), hsize_t(first.height), hsize_t(first.width)}, cube.data(), "1");
            textAttribute(set->id(), "description",
                          "the fitted system's 3-D PSF [z][y][x]: fraction of the unaberrated in-focus PSF's total per pixel "
                          "(it sums to 1 over a field of psf_field pixels); each plane holds the light that falls in it");
            textAttribute(set->id(), "row_order",
                          "row 0 at the bottom (y up), x to the right; the optical axis at [y][x] = "
                          "[height / 2][width / 2] rounded down");
            numberAttribute(set->id(), "psf_field", {double(stack.field)});
            numberAttribute(set->id(), "pixel_scale", {stack.pixelScale});
            numberAttribute(set->id(), "sampling_q", {stack.samplingQ});
            const DefocusAxis axis = defocusAxis(stack.diversity);
            const double pixel = psfStackPixelPitch(stack, context);
            if (pixel > 0.0 && axis.evenlySpaced && axis.unit == "m") {
                const double dz = axis.values[1] - axis.values[0];
                numberAttribute(set->id(), "voxel_size", {dz, pixel, pixel});
                textAttribute(set->id(), "voxel_size_units", "m");
                numberAttribute(set->id(), "element_size_um", {dz * 1e6, pixel * 1e6, pixel * 1e6});
            } else if (pixel > 0.0) {
                numberAttribute(set->id(), "pixel_size", {pixel});
                textAttribute(set->id(), "pixel_size_units", "m");
            }
            if (!stack.warning.empty())
                textAttribute(set->id(), "warning", stack.warning);
            std::vector<double> z = axis.values;
            if (axis.unit.empty()) {
                z.clear();
                for (size_t k = 0; k < stack.diversity.size(); ++k)
                    z.push_back(double(k));
            }
            const auto zSet = doubles(psf.id(), "z", {hsize_t(z.size())}, z.data(), axis.unit.empty() ? "1" : axis.unit);
            textAttribute(zSet->id(), "description",
                          axis.unit == "m"       ? "each plane's axial position (README Conventions: +z)"
                          : axis.unit == "waves" ? "each plane's defocus as W020"
                                                 : "plane number (the planes mix diversities)");
        }
        check(H5Fflush(root, H5F_SCOPE_GLOBAL), "flush the file");
        const ssize_t size = H5Fget_file_image(root, nullptr, 0);
        if (size <= 0)
            throw std::runtime_error("libhdf5 could not give the file's size");
        bytes.resize(qsizetype(size));
        if (H5Fget_file_image(root, bytes.data(), size_t(size)) != size)
            throw std::runtime_error("libhdf5 could not give the file's bytes");
    }
    return bytes;
}

} // namespace wfs
