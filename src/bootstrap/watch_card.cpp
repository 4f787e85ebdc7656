// WatchCard: what a rank publishes so that peers can connect to its watch,
// as one line of text: "grove-watch-1 <key, 16 hex digits> <port> <a.b.c.d,...|->".

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bootstrap/watch.hpp"
#include "grove/error.hpp"

namespace grove {
namespace {

constexpr std::string_view kCardTag = "grove-watch-1";

}  // namespace

std::string WatchCard::address_text(uint32_t address) {
  return fmt::format("{}.{}.{}.{}", address >> 24, (address >> 16) & 0xff, (address >> 8) & 0xff,
                     address & 0xff);
}

std::string WatchCard::encode() const {
  std::vector<std::string> addresses;
  for (uint32_t a : ipv4)
    addresses.push_back(address_text(a));
  return fmt::format(
      "{} {:016x} {} {}", kCardTag, key, port,
      addresses.empty() ? std::string("-") : fmt::format("{}", fmt::join(addresses, ",")));
}

WatchCard WatchCard::decode(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Error(Errc::protocol,
                 fmt::format("watch card '{}' is malformed: {}",
                             text.substr(0, std::min<size_t>(text.size(), 120)), why));
  };
  std::vector<std::string_view> fields;
  size_t at = 0;
  while (at <= text.size() && fields.size() < 5) {
    const size_t space = text.find(' ', at);
    const size_t end = space == std::string_view::npos ? text.size() : space;
    fields.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (fields.size() != 4) throw bad("expected 4 fields");
  if (fields[0] != kCardTag) throw bad(fmt::format("does not start with '{}'", kCardTag));
  WatchCard card;
  auto parse = [&](std::string_view field, auto& value, int base, std::string_view what) {
    auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value, base);
    if (ec != std::errc() || ptr != field.data() + field.size()) {
      throw bad(fmt::format("{} '{}'", what, field));
    }
  };
  parse(fields[1], card.key, 16, "key");
  parse(fields[2], card.port, 10, "port");
  if (card.port == 0) throw bad("port 0");
  if (fields[3] != "-") {
    std::string_view list = fields[3];
    while (!list.empty()) {
      const size_t comma = list.find(',');
      std::string_view one = list.substr(0, comma);
      list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
      uint32_t address = 0;
      int octets = 0;
      for (;;) {
        const size_t dot = one.find('.');
        const std::string_view part = one.substr(0, dot);
        unsigned value = 256;
        parse(part, value, 10, "address octet");
        if (value > 255) throw bad(fmt::format("address octet '{}'", part));
        address = (address << 8) | value;
        if (++octets > 4) throw bad("address with more than 4 octets");
        if (dot == std::string_view::npos) break;
        one = one.substr(dot + 1);
      }
      if (octets != 4) throw bad("address with fewer than 4 octets");
      card.ipv4.push_back(address);
      if (card.ipv4.size() > 64) throw bad("more than 64 addresses");
    }
  }
  return card;
}

}  // namespace grove
