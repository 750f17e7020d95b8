# Guest test programs for the QEMU oracle, cross-compiled at build time into
# ${CITCAT_GUEST_TEST_DIR} with the MIPS guest toolchain (cmake/guest_toolchains.cmake). Sets
# CITCAT_GUEST_TESTS_AVAILABLE and, with the toolchain, the target citcat_guest_tests.
set(CITCAT_GUEST_TEST_DIR ${PROJECT_BINARY_DIR}/guest/tests)
set(CITCAT_GUEST_TESTS_AVAILABLE ${CITCAT_HAVE_MIPS_TOOLCHAIN})
if(CITCAT_HAVE_MIPS_TOOLCHAIN)
  set(_src ${PROJECT_SOURCE_DIR}/guest/tests)
  set(_common -march=r4000 -nostdlib -static -O2 -mno-abicalls -fno-pic -ffreestanding
      -fno-math-errno -fno-tree-loop-distribute-patterns -Wall ${CITCAT_GUEST_WERROR})
  set(_outputs)
  # name, source, ABI flags
  foreach(_spec
      "int64_n32|int64.c|-mabi=n32"
      "int64_n64|int64.c|-mabi=64"
      "int64_ops_n32|int64_ops.c|-mabi=n32"
      "int64_ops_n64|int64_ops.c|-mabi=64"
      "fp_n32|fp.c|-mabi=n32"
      "fp_n64|fp.c|-mabi=64"
      "fp_o32|fp.c|-mabi=32;-mfp32"
      "fp_random_n32|fp_random.c|-mabi=n32"
      "fp_random_o32|fp_random.c|-mabi=32;-mfp32"
      "fp_trap_n32|fp_trap.c|-mabi=n32"
      "fp_kernels_n32|fp_kernels.c|-mabi=n32"
      "fp_kernels_n64|fp_kernels.c|-mabi=64")
    string(REPLACE "|" ";" _parts "${_spec}")
    list(GET _parts 0 _name)
    list(GET _parts 1 _source)
    list(SUBLIST _parts 2 -1 _abi)
    set(_out ${CITCAT_GUEST_TEST_DIR}/${_name})
    citcat_mips_program(
      OUTPUT ${_out}
      FLAGS ${_abi} ${_common}
      SOURCES ${_src}/start.S ${_src}/${_source}
      DEPENDS ${_src}/rt.h
      COMMENT "Cross-compiling guest test ${_name}")
    list(APPEND _outputs ${_out})
  endforeach()
  add_custom_target(citcat_guest_tests DEPENDS ${_outputs})
endif()
