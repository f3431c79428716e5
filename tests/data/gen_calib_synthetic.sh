#!/bin/bash
# gen_calib_synthetic.sh — writes tests/data/calib-synthetic.json to stdout:
# a measurements file (schema arsim-measurements/1) whose times are the
# α-β-γ closed forms (docs/dev/design.md §7.7) for α = 40 us, β = 8.4 ns/B, γ = 0.2 ns/B
# on 4 ranks, one per host: ping-pong α + nβ, reduce nγ, and all-reduce
#   ring, rabenseifner, hierarchical (G = 2, inter ring)
#                 2(p-1)α-equivalents: ring 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ,
#                 rabenseifner and hierarchical 2·log2(p)α + 2(p-1)/p·nβ + (p-1)/p·nγ
#   butterfly     log2(p)(α + nβ + nγ)
#   tree          2·log2(p)(α + nβ) + log2(p)·nγ
#   mpi           Open MPI 4.1's choice at p = 4: butterfly below 8 KiB, else rabenseifner
# tests/cli/calib.sh checks that this script reproduces the committed file.
LC_ALL=C awk 'BEGIN {
    a = 40e-6; b = 8.4e-9; g = 2e-10; p = 4; lg = 2
    printf "{\n  \"schema\": \"arsim-measurements/1\",\n"
    printf "  \"env\": {\"ranks\": 4, \"hosts\": 4, \"ranks_per_host\": 1, \"consecutive\": true,\n"
    printf "    \"mpi_library\": \"Open MPI v4.1.4 (synthetic: closed forms)\", \"mpi_standard\": \"3.1\",\n"
    printf "    \"date\": \"2025-01-01T00:00:00Z\", \"command\": \"tests/data/gen_calib_synthetic.sh\"},\n"
    printf "  \"cases\": [\n"
    sep = ""
    for (n = 8; n <= 16777216; n *= 8) {
        printf "%s    {\"mode\": \"pingpong\", \"class\": \"inter\", \"ranks\": 2, \"bytes\": %d, \"time_s\": %.17g}", sep, n, a + n * b
        sep = ",\n"
    }
    for (n = 4096; n <= 67108864; n *= 4)
        printf "%s    {\"mode\": \"reduce\", \"ranks\": 4, \"bytes\": %d, \"time_s\": %.17g}", sep, n, n * g
    split("ring butterfly rabenseifner tree hierarchical mpi", algos, " ")
    for (i = 1; i <= 6; i++) {
        for (n = 4096; n <= 16777216; n *= 4) {
            al = algos[i]
            if (al == "mpi") al = n < 8192 ? "butterfly" : "rabenseifner"
            if (al == "ring") t = 2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g
            else if (al == "butterfly") t = lg * (a + n * b + n * g)
            else if (al == "tree") t = 2 * lg * (a + n * b) + lg * n * g
            else t = 2 * lg * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * g
            extra = algos[i] == "hierarchical" ? ", \"gpus_per_node\": 2" : ""
            printf "%s    {\"mode\": \"allreduce\", \"algo\": \"%s\", \"ranks\": 4, \"bytes\": %d%s, \"time_s\": %.17g, \"verified\": true}", sep, algos[i], n, extra, t
        }
    }
    printf "\n  ]\n}\n"
}'
