#pragma once
// The shapes the GPU forward model works with, shared by the host side (C++20) and the kernels (nvcc,
// C++17): the sizes, the layout of the parameter block that goes down and of the result block that
// comes back per evaluation, the device memory the arrays take and the device-memory traffic of one
// evaluation. Plain data and arithmetic only, so that both compilers see the same numbers.
//
// Grid layout on the device. The K planes are interleaved by row: element (plane k, row r, column c)
// sits at (r * K + k) * N + c, i.e. the planes stand side by side as one N x (K N) image. Then the band
// of pupil rows of every plane is one contiguous run of K * bandRows rows (one batched row FFT), and
// the columns of every plane are K N transforms of stride K N (one batched column FFT): two cuFFT
// plans cover all planes in both directions.
//
// The vectorial model (ModelDims::fields > 0) multiplies the field: each plane has F fields (6 for a free dipole
// or a bead, 2 for a fixed dipole; core/optics/Vectorial.h), and the field buffer holds F K slices side by side,
// slice f K + k being field f of plane k: element (field f, plane k, row r, column c) at (r F K + f K + k) N + c.
// The same two batched plans, with batch F K bandRows and F K N, then transform every field of every plane at once.
// Data, weights and the intensity buffer keep the K-plane layout (ModelDims::element).
#include <cstddef>
#include <stdexcept>
#include <vector>

#if defined(__CUDACC__)
#define WFS_HOST_DEVICE __host__ __device__
#else
#define WFS_HOST_DEVICE
#endif

namespace wfs::gpu {

enum class DeviceObjective : int { LeastSquares = 0, Poisson = 1, WeightedLeastSquares = 2 };

// One wavelength of a spectrum (ModelDims::channels, Problem::spectrum): imaged on its own even FFT size N',
// centred on the model grid, as core/optics/CpuImageFormation.h does. Its field of all planes is interleaved like
// the model grid's: element (slice s, row r, column c) at (r S + s) N' + c, with S = ModelDims::slices() slices
// (plane k is slice k; with the vectorial model field f of plane k is slice f K + k).
struct ChannelDims {
    int n = 0;             // N'
    int shift = 0;         // (N' - N) / 2: model row r is channel row r + shift (columns likewise)
    double phaseScale = 1; // lambda / lambda': the pupil phase at this wavelength
    double powerScale = 1; // weight (N'/N)^2 / N'^4: |channel buffer|^2 -> this wavelength's share of |S|^2
    WFS_HOST_DEVICE std::size_t elements(int slices) const { return std::size_t(n) * std::size_t(n) * std::size_t(slices); }
    WFS_HOST_DEVICE std::size_t element(int slices, int slice, int row, int col) const
    {
        return (std::size_t(row) * std::size_t(slices) + std::size_t(slice)) * std::size_t(n) + std::size_t(col);
    }
};

struct ModelDims {
    int n = 0;        // grid size N
    int planes = 0;   // K
    int rowBegin = 0; // first grid row holding a pupil pixel
    int bandRows = 0; // rows [rowBegin, rowBegin + bandRows) hold every pupil pixel
    int pixels = 0;   // pupil pixels P
    int terms = 0;    // basis terms J (piston included)
    DeviceObjective objective = DeviceObjective::LeastSquares;
    bool gaussian = false; // Gaussian illumination (x0, y0, sigma enter the amplitude)
    bool weighted = false; // a per-pixel weight array is kept; false when every weight is 1
    int realBytes = 8;     // 8 = float64, 4 = float32
    // The pupil-function model (zonal phase or amplitude): the host computes each pupil pixel's phase and amplitude
    // (Problem::pupilPhase, pupilAmplitude) and sends them in the parameter block; the device returns dL/dphase and
    // dL/da per pupil pixel and the host applies the chain rule (Problem::chainPupilGradient). Then terms = 0 and
    // gaussian = false: no basis is kept on the device.
    bool hostPupil = false;
    // Defocus parameters (a scale, per-plane offsets): plane k's phase gains delta_k times its unit defocus phase,
    // delta_k (the parameter block) = the plane's defocus amount now less the one its diversity holds; the device
    // returns sum_p dL/dphase_k(p) unit_k(p) per plane (Problem::chainDefocusGradient).
    bool defocusTerms = false;
    // The detector's transfer function H (pixel integration, object size; Problem::transferFunction): each plane's
    // |S|^2 goes into an intensity buffer, through a 2-D FFT, times H / N^2, and back before the objective; the
    // objective's dL/dI takes the same way back (H is real and even: the blur is its own adjoint).
    bool blur = false;
    // A spectrum: `channels` wavelengths (at most kMaxChannels), each through its own full 2-D FFTs, their
    // intensities summed into the intensity buffer on the model grid (then the blur, if any, and the objective).
    // Needs hostPupil; the band-pruned single-wavelength field is then not used.
    static constexpr int kMaxChannels = 15;
    int channels = 0;
    ChannelDims channel[kMaxChannels];
    // The vectorial model (core/optics/Vectorial.h): 0 for the scalar model, else the fields per plane (6: a free
    // dipole's camera component x 3 + dipole component, whose intensities add; 2: a fixed dipole's camera components).
    // Field f of plane k is the scalar pupil field times factor_f = matrix_f exp(i (depth rate + coverslip phase)), per
    // pupil pixel; the host sends core's matrix, rate and coverslip phase once (ModelInput), the depth in the
    // parameter block, and the device forms the factors per evaluation, so the depth can be fitted: the result
    // block carries dL/d(depth) = sum Re(i rate E0 conj(h)), h = sum_f conj(factor_f) dL/dE_f (ModelDims::depthGradient).
    // With a spectrum each wavelength has its F fields and its own factors (the phase scaled to its wavelength).
    int fields = 0;
    WFS_HOST_DEVICE bool vectorial() const { return fields > 0; }
    WFS_HOST_DEVICE int fieldCount() const { return fields > 0 ? fields : 1; }
    // The factors: one set per wavelength (one without a spectrum), F x P complex values each.
    WFS_HOST_DEVICE int factorSets() const { return channels > 0 ? channels : 1; }
    WFS_HOST_DEVICE double factorPhaseScale(int set) const { return channels > 0 ? channel[set].phaseScale : 1.0; }
    // The objective reads the intensity buffer (blurred, or a spectrum's sum) instead of the field.
    WFS_HOST_DEVICE bool intensityPath() const { return blur || channels > 0; }

