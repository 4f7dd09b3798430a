// The journal of what a run changes outside itself (harness/modes/journal.h), the output folder
// (harness/core/output_dir.h) and the stop signals (harness/core/stop_signals.h).
#include "harness/core/errors.h"
#include "harness/core/output_dir.h"
#include "harness/core/stop_signals.h"
#include "harness/modes/cleanup.h"
#include "harness/modes/journal.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ib {
namespace {

namespace fs = std::filesystem;

struct TempFolder {
  std::string path;
  TempFolder() {
    char tmpl[] = "/tmp/ib_journal_test.XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempFolder() { fs::remove_all(path); }
};

JournalEntry mig(JournalEvent e, const std::string& profile, unsigned gi = 0, unsigned ci = 0) {
  return {e, 0, {profile, gi, ci}, ""};
}

TEST(Journal, OutstandingIsWhatWasMadeAndNotUndone) {
  const std::vector<JournalEntry> entries = {
      {JournalEvent::temp_dir, 0, {}, "/tmp/ib-run-1"},
      mig(JournalEvent::mig_intent, "3g.71gb"), mig(JournalEvent::mig_created, "3g.71gb", 1, 0),
      mig(JournalEvent::mig_intent, "3g.71gb"), mig(JournalEvent::mig_created, "3g.71gb", 2, 0),
      mig(JournalEvent::mig_intent, "1g.18gb"), mig(JournalEvent::mig_not_created, "1g.18gb"),
      mig(JournalEvent::mig_intent, "2g.35gb"),  // killed before its ids were recorded
      mig(JournalEvent::mig_destroyed, "3g.71gb", 1, 0),
      {JournalEvent::mps_intent, 0, {}, "/tmp/ib-run-1/mps1"}, {JournalEvent::mps_quit, 0, {}, "/tmp/ib-run-1/mps1"},
      {JournalEvent::mps_intent, 0, {}, "/tmp/ib-run-1/mps2"}};
  const Outstanding o = outstanding(entries);
  ASSERT_EQ(o.mig_instances.size(), 1u);
  EXPECT_EQ(o.mig_instances[0].second.gpu_instance_id, 2u);  // GI 1 was destroyed, GI 2 not
  ASSERT_EQ(o.mig_unconfirmed.size(), 1u);
  EXPECT_EQ(o.mig_unconfirmed[0].second, "2g.35gb");  // 1g.18gb was refused: nothing to undo
  EXPECT_EQ(o.mps_pipe_dirs, std::vector<std::string>{"/tmp/ib-run-1/mps2"});
  EXPECT_EQ(o.temp_dirs, std::vector<std::string>{"/tmp/ib-run-1"});
  EXPECT_FALSE(o.empty());
  EXPECT_TRUE(outstanding({{JournalEvent::temp_dir, 0, {}, "/x"}, {JournalEvent::temp_dir_removed, 0, {}, "/x"}}).empty());
}

TEST(Journal, IsWrittenLineByLineReadBackAndRemovedWhenAllIsUndone) {
  TempFolder state;
  std::string path;
  {
    Journal j(state.path + "/state");
    EXPECT_TRUE(journal_paths(state.path + "/state").empty()) << "no file before the first record";
    j.record(mig(JournalEvent::mig_intent, "3g.71gb"));
    j.record(mig(JournalEvent::mig_created, "3g.71gb", 5, 1));
    path = j.path();
    const JournalFile f = read_journal(path);
    EXPECT_EQ(f.pid, ::getpid());
    EXPECT_TRUE(f.owner_alive());
    ASSERT_EQ(f.entries.size(), 2u);
    EXPECT_EQ(f.entries[1].mig.gpu_instance_id, 5u);
    EXPECT_EQ(f.entries[1].mig.compute_instance_id, 1u);
    j.record(mig(JournalEvent::mig_destroyed, "3g.71gb", 5, 1));
  }
  EXPECT_FALSE(fs::exists(path)) << "nothing outstanding: the journal goes";
  {
    Journal j(state.path + "/state");
    j.record({JournalEvent::temp_dir, 0, {}, "/tmp/ib-run-x"});
    path = j.path();
  }
  ASSERT_TRUE(fs::exists(path)) << "something outstanding: the journal stays for cleanup";
  EXPECT_EQ(journal_paths(state.path + "/state"), std::vector<std::string>{path});
}

// cleanup removes only what it made: a journal naming "/tmp/ib-run-.../../<elsewhere>" is a problem,
// not a remove_all; and a journal whose undo had a problem stays for the next cleanup.
TEST(Cleanup, APathThatClimbsOutOfItsTempFolderIsNotRemovedAndItsJournalStays) {
  TempFolder state;
  char run_tmpl[] = "/tmp/ib-run-unit-XXXXXX";
  const std::string run_dir = ::mkdtemp(run_tmpl);
  TempFolder victim;
  std::ofstream(victim.path + "/keep") << "x";
  const std::string climbing = run_dir + "/../" + fs::path(victim.path).filename().string();
  Journal j(state.path + "/state");
  j.record({JournalEvent::temp_dir, 0, {}, climbing});
  const CleanupResult r = cleanup_left_behind(state.path + "/state", [] { return std::unique_ptr<Nvml>(); }, false);
  EXPECT_TRUE(fs::exists(victim.path + "/keep")) << "remove_all followed the '..'";
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("not removed (not /tmp/ib-run-*)"), std::string::npos) << r.problems[0];
  EXPECT_TRUE(fs::exists(j.path())) << "a cleanup with a problem keeps the journal";
  fs::remove_all(run_dir);
}

// An output folder the user made (empty) is theirs: a run that stops before writing leaves it.
TEST(OutputDir, AFolderThatWasThereIsNeverRemoved) {
  TempFolder t;
  fs::create_directories(t.path + "/mine");
  { OutputDir d("--out", t.path + "/mine", {"results.json"}, false); }
  EXPECT_TRUE(fs::is_directory(t.path + "/mine"));
}

TEST(Journal, ALineCutByAKillEndsTheJournalAndADeadOwnerIsNotAlive) {
  TempFolder state;
  const std::string path = state.path + "/run-1.journal";
  std::ofstream(path) << R"({"pid":1,"start_ticks":1})" "\n"
                      << R"({"event":"temp_dir","path":"/tmp/ib-run-a"})" "\n"
                      << R"({"event":"mig_cre)";
  const JournalFile f = read_journal(path);
  ASSERT_EQ(f.entries.size(), 1u);
  EXPECT_EQ(f.entries[0].path, "/tmp/ib-run-a");
  EXPECT_FALSE(f.owner_alive()) << "pid 1 did not start at tick 1";
}

