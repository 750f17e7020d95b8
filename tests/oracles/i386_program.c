/* A static i386 executable for the ELF loader's tests: an entry point, initialised data and bss,
   each under a symbol the test looks up. */
unsigned table[2] = {0x01020304, 0x0A0B0C0D};
unsigned counter;

void _start(void) {
  for (;;) counter += table[counter & 1];
}
