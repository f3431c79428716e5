# breakdown.gp — where an iteration's time goes, per policy (and batch):
# stacked bars of compute, communication hidden under compute, and
# communication the compute stream waited for (exposed).
#   gnuplot -e "datafile='x.dat'; outfile='x.png'" plots/breakdown.gp
# datafile: "label" compute_ms hidden_comm_ms exposed_comm_ms, one bar per line.
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.75
set xtics rotate by -40 left nomirror
set bmargin 7
set ylabel "time per iteration (ms)"
set yrange [0:*]
set grid noxtics ytics
plot datafile using 2:xtic(1) title "compute" lc rgb "#4878a8", \
     '' using 3 title "hidden communication" lc rgb "#9ccf7a", \
     '' using 4 title "exposed communication" lc rgb "#d9544f"
unset output
