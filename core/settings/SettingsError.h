#pragma once
// A setting out of its range. `setting()` is its name as the command line spells it ("order", "stages",
// "threads"), so each front end can point at its own control; what() is "<setting>: <problem>".
#include <stdexcept>
#include <string>
#include <utility>

namespace wfs {

class SettingsError : public std::invalid_argument {
public:
    SettingsError(std::string setting, std::string problem)
        : std::invalid_argument(setting + ": " + problem)
        , m_setting(std::move(setting))
        , m_problem(std::move(problem))
    {
    }
    const std::string& setting() const { return m_setting; }
    const std::string& problem() const { return m_problem; }

private:
    std::string m_setting;
    std::string m_problem;
};

namespace detail {
// Ceres' IsValid(std::string*) from a settings group's first error: `why` gets "<setting>: <problem>".
template <typename Error>
bool validFrom(const Error& error, std::string* why)
{
    if (error && why)
        *why = error->what();
    return !error;
}
} // namespace detail

} // namespace wfs
