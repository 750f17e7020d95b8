/* The few library routines the compiler may call on its own. */
typedef unsigned long size_t;
void* memcpy(void* d, const void* s, size_t n) {
  unsigned char* dd = d;
  const unsigned char* ss = s;
  while (n--) *dd++ = *ss++;
  return d;
}
void* memset(void* d, int c, size_t n) {
  unsigned char* dd = d;
  while (n--) *dd++ = (unsigned char)c;
  return d;
}
