# T(r) of the release per payload at N = 1024: seed 000's formula (lines)
# against the simulated k-ary release (points), and the pipelined release
# (formula dashed, simulated circles; segments of 64 KiB, at most 64).
# Input: the TSV of `grove model radix --curve` (payload bytes N r
# formula_us sim_us pipelined_formula_us pipelined_sim_us). Called by
# scripts/release_radix.sh.
if (!exists("curve")) curve = 'docs/data/release-radix-curve.tsv'
if (!exists("output")) output = 'docs/release-radix-curves.png'
set terminal pngcairo size 1200,820 font 'sans,10'
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
       curve using ((strcol(1) eq p && $3 == 1024 && $2 > 65536) ? $4 : NaN):7 with lines dt 2 title 'pipelined formula', \
       curve using ((strcol(1) eq p && $3 == 1024 && $2 > 65536) ? $4 : NaN):8 with points pt 6 ps 1 title 'pipelined, simulated'
}
unset multiplot
