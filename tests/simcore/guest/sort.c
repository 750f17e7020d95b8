/* Quicksort and insertion sort of pseudo-random arrays; the result checksum stays in memory. */
#define N 3000
static unsigned a[N], b[N];
volatile unsigned result[4];

static unsigned seed = 12345;
static unsigned rnd(void) { seed = seed * 1103515245u + 12345u; return seed >> 7; }

static void quicksort(unsigned* v, int lo, int hi) {
  while (lo < hi) {
    unsigned p = v[(lo + hi) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (v[i] < p) i++;
      while (v[j] > p) j--;
      if (i <= j) { unsigned t = v[i]; v[i] = v[j]; v[j] = t; i++; j--; }
    }
    if (j - lo < hi - i) { quicksort(v, lo, j); lo = i; } else { quicksort(v, i, hi); hi = j; }
  }
}

static void insertion(unsigned* v, int n) {
  for (int i = 1; i < n; i++) {
    unsigned x = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > x) { v[j + 1] = v[j]; j--; }
    v[j + 1] = x;
  }
}

int main(void) {
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < N; i++) a[i] = b[i] = rnd() % (1000 + round * 5000);
    quicksort(a, 0, N - 1);
    insertion(b, 400);
    unsigned sum = 0;
    for (int i = 0; i < N; i++) sum = sum * 31 + a[i] + (i < 400 ? b[i] : 0);
    result[round] = sum;
  }
  return 0;
}
