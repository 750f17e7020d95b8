/* Sorts words and numbers the way a text utility would: tokenizes with <ctype.h>, parses numbers
   with strtol/strtoul/strtod, keeps everything in malloc'd memory, sorts with qsort, checks its
   invariants with assert. */
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char text[] =
    "The quick brown fox jumps over 13 lazy dogs; 0x1F foxes, -42 owls and 3.25 cats watch. "
    "Numbers like 1000000 and 077 and -0x10 mix with words: alpha Beta gamma DELTA epsilon. "
    "Sorting is stable? No: qsort is not, so ties break on the original position 7 8 9.";

struct word {
  char *s;
  size_t position;
};

static int by_text(const void *a, const void *b) {
  const struct word *x = a, *y = b;
  int c = strcasecmp(x->s, y->s);
  if (c) return c;
  return x->position < y->position ? -1 : x->position > y->position;
}

static int by_value(const void *a, const void *b) {
  long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

int main(void) {
  size_t cap = 4, nwords = 0, nnumbers = 0;
  struct word *words = malloc(cap * sizeof *words);
  long *numbers = malloc(64 * sizeof *numbers);
  double fsum = 0;
  const char *p = text;
  while (*p) {
    if (isdigit((unsigned char)*p) || ((*p == '-') && isdigit((unsigned char)p[1]))) {
      char *end;
      long v = strtol(p, &end, 0);
      if (*end == '.') {
        double d = strtod(p, &end);
        fsum += d;
      }
      assert(end > p);
      numbers[nnumbers++] = v;
      p = end;
    } else if (isalpha((unsigned char)*p)) {
      const char *start = p;
      while (isalpha((unsigned char)*p)) ++p;
      if (nwords == cap) {
        cap *= 2;
        words = realloc(words, cap * sizeof *words);
        assert(words != NULL);
      }
      size_t len = (size_t)(p - start);
      words[nwords].s = malloc(len + 1);
      memcpy(words[nwords].s, start, len);
      words[nwords].s[len] = '\0';
      words[nwords].position = nwords;
      ++nwords;
    } else {
      ++p;
    }
  }
  qsort(words, nwords, sizeof *words, by_text);
  qsort(numbers, nnumbers, sizeof *numbers, by_value);
  for (size_t i = 1; i < nwords; ++i) assert(strcasecmp(words[i - 1].s, words[i].s) <= 0);
  printf("%zu words, %zu numbers, fractional sum %.2f\n", nwords, nnumbers, fsum);
  for (size_t i = 0; i < nwords; ++i) {
    char upper[32];
    size_t j = 0;
    for (; words[i].s[j] && j < sizeof upper - 1; ++j) upper[j] = (char)toupper((unsigned char)words[i].s[j]);
    upper[j] = '\0';
    printf("%-10s %-10s @%zu\n", words[i].s, upper, words[i].position);
    free(words[i].s);
  }
  for (size_t i = 0; i < nnumbers; ++i) printf("%ld%c", numbers[i], i + 1 < nnumbers ? ' ' : '\n');
  printf("strtoul: %lu, atol: %ld\n", strtoul("4294967295", NULL, 10), atol("  -123abc"));
  free(words);
  free(numbers);
  return 0;
}