    // K planes of N x N: the data, the weights, the intensity buffer.
    WFS_HOST_DEVICE std::size_t gridElements() const { return std::size_t(n) * std::size_t(n) * std::size_t(planes); }
    // The field buffer's slices: every field of every plane (F K; K for the scalar model).
    WFS_HOST_DEVICE int slices() const { return planes * fieldCount(); }
    WFS_HOST_DEVICE std::size_t fieldElements() const { return std::size_t(n) * std::size_t(n) * std::size_t(slices()); }
    WFS_HOST_DEVICE std::size_t bandElements() const { return std::size_t(bandRows) * std::size_t(n) * std::size_t(slices()); }
    WFS_HOST_DEVICE std::size_t element(int plane, int row, int col) const
    {
        return (std::size_t(row) * std::size_t(planes) + std::size_t(plane)) * std::size_t(n) + std::size_t(col);
    }
    // Field f of plane k in the field buffer (element(plane, row, col) for the scalar model's one field).
    WFS_HOST_DEVICE std::size_t fieldElement(int field, int plane, int row, int col) const
    {
        return (std::size_t(row) * std::size_t(slices()) + std::size_t(field) * std::size_t(planes) + std::size_t(plane)) * std::size_t(n)
               + std::size_t(col);
    }

    // ---- the two batched FFTs (cuFFT's and FFTW's advanced layout): element j of transform b sits at
    // offset + b * distance + j * stride; every transform has length n ----
    struct BatchedTransform {
        int stride = 1;
        int distance = 1;
        int batch = 0;
        std::size_t offset = 0;
    };
    // The band of pupil rows of every slice (field of a plane): F K * bandRows contiguous rows.
    BatchedTransform bandRowTransforms() const
    {
        return {1, n, slices() * bandRows, std::size_t(rowBegin) * std::size_t(slices()) * std::size_t(n)};
    }
    // Every column of every slice: F K N transforms of stride F K N.
    BatchedTransform columnTransforms() const { return {slices() * n, 1, slices() * n, 0}; }
    // The blur's 2-D transforms, one per plane: element (r, c) of plane k at k N + (r K N + c), i.e. rank 2 with
    // n = {N, N}, embed = {N, K N}, stride 1, distance N, batch K (cuFFT's and FFTW's advanced layout).
    int planeEmbedColumns() const { return planes * n; }

