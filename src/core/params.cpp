#include "core/params.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include <fmt/format.h>

#include "grove/error.hpp"

namespace grove::params {

// See generation(). Relaxed: a reader on another thread that misses a
// concurrent change sees it on its next read, as with the values themselves.
std::atomic<uint64_t> change_count{0};

namespace {

[[noreturn]] void bad(const std::string& message) {
  throw Error(Errc::invalid_parameter, message);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string v = lower(trim(text));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

// Parses `text` for `entry`'s type and range into the entry's cached fields.
void parse_into(Entry& entry, std::string_view text) {
  const Spec& spec = entry.spec;
  const std::string_view value = trim(text);
  auto range_check = [&](double v) {
    if (v < spec.min || v > spec.max) {
      bad(fmt::format("parameter {}: value '{}' is outside its range [{}, {}]", spec.name, value,
                      spec.min, spec.max));
    }
  };
  switch (spec.type) {
    case Type::boolean: {
      auto b = parse_bool(value);
      if (!b)
        bad(fmt::format("parameter {}: '{}' is not a boolean (true/false)", spec.name, value));
      entry.as_bool = *b;
      entry.as_int = *b;
      break;
    }
    case Type::integer: {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) {
        bad(fmt::format("parameter {}: '{}' is not an integer", spec.name, value));
      }
      range_check(static_cast<double>(v));
      entry.as_int = v;
      entry.as_real = static_cast<double>(v);
      break;
    }
    case Type::bytes: {
      const uint64_t v = parse_bytes(value, fmt::format("parameter {}", spec.name));
      range_check(static_cast<double>(v));
      entry.as_int = static_cast<int64_t>(v);
      entry.as_real = static_cast<double>(v);
      break;
    }
    case Type::real: {
      char* end = nullptr;
      const std::string copy(value);
      const double v = std::strtod(copy.c_str(), &end);
      if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(v)) {
        bad(fmt::format("parameter {}: '{}' is not a number", spec.name, value));
      }
      range_check(v);
      entry.as_real = v;
      break;
    }
    case Type::choice: {
      if (std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end()) {
        std::string all;
        for (const auto& c : spec.choices)
          all += (all.empty() ? "" : ", ") + c;
        bad(fmt::format("parameter {}: '{}' is not one of: {}", spec.name, value, all));
      }
      break;
    }
    case Type::string: {
      if (spec.validator) {
        const std::string why = spec.validator(value);
        if (!why.empty()) bad(fmt::format("parameter {}: '{}': {}", spec.name, value, why));
      }
      break;
    }
  }
  entry.text = std::string(value);
}

}  // namespace

std::string_view type_name(Type type) {
  switch (type) {
    case Type::boolean:
      return "bool";
    case Type::integer:
      return "int";
    case Type::bytes:
      return "bytes";
    case Type::real:
      return "real";
    case Type::string:
      return "string";
    case Type::choice:
      return "choice";
  }
  return "?";
}

std::string_view source_name(Source source) {
  switch (source) {
    case Source::default_value:
      return "default";
    case Source::file:
      return "file";
    case Source::env:
      return "env";
    case Source::command_line:
      return "--param";
    case Source::api:
      return "api";
  }
  return "?";
}

uint64_t parse_bytes(std::string_view text, std::string_view what) {
  const std::string_view s = trim(text);
  uint64_t number = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec != std::errc() || ptr == s.data()) {
    throw Error(Errc::invalid_parameter, fmt::format("{}: '{}' is not a byte count", what, s));
  }
  const std::string suffix = lower(trim(std::string_view(ptr, s.data() + s.size() - ptr)));
  uint64_t unit = 1;
  if (suffix.empty() || suffix == "b")
    unit = 1;
  else if (suffix == "k" || suffix == "kib")
    unit = 1ull << 10;
  else if (suffix == "m" || suffix == "mib")
    unit = 1ull << 20;
  else if (suffix == "g" || suffix == "gib")
    unit = 1ull << 30;
  else if (suffix == "kb")
    unit = 1000;
  else if (suffix == "mb")
    unit = 1000 * 1000;
  else if (suffix == "gb")
    unit = 1000ull * 1000 * 1000;
  else {
    throw Error(
        Errc::invalid_parameter,
        fmt::format("{}: unknown size suffix '{}' in '{}' (use B, KiB, MiB, GiB, KB, MB, GB)", what,
                    suffix, s));
  }
  if (number != 0 && unit > UINT64_MAX / number) {
    throw Error(Errc::invalid_parameter, fmt::format("{}: '{}' overflows 64 bits", what, s));
  }
  return number * unit;
}

