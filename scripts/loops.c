/* Loops in plain C that the toolkit does not contain, for checking
 * `predict kernel` against measurement (scripts/bench_kernel.sh).
 *
 *   gcc -O3 -march=native -fopenmp scripts/loops.c -o loops
 *   OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores ./loops LOOP N [REGION]
 *
 * Prints "LOOP N THREADS SECONDS": the median over repetitions of the
 * time of one pass of all N iterations (passes of cache-sized loops are
 * timed in batches). Each loop is split evenly and contiguously over the
 * threads (schedule(static)), and the arrays are first touched by the
 * threads that use them.
 *
 * LOOP is one of
 *   sum-chain   s += x[i]                  (a loop-carried add chain)
 *   sum         s += x[i], reduction(+)    (vectorised, no chain)
 *   axpy        y[i] += a*x[i]             (an update of y from x)
 *   stride8     s += x[8*i], reduction(+)  (one double per 64-byte line)
 *   gather      s += x[idx[i]]             (idx random over REGION bytes of x)
 *   triad       a[i] = b[i] + s*c[i]
 *   poly16      y[i] = p(x[i]), Horner, degree 16 (32 flops per element)
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *alloc(size_t n) {
  double *p = aligned_alloc(64, ((n * sizeof(double) + 63) / 64) * 64);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static volatile double sink;

/* One pass of the loop; returns a value that depends on it. */
static double pass(const char *loop, long n, double *x, double *y, double *z,
                   const int32_t *idx) {
  double s = 0.0;
  const double a = 1.000001;
  if (!strcmp(loop, "sum-chain")) {
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (long i = 0; i < n; i++) s += x[i];
  } else if (!strcmp(loop, "sum")) {
#pragma omp parallel for simd schedule(static) reduction(+ : s)
    for (long i = 0; i < n; i++) s += x[i];
  } else if (!strcmp(loop, "axpy")) {
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; i++) y[i] += a * x[i];
    s = y[n / 2];
  } else if (!strcmp(loop, "stride8")) {
#pragma omp parallel for simd schedule(static) reduction(+ : s)
    for (long i = 0; i < n; i++) s += x[8 * i];
  } else if (!strcmp(loop, "gather")) {
#pragma omp parallel for simd schedule(static) reduction(+ : s)
    for (long i = 0; i < n; i++) s += x[idx[i]];
  } else if (!strcmp(loop, "triad")) {
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; i++) y[i] = x[i] + a * z[i];
    s = y[n / 2];
  } else if (!strcmp(loop, "poly16")) {
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; i++) {
      double v = x[i], p = 1.0;
      for (int k = 0; k < 16; k++) p = p * v + 0.5;
      y[i] = p;
    }
    s = y[n / 2];
  } else {
    fprintf(stderr, "unknown loop %s\n", loop);
    exit(2);
  }
  return s;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s LOOP N [REGION_BYTES]\n", argv[0]);
    return 2;
  }
  const char *loop = argv[1];
  long n = atol(argv[2]);
  long region = argc > 3 && atol(argv[3]) >= 8 ? atol(argv[3]) / 8 : n;
  long nx = !strcmp(loop, "stride8") ? 8 * n : (!strcmp(loop, "gather") ? region : n);
  double *x = alloc(nx), *y = alloc(n), *z = alloc(n);
  int32_t *idx = malloc(n * sizeof(int32_t));
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; i++) {
    y[i] = 1.0;
    z[i] = 0.5;
    uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    idx[i] = (int32_t)(h % (uint64_t)region);
  }
#pragma omp parallel for schedule(static)
  for (long i = 0; i < nx; i++) x[i] = 1.0 + (double)(i % 7) * 1e-3;

  /* Passes per timing: enough for about 20 ms. */
  double t0 = omp_get_wtime();
  sink = pass(loop, n, x, y, z, idx);
  double one = omp_get_wtime() - t0;
  long batch = one > 0.02 ? 1 : (long)(0.02 / (one > 1e-7 ? one : 1e-7)) + 1;
  enum { REPS = 11 };
  double t[REPS];
  for (int r = 0; r < REPS; r++) {
    double start = omp_get_wtime();
    for (long b = 0; b < batch; b++) sink = pass(loop, n, x, y, z, idx);
    t[r] = (omp_get_wtime() - start) / batch;
  }
  qsort(t, REPS, sizeof t[0], cmp);
  printf("%s %ld %d %.6e\n", loop, n, omp_get_max_threads(), t[REPS / 2]);
  free(x);
  free(y);
  free(z);
  free(idx);
  return 0;
}
