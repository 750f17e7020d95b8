# The R4400 floating-point unit (CP1) as its own library. Included from whichever CMakeLists needs
# it first; guard with if(NOT TARGET mips_fpu).
add_library(mips_fpu STATIC ${PROJECT_SOURCE_DIR}/simcore/mips/fpu.cc)
target_include_directories(mips_fpu PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>)
