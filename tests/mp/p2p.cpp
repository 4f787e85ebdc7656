// Multi-process driver for point-to-point messages (Comm::send/recv,
// isend/irecv, probe), run by `grove run -n N` (tests/mp/tests.cmake).
// Modes:
//
//   (none)    every ordered pair of ranks (self included) exchanges messages
//             of 0 B to 1 MiB with irecv posted before and after isend:
//             exact bytes, source, tag and length; 200 messages on one tag
//             arrive in order; any_source/any_tag receives and probe report
//             what arrives; typed send/recv; collectives interleaved with
//             point-to-point messages on the same communicator and on a dup.
//             Prints "p2p ok: N ranks, C cases".
//   errors    a short receive buffer (truncated), a bad rank, a bad tag, a
//             message that is not a whole number of elements: named errors.
//   departed  rank 1 exits; rank 0's receive from it fails naming it (run
//             with --on-failure=notify).

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "colls_common.hpp"
#include "grove/grove.hpp"

namespace {

using colls::expect_bytes;
using colls::pattern_bytes;
using grove::Comm;

// The salt of a message from `from` to `to` with `tag`: every message differs.
uint32_t salt_of(int from, int to, int tag, size_t length) {
  return static_cast<uint32_t>(from * 7919 + to * 104729 + tag * 31 + length);
}

void check_info(const std::string& what, const grove::MessageInfo& info, int source, int tag,
                size_t bytes) {
  if (info.source != source || info.tag != tag || info.bytes != bytes) {
    throw std::runtime_error(
        fmt::format("{}: got (source {}, tag {}, {} B), expected (source {}, "
                    "tag {}, {} B)",
                    what, info.source, info.tag, info.bytes, source, tag, bytes));
  }
}

struct Driver {
  Comm& comm;
  int cases = 0;

  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }

  // Rank r sends to (r + shift) mod n and receives from (r - shift) mod n.
  void pairs(size_t length, bool post_first, int tag) {
    for (int shift = 0; shift < size(); ++shift) {
      const int to = (rank() + shift) % size();
      const int from = (rank() - shift + size()) % size();
      const auto out = pattern_bytes(rank(), length, salt_of(rank(), to, tag, length));
      std::vector<std::byte> in(length + 16);
      grove::Request recv, send;
      if (post_first) recv = comm.irecv(std::span(in), from, tag);
      send = comm.isend(std::span<const std::byte>(out), to, tag);
      if (!post_first) recv = comm.irecv(std::span(in), from, tag);
      recv.wait();
      send.wait();
      const std::string what = fmt::format("pair shift {} {} B tag {}{}", shift, length, tag,
                                           post_first ? " (posted first)" : "");
      check_info(what, recv.message(), from, tag, length);
      in.resize(length);
      expect_bytes(what, rank(), in,
                   pattern_bytes(from, length, salt_of(from, rank(), tag, length)));
      ++cases;
    }
  }

  // 200 messages from each rank to its right neighbour on one tag: in order.
  void ordered() {
    const int to = (rank() + 1) % size();
    const int from = (rank() - 1 + size()) % size();
    constexpr int kCount = 200;
    std::vector<grove::Request> sends;
    std::vector<uint32_t> numbers(kCount);
    for (int i = 0; i < kCount; ++i) {
      numbers[static_cast<size_t>(i)] = static_cast<uint32_t>(i);
      sends.push_back(
          comm.isend(std::as_bytes(std::span(&numbers[static_cast<size_t>(i)], 1)), to, 9));
    }
    for (int i = 0; i < kCount; ++i) {
      uint32_t got = 0;
      comm.recv(std::as_writable_bytes(std::span(&got, 1)), from, 9);
      if (got != static_cast<uint32_t>(i)) {
        throw std::runtime_error(
            fmt::format("ordered: message {} from rank {} carried {}", i, from, got));
      }
    }
    for (auto& s : sends)
      s.wait();
    ++cases;
  }

