#!/usr/bin/env bash
# Mutation check: do the tests catch small, plausible bugs? Applies a fixed list of mutations one at a
# time to a COPY of the source tree (the working tree is never touched), rebuilds only the test targets
# each one concerns in a build folder of that copy, runs those tests, and reports which mutations the
# tests caught. Ends with the line "caught N of M". Exit status 0 only when every mutation was caught.
#
#   scripts/mutation-check.sh [-k] [NAME...]     NAMEs: run only those mutations. A mutation that no
#                                                longer applies (its text is gone from the source) or does
#                                                not compile counts as not caught, and the run goes on to
#                                                the next one; -k is accepted for old command lines and
#                                                changes nothing.
#   scripts/mutation-check.sh --suite-passed    the same, without the baseline run of the mutations' tests on the
#                                                unmutated copy: for scripts/test.sh, which calls it right after the
#                                                whole suite passed on these sources
#   scripts/mutation-check.sh --check [NAME...]  only check that every mutation applies to the working
#                                                tree and that its tests exist (seconds, no build); lists
#                                                every stale one and exits 1 when there is any
#
# CI runs --check (scripts/test.sh, before the build), so a refactor that leaves a mutation's text behind
# fails there and the mutation moves with the code; and after the suite, the whole run (scripts/test.sh), so a
# mutation that no test catches any more fails the build.
# The copy and its build folder live in build-mutation/ (ignored by git; WFS_MUTATION_DIR overrides).
# They are kept between runs, so only the first run builds everything; ccache reuses the objects of the main
# build: the copy lies inside the tree, so with the tree as ccache's base_dir (the default here) both builds compile
# the same relative paths. A run takes about half a minute per mutation.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
work="${WFS_MUTATION_DIR:-$root/build-mutation}"
src="$work/src"
build="$src/build" # same layout as the release preset's build/, so ccache's relative paths match
check_only=0
suite_passed=0
selected=()
for a in "$@"; do
  case "$a" in
    -k) ;; # keep going: what the run always does now
    --check) check_only=1 ;;
    --suite-passed) suite_passed=1 ;;
    -*) echo "mutation-check: unknown option $a" >&2; exit 2 ;;
    *) selected+=("$a") ;;
  esac
done

