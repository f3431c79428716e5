# calib-scatter.gp — `arsim compare --plot`: predicted against measured
# time on log-log axes, a point set per case kind (pingpong, reduce, each
# all-reduce algorithm, iteration); held-out cases filled, fitted cases
# hollow. The solid diagonal is a perfect prediction, the dashed ones ±10%.
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nblocks=6" plots/calib-scatter.gp
# datafile: one block per kind (blocks separated by two blank lines), its
# first line the quoted label, then: measured_ms predicted_ms bytes fitted(0|1) rel_error_pct.
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("nblocks")) nblocks = 1
# a colour per block; past the 8 colours, another shape (filled / hollow pairs)
filled(i) = word("7 5 9 11 13", i / 8 % 5 + 1) + 0
set xlabel "measured time (ms)"
set ylabel "predicted time (ms)"
set logscale xy
set size ratio -1
set key outside right top vertical
plot for [i=0:nblocks-1] datafile index i using 1:($4 > 0 ? 1/0 : $2) with points pt filled(i) ps 1.3 lc i+1 \
         title columnheader(1), \
     for [i=0:nblocks-1] datafile index i using 1:($4 > 0 ? $2 : 1/0) with points pt filled(i)-1 ps 1.3 lw 1.5 lc i+1 notitle, \
     NaN with points pt 7 lc rgb "#333333" title "filled: held out", \
     NaN with points pt 6 lc rgb "#333333" title "hollow: fitted", \
     x with lines lc rgb "#555555" lw 1 title "predicted = measured", \
     1.1 * x with lines lc rgb "#999999" dt 2 title "±10%", \
     x / 1.1 with lines lc rgb "#999999" dt 2 notitle
unset output
