# Cross compilers for the software the traced machines run: guest kernels, workloads and the test
# programs of the differential oracles. Guest binaries are build products, never committed.
#
# Each guest toolchain is looked up once, here, and has one function that builds a guest program
# with it. A missing cross compiler does not stop the configuration: the guest programs and the
# tests and benchmarks that need them are left out (they check `if(TARGET ...)` on the guest
# targets), one message says so, and everything else builds.

# Warnings as errors for our own guest programs when CITCAT_WERROR is on; the SDK build of a
# user's program (`citcat capture --elf prog.c`) never gets it.
set(CITCAT_GUEST_WERROR)
if(CITCAT_WERROR)
  set(CITCAT_GUEST_WERROR -Werror)
endif()

# ---- MIPS (the R4400): Debian's mips-linux-gnu cross tools ----
find_program(CITCAT_MIPS_CC mips-linux-gnu-gcc DOC "MIPS cross compiler for the R4400 guest")
find_program(CITCAT_MIPS_OBJCOPY mips-linux-gnu-objcopy DOC "objcopy of the MIPS cross tools")
if(CITCAT_MIPS_CC AND EXISTS "${CITCAT_MIPS_CC}" AND CITCAT_MIPS_OBJCOPY
   AND EXISTS "${CITCAT_MIPS_OBJCOPY}")
  set(CITCAT_HAVE_MIPS_TOOLCHAIN TRUE)
else()
  set(CITCAT_HAVE_MIPS_TOOLCHAIN FALSE)
  message(WARNING
    "MIPS cross compiler not found (CITCAT_MIPS_CC='${CITCAT_MIPS_CC}', CITCAT_MIPS_OBJCOPY="
    "'${CITCAT_MIPS_OBJCOPY}'; Debian package gcc-mips-linux-gnu): the R4400 guest kernel, "
    "workloads and test programs are not built, and the tests and benchmarks that need them are "
    "left out.")
endif()

# _citcat_cross_program(CC OBJCOPY OUTPUT prog.elf SOURCES src... [FLAGS flag...] [LIBS lib...]
#                       [DEPENDS file...] [BINARY prog.bin] COMMENT text)
# Builds one guest program with a cross compiler: `CC FLAGS SOURCES LIBS -o OUTPUT` (sources in
# link order), and with BINARY also its raw image (objcopy -O binary).
function(_citcat_cross_program cc objcopy)
  cmake_parse_arguments(ARG "" "OUTPUT;BINARY;COMMENT" "SOURCES;FLAGS;LIBS;DEPENDS" ${ARGN})
  get_filename_component(dir ${ARG_OUTPUT} DIRECTORY)
  set(outputs ${ARG_OUTPUT})
  set(raw)
  if(ARG_BINARY)
    list(APPEND outputs ${ARG_BINARY})
    set(raw COMMAND ${objcopy} -O binary ${ARG_OUTPUT} ${ARG_BINARY})
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${cc} ${ARG_FLAGS} ${ARG_SOURCES} ${ARG_LIBS} -o ${ARG_OUTPUT}
    ${raw}
    DEPENDS ${ARG_SOURCES} ${ARG_DEPENDS}
    COMMENT "${ARG_COMMENT}"
    VERBATIM)
endfunction()

# citcat_mips_program(...): _citcat_cross_program's arguments, with the MIPS tools. Only call it
# when CITCAT_HAVE_MIPS_TOOLCHAIN is true.
function(citcat_mips_program)
  _citcat_cross_program(${CITCAT_MIPS_CC} ${CITCAT_MIPS_OBJCOPY} ${ARGN})
endfunction()

# ---- i686 (the i386 family): Debian's i686-linux-gnu cross tools ----
find_program(CITCAT_I686_CC i686-linux-gnu-gcc DOC "i686 cross compiler for i386 guest programs")
find_program(CITCAT_I686_OBJCOPY i686-linux-gnu-objcopy DOC "objcopy of the i686 cross tools")
if(CITCAT_I686_CC AND EXISTS "${CITCAT_I686_CC}" AND CITCAT_I686_OBJCOPY
   AND EXISTS "${CITCAT_I686_OBJCOPY}")
  set(CITCAT_HAVE_I686_TOOLCHAIN TRUE)
else()
  set(CITCAT_HAVE_I686_TOOLCHAIN FALSE)
  message(WARNING
    "i686 cross compiler not found (CITCAT_I686_CC='${CITCAT_I686_CC}'; Debian package "
    "gcc-i686-linux-gnu): the i386 guest programs and the tests that need them are left out.")
endif()

# citcat_i686_program(...): _citcat_cross_program's arguments, with the i686 tools. Only call it
# when CITCAT_HAVE_I686_TOOLCHAIN is true.
function(citcat_i686_program)
  _citcat_cross_program(${CITCAT_I686_CC} ${CITCAT_I686_OBJCOPY} ${ARGN})
endfunction()
