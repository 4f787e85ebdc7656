#include "core/params.hpp"

#include <gtest/gtest.h>

#include "grove/error.hpp"

namespace grove::params {
namespace {

// Test-only parameters, declared once like any other.
const IntParam test_int{"test_int", 5, 1, 10, "unit-test integer"};
const BytesParam test_bytes{"test_bytes", 4096, 0, 1ull << 30, "unit-test byte count"};
const ChoiceParam test_choice{"test_choice", "b", {"a", "b", "c"}, "unit-test choice"};
const BoolParam test_bool{"test_bool", false, "unit-test flag"};

TEST(Params, DefaultsAreParsed) {
  EXPECT_EQ(test_int.get(), 5);
  EXPECT_EQ(test_bytes.get(), 4096u);
  EXPECT_EQ(test_choice.get(), "b");
  EXPECT_FALSE(test_bool.get());
}

TEST(Params, SetValidatesRangeAndNamesTheParameter) {
  Registry& registry = Registry::global();
  try {
    registry.set("test_int", "11", Source::api);
    FAIL() << "out-of-range value accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_parameter);
    EXPECT_NE(std::string(e.what()).find("test_int"), std::string::npos);
  }
  EXPECT_EQ(test_int.get(), 5);
  EXPECT_THROW(registry.set("no_such_param", "1", Source::api), Error);
  EXPECT_THROW(registry.set("test_choice", "d", Source::api), Error);
  EXPECT_THROW(registry.set("test_bool", "maybe", Source::api), Error);
}

TEST(Params, PrecedenceAndScopedSet) {
  {
    ScopedSet scoped("test_int", "7");
    EXPECT_EQ(test_int.get(), 7);
    EXPECT_EQ(Registry::global().get("test_int").source, Source::api);
    // A lower-precedence source does not override the API.
    Registry::global().set("test_int", "8", Source::env);
    EXPECT_EQ(test_int.get(), 7);
  }
  EXPECT_EQ(test_int.get(), 5);
  EXPECT_EQ(Registry::global().get("test_int").source, Source::default_value);
}

TEST(Params, ByteSuffixes) {
  EXPECT_EQ(parse_bytes("64KiB", "x"), 65536u);
  EXPECT_EQ(parse_bytes("1M", "x"), 1048576u);
  EXPECT_EQ(parse_bytes("10KB", "x"), 10000u);
  EXPECT_EQ(parse_bytes(" 7 ", "x"), 7u);
  EXPECT_THROW(parse_bytes("12XB", "x"), Error);
  EXPECT_THROW(parse_bytes("", "x"), Error);
  EXPECT_THROW(parse_bytes("99999999999999999999GiB", "x"), Error);
  EXPECT_EQ(format_bytes(65536), "64KiB");
  EXPECT_EQ(format_bytes(1000), "1000");
}

TEST(Params, EnvironmentRejectsUnknownNames) {
  Registry& registry = Registry::global();
  char good[] = "GROVE_TEST_BYTES=1MiB";
  char job[] = "GROVE_JOB_KEY=whatever";
  char* env[] = {good, job, nullptr};
  registry.load_env(env);
  EXPECT_EQ(test_bytes.get(), 1u << 20);
  registry.reset("test_bytes");
  char unknown[] = "GROVE_NOT_A_PARAM=3";
  char* env2[] = {unknown, nullptr};
  EXPECT_THROW(registry.load_env(env2), Error);
}

}  // namespace
}  // namespace grove::params

namespace grove::params {
namespace {

TEST(ParamsFile, ParsesLinesCommentsAndSpaces) {
  const std::string text =
      "# a comment\n"
      "  timeout_ms = 500   # trailing comment\n"
      "\n"
      "\tname_only_spaces=  a = b \r\n"
      "last=7";
  const std::vector<Assignment> expected = {
      {"timeout_ms", "500", 2}, {"name_only_spaces", "a = b", 4}, {"last", "7", 5}};
  EXPECT_EQ(parse_params_text(text, "f"), expected);
}

TEST(ParamsFile, ALineWithoutEqualsNamesFileAndLine) {
  try {
    parse_params_text("a = 1\n\njust words\n", "my.params");
    FAIL() << "accepted a line without '='";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_parameter);
    EXPECT_NE(std::string(e.what()).find("params file my.params:3: expected 'name = value'"),
              std::string::npos)
        << e.what();
  }
}

TEST(ParamsFile, CanonicalTextRoundTrips) {
  const auto parsed = parse_params_text(" a=1 \n#x\nb =  two words\n", "f");
  const std::string canonical = format_params_text(parsed);
  EXPECT_EQ(canonical, "a = 1\nb = two words\n");
  const auto again = parse_params_text(canonical, "f");
  ASSERT_EQ(again.size(), parsed.size());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i].name, parsed[i].name);
    EXPECT_EQ(again[i].value, parsed[i].value);
  }
  EXPECT_EQ(format_params_text(again), canonical);
}

}  // namespace
}  // namespace grove::params
