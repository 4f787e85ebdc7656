#include "transport/sim/stream_table.hpp"

namespace grove::sim {
namespace {

constexpr size_t kInitialSlots = 64;

}  // namespace

bool Stream::empty() const {
  return posted.empty() && arrived_head == UINT32_MAX;
}

StreamTable::StreamTable() : slots_(kInitialSlots, Slot{{}, kNoStream}) {}

size_t StreamTable::home(const StreamKey& k) const {
  uint64_t h =
      (static_cast<uint64_t>(static_cast<uint32_t>(k.dst)) << 32 | static_cast<uint32_t>(k.src)) *
      0x9E3779B97F4A7C15ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return static_cast<size_t>(h) & (slots_.size() - 1);
}

uint32_t StreamTable::find(const StreamKey& key) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = home(key);; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.stream == kNoStream) return kNoStream;
    if (s.key == key) return s.stream;
  }
}

uint32_t StreamTable::find_or_add(const StreamKey& key) {
  if ((used_ + 1) * 2 > slots_.size()) grow();
  const size_t mask = slots_.size() - 1;
  size_t i = home(key);
  for (; slots_[i].stream != kNoStream; i = (i + 1) & mask)
    if (slots_[i].key == key) return slots_[i].stream;
  uint32_t stream;
  if (!free_.empty()) {
    stream = free_.back();
    free_.pop_back();
    keys_[stream] = key;
  } else {
    stream = static_cast<uint32_t>(streams_.size());
    streams_.emplace_back();
    keys_.push_back(key);
  }
  Stream& s = streams_[stream];
  s.arrived_head = s.arrived_tail = UINT32_MAX;
  slots_[i] = Slot{key, stream};
  ++used_;
  return stream;
}

void StreamTable::remove(uint32_t stream, const StreamKey& key) {
  const size_t mask = slots_.size() - 1;
  size_t i = home(key);
  while (slots_[i].stream != stream)
    i = (i + 1) & mask;
  // Backward-shift deletion: move later entries of the probe run into the
  // hole when their home is not between the hole and them, so every entry
  // stays reachable from its home without tombstones.
  for (size_t j = (i + 1) & mask; slots_[j].stream != kNoStream; j = (j + 1) & mask) {
    const size_t h = home(slots_[j].key);
    const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
    if (stays) continue;
    slots_[i] = slots_[j];
    i = j;
  }
  slots_[i].stream = kNoStream;
  --used_;
  free_.push_back(stream);
}

void StreamTable::grow() {
  std::vector<Slot> old(slots_.size() * 2, Slot{{}, kNoStream});
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.stream == kNoStream) continue;
    size_t i = home(s.key);
    while (slots_[i].stream != kNoStream)
      i = (i + 1) & mask;
    slots_[i] = s;
  }
}

std::vector<uint32_t> StreamTable::live() const {
  std::vector<uint32_t> out;
  for (const Slot& s : slots_)
    if (s.stream != kNoStream) out.push_back(s.stream);
  return out;
}

}  // namespace grove::sim
