#pragma once
// The device check's reference files: what `wavefront-cli device-reference --out DIR` (the CPU backend,
// FFTW and Eigen) writes and what the GPU-only harness (wfs-device-check) reads on a machine that has
// neither. Plain C++17, header-only, no Qt, so that both builds include the same definition.
//
// A folder holds index.txt and one .bin file per case. index.txt: one case per line,
//   <kind> <name> <file>        kind = model | fasth; '#' starts a comment line
// A .bin file: the 8 bytes "WFSREF1\n", then records until the end of the file, each
//   uint32 name length, the name (ASCII), uint8 type (1 = float64, 2 = int32, 3 = text bytes),
//   uint64 count, then count values (little-endian, as written by an x86-64 or arm64 host)
// and last a record "end" (int32, count 1) holding the number of records before it, so that a truncated
// file is refused. The records of each kind of case are listed in device-check/README.md.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace wfs::devicecheck {

inline constexpr char kReferenceMagic[9] = "WFSREF1\n";

enum class RecordType : std::uint8_t { Float64 = 1, Int32 = 2, Text = 3 };

class ReferenceWriter {
public:
    explicit ReferenceWriter(const std::string& path)
        : m_path(path)
        , m_out(path, std::ios::binary | std::ios::trunc)
    {
        if (!m_out)
            throw std::runtime_error("cannot write " + path);
        m_out.write(kReferenceMagic, 8);
    }
    void put(const std::string& name, const std::vector<double>& values)
    {
        record(name, RecordType::Float64, values.data(), values.size(), 8);
    }
    void put(const std::string& name, const std::vector<int>& values)
    {
        std::vector<std::int32_t> v(values.begin(), values.end());
        record(name, RecordType::Int32, v.data(), v.size(), 4);
    }
    void putText(const std::string& name, const std::string& text) { record(name, RecordType::Text, text.data(), text.size(), 1); }
    // Writes the closing record and flushes; throws if any write failed.
    void finish()
    {
        const std::int32_t count = std::int32_t(m_records);
        record("end", RecordType::Int32, &count, 1, 4);
        m_out.close();
        if (!m_out)
            throw std::runtime_error("writing " + m_path + " failed");
    }

private:
    void record(const std::string& name, RecordType type, const void* data, std::size_t count, std::size_t size)
    {
        const std::uint32_t length = std::uint32_t(name.size());
        const std::uint8_t t = std::uint8_t(type);
        const std::uint64_t n = count;
        m_out.write(reinterpret_cast<const char*>(&length), 4);
        m_out.write(name.data(), std::streamsize(name.size()));
        m_out.write(reinterpret_cast<const char*>(&t), 1);
        m_out.write(reinterpret_cast<const char*>(&n), 8);
        if (count > 0)
            m_out.write(static_cast<const char*>(data), std::streamsize(count * size));
        if (!m_out)
            throw std::runtime_error("writing " + m_path + " failed at record " + name);
        ++m_records;
    }

    std::string m_path;
    std::ofstream m_out;
    std::size_t m_records = 0;
};

