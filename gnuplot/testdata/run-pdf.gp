# gab charts: gab -n 12 http://127.0.0.1/
#
# Written by gab with its data in run.pdf.dat (one block per data set,
# described there). Edit freely and draw again with:  gnuplot run.pdf.gp

set terminal pdfcairo noenhanced font "sans,8" size 7in,8.100000000000001in
set output 'run.pdf'
set datafile missing '?'
set grid
set key top left
set boxwidth 1 absolute
set multiplot layout 3,1 title 'gab -n 12 http://127.0.0.1/'

# 1. Latency of each request over time
set title 'Latency of each request over time'
set xlabel 'time since the start of the run (s)'
set ylabel 'latency (ms)'
unset logscale x
unset logscale y
set xtics autofreq
set xrange [0:3.2]
set yrange [0:*]
plot 'run.pdf.dat' index 0 using 1:2 with points pointtype 7 pointsize 0.25 linecolor rgb '#1f77b4' dashtype 1 notitle

# 2. Latency percentile distribution (right end: maximum), exact (µs)
set title 'Latency percentile distribution (right end: maximum), exact (µs)'
set xlabel 'percentile'
set ylabel 'latency (ms)'
set logscale x
unset logscale y
set xtics ('0%%' 1, '90%%' 10, '99%%' 100, '99.9%%' 1000, '99.99%%' 10000, 'max' 100000)
set xrange [*:*]
set yrange [0:*]
plot 'run.pdf.dat' index 1 using 1:2 with lines linewidth 1.5 linecolor rgb '#1f77b4' dashtype 1 notitle

# 3. Requests per second
set title 'Requests per second'
set xlabel 'second of the run'
set ylabel 'per second'
unset logscale x
unset logscale y
set xtics autofreq
set xrange [0:*]
set yrange [0:*]
plot 'run.pdf.dat' index 2 using 1:2 with boxes linecolor rgb '#1f77b4' dashtype 1 fill transparent solid 0.35 border title 'requests'

unset multiplot
