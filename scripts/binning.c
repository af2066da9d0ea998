// Reference for `predict run`'s data-parallel binning: the same counting
// sort in plain C with OpenMP, for scripts/bench_predict.sh.
//
// n particles (the kernel's generator: a 32-bit LCG, x then y) into a
// side x side grid; per thread, in blocks of 1024 particles, the cells
// (clamped like the kernel's) and a private histogram; one thread turns the
// histograms into each thread's first slot per cell (cells in order, threads
// in order within a cell); then each thread scatters its particle indices.
// Arrays laid out as calibrate's STREAM arrays and the kernel's are: array
// j starts j * (8 KiB + 64 B) modulo 64 KiB after a 2 MiB boundary, on
// memory offered transparent huge pages, first touched by the thread that
// uses them. Prints the median time of one sort
// over REPS sorts, in seconds, after checking the result is grouped by cell.
//
// Build: gcc -O3 -march=native -fopenmp binning.c -o binning
// Run:   OMP_PROC_BIND=close OMP_PLACES=cores ./binning [n] [reps]
#define _GNU_SOURCE
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SIDE 16
#define CELLS (SIDE * SIDE)
#define BLOCK 1024
#define HUGE (2u << 20)
#define STAGGER (8192u + 64u)
#define STAGGER_PERIOD 65536u

// Array number `slot` of `bytes`: its start differs from the other
// slots' below 4 KiB, so loads of one and stores to another at the same
// index do not alias. Never freed: the process sorts once and exits.
static void *array_alloc(size_t bytes, unsigned slot) {
    size_t offset = slot * STAGGER % STAGGER_PERIOD;
    size_t rounded = (offset + bytes + HUGE - 1) / HUGE * HUGE;
    void *p = NULL;
    if (posix_memalign(&p, HUGE, rounded)) {
        perror("posix_memalign");
        exit(1);
    }
    madvise(p, rounded, MADV_HUGEPAGE);
    return (char *)p + offset;
}

// `bytes` of zeros starting on a cache line.
static void *lines_alloc(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, 64, bytes)) {
        perror("posix_memalign");
        exit(1);
    }
    return memset(p, 0, bytes);
}

static inline uint32_t axis(float v) {
    float s = v * (float)SIDE;
    s = s > 0.0f ? s : 0.0f;  // NaN goes to 0 as well
    s = s < (float)(SIDE - 1) ? s : (float)(SIDE - 1);
    return (uint32_t)s;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : (1u << 20);
    int reps = argc > 2 ? atoi(argv[2]) : 31;
    int threads = omp_get_max_threads();
    float *x = array_alloc(n * sizeof(float), 0), *y = array_alloc(n * sizeof(float), 1);
    uint32_t *cells = array_alloc(n * sizeof(uint32_t), 2);
    uint32_t *order = array_alloc(n * sizeof(uint32_t), 3);
    // Each thread's histogram and cursors on lines of their own (a row is
    // 1 KiB, a whole number of lines): calloc's rows need not start a line,
    // and the two threads' rows then share one, which cost the sort 8-9%
    // on the 2-vCPU Zen 4 VM.
    uint32_t (*hist)[CELLS] = lines_alloc(threads * sizeof *hist);
    uint32_t (*cursor)[CELLS] = lines_alloc(threads * sizeof *cursor);
    uint32_t s = 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)(s >> 8) * (1.0f / (float)(1u << 24));
        s = s * 1664525u + 1013904223u;
        y[i] = (float)(s >> 8) * (1.0f / (float)(1u << 24));
    }
#pragma omp parallel
    {
        int t = omp_get_thread_num();
        size_t lo = n * t / threads, hi = n * (t + 1) / threads;
        memset(cells + lo, 0, (hi - lo) * sizeof(uint32_t));
        memset(order + lo, 0, (hi - lo) * sizeof(uint32_t));
    }
    double *times = malloc(reps * sizeof(double));
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime();
#pragma omp parallel
        {
            int t = omp_get_thread_num();
            size_t lo = n * t / threads, hi = n * (t + 1) / threads;
            uint32_t *h = hist[t];
            memset(h, 0, sizeof hist[t]);
            for (size_t b = lo; b < hi; b += BLOCK) {
                size_t e = b + BLOCK < hi ? b + BLOCK : hi;
                for (size_t i = b; i < e; i++)
                    cells[i] = axis(y[i]) * SIDE + axis(x[i]);
                for (size_t i = b; i < e; i++)
                    h[cells[i]]++;
            }
#pragma omp barrier
#pragma omp single
            {
                uint32_t acc = 0;
                for (int c = 0; c < CELLS; c++)
                    for (int k = 0; k < threads; k++) {
                        cursor[k][c] = acc;
                        acc += hist[k][c];
                    }
            }
            uint32_t *cur = cursor[t];
            for (size_t i = lo; i < hi; i++)
                order[cur[cells[i]]++] = (uint32_t)i;
        }
        times[r] = omp_get_wtime() - t0;
    }
    for (size_t k = 1; k < n; k++) {
        size_t a = order[k - 1], b = order[k];
        if (cells[a] > cells[b] || (cells[a] == cells[b] && a >= b)) {
            fprintf(stderr, "binning: output not grouped by cell at %zu\n", k);
            return 1;
        }
    }
    qsort(times, reps, sizeof(double), cmp_double);
    printf("%.9f\n", times[reps / 2]);
    return 0;
}
