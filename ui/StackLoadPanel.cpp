#include "StackLoadPanel.h"
#include "io/Assumptions.h"

#include "ImageView.h"
#include "MainWindow.h"
#include "SetupPanel.h"

#include "fit/PsfAnalysis.h"

#include <QComboBox>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMainWindow>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>

namespace wfs::ui {

namespace {

constexpr int kThumbnail = 64; // the item text is as wide as the icon: "z −2.7 µm" and a bold "10 focus" fit

struct Pictures {
    std::vector<PlaneStatistics> statistics;
    std::vector<QImage> thumbnails;
};

// One region for every thumbnail (where the light of all planes falls), so that the planes compare at one scale.
QRect commonRegion(const Dataset& dataset)
{
    if (dataset.planes.empty())
        return {};
    const Image& first = dataset.planes.front().raw;
    Image sum(first.width, first.height, 0.0);
    for (const DatasetPlane& plane : dataset.planes)
        if (plane.use && plane.raw.width == first.width && plane.raw.height == first.height)
            for (size_t i = 0; i < sum.pixels.size(); ++i)
                if (std::isfinite(plane.raw.pixels[i]))
                    sum.pixels[i] += plane.raw.pixels[i];
    const PixelBox box = fluxBox(sum, 0.95);
    return box.isEmpty() ? QRect() : QRect(box.col, box.row, box.width, box.height);
}

// Pixel pitches and z steps in µm, as microscopists and camera data sheets give them.
QString lengthText(double metres)
{
    return QStringLiteral("%1 µm").arg(metres * 1e6, 0, 'g', 4);
}

QString signedLength(double metres)
{
    if (std::abs(metres) < 1e-15)
        return QStringLiteral("0 µm");
    return QStringLiteral("%1%2 µm").arg(metres > 0 ? QStringLiteral("+") : QStringLiteral("−")).arg(std::abs(metres) * 1e6, 0, 'g', 3);
}

bool isLength(const std::string& key)
{
    return key == "wavelength" || key == "pixelPitch" || key == "zStep";
}

std::optional<double> valueOf(const DatasetMetadata& m, const std::string& key)
{
    if (key == "wavelength")
        return m.wavelength;
    if (key == "pixelPitch")
        return m.pixelPitch;
    if (key == "numericalAperture")
        return m.numericalAperture;
    if (key == "fNumber")
        return m.fNumber;
    if (key == "immersionIndex")
        return m.immersionIndex;
    if (key == "zStep")
        return m.zStep;
    if (key == "focusPlane")
        return m.focusPlane;
    return std::nullopt;
}

void setValue(DatasetMetadata& m, const std::string& key, std::optional<double> v)
{
    if (key == "wavelength")
        m.wavelength = v;
    else if (key == "pixelPitch")
        m.pixelPitch = v;
    else if (key == "numericalAperture")
        m.numericalAperture = v;
    else if (key == "fNumber")
        m.fNumber = v;
    else if (key == "immersionIndex")
        m.immersionIndex = v.value_or(1.0);
    else if (key == "zStep")
        m.zStep = v;
    else if (key == "focusPlane")
        m.focusPlane = v;
}

// The plausible range core checks a typed value against (base/Units.h).
std::optional<Setting> plausibleRange(const std::string& key)
{
    if (key == "wavelength")
        return Setting::Wavelength;
    if (key == "pixelPitch")
        return Setting::PixelPitch;
    if (key == "numericalAperture")
        return Setting::NumericalAperture;
    if (key == "fNumber")
        return Setting::FNumber;
    if (key == "immersionIndex")
        return Setting::ImmersionIndex;
    if (key == "zStep")
        return Setting::ZStep;
    return std::nullopt;
}

QString valueText(const std::string& key, double v)
{
    if (key == "wavelength")
        return QStringLiteral("%1 nm").arg(v * 1e9, 0, 'g', 6);
    if (isLength(key))
        return lengthText(v);
    return QString::number(v, 'g', 6);
}

// Where a value came from, in words: a file or sidecar as core recorded it, the user, or the default.
QString originText(const DatasetMetadata& m, const std::string& key, bool set)
{
    const auto it = m.origin.find(key);
    if (it != m.origin.end())
        return it->second == "user" ? QObject::tr("you") : QString::fromStdString(it->second);
    if (!set)
        return QObject::tr("—");
    return QObject::tr("default");
}

} // namespace

StackLoadPanel::StackLoadPanel(SetupPanel* setup, QWidget* parent)
    : QWidget(parent)
    , m_setup(setup)
{
    setObjectName(QStringLiteral("loadStep"));
    auto* layout = new QVBoxLayout(this);
    m_header = new QLabel(this);
    m_header->setObjectName(QStringLiteral("loadHeader"));
    m_header->setWordWrap(true);
    m_header->setTextFormat(Qt::PlainText);
    layout->addWidget(m_header);

    buildThumbnails(layout);
    buildProposal(layout);
    buildSettings(layout);
    buildProblemsAndStart(layout);
    connect(m_setup, &SetupPanel::settingsEdited, this, &StackLoadPanel::refresh);
}

// The planes as thumbnails, each ticked when it takes part in the fit.
void StackLoadPanel::buildThumbnails(QVBoxLayout* layout)
{
    m_thumbnails = new QListWidget(this);
    m_thumbnails->setObjectName(QStringLiteral("loadThumbnails"));
    m_thumbnails->setViewMode(QListView::IconMode);
    m_thumbnails->setIconSize(QSize(kThumbnail, kThumbnail));
    m_thumbnails->setGridSize(QSize(kThumbnail + 30, kThumbnail + 40));
    m_thumbnails->setResizeMode(QListView::Adjust);
    m_thumbnails->setMovement(QListView::Static);
    m_thumbnails->setWordWrap(true);
    m_thumbnails->setUniformItemSizes(true);
    m_thumbnails->setSelectionMode(QAbstractItemView::NoSelection);
    m_thumbnails->setMinimumHeight(kThumbnail + 50);
    m_thumbnails->setToolTip(tr("The planes as loaded, each scaled to its own range over the region where the light falls. "
                                "Ticked planes take part in the fit; z is the position from the focus plane (z step × planes)."));
    layout->addWidget(m_thumbnails, 1);
    connect(m_thumbnails, &QListWidget::itemChanged, this, [this] {
        if (m_refreshing)
            return;
        std::vector<int> planes;
        for (int i = 0; i < m_thumbnails->count(); ++i)
            if (m_thumbnails->item(i)->checkState() == Qt::Checked)
                planes.push_back(i);
        m_setup->setPlanesInUse(planes);
    });
}

// The proposed planes and focus, and the buttons that take them (or every plane).
void StackLoadPanel::buildProposal(QVBoxLayout* layout)
{
    auto* proposalRow = new QHBoxLayout;
    m_proposal = new QLabel(this);
    m_proposal->setObjectName(QStringLiteral("loadProposal"));
    m_proposal->setWordWrap(true);
    m_useProposal = new QPushButton(tr("Use proposal"), this);
    m_useProposal->setObjectName(QStringLiteral("loadUseProposal"));
    m_useProposal->setToolTip(tr("Tick the proposed planes only and take the proposed focus plane"));
    m_useAll = new QPushButton(tr("All planes"), this);
    m_useAll->setToolTip(tr("Tick every plane that holds data (slower; nearly alike planes add little)"));
    proposalRow->addWidget(m_proposal, 1);
    proposalRow->addWidget(m_useProposal);
    proposalRow->addWidget(m_useAll);
    layout->addLayout(proposalRow);
    connect(m_useProposal, &QPushButton::clicked, this, [this] {
        if (m_plan.focusPlane >= 0 && !currentMetadata().focusPlane) {
            DatasetMetadata m = currentMetadata();
            m.focusPlane = m_plan.focusPlane;
            m_setup->editMetadata(m, "focusPlane");
        }
        usePlanes(m_plan.planes);
    });
    connect(m_useAll, &QPushButton::clicked, this, [this] {
        std::vector<int> planes;
        for (const PlaneStatistics& s : m_statistics)
            if (s.usable)
                planes.push_back(s.plane);
        usePlanes(planes);
    });
}

// The settings the fit needs, one row each: value, where it came from, and its status.
void StackLoadPanel::buildSettings(QVBoxLayout* layout)
{
    auto* settingsTitle = new QLabel(tr("<b>Settings the fit needs</b> — type a value with its unit (e.g. 605 nm, 0.1 um)"), this);
    layout->addWidget(settingsTitle);
    auto* grid = new QGridLayout;
    grid->setHorizontalSpacing(10);
    grid->setVerticalSpacing(3);
    int column = 0;
    for (const QString& title : {tr("setting"), tr("value"), tr("from"), tr("status")}) {
        auto* head = new QLabel(QStringLiteral("<i>%1</i>").arg(title), this);
        grid->addWidget(head, 0, column++);
    }
    addRow(grid, tr("Wavelength"), "wavelength", "wavelength", tr("e.g. 605 nm"));
    addRow(grid, tr("Pixel pitch"), "pixelPitch", "pixel-scale", tr("e.g. 0.1 um"));
    addRow(grid, tr("NA"), "numericalAperture", "na", tr("e.g. 1.1"));
    addRow(grid, tr("f-number"), "fNumber", "f-number", tr("or e.g. 20"));
    addRow(grid, tr("Immersion n"), "immersionIndex", "immersion", tr("e.g. 1.33"));
    addRow(grid, tr("z step"), "zStep", "z-step", tr("e.g. 0.3 um"));
    addRow(grid, tr("Focus plane"), "focusPlane", "focus-plane", tr("e.g. 10"));
    addRow(grid, tr("z direction"), "zIndexDown", "z-direction", QString());
    addRow(grid, tr("Defocus model"), "defocusModel", "defocus-model", QString());
    grid->setColumnStretch(2, 1);
    grid->setColumnStretch(3, 2);
    layout->addLayout(grid);
}

// What is still missing or to check, and the start button.
void StackLoadPanel::buildProblemsAndStart(QVBoxLayout* layout)
{
    m_problemList = new QListWidget(this);
    m_problemList->setObjectName(QStringLiteral("loadProblems"));
    m_problemList->setWordWrap(true);
    m_problemList->setSelectionMode(QAbstractItemView::NoSelection);
    m_problemList->setMaximumHeight(110);
    m_problemList->setToolTip(tr(
        "Every setting still missing or invalid (red: Start waits for it) and what to check (orange), from the same checks the fit runs"));
    layout->addWidget(m_problemList);

    auto* startRow = new QHBoxLayout;
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("loadSummary"));
    m_summary->setWordWrap(true);
    m_start = new QPushButton(tr("Start fit"), this);
    m_start->setObjectName(QStringLiteral("loadStartButton"));
    startRow->addWidget(m_summary, 1);
    startRow->addWidget(m_start);
    layout->addLayout(startRow);
    connect(m_start, &QPushButton::clicked, m_setup, &SetupPanel::requestStart);
}

