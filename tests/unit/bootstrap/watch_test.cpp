// The pmix bootstrap's parts that need no PMIx server: host numbering, the
// notice box, watch cards, and the watch itself with its ranks as threads
// of this process (every "host" is this machine, so peers meet on loopback).

#include "bootstrap/watch.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <thread>

#include "bootstrap/backends.hpp"
#include "bootstrap/notice_box.hpp"
#include "core/params.hpp"
#include "grove/error.hpp"

namespace grove {
namespace {

using namespace std::chrono_literals;

TEST(Hosts, NumberedInOrderOfTheirLowestRank) {
  const Hosts hosts = Hosts::from_names({"b", "b", "a", "c", "a"});
  EXPECT_EQ(hosts.of_rank, (std::vector<int>{0, 0, 1, 2, 1}));
  EXPECT_EQ(hosts.names, (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(hosts.count(), 3);
  EXPECT_EQ(hosts.ranks_on(1), (std::vector<int>{2, 4}));
  EXPECT_TRUE(hosts.ranks_on(3).empty());
}

TEST(Hosts, OneHostHasEveryRank) {
  const Hosts hosts = one_host(3);
  EXPECT_EQ(hosts.count(), 1);
  EXPECT_EQ(hosts.names[0], this_host_name());
  EXPECT_EQ(hosts.ranks_on(0), (std::vector<int>{0, 1, 2}));
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1;
}

TEST(NoticeBox, FirstReportCountsAndVersionsAreInLearningOrder) {
  NoticeBox box;
  EXPECT_FALSE(readable(box.fd()));
  EXPECT_TRUE(box.report(5, "first"));
  EXPECT_TRUE(box.report(2, "second"));
  EXPECT_FALSE(box.report(5, "again"));
  EXPECT_TRUE(readable(box.fd()));
  const std::vector<FailureNotice> notices = box.take();
  ASSERT_EQ(notices.size(), 2u);
  EXPECT_EQ(notices[0].rank, 5);
  EXPECT_EQ(notices[0].version, 1u);
  EXPECT_EQ(notices[0].how, "first");
  EXPECT_EQ(notices[1].rank, 2);
  EXPECT_EQ(notices[1].version, 2u);
  EXPECT_FALSE(readable(box.fd()));
  EXPECT_TRUE(box.take().empty());
  EXPECT_TRUE(box.departed(2));
  EXPECT_FALSE(box.departed(3));
}

TEST(WatchCard, EncodesAndDecodes) {
  WatchCard card;
  card.key = 0x0123456789abcdefull;
  card.port = 40123;
  card.ipv4 = {0xc6120001u, 0x0a000002u};
  const std::string text = card.encode();
  EXPECT_EQ(text, "grove-watch-1 0123456789abcdef 40123 198.18.0.1,10.0.0.2");
  const WatchCard back = WatchCard::decode(text);
  EXPECT_EQ(back.key, card.key);
  EXPECT_EQ(back.port, card.port);
  EXPECT_EQ(back.ipv4, card.ipv4);
  card.ipv4.clear();
  EXPECT_EQ(WatchCard::decode(card.encode()).ipv4.size(), 0u);
}

TEST(WatchCard, MalformedCardsAreNamedErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "expected 4 fields"},
      {"grove-watch-2 00 1 -", "does not start with"},
      {"grove-watch-1 xyz 1 -", "key 'xyz'"},
      {"grove-watch-1 00 0 -", "port 0"},
      {"grove-watch-1 00 70000 -", "port '70000'"},
      {"grove-watch-1 00 1 1.2.3", "address"},
      {"grove-watch-1 00 1 1.2.3.400", "address octet '400'"},
      {"grove-watch-1 00 1 1.2.3.4.5", "address"},
      {"grove-watch-1 00 1 -  extra", "expected 4 fields"},
  };
  for (const auto& [text, why] : cases) {
    try {
      WatchCard::decode(text);
      ADD_FAILURE() << "accepted '" << text << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::protocol) << text;
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos)
          << "'" << text << "': " << e.what();
    }
  }
}

