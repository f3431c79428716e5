#!/bin/bash
# validate/nccl/curves.sh — busbw against size for each node kind, arsim's
# simulated curve and the tuner's beside the published plateaus and the
# published per-size curves (validate/nccl/published/, compared by
# validate/nccl/midsize.sh; docs/explanation/nccl.md); writes
# docs/explanation/nccl-busbw.svg.
# Usage: validate/nccl/curves.sh [ARSIM] [OUT.svg]
set -eu
A=${1:-./build/arsim}
OUT=${2:-docs/explanation/nccl-busbw.svg}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
P=$(dirname "$0")/published
SIZES=64KiB,128KiB,256KiB,512KiB,1MiB,2MiB,4MiB,8MiB,16MiB,32MiB,64MiB,128MiB,256MiB,512MiB,1GiB,2GiB,4GiB,8GiB
curve() {   # curve NAME ARGS...: size, simulated busbw, tuner busbw (GB/s)
    local name=$1
    shift
    "$A" collective --algo nccl "$@" --size "$SIZES" | awk 'NR > 2 { print $1, $10, $11 }' >"$T/$name.dat"
}
curve h100 --node dgx-h100
curve h100ring --node dgx-h100 --nccl-algo ring
curve h100nvls --node dgx-h100 --nccl-algo nvls
curve h100nvls218 --node dgx-h100 --nccl-algo nvls --nccl-release 2.18
curve a100 --node dgx-a100
curve a100tree --node dgx-a100 --nccl-algo tree --nccl-release 2.18
curve a100x2 --node dgx-a100 --nodes 2
curve dgx1 --node dgx-1
curve pcie --node pcie-a100
gnuplot <<GP
set terminal svg size 900,1040 font "sans,11"
set output "$OUT"
set multiplot layout 2,1
set logscale x 2
set xlabel "size (bytes)"
set ylabel "busbw (GB/s)"
set key top left
set grid
set xtics ("64K" 65536, "256K" 262144, "1M" 1048576, "4M" 4194304, "16M" 16777216, "64M" 67108864, "256M" 268435456, "1G" 1073741824, "4G" 4294967296)
set title "all-reduce busbw: arsim (lines; tuner dashed), published plateaus (dots), per-size curves (open marks)"
plot "$T/h100.dat" u 1:2 w lp lc 1 t "8 x H100 (tuner's choice)", \\
     "$T/h100.dat" u 1:3 w l dt 2 lc 1 notitle, \\
     "$T/h100ring.dat" u 1:2 w lp lc 2 t "8 x H100, Ring", \\
     "$T/h100nvls.dat" u 1:2 w l lc 7 t "8 x H100, NVLS", \\
     "$T/a100.dat" u 1:2 w lp lc 3 t "8 x A100", \\
     "$T/a100.dat" u 1:3 w l dt 2 lc 3 notitle, \\
     "$T/a100x2.dat" u 1:2 w lp lc 4 t "2 x DGX A100", \\
     "$T/a100x2.dat" u 1:3 w l dt 2 lc 4 notitle, \\
     "$T/dgx1.dat" u 1:2 w lp lc 5 t "DGX-1 (V100)", \\
     "$T/pcie.dat" u 1:2 w lp lc 6 t "8 x A100 PCIe", \\
     "-" u 1:2 w p pt 7 ps 1.5 lc 1 t "published: H100 NVLS 480", \\
     "-" u 1:2 w p pt 7 ps 1.5 lc 2 t "published: H100 Ring 370", \\
     "-" u 1:2 w p pt 7 ps 1.5 lc 3 t "published: A100 231", \\
     "-" u 1:2 w p pt 7 ps 1.5 lc 4 t "published: 2 x DGX A100 192", \\
     "$P/azure-nd-h100-v5.txt" u 1:2 w p pt 6 ps 1.2 lc 7 t "published: 8 x H100, NVLS (Azure ND H100 v5)", \\
     "$P/azure-nd-a100-v4.txt" u 1:2 w p pt 4 ps 1.2 lc 3 t "published: 8 x A100, Tree as inferred (Azure ND A100 v4)"
8589934592 480
e
8589934592 370
e
8589934592 231
e
8589934592 192
e
set logscale y 10
set key bottom right
set title "the published per-size curves beside arsim's runs of the same setup (log scale; validate/nccl/midsize.sh)"
plot "$T/h100nvls.dat" u 1:2 w l lc 7 t "arsim: 8 x H100, NVLS", \\
     "$T/h100nvls.dat" u 1:3 w l dt 2 lc 7 t "arsim's tuner: 8 x H100, NVLS", \\
     "$T/h100nvls218.dat" u 1:2 w l dt 3 lc 7 t "arsim: 8 x H100, NVLS as NCCL 2.18 runs it (--nccl-release 2.18)", \\
     "$P/azure-nd-h100-v5.txt" u 1:2 w p pt 6 ps 1.2 lc 7 t "published: 8 x H100, NVLS (Azure ND H100 v5, NCCL 2.18.5)", \\
     "$P/azure-nd-h200-v5.txt" u 1:2 w p pt 8 ps 1.2 lc 7 t "published: 8 x H200, NVLS (Azure ND H200 v5, NCCL 2.20.5)", \\
     "$P/azure-nd-h200-v5-nccl2.26.txt" u 1:2 w p pt 10 ps 1.2 lc 7 t "published: 8 x H200, NVLS (Azure ND H200 v5, NCCL 2.26.2)", \\
     "$T/a100tree.dat" u 1:2 w l lc 3 t "arsim: 8 x A100, Tree forced, as NCCL 2.18 runs it (--nccl-release 2.18)", \\
     "$T/a100tree.dat" u 1:3 w l dt 2 lc 3 t "arsim's tuner: 8 x A100, Tree (2.18)", \\
     "$T/a100.dat" u 1:2 w l dt 3 lc 3 t "arsim: 8 x A100, the tuner's choice (Ring)", \\
     "$P/azure-nd-a100-v4.txt" u 1:2 w p pt 4 ps 1.2 lc 3 t "published: 8 x A100, Tree as inferred (Azure ND A100 v4, NCCL 2.18.5)"
unset multiplot
GP
echo "wrote $OUT"
