// harness/core/output_paths: the one rule for every file a command writes, each kind of path it refuses
// and the ones it lets through, and write_file_atomic's own guard against replacing a device or FIFO.
#include "harness/core/errors.h"
#include "harness/core/files.h"
#include "harness/core/output_paths.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace ib {
namespace {

class OutputPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/ib_output_paths.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& text = "x") const {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  // The refusal's text, "" when the plan passes.
  static std::string refusal(const OutputPlan& plan) {
    try {
      check_output_paths(plan);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
  static OutputPlan writing(const std::string& option, const std::string& path) {
    OutputPlan plan;
    plan.outputs.push_back({option, path});
    return plan;
  }
  std::string dir_;
};

TEST_F(OutputPaths, ANewPathPassesAnExistingFileOnlyWithForceOrInTheOwnFolder) {
  EXPECT_EQ(refusal(writing("--junit", dir_ + "/new.xml")), "");
  const std::string old = file("old.xml");
  EXPECT_EQ(refusal(writing("--junit", old)),
            "--junit " + old + ": exists and is not in this command's output folder (--force replaces it)");
  OutputPlan forced = writing("--junit", old);
  forced.force = true;
  EXPECT_EQ(refusal(forced), "");
  OutputPlan own = writing("--junit", old);
  own.own_folder = dir_;
  EXPECT_EQ(refusal(own), "") << "a file in the run's own folder is the run's to replace";
  OutputPlan history = writing("--history", old);
  history.outputs[0].appends = true;
  EXPECT_EQ(refusal(history), "") << "the history database is added to, not replaced";
}

// Issue 37 item 13 (a surviving mutant: inside() without its '/' check): the own folder ".../run" does
// not cover an existing ".../run2/x", whose name only starts with the folder's.
TEST_F(OutputPaths, AFolderWhoseNameOnlyStartsLikeTheOwnFolderIsNotInsideIt) {
  std::filesystem::create_directories(dir_ + "/run");
  std::filesystem::create_directories(dir_ + "/run2");
  const std::string other = file("run2/x.xml");
  OutputPlan plan = writing("--junit", other);
  plan.own_folder = dir_ + "/run";
  EXPECT_EQ(refusal(plan), "--junit " + other + ": exists and is not in this command's output folder (--force replaces it)");
  OutputPlan own = writing("--junit", file("run/x.xml"));
  own.own_folder = dir_ + "/run";
  EXPECT_EQ(refusal(own), "");
}

TEST_F(OutputPaths, ADeviceFifoSocketFolderOrSymlinkIsRefusedEvenWithForce) {
  const std::string fifo = dir_ + "/fifo", sock = dir_ + "/sock", link = dir_ + "/link";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::symlink(file("target").c_str(), link.c_str()), 0);
  for (const auto& [path, kind] : {std::pair<std::string, std::string>{"/dev/null", "a character device"},
                                   {fifo, "a FIFO"}, {sock, "a socket"}, {dir_, "a folder"}, {link, "a symbolic link"}}) {
    OutputPlan plan = writing("--prometheus", path);
    plan.force = true;
    plan.own_folder = dir_;
    EXPECT_EQ(refusal(plan), "--prometheus " + path + ": is " + kind +
                                 ", not a regular file: outputs are written only to a regular file or a new path");
  }
  ::close(fd);
}

TEST_F(OutputPaths, AnOutputThatIsAnInputIsRefusedHoweverItIsSpelled) {
  const std::string scenario = file("s.json", "{}");
  const std::string hard = dir_ + "/hard.json";
  ASSERT_EQ(::link(scenario.c_str(), hard.c_str()), 0);
  for (const std::string& spelled : {scenario, dir_ + "/./sub/../s.json", hard}) {
    std::filesystem::create_directories(dir_ + "/sub");
    OutputPlan plan = writing("--prometheus", spelled);
    plan.inputs.push_back({"--scenario", scenario});
    plan.force = true;  // --force never lets an output replace an input
    EXPECT_EQ(refusal(plan), "--prometheus " + spelled + ": is also this command's input (--scenario): it would be replaced")
        << spelled;
  }
  EXPECT_EQ(std::ifstream(scenario).get(), '{');
}

TEST_F(OutputPaths, TwoOutputsOfOneFileAreRefusedNamingBoth) {
  OutputPlan plan;
  plan.own_folder = dir_ + "/out";
  plan.outputs = {{"--out", dir_ + "/out/results.json"}, {"--out", dir_ + "/out/summary.md"},
                  {"--junit", dir_ + "/out/results.json"}};
  EXPECT_EQ(refusal(plan), "--junit " + dir_ + "/out/results.json: is also the file of --out: one would replace the other");
  plan.outputs = {{"--junit", dir_ + "/f"}, {"--prometheus", dir_ + "/x/../f"}};
  EXPECT_EQ(refusal(plan), "--prometheus " + dir_ + "/x/../f: is also the file of --junit: one would replace the other");
  plan.outputs = {{"--junit", dir_ + "/a.xml"}, {"--prometheus", dir_ + "/a.prom"}};
  EXPECT_EQ(refusal(plan), "");
}

TEST_F(OutputPaths, AnEmptyPathIsRefused) {
  EXPECT_EQ(refusal(writing("--html", "")), "--html: an empty path (name the file to write)");
}

TEST_F(OutputPaths, TheAtomicWriteNeverReplacesAFifoOrDevice) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(write_file_atomic(fifo, "text"), OutputError);
  struct stat st{};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a regular file";
  EXPECT_THROW(write_file_atomic(dir_, "text"), OutputError);
}

}  // namespace
}  // namespace ib
