# Bare-metal R4400 kernel-mode programs for the full-system QEMU lock-step
# (tests/oracles/kernel_lockstep.h): big-endian ROM images linked at the reset vector, assembled
# with the MIPS guest toolchain (cmake/guest_toolchains.cmake) into ${CITCAT_KERNEL_TEST_DIR}.
# Defines the target citcat_kernel_tests when the toolchain is there.
set(CITCAT_KERNEL_TEST_DIR ${PROJECT_BINARY_DIR}/guest/tests/kernel)
set(CITCAT_KERNEL_TEST_PROGRAMS cp0 modes tlb diff_index diff_pagemask diff_wired diff_cause diff_status
    diff_tlbr_vpn2 diff_tlbr_pfn diff_bne_same diff_kernel_xsseg diff_mul diff_lladdr diff_watch diff_re diff_super64 diff_shadow
    diff_fetch_badvaddr)
if(CITCAT_HAVE_MIPS_TOOLCHAIN)
  set(_src ${PROJECT_SOURCE_DIR}/guest/tests/kernel)
  set(_outputs)
  foreach(_name ${CITCAT_KERNEL_TEST_PROGRAMS})
    set(_elf ${CITCAT_KERNEL_TEST_DIR}/${_name}.elf)
    citcat_mips_program(
      OUTPUT ${_elf}
      BINARY ${CITCAT_KERNEL_TEST_DIR}/${_name}.bin
      FLAGS -march=r4000 -mabi=32 -EB -G0 -mno-abicalls -fno-pic -nostdlib -static
            -Wl,--build-id=none -T ${_src}/kernel.ld -Wa,--fatal-warnings
            -I${_src} ${CITCAT_GUEST_WERROR}
      SOURCES ${_src}/${_name}.S
      DEPENDS ${_src}/kernel.h ${_src}/kernel.ld
      COMMENT "Assembling kernel test program ${_name}")
    list(APPEND _outputs ${CITCAT_KERNEL_TEST_DIR}/${_name}.bin)
  endforeach()
  add_custom_target(citcat_kernel_tests DEPENDS ${_outputs})
endif()