// Connects every watch of a job of `size` ranks, each on its own thread.
std::vector<std::unique_ptr<Watch>> connect_all(int size, std::vector<NoticeBox>& boxes) {
  std::vector<std::unique_ptr<Watch>> watches;
  std::vector<WatchCard> cards;
  for (int r = 0; r < size; ++r) {
    watches.push_back(std::make_unique<Watch>(r, size, boxes[static_cast<size_t>(r)], 2000ms));
    cards.push_back(watches.back()->card());
  }
  const Hosts hosts = one_host(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] { watches[static_cast<size_t>(r)]->connect(cards, hosts); });
  for (std::thread& t : threads)
    t.join();
  return watches;
}

std::vector<FailureNotice> wait_for_notices(NoticeBox& box, size_t count) {
  std::vector<FailureNotice> all;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (all.size() < count && std::chrono::steady_clock::now() < deadline) {
    pollfd p{box.fd(), POLLIN, 0};
    ::poll(&p, 1, 100);
    for (FailureNotice& n : box.take())
      all.push_back(std::move(n));
  }
  return all;
}

TEST(Watch, AClosedPeerIsReportedDepartedByEveryOther) {
  std::vector<NoticeBox> boxes(4);
  auto watches = connect_all(4, boxes);
  watches[2].reset();  // its connections close, as when its process ends
  for (int r : {0, 1, 3}) {
    const auto notices = wait_for_notices(boxes[static_cast<size_t>(r)], 1);
    ASSERT_EQ(notices.size(), 1u) << "rank " << r;
    EXPECT_EQ(notices[0].rank, 2);
    EXPECT_EQ(notices[0].version, 1u);
    EXPECT_EQ(notices[0].how, "its process ended (watch connection closed)");
  }
  // Nobody else is reported.
  std::this_thread::sleep_for(200ms);
  for (int r : {0, 1, 3})
    EXPECT_TRUE(boxes[static_cast<size_t>(r)].take().empty());
}

TEST(Watch, StrangersAreNotAdmitted) {
  std::vector<NoticeBox> boxes(2);
  Watch zero(0, 2, boxes[0], 2000ms);
  Watch one(1, 2, boxes[1], 2000ms);
  const std::vector<WatchCard> cards = {zero.card(), one.card()};
  // A stranger connects to rank 1 first, claiming rank 0 with a wrong key.
  const int stranger = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(one.card().port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(stranger, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  unsigned char hello[16] = {'g', 'r', 'v', 'w', 0, 0, 0, 0};  // magic, rank 0, key 0
  ASSERT_EQ(::send(stranger, hello, sizeof hello, 0), 16);
  const Hosts hosts = one_host(2);
  std::thread t0([&] { zero.connect(cards, hosts); });
  std::thread t1([&] { one.connect(cards, hosts); });
  t0.join();
  t1.join();
  // The stranger got no answer: its connection was closed.
  char byte = 0;
  EXPECT_EQ(::recv(stranger, &byte, 1, 0), 0);
  ::close(stranger);
  EXPECT_TRUE(boxes[0].take().empty());
  EXPECT_TRUE(boxes[1].take().empty());
}

TEST(Watch, AnUnreachablePeerIsANamedError) {
  NoticeBox box;
  Watch zero(0, 2, box, 2000ms);
  WatchCard absent;  // a port nobody listens on
  absent.port = 9;
  absent.key = 1;
  try {
    zero.connect({zero.card(), absent}, one_host(2));
    ADD_FAILURE() << "connected to nobody";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::bootstrap);
    EXPECT_NE(std::string(e.what()).find("watch: cannot connect to rank 1 (127.0.0.1:"),
              std::string::npos)
        << e.what();
  }
}

TEST(Watch, APeerThatNeverConnectsIsANamedTimeout) {
  NoticeBox box;
  Watch zero(0, 2, box, 2000ms);
  Watch one(1, 2, box, 2000ms);
  params::Registry::global().set("timeout_ms", "300", params::Source::api);
  try {
    one.connect({zero.card(), one.card()}, one_host(2));  // rank 0 never calls connect()
    ADD_FAILURE() << "connected without rank 0";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::timeout);
    EXPECT_NE(std::string(e.what()).find("no connection with rank(s) 0 within timeout_ms = 300"),
              std::string::npos)
        << e.what();
  }
  params::Registry::global().reset("timeout_ms");
}

}  // namespace
}  // namespace grove
