# speedup_vs_whatif.gp — speed-up over the baseline policy (top) and the
# mean iteration time (bottom) against a swept what-if key (a straggler's
# slowdown, variation.cv, a fault's bandwidth, a background load), a line
# per policy.
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nblocks=6; nx=4; xtics='(\"1\" 0, \"1.2\" 1)'; xlab='stragglers.0.slowdown'; baseline='ddp'" plots/speedup_vs_whatif.gp
# datafile: one block per policy, its quoted label first, then:
# x_index speedup iteration_ms.
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("nblocks")) nblocks = 1
if (!exists("nx")) nx = 1
if (!exists("xlab")) xlab = "what-if key"
if (!exists("baseline")) baseline = "the baseline"
set title
set multiplot layout 2,1 title fulltitle
set xrange [-0.3:nx-0.7]
if (exists("xtics")) { eval("set xtics " . xtics) }
set xlabel xlab
set ylabel "speed-up over " . baseline . " (x)"
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#555555"
plot for [i=0:nblocks-1] datafile index i using 1:2 with linespoints lw 2 pt 7 title columnheader(1)
unset arrow 1
set ylabel "iteration time (ms)"
set yrange [0:*]
plot for [i=0:nblocks-1] datafile index i using 1:3 with linespoints lw 2 pt 7 title columnheader(1)
unset multiplot
unset output
