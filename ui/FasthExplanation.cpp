#include "FasthExplanation.h"

#include "FasthPlots.h"

#include <QCoreApplication>
#include <QStringList>

#include <cmath>
#include <map>

namespace wfs::ui {

using fasth::BenchMethod;
using fasth::Pass;

namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("FasthPanel", text);
}

// What every method computes, why the speed-up depends on the machine, the block size and the layer.
QString comparedHtml()
{
    return tr("<h3>What is compared</h3>"
              "<p>Every method computes the same product of k Householder reflections, H<sub>1</sub>H<sub>2</sub>…H<sub>k</sub> X, "
              "for a batch X of m columns (H<sub>i</sub> = I − 2 v<sub>i</sub>v<sub>i</sub><sup>T</sup>/‖v<sub>i</sub>‖²). "
              "Each result is checked against the sequential one (max_abs_error in the CSV).</p>"
              "<ul>"
              "<li><b>Sequential</b>: k dependent steps X ← X − (2/‖v‖²) v (v<sup>T</sup>X). Each step is small and waits "
              "for the one before.</li>"
              "<li><b>FastH</b>: the reflectors are cut into blocks of b (shaded on the Pictures tab). Each block's WY form "
              "P<sub>j</sub> = I − 2 W<sub>j</sub>Y<sub>j</sub><sup>T</sup> is built on its own, so all blocks can be built in "
              "parallel; then the ⌈k/b⌉ blocks are applied in turn, two matrix products each. That is O(k/b + b) sequential "
              "matrix operations instead of O(k) vector operations.</li>"
              "<li><b>UT</b> (compact WY) and <b>tree merge</b> build the block products in other ways; the <b>library</b> "
              "baseline is Eigen's blocked HouseholderSequence (cuSOLVER ormqr on a GPU); <b>dense GEMM</b> multiplies by an "
              "already formed Q, the floor for applying any orthogonal matrix.</li>"
              "</ul>"
              "<h3>Why the speed-up depends on the machine</h3>"
              "<p>The paper measured about 27× over the sequential algorithm on a GPU: there one reflector step keeps only a "
              "sliver of thousands of cores busy and costs a kernel launch, so turning k small steps into k/b + b large ones "
              "pays. On a CPU with a few cores, one step on a 32-column batch already runs close to the speed of a matrix "
              "product, so the sequential algorithm is near GEMM speed and FastH has little to win; it can even lose, since "
              "building W is extra work. The plots show what this machine does; nothing on them is estimated.</p>"
              "<h3>The block size</h3>"
              "<p>Small b: many blocks, applied one after another as thin products. Large b: few blocks, but each block's WY "
              "recursion takes b steps and the work grows as d²(b + m). The count ⌈k/b⌉ + b (right axis of the block plot) "
              "is smallest near b = √k; how closely the measured time follows it depends on how much parallel hardware "
              "there is to keep busy.</p>"
              "<h3>The SVD layer</h3>"
              "<p>W = U diag(σ) V<sup>T</sup> with U and V products of reflectors has orthogonal factors whatever the "
              "parameters (‖Q<sup>T</sup>Q − I‖ on the Pictures tab). With the SVD at hand, W<sup>−1</sup>Y = "
              "V diag(1/σ) U<sup>T</sup>Y costs two applies and log|det W| = Σ log|σ<sub>i</sub>| costs d logarithms, "
              "where LU needs an O(d³) factorisation. The SVD layer tab trains such a layer with Adam and checks both "
              "against LU.</p>");
}