    // ---- the parameter block (doubles), filled by the host from ModelParameters ----
    WFS_HOST_DEVICE int coefficient(int term) const { return term; } // radians
    WFS_HOST_DEVICE int centreX() const { return terms; }
    WFS_HOST_DEVICE int centreY() const { return terms + 1; }
    WFS_HOST_DEVICE int amplitude() const { return terms + 2; }
    WFS_HOST_DEVICE int sigma() const { return terms + 3; }
    WFS_HOST_DEVICE int intensity(int plane) const { return terms + 4 + plane; } // flux * intensityScale
    WFS_HOST_DEVICE int background(int plane) const { return terms + 4 + planes + plane; }
    WFS_HOST_DEVICE int shiftX(int plane) const { return terms + 4 + 2 * planes + plane; }
    WFS_HOST_DEVICE int shiftY(int plane) const { return terms + 4 + 3 * planes + plane; }
    WFS_HOST_DEVICE int pupilPhase(int pixel) const { return terms + 4 + 4 * planes + pixel; }              // hostPupil: radians
    WFS_HOST_DEVICE int pupilAmplitude(int pixel) const { return terms + 4 + 4 * planes + pixels + pixel; } // hostPupil
    WFS_HOST_DEVICE int hostPupilValues() const { return hostPupil ? 2 * pixels : 0; }
    WFS_HOST_DEVICE int defocusDelta(int plane) const { return terms + 4 + 4 * planes + hostPupilValues() + plane; } // defocusTerms
    // The vectorial model: the emitter's depth below the coverslip, metres.
    WFS_HOST_DEVICE int emitterDepth() const { return terms + 4 + 4 * planes + hostPupilValues() + (defocusTerms ? planes : 0); }
    WFS_HOST_DEVICE int parameterBlockSize() const
    {
        return terms + 4 + 4 * planes + hostPupilValues() + (defocusTerms ? planes : 0) + (vectorial() ? 1 : 0);
    }

    // ---- the result block (doubles), reduced on the device ----
    // Objective rows, four per plane: the cost, sum dL/dModel * |S|^2 (-> flux), sum dL/dModel
    // (-> background), and the count of pixels where the Poisson model is not positive.
    static constexpr int kObjectiveValues = 4;
    WFS_HOST_DEVICE int objectiveRows() const { return kObjectiveValues * planes; }
    WFS_HOST_DEVICE int cost(int plane) const { return kObjectiveValues * plane; }
    WFS_HOST_DEVICE int intensityGradient(int plane) const { return kObjectiveValues * plane + 1; }
    WFS_HOST_DEVICE int backgroundGradient(int plane) const { return kObjectiveValues * plane + 2; }
    WFS_HOST_DEVICE int invalidCount(int plane) const { return kObjectiveValues * plane + 3; }
    // Pupil rows, from the adjoint: dL/dc_t, per-plane shift gradients, and four sums over pupil pixels
    // of q = sum_k Re(conj(g_k) e_k) = a dL/da: q, q (x - x0), q (y - y0), q |r - r0|^2. The host turns
    // the last four into the amplitude, centre and width gradients (dividing by amp, sigma^2, sigma^3).
    // With defocusTerms, one more row per plane: sum_p dL/dphase_k(p) unit_k(p); with the vectorial model one more,
    // dL/d(emitter depth). All of these are block sums.
    static constexpr int kIlluminationValues = 4;
    WFS_HOST_DEVICE int pupilRows() const
    {
        return terms + 2 * planes + kIlluminationValues + (defocusTerms ? planes : 0) + (vectorial() ? 1 : 0);
    }
    WFS_HOST_DEVICE int zernikeGradient(int term) const { return objectiveRows() + term; }
    WFS_HOST_DEVICE int shiftXGradient(int plane) const { return objectiveRows() + terms + plane; }
    WFS_HOST_DEVICE int shiftYGradient(int plane) const { return objectiveRows() + terms + planes + plane; }
    WFS_HOST_DEVICE int illuminationSum(int which) const { return objectiveRows() + terms + 2 * planes + which; }
    WFS_HOST_DEVICE int defocusGradient(int plane) const { return objectiveRows() + terms + 2 * planes + kIlluminationValues + plane; }
    WFS_HOST_DEVICE int depthGradient() const
    {
        return objectiveRows() + terms + 2 * planes + kIlluminationValues + (defocusTerms ? planes : 0);
    }
    WFS_HOST_DEVICE int reducedRows() const { return objectiveRows() + pupilRows(); }
    // With hostPupil, per pupil pixel (written by the gather, not reduced): dL/dphase and dL/da summed over the planes.
    WFS_HOST_DEVICE int pixelPhaseGradient(int pixel) const { return reducedRows() + pixel; }
    WFS_HOST_DEVICE int pixelAmplitudeGradient(int pixel) const { return reducedRows() + pixels + pixel; }
    WFS_HOST_DEVICE int resultSize() const { return reducedRows() + hostPupilValues(); }