std::string format_bytes(uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{}GiB", bytes >> 30);
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return fmt::format("{}MiB", bytes >> 20);
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return fmt::format("{}KiB", bytes >> 10);
  return fmt::format("{}", bytes);
}

Registry& Registry::global() {
  static Registry registry;
  return registry;
}

Entry& Registry::declare(Spec spec) {
  std::lock_guard lock(mutex_);
  if (entries_.count(spec.name)) {
    throw Error(Errc::internal, fmt::format("parameter {} declared twice", spec.name));
  }
  Entry entry;
  entry.spec = std::move(spec);
  parse_into(entry, entry.spec.default_value);
  const std::string name = entry.spec.name;
  return entries_.emplace(name, std::move(entry)).first->second;
}

Entry& Registry::find(std::string_view name) {
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    bad(fmt::format("unknown parameter '{}' (grove params lists them all)", name));
  }
  return it->second;
}

void Registry::set(std::string_view name, std::string_view value, Source source) {
  std::lock_guard lock(mutex_);
  Entry& entry = find(name);
  if (static_cast<int>(source) < static_cast<int>(entry.source)) return;
  Entry candidate = entry;
  parse_into(candidate, value);
  entry.text = candidate.text;
  entry.as_int = candidate.as_int;
  entry.as_real = candidate.as_real;
  entry.as_bool = candidate.as_bool;
  entry.source = source;
  change_count.fetch_add(1, std::memory_order_relaxed);
}

void Registry::reset(std::string_view name) {
  std::lock_guard lock(mutex_);
  Entry& entry = find(name);
  parse_into(entry, entry.spec.default_value);
  entry.source = Source::default_value;
  change_count.fetch_add(1, std::memory_order_relaxed);
}

const Entry& Registry::get(std::string_view name) const {
  return const_cast<Registry*>(this)->find(name);
}

bool Registry::contains(std::string_view name) const {
  std::lock_guard lock(mutex_);
  return entries_.count(name) != 0;
}

std::vector<const Entry*> Registry::list() const {
  std::lock_guard lock(mutex_);
  std::vector<const Entry*> out;
  for (const auto& [name, entry] : entries_)
    out.push_back(&entry);
  return out;
}

void Registry::load_env(char** environ_ptr) {
  if (!environ_ptr) return;
  for (char** e = environ_ptr; *e; ++e) {
    const std::string_view kv(*e);
    if (!kv.starts_with("GROVE_")) continue;
    const auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = kv.substr(6, eq - 6);
    if (key.starts_with("JOB_") || key == "PARAMS_FILE") continue;
    set(lower(key), kv.substr(eq + 1), Source::env);
  }
}

std::vector<Assignment> parse_params_text(std::string_view text, std::string_view where) {
  std::vector<Assignment> out;
  int number = 0;
  while (!text.empty()) {
    ++number;
    const size_t newline = text.find('\n');
    std::string_view view = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (auto hash = view.find('#'); hash != std::string_view::npos) view = view.substr(0, hash);
    view = trim(view);
    if (view.empty()) continue;
    const auto eq = view.find('=');
    if (eq == std::string_view::npos) {
      bad(fmt::format("params file {}:{}: expected 'name = value'", where, number));
    }
    out.push_back(Assignment{std::string(trim(view.substr(0, eq))),
                             std::string(trim(view.substr(eq + 1))), number});
  }
  return out;
}

std::string format_params_text(const std::vector<Assignment>& assignments) {
  std::string out;
  for (const Assignment& a : assignments)
    out += fmt::format("{} = {}\n", a.name, a.value);
  return out;
}