// What this machine did, from the last sweep's own numbers.
QString machineHtml(const std::optional<FasthSweepResults>& sweep, const std::vector<FasthTimingRow>& rows, Pass pass)
{
    QString html;
    int largest = 0;
    std::map<BenchMethod, double> atLargest;
    for (const FasthTimingRow& t : rows)
        if (t.sweep == FasthSweepKind::Dimension && t.row.pass == pass)
            largest = std::max(largest, t.row.d);
    for (const FasthTimingRow& t : rows)
        if (t.sweep == FasthSweepKind::Dimension && t.row.pass == pass && t.row.d == largest)
            atLargest[t.row.method] = t.row.ms;
    if (sweep && largest > 0) {
        const FasthSweepResults& r = *sweep;
        QStringList parts;
        for (const auto& [method, ms] : atLargest)
            parts << QStringLiteral("%1 %2").arg(methodLabel(method), durationText(ms));
        html += tr("<h3>On this machine</h3><p>%1, %2 threads, %3, batch %4, %5: at d = %6, %7.</p>")
                    .arg(r.device.toHtmlEscaped())
                    .arg(r.threads)
                    .arg(QString::fromLatin1(precisionName(r.settings.precision)))
                    .arg(r.settings.batch)
                    .arg(passLabel(pass))
                    .arg(largest)
                    .arg(parts.join(QStringLiteral(", ")));
        const auto sequential = atLargest.find(BenchMethod::Sequential);
        const auto fasthTime = atLargest.find(BenchMethod::FastH);
        if (sequential != atLargest.end() && fasthTime != atLargest.end() && fasthTime->second > 0) {
            const double speedUp = sequential->second / fasthTime->second;
            html += speedUp >= 1.0 ? tr("<p>FastH is %1× faster than the sequential algorithm here.</p>").arg(speedUp, 0, 'f', 2)
                                   : tr("<p>FastH is slower than the sequential algorithm here (%1×): this machine's "
                                        "sequential steps are already efficient.</p>")
                                         .arg(speedUp, 0, 'f', 2);
        }
        const fasth::SweepRow* best = nullptr;
        for (const FasthTimingRow& t : rows)
            if (t.sweep == FasthSweepKind::BlockSize && t.row.pass == pass && t.row.method == BenchMethod::FastH
                && (!best || t.row.ms < best->ms))
                best = &t.row;
        if (best)
            html += tr("<p>Fastest FastH block at d = %1, k = %2: b = %3 (%4).</p>")
                        .arg(best->d)
                        .arg(best->k)
                        .arg(best->block)
                        .arg(durationText(best->ms));
        if (r.cancelled)
            html += tr("<p>(The sweep was cancelled; these are the points measured before.)</p>");
    }
    return html;
}

} // namespace

QString fasthExplanationHtml(const std::optional<FasthSweepResults>& sweep, const std::vector<FasthTimingRow>& rows, Pass pass)
{
    return comparedHtml() + machineHtml(sweep, rows, pass);
}

QString fasthUseCaseHtml(const std::optional<FasthTrainingResult>& training)
{
    if (!training || !training->error.isEmpty())
        return tr("No trained layer.");
    const FasthTrainingResult& r = *training;
    if (r.cancelled || r.summary.termination == fasth::TrainingTermination::Diverged)
        return tr("Inverse and determinant are compared with LU after a training that ran to its end.");
    const FasthUseCaseComparison& c = r.useCases;
    const QString precision = r.settings.precision == Precision::Double ? tr("float64") : tr("float32");
    return tr("<p><b>The trained layer (d = %1, %2) against LU of the formed W</b> (median of %3 runs; forming W for LU "
              "is not counted, the factorisation is, since W changes at every step):</p>"
              "<table cellspacing='0' cellpadding='3' border='1'>"
              "<tr><th></th><th>SVD layer (FastH)</th><th>LU (Eigen PartialPivLU)</th><th>agreement</th></tr>"
              "<tr><td>W<sup>−1</sup>Y, %4 columns</td><td>%5</td><td>%6</td>"
              "<td>max relative difference %7; residual ‖W X − Y‖ / ‖Y‖ (max norms) %8</td></tr>"
              "<tr><td>log |det W|</td><td>%9 (%10)</td><td>%11 (%12)</td><td>difference %13</td></tr>"
              "<tr><td>sign of det W</td><td>%14</td><td>%15</td><td>%16</td></tr>"
              "</table>")
        .arg(r.settings.d)
        .arg(precision)
        .arg(r.settings.timingRepeat)
        .arg(c.rightHandSides)
        .arg(durationText(c.svdInverseMs), durationText(c.luSolveMs))
        .arg(c.inverseRelativeDifference, 0, 'e', 2)
        .arg(c.inverseResidual, 0, 'e', 2)
        .arg(c.svdLogAbsDet, 0, 'g', 10)
        .arg(durationText(c.svdLogDetMs))
        .arg(c.luLogAbsDet, 0, 'g', 10)
        .arg(durationText(c.luLogDetMs))
        .arg(std::abs(c.svdLogAbsDet - c.luLogAbsDet), 0, 'e', 2)
        .arg(c.svdDetSign > 0 ? QStringLiteral("+") : QStringLiteral("−"))
        .arg(c.luDetSign > 0 ? QStringLiteral("+") : QStringLiteral("−"))
        .arg(c.svdDetSign == c.luDetSign ? tr("same") : tr("different"));
}

} // namespace wfs::ui