    // Bytes of the resident device arrays (field buffer, data, weights, basis, diversity, pupil
    // geometry, band map, one image), before cuFFT's work area and the small reduction buffers.
    std::size_t residentBytes() const
    {
        const std::size_t r = std::size_t(realBytes), p = std::size_t(pixels);
        std::size_t bytes = channels > 0 ? 0 : fieldElements() * 2 * r; // the complex field, all planes and fields (one wavelength)
        bytes += gridElements() * r * (weighted ? 2 : 1);               // data (+ weights)
        bytes += p * r * std::size_t(terms);                            // basis on pupil pixels
        bytes += p * r * std::size_t(planes) * (defocusTerms ? 2 : 1);  // diversity phases (+ unit defocus phases)
        bytes += p * r * 5;                                             // x, y, transmission, phase, amplitude
        bytes += p * sizeof(int);                                       // pupil pixel -> grid index
        bytes += std::size_t(bandRows) * std::size_t(n) * sizeof(int);  // band pixel -> pupil pixel
        bytes += std::size_t(n) * std::size_t(n) * sizeof(double);      // one model image (modelImages)
        if (blur || channels > 0)
            bytes += gridElements() * 2 * r + std::size_t(n) * std::size_t(n) * r; // the intensity buffer and H
        for (int c = 0; c < channels; ++c) // each wavelength's field, its pupil index, the per-plane gradients
            bytes += channel[c].elements(slices()) * 2 * r + p * sizeof(int);
        if (channels > 0)
            bytes += p * std::size_t(planes + 1 + (vectorial() ? 1 : 0)) * sizeof(double);
        if (vectorial()) // core's matrix, depth rate and coverslip phase (complex float64), the factors (complex Real)
            bytes += p * std::size_t(fields + 2) * 16 + p * std::size_t(fields) * std::size_t(factorSets()) * 2 * r;
        return bytes;
    }