# ---- the mutations -------------------------------------------------------------------------------
# name | file | tests (space separated) | description. The edit itself is in apply_mutation below:
# exact text replacements, each of which must match exactly once.
mutations=(
  "shift-gradient-sign|core/optics/CpuModel.cpp|tst_model tst_fitkinds|sign of the per-plane tip/tilt gradient flipped"
  "noll-z23-z24-swap|core/optics/Zernike.cpp|tst_zernike|Noll Z23 and Z24 swapped both ways"
  "background-dropped|core/simd/Kernels.inc|tst_model tst_fitkinds|background dropped from the objective's model"
  "fasth-wy-off-by-one|core/fasth/Householder.cpp|tst_fasthproduct tst_fasthgradient|FastH WY accumulation skips the first coupling"
  "adjoint-factor-two|core/simd/Kernels.inc|tst_model|adjoint source loses the factor 2 of d|S|^2/dS"
  "adjoint-phase-sign|core/simd/Kernels.inc|tst_model tst_fitkinds|adjoint phase derivative with the wrong sign"
  "pupil-obscuration-radius|core/optics/Pupil.cpp|tst_physics|obscuration read as a radius fraction of the diameter"
  "pupil-spider-width|core/optics/Pupil.cpp|tst_physics|spider vanes half as wide"
  "diversity-w020-factor|core/optics/Diversity.cpp|tst_physics|W020 defocus screen missing a factor 2"
  "diversity-paraxial-index|core/optics/Diversity.cpp|tst_physics|paraxial axial screen missing the 1/2"
  "diversity-highna-na|core/optics/Diversity.cpp|tst_physics tst_vectorial tst_vectorialanchors|high-NA screen uses NA instead of NA^2"
  "solver-gradient-scaling|core/fit/Solver.cpp|tst_fit tst_fitkinds|solver divides the gradient by the parameter scales"
  "uncertainty-weighted-scale|core/fit/Uncertainty.cpp|tst_fitkinds|weighted least squares uncertainty scale 1 instead of 2"
  "tiff-orientation|core/io/TiffReader.cpp|tst_imageio tst_shapes|TIFF rows not flipped to bottom-up"
  "png-orientation|core/io/ImageReaders.cpp|tst_imageio tst_shapes|PNG rows not flipped to bottom-up"
  "session-spider-angle|core/settings/SettingsTable.cpp|tst_settingstable tst_exports|the spider angle's session key holds the vane width"
  "fasth-backward-sign|core/fasth/Householder.cpp|tst_fasthgradient|FastH backward pass: wrong sign of one gradient term"
  "csv-columns-swapped|core/io/ResultJson.cpp|tst_exportreaders|CSV writes value_nm and value_waves swapped"
  "detector-pixel-sinc|core/optics/Problem.cpp|tst_imageformation|pixel integration's sinc at half the frequency (a pixel half as wide)"
  "detector-object-radius|core/optics/Problem.cpp|tst_imageformation|object size read as a radius: the sphere's transfer at half its argument"
  "spectrum-phase-scale|core/optics/Problem.cpp|tst_imageformation|spectrum: the pupil phase not scaled to each wavelength (lambda / lambda')"
  "pruned-forward-twiddle|core/optics/PrunedFft.cpp|tst_prunedfft|pruned transform, synthesis: the columns stage twiddles conjugated"
  "pruned-adjoint-twiddle|core/optics/PrunedFft.cpp|tst_prunedfft|pruned transform, adjoint: the twiddles not conjugated"
  "noise-variance-gain|core/optics/ProblemSpec.h|tst_noisemodel|pixel variance multiplies by the gain instead of dividing"
  "poisson-weight-gain|core/optics/Problem.cpp|tst_noisemodel|Poisson deviance in data units, not electrons (gain left out)"
  "offset-auto-gain|core/io/DatasetProblem.cpp|tst_noisemodel|--offset auto divides the border's photon variance by the gain"
  "read-noise-border-half|core/io/Preparation.cpp|tst_noisemodel|border read noise: neighbour differences without the 1/2"
  "read-noise-photon-gain|core/io/DatasetProblem.cpp|tst_noisemodel|Poisson read noise: the border's photon noise times the gain"
  "zonal-both-projector|core/optics/Problem.cpp|tst_pupilterms|--pupil-phase both: zonal phase projected off piston only, not the Zernike span"
  "zonal-prior-half|core/optics/Problem.cpp|tst_pupilterms|smoothness prior without its 1/2 (value and gradient alike)"
  "zonal-amplitude-mean|core/optics/Problem.cpp|tst_pupilfunction tst_pupilterms|zonal log-amplitude's mean not removed from the amplitude"
  "defocus-offset-sign|core/optics/Problem.cpp|tst_pupilterms|defocus offsets subtracted (value and gradient alike)"
  "defocus-scale-gradient|core/optics/Problem.cpp|tst_pupilfunction|defocus scale's gradient misses the plane's defocus amount"
  "sampling-vertex-sign|core/engine/CompositeFits.cpp|tst_samplingfit|sampling profile: parabola vertex with the wrong sign"
  "composite-limit-per-fit|core/engine/CompositeFits.cpp|tst_compositefits|a composite run's fits each get the whole iteration limit"
  "profile-uniform-apodisation|core/engine/CompositeFits.cpp|tst_airpreset|the sampling profile fits a zonal-amplitude pupil with a uniform amplitude"
  "search-keeps-plateau|core/engine/CompositeFits.cpp|tst_compositefits|the weight's search returns the chosen weight's fit at the search's precision"
  "seed-flux-unit|core/engine/ReconstructionEngine.cpp|tst_compositefits|seeding a fitted illumination keeps the flux numbers, not the photons"
  "sampling-rounding-strict|core/optics/Sampling.cpp|tst_assumptions|a Q one rounding below Nyquist called undersampled"
  "field-joint-covariance-unmarginalised|core/fit/FieldJointFit.cpp|tst_fieldrun|the joint covariance ignores each bead's own parameters (over-confident)"
  "field-joint-covariance-radians|core/fit/FieldJointFit.cpp|tst_fieldrun|the joint covariance's field map without the waves-to-radians factor"
  "field-halo-kept|core/fit/BeadDetection.cpp|tst_fieldrun|a bright bead's halo peaks reported as beads of their own"
  "field-subpixel-sign|core/fit/BeadDetection.cpp|tst_fieldrun|a bead's sub-pixel offset with the wrong sign"
  "field-model-unweighted|core/fit/FieldModel.cpp|tst_fieldmodel|the field model ignores the beads' uncertainties"
  "field-model-no-bic-penalty|core/fit/FieldModel.cpp|tst_fieldmodel|the automatic field order without the BIC's penalty"
  "field-joint-basis|core/fit/FieldJointFit.cpp|tst_fieldrun|the joint gradient misses the field basis at each bead"
  "psf-ee-diameter|core/fit/PsfAnalysis.cpp|tst_psfanalysis|encircled energy binned by diameter instead of radius"
  "psf-mtf-cutoff|core/fit/PsfAnalysis.cpp|tst_psfanalysis|MTF cutoff taken as D / (2 lambda F)"
  "psf-fwhm-step|core/fit/PsfAnalysis.cpp|tst_psfanalysis|FWHM one sample too wide on each side"
  "psf-stack-object-scale|core/fit/PsfStack.cpp|tst_psfstack|3-D PSF export: the object's size not rescaled to the output pixels"
  "session-estimate-offset|core/io/Session.cpp|tst_sessions|session reads every switch (--offset auto's among them) as false"
  "session-centre-each-plane|core/io/Session.cpp|tst_sessions|session loses the preparation's keys (the per-plane centring among them) on reading"
  "settle-order-missing|core/settings/SolverSettings.cpp|tst_settingsmodule|the order not settled to the last stage where settings are read"
  "panel-drops-unshown|ui/SetupPanelValues.cpp|tst_setupranges|the setup panel resets the preparation it has no field for (border, bad pixels)"
  "panel-switch-inverted|ui/SetupPanelValues.cpp|tst_setupranges tst_mainwindow|the setup panel shows every switch the wrong way round"
  "option-switch-sets-true|core/io/SettingOptions.cpp|tst_settingstable|a switch sets its field true instead of turning its default over (--no-background)"
  "hot-pixel-ratio-fixed|core/io/Preparation.cpp|tst_dataset|the hot-pixel rule's ratio fixed at 3 whatever --hot-pixel-ratio says"
  "session-run-solver|core/io/Session.cpp|tst_sessions tst_runcomparison|a kept run's solver settings written as the defaults"
  "batch-resume-checksum|core/engine/Batch.cpp|tst_clihostile tst_batchresume|batch resume trusts a result whose input's bytes changed"
  "live-complete-while-written|core/engine/StackFinder.cpp|tst_watcher|live mode reads a file still being written (no stable time, no rename)"
  "runs-rms-piston|core/engine/RunComparison.cpp|tst_runcomparison|run comparison's RMS difference keeps the piston"
  "solver-zonal-scales-uniform|core/fit/Solver.cpp|tst_pupilfunction|zonal solver scales: one per block, the data's and prior's shares not split by pixel"
  "chunks-remainder-dropped|core/optics/CpuModel.cpp|tst_model tst_prunedfft|the model's element-wise passes drop the remainder of pixels split in chunks"
  "vectorial-tp-ts-swap|core/optics/Vectorial.cpp|tst_vectorialanchors tst_vectorial|vectorial: Fresnel t_p and t_s swapped"
  "vectorial-coverslip-sign|core/optics/Vectorial.cpp|tst_vectorialanchors tst_vectorial|vectorial: the coverslip's phase against its design with the wrong sign"
  "vectorial-apodisation-inverted|core/optics/Vectorial.cpp|tst_vectorial tst_vectorialanchors|vectorial: aplanatic apodisation sqrt(cos) inverted"
  "live-oldest-wins|core/engine/LiveWatch.cpp|tst_livearbitration tst_watcher tst_livepanel|live mode fits the oldest pending stack, not the newest"
  "live-skipped-as-fitted|core/engine/LiveWatch.cpp|tst_livearbitration tst_watcher|live mode counts skipped stacks as fitted"
  "batch-resume-override|core/engine/Batch.cpp|tst_batchresume tst_batchinputs|batch resume ignores a changed manifest override"
  "batch-result-no-termination|core/engine/Batch.cpp|tst_batchresume tst_batchinputs|batch resume counts a result without its termination as complete"
  "python-shape-swap|python/src/Conversions.cpp|python_module|Python: a result's stacks come back with width and height swapped"
  "live-log-follows-links|core/engine/LiveLog.cpp|tst_watcher|live mode opens its log through a symbolic link"
  "live-log-foreign-appended|core/engine/LiveWatch.cpp|tst_watcher|live mode appends to an existing file that is not its log"
  "live-rewrite-never-refit|core/engine/StackFinder.cpp|tst_watcher|live mode never fits a stack rewritten under its name again"
  "live-short-stack-logged|core/engine/LiveWatch.cpp|tst_watcher|live mode logs a stack not read whole as failed at once"
  "live-table-not-repaired|core/engine/LiveWatch.cpp|tst_watcher|a restart leaves the trend table without the rows the log holds"
  "fits-nplanes-ignored|core/io/Fits.cpp|tst_watcher|a FITS file with fewer planes than its NPLANES is read as whole"
  "ome-other-files-counted|core/io/Dataset.cpp|tst_watcher|an OME-TIFF of a dataset over several files is held to every file's planes"
  "ome-channels-uncounted|core/io/OmeXml.cpp|tst_watcher|an OME-TIFF's declared planes leave out SizeC"
  "spline-natural-ends|core/io/SplineCalibration.cpp|tst_psfexports|spline calibration: natural ends (second derivative 0) instead of not-a-knot"
  "spline-x0-zero-based|core/io/SplineCalibration.cpp|tst_psfexports|spline calibration: x0 written 0-based, not MATLAB's 1-based index"
  "psf-tiff-spacing|core/io/Exports.cpp|tst_psfexports|3-D PSF ImageJ TIFF: spacing= the pixel size instead of the z step"
  "fd-cancel-unchecked|core/fit/FiniteDifference.cpp|tst_fit|cancel waits for a whole finite-difference gradient (P + 1 evaluations)"
)