void StackLoadPanel::addRow(QGridLayout* grid, const QString& label, const std::string& key, const std::string& setting,
                            const QString& placeholder)
{
    Row row;
    row.key = key;
    row.setting = setting;
    const int r = grid->rowCount();
    auto* name = new QLabel(label, this);
    name->setToolTip(m_setup->fieldToolTip(setting));
    grid->addWidget(name, r, 0);
    const QString objectName = QStringLiteral("load_%1").arg(QString::fromStdString(key));
    if (key == "zIndexDown" || key == "defocusModel") {
        row.combo = new QComboBox(this);
        row.combo->setObjectName(objectName);
        if (key == "zIndexDown")
            row.combo->addItems({tr("up: index along +z"), tr("down: index along −z")});
        else
            row.combo->addItems({tr("paraxial"), tr("high NA")});
        row.combo->setToolTip(m_setup->fieldToolTip(setting));
        grid->addWidget(row.combo, r, 1);
        connect(row.combo, &QComboBox::activated, this, [this, key] {
            for (const Row& each : m_rows)
                if (each.key == key)
                    commit(each);
        });
    } else {
        row.edit = new QLineEdit(this);
        row.edit->setObjectName(objectName);
        row.edit->setPlaceholderText(placeholder);
        row.edit->setToolTip(m_setup->fieldToolTip(setting));
        row.edit->setMinimumWidth(90);
        grid->addWidget(row.edit, r, 1);
        connect(row.edit, &QLineEdit::editingFinished, this, [this, key] {
            for (const Row& each : m_rows)
                if (each.key == key)
                    commit(each);
        });
    }
    row.origin = new QLabel(this);
    row.origin->setObjectName(QStringLiteral("loadOrigin_%1").arg(QString::fromStdString(key)));
    row.origin->setWordWrap(true);
    row.origin->setStyleSheet(QStringLiteral("color: palette(mid)"));
    grid->addWidget(row.origin, r, 2);
    auto* statusCell = new QWidget(this);
    auto* statusLayout = new QHBoxLayout(statusCell);
    statusLayout->setContentsMargins(0, 0, 0, 0);
    row.status = new QLabel(statusCell);
    row.status->setObjectName(QStringLiteral("loadStatus_%1").arg(QString::fromStdString(key)));
    row.status->setWordWrap(true);
    statusLayout->addWidget(row.status, 1);
    row.choices = new QWidget(statusCell);
    new QHBoxLayout(row.choices);
    row.choices->layout()->setContentsMargins(0, 0, 0, 0);
    row.choices->hide();
    statusLayout->addWidget(row.choices);
    grid->addWidget(statusCell, r, 3);
    m_rows.push_back(row);
}

