# What `cmake --install` puts where (GNUInstallDirs paths under CMAKE_INSTALL_PREFIX).
# The programs read nothing of their own from disk at run time (colour maps, presets and the demo are
# compiled in; FFTW's wisdom goes to the user's cache folder), so an install is: the two programs (and a CUDA
# build's backend module), their manual pages, the desktop entry and its icon, the result JSON's schema for those
# who read results, and the README with its pictures. The Python module, when built, has its own rule (python/CMakeLists.txt).

install(TARGETS wavefront-cli wavefront-studio RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# A CUDA build also installs the CUDA backend module (gpu/CMakeLists.txt, lib/wavefront-studio/), which the programs
# load when a GPU is asked about; it keeps the toolkit's folder (/usr/local/cuda) in its run path.

install(FILES resources/wavefront-studio.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
foreach(size 16 32 48 64 128 256)
  install(FILES resources/icons/wavefront-studio-${size}.png
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps RENAME wavefront-studio.png)
endforeach()
install(FILES resources/schema/result.schema.json DESTINATION ${CMAKE_INSTALL_DATADIR}/wavefront-studio/schema)
# Under the package's name (GNUInstallDirs' default DOCDIR would use the CMake project's name).
set(WFS_INSTALL_DOCDIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/wavefront-studio)
install(FILES README.md DESTINATION ${WFS_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${WFS_INSTALL_DOCDIR}/docs)

# Manual pages written from the programs' own --help at build time (cmake/ManPage.cmake), so they say
# what the installed program says; gzip -n keeps them byte-identical from build to build.
option(WFS_MAN_PAGES "Write manual pages from the programs' --help at build time and install them" ON)
if(WFS_MAN_PAGES)
  find_program(WFS_GZIP gzip)
  # wfs_man_page(<program> <one-line summary> <see also> [SUBCOMMANDS])
  function(wfs_man_page program summary see_also)
    set(page ${CMAKE_BINARY_DIR}/man/${program}.1)
    set(commands COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}> -DNAME=${program}
        "-DSUMMARY=${summary}" -DVERSION=${PROJECT_VERSION} -DSEE_ALSO=${see_also} -DOUTPUT=${page})
    if(ARGN STREQUAL "SUBCOMMANDS")
      list(APPEND commands -DSUBCOMMANDS=ON)
    endif()
    list(APPEND commands -P ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake)
    set(installed ${page})
    if(WFS_GZIP)
      list(APPEND commands COMMAND ${WFS_GZIP} -9nkf ${page})
      set(installed ${page}.gz)
    endif()
    add_custom_command(OUTPUT ${installed} ${commands}
                       DEPENDS ${program} ${PROJECT_SOURCE_DIR}/cmake/ManPage.cmake
                       COMMENT "Manual page ${program}(1) from its --help" VERBATIM)
    install(FILES ${installed} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
    set_property(GLOBAL APPEND PROPERTY WFS_MAN_PAGES_BUILT ${installed})
  endfunction()
  wfs_man_page(wavefront-cli "wavefront reconstruction from PSF images, headless (simulate, reconstruct, batch, benchmarks)"
               wavefront-studio SUBCOMMANDS)
  wfs_man_page(wavefront-studio "wavefront reconstruction from PSF images, the desktop program" wavefront-cli)
  get_property(built GLOBAL PROPERTY WFS_MAN_PAGES_BUILT)
  add_custom_target(wfs_man_pages ALL DEPENDS ${built})
endif()
