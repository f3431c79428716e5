# memory.gp — the estimated peak memory per GPU (bottom, log scale) and,
# on top, the iteration time (against GPUs; a log axis when it spans more
# than a decade) or the speed-up over the baseline (against the model,
# whose iteration times differ by orders of magnitude), a line per policy; a point whose memory is above the GPU's
# (memory_fits false) is circled in red: that run would not fit.
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nblocks=5; xlog=1; xlab='GPUs'" plots/memory.gp
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nblocks=5; xlog=0; nx=2; xtics='(\"llama3-8b\" 0, \"llama3-70b\" 1)'; xlab='model'" plots/memory.gp
# datafile: one block per policy, its quoted label first, then:
# x iteration_ms speedup memory_GiB over (x: GPUs, or the model's index;
# memory NaN where the model gives no activation bytes; over 1: does not
# fit).
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("nblocks")) nblocks = 1
if (!exists("xlog")) xlog = 1
if (!exists("nx")) nx = 1
if (!exists("xlab")) xlab = "GPUs"
set title
set multiplot layout 2,1 title fulltitle margins 0.1, 0.97, 0.2, 0.9 spacing 0, 0.12
if (xlog) {
    set logscale x 2
    set offsets graph 0.03, graph 0.03, 0, 0
} else {
    set xrange [-0.3:nx-0.7]
}
if (exists("xtics")) { eval("set xtics " . xtics) }
if (!exists("baseline")) baseline = "the baseline"
set xlabel xlab
unset key
if (xlog) {
    # iteration times over more than a decade (a latency-bound ring at
    # scale): a log axis, so that the lines near the baseline stay apart
    stats datafile using 2 nooutput
    if (STATS_min > 0 && STATS_max > 10 * STATS_min) { set logscale y 10 }
    set ylabel "iteration time (ms)"
    plot for [i=0:nblocks-1] datafile index i using 1:2 with linespoints lw 2 pt 7
} else {
    set ylabel "speed-up over " . baseline . " (x)"
    set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#555555"
    plot for [i=0:nblocks-1] datafile index i using 1:3 with linespoints lw 2 pt 7
    unset arrow 1
}
set key outside below center horizontal
set ylabel "peak memory per GPU (GiB)"
set yrange [*:*]
set logscale y 10
plot for [i=0:nblocks-1] datafile index i using 1:4 with linespoints lw 2 pt 7 title columnheader(1), \
     for [i=0:nblocks-1] datafile index i using 1:($5 > 0 ? $4 : NaN) with points pt 6 ps 2.5 lw 2 lc rgb "#cc0000" \
         title (i == 0 ? "above the GPU's memory" : "")
unset logscale y
unset multiplot
unset output
