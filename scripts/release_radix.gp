# T(r) of the release per payload at N = 1024: seed 000's formula (lines)
# against the simulated k-ary release (points), and the pipelined formula.
# Input: the TSV of `grove model radix --curve` (payload bytes N r
# formula_us sim_us pipelined_formula_us). Called by scripts/release_radix.sh.
if (!exists("curve")) curve = 'docs/data/release-radix-curve.tsv'
if (!exists("output")) output = 'docs/release-radix-curves.svg'
set terminal svg size 1100,800 dynamic enhanced font 'sans,12'
set output output
set datafile separator "\t"
set datafile missing "nan"
set multiplot layout 2,3 title "Release time T(r) against radix r, N = 1024 (alpha 100 us, c 25 us, t 8, 10 GbE)"
set logscale x 2
set logscale y 10
set xlabel "radix r"
set ylabel "T (us)"
set key top left font ',9'
set xrange [2:1023]
payloads = "barrier 10KB 100KB 10MB 256MB"
do for [i=1:5] {
  p = word(payloads, i)
  set title p
  plot curve using ((strcol(1) eq p && $3 == 1024) ? $4 : NaN):5 with lines lw 2 title 'seed formula', \
       curve using ((strcol(1) eq p && $3 == 1024) ? $4 : NaN):6 with points pt 7 ps 0.3 title 'simulated', \
       curve using ((strcol(1) eq p && $3 == 1024 && $2 > 65536) ? $4 : NaN):7 with lines dt 2 title 'pipelined formula'
}
unset multiplot
