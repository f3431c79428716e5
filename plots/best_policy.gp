# best_policy.gp — heat map over two varying dimensions: in each cell the
# policy with the shortest iteration, coloured by its margin over the
# runner-up (runner-up iteration time / best - 1, in %).
#   gnuplot -e "datafile='x.dat'; outfile='x.png'; nx=4; ny=4; xtics='(\"1Gbps\" 0, ...)'; ytics='(...)'; xlab='...'; ylab='...'" plots/best_policy.gp
# datafile: x_index y_index margin_pct "best policy" "margin label", one cell per line.
if (!exists("scriptdir")) scriptdir = "plots"
load scriptdir . "/common.gp"
if (!exists("xlab")) xlab = "x"
if (!exists("ylab")) ylab = "y"
set xlabel xlab
set ylabel ylab
if (exists("xtics")) { eval("set xtics " . xtics) }
if (exists("ytics")) { eval("set ytics " . ytics) }
set xrange [-0.5:nx-0.5]
set yrange [-0.5:ny-0.5]
set grid noxtics noytics
set cblabel "margin over the runner-up (%)"
set cbrange [0:*]
set palette defined (0 "#f7fbff", 1 "#9ecae1", 2 "#2171b5")
unset key
plot datafile using 1:2:3 with image, \
     '' using 1:2:4 with labels offset 0,0.7 font ",9", \
     '' using 1:2:5 with labels offset 0,-0.7 font ",9"
unset output
