/* <fenv.h> for the i486: the x87 alone. newlib's i386 fenv.c asks CPUID whether there is SSE
   to manage too, and an i486DX has no CPUID (an invalid opcode: the task would be killed). This
   member of libcitcat.a defines every symbol of newlib's, and the SDK links libcitcat.a first,
   so newlib's is never linked. The SSE part of fenv_t stays zero. The default environment
   (FE_DFL_ENV) is the one a task starts with: no flags, every exception masked, precision
   control 53 bits, round to nearest. */
#define _GNU_SOURCE
#include <fenv.h>

#define CW_DEFAULT 0x027F /* the i486 kernel's TASK_FPU_CW */
#define CW_ROUND 0x0C00

static unsigned short get_cw(void) {
  unsigned short cw;
  __asm__ volatile("fnstcw %0" : "=m"(cw));
  return cw;
}
static void set_cw(unsigned short cw) { __asm__ volatile("fldcw %0" : : "m"(cw)); }
static unsigned short get_sw(void) {
  unsigned short sw;
  __asm__ volatile("fnstsw %0" : "=m"(sw));
  return sw;
}
/* FNSTENV masks every exception after it stores: FLDENV puts the control word back. */
static void store_env(fenv_t *env) {
  __asm__ volatile("fnstenv %0\n\tfldenv %0" : "=m"(env->_fpu));
  env->_sse_mxcsr = 0;
}
static void load_env(const fenv_t *env) { __asm__ volatile("fldenv %0" : : "m"(env->_fpu)); }

/* The environment with every exception unmasked (FE_NOMASK_ENV): recognised by its address. */
static fenv_t nomask_env;
const fenv_t *_fe_nomask_env = &nomask_env;

/* Sets the status flags `bits` of `excepts` to their values in `bits` (no trap). */
static void put_flags(int excepts, int bits) {
  fenv_t env;
  store_env(&env);
  env._fpu._fpu_sw = (env._fpu._fpu_sw & ~(unsigned)excepts) | (bits & excepts);
  load_env(&env);
}

int feclearexcept(int excepts) {
  if (excepts & ~FE_ALL_EXCEPT) return -1;
  put_flags(excepts, 0);
  return 0;
}

int fegetexceptflag(fexcept_t *flagp, int excepts) {
  if (excepts & ~FE_ALL_EXCEPT) return -1;
  *flagp = get_sw() & excepts;
  return 0;
}

int fesetexceptflag(const fexcept_t *flagp, int excepts) {
  if (excepts & ~FE_ALL_EXCEPT) return -1;
  put_flags(excepts, (int)*flagp);
  return 0;
}

/* The flags go up; an unmasked one traps (#MF) at the FWAIT, as an operation raising it would. */
int feraiseexcept(int excepts) {
  if (excepts & ~FE_ALL_EXCEPT) return -1;
  put_flags(excepts, excepts);
  __asm__ volatile("fwait");
  return 0;
}

int fetestexcept(int excepts) { return get_sw() & excepts & FE_ALL_EXCEPT; }

/* FE_TONEAREST .. FE_TOWARDZERO are the x87 rounding-control encodings. */
int fegetround(void) { return (get_cw() & CW_ROUND) >> 10; }

int fesetround(int round) {
  if (round & ~3) return -1;
  set_cw((unsigned short)((get_cw() & ~CW_ROUND) | round << 10));
  return 0;
}

int fegetenv(fenv_t *envp) {
  store_env(envp);
  return 0;
}

int fesetenv(const fenv_t *envp) {
  if (envp == FE_DFL_ENV || envp == FE_NOMASK_ENV) {
    __asm__ volatile("fnclex");
    set_cw(envp == FE_DFL_ENV ? CW_DEFAULT : CW_DEFAULT & ~FE_ALL_EXCEPT);
    return 0;
  }
  load_env(envp);
  return 0;
}

int feholdexcept(fenv_t *envp) {
  store_env(envp);
  __asm__ volatile("fnclex");
  set_cw(get_cw() | FE_ALL_EXCEPT);
  return 0;
}

int feupdateenv(const fenv_t *envp) {
  const int raised = get_sw() & FE_ALL_EXCEPT;
  fesetenv(envp);
  return feraiseexcept(raised);
}

/* GNU extensions: which exceptions trap. Each returns the previous set. */
int feenableexcept(int excepts) {
  const unsigned short cw = get_cw();
  if (excepts & ~FE_ALL_EXCEPT) return -1;
  set_cw((unsigned short)(cw & ~excepts));
  return ~cw & FE_ALL_EXCEPT;
}

int fedisableexcept(int excepts) {
  const unsigned short cw = get_cw();
  if (excepts & ~FE_ALL_EXCEPT) return -1;
  set_cw((unsigned short)(cw | excepts));
  return ~cw & FE_ALL_EXCEPT;
}

int fegetexcept(void) { return ~get_cw() & FE_ALL_EXCEPT; }
