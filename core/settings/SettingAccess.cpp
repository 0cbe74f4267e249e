#include "settings/SettingAccess.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

namespace wfs {

namespace {

std::optional<int> wholeNumber(const std::string& text)
{
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

std::optional<double> realNumber(const std::string& text)
{
    double value = 0.0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
        return std::nullopt;
    return value;
}

} // namespace

std::vector<std::pair<std::string, std::string>> listedWords(const SettingAccess& access)
{
    if (access.optionWords)
        return access.optionWords();
    std::vector<std::pair<std::string, std::string>> words;
    for (const std::string& word : access.words())
        words.emplace_back(word, word);
    return words;
}

std::string settingValueText(const SettingAccess& access, const SettingValue& value)
{
    if (std::holds_alternative<std::monostate>(value))
        return access.unsetWord ? access.unsetWord : "";
    if (const bool* b = std::get_if<bool>(&value))
        return *b ? "true" : "false";
    if (const int* i = std::get_if<int>(&value))
        return std::to_string(*i);
    if (const double* d = std::get_if<double>(&value)) {
        char buffer[32];
        const auto result = std::to_chars(buffer, buffer + sizeof buffer, *d); // the shortest text that reads back exactly
        return std::string(buffer, result.ptr);
    }
    if (const std::string* word = std::get_if<std::string>(&value))
        return *word;
    std::string list;
    for (int v : std::get<std::vector<int>>(value)) {
        if (!list.empty())
            list += ',';
        list += std::to_string(v);
    }
    return list;
}

std::optional<SettingValue> settingValueFromText(const SettingAccess& access, const std::string& text)
{
    if (access.canBeUnset && text == (access.unsetWord ? access.unsetWord : ""))
        return SettingValue{};
    switch (access.type) {
    case SettingType::Boolean:
        if (text == "true" || text == "false")
            return SettingValue{text == "true"};
        return std::nullopt;
    case SettingType::Integer:
        if (const auto v = wholeNumber(text))
            return SettingValue{*v};
        return std::nullopt;
    case SettingType::Number:
        if (const auto v = realNumber(text))
            return SettingValue{*v};
        return std::nullopt;
    case SettingType::Word: {
        const std::vector<std::string> words = access.words();
        if (std::find(words.begin(), words.end(), text) != words.end())
            return SettingValue{text};
        return std::nullopt;
    }
    case SettingType::Text:
        return SettingValue{text};
    case SettingType::Integers: {
        std::vector<int> values;
        std::stringstream parts(text);
        for (std::string part; std::getline(parts, part, ',');) {
            const auto v = wholeNumber(part);
            if (!v)
                return std::nullopt;
            values.push_back(*v);
        }
        return SettingValue{values};
    }
    }
    return std::nullopt;
}

} // namespace wfs
