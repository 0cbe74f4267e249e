# The data layer's tests (issue 3): readers, preparation, exports, sessions, the real bead data, and
# the fuzz smoke runs. Included from tests/CMakeLists.txt.
wfs_add_test(tst_realdata SOURCES core/tst_realdata.cpp LIBS wfs::backends)
wfs_add_test(tst_imageio SOURCES core/tst_imageio.cpp core/ImageTestFiles.h LIBS wfs::core Qt6::Gui PkgConfig::CFITSIO PkgConfig::TIFF)
wfs_add_test(tst_dataset SOURCES core/tst_dataset.cpp core/ImageTestFiles.h LIBS wfs::backends Qt6::Gui PkgConfig::CFITSIO PkgConfig::TIFF)
wfs_add_test(tst_exports SOURCES core/tst_exports.cpp core/ImageTestFiles.h LIBS wfs::backends wfs::render PkgConfig::CFITSIO PkgConfig::TIFF)
# The exports read back by independent readers: astropy, csv and json through python3
# (core/read_exports.py), libpng for the PNG.
if(NOT TARGET PkgConfig::PNG)
  pkg_check_modules(PNG REQUIRED IMPORTED_TARGET libpng)
endif()
wfs_add_test(tst_exportreaders SOURCES core/tst_exportreaders.cpp core/read_exports.py LIBS wfs::backends wfs::render PkgConfig::PNG)
set_tests_properties(tst_exportreaders PROPERTIES SKIP_REGULAR_EXPRESSION "SKIP   : ")
# The system's python3 first: that is where scripts/setup.sh puts astropy and numpy (a pyenv or venv
# python3 earlier in PATH usually lacks them).
find_program(WFS_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(WFS_PYTHON3 NAMES python3)
target_compile_definitions(tst_exportreaders PRIVATE WFS_PYTHON3="${WFS_PYTHON3}")

# Fuzzing: the seed writer (built here), the fuzz targets (a clang sub-build, see fuzz/CMakeLists.txt)
# and one bounded run per reader as a test. Inputs that crashed a reader are kept under
# tests/data/fuzz/<format>/ and replayed by every run (and by tst_imageio in every build).
add_executable(fuzz_seeds fuzz/fuzz_seeds.cpp core/ImageTestFiles.h)
target_include_directories(fuzz_seeds PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/core)
find_package(ZLIB REQUIRED)
target_link_libraries(fuzz_seeds PRIVATE wfs::core Qt6::Gui PkgConfig::CFITSIO PkgConfig::TIFF ZLIB::ZLIB)

option(WFS_FUZZ "Build the libFuzzer targets with clang and run each, deterministically, as a test" ON)
# A number of mutations, not seconds: how far a run gets must not depend on the machine (issue 12).
set(WFS_FUZZ_RUNS 3000 CACHE STRING "Mutated inputs per reader in the fuzz_* tests (fixed seed)")
if(WFS_FUZZ)
  find_program(WFS_CLANGXX NAMES clang++ clang++-14 clang++-15 clang++-16)
  if(WFS_CLANGXX)
    include(ExternalProject)
    ExternalProject_Add(wfs_fuzzers
      SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz
      BINARY_DIR ${CMAKE_BINARY_DIR}/fuzz
      CMAKE_ARGS -DCMAKE_CXX_COMPILER=${WFS_CLANGXX} -DCMAKE_BUILD_TYPE=Release -DWFS_SOURCE_DIR=${PROJECT_SOURCE_DIR}
                 -DWFS_CORE_LIBRARY=$<TARGET_FILE:wfs_core>
      DEPENDS wfs_core
      BUILD_ALWAYS ON
      INSTALL_COMMAND "")
  else()
    message(STATUS "Fuzz targets: no clang++ found; the fuzz_* tests will be skipped")
  endif()
  foreach(reader tiff png fits)
    add_test(NAME fuzz_${reader}
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzzer.sh ${CMAKE_BINARY_DIR}/fuzz/fuzz_${reader} $<TARGET_FILE:fuzz_seeds>
                     ${CMAKE_BINARY_DIR}/fuzz-work ${reader} ${CMAKE_CURRENT_SOURCE_DIR}/data/fuzz/${reader}
                     ${CMAKE_CURRENT_SOURCE_DIR}/data/fuzz/corpus/${reader} ${WFS_FUZZ_RUNS})
    set_tests_properties(fuzz_${reader} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT "QT_QPA_PLATFORM=offscreen")
  endforeach()
endif()
