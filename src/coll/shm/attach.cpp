// shm::attach: makes and maps a communicator's shared-memory segment.
//
// Rank 0 creates a POSIX shared-memory object with a name no other job uses
// (its pid and start time, context id, attempt: bootstrap/job_identity.hpp,
// so `grove run` can remove one whose maker died), sizes it and writes the header; the name
// travels in a first exchange, every other member maps it and checks the
// header, a second exchange tells everyone whether all did, and rank 0 then
// unlinks the name (the mappings live on; nothing is left in /dev/shm even
// if the job is killed later). Any failure leaves the communicator without a
// segment on every member alike: its calls take the schedule path.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <type_traits>

#include <fmt/format.h>

#include "bootstrap/job_identity.hpp"
#include "coll/shm/group.hpp"
#include "core/params.hpp"

namespace grove::shm {
namespace {

const params::BoolParam shm_collectives{
    "shm_collectives", true,
    "communicators whose ranks share a host get a shared-memory segment for small blocking "
    "collectives (see shm_max_bytes)"};
constexpr uint64_t kMaxSlot = uint64_t{1} << 30;

const params::BytesParam shm_slot_bytes{
    "shm_slot_bytes", 256 * 1024, 4096, kMaxSlot,
    "bytes of each of a rank's two shared-memory slots; a call uses the segment only if what a "
    "rank writes (a block, or all blocks for scatter and alltoall) fits"};

struct Offer {
  int32_t world_rank = -1;
  int32_t ok = 0;
  uint64_t slot_bytes = 0;
  char name[64] = {};  // job::segment_name(): carries its maker's identity
};

struct Mapped {
  void* base = nullptr;
  size_t length = 0;
  std::string error;  // empty when mapped
};

Mapped map_fd(int fd, size_t length) {
  Mapped m;
  m.length = length;
  void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    m.error = fmt::format("mmap of {} bytes: {}", length, std::strerror(errno));
    return m;
  }
  m.base = p;
  return m;
}

Mapped create(Offer& offer, int members, uint32_t context) {
  const size_t length = segment_length(members, offer.slot_bytes);
  Mapped m;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::string name = job::segment_name(context, attempt);
    if (name.size() >= sizeof(offer.name)) {
      m.error = fmt::format("segment name {} is too long", name);
      return m;
    }
    std::memcpy(offer.name, name.c_str(), name.size() + 1);
    const int fd = ::shm_open(offer.name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      m.error = fmt::format("shm_open {}: {}", offer.name, std::strerror(errno));
      return m;
    }
    // Reserved now, not on first touch: a full /dev/shm then fails here,
    // with a message, instead of killing a rank with SIGBUS mid-call.
    if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(length)); err != 0) {
      m.error =
          fmt::format("reserving {} bytes for {}: {}", length, offer.name, std::strerror(err));
      ::close(fd);
      ::shm_unlink(offer.name);
      return m;
    }
    m = map_fd(fd, length);
    ::close(fd);
    if (!m.error.empty()) {
      ::shm_unlink(offer.name);
      return m;
    }
    auto* header = new (m.base) SegmentHeader;
    header->magic = kSegmentMagic;
    header->version = kSegmentVersion;
    header->members = static_cast<uint32_t>(members);
    header->slot_bytes = offer.slot_bytes;
    // Control lines start zeroed (a fresh object reads as zeros): every
    // member has entered call 0.
    return m;
  }
  m.error = "no free shared-memory name after 8 attempts";
  return m;
}

Mapped open_existing(const Offer& leader, int members) {
  const size_t length = segment_length(members, leader.slot_bytes);
  Mapped m;
  const int fd = ::shm_open(leader.name, O_RDWR, 0);
  if (fd < 0) {
    m.error = fmt::format("shm_open {}: {}", leader.name, std::strerror(errno));
    return m;
  }
  m = map_fd(fd, length);
  ::close(fd);
  if (!m.error.empty()) return m;
  const auto* header = static_cast<const SegmentHeader*>(m.base);
  if (header->magic != kSegmentMagic || header->version != kSegmentVersion ||
      header->members != static_cast<uint32_t>(members) ||
      header->slot_bytes != leader.slot_bytes) {
    m.error = fmt::format("{}: header does not describe this communicator", leader.name);
    ::munmap(m.base, m.length);
    m.base = nullptr;
  }
  return m;
}

}  // namespace

namespace {

template <class Record>
std::vector<Record> exchange_records(const AttachContext& comm, const Record& mine,
                                     const std::string& what) {
  static_assert(std::is_trivially_copyable_v<Record>);
  std::vector<Record> all(static_cast<size_t>(comm.size));
  comm.exchange(std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(all)), what);
  return all;
}

}  // namespace

std::shared_ptr<Group> attach(const AttachContext& comm, bool same_host) {
  // Every member reads the same parameters, so all return here alike.
  if (!same_host || comm.size < 2 || !shm_collectives.get()) return nullptr;
  const int members = comm.size;
  const bool leader = comm.rank == 0;

  Offer mine;
  mine.world_rank = comm.world_rank;
  mine.slot_bytes = shm_slot_bytes.get();
  Mapped mapped;
  if (leader) {
    mapped = create(mine, members, comm.context);
    mine.ok = mapped.error.empty() ? 1 : 0;
  }
  const std::vector<Offer> offers = exchange_records(comm, mine, "shared-memory segment (name)");
  // Bytes from another process: terminate the name and bound the size
  // before using either.
  Offer from_leader = offers[0];
  from_leader.name[sizeof(from_leader.name) - 1] = '\0';
  const bool sane = from_leader.slot_bytes >= 4096 && from_leader.slot_bytes <= kMaxSlot;
  if (from_leader.ok == 0) {
    if (leader) fmt::print(stderr, "grove: shared-memory collectives off: {}\n", mapped.error);
    return nullptr;
  }
  if (!leader && sane) mapped = open_existing(from_leader, members);
  if (!leader && !sane) {
    mapped.error = fmt::format("rank 0 announced slots of {} bytes", from_leader.slot_bytes);
  }

  const int32_t ok = mapped.error.empty() ? 1 : 0;
  const std::vector<int32_t> oks = exchange_records(comm, ok, "shared-memory segment (ok)");
  if (leader) ::shm_unlink(from_leader.name);
  for (int m = 0; m < members; ++m) {
    if (oks[static_cast<size_t>(m)] != 0) continue;
    if (!mapped.error.empty()) {
      fmt::print(stderr, "grove: rank {}: shared-memory collectives off: {}\n", comm.rank,
                 mapped.error);
    }
    if (mapped.base != nullptr) ::munmap(mapped.base, mapped.length);
    return nullptr;
  }
  std::vector<int> world_ranks;
  world_ranks.reserve(offers.size());
  for (const Offer& o : offers)
    world_ranks.push_back(o.world_rank);
  return std::make_shared<Group>(comm.rank, comm.size, *comm.transport, comm.departed, mapped.base,
                                 mapped.length, from_leader.slot_bytes, std::move(world_ranks));
}

}  // namespace grove::shm
