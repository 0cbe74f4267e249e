#include "io/SplineCalibration.h"

#include "fit/PsfStack.h"
#include "io/Provenance.h"

#include <QFile>
#include <QTemporaryDir>

#include <matio.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

namespace wfs {

namespace {

// One axis of the interpolating cubic spline with not-a-knot ends (MATLAB's spline, which SMAP's interp3 'spline'
// upsampling uses): from n samples a line apart (stride), the coefficients of t^0 .. t^3 of each of the n - 1 cells,
// out[4 c + p]. Unit spacing; M are the second derivatives at the samples: M(i-1) + 4 M(i) + M(i+1) = 6 delta(i) inside,
// and not-a-knot (the third derivative continuous at samples 1 and n - 2) gives M(1) = delta(1), M(n-2) = delta(n-2).
void splineLine(const double* f, long stride, int n, double* out, std::vector<double>& m, std::vector<double>& work)
{
    auto at = [&](int i) { return f[long(i) * stride]; };
    auto delta = [&](int i) { return at(i + 1) - 2.0 * at(i) + at(i - 1); };
    m.assign(size_t(n), 0.0);
    if (n == 3) {
        m.assign(3, delta(1)); // the parabola through the three
    } else if (n >= 4) {
        m[1] = delta(1);
        m[size_t(n - 2)] = delta(n - 2);
        // Rows 2 .. n-3: tridiagonal (1, 4, 1), by elimination.
        const int first = 2, last = n - 3;
        if (last >= first) {
            work.assign(size_t(n), 0.0); // the modified super-diagonal
            for (int i = first; i <= last; ++i) {
                double rhs = 6.0 * delta(i);
                if (i == first)
                    rhs -= m[1];
                if (i == last)
                    rhs -= m[size_t(n - 2)];
                const double pivot = 4.0 - (i == first ? 0.0 : work[size_t(i - 1)]);
                work[size_t(i)] = 1.0 / pivot;
                m[size_t(i)] = (rhs - (i == first ? 0.0 : m[size_t(i - 1)])) / pivot;
            }
            for (int i = last - 1; i >= first; --i)
                m[size_t(i)] -= work[size_t(i)] * m[size_t(i + 1)];
        }
        m[0] = 2.0 * m[1] - m[2];
        m[size_t(n - 1)] = 2.0 * m[size_t(n - 2)] - m[size_t(n - 3)];
    }
    for (int c = 0; c + 1 < n; ++c) {
        const double mc = m[size_t(c)], mn = m[size_t(c + 1)];
        out[4 * c] = at(c);
        out[4 * c + 1] = at(c + 1) - at(c) - (2.0 * mc + mn) / 6.0;
        out[4 * c + 2] = mc / 2.0;
        out[4 * c + 3] = (mn - mc) / 6.0;
    }
}

struct MatFile {
    mat_t* file = nullptr;
    ~MatFile()
    {
        if (file)
            Mat_Close(file);
    }
};

struct MatVar {
    matvar_t* var = nullptr;
    explicit MatVar(matvar_t* v)
        : var(v)
    {
        if (!v)
            throw std::runtime_error("libmatio could not make a variable");
    }
    ~MatVar()
    {
        if (var)
            Mat_VarFree(var);
    }
    matvar_t* release()
    {
        matvar_t* v = var;
        var = nullptr;
        return v;
    }
};

matvar_t* doubles(const char* name, std::vector<double> values, size_t rows = 1)
{
    size_t dims[2] = {rows, values.size() / rows};
    return Mat_VarCreate(name, MAT_C_DOUBLE, MAT_T_DOUBLE, 2, dims, values.data(), 0);
}

matvar_t* number(const char* name, double value)
{
    return doubles(name, {value});
}

matvar_t* text(const char* name, const std::string& value)
{
    size_t dims[2] = {1, value.size()};
    return Mat_VarCreate(name, MAT_C_CHAR, MAT_T_UTF8, 2, dims, const_cast<char*>(value.data()), 0);
}

matvar_t* singles(const char* name, const std::vector<float>& values, std::vector<size_t> dims)
{
    return Mat_VarCreate(name, MAT_C_SINGLE, MAT_T_SINGLE, int(dims.size()), dims.data(), const_cast<float*>(values.data()), 0);
}

// A 1 x 1 struct of the fields given (each owned by the struct once set).
matvar_t* structOf(const char* name, std::vector<matvar_t*> fields)
{
    std::vector<std::unique_ptr<MatVar>> owned;
    for (matvar_t* f : fields)
        owned.push_back(std::make_unique<MatVar>(f));
    std::vector<const char*> names;
    for (matvar_t* f : fields)
        names.push_back(f->name);
    size_t dims[2] = {1, 1};
    MatVar s(Mat_VarCreateStruct(name, 2, dims, names.data(), unsigned(names.size())));
    for (auto& f : owned) {
        // Returns the field it replaces (none here); the struct owns the new one.
        const std::string field = f->var->name;
        Mat_VarSetStructFieldByName(s.var, field.c_str(), 0, f->release());
    }
    return s.release();
}

std::string number3(double v)
{
    char out[32];
    std::snprintf(out, sizeof out, "%.6g", v);
    return out;
}

} // namespace

std::vector<float> tricubicCoefficients(const std::vector<double>& f, std::array<int, 3> n)
{
    if (n[0] < 2 || n[1] < 2 || n[2] < 2)
        throw std::invalid_argument("a tricubic spline needs at least 2 samples along each axis");
    const size_t total = size_t(n[0]) * size_t(n[1]) * size_t(n[2]);
    if (f.size() < total)
        throw std::invalid_argument("fewer samples than the sizes say");
    // The tensor product, one axis at a time (the spline of a line is linear in its samples): along axis 1 every line
    // of samples becomes 4 (n1 - 1) numbers [c1][p1]; along axis 2 every line of those, [c2][p2]; then along axis 3.
    const int m0 = n[0] - 1, m1 = n[1] - 1, m2 = n[2] - 1;
    std::vector<double> m, work, line(4 * size_t(std::max({m0, m1, m2})));
    const size_t q1 = 4 * size_t(m0); // per (i2, i3)
    std::vector<double> a(q1 * size_t(n[1]) * size_t(n[2]));
    for (size_t l = 0; l < size_t(n[1]) * size_t(n[2]); ++l)
        splineLine(f.data() + l * size_t(n[0]), 1, n[0], a.data() + l * q1, m, work);
    const size_t q2 = 4 * size_t(m1);
    std::vector<double> b(q1 * q2 * size_t(n[2])); // [c1 p1] + q1 ([c2 p2] + q2 i3)
    for (int i3 = 0; i3 < n[2]; ++i3)
        for (size_t j = 0; j < q1; ++j) {
            splineLine(a.data() + j + q1 * size_t(n[1]) * size_t(i3), long(q1), n[1], line.data(), m, work);
            for (size_t k = 0; k < q2; ++k)
                b[j + q1 * (k + q2 * size_t(i3))] = line[k];
        }
    const size_t cells = size_t(m0) * size_t(m1) * size_t(m2);
    std::vector<float> coeff(cells * 64);
    for (size_t k = 0; k < q2; ++k)
        for (size_t j = 0; j < q1; ++j) {
            splineLine(b.data() + j + q1 * k, long(q1 * q2), n[2], line.data(), m, work);
            const size_t c1 = j / 4, p1 = j % 4, c2 = k / 4, p2 = k % 4;
            for (int c3 = 0; c3 < m2; ++c3)
                for (size_t p3 = 0; p3 < 4; ++p3) {
                    const size_t cell = c1 + size_t(m0) * (c2 + size_t(m1) * size_t(c3));
                    coeff[cell + cells * (p1 + 4 * p2 + 16 * p3)] = float(line[4 * size_t(c3) + p3]);
                }
        }
    return coeff;
}

SplineVolume splineVolume(const PsfStack& stack, const ExportContext& context)
{
    if (stack.planes.empty())
        throw std::runtime_error("the PSF stack has no planes");
    SplineVolume v;
    v.pixel = psfStackPixelPitch(stack, context);
    if (!(v.pixel > 0.0))
        throw std::runtime_error("a spline calibration needs the pixel size in the sample plane, which is not known: give the "
                                 "data's pixel size with the NA (--pixel-scale 0.1um --na 1.1)");
    const DefocusAxis axis = defocusAxis(stack.diversity);
    if (stack.planes.size() < 2)
        throw std::runtime_error("a spline calibration needs at least 2 planes (--psf-z START:STOP:STEP)");
    if (axis.unit != "m" || !axis.evenlySpaced)
        throw std::runtime_error("a spline calibration needs a z step: planes evenly spaced in axial position (--psf-z as "
                                 "lengths, e.g. -1um:1um:0.05um, of data whose defocus is a length)");
    const Image& first = stack.planes.front();
    if (first.width != first.height)
        throw std::runtime_error("a spline calibration needs square planes (--psf-crop N); these are " + std::to_string(first.width) + " x "
                                 + std::to_string(first.height));
    v.size = first.width;
    v.planes = int(stack.planes.size());
    v.dz = axis.values[1] - axis.values[0];
    v.z0 = -axis.values[0] / v.dz;
    v.x0 = double(v.size / 2 + 1);
    for (size_t k = 0; k < axis.values.size(); ++k)
        if (std::abs(axis.values[k]) < std::abs(axis.values[v.focusPlane]))
            v.focusPlane = k;
    const size_t n = size_t(v.size);
    v.samples.resize(n * n * stack.planes.size());
    for (size_t k = 0; k < stack.planes.size(); ++k) {
        const Image page = psfStackTopFirstPlane(stack, k); // row 0 at the bottom: the top row is height - 1
        for (size_t top = 0; top < n; ++top)
            for (size_t col = 0; col < n; ++col)
                v.samples[top + n * (col + n * k)] = page.pixels[(n - 1 - top) * n + col];
    }
    double sum = 0.0;
    for (size_t i = 0; i < n * n; ++i)
        sum += v.samples[i + n * n * v.focusPlane];
    if (!(sum > 0.0) || !std::isfinite(sum))
        throw std::runtime_error("the PSF's plane nearest z = 0 holds no light in the crop");
    for (double& s : v.samples)
        s /= sum;
    return v;
}

QByteArray splineMatBytes(const PsfStack& stack, const FitResult& result, const ExportContext& context)
{
    const SplineVolume v = splineVolume(stack, context);
    const std::vector<float> coeff = tricubicCoefficients(v.samples, {v.size, v.size, v.planes});
    std::vector<float> psf(v.samples.begin(), v.samples.end());
    const size_t n = size_t(v.size), m = size_t(v.planes);

    const std::string conventions =
        "cspline.coeff(i1,i2,i3,1+p1+4*p2+16*p3): tricubic coefficients of the voxel between samples i and i+1 (the "
        "tensor-product interpolating cubic spline, not-a-knot ends); PSF(s) = sum coeff * t1^p1 t2^p2 t3^p3, s 0-based spline "
        "coordinates, "
        "t = s - floor(s). Dimension 1: image rows, top first; 2: columns, left first; 3: z, increasing with the slice. "
        "x0: 1-based index of the optical axis's pixel on dimensions 1 and 2. z0: 0-based spline coordinate of focus; "
        "z = (s3 - z0) * dz nm. The slice at z = 0 (the nearest) sums to 1 over the ROI. Fitted system of Wavefront Studio: "
        "pupil and detector as fitted, defocus as z (README Conventions).";

    QTemporaryDir dir;
    if (!dir.isValid())
        throw std::runtime_error("no temporary folder for the MATLAB file: " + dir.errorString().toStdString());
    const std::string path = dir.filePath(QStringLiteral("3dcal.mat")).toStdString();
    {
        MatFile file;
        file.file = Mat_CreateVer(path.c_str(), "MATLAB 5.0 MAT-file, written by Wavefront Studio (SMAP 3dcal layout)", MAT_FT_MAT5);
        if (!file.file)
            throw std::runtime_error("libmatio could not create the MATLAB file");
        MatVar sxy(structOf("SXY", {
                                       structOf("cspline", {singles("coeff", coeff, {n - 1, n - 1, m - 1, 64}), number("x0", v.x0),
                                                            number("z0", v.z0), number("dz", v.dz * 1e9), number("mirror", 0.0)}),
                                       singles("PSF", psf, {n, n, m}),
                                       doubles("Xrange", {-INFINITY, INFINITY}),
                                       doubles("Yrange", {-INFINITY, INFINITY}),
                                       doubles("posind", {1.0, 1.0}),
                                       structOf("wavefrontstudio",
                                                {number("pixelsize_nm", v.pixel * 1e9), number("dz_nm", v.dz * 1e9),
                                                 number("wavelength_nm", result.wavelength * 1e9), number("NA", context.numericalAperture),
                                                 number("immersion_index", context.immersionIndex),
                                                 text("software", "Wavefront Studio " + std::string(softwareVersion())),
                                                 text("problem", result.problemName), text("conventions", conventions),
                                                 text("summary", "pixel " + number3(v.pixel * 1e9) + " nm, dz " + number3(v.dz * 1e9)
                                                                     + " nm, " + std::to_string(n) + " x " + std::to_string(n) + " x "
                                                                     + std::to_string(m) + " samples")}),
                                   }));
        if (Mat_VarWrite(file.file, sxy.var, MAT_COMPRESSION_ZLIB) != 0)
            throw std::runtime_error("libmatio could not write the struct SXY");
    }
    QFile in(QString::fromStdString(path));
    if (!in.open(QIODevice::ReadOnly))
        throw std::runtime_error("could not read back the MATLAB file written: " + in.errorString().toStdString());
    return in.readAll();
}

} // namespace wfs
