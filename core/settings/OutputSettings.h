#pragma once
// How results are written: the phase's unit and the phase map's FITS options.
namespace wfs {

enum class PhaseUnit { Waves, Nanometres, Radians };
const char* phaseUnitName(PhaseUnit unit); // "waves", "nm", "rad"

struct PhaseFitsOptions {
    bool float32 = false;
    PhaseUnit unit = PhaseUnit::Radians;
    bool overwrite = false;
};

} // namespace wfs
