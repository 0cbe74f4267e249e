#pragma once
// What every part of wfs-device-check shares: small numeric and text helpers, the tally every case
// reports to, the options of the benchmark commands, and what the device probe says.
#include "gpu/GpuDevice.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace wfs::devicecheck {

inline double maxAbs(const std::vector<double>& v)
{
    double m = 0.0;
    for (double x : v)
        m = std::max(m, std::abs(x));
    return m;
}

// Largest |a_i - b_i| / scale; NaN anywhere counts as infinitely wrong.
template <typename A>
inline double maxError(const std::vector<A>& a, const std::vector<double>& b, double scale)
{
    if (a.size() != b.size())
        return std::numeric_limits<double>::infinity();
    double e = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = std::abs(double(a[i]) - b[i]);
        if (!(d == d))
            return std::numeric_limits<double>::infinity();
        e = std::max(e, d / scale);
    }
    return e;
}

inline std::string sci(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2e", v);
    return text;
}

inline std::vector<int> intList(const std::string& text)
{
    std::vector<int> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        out.push_back(std::stoi(item));
    return out;
}

inline std::vector<std::string> wordList(const std::string& text)
{
    std::vector<std::string> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ','))
        out.push_back(item);
    return out;
}

inline double seconds(std::chrono::steady_clock::time_point since)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

inline double median(std::vector<double> v)
{
    if (v.empty())
        return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

inline double quantile(std::vector<double> v, double q)
{
    if (v.empty())
        return std::numeric_limits<double>::quiet_NaN();
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, std::size_t(q * double(v.size() - 1) + 0.5))];
}

inline std::string jsonString(const std::string& s)
{
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out += c;
    }
    return out + "\"";
}

inline std::string jsonNumber(double v)
{
    if (!std::isfinite(v))
        return "null";
    char text[40];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}

// ---- the tally every case reports to ----

class Tally {
public:
    void pass(const std::string& name, const std::string& detail = {}) { line("PASS", name, detail), ++m_passed; }
    void fail(const std::string& name, const std::string& why) { line("FAIL", name, why), ++m_failed; }
    void skip(const std::string& name, const std::string& why) { line("SKIP", name, why), ++m_skipped; }
    // Runs a case; an exception is a failure naming it (a CudaError names the call, file and line).
    void run(const std::string& name, const std::function<std::string()>& body)
    {
        try {
            const std::string failure = body();
            if (failure.empty())
                pass(name, m_detail);
            else
                fail(name, failure);
        } catch (const std::exception& e) {
            fail(name, std::string("exception: ") + e.what());
        }
        m_detail.clear();
    }
    void detail(const std::string& text) { m_detail = text; }
    int passed() const { return m_passed; }
    int failed() const { return m_failed; }
    int skipped() const { return m_skipped; }

private:
    static void line(const char* what, const std::string& name, const std::string& detail)
    {
        std::printf("%s %s%s%s\n", what, name.c_str(), detail.empty() ? "" : ": ", detail.c_str());
        std::fflush(stdout);
    }
    int m_passed = 0, m_failed = 0, m_skipped = 0;
    std::string m_detail;
};

// Options of the benchmark commands: --key value pairs.
struct Options {
    std::map<std::string, std::string> values;
    std::string get(const std::string& key, const std::string& fallback) const
    {
        const auto it = values.find(key);
        return it == values.end() ? fallback : it->second;
    }
};

// Empty when a device is usable; otherwise why not ("no device" at least).
inline std::string deviceProblem()
{
    const gpu::DeviceProbe probe = gpu::probeDevices();
    if (probe.status == gpu::DeviceProbe::Status::Ok)
        return {};
    return probe.message.empty() ? std::string("no device") : probe.message;
}

inline std::string deviceName()
{
    const gpu::DeviceProbe probe = gpu::probeDevices();
    return probe.status == gpu::DeviceProbe::Status::Ok ? probe.devices.front().name : std::string();
}

} // namespace wfs::devicecheck
