/* crash: not a workload but a check of the kernel's fault handling. It prints a line, then
   stores into its own read-only text page (TLB Modified on the R4400, a page fault on the i486):
   the kernel must kill it with a message and carry on with the other tasks. */
#include "citcat_sdk.h"

int main(void) {
  printf("crash: storing into the text segment\n");
  *(volatile uint32_t *)(uintptr_t)&main = 0;
  printf("crash: still alive (wrong)\n");
  return 0;
}
