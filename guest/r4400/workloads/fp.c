/* fp: double precision (on the R4400 the task runs with CU1 = 1, FR = 0: o32's sixteen even/odd
   register pairs; on the i486 the x87 with precision control at 53 bits): a matrix product, an
   N-body integration with square roots and divisions, and a reduction. Only +, -, *, / and
   sqrt, which IEEE 754 rounds identically everywhere. */
#include "workload.h"

#define MAT_N 28
#define BODIES 5
#define STEPS 300

static double ma[MAT_N][MAT_N], mb[MAT_N][MAT_N], mc[MAT_N][MAT_N];
static double pos[BODIES][3], vel[BODIES][3], mass[BODIES];

static uint32_t fold(uint32_t h, double d) {
  union {
    double d;
    uint64_t u;
  } v = {d};
  return wl_mix(wl_mix(h, (uint32_t)v.u), (uint32_t)(v.u >> 32));
}

static double fsqrt(double x) { return __builtin_sqrt(x); }

uint32_t fp_compute(void) {
  uint32_t s = 0xF1047001u;
  for (int i = 0; i < MAT_N; ++i) {
    for (int j = 0; j < MAT_N; ++j) {
      ma[i][j] = (double)(int32_t)(wl_next(&s) % 2001u - 1000) / 64.0;
      mb[i][j] = (double)(wl_next(&s) % 1000u) / 3.0;
    }
  }
  for (int i = 0; i < MAT_N; ++i) {
    for (int j = 0; j < MAT_N; ++j) {
      double sum = 0.0;
      for (int k = 0; k < MAT_N; ++k) sum += ma[i][k] * mb[k][j];
      mc[i][j] = sum;
    }
  }
  uint32_t h = 0x811C9DC5u;
  for (int i = 0; i < MAT_N; ++i) h = fold(h, mc[i][(i * 5) % MAT_N]);

  for (int b = 0; b < BODIES; ++b) {
    mass[b] = 1.0 + (double)(wl_next(&s) % 100u) / 10.0;
    for (int k = 0; k < 3; ++k) {
      pos[b][k] = (double)(int32_t)(wl_next(&s) % 2001u - 1000) / 10.0;
      vel[b][k] = (double)(int32_t)(wl_next(&s) % 201u - 100) / 100.0;
    }
  }
  const double dt = 0.01;
  for (int step = 0; step < STEPS; ++step) {
    for (int i = 0; i < BODIES; ++i) {
      for (int j = i + 1; j < BODIES; ++j) {
        double d[3], r2 = 0.01;
        for (int k = 0; k < 3; ++k) {
          d[k] = pos[j][k] - pos[i][k];
          r2 += d[k] * d[k];
        }
        double r = fsqrt(r2);
        double f = dt / (r2 * r);
        for (int k = 0; k < 3; ++k) {
          vel[i][k] += d[k] * mass[j] * f;
          vel[j][k] -= d[k] * mass[i] * f;
        }
      }
    }
    for (int i = 0; i < BODIES; ++i) {
      for (int k = 0; k < 3; ++k) pos[i][k] += vel[i][k] * dt;
    }
  }
  double energy = 0.0;
  for (int i = 0; i < BODIES; ++i) {
    energy += 0.5 * mass[i] * (vel[i][0] * vel[i][0] + vel[i][1] * vel[i][1] + vel[i][2] * vel[i][2]);
    for (int k = 0; k < 3; ++k) h = fold(h, pos[i][k]);
  }
  return fold(h, energy);
}

#ifndef CITCAT_HOST
int main(void) { return wl_report("fp", fp_compute(), EXPECT_FP); }
#endif
