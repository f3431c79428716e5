# calib-error.gp — `arsim compare --plot`: relative prediction error
# against message or vector size, a line per case kind (pingpong, reduce,
# each all-reduce algorithm); held-out cases filled, fitted cases hollow;
# dashed lines at ±10%.
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nblocks=6" plots/calib-error.gp
# datafile: as calib-scatter.gp's (measured_ms predicted_ms bytes fitted rel_error_pct),
# without iteration cases (they have no size); each block sorted by size.
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("nblocks")) nblocks = 1
# a colour per block; past the 8 colours, another shape (filled / hollow pairs)
filled(i) = word("7 5 9 11 13", i / 8 % 5 + 1) + 0
set xlabel "size (bytes)"
set ylabel "(predicted - measured) / measured (%)"
set logscale x 2
set format x "%.0b %BB"
set key outside right top vertical
plot for [i=0:nblocks-1] datafile index i using 3:5 with lines lw 1.5 lc i+1 title columnheader(1), \
     for [i=0:nblocks-1] datafile index i using 3:($4 > 0 ? 1/0 : $5) with points pt filled(i) ps 1.2 lc i+1 notitle, \
     for [i=0:nblocks-1] datafile index i using 3:($4 > 0 ? $5 : 1/0) with points pt filled(i)-1 ps 1.2 lw 1.5 lc i+1 notitle, \
     NaN with points pt 7 lc rgb "#333333" title "filled: held out", \
     NaN with points pt 6 lc rgb "#333333" title "hollow: fitted", \
     0 with lines lc rgb "#555555" notitle, \
     10 with lines lc rgb "#999999" dt 2 title "±10%", \
     -10 with lines lc rgb "#999999" dt 2 notitle
unset output
