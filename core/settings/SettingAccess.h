#pragma once
// A setting's typed accessor: where its value lives among a run's settings, of which type, and the words it
// accepts. The settings table (settings/SettingsTable.h) gives one per session key, and the session file is read
// and written through them (io/Session.cpp), so a setting's field is named once, as a member pointer, not
// mirrored key by key.
//
//   const SettingAccess order = fieldAccess<&ModelSettings::order>();
//   order.get(settings)                -> SettingValue{4}
//   order.set(settings, SettingValue{6})   // settings.model.order == 6
#include "settings/MetadataSettings.h"
#include "settings/ModelSettings.h"
#include "settings/PreparationSettings.h"
#include "settings/SettingsText.h"
#include "settings/SolverSettings.h"

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace wfs {

// The four structs a run's settings live in; every setting of the table fills a field of one of them.
struct SettingsBundle {
    DatasetMetadata metadata;
    PreprocessOptions preprocess;
    ModelSettings model;
    SolverSettings solver;
};

// A setting's value, whatever its type: unset (std::monostate: "auto", or left to the files), a switch, a whole
// number, a number in the setting's SI unit, a word (of its list, or free text), or a list of whole numbers.
using SettingValue = std::variant<std::monostate, bool, int, double, std::string, std::vector<int>>;

enum class SettingType { Boolean, Integer, Number, Word, Text, Integers };
// Which of SettingsBundle's structs holds the field.
enum class SettingPart { Metadata, Preprocess, Model, Solver };

struct SettingAccess {
    SettingType type = SettingType::Number;
    bool canBeUnset = false;         // an optional field: unset is written as `unsetWord`, or as null without one
    const char* unsetWord = nullptr; // "auto" where a session writes unset as a word
    SettingPart part = SettingPart::Model;
    std::vector<std::string> (*words)() = nullptr; // a Word's accepted words, in the order front ends list them
    // A Word's command-line spellings in the command line's order, each with the word it stands for ("weighted" for
    // "weighted-least-squares"); nullptr: the words themselves, in their order.
    std::vector<std::pair<std::string, std::string>> (*optionWords)() = nullptr;
    SettingValue (*get)(const SettingsBundle&) = nullptr;
    // `value` holds the setting's type (std::monostate where it can be unset); a word is one of `words`.
    void (*set)(SettingsBundle&, const SettingValue&) = nullptr;
    explicit operator bool() const { return get != nullptr; }
};

namespace detail {

template <typename M>
struct MemberOf;
template <typename S, typename T>
struct MemberOf<T S::*> {
    using Struct = S;
};

template <typename S>
constexpr SettingPart settingPartOf()
{
    if constexpr (std::is_same_v<S, DatasetMetadata>)
        return SettingPart::Metadata;
    else if constexpr (std::is_same_v<S, PreprocessOptions>)
        return SettingPart::Preprocess;
    else if constexpr (std::is_same_v<S, ModelSettings>)
        return SettingPart::Model;
    else
        return SettingPart::Solver;
}

template <typename S, typename Bundle>
auto& settingsPart(Bundle& b)
{
    if constexpr (std::is_same_v<S, DatasetMetadata>)
        return b.metadata;
    else if constexpr (std::is_same_v<S, PreprocessOptions>)
        return b.preprocess;
    else if constexpr (std::is_same_v<S, ModelSettings>)
        return b.model;
    else {
        static_assert(std::is_same_v<S, SolverSettings>, "a setting lives in one of SettingsBundle's structs");
        return b.solver;
    }
}

// A member, or a member of a member (&ModelSettings::dipole, &DipoleSpec::free), of `object`.
template <auto Member, auto... Rest, typename Object>
decltype(auto) follow(Object& object)
{
    if constexpr (sizeof...(Rest) == 0)
        return (object.*Member);
    else
        return follow<Rest...>(object.*Member);
}

template <typename T>
struct IsOptional : std::false_type {
};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {
    using Value = T;
};

template <typename T>
constexpr SettingType settingTypeOf()
{
    if constexpr (IsOptional<T>::value)
        return settingTypeOf<typename IsOptional<T>::Value>();
    else if constexpr (std::is_same_v<T, bool>)
        return SettingType::Boolean;
    else if constexpr (std::is_same_v<T, int>)
        return SettingType::Integer;
    else if constexpr (std::is_same_v<T, double>)
        return SettingType::Number;
    else if constexpr (std::is_enum_v<T>)
        return SettingType::Word;
    else if constexpr (std::is_same_v<T, std::string>)
        return SettingType::Text;
    else {
        static_assert(std::is_same_v<T, std::vector<int>>, "a setting's field is bool, int, double, an enum, text or a list of int");
        return SettingType::Integers;
    }
}

template <typename T>
SettingValue toSettingValue(const T& field)
{
    if constexpr (IsOptional<T>::value)
        return field ? toSettingValue(*field) : SettingValue{};
    else if constexpr (std::is_enum_v<T>)
        return std::string(settingText(field));
    else
        return SettingValue{field};
}

template <typename T>
void fromSettingValue(T& field, const SettingValue& value)
{
    if constexpr (IsOptional<T>::value) {
        if (std::holds_alternative<std::monostate>(value)) {
            field.reset();
        } else {
            typename IsOptional<T>::Value v{};
            fromSettingValue(v, value);
            field = v;
        }
    } else if constexpr (std::is_enum_v<T>) {
        field = settingFromText<T>(std::get<std::string>(value)).value();
    } else {
        field = std::get<T>(value);
    }
}

template <typename E>
std::vector<std::pair<std::string, std::string>> optionWordPairs()
{
    std::vector<std::pair<std::string, std::string>> pairs;
    for (E value : optionValues<E>())
        pairs.emplace_back(optionText(value), settingText(value));
    return pairs;
}

template <typename T>
constexpr auto optionWordsOf()
{
    if constexpr (IsOptional<T>::value)
        return optionWordsOf<typename IsOptional<T>::Value>();
    else if constexpr (std::is_enum_v<T>)
        return &optionWordPairs<T>;
    else
        return static_cast<std::vector<std::pair<std::string, std::string>> (*)()>(nullptr);
}

template <typename T>
constexpr auto wordsOf()
{
    if constexpr (IsOptional<T>::value)
        return wordsOf<typename IsOptional<T>::Value>();
    else if constexpr (std::is_enum_v<T>)
        return &settingTexts<T>;
    else
        return static_cast<std::vector<std::string> (*)()>(nullptr);
}

} // namespace detail

// A word setting's words as the command line and the desktop's lists show them, in their order: each as
// (command-line spelling, session word); the spellings are `optionWords`' where it has them, else the words.
std::vector<std::pair<std::string, std::string>> listedWords(const SettingAccess& access);

// A value as text, by the session file's rules: "true" or "false", whole numbers, numbers in their shortest exact
// form, a word, "2,4,6", and for unset the unset word (or ""). The desktop's saved preferences are kept so.
std::string settingValueText(const SettingAccess& access, const SettingValue& value);
// The value `text` stands for, by the same rules; nullopt where the setting's type cannot take it (a word not in
// its list, "2.5" for a whole number). Ranges are the settings' checks' (settings/*.h firstError).
std::optional<SettingValue> settingValueFromText(const SettingAccess& access, const std::string& text);

// The accessor of the field at the member path (one member, or a member's member), its type read from the field:
// bool, int, double, a settings enum (its words: settings/SettingsText.h), std::string, std::vector<int>, or
// std::optional of one of them.
template <auto Member, auto... Rest>
SettingAccess fieldAccess(const char* unsetWord = nullptr)
{
    using Struct = typename detail::MemberOf<decltype(Member)>::Struct;
    using Field = std::remove_cvref_t<decltype(detail::follow<Member, Rest...>(std::declval<Struct&>()))>;
    SettingAccess access;
    access.type = detail::settingTypeOf<Field>();
    access.canBeUnset = detail::IsOptional<Field>::value;
    access.unsetWord = unsetWord;
    access.part = detail::settingPartOf<Struct>();
    access.words = detail::wordsOf<Field>();
    access.optionWords = detail::optionWordsOf<Field>();
    access.get = [](const SettingsBundle& b) {
        return detail::toSettingValue(detail::follow<Member, Rest...>(detail::settingsPart<Struct>(b)));
    };
    access.set = [](SettingsBundle& b, const SettingValue& v) {
        detail::fromSettingValue(detail::follow<Member, Rest...>(detail::settingsPart<Struct>(b)), v);
    };
    return access;
}

} // namespace wfs
