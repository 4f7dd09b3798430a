// harness/core: number formats, printable values, and JSON input limits (duplicate keys, depth, size).
#include "harness/core/errors.h"
#include "harness/core/files.h"
#include "harness/core/host.h"
#include "harness/core/json_input.h"
#include "harness/core/text.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ib {
namespace {

std::string refusal(const std::string& text, JsonLimits limits = {}) {
  try {
    parse_json_text(text, "f.json", limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Text, NumbersAndPercentagesAndNotANumber) {
  EXPECT_EQ(significant(0.012345), "0.0123");
  EXPECT_EQ(significant(1.5e9, 4), "1.5e+09");
  EXPECT_EQ(percent(0.123), "12.3%");
  EXPECT_EQ(signed_percent(0.123), "+12.3%");
  EXPECT_EQ(signed_percent(-0.5, 0), "-50%");
  EXPECT_EQ(fixed_percent(0.12345), "12.35%");
  EXPECT_EQ(formatted("%.0f MiB", 1024.0), "1024 MiB");
  for (double bad : {NAN, INFINITY, -INFINITY}) {
    EXPECT_EQ(significant(bad), "n/a");
    EXPECT_EQ(percent(bad), "n/a");
    EXPECT_EQ(signed_percent(bad), "n/a");
    EXPECT_EQ(formatted("%.1f", bad), "n/a");
  }
}

TEST(Text, PrintableEscapesControlCharactersAndCutsLongValues) {
  EXPECT_EQ(printable("a\nb\tc\x1b[31m"), "a\\nb\\tc\\x1b[31m");
  const std::string cut = printable(std::string(1000, 'x'), 40);
  EXPECT_EQ(cut.size(), 40u);
  EXPECT_EQ(cut, std::string(19, 'x') + "... (1000 characters)");
  EXPECT_EQ(printable("short", 40), "short");
  // A cut never splits a UTF-8 character: "\xc3\xa9" (e acute) is two bytes; cutting at 4 bytes would
  // keep its first byte alone, so the cut backs off to 3.
  std::string accents = "aaa";
  for (int i = 0; i < 30; ++i) accents += "\xc3\xa9";
  EXPECT_EQ(printable(accents, 23), "aaa... (63 characters)");
}

// A peer's bytes (issue 49): what is not well-formed UTF-8 is written \xNN, C1 controls \u0080.., so the text is
// valid UTF-8 wherever it goes (a JSON string would throw on it); well-formed characters are kept.
TEST(Text, PrintableEscapesBytesThatAreNotUtf8AndC1Controls) {
  EXPECT_EQ(printable("\xff\xfe ok"), "\\xff\\xfe ok");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  EXPECT_EQ(printable("\xc3"), "\\xc3");                      // cut short
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");              // an overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");     // a surrogate
  EXPECT_EQ(printable("a\xc2\x9b" "31m"), "a\\u009b31m");       // C1 CSI
  EXPECT_NO_THROW((void)nlohmann::json(printable("\x80\x81\xbf binary")).dump());
}

// A long path keeps its file name: a test once failed only where the temporary folder's path was long,
// because the end-cut message lost "s1.json".
TEST(Text, PrintablePathCutsInTheMiddleAndKeepsTheFileName) {
  EXPECT_EQ(printable_path("/tmp/s1.json", 40), "/tmp/s1.json");
  const std::string path = "/tmp/pytest-of-root/pytest-1139/test_two_scenarios_of_one_nam0/suites/twice/s1.json";
  const std::string cut = printable_path(path, 40);
  EXPECT_EQ(cut.size(), 40u);
  EXPECT_EQ(cut, "/tmp/pytest/.../am0/suites/twice/s1.json");
  // Control characters are escaped before the cut, as in printable().
  EXPECT_EQ(printable_path("/a\nb/" + std::string(100, 'x') + "/f\x1b.json", 30), "/a\\nb/xx/.../xxxxxx/f\\x1b.json");
}

TEST(JsonInput, DuplicateKeysAreRefusedWithTheirPath) {
  EXPECT_EQ(refusal(R"({"a": 1, "a": 2})"), R"(f.json: key "a" given twice)");
  EXPECT_EQ(refusal(R"({"t": [{"x": 1}, {"x": 1, "y": {"k": 1, "k": 2}}]})"), R"(f.json: t[1].y: key "k" given twice)");
  // The same key in two objects is fine, and so is the same key at two levels.
  EXPECT_EQ(refusal(R"({"t": [{"x": 1}, {"x": 2}], "x": {"x": 3}})"), "");
}

TEST(JsonInput, DepthAndSizeLimits) {
  JsonLimits tight;
  tight.max_depth = 3;
  EXPECT_EQ(refusal("[[[1]]]", tight), "");  // depth 3: the innermost value is at depth 3
  EXPECT_EQ(refusal("[[[[1]]]]", tight), "f.json: [0][0][0]: nested deeper than 3 levels");
  EXPECT_EQ(refusal(std::string(200000, '[') + std::string(200000, ']')).rfind("f.json: [0][0][0][0][0][0]...: nested deeper", 0), 0u);
  JsonLimits small;
  small.max_bytes = 10;
  EXPECT_EQ(refusal(R"({"a": "0123456789"})", small), "f.json: 19 bytes, more than the 10 this file may have");
}

TEST(JsonInput, SyntaxErrorsAndOverflowingNumbersAreInputErrors) {
  EXPECT_EQ(refusal("{").rfind("f.json: not valid JSON: ", 0), 0u);
  EXPECT_EQ(refusal(R"({"d": 1e400})").rfind("f.json: not a usable JSON number: ", 0), 0u);
  EXPECT_EQ(refusal(R"({"d": NaN})").rfind("f.json: not valid JSON: ", 0), 0u);
}

// ---------------------------------------------------------------- write_file_atomic

class AtomicWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ib_core_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir_), {}));
  }
  std::string dir_;
};

