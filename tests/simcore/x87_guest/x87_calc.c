/* Compiled x87 code (gcc -march=i486: no SSE, no FCOMI): float/double/long double arithmetic,
 * conversions through FNSTCW/FLDCW truncation, compares through FNSTSW/SAHF, square roots. Run
 * under QEMU user mode and the core in lock step (tests/simcore/x87_qemu_test.cc). */
static volatile double sink_d;
static volatile int sink_i;

static double Newton(double x) {
  double r = x > 1 ? x / 2 : 1;
  for (int i = 0; i < 8; ++i) r = (r + x / r) / 2;
  return r;
}

static long double Series(int n) {
  long double s = 0;
  for (int k = 1; k <= n; ++k) s += (k & 1 ? 1.0L : -1.0L) / (2 * k - 1);
  return 4 * s;
}

int main(void) {
  float f = 1.0f / 3.0f;
  double acc = 0;
  for (int i = 1; i < 40; ++i) {
    acc += Newton(i) * f - __builtin_sqrt((double)i);
    if (acc > 10.0 || acc < -10.0) acc /= 7.0;
    sink_i = (int)(acc * 1000.0);
    f *= 1.0625f;
  }
  sink_d = acc;
  sink_d = (double)Series(50);
  long long big = (long long)(sink_d * 1e15);
  sink_d = (double)big / 3.0;
  return 0;
}

void _start(void) {
  main();
  __asm__ volatile("movl $1, %eax\n\txorl %ebx, %ebx\n\tint $0x80");
}
