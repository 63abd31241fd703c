# The axes bench-plot and cost-plot share: a comma-separated table, the
# queue depth on a log-2 x axis from 1 to 256, y from 0.
set datafile separator ','
set logscale x 2
set xrange [0.8:320]
set yrange [0:*]
set grid
