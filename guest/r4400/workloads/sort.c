/* sort: quicksort and merge sort of the same pseudo-random data; both must agree. */
#include "workload.h"

#define SORT_N 8000

static uint32_t data_q[SORT_N], data_m[SORT_N], scratch[SORT_N];

static void quicksort(uint32_t *a, int lo, int hi) {
  while (hi - lo > 12) {
    uint32_t p = a[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (a[i] < p) ++i;
      while (a[j] > p) --j;
      if (i <= j) {
        uint32_t t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    if (j - lo < hi - i) {
      quicksort(a, lo, j);
      lo = i;
    } else {
      quicksort(a, i, hi);
      hi = j;
    }
  }
  for (int i = lo + 1; i <= hi; ++i) {
    uint32_t v = a[i];
    int k = i - 1;
    while (k >= lo && a[k] > v) {
      a[k + 1] = a[k];
      --k;
    }
    a[k + 1] = v;
  }
}

static void mergesort(uint32_t *a, uint32_t *tmp, int n) {
  for (int width = 1; width < n; width *= 2) {
    for (int lo = 0; lo < n; lo += 2 * width) {
      int mid = lo + width < n ? lo + width : n;
      int hi = lo + 2 * width < n ? lo + 2 * width : n;
      int i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
      while (i < mid) tmp[k++] = a[i++];
      while (j < hi) tmp[k++] = a[j++];
    }
    for (int i = 0; i < n; ++i) a[i] = tmp[i];
  }
}

uint32_t sort_compute(void) {
  uint32_t s = 0x5EED5047u;
  for (int i = 0; i < SORT_N; ++i) data_q[i] = data_m[i] = wl_next(&s) % 1000003u;
  quicksort(data_q, 0, SORT_N - 1);
  mergesort(data_m, scratch, SORT_N);
  uint32_t h = 0x811C9DC5u;
  for (int i = 0; i < SORT_N; ++i) {
    if (data_q[i] != data_m[i] || (i && data_q[i - 1] > data_q[i])) return 0xBAD50470u + (uint32_t)i;
    h = wl_mix(h, data_q[i]);
  }
  return h;
}

#ifndef CITCAT_HOST
int main(void) { return wl_report("sort", sort_compute(), EXPECT_SORT); }
#endif
