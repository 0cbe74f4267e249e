// The Field tab's pictures: a finished run drawn (the projection and its markers, the chosen term's map and residuals),
// a bead picked by a click or named by its tooltip, and its own fit in the table (FieldPanelJobs.cpp runs the jobs).
#include "FieldPanel.h"

#include "ImageView.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QHelpEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTabWidget>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace wfs::ui {

namespace {

constexpr double kPickPixels = 9.0; // a click or a hover this close to a marker (screen pixels) is about its bead

QString termName(const FieldRun& run, int index)
{
    return QStringLiteral("%1 %2 %3")
        .arg(run.ordering == ZernikeOrdering::Noll ? QStringLiteral("Noll") : QStringLiteral("ANSI"))
        .arg(index)
        .arg(QString::fromStdString(zernike::name(zernike::modeFromIndex(index, run.ordering))));
}

const CoefficientResult* coefficientOf(const FieldBead& bead, int index)
{
    for (const CoefficientResult& c : bead.coefficients)
        if (c.index == index)
            return &c;
    return nullptr;
}

// Each "ok" bead's (the model's samples, in bead order) 1-sigma of a term, an unknown one replaced by the median
// known one, as the field model weights it (fit/FieldModel.h).
std::vector<double> sampleSigmas(const FieldRun& run, int index)
{
    std::vector<double> sigmas, known;
    for (const FieldBead& bead : run.beads)
        if (bead.status == "ok") {
            const CoefficientResult* c = coefficientOf(bead, index);
            const double s = c ? c->uncertaintyWaves : std::nan("");
            sigmas.push_back(s);
            if (std::isfinite(s) && s > 0)
                known.push_back(s);
        }
    std::sort(known.begin(), known.end());
    const double typical = known.empty() ? 1.0 : known[known.size() / 2];
    for (double& s : sigmas)
        if (!(std::isfinite(s) && s > 0))
            s = typical;
    return sigmas;
}

QString number(double v, int decimals)
{
    return std::isfinite(v) ? QString::number(v, 'f', decimals) : QStringLiteral("–");
}

} // namespace

void FieldPanel::showRun()
{
    const FieldRun& run = *m_run;
    int inModel = 0, ok = 0, fitted = 0;
    for (const FieldBead& bead : run.beads) {
        inModel += bead.inModel ? 1 : 0;
        ok += bead.status == "ok" ? 1 : 0;
        fitted += bead.coefficients.empty() ? 0 : 1;
    }
    m_status->setText(tr("%1: %2 beads found, %3 fitted, %4 ok (%5 in the field model), %6 set aside · %7 s")
                          .arg(m_source)
                          .arg(run.beads.size())
                          .arg(fitted)
                          .arg(ok)
                          .arg(inModel)
                          .arg(int(run.beads.size()) - ok)
                          .arg(run.seconds, 0, 'f', 1));
    m_summary->setPlainText(QString::fromStdString(fieldSummary(run)));
    m_pages->setCurrentIndex(1);
    m_projection->setImage(run.detection.projection, tr("Mean projection, %1 beads").arg(run.beads.size()),
                           QString::fromStdString(run.dataUnit));
    drawMarkers(m_projectionMarkers, -1);
    const int previous = m_term->currentData().toInt();
    {
        const QSignalBlocker block(m_term);
        m_term->clear();
        for (size_t t = 0; run.model && t < run.modelTerms.size(); ++t)
            m_term->addItem(termName(run, run.modelTerms[t]), run.modelTerms[t]);
        m_term->setCurrentIndex(std::max(0, m_term->findData(previous)));
    }
    showTerm();
    selectBead(-1);
}

void FieldPanel::showTerm()
{
    const int t = m_term->currentIndex();
    if (!m_run || !m_run->model || t < 0 || t >= int(m_maps.size())) {
        m_map->clear(m_run ? tr("No field model: %1").arg(QString::fromStdString(m_run->modelError)) : QString());
        m_mapNote->clear();
        m_residualPoints.clear();
        for (QCPGraph* g : {m_residualIn, m_residualOut, m_residualSelected})
            g->data()->clear();
        m_residuals->replot(QCustomPlot::rpQueuedReplot);
        return;
    }
    const FieldTermGrid& grid = m_maps[size_t(t)];
    double largest = 1e-12; // a flat map still has a range
    for (double v : grid.values.pixels)
        if (std::isfinite(v))
            largest = std::max(largest, std::abs(v));
    const FieldTermFit& fit = m_run->model->terms[size_t(t)];
    m_map->setAxisScale(AxisScale{grid.x0, grid.y0, grid.step, tr("x (pixel)"), tr("y (pixel)"), tr("pixel")});
    // Symmetric about zero, as every signed map of the program: white is no aberration.
    m_map->setImage(grid.values, tr("%1 over the field").arg(m_term->currentText()), tr("waves"), DisplayRange{-largest, largest});
    m_mapNote->setText(tr("Field order %1 · reduced χ² %2 · %3 of %4 beads kept")
                           .arg(fit.order)
                           .arg(fit.reducedChiSquare, 0, 'g', 3)
                           .arg(fit.kept)
                           .arg(fit.outlier.size()));
    drawMarkers(m_mapMarkers, t);
    drawResiduals(t);
    selectBead(m_selected);
}

