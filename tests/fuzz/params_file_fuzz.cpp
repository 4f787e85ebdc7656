// Fuzzes the params file reader (src/core/params.hpp): any text either
// parses or is refused with a grove::Error naming the line; what parses
// has a canonical text that parses to the same assignments and formats to
// the same bytes again; and every value is judged by the registry (set,
// then reset) without crashing. Parameters of every type are declared here
// so that every value parser is reached.

#include <cstdlib>
#include <string_view>

#include "core/params.hpp"
#include "grove/error.hpp"

namespace {

using namespace grove::params;

const IntParam fuzz_int{"fuzz_int", 0, -1000, 1000000, "fuzzer: an integer"};
const BytesParam fuzz_bytes{"fuzz_bytes", 4096, 0, uint64_t{1} << 40, "fuzzer: a byte count"};
const RealParam fuzz_real{"fuzz_real", 1.5, -1e6, 1e6, "fuzzer: a real"};
const BoolParam fuzz_bool{"fuzz_bool", false, "fuzzer: a boolean"};
const ChoiceParam fuzz_choice{"fuzz_choice", "a", {"a", "bb", "auto"}, "fuzzer: a choice"};
const StringParam fuzz_string{"fuzz_string", "", "fuzzer: a string"};

void require(bool ok) {
  if (!ok) std::abort();  // a round-trip mismatch: libFuzzer saves the input
}

bool same_names_and_values(const std::vector<Assignment>& a, const std::vector<Assignment>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].value != b[i].value) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<Assignment> parsed;
  try {
    parsed = parse_params_text(text, "fuzz");
  } catch (const grove::Error& e) {
    require(e.code() == grove::Errc::invalid_parameter);
    return 0;
  }
  const std::string canonical = format_params_text(parsed);
  const std::vector<Assignment> again = parse_params_text(canonical, "canonical");
  require(same_names_and_values(parsed, again));
  require(format_params_text(again) == canonical);
  Registry& registry = Registry::global();
  for (const Assignment& a : parsed) {
    try {
      registry.set(a.name, a.value, Source::file);
      registry.reset(a.name);
    } catch (const grove::Error& e) {
      require(e.code() == grove::Errc::invalid_parameter);
    }
  }
  return 0;
}
