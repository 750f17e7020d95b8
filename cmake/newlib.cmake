# newlib, the C and math library of the guest SDKs, built from Debian's newlib-source (the tarball
# under /usr/src/newlib) for each guest at build time. The build is an ExternalProject: its stamps
# keep the installed libraries across rebuilds and reconfigurations, and its compiler goes through
# ccache when there is one, so a fresh tree costs about a minute and a half of configure scripts
# on two cores and little compiling.

include(ExternalProject)

file(GLOB _newlib_tarballs /usr/src/newlib/newlib-*.tar.xz)
list(SORT _newlib_tarballs)
list(POP_BACK _newlib_tarballs _newlib_default)
set(CITCAT_NEWLIB_TARBALL "${_newlib_default}" CACHE FILEPATH
    "newlib source tarball for the guest SDKs (Debian package newlib-source)")
if(CITCAT_NEWLIB_TARBALL AND EXISTS "${CITCAT_NEWLIB_TARBALL}")
  set(CITCAT_HAVE_NEWLIB TRUE)
else()
  set(CITCAT_HAVE_NEWLIB FALSE)
  message(WARNING
    "newlib source not found (CITCAT_NEWLIB_TARBALL='${CITCAT_NEWLIB_TARBALL}'; Debian package "
    "newlib-source): the guest SDKs have no C library, programs with standard headers do not "
    "build, and the tests that need them are left out.")
endif()
cmake_host_system_information(RESULT _newlib_jobs QUERY NUMBER_OF_LOGICAL_CORES)

# citcat_newlib(NAME r4400 TARGET mips-elf CC compiler TOOLS tool-prefix FLAGS flag...
#               PREFIX dir)
# Builds newlib for one guest as the target `newlib_<NAME>`: CC with FLAGS compiles it (the
# guest's architecture flags; the host's headers are kept out), TOOLS names its binutils
# ("/usr/bin/mips-linux-gnu-"). It installs into `dir`: headers in <dir>/<TARGET>/include, libc.a
# and libm.a in <dir>/<TARGET>/lib. Only call it when CITCAT_HAVE_NEWLIB is true.
function(citcat_newlib)
  cmake_parse_arguments(ARG "" "NAME;TARGET;CC;TOOLS;PREFIX" "FLAGS" ${ARGN})
  set(root ${CMAKE_BINARY_DIR}/newlib/${ARG_NAME})
  file(SHA256 ${CITCAT_NEWLIB_TARBALL} tarball_hash)
  set(prefix ${ARG_PREFIX})
  # newlib's configure takes one compiler word: a wrapper carries the flags.
  list(JOIN ARG_FLAGS " " flags)
  # With ccache, paths under the newlib tree hash as relative ones: another checkout or build
  # directory (CI's fresh clone) still hits the cache.
  set(launcher)
  if(CCACHE_PROGRAM)
    set(launcher "env CCACHE_BASEDIR=${root} ${CCACHE_PROGRAM} ")
  endif()
  file(CONFIGURE OUTPUT ${root}/cc CONTENT "#!/bin/sh\nexec ${launcher}${ARG_CC} ${flags} \"$@\"\n")
  file(CHMOD ${root}/cc PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
       GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
  set(tools)
  foreach(tool AR AS LD NM RANLIB OBJDUMP READELF STRIP)
    string(TOLOWER ${tool} name)
    list(APPEND tools ${tool}_FOR_TARGET=${ARG_TOOLS}${name})
  endforeach()
  set(configure_args --target=${ARG_TARGET} --prefix=${prefix} --disable-multilib
      --disable-libgloss --disable-newlib-supplied-syscalls --enable-newlib-io-long-long
      --enable-newlib-io-c99-formats CC_FOR_TARGET=${root}/cc ${tools} CFLAGS_FOR_TARGET=-O2)
  # ExternalProject does not rerun a configure step whose arguments changed: this file does.
  file(CONFIGURE OUTPUT ${root}/configure-args CONTENT "${configure_args}\n")
  ExternalProject_Add(newlib_${ARG_NAME}
    URL ${CITCAT_NEWLIB_TARBALL}
    URL_HASH SHA256=${tarball_hash} # a changed tarball rebuilds newlib
    DOWNLOAD_EXTRACT_TIMESTAMP TRUE
    PREFIX ${root}
    INSTALL_DIR ${prefix}
    # A reconfiguration (new flags) starts from no objects: make would keep the old ones.
    CONFIGURE_COMMAND ${CMAKE_COMMAND} -E rm -rf <BINARY_DIR>/${ARG_TARGET}
    COMMAND <SOURCE_DIR>/configure ${configure_args}
    BUILD_COMMAND make -j${_newlib_jobs} all-target-newlib
    INSTALL_COMMAND make install-target-newlib
    BUILD_BYPRODUCTS ${prefix}/${ARG_TARGET}/lib/libc.a ${prefix}/${ARG_TARGET}/lib/libm.a
    LOG_CONFIGURE TRUE LOG_BUILD TRUE LOG_INSTALL TRUE LOG_OUTPUT_ON_FAILURE TRUE)
  # New flags in the wrapper or new arguments build newlib anew.
  ExternalProject_Add_StepDependencies(newlib_${ARG_NAME} configure ${root}/cc
                                       ${root}/configure-args)
endfunction()
