/* The heap behind malloc (sbrk in syscalls.c): part of the program's bss (the R4400 kernel maps
   a task's ELF segments and its stack eagerly; the i486 kernel maps bss pages on first touch). A program that needs another size
   defines both symbols itself and this member of libcitcat.a is not linked. */
char __citcat_heap[1 << 20] __attribute__((aligned(16)));
const unsigned long __citcat_heap_bytes = sizeof __citcat_heap;
