# iteration_cdf.gp — the distribution of iteration times of a what-if run
# (variation, stragglers, faults, background): the fraction of measured
# iterations at most x ms long, a line per policy.
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nblocks=6" plots/iteration_cdf.gp
# datafile: one block per policy, its quoted label first, then:
# iteration_ms cumulative_fraction (sorted).
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("nblocks")) nblocks = 1
set xlabel "iteration time (ms)"
set ylabel "fraction of iterations"
set yrange [0:1.02]
set key bottom right
plot for [i=0:nblocks-1] datafile index i using 1:2 with steps lw 2 title columnheader(1)
unset output
