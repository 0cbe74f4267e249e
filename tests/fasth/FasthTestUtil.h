#pragma once
// Helpers shared by the FastH suites: seeded random matrices, LAPACK-layout reflectors and explicit
// tolerance checks (QCOMPARE on floating point uses qFuzzyCompare, which fails near zero).
#include "TestSupport.h"

#include "fasth/Householder.h"

#include <Eigen/QR>

#include <QString>

#include <cmath>
#include <limits>
#include <random>

namespace wfs::fasth::test {

template <typename Scalar>
Matrix<Scalar> gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& generator)
{
    std::normal_distribution<double> normal;
    Matrix<Scalar> matrix(rows, cols);
    for (Eigen::Index i = 0; i < matrix.size(); ++i)
        matrix.data()[i] = Scalar(normal(generator));
    return matrix;
}

// Reflectors with leading zeros, v_i = [0 .. 0, 1, *], as a Householder QR stores them.
template <typename Scalar>
Matrix<Scalar> lapackReflectors(Eigen::Index d, Eigen::Index k, std::mt19937_64& generator)
{
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian<double>(d, k, generator));
    Eigen::MatrixXd v = qr.matrixQR().triangularView<Eigen::StrictlyLower>();
    v.diagonal().setOnes();
    return v.cast<Scalar>();
}

// max |a - b|; infinity when the shapes differ, so a size bug cannot pass as a small error.
template <typename A, typename B>
double maxAbsDifference(const A& a, const B& b)
{
    if (a.rows() != b.rows() || a.cols() != b.cols())
        return std::numeric_limits<double>::infinity();
    return double((a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff());
}

// max |a - b| / max |b|.
template <typename A, typename B>
double maxRelativeDifference(const A& a, const B& b)
{
    const double scale = double(b.template cast<double>().cwiseAbs().maxCoeff());
    return maxAbsDifference(a, b) / (scale > 0 ? scale : 1.0);
}

} // namespace wfs::fasth::test