    // Device-memory bytes one evaluation must move with this algorithm when each kernel and each
    // batched 1-D FFT pass touches its data exactly once (one read and one write per FFT pass, which
    // cuFFT achieves for these lengths); the yardstick eval_ms is compared with. Parameter and
    // result blocks and the reduction partials (kilobytes) are left out.
    //   fill:        write the field of all planes; read basis, diversity, x, y, transmission, band map;
    //                write phase and amplitude per pupil pixel
    //   row FFTs:    band rows only, read + write            (x 2 with the adjoint)
    //   column FFTs: every column, read + write              (x 2 with the adjoint)
    //   objective:   read the field and the data (+ weights); write dL/dS (adjoint only)
    //   gather:      read dL/dE at the pupil pixels of every plane, phase, amplitude, diversity, x, y,
    //                basis, the pupil index
    double trafficBytes(bool gradient) const
    {
        const double r = realBytes, c = 2.0 * realBytes, p = pixels;
        const double grid = double(gridElements()), band = double(bandElements());
        const double field = double(fieldElements()); // = grid but for the vectorial model's F fields per plane
        // With a spectrum the single-wavelength field and its band-pruned FFTs are replaced by the channels' (below).
        const double single = channels > 0 ? 0.0 : 1.0;
        double bytes = single * (field * c + double(bandRows) * n * sizeof(int)) + p * r * (terms + planes + 3) + p * r * 2;
        bytes += double(hostPupilValues()) * 8.0 + (defocusTerms ? p * r * planes : 0.0); // per-pixel block values, unit phases
        bytes += single * 2.0 * band * c;                                                 // inverse row FFTs
        bytes += single * 2.0 * field * c;                                                // inverse column FFTs
        bytes += field * c + grid * r * (weighted ? 2 : 1);                               // objective reads
        // The vectorial factors: core's arrays read and the factors written once, the factors read by the fill.
        if (vectorial())
            bytes += factorSets() * (p * (fields + 2) * 16.0 + 2.0 * p * fields * c);
        // The blur: |S|^2 into the intensity buffer, a 2-D FFT each way (two passes, read + write), times H.
        if (blur)
            bytes += field * c + grid * c + 8.0 * grid * c + 2.0 * grid * c;
        // A spectrum: per wavelength, clear and fill its field, a 2-D FFT (two passes), add |field|^2 to the intensity.
        for (int k = 0; k < channels; ++k)
            bytes += double(channel[k].elements(slices())) * c * (1.0 + 4.0 + 1.0) + grid * c;
        if (gradient) {
            bytes += field * c;                                   // objective writes dL/dS
            bytes += single * (2.0 * field * c + 2.0 * band * c); // forward column and row FFTs
            bytes += p * slices() * c + p * r * (2 + planes + 2 + terms) + p * sizeof(int);
            bytes += double(hostPupilValues()) * 8.0 + (defocusTerms ? p * r * planes : 0.0); // per-pixel results, unit phases
            if (vectorial())
                bytes += factorSets() * (p * fields * c + p * 16.0); // the factors and the depth rate, read by the gather
            if (blur)
                bytes += 12.0 * grid * c + grid * c + 2.0 * field * c; // dL/dI through the blur, then dL/dS from it and the field
            for (int k = 0; k < channels; ++k)                         // dL/dS per wavelength, its 2-D FFT back, the gather
                bytes += double(channel[k].elements(slices())) * c * (2.0 + 4.0) + grid * c + p * (slices() * c + planes * 16.0);
        }
        return bytes;
    }
};

// What the device keeps resident for a problem, on the host, in the layouts above.
struct ModelInput {
    ModelDims dims;
    std::vector<int> pupilIndex;                // per pupil pixel: row * N + col, in grid order
    std::vector<double> x, y, transmission;     // per pupil pixel, pupil coordinates
    std::vector<double> basis;                  // terms x pixels, term-major (basis[t * P + p])
    std::vector<double> diversity;              // planes x pixels, radians
    std::vector<double> defocusUnit;            // planes x pixels, radians per unit defocus amount; empty unless dims.defocusTerms
    std::vector<double> transfer;               // N x N in FFT order (Problem::transferFunction); empty unless dims.blur
    std::vector<std::vector<int>> channelIndex; // per channel, each pupil pixel's row N' + column (dims.channels)
    std::vector<double> data;                   // device grid layout (ModelDims::element)
    std::vector<double> weights;                // device grid layout; empty unless dims.weighted
    // The vectorial model (dims.fields > 0; empty otherwise), complex values as (re, im) pairs, from core's
    // VectorialPupil: each field's matrix factor per pupil pixel (fields x pixels, field-major), the depth's phase
    // rate (radians per metre) and the coverslip's phase per pupil pixel.
    std::vector<double> vectorialMatrix, depthRate, coverslipPhase;
};

// Band pixel -> pupil pixel (-1 where the band holds none), bandRows x N: how a thread of the fill
// finds its pupil pixel. Throws std::invalid_argument if a pupil pixel lies outside the band.
inline std::vector<int> makeBandMap(const ModelDims& d, const std::vector<int>& pupilIndex)
{
    std::vector<int> map(std::size_t(d.bandRows) * std::size_t(d.n), -1);
    for (std::size_t p = 0; p < pupilIndex.size(); ++p) {
        const int row = pupilIndex[p] / d.n, col = pupilIndex[p] % d.n;
        if (row < d.rowBegin || row >= d.rowBegin + d.bandRows)
            throw std::invalid_argument("a pupil pixel lies outside the band of pupil rows");
        map[std::size_t(row - d.rowBegin) * std::size_t(d.n) + std::size_t(col)] = int(p);
    }
    return map;
}

} // namespace wfs::gpu
