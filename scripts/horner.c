/*
 * Reference for `calibrate point span` in scripts/bench_calibrate.sh: the
 * same loop, y[i] = p(x[i]) by Horner's scheme DEPTH steps deep, written
 * as plainly as possible in C and left to the compiler.
 *
 *   gcc -O3 -march=native -DDEPTH=32 -o horner scripts/horner.c
 *   ./horner
 *
 * 1024 doubles in and out (16 KiB, in L1), the chain unrolled in full as
 * calibrate's is, on the CPU the process runs on. A step is an FMA; built
 * without FMA (-mno-fma) it is a multiply or an add, DEPTH/2 degrees, as
 * calibrate counts it. After a warm-up, 2
 * discarded and 11 kept timings of at least 1 ms each; prints the median
 * time per element in nanoseconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef DEPTH
#define DEPTH 16
#endif
#ifdef __FMA__
#define DEGREE DEPTH
#else
#define DEGREE (DEPTH / 2)
#endif
#define N 1024
#define REPS 11
#define WARMUP 2

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

__attribute__((noinline)) static void sweep(const double *restrict x, double *restrict y) {
    for (int i = 0; i < N; i++) {
        double v = x[i], p = 1.0;
#pragma GCC unroll 128
        for (int k = 0; k < DEGREE; k++) p = p * v + 0.5;
        y[i] = p;
    }
}

static int cmp(const void *a, const void *b) {
    double d = *(const double *)a - *(const double *)b;
    return (d > 0) - (d < 0);
}

int main(void) {
    double *x = aligned_alloc(64, N * sizeof(double));
    double *y = aligned_alloc(64, N * sizeof(double));
    for (int i = 0; i < N; i++) x[i] = 0.25 + i / (2.0 * N);
    long sweeps = 1;
    for (;;) { /* sweeps per timing: at least 1 ms */
        double t = now();
        for (long s = 0; s < sweeps; s++) sweep(x, y);
        if (now() - t >= 1e-3) break;
        sweeps *= 2;
    }
    double per_element[REPS];
    for (int r = -WARMUP; r < REPS; r++) {
        double t = now();
        for (long s = 0; s < sweeps; s++) sweep(x, y);
        t = now() - t;
        if (r >= 0) per_element[r] = t / sweeps / N;
    }
    qsort(per_element, REPS, sizeof(double), cmp);
    printf("%.4f\n", 1e9 * per_element[REPS / 2]);
    return y[N / 2] > 1e300; /* keeps y alive */
}
