/* Core-to-core latency reference: two threads pinned to CPUs 0 and 1 take
 * turns writing one counter in its own cache line, so every write fetches
 * the line from the other core. Prints the one-way latency in ns (round
 * trip / 2), the best of 50 batches of 20000 round trips, the estimator
 * lmbench and STREAM use: interference only ever slows a batch down.
 *
 * gcc -O2 -pthread c2c.c -o c2c && ./c2c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { BATCHES = 50, TRIPS = 20000 };

static _Alignas(128) _Atomic long flag;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
        fprintf(stderr, "error: cannot pin to CPU %d\n", cpu);
        exit(2);
    }
}

/* The answering side: turns every odd value into the next even one. */
static void *pong(void *arg) {
    (void)arg;
    pin(1);
    for (long v = 1; v < 2L * BATCHES * TRIPS; v += 2) {
        while (atomic_load_explicit(&flag, memory_order_acquire) != v) {
        }
        atomic_store_explicit(&flag, v + 1, memory_order_release);
    }
    return NULL;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(void) {
    pthread_t other;
    pin(0);
    if (pthread_create(&other, NULL, pong, NULL) != 0) {
        fprintf(stderr, "error: cannot start the second thread\n");
        return 2;
    }
    double best = 1e30;
    long v = 0;
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now();
        for (int i = 0; i < TRIPS; i++) {
            atomic_store_explicit(&flag, v + 1, memory_order_release);
            while (atomic_load_explicit(&flag, memory_order_acquire) != v + 2) {
            }
            v += 2;
        }
        double t = (now() - t0) / TRIPS / 2;
        if (t < best)
            best = t;
    }
    pthread_join(other, NULL);
    printf("%.3f\n", best * 1e9);
    return 0;
}
