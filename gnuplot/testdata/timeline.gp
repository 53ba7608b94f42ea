# gab charts: gab -t 3 --json x.json
#
# Written by gab with its data in tl.png.dat (one block per data set,
# described there). Edit freely and draw again with:  gnuplot tl.png.gp

set terminal pngcairo noenhanced font "sans,9" size 900,1230
set output 'tl.png'
set datafile missing '?'
set grid
set key top left
set boxwidth 1 absolute
set multiplot layout 4,1 title 'gab -t 3 --json x.json'

# 1. Latency of each request over time: all 12 requests, µs precision
set title 'Latency of each request over time: all 12 requests, µs precision'
set xlabel 'time since the start of the run (s)'
set ylabel 'latency (ms)'
unset logscale x
set xtics autofreq
set xrange [0:*]
set yrange [0:*]
plot 'tl.png.dat' index 0 using 1:2 with points pointtype 7 pointsize 0.25 linecolor 1 notitle

# 2. Latency percentile distribution (right end: maximum), exact (µs)
set title 'Latency percentile distribution (right end: maximum), exact (µs)'
set xlabel 'percentile'
set ylabel 'latency (ms)'
set logscale x
set xtics ('0%%' 1, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000, 'max' 100000)
set xrange [*:*]
set yrange [0:*]
plot 'tl.png.dat' index 1 using 1:2 with lines linewidth 1.5 linecolor 1 notitle

# 3. Latency per interval of the timeline: p50 (solid), p99 (dashed), maximum (dots)
set title 'Latency per interval of the timeline: p50 (solid), p99 (dashed), maximum (dots)'
set xlabel 'time since the start of the run (s)'
set ylabel 'latency (ms)'
unset logscale x
set xtics autofreq
set xrange [0:*]
set yrange [0:*]
plot 'tl.png.dat' index 2 using 1:2 with lines linewidth 1.5 linecolor 1 title 'p50', \
     '' index 3 using 1:2 with lines linewidth 1.5 linecolor 1 dashtype 2 title 'p99', \
     '' index 4 using 1:2 with points pointtype 7 pointsize 0.25 linecolor 1 title 'max'

# 4. Requests and failures per second, per interval of the timeline
set title 'Requests and failures per second, per interval of the timeline'
set xlabel 'time since the start of the run (s)'
set ylabel 'per second'
unset logscale x
set xtics autofreq
set xrange [0:*]
set yrange [0:*]
plot 'tl.png.dat' index 5 using 1:2:3 with boxes linecolor 1 fill transparent solid 0.35 border title 'requests', \
     '' index 6 using 1:2:3 with boxes linecolor 2 fill transparent solid 0.35 border title 'failures'

unset multiplot
