#pragma once
// The parameter registry. Every tunable is declared once (name, type, default,
// range, one-line doc) next to the code that reads it, and can be set from the
// environment (GROVE_<NAME>), a params file (GROVE_PARAMS_FILE, `name = value`
// lines), `grove run --param name=value`, or the API. Precedence, lowest
// first: default, file, environment, command line, API.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace grove::params {

enum class Type { boolean, integer, bytes, real, string, choice };
enum class Source { default_value, file, env, command_line, api };

std::string_view type_name(Type type);
std::string_view source_name(Source source);

// Parses "4096", "64KiB", "1M", "2GiB", "10KB" (decimal KB/MB/GB). Throws
// grove::Error naming `what` on malformed input or overflow.
uint64_t parse_bytes(std::string_view text, std::string_view what);
std::string format_bytes(uint64_t bytes);

// Returns an error message, or an empty string when `value` is acceptable.
using Validator = std::function<std::string(std::string_view value)>;

struct Spec {
  std::string name;
  Type type = Type::string;
  std::string default_value;
  std::string doc;
  double min = 0;  // integer, bytes, real: inclusive range
  double max = 0;
  std::vector<std::string> choices;  // choice
  Validator validator;               // string: extra check
};

struct Entry {
  Spec spec;
  std::string text;  // current value as text
  Source source = Source::default_value;
  // Parsed forms of `text`, kept current by Registry::set so reads are cheap.
  int64_t as_int = 0;
  double as_real = 0;
  bool as_bool = false;
};

class Registry {
 public:
  static Registry& global();

  // Declares a parameter; declaring a name twice is an internal error.
  Entry& declare(Spec spec);

  // Validates and sets; throws grove::Error(invalid_parameter) naming the
  // parameter for an unknown name or a bad value. A lower-precedence source
  // never overrides a higher one.
  void set(std::string_view name, std::string_view value, Source source);
  void reset(std::string_view name);  // back to its default

  const Entry& get(std::string_view name) const;
  bool contains(std::string_view name) const;
  std::vector<const Entry*> list() const;  // sorted by name

  // Reads GROVE_<NAME> variables (names upper-cased). GROVE_JOB_* variables
  // belong to the launcher and are ignored; any other unknown GROVE_* name is
  // an error.
  void load_env(char** environ_ptr);
  // Reads `name = value` lines; '#' starts a comment. Errors name file and line.
  void load_file(const std::string& path, Source source = Source::file);

 private:
  Entry& find(std::string_view name);
  mutable std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// One `name = value` line of a params file (`line`: its number, from 1).
struct Assignment {
  std::string name;
  std::string value;
  int line = 0;
  bool operator==(const Assignment&) const = default;
};

// The params file syntax, apart from what the names and values mean: lines
// split at '\n', '#' starts a comment, blank lines are skipped, a line is
// cut at its first '=', and name and value are trimmed of white space.
// Throws grove::Error(invalid_parameter) naming `where` and the line of the
// first line that is not blank and has no '='.
std::vector<Assignment> parse_params_text(std::string_view text, std::string_view where);
// The canonical text of `assignments`: one "name = value\n" line each.
// parse_params_text of it gives the same names and values, and formatting
// that again gives the same bytes (tests/fuzz/params_file_fuzz.cpp).
std::string format_params_text(const std::vector<Assignment>& assignments);

// Applies the environment and GROVE_PARAMS_FILE once per process; idempotent.
void load_process_params();

// A counter that every Registry::set and reset increments (a change of any
// parameter, or a set to the same value). Values derived from parameters on
// a hot path (a collective's parsed algorithm, the wait options, a cached
// call plan) remember the generation they were derived under and derive
// again only when it moved: a repeated read costs one load (inline: a
// repeated collective call reads it first).
extern std::atomic<uint64_t> change_count;  // read through generation()
inline uint64_t generation() {
  return change_count.load(std::memory_order_relaxed);
}

// Typed handles, declared at namespace scope in the .cpp that owns them.
class IntParam {
 public:
  IntParam(std::string name, int64_t def, int64_t min, int64_t max, std::string doc);
  int64_t get() const { return entry_->as_int; }
  const std::string& name() const { return entry_->spec.name; }

 private:
  Entry* entry_;
};

class BytesParam {
 public:
  BytesParam(std::string name, uint64_t def, uint64_t min, uint64_t max, std::string doc);
  uint64_t get() const { return static_cast<uint64_t>(entry_->as_int); }
  const std::string& name() const { return entry_->spec.name; }

 private:
  Entry* entry_;
};

class RealParam {
 public:
  RealParam(std::string name, double def, double min, double max, std::string doc);
  double get() const { return entry_->as_real; }
  const std::string& name() const { return entry_->spec.name; }

 private:
  Entry* entry_;
};

class BoolParam {
 public:
  BoolParam(std::string name, bool def, std::string doc);
  bool get() const { return entry_->as_bool; }
  const std::string& name() const { return entry_->spec.name; }

 private:
  Entry* entry_;
};

class ChoiceParam {
 public:
  ChoiceParam(std::string name, std::string def, std::vector<std::string> choices, std::string doc);
  const std::string& get() const { return entry_->text; }
  const std::string& name() const { return entry_->spec.name; }

 private:
  Entry* entry_;
};

class StringParam {
 public:
  StringParam(std::string name, std::string def, std::string doc, Validator validator = {});
  const std::string& get() const { return entry_->text; }
  const std::string& name() const { return entry_->spec.name; }

 private:
  Entry* entry_;
};

// Sets a parameter for the lifetime of a scope (tests, bench cells), then
// restores the previous value and source.
class ScopedSet {
 public:
  ScopedSet(std::string_view name, std::string_view value);
  ~ScopedSet();
  ScopedSet(const ScopedSet&) = delete;
  ScopedSet& operator=(const ScopedSet&) = delete;

 private:
  std::string name_;
  std::string old_text_;
  Source old_source_;
};

}  // namespace grove::params
