# The bare-metal R4400 examples (examples/README.md), assembled with the MIPS guest toolchain
# (cmake/guest_toolchains.cmake) into ${CITCAT_R4400_EXAMPLES_DIR}: selftest.elf and its raw ROM
# image selftest.bin, hello.elf (a program in RAM), and the programs the tests of traces from
# reset need besides (a ROM placed with --rom-address, and programs a trace from reset refuses).
# Defines the target citcat_r4400_examples when the toolchain is there.
set(CITCAT_R4400_EXAMPLES_DIR ${PROJECT_BINARY_DIR}/examples/r4400-bare-metal)
if(CITCAT_HAVE_MIPS_TOOLCHAIN AND NOT TARGET citcat_r4400_examples)
  set(_src ${PROJECT_SOURCE_DIR}/examples/r4400-bare-metal)
  set(_dir ${CITCAT_R4400_EXAMPLES_DIR})
  set(_flags -march=r4000 -mabi=32 -EB -G0 -mno-abicalls -fno-pic -nostdlib -static
             -Wl,--build-id=none -Wa,--fatal-warnings ${CITCAT_GUEST_WERROR})
  citcat_mips_program(
    OUTPUT ${_dir}/selftest.elf BINARY ${_dir}/selftest.bin
    FLAGS ${_flags} -T ${_src}/rom.ld SOURCES ${_src}/selftest.S DEPENDS ${_src}/rom.ld
    COMMENT "Assembling the bare-metal R4400 example selftest")
  citcat_mips_program(
    OUTPUT ${_dir}/hello.elf
    FLAGS ${_flags} -T ${_src}/ram.ld SOURCES ${_src}/hello.S DEPENDS ${_src}/ram.ld
    COMMENT "Assembling the bare-metal R4400 example hello")
  set(_outputs ${_dir}/selftest.bin ${_dir}/hello.elf)
  # For the tests: the same ROM program linked 0x100 bytes into the ROM (run with
  # --rom-address), and the programs that do what a trace from reset cannot show.
  citcat_mips_program(
    OUTPUT ${_dir}/offset.elf BINARY ${_dir}/offset.bin
    FLAGS ${_flags} -T ${_src}/rom.ld -Wl,--section-start=.text=0xBFC00100
    SOURCES ${_src}/hello.S DEPENDS ${_src}/rom.ld
    COMMENT "Assembling the bare-metal R4400 test program offset")
  list(APPEND _outputs ${_dir}/offset.bin)
  foreach(_what interrupt count cause)
    string(TOUPPER ${_what} _upper)
    citcat_mips_program(
      OUTPUT ${_dir}/refused-${_what}.elf
      FLAGS ${_flags} -T ${_src}/rom.ld -DREFUSE_${_upper}
      SOURCES ${PROJECT_SOURCE_DIR}/tests/replay/rom_guest/refused.S DEPENDS ${_src}/rom.ld
      COMMENT "Assembling the bare-metal R4400 test program refused-${_what}")
    list(APPEND _outputs ${_dir}/refused-${_what}.elf)
  endforeach()
  add_custom_target(citcat_r4400_examples DEPENDS ${_outputs})
endif()
