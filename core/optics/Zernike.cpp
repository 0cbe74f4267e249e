#include "optics/Zernike.h"

#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace wfs::zernike {

int termCount(int maxOrder)
{
    return (maxOrder + 1) * (maxOrder + 2) / 2;
}

int firstIndex(ZernikeOrdering ordering)
{
    return ordering == ZernikeOrdering::Noll ? 1 : 0;
}

namespace {
void checkMode(ZernikeMode mode)
{
    if (mode.n < 0 || std::abs(mode.m) > mode.n || (mode.n - std::abs(mode.m)) % 2 != 0)
        throw std::invalid_argument("invalid Zernike mode (n=" + std::to_string(mode.n) + ", m=" + std::to_string(mode.m) + ")");
}

// Noll's rule: within radial order n, modes go by increasing |m|; a cosine/sine pair takes two
// consecutive indices and the even one is the cosine (m > 0).
ZernikeMode nollMode(int j)
{
    int n = 0;
    while (termCount(n) < j)
        ++n;
    int index = termCount(n - 1) + 1; // first Noll index of order n (termCount(-1) = 0)
    for (int am = n % 2; am <= n; am += 2) {
        if (am == 0) {
            if (index == j)
                return {n, 0};
            ++index;
        } else {
            if (j == index || j == index + 1)
                return {n, (j % 2 == 0) ? am : -am};
            index += 2;
        }
    }
    throw std::logic_error("Noll index enumeration failed");
}
} // namespace

ZernikeMode modeFromIndex(int index, ZernikeOrdering ordering)
{
    if (ordering == ZernikeOrdering::Noll) {
        if (index < 1)
            throw std::invalid_argument("Noll index must be >= 1, got " + std::to_string(index));
        return nollMode(index);
    }
    if (index < 0)
        throw std::invalid_argument("ANSI index must be >= 0, got " + std::to_string(index));
    int n = 0;
    while (termCount(n) <= index)
        ++n;
    const int m = 2 * index - n * (n + 2);
    return {n, m};
}

int indexFromMode(ZernikeMode mode, ZernikeOrdering ordering)
{
    checkMode(mode);
    if (ordering == ZernikeOrdering::Ansi)
        return (mode.n * (mode.n + 2) + mode.m) / 2;
    int index = termCount(mode.n - 1) + 1;
    const int target = std::abs(mode.m);
    for (int am = mode.n % 2; am < target; am += 2)
        index += (am == 0) ? 1 : 2;
    if (target == 0)
        return index;
    const bool wantEven = mode.m > 0;
    return ((index % 2 == 0) == wantEven) ? index : index + 1;
}

int convertIndex(int index, ZernikeOrdering from, ZernikeOrdering to)
{
    return indexFromMode(modeFromIndex(index, from), to);
}

std::vector<ZernikeMode> modes(int maxOrder, ZernikeOrdering ordering)
{
    std::vector<ZernikeMode> result;
    const int count = termCount(maxOrder);
    result.reserve(size_t(count));
    const int first = firstIndex(ordering);
    for (int i = 0; i < count; ++i)
        result.push_back(modeFromIndex(first + i, ordering));
    return result;
}

std::string name(ZernikeMode mode)
{
    struct Named {
        int n, m;
        const char* name;
    };
    static const Named names[] = {
        {0, 0, "Piston"},
        {1, 1, "Tilt X"},
        {1, -1, "Tilt Y"},
        {2, 0, "Defocus"},
        {2, -2, "Oblique astigmatism"},
        {2, 2, "Vertical astigmatism"},
        {3, -1, "Vertical coma"},
        {3, 1, "Horizontal coma"},
        {3, -3, "Vertical trefoil"},
        {3, 3, "Oblique trefoil"},
        {4, 0, "Primary spherical"},
        {4, 2, "Vertical secondary astigmatism"},
        {4, -2, "Oblique secondary astigmatism"},
        {4, 4, "Vertical quadrafoil"},
        {4, -4, "Oblique quadrafoil"},
        {5, 1, "Horizontal secondary coma"},
        {5, -1, "Vertical secondary coma"},
        {6, 0, "Secondary spherical"},
        {8, 0, "Tertiary spherical"},
    };
    for (const Named& entry : names)
        if (entry.n == mode.n && entry.m == mode.m)
            return entry.name;
    return "Z(" + std::to_string(mode.n) + "," + std::to_string(mode.m) + ")";
}

