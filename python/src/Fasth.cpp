// wavefront_studio.fasth: products of Householder reflections (core/fasth) and their gradient, so that the
// FastH teaching examples run from a notebook. Core checks the shapes and options (std::invalid_argument,
// which pybind11 raises as ValueError).
#include "Conversions.h"

#include "fasth/Householder.h"

#include <pybind11/eigen.h>

namespace wfs::python {

namespace {

using MatrixXd = Eigen::MatrixXd;

fasth::Options fasthOptions(const std::string& algorithm, int blockSize, int threads)
{
    fasth::Options options;
    const auto a = fasth::algorithmFromName(algorithm);
    if (!a)
        throw py::value_error("algorithm: '" + algorithm + "' is not one of sequential, fasth, ut, tree");
    options.algorithm = *a;
    options.threads = threads;
    options.blockSize = blockSize; // 0 is refused by core's Options::isValid unless replaced below
    return options;
}

MatrixXd product(const MatrixXd& v, const MatrixXd& x, bool transpose, const std::string& algorithm, int blockSize, int threads)
{
    fasth::HouseholderProduct<double> h(
        fasthOptions(algorithm, blockSize > 0 ? blockSize : fasth::defaultBlockSize(int(v.rows())), threads));
    MatrixXd a = x;
    py::gil_scoped_release nogil;
    h.prepare(v);
    transpose ? h.applyTranspose(a) : h.apply(a);
    return a;
}

py::tuple productGradient(const MatrixXd& v, const MatrixXd& x, const MatrixXd& gradA, bool transpose, const std::string& algorithm,
                          int blockSize, int threads)
{
    fasth::HouseholderProduct<double> h(
        fasthOptions(algorithm, blockSize > 0 ? blockSize : fasth::defaultBlockSize(int(v.rows())), threads));
    MatrixXd a = x, g = gradA, gradV;
    {
        py::gil_scoped_release nogil;
        h.prepare(v);
        // The backward pass starts from the product A (it recovers X from it, storing no activations).
        transpose ? h.applyTranspose(a) : h.apply(a);
        transpose ? h.backwardTranspose(a, g, gradV) : h.backward(a, g, gradV);
    }
    return py::make_tuple(gradV, g);
}

} // namespace

void bindFasth(py::module_& m)
{
    py::module_ f = m.def_submodule("fasth", R"doc(
Products of Householder reflections, H_1 H_2 ... H_k X with H_i = I - 2 v_i v_i^T / ||v_i||^2 and v_i the
columns of V (d x k, k <= d), by the sequential algorithm or FastH and its variants (Mathiasen et al. 2020), and
their gradient without stored activations: the same code as wavefront-cli fasth-bench and the FastH panel.)doc");
    f.def("product", &product, py::arg("V"), py::arg("X"), py::kw_only(), py::arg("transpose") = false, py::arg("algorithm") = "fasth",
          py::arg("block_size") = 0, py::arg("threads") = 0, R"doc(
A = H_1 ... H_k X (transpose=True: H_k ... H_1 X) for V (d x k) and X (d x m), float64 arrays.
algorithm: sequential, fasth, ut (compact WY) or tree; block_size 0: the paper's (32, or 16 for d <= 128);
threads 0: Eigen's. Raises ValueError for shapes or options core refuses.)doc");
    f.def("product_gradient", &productGradient, py::arg("V"), py::arg("X"), py::arg("grad_A"), py::kw_only(), py::arg("transpose") = false,
          py::arg("algorithm") = "fasth", py::arg("block_size") = 0, py::arg("threads") = 0, R"doc(
The gradient of a loss L through A = product(V, X): given grad_A = dL/dA (d x m), returns (dL/dV, dL/dX),
by the backward pass of the chosen algorithm.)doc");
}

} // namespace wfs::python
