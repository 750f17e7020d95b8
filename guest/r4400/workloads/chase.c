/* chase: pointer chasing through one random cycle over 512 KB of nodes (32 times the D-cache
   and more than the TLB maps at once): memory-bound, with D-cache misses, write-backs and TLB
   refills on nearly every step. */
#include "workload.h"

#define NODES 32768
#define STEPS 180000

struct node {
  struct node *next;
  uint32_t value;
  uint32_t visits;
  uint32_t pad;
};

static struct node nodes[NODES];
static uint32_t perm[NODES];

uint32_t chase_compute(void) {
  uint32_t s = 0xC4A5E001u;
  for (uint32_t i = 0; i < NODES; ++i) perm[i] = i;
  /* Sattolo's algorithm: one cycle through every node */
  for (uint32_t i = NODES - 1; i > 0; --i) {
    uint32_t j = wl_next(&s) % i;
    uint32_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (uint32_t i = 0; i < NODES; ++i) {
    nodes[i].next = &nodes[perm[i]];
    nodes[i].value = wl_next(&s);
    nodes[i].visits = 0;
  }
  struct node *p = &nodes[0];
  uint32_t h = 0x811C9DC5u;
  for (uint32_t step = 0; step < STEPS; ++step) {
    h = wl_mix(h, p->value + (uint32_t)(p - nodes));
    p->visits++;
    p = p->next;
  }
  uint32_t visited = 0;
  for (uint32_t i = 0; i < NODES; ++i) visited += nodes[i].visits != 0;
  return wl_mix(h, visited);
}

#ifndef CITCAT_HOST
int main(void) { return wl_report("chase", chase_compute(), EXPECT_CHASE); }
#endif