  // Everyone sends rank 0 one message with tag = its rank; rank 0 probes,
  // then receives with any_source/any_tag, and checks it got each rank once.
  void wildcards() {
    const size_t length = 100;
    const int tag = 1000 + rank();
    const auto out = pattern_bytes(rank(), length + static_cast<size_t>(rank()), 77);
    grove::Request send = comm.isend(std::span<const std::byte>(out), 0, tag);
    if (rank() == 0) {
      std::vector<int> seen(static_cast<size_t>(size()), 0);
      for (int i = 0; i < size(); ++i) {
        const grove::MessageInfo probed = comm.probe(Comm::any_source, Comm::any_tag);
        std::vector<std::byte> in(probed.bytes);
        const grove::MessageInfo got = comm.recv(std::span(in), probed.source, probed.tag);
        check_info("wildcard probe then recv", got, probed.source, 1000 + probed.source,
                   length + static_cast<size_t>(probed.source));
        expect_bytes("wildcard", 0, in, pattern_bytes(probed.source, in.size(), 77));
        ++seen[static_cast<size_t>(probed.source)];
      }
      for (int r = 0; r < size(); ++r) {
        if (seen[static_cast<size_t>(r)] != 1) {
          throw std::runtime_error(
              fmt::format("wildcard: rank {} seen {} times", r, seen[static_cast<size_t>(r)]));
        }
      }
    }
    send.wait();
    comm.barrier();
    // any_source with an exact tag through irecv: rank 0 gets everyone's.
    const auto small = pattern_bytes(rank(), 8, 5);
    send = comm.isend(std::span<const std::byte>(small), 0, 4);
    if (rank() == 0) {
      std::vector<int> seen(static_cast<size_t>(size()), 0);
      for (int i = 0; i < size(); ++i) {
        std::vector<std::byte> in(8);
        grove::Request r = comm.irecv(std::span(in), Comm::any_source, 4);
        r.wait();
        const grove::MessageInfo got = r.message();
        check_info("any_source irecv", got, got.source, 4, 8);
        expect_bytes("any_source irecv", 0, in, pattern_bytes(got.source, 8, 5));
        ++seen[static_cast<size_t>(got.source)];
      }
      for (int r = 0; r < size(); ++r) {
        if (seen[static_cast<size_t>(r)] != 1)
          throw std::runtime_error(fmt::format("any_source irecv: rank {} not seen once", r));
      }
      if (comm.iprobe(Comm::any_source, Comm::any_tag)) {
        throw std::runtime_error("iprobe found a message after all were received");
      }
    }
    send.wait();
    comm.barrier();
    cases += 2;
  }

  void typed() {
    const int to = (rank() + 1) % size();
    const int from = (rank() - 1 + size()) % size();
    std::vector<int32_t> out(33);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = rank() * 1000 - static_cast<int32_t>(i);
    std::vector<int32_t> in(40, 0);
    grove::Request r = comm.irecv(std::span(in), from, 3);
    comm.send<int32_t>(out, to, 3);
    r.wait();
    check_info("typed", r.message(), from, 3, 33 * sizeof(int32_t));
    for (size_t i = 0; i < 33; ++i) {
      if (in[i] != from * 1000 - static_cast<int32_t>(i))
        throw std::runtime_error(fmt::format("typed: element {} is {}", i, in[i]));
    }
    ++cases;
  }

