#pragma once
// The setup panel's field helpers, shared by its two halves: SetupPanel.cpp builds the sections,
// SetupPanelValues.cpp reads and writes the settings they show. Widgets only: every value is parsed and checked in core.
#include "fit/PsfAnalysis.h"
#include "settings/ModelSettings.h"
#include "settings/SettingsText.h"
#include "base/Units.h"
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QSignalBlocker>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QThread>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include "ImageView.h"
#include "SetupPanel.h"

namespace wfs::ui::setupfields {

// A spin box whose minimum (0) reads "unknown", for metadata that may be missing; its top is core's plausible range
// (base/Units.h) in the box's unit (SI per `scale`), so a value core accepts (a file's, a session's) is never clipped.
// Between 0 and the range's bottom a value can be typed: core refuses it by name. Qt sizes a spin box by at most 18
// characters of its extreme values, so even the widest range (a wavelength up to 1 m in nm) keeps the box narrow.
inline QDoubleSpinBox* optionalBox(QWidget* parent, Setting setting, double scale, int decimals, const QString& suffix)
{
    auto* box = new QDoubleSpinBox(parent);
    box->setRange(0.0, plausibleRange(setting).hi / scale);
    box->setDecimals(decimals);
    box->setSpecialValueText(QObject::tr("unknown"));
    box->setSuffix(suffix);
    box->setKeyboardTracking(false);
    return box;
}

inline void setOptional(QDoubleSpinBox* box, const std::optional<double>& value, double scale)
{
    const QSignalBlocker block(box);
    box->setValue(value ? *value / scale : 0.0);
}

inline std::optional<double> optionalValue(const QDoubleSpinBox* box, double scale)
{
    return box->value() > 0.0 ? std::optional<double>(box->value() * scale) : std::nullopt;
}

inline QString defocusText(const PlaneDefocus& d)
{
    switch (d.kind) {
    case PlaneDefocus::Kind::Waves:
        return QStringLiteral("%1w").arg(d.value);
    case PlaneDefocus::Kind::Length:
        return QStringLiteral("%1um").arg(d.value * 1e6);
    case PlaneDefocus::Kind::Unknown:
        break;
    }
    return {};
}

// The PSF's core, not the whole frame: a compact PSF would be one dot in a 40-pixel picture.
inline QImage planeThumbnail(const Image& image)
{
    const PixelBox box = fluxBox(image, 0.99);
    return thumbnail(image, 40, box.isEmpty() ? QRect() : QRect(box.col, box.row, box.width, box.height));
}

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The last value a box with `decimals` decimals shows below `limit`, a limit core refuses itself (settings/ModelSettings.h).
inline double lastShownBelow(double limit, int decimals)
{
    const double scale = std::pow(10.0, decimals);
    return (std::round(limit * scale) - 1.0) / scale;
}

// A plain number typed by the user, read by core's parser (base/Units.h); `empty` for an empty field, NaN
// when the text is not a number (the workflow's checks then refuse it by name).
inline double numberFromText(const QLineEdit* edit, double empty)
{
    const QString text = edit->text().trimmed();
    if (text.isEmpty())
        return empty;
    const auto v = valueFromText(text.toStdString());
    return v && v->kind == ValueWithUnit::Kind::Bare ? v->value : kNaN;
}

// Object diameter: a length with its unit, read by core (a bare number is metres); empty = 0 (a point).
inline double diameterFromText(const QLineEdit* edit)
{
    const QString text = edit->text().trimmed();
    if (text.isEmpty())
        return 0.0;
    return lengthFromText(text.toStdString()).value_or(kNaN);
}

// A length with its unit (a bare number is metres), read by core; `empty` for an empty field, NaN when it is no length.
inline double lengthOrDefault(const QLineEdit* edit, double empty)
{
    const QString text = edit->text().trimmed();
    if (text.isEmpty())
        return empty;
    return lengthFromText(text.toStdString()).value_or(kNaN);
}

// An index box whose minimum (0) reads `zeroText` (ModelSettings: 0 = the immersion's), its top from core's
// plausible range (base/Units.h). Values between 0 and the range's bottom can be typed: core refuses them by name.
inline QDoubleSpinBox* indexBox(QWidget* parent, Setting setting, const QString& zeroText)
{
    auto* box = new QDoubleSpinBox(parent);
    box->setRange(0.0, plausibleRange(setting).hi);
    box->setDecimals(3);
    box->setSingleStep(0.01);
    box->setSpecialValueText(zeroText);
    box->setKeyboardTracking(false);
    return box;
}

// The dipole as the command line writes it (core's dipoleFromText reads it back): free, x, y, z or THETA,PHI in degrees.
inline QString dipoleOptionText(const DipoleSpec& d)
{
    if (d.free)
        return QStringLiteral("free");
    for (const char* axis : {"x", "y", "z"})
        if (dipoleFromText(axis) == d)
            return QString::fromLatin1(axis);
    // 12 digits: what was typed reads back as typed (30, not 29.999999999999996).
    return QStringLiteral("%1,%2").arg(d.theta * 180.0 / M_PI, 0, 'g', 12).arg(d.phi * 180.0 / M_PI, 0, 'g', 12);
}

// The fields whose value core may estimate (gain, smoothness weight, offset) accept "auto".
inline bool isAuto(const QLineEdit* edit)
{
    return edit->text().trimmed().compare(QLatin1String("auto"), Qt::CaseInsensitive) == 0;
}

// Camera gain: "auto" = 0 (photon transfer), empty = the default (a count is a photon).
inline double gainFromText(const QLineEdit* edit)
{
    if (isAuto(edit))
        return 0.0;
    return numberFromText(edit, ModelSettings{}.gain);
}

// The smoothness weight: "auto" is 0 (core's sweep chooses it), else a number (NaN when the text holds none).
inline double regularizationFromText(const QLineEdit* edit)
{
    if (isAuto(edit))
        return 0.0;
    return numberFromText(edit, ModelSettings{}.regularization);
}

inline QString numberText(double v)
{
    return std::isfinite(v) ? QString::number(v, 'g', 10) : QString();
}

inline QString lengthText(double metres)
{
    if (!(metres > 0.0))
        return {};
    return metres < 1e-6 ? QStringLiteral("%1 nm").arg(metres * 1e9, 0, 'g', 10) : QStringLiteral("%1 µm").arg(metres * 1e6, 0, 'g', 10);
}

inline double parseTolerance(const QLineEdit* edit, double fallback)
{
    bool ok = false;
    const double v = edit->text().toDouble(&ok);
    return ok && v >= 0.0 ? v : fallback;
}

} // namespace wfs::ui::setupfields
