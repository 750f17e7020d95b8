/* CRC-32 (bitwise and table), FNV-1a, and a multiplicative hash over a generated buffer. */
#define LEN 8192
static unsigned char buf[LEN];
static unsigned table[256];
volatile unsigned result[8];

int main(void) {
  unsigned x = 0x9E3779B9u;
  for (int i = 0; i < LEN; i++) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; buf[i] = (unsigned char)x; }
  for (unsigned i = 0; i < 256; i++) {
    unsigned c = i;
    for (int k = 0; k < 8; k++) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  for (int round = 0; round < 3; round++) {
    unsigned crc = 0xFFFFFFFFu;
    for (int i = 0; i < LEN; i++) crc = table[(crc ^ buf[i]) & 0xFF] ^ (crc >> 8);
    unsigned crc2 = 0xFFFFFFFFu;
    for (int i = 0; i < LEN / 4; i++) {
      crc2 ^= buf[i];
      for (int k = 0; k < 8; k++) crc2 = (crc2 >> 1) ^ (0xEDB88320u & -(crc2 & 1));
    }
    unsigned fnv = 2166136261u;
    for (int i = 0; i < LEN; i++) fnv = (fnv ^ buf[i]) * 16777619u;
    unsigned long long m = 0;
    for (int i = 0; i + 3 < LEN; i += 4) {
      unsigned w = (unsigned)buf[i] | (unsigned)buf[i + 1] << 8 | (unsigned)buf[i + 2] << 16 |
                   (unsigned)buf[i + 3] << 24;
      m = m * 0x100000001B3ull + w;
      m ^= m >> 29;
    }
    result[round * 2] = crc ^ crc2;
    result[round * 2 + 1] = fnv ^ (unsigned)m ^ (unsigned)(m >> 32);
    buf[round] ^= 0x5A;
  }
  return 0;
}