// The beads on one picture: in the model, outliers (of any term on the projection, of `term` on its map) and set aside.
void FieldPanel::drawMarkers(const Markers& markers, int term) const
{
    QVector<double> x[3], y[3]; // in the model, outlier, set aside
    size_t sample = 0;          // the bead's place among the model's samples (the "ok" beads, in bead order)
    for (const FieldBead& bead : m_run->beads) {
        int group = 2;
        if (bead.status == "ok") {
            const std::vector<bool>* outliers = m_run->model && term >= 0 ? &m_run->model->terms[size_t(term)].outlier : nullptr;
            const bool outlier = outliers ? sample < outliers->size() && (*outliers)[sample] : m_run->model && !bead.inModel;
            group = outlier ? 1 : 0;
            ++sample;
        }
        x[group].append(bead.detection.x);
        y[group].append(bead.detection.y);
    }
    markers.inModel->setData(x[0], y[0]);
    markers.outlier->setData(x[1], y[1]);
    markers.setAside->setData(x[2], y[2]);
    markers.inModel->parentPlot()->replot(QCustomPlot::rpQueuedReplot);
}

// Each model sample's residual over its 1-sigma against its bead's number, outliers of the term apart.
void FieldPanel::drawResiduals(int term)
{
    const FieldTermFit& fit = m_run->model->terms[size_t(term)];
    const std::vector<double> sigmas = sampleSigmas(*m_run, m_run->modelTerms[size_t(term)]);
    m_residualPoints.clear();
    QVector<double> x[2], y[2];
    double largest = 3.0;
    size_t sample = 0;
    for (size_t i = 0; i < m_run->beads.size(); ++i) {
        if (m_run->beads[i].status != "ok" || sample >= fit.residuals.size() || sample >= sigmas.size())
            continue;
        const double r = fit.residuals[sample] / sigmas[sample];
        const int group = sample < fit.outlier.size() && fit.outlier[sample] ? 1 : 0;
        ++sample;
        m_residualPoints.emplace_back(int(i), r);
        x[group].append(double(i));
        y[group].append(r);
        largest = std::max(largest, std::abs(r));
    }
    m_residualIn->setData(x[0], y[0]);
    m_residualOut->setData(x[1], y[1]);
    m_residuals->yAxis->setLabel(tr("%1 residual / σ").arg(m_term->currentText().section(QLatin1Char(' '), 0, 1)));
    m_residuals->xAxis->setRange(-1.0, std::max<double>(1.0, double(m_run->beads.size()))); // the end markers whole
    m_residuals->yAxis->setRange(-1.1 * largest, 1.1 * largest);
    m_residuals->replot(QCustomPlot::rpQueuedReplot);
}

int FieldPanel::markerCount() const
{
    int count = 0;
    for (QCPGraph* g : {m_projectionMarkers.inModel, m_projectionMarkers.outlier, m_projectionMarkers.setAside})
        count += g->dataCount();
    return count;
}

void FieldPanel::selectBead(int bead)
{
    m_selected = m_run && bead >= 0 && bead < int(m_run->beads.size()) ? bead : -1;
    for (const Markers& markers : {m_projectionMarkers, m_mapMarkers}) {
        markers.selected->data()->clear();
        if (m_selected >= 0)
            markers.selected->addData(m_run->beads[size_t(m_selected)].detection.x, m_run->beads[size_t(m_selected)].detection.y);
        markers.selected->parentPlot()->replot(QCustomPlot::rpQueuedReplot);
    }
    m_residualSelected->data()->clear();
    for (const auto& [index, value] : m_residualPoints)
        if (index == m_selected)
            m_residualSelected->addData(double(index), value);
    m_residuals->replot(QCustomPlot::rpQueuedReplot);
    fillBeadTable();
    if (m_selected >= 0)
        m_beadPages->setCurrentIndex(0);
}

