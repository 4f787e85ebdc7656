// shm::attach: makes and maps a communicator's shared-memory segment.
//
// Three small exchanges over the communicator (docs/shm.md, "Segment"):
// 1. rank 0 announces the name of the POSIX shared-memory object it is
//    about to create and the slot size; the name carries rank 0's identity
//    (pid and start time: bootstrap/job_identity.hpp, so `grove run` can
//    remove an object whose maker died), the context id and a number this
//    process never uses twice, so no other process makes that name;
// 2. rank 0 creates the object, sizes it, maps it, writes the header, and
//    says whether it could;
// 3. every other member maps it and checks the header, and all say
//    whether they could, and whether they could read every other member's
//    memory with process_vm_readv (the single-copy path: shm/cma.hpp; each
//    member said in exchange 1 where its probe word is).
// Then every member unlinks the name (the mappings live on: nothing is left
// in /dev/shm whatever happens to the job later). Any failure leaves the
// communicator without a segment on every member alike: its calls take the
// schedule path. A failed probe leaves it without the single-copy path on
// every member alike (calls then use the slots or the schedule path).
//
// Invariant: what this function created or mapped is unlinked and unmapped
// on every way out of it, an exception from an exchange included (a member
// that departed during set-up), except the mapping handed to the Group.
// Every member knows the name before the object exists, so a member that
// survives rank 0 removes what rank 0 made: an object outlives set-up only
// if every member that knew its name died (the launcher's sweep of
// segments whose job is gone is for that).

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "bootstrap/job_identity.hpp"
#include "coll/shm/cma.hpp"
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

// Exchange 1: rank 0's announcement, and where every member's probe word is.
struct Announcement {
  uint64_t slot_bytes = 0;
  char name[64] = {};  // job::segment_name(): carries its maker's identity
  ProbeTarget probe;   // every member's own
};

// Exchange 3: whether the member mapped the segment, and what it found
// when it read the other members' probe words.
struct Mapping {
  int32_t mapped = 0;
  int32_t reserved = 0;
  ProbeResult probe;
};

// The reason CMA is off is printed once per process, not per communicator.
std::atomic<bool> cma_off_printed{false};

// Segments this process has named: the last part of every name, so that no
// two set-ups in one process (two sessions, one after the other, reuse
// context ids) ever name the same object.
std::atomic<int> segments_named{0};

// Whether `name` has the form job::segment_name() gives: "/grove-" and no
// other '/'.
bool segment_name_form(const std::string& name) {
  return name.size() > 1 && name[0] == '/' &&
         std::string_view(name).substr(1).starts_with(job::kSegmentPrefix) &&
         name.find('/', 1) == std::string::npos;
}

struct Mapped {
  void* base = nullptr;
  size_t length = 0;
  std::string error;  // empty when mapped
};

// What this member holds of a segment being set up: the mapping until it is
// handed to the Group, and the name until it is unlinked. Releases both on
// every way out of attach.
struct SegmentHold {
  Mapped mapped;
  std::string name;  // set once this member knows the object's name

  SegmentHold() = default;
  SegmentHold(const SegmentHold&) = delete;
  SegmentHold& operator=(const SegmentHold&) = delete;
  ~SegmentHold() {
    // Every member unlinks the same name: the first removes it, the others
    // get ENOENT, which is fine.
    if (!name.empty()) ::shm_unlink(name.c_str());
    if (mapped.base != nullptr) ::munmap(mapped.base, mapped.length);
  }
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

// Rank 0: the object named `name`, sized, mapped and with its header.
Mapped create(const std::string& name, int members, uint64_t slot_bytes) {
  const size_t length = segment_length(members, slot_bytes);
  Mapped m;
  // O_EXCL: an object of this name that exists already is not ours (the
  // name is new to this process), and is neither used nor removed.
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    m.error = fmt::format("shm_open {}: {}", name, std::strerror(errno));
    return m;
  }
  // Reserved now, not on first touch: a full /dev/shm then fails here,
  // with a message, instead of killing a rank with SIGBUS mid-call.
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(length)); err != 0) {
    m.error = fmt::format("reserving {} bytes for {}: {}", length, name, std::strerror(err));
    ::close(fd);
    return m;
  }
  m = map_fd(fd, length);
  ::close(fd);
  if (!m.error.empty()) return m;
  auto* header = new (m.base) SegmentHeader;
  header->magic = kSegmentMagic;
  header->version = kSegmentVersion;
  header->members = static_cast<uint32_t>(members);
  header->slot_bytes = slot_bytes;
  // Control lines start zeroed (a fresh object reads as zeros): every
  // member has entered call 0.
  return m;
}