  // Point-to-point messages and collectives on the same communicator and on
  // a dup never match each other.
  void with_collectives() {
    Comm dup = comm.dup();
    const int to = (rank() + 1) % size();
    const int from = (rank() - 1 + size()) % size();
    const auto a = pattern_bytes(rank(), 64, 1), b = pattern_bytes(rank(), 64, 2);
    std::vector<std::byte> in_a(64), in_b(64);
    grove::Request ra = comm.irecv(std::span(in_a), from, 0);
    grove::Request rb = dup.irecv(std::span(in_b), from, 0);
    grove::Request sb = dup.isend(std::span<const std::byte>(b), to, 0);
    std::vector<std::byte> block(64);
    if (rank() == 0) block = pattern_bytes(0, 64, 3);
    comm.bcast(std::span(block), 0);
    grove::Request sa = comm.isend(std::span<const std::byte>(a), to, 0);
    dup.barrier();
    ra.wait();
    rb.wait();
    sa.wait();
    sb.wait();
    expect_bytes("p2p beside bcast", rank(), block, pattern_bytes(0, 64, 3));
    expect_bytes("p2p on comm", rank(), in_a, pattern_bytes(from, 64, 1));
    expect_bytes("p2p on dup", rank(), in_b, pattern_bytes(from, 64, 2));
    ++cases;
  }

  void run_all() {
    for (size_t length :
         {size_t{0}, size_t{1}, size_t{7}, size_t{4096}, size_t{65537}, size_t{1} << 20}) {
      pairs(length, true, 5);
      pairs(length, false, Comm::max_tag);
    }
    ordered();
    wildcards();
    typed();
    with_collectives();
  }
};

void expect_error(const char* what, grove::Errc code, const std::function<void()>& body) {
  try {
    body();
  } catch (const grove::Error& e) {
    std::printf("p2p %s: %s: %s\n", what, std::string(grove::errc_name(e.code())).c_str(),
                e.what());
    std::fflush(stdout);
    if (e.code() != code) throw;
    return;
  }
  throw std::runtime_error(fmt::format("{}: no error", what));
}

void errors(Comm& world) {
  const int rank = world.rank();
  const int to = (rank + 1) % world.size();
  const int from = (rank - 1 + world.size()) % world.size();
  const auto out = pattern_bytes(rank, 100, 1);
  grove::Request s = world.isend(std::span<const std::byte>(out), to, 2);
  std::vector<std::byte> small(10);
  expect_error("truncated", grove::Errc::truncated, [&] { world.recv(std::span(small), from, 2); });
  s.wait();
  std::vector<std::byte> buffer(8);
  expect_error("bad rank", grove::Errc::invalid_argument,
               [&] { world.send(std::span<const std::byte>(buffer), world.size(), 0); });
  expect_error("bad tag", grove::Errc::invalid_argument,
               [&] { world.send(std::span<const std::byte>(buffer), to, Comm::max_tag + 1); });
  expect_error("any_tag send", grove::Errc::invalid_argument,
               [&] { world.isend(std::span<const std::byte>(buffer), to, Comm::any_tag); });
  // 6 bytes are not a whole number of int32 elements.
  s = world.isend(std::span<const std::byte>(buffer.data(), 6), to, 3);
  std::vector<int32_t> ints(4);
  expect_error("partial element", grove::Errc::mismatch,
               [&] { world.recv(std::span(ints), from, 3); });
  s.wait();
  expect_error("message of a send", grove::Errc::invalid_argument, [&] { (void)s.message(); });
  world.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    grove::Session session;
    Comm& world = session.world();
    if (mode == "errors") {
      errors(world);
      if (world.rank() == 0) std::printf("p2p errors ok\n");
      return 0;
    }
    if (mode == "departed") {
      if (world.rank() == 1) std::_Exit(3);
      if (world.rank() == 0) {
        std::vector<std::byte> in(8);
        expect_error("departed", grove::Errc::peer_failed,
                     [&] { world.recv(std::span(in), 1, 0); });
        std::printf("p2p departed ok\n");
      }
      std::fflush(stdout);
      std::_Exit(0);  // the finalize barrier would wait for rank 1
    }
    Driver driver{world};
    driver.run_all();
    world.barrier();
    if (world.rank() == 0) std::printf("p2p ok: %d ranks, %d cases\n", world.size(), driver.cases);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "p2p FAILED: %s\n", e.what());
    return 1;
  }
}
