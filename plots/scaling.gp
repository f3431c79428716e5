# scaling.gp — iteration time (top), scaling efficiency (middle) and
# samples/s (bottom, log scale) against the number of GPUs, a line per
# policy. Efficiency = per-GPU throughput / per-GPU throughput at the
# smallest GPU count (100% = perfect scaling).
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nblocks=2" plots/scaling.gp
# datafile: one block per policy, its quoted label first, then:
# gpus iteration_ms efficiency_pct samples_per_s.
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("nblocks")) nblocks = 1
set title
set multiplot layout 3,1 title fulltitle
set logscale x 2
set offsets graph 0.03, graph 0.03, 0, 0
set xlabel "GPUs"
set ylabel "iteration time (ms)"
set yrange [0:*]
plot for [i=0:nblocks-1] datafile index i using 1:2 with linespoints lw 2 pt 7 title columnheader(1)
set ylabel "scaling efficiency (%)"
set yrange [0:*]
plot for [i=0:nblocks-1] datafile index i using 1:3 with linespoints lw 2 pt 7 title columnheader(1)
set ylabel "samples/s"
set logscale y 10
set yrange [*:*]
plot for [i=0:nblocks-1] datafile index i using 1:4 with linespoints lw 2 pt 7 title columnheader(1)
unset logscale y
unset multiplot
unset output