Mapped open_existing(const Announcement& leader, int members) {
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

template <class Record>
std::vector<Record> exchange_records(const AttachContext& comm, const Record& mine,
                                     const std::string& what) {
  static_assert(std::is_trivially_copyable_v<Record>);
  std::vector<Record> all(static_cast<size_t>(comm.size));
  comm.exchange(std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(all)), what);
  return all;
}

// Whether every member's record says it succeeded.
bool all_ok(const std::vector<int32_t>& oks) {
  for (int32_t ok : oks)
    if (ok == 0) return false;
  return true;
}

}  // namespace

std::shared_ptr<Group> attach(const AttachContext& comm, bool same_host) {
  // Every member reads the same parameters, so all return here alike.
  if (!same_host || comm.size < 2 || !shm_collectives.get()) return nullptr;
  const int members = comm.size;
  const bool leader = comm.rank == 0;
  SegmentHold hold;

  // 1. The name, before the object exists.
  Announcement mine;
  mine.probe = own_probe_target();
  if (leader) {
    mine.slot_bytes = shm_slot_bytes.get();
    const std::string name = job::segment_name(comm.context, segments_named.fetch_add(1));
    // Longer than the record holds: sent cut short, refused below by all.
    std::memcpy(mine.name, name.c_str(), std::min(name.size(), sizeof(mine.name) - 1));
  }
  // Bytes from another process: terminate the name and bound the size
  // before using either.
  const std::vector<Announcement> announcements =
      exchange_records(comm, mine, "shared-memory segment (name)");
  Announcement announced = announcements[0];
  announced.name[sizeof(announced.name) - 1] = '\0';
  const std::string name = announced.name;
  const bool sane = segment_name_form(name) && name.size() < sizeof(announced.name) - 1 &&
                    announced.slot_bytes >= 4096 && announced.slot_bytes <= kMaxSlot;
  if (sane) hold.name = name;

  // 2. Rank 0 makes the object.
  if (leader && sane) hold.mapped = create(name, members, announced.slot_bytes);
  if (leader && !sane) hold.mapped.error = fmt::format("bad segment name '{}'", name);
  const int32_t made = leader && hold.mapped.error.empty() ? 1 : 0;
  if (exchange_records(comm, made, "shared-memory segment (made)")[0] == 0) {
    if (leader) {
      fmt::print(stderr, "grove: shared-memory collectives off: {}\n", hold.mapped.error);
    }
    return nullptr;
  }

  // 3. The others map it.
  if (!leader) {
    if (sane) {
      hold.mapped = open_existing(announced, members);
    } else {
      hold.mapped.error =
          fmt::format("rank 0 announced '{}' with slots of {} bytes", name, announced.slot_bytes);
    }
  }
  std::vector<ProbeTarget> targets;
  for (const Announcement& a : announcements)
    targets.push_back(a.probe);
  Mapping mapping;
  mapping.mapped = hold.mapped.error.empty() ? 1 : 0;
  mapping.probe = probe_peers(targets, comm.rank);
  const std::vector<Mapping> mappings =
      exchange_records(comm, mapping, "shared-memory segment (mapped)");
  std::vector<int32_t> mapped;
  std::vector<ProbeResult> probes;
  for (const Mapping& m : mappings) {
    mapped.push_back(m.mapped);
    probes.push_back(m.probe);
  }
  if (!all_ok(mapped)) {
    if (mapping.mapped == 0) {
      fmt::print(stderr, "grove: rank {}: shared-memory collectives off: {}\n", comm.rank,
                 hold.mapped.error);
    }
    return nullptr;
  }
  auto group = std::make_shared<Group>(comm.rank, comm.size, *comm.transport, comm.first_departed,
                                       hold.mapped.base, hold.mapped.length, announced.slot_bytes);
  hold.mapped.base = nullptr;  // the Group unmaps it
  const CmaVerdict verdict = cma_verdict(probes);
  if (verdict.on) {
    std::vector<pid_t> pids;
    for (const ProbeTarget& t : targets)
      pids.push_back(t.pid);
    group->enable_single_copy(std::move(pids));
  } else if (leader && !cma_off_printed.exchange(true)) {
    fmt::print(stderr, "grove: single-copy shared-memory path (CMA) off: {}\n", verdict.reason);
  }
  return group;
}

}  // namespace grove::shm
