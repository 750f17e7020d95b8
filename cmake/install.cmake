# What `cmake --install` and the CPack .deb put where: the citcat binary, and scripts/slurm-replay
# as citcat-slurm-replay (replay on a Slurm cluster); its docs; the guest
# software it captures with (kernels, disk images, the SDKs with newlib), found beside the binary
# at run time (systems/guest_support.h); and a CMake package, find_package(Citcat), that gives an
# out-of-tree analyzer the trace consumer API (traces/sink.h), the archive reader
# (archive/archive.h) and the replay that feeds one from the other (systems/system.h).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS citcat RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS scripts/slurm-replay DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME citcat-slurm-replay)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# ---- the guest software (the layout systems/guest_support.h looks for) ----
set(_guest ${PROJECT_BINARY_DIR}/guest/r4400)
if(TARGET r4400_guest_images)
  install(FILES ${_guest}/kernel.elf ${_guest}/disk.img ${_guest}/hello.elf
          DESTINATION ${CMAKE_INSTALL_DATADIR}/citcat/r4400)
endif()
if(TARGET r4400_sdk)
  install(DIRECTORY ${_guest}/sdk DESTINATION ${CMAKE_INSTALL_DATADIR}/citcat/r4400)
  install(FILES guest/r4400/sdk/README.md guest/r4400/sdk/example/hello.c
          DESTINATION ${CMAKE_INSTALL_DATADIR}/citcat/r4400/sdk)
endif()

set(_guest ${PROJECT_BINARY_DIR}/guest/i486)
if(TARGET i486_guest_images)
  install(FILES ${_guest}/boot.bin ${_guest}/kernel.elf ${_guest}/disk.img
          DESTINATION ${CMAKE_INSTALL_DATADIR}/citcat/i486)
endif()
if(TARGET i486_sdk)
  install(DIRECTORY ${_guest}/sdk DESTINATION ${CMAKE_INSTALL_DATADIR}/citcat/i486)
  install(FILES guest/i486/sdk/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/citcat/i486/sdk)
endif()
# Linux for the i486 (capture --linux): its kernel, initramfs and disk.
set(_linux ${PROJECT_BINARY_DIR}/guest/linux)
if(TARGET linux_kernel AND TARGET linux_userland)
  install(FILES ${_linux}/vmlinux ${_linux}/initramfs.cpio ${_linux}/disk.img
          DESTINATION ${CMAKE_INSTALL_DATADIR}/citcat/linux)
endif()
install(FILES examples/linux-i486.citcat DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# ---- the CMake package ----
# The consumer API and everything it links, found by walking the link interface: every library
# of ours in it is installed and exported, the others (Abseil, protobuf, pkg-config modules)
# are found again by CitcatConfig.cmake.
add_library(citcat_api INTERFACE)
target_link_libraries(citcat_api INTERFACE citcat_archive citcat_traces citcat_systems)
set_target_properties(citcat_api PROPERTIES EXPORT_NAME api)
set(_exported)
set(_todo citcat_api)
while(_todo)
  list(POP_FRONT _todo _t)
  if(NOT TARGET ${_t} OR _t IN_LIST _exported)
    continue()
  endif()
  get_target_property(_imported ${_t} IMPORTED)
  if(_imported)
    continue()
  endif()
  list(APPEND _exported ${_t})
  foreach(_property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(_libs ${_t} ${_property})
    if(_libs)
      string(REGEX REPLACE "\\$<LINK_ONLY:([^>]+)>" "\\1" _libs "${_libs}")
      list(APPEND _todo ${_libs})
    endif()
  endforeach()
endwhile()
foreach(_t ${_exported})
  target_include_directories(${_t} INTERFACE
                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/citcat>)
endforeach()
install(TARGETS ${_exported} EXPORT CitcatTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}/citcat
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/citcat)
install(EXPORT CitcatTargets NAMESPACE Citcat::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Citcat)

# Headers as the sources include them ("traces/sink.h"), the generated schemas with them.
foreach(room io cat_parser ims aes simcore machine extract replay systems traces archive
        guest/r4400/tools guest/i486/tools guest/i486/boot)
  install(DIRECTORY ${room}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/citcat/${room}
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/ims/ims.pb.h ${PROJECT_SOURCE_DIR}/ims/ims.proto
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/citcat/ims)
install(FILES ${PROJECT_BINARY_DIR}/aes/aes.pb.h ${PROJECT_SOURCE_DIR}/aes/aes.proto
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/citcat/aes)

configure_package_config_file(cmake/CitcatConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/CitcatConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Citcat)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/CitcatConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/CitcatConfig.cmake
              ${PROJECT_BINARY_DIR}/CitcatConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Citcat)

# ---- a Debian package: cpack -G DEB in the build tree ----
set(CPACK_PACKAGE_NAME citcat)
set(CPACK_PACKAGE_VENDOR "CITCAT")
set(CPACK_PACKAGE_CONTACT "CITCAT maintainers <citcat@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Users' C programs are compiled with the MIPS cross compiler; the CMake package's consumers
# need the headers of what the API names.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gcc-mips-linux-gnu")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "libabsl-dev, libprotobuf-dev, libzstd-dev, liblzma-dev, libcapstone-dev, pkg-config")
include(CPack)
