# iteration_vs_batch.gp — steady-state iteration time against per-GPU batch
# size, a line per policy (the thesis's figure).
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nblocks=6" plots/iteration_vs_batch.gp
# datafile: one block per policy (blocks separated by two blank lines), its
# first line the quoted policy label, then: batch iteration_ms speedup samples_per_s.
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("nblocks")) nblocks = 1
set xlabel "per-GPU batch size (samples)"
set ylabel "iteration time (ms)"
set logscale x 2
set offsets graph 0.03, graph 0.03, 0, 0
set yrange [0:*]
plot for [i=0:nblocks-1] datafile index i using 1:2 with linespoints lw 2 pt 7 ps 1.2 title columnheader(1)
unset output
