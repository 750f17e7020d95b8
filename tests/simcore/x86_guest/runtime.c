/* The string, memory and formatting functions of the R4400 SDK's tiny libc (guest/r4400/sdk/
   libc.c) for the i486 guest programs, without its system calls and console (as the kernel
   builds it). */
#define CITCAT_KERNEL 1
#include "libc.c"
