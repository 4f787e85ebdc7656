#!/usr/bin/env bash
# Final build: background check, then a long hunt for the fast copy state.
cd /work/quiet/s29
./bg.sh /work/quiet/s29/bg2
SECONDS_TOTAL=540 ./hunt10.sh /work/quiet/s29/hunt11