class ReferenceFile {
public:
    // Reads and checks the whole file; throws std::runtime_error naming the file and the problem.
    explicit ReferenceFile(const std::string& path)
        : m_path(path)
    {
        std::ifstream in(path, std::ios::binary);
        if (!in)
            throw std::runtime_error(path + ": cannot open");
        char magic[8];
        if (!in.read(magic, 8) || std::memcmp(magic, kReferenceMagic, 8) != 0)
            throw std::runtime_error(path + ": not a reference file (bad magic)");
        std::size_t records = 0;
        for (;;) {
            std::uint32_t length = 0;
            if (!in.read(reinterpret_cast<char*>(&length), 4))
                throw std::runtime_error(path + ": truncated (no closing 'end' record after " + std::to_string(records) + " records)");
            if (length == 0 || length > 256)
                throw std::runtime_error(path + ": corrupt record name length " + std::to_string(length));
            std::string name(length, '\0');
            std::uint8_t type = 0;
            std::uint64_t count = 0;
            if (!in.read(name.data(), length) || !in.read(reinterpret_cast<char*>(&type), 1)
                || !in.read(reinterpret_cast<char*>(&count), 8))
                throw std::runtime_error(path + ": truncated record header");
            if (count > (std::uint64_t(1) << 31))
                throw std::runtime_error(path + ": record " + name + " claims " + std::to_string(count) + " values");
            if (type == std::uint8_t(RecordType::Float64)) {
                std::vector<double> v(count);
                if (count && !in.read(reinterpret_cast<char*>(v.data()), std::streamsize(count * 8)))
                    throw std::runtime_error(path + ": record " + name + " truncated");
                m_doubles[name] = std::move(v);
            } else if (type == std::uint8_t(RecordType::Int32)) {
                std::vector<std::int32_t> v(count);
                if (count && !in.read(reinterpret_cast<char*>(v.data()), std::streamsize(count * 4)))
                    throw std::runtime_error(path + ": record " + name + " truncated");
                if (name == "end") {
                    if (count != 1 || std::size_t(v[0]) != records)
                        throw std::runtime_error(path + ": closing record counts " + (count ? std::to_string(v[0]) : "nothing")
                                                 + " records, the file has " + std::to_string(records));
                    if (in.peek() != std::char_traits<char>::eof())
                        throw std::runtime_error(path + ": data after the closing record");
                    return;
                }
                m_ints[name] = std::vector<int>(v.begin(), v.end());
            } else if (type == std::uint8_t(RecordType::Text)) {
                std::string text(count, '\0');
                if (count && !in.read(text.data(), std::streamsize(count)))
                    throw std::runtime_error(path + ": record " + name + " truncated");
                m_texts[name] = std::move(text);
            } else {
                throw std::runtime_error(path + ": record " + name + " has unknown type " + std::to_string(int(type)));
            }
            ++records;
        }
    }

    const std::string& path() const { return m_path; }
    bool has(const std::string& name) const { return m_doubles.count(name) || m_ints.count(name) || m_texts.count(name); }
    // The record's values; throws naming the file if it is missing or, with expected >= 0, has another length.
    const std::vector<double>& doubles(const std::string& name, long long expected = -1) const
    {
        return checked(m_doubles, name, expected, "float64");
    }
    const std::vector<int>& ints(const std::string& name, long long expected = -1) const
    {
        return checked(m_ints, name, expected, "int32");
    }
    std::string text(const std::string& name) const
    {
        const auto it = m_texts.find(name);
        return it == m_texts.end() ? std::string() : it->second;
    }

private:
    template <typename T>
    const std::vector<T>& checked(const std::map<std::string, std::vector<T>>& map, const std::string& name, long long expected,
                                  const char* type) const
    {
        const auto it = map.find(name);
        if (it == map.end())
            throw std::runtime_error(m_path + ": no " + type + " record '" + name + "'");
        if (expected >= 0 && it->second.size() != std::size_t(expected))
            throw std::runtime_error(m_path + ": record '" + name + "' has " + std::to_string(it->second.size()) + " values, expected "
                                     + std::to_string(expected));
        return it->second;
    }

    std::string m_path;
    std::map<std::string, std::vector<double>> m_doubles;
    std::map<std::string, std::vector<int>> m_ints;
    std::map<std::string, std::string> m_texts;
};

struct IndexEntry {
    std::string kind; // model | fasth
    std::string name;
    std::string file; // relative to the folder
};

// Reads DIR/index.txt; throws std::runtime_error when it is missing or malformed.
inline std::vector<IndexEntry> readIndex(const std::string& folder)
{
    const std::string path = folder + "/index.txt";
    std::ifstream in(path);
    if (!in)
        throw std::runtime_error(path + ": cannot open (make the reference data with `wavefront-cli device-reference --out " + folder
                                 + "`)");
    std::vector<IndexEntry> entries;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.empty() || line[0] == '#')
            continue;
        IndexEntry e;
        std::size_t a = line.find(' '), b = a == std::string::npos ? a : line.find(' ', a + 1);
        if (b == std::string::npos)
            throw std::runtime_error(path + ":" + std::to_string(number) + ": expected '<kind> <name> <file>'");
        e.kind = line.substr(0, a);
        e.name = line.substr(a + 1, b - a - 1);
        e.file = line.substr(b + 1);
        if ((e.kind != "model" && e.kind != "fasth") || e.name.empty() || e.file.empty())
            throw std::runtime_error(path + ":" + std::to_string(number) + ": expected '<model|fasth> <name> <file>'");
        entries.push_back(e);
    }
    if (entries.empty())
        throw std::runtime_error(path + ": no cases");
    return entries;
}

} // namespace wfs::devicecheck
