/* A long-running program for the scale figure (bench/scale_figures): rounds of sorting a table of
   pseudo-random keys, hashing it and walking a linked ring through it, each round's checksum
   printed. ROUNDS (a -D option) sets the length: about 2.6 M instructions per round on the R4400. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef ROUNDS
#define ROUNDS 10
#endif
#define N 8192

static uint32_t keys[N];
static uint32_t ring[N];
static uint32_t seed = 1;

static uint32_t next(void) {
  seed = seed * 1664525u + 1013904223u;
  return seed;
}

static int compare(const void* a, const void* b) {
  const uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  uint32_t total = 0;
  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < N; ++i) keys[i] = next();
    qsort(keys, N, sizeof keys[0], compare);
    uint32_t hash = 2166136261u;
    for (int i = 0; i < N; ++i) hash = (hash ^ keys[i]) * 16777619u;
    for (int i = 0; i < N; ++i) ring[i] = (i + 1 + (keys[i] % 7) * 1024) % N;
    uint32_t at = 0, steps = 0;
    for (int i = 0; i < N; ++i) {
      at = ring[at];
      steps += at;
    }
    total += hash ^ steps;
    if (round % 64 == 0) printf("round %d: %08x\n", round, (unsigned)total);
  }
  printf("total %08x\n", (unsigned)total);
  return 0;
}