void FieldPanel::fillBeadTable()
{
    m_beadTable->clearContents();
    m_beadTable->setRowCount(0);
    if (m_selected < 0) {
        m_beadTitle->setText(m_run ? tr("Click a bead's marker or residual to see its own fit.") : tr("No field yet."));
        return;
    }
    const FieldBead& bead = m_run->beads[size_t(m_selected)];
    m_beadTitle->setText(
        tr("<b>Bead %1</b> at (%2, %3) px: <b>%4</b>%5")
            .arg(m_selected)
            .arg(bead.detection.x, 0, 'f', 1)
            .arg(bead.detection.y, 0, 'f', 1)
            .arg(QString::fromStdString(bead.status))
            .arg(bead.reason.empty() ? QString() : QStringLiteral(": ") + QString::fromStdString(bead.reason).toHtmlEscaped()));
    const auto addRow = [this](const QString& name, const QString& value, const QString& sigma) {
        const int row = m_beadTable->rowCount();
        m_beadTable->insertRow(row);
        m_beadTable->setItem(row, 0, new QTableWidgetItem(name));
        m_beadTable->setItem(row, 1, new QTableWidgetItem(value));
        m_beadTable->setItem(row, 2, new QTableWidgetItem(sigma));
    };
    addRow(tr("Status"), QString::fromStdString(bead.status), QString());
    addRow(tr("Reduced χ²"), number(bead.reducedChiSquare, 3), QString());
    addRow(tr("RMS (waves)"), number(bead.rmsWaves, 4), QString());
    for (const CoefficientResult& c : bead.coefficients)
        addRow(termName(*m_run, c.index), number(c.waves, 4), number(c.uncertaintyWaves, 4));
    m_beadTable->resizeRowsToContents(); // the long term names on two lines
}

QString FieldPanel::beadTitle() const
{
    return m_beadTitle->text();
}

int FieldPanel::beadNear(QCustomPlot* plot, const QPoint& at) const
{
    if (!m_run || !plot->axisRect()->rect().contains(at))
        return -1;
    int best = -1;
    double bestDistance = kPickPixels;
    const auto consider = [&](int bead, double x, double y) {
        const double d = std::hypot(plot->xAxis->coordToPixel(x) - at.x(), plot->yAxis->coordToPixel(y) - at.y());
        if (d <= bestDistance) {
            bestDistance = d;
            best = bead;
        }
    };
    if (plot == m_residuals)
        for (const auto& [bead, value] : m_residualPoints)
            consider(bead, double(bead), value);
    else
        for (size_t i = 0; i < m_run->beads.size(); ++i)
            consider(int(i), m_run->beads[i].detection.x, m_run->beads[i].detection.y);
    return best;
}

QString FieldPanel::beadToolTip(int bead) const
{
    const FieldBead& b = m_run->beads[size_t(bead)];
    QStringList lines{tr("Bead %1 at (%2, %3) px: %4")
                          .arg(bead)
                          .arg(b.detection.x, 0, 'f', 1)
                          .arg(b.detection.y, 0, 'f', 1)
                          .arg(QString::fromStdString(b.status))};
    if (!b.reason.empty())
        lines << QString::fromStdString(b.reason);
    if (!b.coefficients.empty()) {
        lines << tr("reduced χ² %1, RMS %2 waves%3")
                     .arg(number(b.reducedChiSquare, 3), number(b.rmsWaves, 4))
                     .arg(b.inModel ? tr(", in the field model") : QString());
        for (int index : m_run->modelTerms)
            if (const CoefficientResult* c = coefficientOf(b, index))
                lines << tr("%1: %2 ± %3 waves").arg(termName(*m_run, index), number(c->waves, 4), number(c->uncertaintyWaves, 4));
    }
    return lines.join(QLatin1Char('\n'));
}

bool FieldPanel::eventFilter(QObject* watched, QEvent* event)
{
    auto* plot = qobject_cast<QCustomPlot*>(watched);
    if (!plot || !m_run)
        return QWidget::eventFilter(watched, event);
    if (event->type() == QEvent::ToolTip) {
        const auto* help = static_cast<QHelpEvent*>(event);
        if (const int bead = beadNear(plot, help->pos()); bead >= 0) {
            QToolTip::showText(help->globalPos(), beadToolTip(bead), plot);
            return true;
        }
    }
    if (event->type() == QEvent::MouseButtonPress) {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        // A click on a marker selects its bead and is not the start of a pan (the view keeps its zoom).
        if (const int bead = beadNear(plot, mouse->position().toPoint()); bead >= 0 && mouse->button() == Qt::LeftButton) {
            selectBead(bead);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

QString FieldPanel::statusText() const
{
    return m_status->text();
}

QString FieldPanel::summaryText() const
{
    return m_summary->toPlainText();
}

} // namespace wfs::ui