void StackLoadPanel::setDataset(const Dataset& dataset, bool propose)
{
    m_dataset = m_setup->sessionFor(dataset).dataset; // planes without pixels
    m_dataset.metadata = dataset.metadata;
    m_statistics.clear();
    m_rejected.clear();
    m_questioned.clear();
    m_plan = {};
    m_thumbnails->clear();
    m_proposal->setText(tr("Measuring the planes…"));
    QStringList names;
    for (const DatasetFile& f : dataset.files)
        names << QFileInfo(QString::fromStdString(f.path)).fileName();
    if (!dataset.planes.empty()) {
        const Image& first = dataset.planes.front().raw;
        const DatasetFile& f = dataset.files.front();
        m_header->setText(tr("%1 · %2 plane(s) of %3 × %4 · %5-bit%6")
                              .arg(names.join(QStringLiteral(", ")))
                              .arg(dataset.planes.size())
                              .arg(first.width)
                              .arg(first.height)
                              .arg(f.bitsPerSample)
                              .arg(f.floatingPoint ? tr(" float") : QString()));
    }
    refresh();
    const int generation = ++m_generation;
    QtConcurrent::run([dataset] {
        Pictures pictures;
        pictures.statistics = stackStatistics(dataset);
        const QRect region = commonRegion(dataset);
        for (const DatasetPlane& plane : dataset.planes)
            pictures.thumbnails.push_back(thumbnail(plane.raw, kThumbnail, region));
        return pictures;
    }).then(this, [this, generation, propose](Pictures pictures) {
        if (generation != m_generation)
            return;
        m_statistics = std::move(pictures.statistics);
        {
            const QSignalBlocker block(m_thumbnails);
            for (size_t k = 0; k < pictures.thumbnails.size(); ++k) {
                auto* item = new QListWidgetItem(QIcon(QPixmap::fromImage(pictures.thumbnails[k])), QString(), m_thumbnails);
                item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
                item->setTextAlignment(Qt::AlignHCenter | Qt::AlignTop);
                item->setCheckState(Qt::Unchecked);
            }
        }
        DatasetMetadata m = currentMetadata();
        m_plan = proposeStackPlan(m_statistics, planOptionsFor(m_setup->sessionFor(m_dataset).dataset));
        if (propose && !m_plan.planes.empty()) {
            if (!m.focusPlane && m_plan.focusPlane >= 0) {
                m.focusPlane = m_plan.focusPlane;
                m.origin["focusPlane"] = assumedOrigin(focusPlaneAssumption(m_plan).reason); // as core assumes it
                m_dataset.metadata.focusPlane = m.focusPlane;
                m_dataset.metadata.origin["focusPlane"] = m.origin["focusPlane"];
                m_setup->showMetadataKeepingEdits(m); // what the user typed meanwhile stays the user's
                emit m_setup->metadataChanged();
            }
            m_setup->setPlanesInUse(m_plan.planes); // refreshes through settingsEdited
        }
        refresh();
        if (m_plan.focusPlane >= 0 && m_plan.focusPlane < m_thumbnails->count())
            m_thumbnails->scrollToItem(m_thumbnails->item(m_plan.focusPlane), QAbstractItemView::PositionAtCenter);
        emit ready();
    });
}

