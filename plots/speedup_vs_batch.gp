# speedup_vs_batch.gp — speed-up over the baseline policy (its iteration
# time / the policy's) against per-GPU batch size, a line per policy.
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nblocks=6; baseline='pytorch-ddp'" plots/speedup_vs_batch.gp
# datafile: as iteration_vs_batch.gp's (column 3 is the speed-up).
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("nblocks")) nblocks = 1
if (!exists("baseline")) baseline = "the baseline"
set xlabel "per-GPU batch size (samples)"
set ylabel "speed-up over " . baseline . " (x)"
set logscale x 2
set offsets graph 0.03, graph 0.03, 0, 0
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb "#555555"
plot for [i=0:nblocks-1] datafile index i using 1:3 with linespoints lw 2 pt 7 ps 1.2 title columnheader(1)
unset output
