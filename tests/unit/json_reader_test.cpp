// The one JSON object reader of suites, baselines and results: messages name
// the file and JSON path; closed objects reject unknown keys and null, open
// ones ignore other keys and read null as "no value".
#include "base/json_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "base/quantity.h"

namespace perfgate {
namespace {

using nlohmann::json;

template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

const std::string kFile = "f.json";

TEST(JsonObjectReader, ClosedObjectRejectsAnUnknownKeyWithAHint) {
  const json j = {{"warmpu", 1}};
  EXPECT_EQ(ErrorOf([&] {
              JsonObjectReader(j, kFile, "$.s", {"warmup", "name"});
            }),
            "f.json: $.s.warmpu: unknown key \"warmpu\" (did you mean \"warmup\"?)");
}

TEST(JsonObjectReader, ClosedObjectTypeChecksNull) {
  const json j = {{"name", nullptr}};
  JsonObjectReader r(j, kFile, "$", {"name"});
  EXPECT_TRUE(r.Has("name"));
  EXPECT_EQ(ErrorOf([&] { r.String("name"); }), "f.json: $.name: expected a string, got null");
}

TEST(JsonObjectReader, OpenObjectIgnoresOtherKeysAndReadsNullAsNoValue) {
  const json j = {{"later", 1}, {"p_value", nullptr}, {"value", nullptr}};
  JsonObjectReader r(j, kFile, "$");
  EXPECT_FALSE(r.Has("p_value"));
  EXPECT_FALSE(r.OptionalNumber("p_value"));
  EXPECT_EQ(r.Number("p_value", 7), 7);
  EXPECT_EQ(r.Number("value"), 0);  // present, so the required key is there
  EXPECT_EQ(ErrorOf([&] { r.Number("count"); }), "f.json: $: missing required key \"count\"");
}

TEST(JsonObjectReader, NotAnObjectNamesThePathAndWhatItIs) {
  EXPECT_EQ(ErrorOf([] { JsonObjectReader(json::array(), kFile, "$"); }), "f.json: $: expected an object, got array");
}

TEST(JsonObjectReader, IntegersAreCheckedNotNarrowed) {
  const json j = json::parse(R"({"big": 18446744073709551615, "exit": 4294967297, "reps": 1})");
  JsonObjectReader r(j, kFile, "$");
  EXPECT_EQ(ErrorOf([&] { r.Integer("big", 0); }), "f.json: $.big: integer 18446744073709551615 out of range");
  EXPECT_EQ(ErrorOf([&] { r.Int("exit", 0); }), "f.json: $.exit: integer 4294967297 out of range");
  EXPECT_EQ(ErrorOf([&] { r.Integer("reps", 2, 10000); }), "f.json: $.reps: value 1 out of range [2, 10000]");
  EXPECT_EQ(r.Integer("exit"), 4294967297);
}

TEST(JsonObjectReader, PathsOfKeysAndElements) {
  const json j = {{"argv", {"a", 1}}};
  JsonObjectReader r(j, kFile, "$.w", {"argv"});
  EXPECT_EQ(r.At("argv", 1), "$.w.argv[1]");
  EXPECT_EQ(r.ArrayOrEmpty("env").size(), 0u);
  EXPECT_EQ(ErrorOf([&] { r.Array("env"); }), "f.json: $.w: missing required key \"env\"");
}

TEST(Quantity, CheckMessagesAndReportsPrintTheSameNumber) {
  EXPECT_EQ(FormatQuantity(512000000, "ns"), "512 ms");
  EXPECT_EQ(FormatQuantity(0.512, "s"), "512 ms");
  EXPECT_EQ(FormatQuantity(91234, "count/s"), "91.2k count/s");
  EXPECT_EQ(FormatQuantity(3, "count/op"), "3.00 count/op");
  EXPECT_EQ(FormatQuantity(12, ""), "12.0");
}

}  // namespace
}  // namespace perfgate