DatasetMetadata StackLoadPanel::currentMetadata() const
{
    return m_setup->sessionFor(m_dataset).dataset.metadata;
}

void StackLoadPanel::usePlanes(const std::vector<int>& planes)
{
    if (!planes.empty())
        m_setup->setPlanesInUse(planes);
}

void StackLoadPanel::commit(const Row& row)
{
    DatasetMetadata m = currentMetadata();
    if (row.combo) {
        if (row.key == "zIndexDown")
            m.zIndexDown = row.combo->currentIndex() == 1;
        else
            m.defocusModel = row.combo->currentIndex() == 1 ? DefocusModel::HighNa : DefocusModel::Paraxial;
        m_setup->editMetadata(m, row.key);
        return;
    }
    const QString text = row.edit->text().trimmed();
    std::optional<double> value;
    if (!text.isEmpty()) {
        // Core's verdict on typed text (base/Units.h typedValue): a length needs its unit, "0.1" in the pixel
        // pitch is questioned ("did you mean 0.1um?"), never taken as 0.1 m; every value its plausible range.
        std::string error;
        bool questioned = false;
        if (const auto setting = plausibleRange(row.key)) {
            const TypedValue typed = typedValue(*setting, text.toStdString());
            questioned = typed.verdict == TypedValue::Verdict::Questioned;
            if (typed.verdict == TypedValue::Verdict::Taken)
                value = typed.value;
            else
                error = typed.message;
        } else { // the focus plane: a plain number
            const auto parsed = valueFromText(text.toStdString());
            if (parsed && parsed->kind == ValueWithUnit::Kind::Bare)
                value = parsed->value;
            else
                error = tr("'%1' is not a number").arg(text).toStdString();
        }
        if (!error.empty()) {
            // Not taken: the setup panel's fields hold only values core accepts; Start waits until it is corrected.
            m_rejected[row.key] = {row.setting, -1, {}, MessageLevel::Error, error};
            if (questioned)
                m_questioned.insert(row.key);
            else
                m_questioned.erase(row.key);
            refresh();
            return;
        }
    }
    m_questioned.erase(row.key);
    m_rejected.erase(row.key);
    if (valueOf(m, row.key) == value
        && !std::any_of(m.conflicts.begin(), m.conflicts.end(), [&](const auto& c) { return c.key == row.key; })) {
        refresh(); // unchanged: the value keeps its origin
        return;
    }
    setValue(m, row.key, value);
    m_setup->editMetadata(m, row.key);
}

