# gab charts: gab plot a.json b.json
#
# Written by gab with its data in cmp.png.dat (one block per data set,
# described there). Edit freely and draw again with:  gnuplot cmp.png.gp

set terminal pngcairo noenhanced font "sans,9" size 900,630
set output 'cmp.png'
set datafile missing '?'
set grid
set key top left
set boxwidth 1 absolute
set multiplot layout 2,1 title 'gab plot a.json b.json'

# 1. Latency percentile distribution (right end: maximum)
set title 'Latency percentile distribution (right end: maximum)'
set key outside right top vertical
set xlabel 'percentile'
set ylabel 'latency (ms)'
set logscale x
unset logscale y
set xtics ('0%%' 1, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000, 'max' 100000)
set xrange [*:*]
set yrange [0:*]
plot 'cmp.png.dat' index 0 using 1:2 with lines linewidth 1.5 linecolor rgb '#1f77b4' dashtype 1 title 'before', \
     '' index 1 using 1:2 with lines linewidth 1.5 linecolor rgb '#ff7f0e' dashtype 1 title 'after'

# 2. Requests per second
set title 'Requests per second'
set xlabel 'second of the run'
set ylabel 'per second'
unset logscale x
unset logscale y
set xtics autofreq
set xrange [0:*]
set yrange [0:*]
plot 'cmp.png.dat' index 2 using 1:2 with boxes linecolor rgb '#1f77b4' dashtype 1 fill transparent solid 0.35 border title 'before requests', \
     '' index 3 using 1:2 with boxes linecolor rgb '#ff7f0e' dashtype 1 fill transparent solid 0.35 border title 'after requests'

unset multiplot