TEST_F(AtomicWrite, ARewriteReplacesTheFileInsteadOfWritingIntoIt) {
  const std::string path = dir_ + "/results.json", reader = dir_ + "/held-by-a-reader";
  write_file_atomic(path, "first, complete");
  ASSERT_EQ(::link(path.c_str(), reader.c_str()), 0);  // a reader that opened the old version
  write_file_atomic(path, "second");
  EXPECT_EQ(read(path), "second");
  EXPECT_EQ(read(reader), "first, complete") << "written in place: a reader saw the file change under it";
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  EXPECT_EQ(entries(), 2u);  // no temporary file left
}

TEST_F(AtomicWrite, ASymlinkAtThePathIsReplacedNotFollowed) {
  const std::string victim = dir_ + "/victim", path = dir_ + "/results.json";
  write_file_atomic(victim, "keep me");
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  write_file_atomic(path, "results");
  EXPECT_EQ(read(victim), "keep me");
  EXPECT_EQ(read(path), "results");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
}

TEST_F(AtomicWrite, AFileThatCannotBeWrittenIsAnOutputErrorNamingIt) {
  const std::string missing = dir_ + "/no/such/folder/results.json";
  try {
    write_file_atomic(missing, "x");
    FAIL() << "no error";
  } catch (const OutputError& e) {
    EXPECT_EQ(e.path(), missing);
    EXPECT_EQ(std::string(e.what()).rfind("cannot write " + missing + ": ", 0), 0u);
  }
  // Renaming onto a folder fails: the temporary file is removed again.
  ASSERT_EQ(::mkdir((dir_ + "/sub").c_str(), 0755), 0);
  EXPECT_THROW(write_file_atomic(dir_ + "/sub", "x"), OutputError);
  EXPECT_EQ(entries(), 1u);
}

// The scheduler's facts come from the variables Slurm and an Indexed Job set; a malformed index is
// not recorded, and without either nothing is.
TEST(SchedulerFacts, SlurmThenKubernetesThenNone) {
  const char* names[] = {"SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURMD_NODENAME",
                         "JOB_COMPLETION_INDEX", "NODE_NAME", "JOB_NAME"};
  for (const char* n : names) ::unsetenv(n);
  EXPECT_FALSE(scheduler_from_env());
  ::setenv("JOB_COMPLETION_INDEX", "3", 1);
  ::setenv("NODE_NAME", "gpu-a", 1);
  ::setenv("JOB_NAME", "ib-nightly-29", 1);
  auto k = scheduler_from_env();
  ASSERT_TRUE(k);
  EXPECT_EQ(k->kind, "kubernetes");
  EXPECT_EQ(k->task_index, 3);
  EXPECT_EQ(k->job_id, "ib-nightly-29");
  EXPECT_EQ(node_name(), "gpu-a");
  ::setenv("SLURM_JOB_ID", "101", 1);
  ::setenv("SLURM_ARRAY_JOB_ID", "100", 1);
  ::setenv("SLURM_ARRAY_TASK_ID", "x1", 1);
  ::setenv("SLURMD_NODENAME", "n7", 1);
  auto s = scheduler_from_env();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, "slurm");
  EXPECT_EQ(s->array_job_id, "100");
  EXPECT_FALSE(s->task_index);  // "x1" is not an index
  EXPECT_EQ(s->node, "n7");
  for (const char* n : names) ::unsetenv(n);
}

}  // namespace
}  // namespace ib
