# common.gp — terminal, output and title shared by every arsim figure.
# Inputs: outfile (…png or …svg; fmt='png'|'svg' overrides the suffix),
# plottitle and subtitle (optional). Loaded first by every script.
if (!exists("fmt")) fmt = (outfile[strlen(outfile)-2:] eq "svg") ? "svg" : "png"
if (fmt eq "svg") {
    set terminal svg size 960,600 dynamic font "Sans,11" background rgb "white"
} else {
    set terminal pngcairo size 960,600 font "Sans,10" background rgb "white"
}
set output outfile
set termoption noenhanced
if (!exists("plottitle")) plottitle = ""
if (!exists("subtitle")) subtitle = ""
fulltitle = plottitle . ((subtitle eq "") ? "" : "\n" . subtitle)
set title fulltitle
set grid lc rgb "#dddddd"
set key outside below center horizontal
# Past eight lines the colours repeat: lines 9 to 16 take the colours of 1 to 8, dashed.
do for [i=1:8] { set linetype i + 8 linecolor i dashtype 2 }
set border lw 1