# Applies mutation $1 to $src/$2 with exact replacements (python3: no quoting trouble with C++ text).
apply_mutation() {
  python3 - "$1" "$src/$2" "$2" <<'PY'
import sys
name, path, shown = sys.argv[1], sys.argv[2], sys.argv[3]
edits = {
    # Both code paths of CpuModel: the plain one (adjointPlane) and the general image formation (formedPlane).
    "shift-gradient-sign": [("grad.shiftX[size_t(k)] += dShift[0];", "grad.shiftX[size_t(k)] -= dShift[0];"),
                            ("grad.shiftY[size_t(k)] += dShift[1];", "grad.shiftY[size_t(k)] -= dShift[1];"),
                            ("grad->shiftX[size_t(k)] += dShift[0];", "grad->shiftX[size_t(k)] -= dShift[0];"),
                            ("grad->shiftY[size_t(k)] += dShift[1];", "grad->shiftY[size_t(k)] -= dShift[1];")],
    "noll-z23-z24-swap": [("        return nollMode(index);",
                           "        return index == 23 ? ZernikeMode{6, 2} : index == 24 ? ZernikeMode{6, -2} : nollMode(index);"),
                          ("    if (ordering == ZernikeOrdering::Ansi)\n        return (mode.n * (mode.n + 2) + mode.m) / 2;",
                           "    if (ordering == ZernikeOrdering::Noll && mode.n == 6 && std::abs(mode.m) == 2)\n        return mode.m > 0 ? 23 : 24;\n"
                           "    if (ordering == ZernikeOrdering::Ansi)\n        return (mode.n * (mode.n + 2) + mode.m) / 2;")],
    # The plain path's objective (simd/Kernels.inc, built for both instruction sets): the scalar loop and the
    # AVX2 build's four-lane least-squares loop, which does most pixels on this machine. The general image
    # formation (optics/CpuImageFormation.h: a spectrum or a blurring detector) has its own objective,
    # left as it is: one file per mutation, and the tests' default problems take the plain path.
    "background-dropped": [("const Real model = intensity * power + background;", "const Real model = intensity * power; (void)background;"),
                           ("const V r = d - (intensity * power + background);", "const V r = d - intensity * power; (void)background;")],
    # HouseholderProduct::buildWy (FastH and the tree merge): the recursion for T's column r.
    "fasth-wy-off-by-one": [("        if (r > 0) {\n            coefficients.col(r).head(r)", "        if (r > 1) {\n            coefficients.col(r).head(r)")],
    # As background-dropped: the scalar loop and the AVX2 lanes of simd/Kernels.inc (the plain path).
    "adjoint-factor-two": [("const Real f = Real(2) * dModel * intensity * fieldScale;", "const Real f = dModel * intensity * fieldScale;"),
                           ("const V f = Real(2) * dModel * intensity * fieldScale;", "const V f = dModel * intensity * fieldScale;")],
    # simd/Kernels.inc's adjoint gather, the one both the plain path and the general image formation use.
    "adjoint-phase-sign": [("const Real dp = gi * er - gr * ei; // Re(conj(g) i e)",
                            "const Real dp = gr * ei - gi * er; // Re(conj(g) i e)")],
    "pupil-obscuration-radius": [("if (r >= 1.0 || r < obscuration)", "if (r >= 1.0 || r < 0.5 * obscuration)")],
    "pupil-spider-width": [("const double halfWidth = spiderWidth;", "const double halfWidth = 0.5 * spiderWidth;")],
    "diversity-w020-factor": [("return 2.0 * M_PI * defocusWaves * rho2;", "return M_PI * defocusWaves * rho2;")],
    "diversity-paraxial-index": [("rho2 / (2.0 * immersionIndex)", "rho2 / immersionIndex")],
    "diversity-highna-na": [("n * n - numericalAperture * numericalAperture * rho2", "n * n - numericalAperture * rho2")],
    "solver-gradient-scaling": [("gradient[i] *= m_scales[i];", "gradient[i] /= m_scales[i];")],
    # covarianceScale: the factor from the Hessian's inverse to the covariance.
    "uncertainty-weighted-scale": [("    case ObjectiveKind::WeightedLeastSquares:\n        return 2.0;",
                                    "    case ObjectiveKind::WeightedLeastSquares:\n        return 1.0;")],
    "tiff-orientation": [("bottomUp ? r : image.height - 1 - r", "bottomUp ? image.height - 1 - r : r")],
    "png-orientation": [("double* out = image.pixels.data() + std::size_t(layout.height - 1 - row) * layout.width;",
                         "double* out = image.pixels.data() + std::size_t(row) * layout.width;")],
    "session-spider-angle": [("fieldAccess<&ModelSettings::spiderAngleDeg>()", "fieldAccess<&ModelSettings::spiderWidth>()")],
    "fasth-backward-sign": [("dv.noalias() -= a * pg.transpose();", "dv.noalias() += a * pg.transpose();")],
    "csv-columns-swapped": [("                   .arg(c.waves, 0, 'g', 10)\n                   .arg(c.nm, 0, 'g', 10)",
                             "                   .arg(c.nm, 0, 'g', 10)\n                   .arg(c.waves, 0, 'g', 10)")],
    # Problem::compileDetector: the detector's transfer function H(f), f in cycles per pixel.
    "detector-pixel-sinc": [("h *= sinc(fx) * sinc(fy);", "h *= sinc(0.5 * fx) * sinc(0.5 * fy);")],
    "detector-object-radius": [("h *= sphere(M_PI * std::hypot(fx, fy) * detector.objectDiameterPixels);",
                                "h *= sphere(M_PI * std::hypot(fx, fy) * 0.5 * detector.objectDiameterPixels);")],
    # Problem::compileSpectrum: each channel's phase is the optical path at its own wavelength.
    "spectrum-phase-scale": [("channel.phaseScale = double(n) / grid;", "channel.phaseScale = 1.0;")],
    # PrunedFft::synthesise (the columns stage) and PrunedFft::adjoint (the rows stage): the last argument
    # says whether the twiddles are conjugated, which only the adjoint does.
    # staleResultReason: the input's checksum is what tells an edited input from a touched or copied one.
    "batch-resume-checksum": [("    if (then.value(QStringLiteral(\"sha256\")) != identity.value(QStringLiteral(\"sha256\")))",
                               "    if (false && then.value(QStringLiteral(\"sha256\")) != identity.value(QStringLiteral(\"sha256\")))")],
    # The watcher's completeness rule: a file is complete once renamed in or unchanged for the stable time.
    "live-log-follows-links": [("const int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);",
                                "const int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC, 0644);")],
    "live-log-foreign-appended": [("if (!row.isObject() || !row.object().contains(QStringLiteral(\"sequence\")))",
                                   "if (false)")],
    "live-rewrite-never-refit": [("handled != m_handled.end() && l.mtime > handled->second)",
                                  "handled != m_handled.end() && false)")],
    "live-short-stack-logged": [("        if (!stack.lastChance) {\n            outcome.deferred = true;",
                                 "        if (false) {\n            outcome.deferred = true;")],
    "live-table-not-repaired": [("        if (trendSequence >= 0 && sequence > trendSequence)\n            missingFromTrend.push_back(row);",
                                 "        (void)trendSequence;")],
    "fits-nplanes-ignored": [("declared->second > double(content.planes.size())", "declared->second < 0")],
    # omePlanesMissing (Dataset) and countPlanes (OmeXml): a single-file OME-TIFF's SizeZ x SizeC x SizeT.
    "ome-other-files-counted": [("|| ome.refersToOtherFiles ", "")],
    # The finite-difference gradient's check of the fit's cancel flag between its model evaluations.
    "fd-cancel-unchecked": [("            throwIfCancelled(cancelFlag());\n", "")],
    "ome-channels-uncounted": [("*sizeZ * *sizeC * *sizeT;", "*sizeZ * *sizeT;")],
    "live-complete-while-written": [("f.complete = size > 0 && (f.renamed || now - f.unchangedSinceMs >= m_options.stableMs);",
                                     "f.complete = size > 0;")],
    "pruned-forward-twiddle": [("twiddle(false, item.residue, item.begin, item.end, m_block.data(), m_scratchBlock[size_t(w)]->data(), false);",
                                "twiddle(false, item.residue, item.begin, item.end, m_block.data(), m_scratchBlock[size_t(w)]->data(), true);")],
    # Both stages of the adjoint share this line (the rows stage does most of the work).
    "pruned-adjoint-twiddle": [("twiddle(rows, item.residue, item.begin, item.end, scratch[size_t(w)]->data(), sum, true);",
                                "twiddle(rows, item.residue, item.begin, item.end, scratch[size_t(w)]->data(), sum, false);")],
    # pixelVariance: the one rule behind weights, chi-square and normalised residuals.
    "noise-variance-gain": [("std::max(model, 0.0) / gain", "std::max(model, 0.0) * gain")],
    # Problem::compileData: the Poisson objective's weight (the deviance of electrons).
    "poisson-weight-gain": [("weights[g] = m_spec.gain;", "weights[g] = 1.0;")],
    # offsetFor: offset = mean - gain (var - read^2).
    "offset-auto-gain": [("estimates.push_back(p.background - gain * (variance - read * read));",
                          "estimates.push_back(p.background - (variance - read * read) / gain);")],
    # borderReadNoiseSquared: E[(a - b)^2 / 2] = m + read^2 for neighbours of mean m.
    "read-noise-border-half": [("sum += 0.5 * (a - b) * (a - b) - 0.5 * (a + b);", "sum += (a - b) * (a - b) - 0.5 * (a + b);")],
    # readNoiseFor (Poisson): the border's variance less its photon noise (mean - offset) / gain.
    "read-noise-photon-gain": [("(p.background - counted.offset) / gain);", "(p.background - counted.offset) * gain);")],
    # Problem::compilePupilFunction: the span the zonal phase is kept orthogonal to.
    "zonal-both-projector": [("PupilPhaseModel::Both ? m_basis :", "PupilPhaseModel::Both ? Eigen::MatrixXd(m_basis.leftCols(1)) :")],
    # Problem::regularization: value and gradient changed together, so only the prior's known value can tell.
    "zonal-prior-half": [("return 0.5 * w * sum;", "return w * sum;"),
                         ("(*g)[size_t(i)] += w * d;", "(*g)[size_t(i)] += 2.0 * w * d;"),
                         ("(*g)[size_t(j)] -= w * d;", "(*g)[size_t(j)] -= 2.0 * w * d;")],
    # Problem::pupilAmplitude (the gradient's chain rule still removes the mean).
    "zonal-amplitude-mean": [("std::exp(p.zonalAmplitude[i] - mean);", "std::exp(p.zonalAmplitude[i]);")],
    # planeDiversity, defocusAmountChange and chainDefocusGradient together: a consistent model, only the
    # offsets' meaning (the plane's defocus is amount + offset) changes.
    "defocus-offset-sign": [("const double amount = p.defocusScale * m_diversityAmount[k] + p.defocusOffset[k];",
                             "const double amount = p.defocusScale * m_diversityAmount[k] - p.defocusOffset[k];"),
                            ("return (p.defocusScale - 1.0) * m_diversityAmount[k] + p.defocusOffset[k];",
                             "return (p.defocusScale - 1.0) * m_diversityAmount[k] - p.defocusOffset[k];"),
                            ("grad.defocusOffset[size_t(plane)] += unitDerivative;", "grad.defocusOffset[size_t(plane)] -= unitDerivative;")],
    "defocus-scale-gradient": [("grad.defocusScale += m_diversityAmount[size_t(plane)] * unitDerivative;", "grad.defocusScale += unitDerivative;")],
    # parabola(): the vertex of the sampling profile's parabola through three points.
    "composite-limit-per-fit": [("return request.solver.maxIterations - done.iterations;", "return request.solver.maxIterations;")],
    "profile-uniform-apodisation": [("        spec.amplitudeModel = PupilAmplitudeModel::Gaussian;\n        spec.pupil.illumination.gaussian = true;",
                                     "        spec.amplitudeModel = PupilAmplitudeModel::Uniform;\n        spec.pupil.illumination.gaussian = false;")],
    "search-keeps-plateau": [("if ((plateau || request.analysis.computeUncertainty) && iterationsLeft(request, done) > 0) {",
                              "if (request.analysis.computeUncertainty && iterationsLeft(request, done) > 0) {")],
    "seed-flux-unit": [("spec.planes[k].flux = p.flux[k] * photons;", "spec.planes[k].flux = p.flux[k];")],
    "sampling-rounding-strict": [("return q >= threshold * (1.0 - 1e-9);", "return q >= threshold;")],
    "field-joint-covariance-unmarginalised": [("    return sharedBlock - cross * ownBlock.completeOrthogonalDecomposition().pseudoInverse() * cross.transpose();",
                                               "    return sharedBlock - 0.0 * cross * ownBlock.completeOrthogonalDecomposition().pseudoInverse() * cross.transpose();")],
    "field-joint-covariance-radians": [("map(Eigen::Index(s), m_termOffset[s] + Eigen::Index(k)) = 2.0 * M_PI * m_basis[b][s][k];",
                                        "map(Eigen::Index(s), m_termOffset[s] + Eigen::Index(k)) = m_basis[b][s][k];")],
    "field-halo-kept": [("        if (!halo)\n            kept.push_back(bead);", "        kept.push_back(bead);")],
    "field-subpixel-sign": [("0.5 * (a - c) / curvature", "0.5 * (c - a) / curvature")],
    "field-model-unweighted": [("a.row(row) = basis.row(i).head(k) / data.sigmas[i];\n            b[row++] = data.values[i] / data.sigmas[i];",
                                "a.row(row) = basis.row(i).head(k);\n            b[row++] = data.values[i];")],
    "field-model-no-bic-penalty": [("const double bic = fit.chiSquare + zernike::termCount(order) * std::log(double(kept));",
                                    "const double bic = fit.chiSquare;")],
    "field-joint-basis": [("2.0 * M_PI * f[k] * beadGradient[i]", "2.0 * M_PI * beadGradient[i]")],
    "sampling-vertex-sign": [("const double vertex = 0.5 * (a.first + b.first) - d1 / curvature;",
                              "const double vertex = 0.5 * (a.first + b.first) + d1 / curvature;")],
    # addEncircledEnergy, addMtf / analysePsf, fwhm.
    "psf-ee-diameter": [("const int bin = int(std::ceil(std::hypot(c - n / 2, r - n / 2)));",
                         "const int bin = int(std::ceil(2.0 * std::hypot(c - n / 2, r - n / 2)));")],
    "psf-mtf-cutoff": [("a.cutoffCyclesPerPixel = a.lambdaOverDPerPixel;", "a.cutoffCyclesPerPixel = 0.5 * a.lambdaOverDPerPixel;")],
    "psf-fwhm-step": [("return double(step - 1) + (previous - half) / (previous - v);", "return double(step) + (previous - half) / (previous - v);")],
    # psfStack: the object's diameter is in the grid's pixels, which the output's pixel scale changes.
    "psf-stack-object-scale": [("spec.detector.objectDiameterPixels = fitted.detector.objectDiameterPixels * double(grid) / double(n);",
                                "spec.detector.objectDiameterPixels = fitted.detector.objectDiameterPixels;")],
    "session-estimate-offset": [("        return r.boolean(o, key, path, false);", "        return false;")],
    "session-centre-each-plane": [("    readTableKeys(r, pre, pp, pp, settings);\n", "")],
    "settle-order-missing": [("        model.order = solver.stages.back();", "        (void)model;")],
    "panel-drops-unshown": [("    settings.preprocess = m_shownPreprocess;", "    settings.preprocess = PreprocessOptions{};")],
    "panel-switch-inverted": [(": std::get<bool>(value)              ? Qt::Checked", ": !std::get<bool>(value)             ? Qt::Checked")],
    "option-switch-sets-true": [("? SettingValue{!std::get<bool>(d)} :", "? SettingValue{true} :")],
    "hot-pixel-ratio-fixed": [("v - b > o.hotPixelRatio * std::max", "v - b > 3.0 * std::max")],
    # runsJson: each kept run carries its own settings.
    "session-run-solver": [("{QStringLiteral(\"solver\"), solverJson(run.solver)},", "{QStringLiteral(\"solver\"), solverJson(SolverSettings{})},")],
    "runs-rms-piston": [("std::sqrt(std::max(0.0, sumSquares / c.pupilPixels - mean * mean));", "std::sqrt(std::max(0.0, sumSquares / c.pupilPixels));")],
    "solver-zonal-scales-uniform": [("const double own = data * share[k] / meanShare + prior[k];", "const double own = data + meanPrior;")],
    # CpuModel::inChunks: each chunk's range of [0, count); the last chunk must take the remainder.
    "chunks-remainder-dropped": [("f(c, count * c / chunks, count * (c + 1) / chunks);",
                                  "f(c, count / chunks * c, count / chunks * (c + 1));")],
    # VectorialPupil: the p and s amplitudes (equal when index-matched, so only a mismatch shows the swap).
    "vectorial-tp-ts-swap": [("const Complex p = amplitude * pSample * pCover, s = amplitude * sSample * sCover;",
                              "const Complex p = amplitude * sSample * sCover, s = amplitude * pSample * pCover;")],
    "vectorial-coverslip-sign": [("m_coverslipPhase[i] = k0 * (tg * ng * cosG - tgDesign * ngDesign * cosGDesign);",
                                  "m_coverslipPhase[i] = k0 * (tgDesign * ngDesign * cosGDesign - tg * ng * cosG);")],
    "vectorial-apodisation-inverted": [("const double amplitude = ni * std::sqrt(cosI) / ns;", "const double amplitude = ni / std::sqrt(cosI) / ns;")],
    # LiveWatchWorker::process: the ready stacks sorted oldest first, the last one fitted; and publish()'s counts.
    "live-oldest-wins": [("return std::tie(a.lastWriteMs, a.name) < std::tie(b.lastWriteMs, b.name);",
                          "return std::tie(a.lastWriteMs, a.name) > std::tie(b.lastWriteMs, b.name);")],
    "live-skipped-as-fitted": [("m_owner->m_counts.skipped += record.skipped;", "m_owner->m_counts.fitted += record.skipped;")],
    # staleResultReason and readCompleteResult.
    "batch-resume-override": [("|| then.value(QStringLiteral(\"overrides\")) != identity.value(QStringLiteral(\"overrides\")))", "|| false)")],
    "batch-result-no-termination": [("    if (!result.value(QStringLiteral(\"termination\")).isString())\n        return std::nullopt;\n", "")],
    # imageStack: the (planes, rows, columns) array a result's data, model and residuals come back in.
    "python-shape-swap": [("py::array_t<double> stack({py::ssize_t(planes.size()), ny, nx});",
                           "py::array_t<double> stack({py::ssize_t(planes.size()), nx, ny});")],
    # io/SplineCalibration.cpp's one-axis spline: both end conditions.
    "spline-natural-ends": [("        m[0] = 2.0 * m[1] - m[2];", "        m[0] = 0.0;"),
                            ("        m[size_t(n - 1)] = 2.0 * m[size_t(n - 2)] - m[size_t(n - 3)];", "        m[size_t(n - 1)] = 0.0;")],
    "spline-x0-zero-based": [("v.x0 = double(v.size / 2 + 1);", "v.x0 = double(v.size / 2);")],
    "psf-tiff-spacing": [('description += "spacing=" + micronText(axis.values[1] - axis.values[0]) + "\\n";',
                          'description += "spacing=" + micronText(psfStackPixelPitch(stack, context)) + "\\n";')],
}.get(name)
if edits is None:
    sys.exit("no edit for this mutation in apply_mutation")
text = open(path).read()
for old, new in edits:
    count = text.count(old)
    if count != 1:
        sys.exit("the text to change occurs %d times in %s (expected once): %r" % (count, shown, old[:60]))
    text = text.replace(old, new)
open(path, "w").write(text)
PY
}

