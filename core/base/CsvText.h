#pragma once
// The text rule of every CSV table the programs write (coefficients, batch summary, live trend, FastH sweep,
// speed-up lab; the PSF analysis holds numbers only): one header row, then one record per line, fields separated by
// commas. A text field is written as it is, or quoted (RFC 4180: quotes doubled) when it holds a comma, a quote or a
// line break; line breaks become spaces, so that a record stays one line for line-based tools (grep, wc -l, a
// follower of a growing live table). Each table formats its own numbers (their digits are its contract).
#include <string>

namespace wfs {

// `text` always quoted: for a column whose readers expect quotes (the coefficient table's names, the lab's methods).
inline std::string csvQuoted(const std::string& text)
{
    std::string quoted = "\"";
    for (char c : text) {
        if (c == '"')
            quoted += '"';
        quoted += (c == '\n' || c == '\r') ? ' ' : c;
    }
    return quoted + "\"";
}

// `text` as one CSV field: as it is, or quoted where it must be.
inline std::string csvField(const std::string& text)
{
    if (text.find_first_of(",\"\n\r") == std::string::npos)
        return text;
    return csvQuoted(text);
}

} // namespace wfs