TEST(OutputDir, RefusesAFolderWithResultsALockedOneAndASymlink) {
  TempFolder t;
  const std::string out = t.path + "/out";
  {
    OutputDir d("--out", out, {"results.json"}, false);
    EXPECT_THROW(OutputDir("--out", out, {"results.json"}, true), InputError) << "locked by the first";
    std::ofstream(out + "/results.json") << "{}";
    d.keep();
  }
  try {
    OutputDir again("--out", out, {"results.json"}, false);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("already holds results.json"), std::string::npos) << e.what();
  }
  fs::create_directories(out + "/logs");
  std::ofstream(out + "/logs/old.log") << "old";
  { OutputDir forced("--out", out, {"results.json"}, true); }
  EXPECT_FALSE(fs::exists(out + "/results.json"));
  EXPECT_FALSE(fs::exists(out + "/logs/old.log"));
  fs::create_symlink(t.path, t.path + "/link");
  EXPECT_THROW(OutputDir("--out", t.path + "/link", {}, false), InputError);
}

TEST(OutputDir, AFolderItMadeAndNothingKeptIsRemovedAgain) {
  TempFolder t;
  { OutputDir d("--out", t.path + "/new", {"results.json"}, false); }
  EXPECT_FALSE(fs::exists(t.path + "/new"));
  {
    OutputDir d("--out", t.path + "/kept", {"results.json"}, false);
    d.keep();
  }
  EXPECT_TRUE(fs::exists(t.path + "/kept"));
  EXPECT_NE(OutputDir::unique_default("p/"), "p/");
  EXPECT_NE(OutputDir::unique_default("p/").find("-" + std::to_string(::getpid())), std::string::npos);
}

TEST(StopSignals, EachStopSignalIsLatchedWithTheFirstOneKept) {
  StopSignals stop;
  EXPECT_FALSE(stop.requested());
  EXPECT_NO_THROW(stop.throw_if_requested());
  ASSERT_EQ(::raise(SIGUSR2), 0);  // blocked: pending until the signalfd is read
  ASSERT_EQ(::raise(SIGHUP), 0);
  EXPECT_TRUE(stop.requested());
  EXPECT_TRUE(stop.signal() == SIGUSR2 || stop.signal() == SIGHUP) << stop.signal();
  EXPECT_TRUE(stop.requested()) << "latched";
  EXPECT_TRUE(stop.check()());
  try {
    stop.throw_if_requested();
    FAIL();
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), stop.signal());
    EXPECT_EQ(std::string(e.what()).rfind("interrupted by SIG", 0), 0u) << e.what();
  }
  EXPECT_EQ(StopSignals::numbers().size(), 6u);
}

}  // namespace
}  // namespace ib
