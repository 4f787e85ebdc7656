#include "coll/halving_steps.hpp"

namespace grove::coll {
namespace {

// Chunks [first, first + count) of a packed chunk layout, inside `base`.
Region chunk_range(const BlockLayout& chunks, Region base, int first, int count) {
  const auto a = static_cast<size_t>(first);
  const auto b = static_cast<size_t>(first + count);
  return sub_region(base, chunks.span_offset(a), chunks.span_length(a, b));
}

}  // namespace

Phase fold_in(Plan& plan, const Fold& fold, const Ranks& ranks, int relative, Region mine,
              Region acc, Region incoming, int channel, const Deps& after) {
  Phase phase;
  if (mine.length == 0) return phase;
  if (fold.sits_out(relative)) {
    const StepId sent = plan.send(ranks.real(relative - 1), channel, mine, after);
    phase.all.add(sent);
    phase.sends.add(sent);
    phase.done.add(sent);
  } else if (fold.absorbs(relative)) {
    const Region in = sub_region(incoming, 0, acc.length);
    const StepId got = plan.recv(ranks.real(relative + 1), channel, in, after);
    const auto reduced = plan.reduce(in, acc, Deps(after).add(got));
    phase.all.add(got).add(reduced);
    phase.done.add(reduced);
  }
  return phase;
}

Phase recursive_halving(Plan& plan, const Fold& fold, const Ranks& ranks, int v,
                        const BlockLayout& chunks, Region acc, Region incoming, int channel_base,
                        const Deps& after) {
  Phase phase;
  Deps ready = after;  // acc's kept range is current after these
  int low = 0;         // first chunk of the current range
  int t = 0;
  for (int mask = fold.p2 / 2; mask >= 1; mask /= 2, ++t) {
    const int peer = ranks.real(fold.real_of(v ^ mask));
    const bool upper = (v & mask) != 0;
    const int keep = upper ? low + mask : low;
    const int give = upper ? low : low + mask;
    const Region given = chunk_range(chunks, acc, give, mask);
    const Region kept = chunk_range(chunks, acc, keep, mask);
    const Region arriving = chunk_range(chunks, incoming, keep, mask);
    if (given.length > 0) {
      const StepId sent = plan.send(peer, channel_base + t, given, ready);
      phase.all.add(sent);
      phase.sends.add(sent);
    }
    if (kept.length > 0) {
      // `incoming` at the kept range was last read by the previous reduce.
      const StepId got = plan.recv(peer, channel_base + t, arriving, ready);
      const auto reduced = plan.reduce(arriving, kept, Deps(ready).add(got));
      phase.all.add(got).add(reduced);
      ready = Deps().add(reduced);
    }
    low = keep;
  }
  phase.done = ready;
  return phase;
}

Phase doubling_allgather(Plan& plan, const Fold& fold, const Ranks& ranks, int v,
                         const BlockLayout& chunks, Region acc, int channel_base, const Deps& have,
                         const Deps& overwrite_after) {
  Phase phase;
  Deps ready = have;
  int t = 0;
  for (int mask = 1; mask < fold.p2; mask *= 2, ++t) {
    const int partner = v ^ mask;
    const int peer = ranks.real(fold.real_of(partner));
    const Region theirs = chunk_range(chunks, acc, partner & ~(mask - 1), mask);
    const Region mine = chunk_range(chunks, acc, v & ~(mask - 1), mask);
    std::optional<StepId> got;
    if (theirs.length > 0) got = plan.recv(peer, channel_base + t, theirs, overwrite_after);
    if (mine.length > 0) {
      const StepId sent = plan.send(peer, channel_base + t, mine, ready);
      phase.all.add(sent);
      phase.sends.add(sent);
    }
    phase.all.add(got);
    ready.add(got);
  }
  phase.done = ready;
  return phase;
}

Phase binomial_gather(Plan& plan, const Fold& fold, const Ranks& ranks, int v,
                      const BlockLayout& chunks, Region acc, int channel_base, const Deps& have,
                      const Deps& overwrite_after) {
  Phase phase;
  Deps ready = have;
  int t = 0;
  for (int mask = 1; mask < fold.p2; mask *= 2, ++t) {
    if ((v & mask) != 0) {
      const Region mine = chunk_range(chunks, acc, v, mask);
      if (mine.length > 0) {
        const StepId sent =
            plan.send(ranks.real(fold.real_of(v - mask)), channel_base + t, mine, ready);
        phase.all.add(sent);
        phase.sends.add(sent);
      }
      break;
    }
    const Region theirs = chunk_range(chunks, acc, v + mask, mask);
    if (theirs.length > 0) {
      const StepId got =
          plan.recv(ranks.real(fold.real_of(v + mask)), channel_base + t, theirs, overwrite_after);
      phase.all.add(got);
      ready.add(got);
    }
  }
  phase.done = ready;
  return phase;
}

Phase fold_out(Plan& plan, const Fold& fold, const Ranks& ranks, int relative, Region result,
               Region into, int channel, const Deps& have, const Deps& into_after) {
  Phase phase;
  if (fold.absorbs(relative) && result.length > 0) {
    const StepId sent = plan.send(ranks.real(relative + 1), channel, result, have);
    phase.all.add(sent);
    phase.sends.add(sent);
    phase.done.add(sent);
  } else if (fold.sits_out(relative) && into.length > 0) {
    const StepId got = plan.recv(ranks.real(relative - 1), channel, into, into_after);
    phase.all.add(got);
    phase.done.add(got);
  }
  return phase;
}

}  // namespace grove::coll
