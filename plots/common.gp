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
set border lw 1