std::string orderError(int order)
{
    if (order >= 1 && order <= kMaxOrder)
        return {};
    return "must be between 1 and " + std::to_string(kMaxOrder) + " (got " + std::to_string(order) + ")";
}

const char* orderingName(ZernikeOrdering ordering)
{
    return ordering == ZernikeOrdering::Noll ? "noll" : "ansi";
}

const char* normalizationName(ZernikeNormalization norm)
{
    return norm == ZernikeNormalization::Rms ? "rms" : "unit";
}

double normalizationFactor(ZernikeMode mode, ZernikeNormalization norm)
{
    if (norm == ZernikeNormalization::Unit)
        return 1.0;
    return mode.m == 0 ? std::sqrt(double(mode.n + 1)) : std::sqrt(2.0 * (mode.n + 1));
}

namespace {
// The coefficient of r^(n - 2s) in R_n^|m|: (-1)^s (n-s)! / (s! ((n+|m|)/2-s)! ((n-|m|)/2-s)!). Exact
// integers; n <= 15 keeps the factorials within double range and the cancellation harmless for r <= 1.
double radialCoefficient(int n, int absM, int s)
{
    auto factorial = [](int k) {
        double f = 1;
        for (int i = 2; i <= k; ++i)
            f *= i;
        return f;
    };
    const double c = factorial(n - s) / (factorial(s) * factorial((n + absM) / 2 - s) * factorial((n - absM) / 2 - s));
    return (s % 2) ? -c : c;
}
} // namespace

double radial(int n, int absM, double r)
{
    double sum = 0;
    for (int s = 0; s <= (n - absM) / 2; ++s)
        sum += radialCoefficient(n, absM, s) * std::pow(r, n - 2 * s);
    return sum;
}

double evaluate(ZernikeMode mode, ZernikeNormalization norm, double r, double theta)
{
    const int am = std::abs(mode.m);
    double value = radial(mode.n, am, r) * normalizationFactor(mode, norm);
    if (mode.m > 0)
        value *= std::cos(am * theta);
    else if (mode.m < 0)
        value *= std::sin(am * theta);
    return value;
}

void evaluateBasis(const std::vector<ZernikeMode>& modes, ZernikeNormalization norm, const double* x, const double* y, size_t count,
                   double* out)
{
    struct Term {
        double coefficient;
        int power;
    };
    int maxOrder = 0;
    std::vector<std::vector<Term>> radialTerms(modes.size());
    for (size_t t = 0; t < modes.size(); ++t) {
        const ZernikeMode mode = modes[t];
        checkMode(mode);
        maxOrder = std::max(maxOrder, mode.n);
        const int am = std::abs(mode.m);
        // The terms of radial(), with the normalisation folded in.
        for (int s = 0; s <= (mode.n - am) / 2; ++s)
            radialTerms[t].push_back({radialCoefficient(mode.n, am, s) * normalizationFactor(mode, norm), mode.n - 2 * s});
    }
    std::vector<double> powers(size_t(maxOrder) + 1), cosines(size_t(maxOrder) + 1), sines(size_t(maxOrder) + 1);
    for (size_t p = 0; p < count; ++p) {
        const double r = std::hypot(x[p], y[p]);
        const double theta = std::atan2(y[p], x[p]);
        powers[0] = 1.0;
        for (int k = 1; k <= maxOrder; ++k)
            powers[size_t(k)] = powers[size_t(k - 1)] * r;
        for (int k = 0; k <= maxOrder; ++k) {
            cosines[size_t(k)] = std::cos(k * theta);
            sines[size_t(k)] = std::sin(k * theta);
        }
        for (size_t t = 0; t < modes.size(); ++t) {
            double radialValue = 0.0;
            for (const Term& term : radialTerms[t])
                radialValue += term.coefficient * powers[size_t(term.power)];
            const int m = modes[t].m;
            const double angular = m > 0 ? cosines[size_t(m)] : m < 0 ? sines[size_t(-m)] : 1.0;
            out[p + t * count] = radialValue * angular;
        }
    }
}

} // namespace wfs::zernike
