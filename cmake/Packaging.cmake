# CPack: `cpack -G DEB` in the build folder makes wavefront-studio_VERSION_ARCH.deb from the install rules
# (cmake/Install.cmake). Its Depends are computed by dpkg-shlibdeps (package dpkg-dev) from the libraries
# the installed programs link, so they name the Debian packages of Qt 6, QCustomPlot, Ceres, FFTW, CFITSIO,
# libtiff, libpng and their versions as built against, and nothing else.
set(CPACK_PACKAGE_NAME wavefront-studio)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "wavefront reconstruction from point-spread-function images")
set(CPACK_PACKAGE_DESCRIPTION "Wavefront Studio fits Zernike coefficients (or a zonal pupil function) to \
in-focus and defocused images of a point source by BFGS on a Fourier-optics model with an exact adjoint \
gradient. It comes as a desktop program (wavefront-studio) that shows the fit converge live, and a \
headless one (wavefront-cli) for scripts, batch processing and benchmarks.")
set(CPACK_PACKAGE_CONTACT "" CACHE STRING "Maintainer of the Debian package, as 'Name <address>'")
if(CPACK_PACKAGE_CONTACT STREQUAL "")
  set(CPACK_DEBIAN_PACKAGE_MAINTAINER "Wavefront Studio developers")
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Qt loads its platform plugin (xcb, wayland, offscreen) at run time, which dpkg-shlibdeps cannot see.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-wayland")
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/__pycache__/")

# The CUDA backend links libcudart, cuFFT, cuBLAS and cuSOLVER directly (the GPU library is linked whole
# into both programs; it is not a plugin). Those come from the CUDA toolkit in /usr/local/cuda, which no
# Debian package provides, so a .deb of such a build could not state its dependencies. Packages are built
# with -DWFS_CUDA=OFF; the check runs when cpack does, so other generators (TGZ) are not stopped.
set(WFS_PACKAGE_HAS_CUDA ${WFS_HAVE_CUDA})
configure_file(${CMAKE_CURRENT_LIST_DIR}/CPackProjectConfig.cmake.in ${CMAKE_BINARY_DIR}/CPackProjectConfig.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/CPackProjectConfig.cmake)
include(CPack)
