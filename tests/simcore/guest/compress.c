/* A small LZ77 compressor and decompressor with a round-trip check, plus run-length coding. */
#define LEN 6000
static unsigned char in[LEN], out[LEN * 2], back[LEN];
static short head[4096];
volatile int result[6];

static int lz_compress(const unsigned char* src, int n, unsigned char* dst) {
  for (int i = 0; i < 4096; i++) head[i] = -1;
  int o = 0, i = 0;
  while (i < n) {
    int best_len = 0, best_off = 0;
    if (i + 3 <= n) {
      int h = ((src[i] << 4) ^ (src[i + 1] << 2) ^ src[i + 2]) & 4095;
      int cand = head[h];
      head[h] = (short)i;
      if (cand >= 0 && i - cand < 4096) {
        int len = 0;
        while (len < 18 && i + len < n && src[cand + len] == src[i + len]) len++;
        if (len >= 3) { best_len = len; best_off = i - cand; }
      }
    }
    if (best_len) {
      dst[o++] = (unsigned char)(0x80 | (best_len - 3) << 3 | (best_off >> 8));
      dst[o++] = (unsigned char)best_off;
      i += best_len;
    } else {
      int run = 0;
      while (run < 127 && i + run < n && run < 1) run++;
      dst[o++] = (unsigned char)run;
      dst[o++] = src[i];
      i += run;
    }
  }
  return o;
}

static int lz_decompress(const unsigned char* src, int n, unsigned char* dst) {
  int o = 0;
  for (int i = 0; i < n;) {
    unsigned char c = src[i++];
    if (c & 0x80) {
      int len = ((c >> 3) & 15) + 3, off = ((c & 7) << 8) | src[i++];
      for (int k = 0; k < len; k++, o++) dst[o] = dst[o - off];
    } else {
      for (int k = 0; k < c; k++) dst[o++] = src[i++];
    }
  }
  return o;
}

static int rle(const unsigned char* src, int n, unsigned char* dst) {
  int o = 0;
  for (int i = 0; i < n;) {
    int r = 1;
    while (i + r < n && r < 255 && src[i + r] == src[i]) r++;
    dst[o++] = (unsigned char)r;
    dst[o++] = src[i];
    i += r;
  }
  return o;
}

int main(void) {
  unsigned s = 7;
  for (int i = 0; i < LEN; i++) {
    s = s * 69069u + 1u;
    in[i] = (s >> 24) < 160 ? "the quick brown fox jumps over the lazy dog "[(i / 3) % 44]
                             : (unsigned char)(s >> 16);
  }
  for (int round = 0; round < 2; round++) {
    int c = lz_compress(in, LEN, out);
    int d = lz_decompress(out, c, back);
    int ok = d == LEN;
    for (int i = 0; i < LEN && ok; i++) ok = back[i] == in[i];
    result[round * 3] = c;
    result[round * 3 + 1] = ok;
    result[round * 3 + 2] = rle(in, LEN, out);
    in[round * 100] ^= 1;
  }
  return 0;
}
