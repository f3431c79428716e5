# timeline.gp — one training iteration from a run's trace: compute spans
# and all-reduce spans per rank.
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nrows=4; ytics='(\"rank 0 compute\" 0, ...)'" plots/timeline.gp
# datafile: start_ms end_ms row track(0 compute, 1 comm) "name", one span per line.
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("nrows")) nrows = 2
if (exists("ytics")) { eval("set ytics " . ytics) }
set yrange [-0.6:nrows-0.4] reverse
set xlabel "time since the iteration started (ms)"
set grid xtics noytics
set style fill solid 0.85 border rgb "#333333"
plot datafile using (($1+$2)/2):3:(($2-$1)/2):(0.38):($4 == 0 ? 0x4878a8 : 0xd9544f) with boxxyerror lc rgb variable notitle, \
     NaN with boxes lc rgb "#4878a8" title "compute", \
     NaN with boxes lc rgb "#d9544f" title "all-reduce"
unset output
