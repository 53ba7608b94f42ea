# gab charts: gab -t 3 --json x.json
#
# Written by gab with its data in tl.png.dat (one block per data set,
# described there). Edit freely and draw again with:  gnuplot tl.png.gp

set terminal pngcairo noenhanced font "sans,9" size 900,1530
set output 'tl.png'
set datafile missing '?'
set grid
set key top left
set boxwidth 1 absolute
set multiplot layout 5,1 title 'gab -t 3 --json x.json'

# 1. Requests and failures per second per interval
set title 'Requests and failures per second per interval'
set xlabel 'time since the start of the run (s)'
set ylabel 'per second'
unset logscale x
unset logscale y
set xtics autofreq
set xrange [0:3.2]
set yrange [0:*]
plot 'tl.png.dat' index 0 using 1:2:3 with boxes linecolor rgb '#1f77b4' dashtype 1 fill transparent solid 0.35 border title 'requests', \
     '' index 1 using 1:2:3 with boxes linecolor rgb '#ff7f0e' dashtype 1 fill transparent solid 0.35 border title 'failures'

# 2. Latency per interval of the timeline: p50, p90 (dashed), p99, maximum (dots)
set title 'Latency per interval of the timeline: p50, p90 (dashed), p99, maximum (dots)'
set xlabel 'time since the start of the run (s)'
set ylabel 'latency (ms)'
unset logscale x
unset logscale y
set xtics autofreq
set xrange [0:3.2]
set yrange [0:*]
plot 'tl.png.dat' index 2 using 1:2 with lines linewidth 1.5 linecolor rgb '#1f77b4' dashtype 1 title 'p50', \
     '' index 3 using 1:2 with lines linewidth 1.5 linecolor rgb '#ff7f0e' dashtype (6,4) title 'p90', \
     '' index 4 using 1:2 with lines linewidth 1.5 linecolor rgb '#2ca02c' dashtype 1 title 'p99', \
     '' index 5 using 1:2 with points pointtype 7 pointsize 0.25 linecolor rgb '#d62728' dashtype 1 title 'max'

# 3. Latency of each request over time
set title 'Latency of each request over time'
set xlabel 'time since the start of the run (s)'
set ylabel 'latency (ms)'
unset logscale x
unset logscale y
set xtics autofreq
set xrange [0:3.2]
set yrange [0:*]
plot 'tl.png.dat' index 6 using 1:2 with points pointtype 7 pointsize 0.25 linecolor rgb '#1f77b4' dashtype 1 notitle

# 4. Latency percentile distribution (right end: maximum), exact (µs)
set title 'Latency percentile distribution (right end: maximum), exact (µs)'
set xlabel 'percentile'
set ylabel 'latency (ms)'
set logscale x
unset logscale y
set xtics ('0%%' 1, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000, 'max' 100000)
set xrange [*:*]
set yrange [0:*]
plot 'tl.png.dat' index 7 using 1:2 with lines linewidth 1.5 linecolor rgb '#1f77b4' dashtype 1 notitle

# 5. Latency against throughput, one dot per interval of the timeline
set title 'Latency against throughput, one dot per interval of the timeline'
set xlabel 'requests per second in the interval'
set ylabel 'latency (ms)'
unset logscale x
unset logscale y
set xtics autofreq
set xrange [2.9:5.1]
set yrange [0:*]
plot 'tl.png.dat' index 8 using 1:2 with points pointtype 7 pointsize 1.5 linecolor rgb '#1f77b4' dashtype 1 title 'p50', \
     '' index 9 using 1:2 with points pointtype 7 pointsize 1.5 linecolor rgb '#ff7f0e' dashtype 1 title 'p99'

unset multiplot
