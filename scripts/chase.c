/*
 * Reference pointer chase for scripts/bench_calibrate.sh: the same method
 * as `calibrate point chase`, written as plainly as possible in C.
 *
 *   gcc -O2 -o chase scripts/chase.c
 *   ./chase SIZE_BYTES small|huge [LINE_BYTES]
 *
 * One pointer per cache line, the lines linked into one random cycle with
 * Sattolo's algorithm, in an anonymous mapping aligned to 2 MiB with
 * madvise(MADV_NOHUGEPAGE) or madvise(MADV_HUGEPAGE). After a warm-up walk,
 * 2 discarded and 11 kept timings of at least 1 ms each; prints the
 * latency per load in nanoseconds as the 0.2-quantile of the kept timings
 * (the statistic `calibrate` reports for a latency, its capability
 * estimate), then their median.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define HUGE (2UL << 20)
#define REPS 11
#define WARMUP 2

static uint64_t state = 0x9E3779B97F4A7C15ULL;

static uint64_t splitmix64(void) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void *volatile sink;

static void *chase(void *p, uint64_t steps) {
    for (uint64_t i = 0; i < steps; i++)
        p = *(void **)p;
    return p;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s SIZE_BYTES small|huge [LINE_BYTES]\n", argv[0]);
        return 2;
    }
    size_t size = strtoull(argv[1], NULL, 10);
    int huge = strcmp(argv[2], "huge") == 0;
    size_t line = argc > 3 ? strtoull(argv[3], NULL, 10) : 64;
    size_t n = size / line;
    if (n < 2) {
        fprintf(stderr, "size too small\n");
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    sched_setaffinity(0, sizeof set, &set);

    size_t rounded = (n * line + HUGE - 1) / HUGE * HUGE;
    char *map = mmap(NULL, rounded + HUGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    char *base = (char *)(((uintptr_t)map + HUGE - 1) & ~(HUGE - 1));
    madvise(base, rounded, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);

    /* Sattolo: slot i holds sigma(i), a single cycle through all n lines. */
    for (size_t i = 0; i < n; i++)
        *(uint64_t *)(base + i * line) = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(((unsigned __int128)splitmix64() * i) >> 64);
        uint64_t *a = (uint64_t *)(base + i * line), *b = (uint64_t *)(base + j * line);
        uint64_t t = *a;
        *a = *b;
        *b = t;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t *slot = (uint64_t *)(base + i * line);
        *slot = (uint64_t)(uintptr_t)(base + *slot * line);
    }

    void *p = base;
    double t0 = now();
    for (size_t walked = 0; walked < n && now() - t0 < 3e-3; walked += 4096)
        p = chase(p, 4096);
    uint64_t steps = 1;
    for (;;) {
        double t = now();
        p = chase(p, steps);
        t = now() - t;
        if (t >= 1e-3)
            break;
        double r = t > 0 ? 1e-3 / t * 1.2 : 100;
        steps = (uint64_t)(steps * (r < 1.5 ? 1.5 : r > 100 ? 100 : r)) + 1;
    }
    double ns[REPS];
    for (int r = 0; r < WARMUP + REPS; r++) {
        double t = now();
        p = chase(p, steps);
        t = now() - t;
        if (r >= WARMUP)
            ns[r - WARMUP] = t / steps * 1e9;
    }
    sink = p;
    qsort(ns, REPS, sizeof ns[0], cmp);
    /* The 0.2-quantile, linearly interpolated (exact for 11 timings). */
    double pos = 0.2 * (REPS - 1);
    int i = (int)pos;
    double q = ns[i] + (pos - i) * (ns[i + 1 < REPS ? i + 1 : i] - ns[i]);
    printf("%.4f %.4f\n", q, ns[REPS / 2]);
    munmap(map, rounded + HUGE);
    return 0;
}
