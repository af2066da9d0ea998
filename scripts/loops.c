/* Loops in plain C that the toolkit does not contain, for checking
 * `predict kernel` against measurement (scripts/bench_kernel.sh).
 *
 *   gcc -O3 -march=native -fopenmp scripts/loops.c -o loops
 *   OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores ./loops LOOP N [REGION]
 *
 * Prints "LOOP N THREADS SECONDS": the time of one pass of all N
 * iterations, the 0.2-quantile over 11 timed batches of passes (as the
 * toolkit estimates what a machine can do). A batch runs in one parallel
 * region; each pass is a worksharing loop split evenly and contiguously
 * over the threads (schedule(static)) that ends at its barrier. The arrays
 * are first touched by the threads that use them. They come from a plain
 * allocation, on 4 KiB pages where transparent huge pages are given on
 * request only; with HUGE_PAGES=1 in the environment they are 2 MiB-aligned
 * and advised MADV_HUGEPAGE (`predict kernel --huge-pages`).
 *
 * LOOP is one of
 *   sum-chain   s += x[i]                  (a loop-carried add chain)
 *   sum         s += x[i], reduction(+)    (vectorised: one vector accumulator)
 *   axpy        y[i] += a*x[i]             (an update of y from x)
 *   stride8     s += x[8*i], reduction(+)  (one double per 64-byte line)
 *   stride64    s += x[64*i], reduction(+) (one double per 512 bytes: a
 *               column of a row-major matrix of 64 doubles a row)
 *   gather      s += x[idx[i]]             (idx random over REGION bytes of x)
 *   tiled       y[i] += a*x[i], the two arrays rows of 8192 doubles read a
 *               tile of 128 columns at a time (each thread's rows, tile
 *               by tile): runs of 1 KiB, each a jump of 64 KiB from the last
 *   triad       a[i] = b[i] + s*c[i]
 *   poly16      y[i] = p(x[i]), Horner, degree 16 (32 flops per element)
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static double *alloc(size_t n) {
  const int huge = getenv("HUGE_PAGES") && atoi(getenv("HUGE_PAGES"));
  const size_t align = huge ? (size_t)2 << 20 : 64;
  const size_t bytes = (n * sizeof(double) + align - 1) / align * align;
  double *p = aligned_alloc(align, bytes);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The tiled loop's rows and tiles, in doubles. */
enum { TILED_ROW = 8192, TILE = 128 };

static volatile double sink;
/* The reductions' target, shared by the team. */
static double acc;

/* One pass of the loop by the calling team: each loop is an orphaned
 * worksharing loop, so a batch of passes runs inside one parallel region
 * and each pass ends at the loop's barrier, as in a time-stepping code. */
static void pass(const char *loop, long n, double *x, double *y, double *z,
                 const int32_t *idx) {
  const double a = 1.000001;
  if (!strcmp(loop, "sum-chain")) {
#pragma omp for schedule(static) reduction(+ : acc)
    for (long i = 0; i < n; i++) acc += x[i];
  } else if (!strcmp(loop, "sum")) {
#pragma omp for simd schedule(static) reduction(+ : acc)
    for (long i = 0; i < n; i++) acc += x[i];
  } else if (!strcmp(loop, "axpy")) {
#pragma omp for simd schedule(static)
    for (long i = 0; i < n; i++) y[i] += a * x[i];
  } else if (!strcmp(loop, "stride8")) {
#pragma omp for simd schedule(static) reduction(+ : acc)
    for (long i = 0; i < n; i++) acc += x[8 * i];
  } else if (!strcmp(loop, "stride64")) {
#pragma omp for simd schedule(static) reduction(+ : acc)
    for (long i = 0; i < n; i++) acc += x[64 * i];
  } else if (!strcmp(loop, "gather")) {
#pragma omp for simd schedule(static) reduction(+ : acc)
    for (long i = 0; i < n; i++) acc += x[idx[i]];
  } else if (!strcmp(loop, "tiled")) {
    const long rows = n / TILED_ROW, nth = omp_get_num_threads();
#pragma omp for schedule(static)
    for (long t = 0; t < nth; t++)
      for (long j = 0; j < TILED_ROW; j += TILE)
        for (long r = rows * t / nth; r < rows * (t + 1) / nth; r++) {
          double *restrict yr = y + r * TILED_ROW + j;
          const double *restrict xr = x + r * TILED_ROW + j;
#pragma omp simd
          for (long k = 0; k < TILE; k++) yr[k] += a * xr[k];
        }
  } else if (!strcmp(loop, "triad")) {
#pragma omp for simd schedule(static)
    for (long i = 0; i < n; i++) y[i] = x[i] + a * z[i];
  } else if (!strcmp(loop, "poly16")) {
#pragma omp for simd schedule(static)
    for (long i = 0; i < n; i++) {
      double v = x[i], p = 1.0;
      for (int k = 0; k < 16; k++) p = p * v + 0.5;
      y[i] = p;
    }
  } else {
    fprintf(stderr, "unknown loop %s\n", loop);
    exit(2);
  }
}

/* Seconds per pass of `batch` passes run by one parallel region. */
static double timed(long batch, const char *loop, long n, double *x, double *y,
                    double *z, const int32_t *idx) {
  double start = omp_get_wtime();
#pragma omp parallel
  for (long b = 0; b < batch; b++) pass(loop, n, x, y, z, idx);
  double t = (omp_get_wtime() - start) / batch;
  sink = acc + y[n / 2];
  return t;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s LOOP N [REGION_BYTES]\n", argv[0]);
    return 2;
  }
  const char *loop = argv[1];
  long n = atol(argv[2]);
  if (!strcmp(loop, "tiled") && n % TILED_ROW) {
    fprintf(stderr, "tiled: N must be a multiple of %d\n", TILED_ROW);
    return 2;
  }
  long region = argc > 3 && atol(argv[3]) >= 8 ? atol(argv[3]) / 8 : n;
  long nx = !strcmp(loop, "stride8")    ? 8 * n
            : !strcmp(loop, "stride64") ? 64 * n
            : !strcmp(loop, "gather")   ? region
                                        : n;
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
  double one = timed(1, loop, n, x, y, z, idx);
  long batch = one > 0.02 ? 1 : (long)(0.02 / (one > 1e-7 ? one : 1e-7)) + 1;
  enum { REPS = 11 };
  double t[REPS];
  for (int r = 0; r < REPS; r++) t[r] = timed(batch, loop, n, x, y, z, idx);
  qsort(t, REPS, sizeof t[0], cmp);
  /* The 0.2-quantile of the times, the toolkit's capability estimate
   * (interference only slows a loop down). */
  printf("%s %ld %d %.6e\n", loop, n, omp_get_max_threads(), t[(REPS - 1) / 5]);
  free(x);
  free(y);
  free(z);
  free(idx);
  return 0;
}
