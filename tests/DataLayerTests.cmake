# The data layer's tests (issue 3): readers, preparation, exports, sessions, the real bead data, and
# the fuzz smoke runs. Included from tests/CMakeLists.txt.
wfs_add_test(tst_realdata SOURCES core/tst_realdata.cpp LIBS wfs::engine)
wfs_add_test(tst_imageio SOURCES core/tst_imageio.cpp core/ImageTestFiles.h LIBS wfs::core PkgConfig::CFITSIO PkgConfig::TIFF)
wfs_add_test(tst_dataset SOURCES core/tst_dataset.cpp core/ImageTestFiles.h LIBS wfs::engine PkgConfig::CFITSIO PkgConfig::TIFF)
wfs_add_test(tst_exports SOURCES core/tst_exports.cpp core/ImageTestFiles.h LIBS wfs::engine PkgConfig::CFITSIO PkgConfig::TIFF)
