#pragma once
// Presentation mode, for teaching from a projector: the window's text 1.5 times larger and every plot's text with it,
// its data lines twice as thick and its markers larger; off again, everything as it was. One mechanism serves every
// plot, those made or restyled later included: before each replot a plot's fonts and pens are set from what its own
// code last gave them (kept on first sight and whenever that code changes them), so no panel needs to know the mode.
class QObject;

namespace wfs::ui {

constexpr double kPresentationTextScale = 1.5;
constexpr double kPresentationLineScale = 2.0;

void setPresentationMode(bool on); // the application's font and every plot shown; replots them
bool presentationMode();

// Applies the mode to every plot of the application before each of its replots; `owner` owns the filter that finds
// the plots as they are shown. Installed once, by the main window.
void installPresentationStyle(QObject* owner);

} // namespace wfs::ui
