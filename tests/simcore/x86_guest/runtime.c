/* The string, memory and formatting functions of the guest SDK's tiny libc (guest/common/sdk/
   libc.c) for the i486 guest programs, without its system calls and console (as the kernel
   builds it). */
#define CITCAT_KERNEL 1
#include "libc.c"
