/*
 * Plain C MPI ping-pong, the reference for scripts/bench_mpi.sh.
 *
 * Build: mpicc -O2 scripts/pingpong.c -o pingpong
 * Run:   mpirun -np 2 ./pingpong BYTES REPS SAMPLES [WARMUP]
 *
 * Ranks 0 and 1 exchange a BYTES-byte message with blocking MPI_Send and
 * MPI_Recv (MPI_BYTE, tag 1 both ways, as the toolkit does).
 * After WARMUP round trips (default 100, or REPS if it is larger), it takes
 * SAMPLES samples; each sample times REPS round trips with MPI_Wtime and
 * records the one-way time (elapsed / (2 * REPS)). Rank 0 prints one JSON
 * line: the size, the repetitions, the median one-way time in seconds and
 * every sample. This is the same procedure as the toolkit's
 * `calibrate::pingpong::measure_point` (blocking mode), so the two can be compared
 * side by side.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 %s BYTES REPS SAMPLES [WARMUP]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    long bytes = atol(argv[1]);
    long reps = atol(argv[2]);
    long samples = atol(argv[3]);
    long warmup = argc > 4 ? atol(argv[4]) : (reps > 100 ? reps : 100);
    if (size < 2 || bytes < 0 || reps < 1 || samples < 2) {
        if (rank == 0)
            fprintf(stderr, "error: need 2 ranks, BYTES >= 0, REPS >= 1, SAMPLES >= 2\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = malloc(bytes > 0 ? bytes : 1);
    memset(buf, rank + 1, bytes > 0 ? bytes : 1);
    double *one_way = malloc(sizeof(double) * samples);
    MPI_Status st;

    if (rank <= 1) {
        int peer = 1 - rank;
        for (long s = -1; s < samples; ++s) {
            long n = s < 0 ? warmup : reps;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long i = 0; i < n; ++i) {
                if (rank == 0) {
                    MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
                } else {
                    MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
                    MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                }
            }
            double t = MPI_Wtime() - t0;
            if (s >= 0)
                one_way[s] = t / (2.0 * (double)reps);
        }
    } else {
        for (long s = -1; s < samples; ++s)
            MPI_Barrier(MPI_COMM_WORLD);
    }

    if (rank == 0) {
        double *sorted = malloc(sizeof(double) * samples);
        memcpy(sorted, one_way, sizeof(double) * samples);
        qsort(sorted, samples, sizeof(double), cmp_double);
        double median = samples % 2 ? sorted[samples / 2]
                                    : 0.5 * (sorted[samples / 2 - 1] + sorted[samples / 2]);
        printf("{\"impl\": \"c\", \"bytes\": %ld, \"reps\": %ld, \"samples\": %ld, "
               "\"one_way_median_s\": %.6e, \"one_way_s\": [",
               bytes, reps, samples, median);
        for (long s = 0; s < samples; ++s)
            printf("%s%.6e", s ? ", " : "", one_way[s]);
        printf("]}\n");
        free(sorted);
    }
    free(one_way);
    free(buf);
    MPI_Finalize();
    return 0;
}