# NAMEs given on the command line must name mutations (a typo would otherwise select nothing).
for s in "${selected[@]}"; do
  found=0
  for m in "${mutations[@]}"; do [ "${m%%|*}" = "$s" ] && found=1; done
  [ $found = 1 ] || { echo "mutation-check: no mutation named $s" >&2; exit 2; }
done
is_selected() { [ ${#selected[@]} -eq 0 ] || [[ " ${selected[*]} " == *" $1 "* ]]; }

# ---- --check: every mutation applies and names registered tests (no build) ----------------------
if [ $check_only = 1 ]; then
  src="$(mktemp -d)"
  trap 'rm -rf "$src"' EXIT
  # The suites registered with CTest through wfs_add_test (tests/*/CMakeLists.txt), and the pytest suite
  # (python/CMakeLists.txt: add_test(NAME python_module ...)).
  registered=" $(grep -rhoE 'wfs_add_test\([[:space:]]*[A-Za-z0-9_]+' "$root/tests" --include=CMakeLists.txt \
    | sed -E 's/wfs_add_test\([[:space:]]*//' | tr '\n' ' ') $(grep -hoE 'add_test\(NAME [A-Za-z0-9_]+' "$root/python/CMakeLists.txt" \
    | sed -E 's/add_test\(NAME //' | tr '\n' ' ') "
  stale=()
  checked=0
  for m in "${mutations[@]}"; do
    IFS='|' read -r name file tests desc <<<"$m"
    is_selected "$name" || continue
    checked=$((checked + 1))
    why=""
    if [ ! -f "$root/$file" ]; then
      why="$file does not exist"
    else
      mkdir -p "$src/$(dirname "$file")"
      cp "$root/$file" "$src/$file"
      why="$(apply_mutation "$name" "$file" 2>&1 >/dev/null)" || why="${why:-the edit failed}"
    fi
    for t in $tests; do
      [[ "$registered" == *" $t "* ]] || why="${why:+$why; }test $t is not registered (wfs_add_test)"
    done
    if [ -z "$why" ]; then
      echo "applies  $name"
    else
      echo "STALE    $name ($desc): $why"
      stale+=("$name")
    fi
  done
  if [ ${#stale[@]} -gt 0 ]; then
    echo "mutation-check --check: ${#stale[@]} of $checked mutations are stale: ${stale[*]}"
    echo "  Find where the guarded code lives now and update its edit in scripts/mutation-check.sh (same bug, same meaning)."
    exit 1
  fi
  echo "mutation-check --check: all $checked mutations apply"
  exit 0
fi

# ---- the copy and its build ----------------------------------------------------------------------
echo "mutation-check: copying the working tree to $src"
mkdir -p "$src"
# Tracked and untracked-but-not-ignored files, as they are now (uncommitted edits included), unpacked beside the
# copy and moved in only where the content differs, with a fresh time: unchanged files are not rebuilt, and a
# file a stopped run left mutated (or the object built from it) cannot survive into the next run, as it could
# when the copy kept the tree's older times.
staging="$work/staging"
rm -rf "$staging" && mkdir -p "$staging"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$staging" \
  || { echo "copy failed"; exit 2; }
(cd "$staging" && find . -type f -print0) | while IFS= read -r -d '' f; do
  if ! cmp -s "$staging/$f" "$src/$f"; then
    mkdir -p "$(dirname "$src/$f")" && cp "$staging/$f" "$src/$f" || { echo "copy failed: $f"; exit 2; }
  fi
done || exit 2
rm -rf "$staging"
# Files deleted from the tree since the last run would linger; they do not matter to the build of
# the targets below (CMake lists its sources explicitly).

all_tests=() # the tests of the mutations that run (all of them unless NAMEs are given)
for m in "${mutations[@]}"; do
  IFS='|' read -r name file tests desc <<<"$m"
  is_selected "$name" || continue
  for t in $tests; do [[ " ${all_tests[*]} " == *" $t "* ]] || all_tests+=("$t"); done
done

export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DWFS_BUILD_TESTS=ON >"$work/configure.log" 2>&1 \
    || { echo "configure failed, see $work/configure.log"; exit 2; }
fi
jobs="${WFS_MUTATION_JOBS:-2}"
# A test's build targets: a Qt Test suite is its own target (with its programs as dependencies); the pytest suite
# needs the module and wavefront-cli.
build_targets() {
  local targets=()
  for t in "$@"; do
    if [ "$t" = python_module ]; then targets+=(wfs_python wavefront-cli); else targets+=("$t"); fi
  done
  cmake --build "$build" -j "$jobs" --target "${targets[@]}" >"$work/build.log" 2>&1
}
# A mutation's tests run side by side and stop at the first that fails: one failure is a catch. A Qt Test function
# that waits for what a mutation prevents gives up after 2 minutes (QTEST_FUNCTION_TIMEOUT) rather than Qt's 5: the
# longest function of these suites takes about 8 s unmutated (tst_clihostile's memory limits).
run_tests() {
  local regex
  regex="^($(echo "$*" | tr ' ' '|'))\$"
  QTEST_FUNCTION_TIMEOUT="${QTEST_FUNCTION_TIMEOUT:-120000}" \
    ctest --test-dir "$build" -R "$regex" -j "$jobs" --stop-on-failure --timeout 900 --output-on-failure >"$work/test.log" 2>&1
}

echo "mutation-check: baseline build$([ $suite_passed = 1 ] || echo " and tests") (${all_tests[*]})"
build_targets "${all_tests[@]}" || { echo "baseline build failed, see $work/build.log"; exit 2; }
if [ $suite_passed = 0 ]; then
  run_tests "${all_tests[@]}" || { echo "baseline tests fail without any mutation, see $work/test.log"; tail -30 "$work/test.log"; exit 2; }
fi

# ---- one mutation at a time ----------------------------------------------------------------------
caught=0
total=0
missed=()
for m in "${mutations[@]}"; do
  IFS='|' read -r name file tests desc <<<"$m"
  is_selected "$name" || continue
  total=$((total + 1))
  cp "$root/$file" "$src/$file"
  if ! why="$(apply_mutation "$name" "$file" 2>&1)"; then
    echo "NOT APPLIED  $name ($desc): $why; update the mutation (counted as not caught)"
    missed+=("$name")
    cp "$root/$file" "$src/$file"
    continue
  fi
  start=$(date +%s)
  if ! build_targets $tests; then
    echo "NO BUILD     $name ($desc): the mutated source does not compile, see the log below"
    tail -5 "$work/build.log"
    missed+=("$name")
  elif run_tests $tests; then
    echo "MISSED       $name ($desc): $tests pass [$(( $(date +%s) - start )) s]"
    missed+=("$name")
  else
    failing=$(grep -E '^[[:space:]]*[0-9]+ - ' "$work/test.log" | sed -E 's/^[[:space:]]*[0-9]+ - ([^ ]+).*/\1/' | tr '\n' ' ')
    echo "caught       $name ($desc): by ${failing:-$tests}[$(( $(date +%s) - start )) s]"
    # The first failed check, so that a crash or a timeout is not mistaken for an assertion.
    first=$(grep -m1 -E '^FAIL!|Exception|Segmentation|Timeout|Subprocess aborted' "$work/test.log" | cut -c1-200)
    [ -n "$first" ] && echo "               $first"
    caught=$((caught + 1))
  fi
  cp "$root/$file" "$src/$file" # restore; the next build recompiles it
done
# Leave the copy's build matching the unmutated sources for the next run.
build_targets "${all_tests[@]}" >/dev/null 2>&1 || true

[ ${#missed[@]} -gt 0 ] && echo "not caught: ${missed[*]}"
echo "caught $caught of $total"
[ "$caught" -eq "$total" ]