void StackLoadPanel::choose(const std::string& key, double value)
{
    DatasetMetadata m = currentMetadata();
    setValue(m, key, value);
    m_setup->editMetadata(m, key);
}

void StackLoadPanel::showRow(Row& row, const DatasetMetadata& m)
{
    if (row.combo) {
        const QSignalBlocker block(row.combo);
        row.combo->setCurrentIndex(row.key == "zIndexDown" ? (m.zIndexDown ? 1 : 0) : (m.defocusModel == DefocusModel::HighNa ? 1 : 0));
        row.origin->setText(originText(m, row.key, true));
    } else {
        const std::optional<double> v = valueOf(m, row.key);
        if (!row.edit->hasFocus() && !m_rejected.count(row.key)) // rejected text stays for the user to correct
            row.edit->setText(v ? valueText(row.key, *v) : QString());
        row.origin->setText(originText(m, row.key, v.has_value()));
    }
    // The problems about this setting, or that it would settle (an NA for "NA or f-number").
    QStringList errors, warnings;
    for (const SettingProblem& p : m_problems) {
        const bool own = p.setting == row.setting;
        const bool alternative = std::find(p.alternatives.begin(), p.alternatives.end(), row.setting) != p.alternatives.end();
        if (!own && !(alternative && p.level == MessageLevel::Error))
            continue;
        (p.level == MessageLevel::Error ? errors : warnings) << QString::fromStdString(own ? p.message : "or this: " + p.message);
    }
    const bool ownError = std::any_of(m_problems.begin(), m_problems.end(),
                                      [&](const SettingProblem& p) { return p.setting == row.setting && p.level == MessageLevel::Error; });
    const bool set = row.combo || valueOf(m, row.key).has_value();
    QString status;
    QString colour;
    if (ownError) {
        // Typed text core did not take: a length without its unit is asked about, other text refused.
        status = m_questioned.count(row.key) ? tr("unit?") : (set || m_rejected.count(row.key)) ? tr("invalid") : tr("missing");
        colour = QStringLiteral("#b2182b");
    } else if (!errors.isEmpty()) {
        status = tr("or this");
        colour = QStringLiteral("#b2182b");
    } else if (!warnings.isEmpty()) {
        status = tr("check");
        colour = QStringLiteral("#b35806");
    } else if (set) {
        status = QStringLiteral("✓");
        colour = QStringLiteral("#1a9850");
    }
    // A conflict: both values as choices, none taken silently.
    QLayout* choiceLayout = row.choices->layout();
    while (QLayoutItem* item = choiceLayout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    bool conflict = false;
    for (const DatasetMetadata::Conflict& c : m.conflicts) {
        if (c.key != row.key)
            continue;
        conflict = true;
        status = tr("choose:");
        for (const auto& [value, origin] : {std::pair(c.kept, c.keptOrigin), std::pair(c.other, c.otherOrigin)}) {
            auto* button = new QPushButton(valueText(c.key, value), row.choices);
            button->setObjectName(QStringLiteral("loadChoice_%1").arg(QString::fromStdString(c.key)));
            button->setToolTip(tr("Use %1, from %2").arg(valueText(c.key, value), QString::fromStdString(origin)));
            connect(button, &QPushButton::clicked, this, [this, key = c.key, value = value] { choose(key, value); });
            choiceLayout->addWidget(button);
        }
        break;
    }
    row.choices->setVisible(conflict);
    row.status->setText(status);
    row.status->setStyleSheet(colour.isEmpty() ? QString() : QStringLiteral("color: %1; font-weight: bold").arg(colour));
    row.status->setToolTip((errors + warnings).join(QLatin1Char('\n')));
    if (row.edit)
        row.edit->setStyleSheet(ownError || (!errors.isEmpty() && !set)
                                    ? QStringLiteral("QLineEdit { border: 2px solid #b2182b; border-radius: 3px; }")
                                    : QString());
}

void StackLoadPanel::refresh()
{
    if (m_refreshing)
        return;
    m_refreshing = true;
    // The proposal follows the optics as they are typed (core's spread needs the wavelength and NA for the depth of
    // focus), as long as the planes in use are the proposal's: a choice of the user's stands.
    if (!m_statistics.empty() && !m_plan.planes.empty()) {
        const Dataset before = m_setup->sessionFor(m_dataset).dataset;
        StackPlan plan = proposeStackPlan(m_statistics, planOptionsFor(before));
        const bool proposalInUse = usedPlanes(before) == m_plan.planes;
        if (plan.focusPlane == m_plan.focusPlane && (proposalInUse || plan.planes == m_plan.planes)) {
            const bool changed = plan.planes != m_plan.planes;
            m_plan = std::move(plan);
            if (changed)
                m_setup->setPlanesInUse(m_plan.planes); // its refresh is this one
        }
    }
    {
        // The defocus model the run will assume (core's rule for the optics as typed), shown as assumed here and in the
        // setup panel before the run.
        Dataset assumed = m_setup->sessionFor(m_dataset).dataset;
        assumeDefocusModel(assumed);
        m_setup->showAssumedDefocusModel(assumed.metadata);
    }
    m_problems = m_setup->checkSettings(m_dataset); // also marks the setup panel's fields
    for (const auto& [key, problem] : m_rejected)
        m_problems.insert(m_problems.begin(), problem);
    const Session session = m_setup->sessionFor(m_dataset);
    const Dataset& now = session.dataset;
    const DatasetMetadata& m = now.metadata;
    for (Row& row : m_rows)
        showRow(row, m);

    // Thumbnails: which take part, and each plane's z from the focus plane as the settings stand.
    for (int i = 0; i < m_thumbnails->count() && i < int(now.planes.size()); ++i) {
        QListWidgetItem* item = m_thumbnails->item(i);
        item->setCheckState(now.planes[size_t(i)].use ? Qt::Checked : Qt::Unchecked);
        const PlaneDefocus d = planeDefocus(now, i);
        QString z = tr("z ?");
        if (d.kind == PlaneDefocus::Kind::Length)
            z = tr("z %1").arg(signedLength(d.value));
        else if (d.kind == PlaneDefocus::Kind::Waves)
            z = tr("%1 w").arg(d.value, 0, 'g', 3);
        const bool focus = m.focusPlane && std::lround(*m.focusPlane) == i;
        item->setText(tr("%1%2\n%3").arg(i).arg(focus ? tr(" focus") : QString()).arg(z));
        QFont font = item->font();
        font.setBold(focus);
        item->setFont(font);
        const bool usable = i < int(m_statistics.size()) ? m_statistics[size_t(i)].usable : true;
        item->setToolTip(tr("%1\npeak %2 above the background %3 (noise %4)%5")
                             .arg(QString::fromStdString(now.planes[size_t(i)].raw.source))
                             .arg(i < int(m_statistics.size()) ? m_statistics[size_t(i)].peak : 0.0, 0, 'g', 4)
                             .arg(i < int(m_statistics.size()) ? m_statistics[size_t(i)].background : 0.0, 0, 'g', 4)
                             .arg(i < int(m_statistics.size()) ? m_statistics[size_t(i)].noise : 0.0, 0, 'g', 3)
                             .arg(usable ? QString() : tr("\nholds no usable data")));
    }

    // The proposal in words.
    if (!m_statistics.empty()) {
        QStringList offsets;
        for (size_t k = 0; k < m_plan.planes.size(); ++k) {
            const PlaneDefocus d = planeDefocus(now, m_plan.planes[k]);
            offsets << (d.kind == PlaneDefocus::Kind::Length ? signedLength(d.value) : QStringLiteral("%1").arg(m_plan.offsetSteps[k]));
        }
        const bool inUse = usedPlanes(now) == m_plan.planes;
        m_proposal->setText(tr("Proposed: planes %1 — %2. z from focus: %3%4")
                                .arg([&] {
                                    QStringList list;
                                    for (int p : m_plan.planes)
                                        list << QString::number(p);
                                    return list.join(QStringLiteral(", "));
                                }())
                                .arg(QString::fromStdString(m_plan.reason))
                                .arg(offsets.join(QStringLiteral(", ")))
                                .arg(inUse ? tr(" (in use)") : QString()));
        m_useProposal->setEnabled(!inUse && !m_plan.planes.empty());
    }

    m_problemList->clear();
    int errors = 0;
    for (const SettingProblem& p : m_problems) {
        auto* item = new QListWidgetItem(QString::fromStdString(p.setting + ": " + p.message), m_problemList);
        item->setForeground(p.level == MessageLevel::Error ? QColor(0xb2, 0x18, 0x2b) : QColor(0xb3, 0x58, 0x06));
        errors += p.level == MessageLevel::Error ? 1 : 0;
    }
    m_problemList->setVisible(!m_problems.empty());
    m_start->setEnabled(errors == 0);
    m_summary->setText(errors > 0 ? tr("%n setting(s) missing or invalid: Start waits for them.", nullptr, errors)
                                  : tr("Ready: %n plane(s) take part.", nullptr, int(usedPlanes(now).size())));
    m_summary->setStyleSheet(errors > 0 ? QStringLiteral("color: #b2182b") : QStringLiteral("color: #1a9850"));
    m_refreshing = false;
}

bool StackLoadPanel::showsFilesOf(const Dataset& dataset) const
{
    if (dataset.files.size() != m_dataset.files.size())
        return false;
    for (size_t k = 0; k < dataset.files.size(); ++k)
        if (dataset.files[k].path != m_dataset.files[k].path || dataset.files[k].sha256 != m_dataset.files[k].sha256)
            return false;
    return true;
}

int StackLoadPanel::thumbnailCount() const
{
    return m_thumbnails->count();
}

bool StackLoadPanel::canStart() const
{
    return m_start->isEnabled();
}

QString StackLoadPanel::thumbnailText(int plane) const
{
    return plane >= 0 && plane < m_thumbnails->count() ? m_thumbnails->item(plane)->text() : QString();
}

StackLoadPanel* loadStepOf(QMainWindow* window)
{
    return window->findChild<StackLoadPanel*>(QStringLiteral("loadStep"));
}

void showLoadStep(QMainWindow* window, SetupPanel* setup, const Dataset& dataset, bool propose)
{
    auto* tabs = window->findChild<QTabWidget*>(QStringLiteral("mainTabs"));
    StackLoadPanel* step = loadStepOf(window);
    if (!propose || !tabs) {
        if (step && tabs)
            tabs->removeTab(tabs->indexOf(step));
        delete step;
        setup->checkSettings(dataset);
        return;
    }
    if (!step) {
        step = new StackLoadPanel(setup, tabs);
        step->setProperty("tabKey", QStringLiteral("load"));
        tabs->insertTab(0, step, QObject::tr("Load"));
        // The step follows the data: another data set (a session, the demo) replaces what it shows.
        if (auto* main = qobject_cast<MainWindow*>(window))
            QObject::connect(main, &MainWindow::dataLoaded, step, [main, step, tabs] {
                // Other data (a session, the demo) than the step shows: it has nothing to say about them.
                if (!step->showsFilesOf(main->dataset())) {
                    tabs->removeTab(tabs->indexOf(step));
                    step->deleteLater();
                }
            });
        QObject::connect(setup, &SetupPanel::startRequested, step, [tabs] {
            for (int i = 0; i < tabs->count(); ++i)
                if (tabs->widget(i)->property("tabKey").toString() == QLatin1String("phase"))
                    tabs->setCurrentIndex(i);
        });
    }
    step->setDataset(dataset, propose);
    tabs->setCurrentWidget(step);
}

} // namespace wfs::ui