void Registry::load_file(const std::string& path, Source source) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(fmt::format("params file '{}' cannot be read", path));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const Assignment& a : parse_params_text(text, path)) {
    try {
      set(a.name, a.value, source);
    } catch (const Error& e) {
      bad(fmt::format("params file {}:{}: {}", path, a.line, e.what()));
    }
  }
}

void load_process_params() {
  static std::once_flag once;
  std::call_once(once, [] {
    Registry& registry = Registry::global();
    if (const char* file = std::getenv("GROVE_PARAMS_FILE")) registry.load_file(file);
    registry.load_env(environ);
    // `grove run --param k=v` passes k as GROVE_<K> and lists k here, so the
    // registry can tell a launcher command-line value from a plain env one.
    if (const char* listed = std::getenv("GROVE_JOB_CMDLINE_PARAMS")) {
      std::string_view names = listed;
      while (!names.empty()) {
        const auto comma = names.find(',');
        const std::string name(trim(names.substr(0, comma)));
        names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
        if (name.empty()) continue;
        std::string upper = "GROVE_";
        for (char c : name)
          upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        if (const char* value = std::getenv(upper.c_str()))
          registry.set(name, value, Source::command_line);
      }
    }
  });
}

namespace {
Spec numeric(std::string name, Type type, std::string def, double min, double max,
             std::string doc) {
  Spec spec;
  spec.name = std::move(name);
  spec.type = type;
  spec.default_value = std::move(def);
  spec.min = min;
  spec.max = max;
  spec.doc = std::move(doc);
  return spec;
}
}  // namespace

IntParam::IntParam(std::string name, int64_t def, int64_t min, int64_t max, std::string doc)
    : entry_(&Registry::global().declare(numeric(std::move(name), Type::integer,
                                                 std::to_string(def), static_cast<double>(min),
                                                 static_cast<double>(max), std::move(doc)))) {}

BytesParam::BytesParam(std::string name, uint64_t def, uint64_t min, uint64_t max, std::string doc)
    : entry_(&Registry::global().declare(numeric(std::move(name), Type::bytes, std::to_string(def),
                                                 static_cast<double>(min), static_cast<double>(max),
                                                 std::move(doc)))) {}

RealParam::RealParam(std::string name, double def, double min, double max, std::string doc)
    : entry_(&Registry::global().declare(numeric(
          std::move(name), Type::real, fmt::format("{}", def), min, max, std::move(doc)))) {}

BoolParam::BoolParam(std::string name, bool def, std::string doc) {
  Spec spec;
  spec.name = std::move(name);
  spec.type = Type::boolean;
  spec.default_value = def ? "true" : "false";
  spec.doc = std::move(doc);
  entry_ = &Registry::global().declare(std::move(spec));
}

ChoiceParam::ChoiceParam(std::string name, std::string def, std::vector<std::string> choices,
                         std::string doc) {
  Spec spec;
  spec.name = std::move(name);
  spec.type = Type::choice;
  spec.default_value = std::move(def);
  spec.choices = std::move(choices);
  spec.doc = std::move(doc);
  entry_ = &Registry::global().declare(std::move(spec));
}

StringParam::StringParam(std::string name, std::string def, std::string doc, Validator validator) {
  Spec spec;
  spec.name = std::move(name);
  spec.type = Type::string;
  spec.default_value = std::move(def);
  spec.doc = std::move(doc);
  spec.validator = std::move(validator);
  entry_ = &Registry::global().declare(std::move(spec));
}

ScopedSet::ScopedSet(std::string_view name, std::string_view value) : name_(name) {
  const Entry& entry = Registry::global().get(name);
  old_text_ = entry.text;
  old_source_ = entry.source;
  Registry::global().set(name, value, Source::api);
}

ScopedSet::~ScopedSet() {
  Registry& registry = Registry::global();
  registry.reset(name_);
  if (old_source_ != Source::default_value) registry.set(name_, old_text_, old_source_);
}

}  // namespace grove::params
