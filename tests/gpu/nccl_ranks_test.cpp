// A tenant whose ranks are processes, on the fake NCCL that answers as NCCL does (tests/gpu/fake_nccl.cpp,
// docs/fakes.md): each rank is a forked process that loads the fake, meets the others through a folder
// rendezvous and runs the NCCL calls of allreduce's ranked path (kernels/cuda/allreduce.cu): init_rank, one
// allreduce in a group, the vote's lone allreduce, close_rank. No GPU is touched: the fake never reads a
// buffer or a stream.
#include "kernels/cuda/nccl_api.h"
#include "kernels/cuda/nccl_comm.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace nccl = ib::cuda::nccl;
using Clock = std::chrono::steady_clock;

// The ranks' key-value exchange over files in one folder (the harness relays it over the worker protocol).
class FolderRendezvous final : public ib::Rendezvous {
 public:
  explicit FolderRendezvous(std::string dir) : dir_(std::move(dir)) {}
  void put(const std::string& key, const std::string& value) override {
    const std::string file = path(key), tmp = file + ".tmp";
    std::ofstream(tmp, std::ios::binary) << value;
    fs::rename(tmp, file);
  }
  std::string get(const std::string& key, double timeout_s) override {
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    while (Clock::now() < deadline) {
      std::ifstream in(path(key), std::ios::binary);
      if (in) return std::string(std::istreambuf_iterator<char>(in), {});
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a poll under a deadline
    }
    throw ib::WorkloadError("rendezvous: no " + key + " within the deadline");
  }

 private:
  std::string path(const std::string& key) const {
    std::string name = key;
    for (char& c : name)
      if (c == '/') c = '_';
    return dir_ + "/" + name;
  }
  std::string dir_;
};

using Env = std::map<std::string, std::string>;
using Body = std::function<std::string(int rank, const nccl::Library& lib, FolderRendezvous& rendezvous)>;

// A folder of the test's own: the rendezvous, and TMPDIR for the fake's folders (none may be left).
class Scratch {
 public:
  Scratch() : path_(fs::temp_directory_path() / ("ib_nccl_ranks_" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_ / "kv");
    fs::create_directories(path_ / "tmp");
  }
  ~Scratch() { fs::remove_all(path_); }
  std::string kv() const { return (path_ / "kv").string(); }
  std::string tmp() const { return (path_ / "tmp").string(); }
  bool tmp_empty() const { return fs::is_empty(path_ / "tmp"); }

 private:
  fs::path path_;
};

// Runs `body` as one forked process per entry of `envs` (rank r with envs[r] set, after the fake's and NCCL's
// variables of this process are cleared); returns what each said: "ok", or the error. A rank still running
// after `limit_s` is killed and reported as "hung".
std::vector<std::string> run_ranks(const Scratch& scratch, const std::vector<Env>& envs, const Body& body,
                                   double limit_s = 20.0) {
  std::vector<pid_t> pids;
  std::vector<int> reads;
  for (std::size_t r = 0; r < envs.size(); ++r) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      for (const char* k : {"FAKE_NCCL_GPU", "FAKE_NCCL_VERSION", "FAKE_NCCL_HOST", "NCCL_MULTI_RANK_GPU_ENABLE"})
        ::unsetenv(k);
      ::setenv("INTERFERENCE_BENCH_NCCL", FAKE_NCCL_DIR, 1);
      ::setenv("TMPDIR", scratch.tmp().c_str(), 1);
      for (const auto& [k, v] : envs[r]) ::setenv(k.c_str(), v.c_str(), 1);
      std::string said;
      try {
        const nccl::Library lib = nccl::Library::load_from_environment();
        FolderRendezvous rendezvous(scratch.kv());
        said = lib.ok() ? body(static_cast<int>(r), lib, rendezvous) : lib.describe();
      } catch (const std::exception& e) {
        said = e.what();
      }
      (void)!::write(fds[1], said.data(), said.size());
      ::_exit(0);
    }
    ::close(fds[1]);
    pids.push_back(pid);
    reads.push_back(fds[0]);
  }
  std::vector<std::string> out(envs.size(), "hung");
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit_s);
  for (std::size_t r = 0; r < pids.size(); ++r) {
    int status = 0;
    while (::waitpid(pids[r], &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        ::kill(pids[r], SIGKILL);
        ::waitpid(pids[r], &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a poll under a deadline
    }
    std::string said;
    char buf[4096];
    for (ssize_t n; (n = ::read(reads[r], buf, sizeof(buf))) > 0;) said.append(buf, static_cast<std::size_t>(n));
    ::close(reads[r]);
    if (!said.empty()) out[r] = said;
  }
  return out;
}

ib::RankInfo rank_of(int rank, int world) {
  ib::RankInfo info;
  info.rank = rank;
  info.world_size = world;
  info.local_rank = rank;
  return info;
}

Clock::time_point in_seconds(double s) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

// One float allreduce in a group, as allreduce.cu's enqueue issues it; the buffers are never read by the fake.
nccl::Result group_allreduce(const nccl::Library& lib, nccl::Comm comm) {
  const nccl::Api& api = lib.api();
  if (const nccl::Result r = api.group_start(); r != nccl::Result::success) return r;
  const nccl::Result r = api.all_reduce(nullptr, nullptr, 256, nccl::DataType::float32, nccl::RedOp::sum, comm, nullptr);
  const nccl::Result end = api.group_end();
  return r == nccl::Result::success ? end : r;
}

// allreduce.cu's ranked path, fixed: every call settled before the next; an error aborts the communicator.
std::string fixed_path(int rank, const nccl::Library& lib, FolderRendezvous& kv, int world) {
  nccl::Comm comm = nccl::init_rank(lib, rank_of(rank, world), kv, 10.0);
  const nccl::Api& api = lib.api();
  const auto failed = [&](const char* what, nccl::Result r) {
    const std::string why = std::string(what) + ": " + nccl::result_name(r) + " " + lib.last_error();
    (void)api.comm_abort(comm);
    return why;
  };
  for (int i = 0; i < 3; ++i)
    if (const nccl::Result r = nccl::settle(lib, comm, group_allreduce(lib, comm), in_seconds(10)); r != nccl::Result::success)
      return failed("group", r);
  const nccl::Result vote = api.all_reduce(nullptr, nullptr, 1, nccl::DataType::int32, nccl::RedOp::min, comm, nullptr);
  if (const nccl::Result r = nccl::settle(lib, comm, vote, in_seconds(10)); r != nccl::Result::success)
    return failed("vote", r);
  const std::string closed = nccl::close_rank(lib, comm, 10.0);
  return closed.empty() ? "ok" : "close: " + closed;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The issue-46 defect: the ranked path as it was (IB_CHECK around ncclGroupEnd, i.e. anything but ncclSuccess
// is an error) fails on NCCL's non-blocking communicator, whose group end is ncclInProgress; and a collective
// issued before the communicator settled is refused, as NCCL's ncclCommEnsureReady refuses it.
TEST(NcclRanks, TheUnsettledPathFailsOnANonBlockingCommunicator) {
  const Scratch scratch;
  // The group stays in progress for 100 s: the next call comes long before it could have settled.
  const Env slow = {{"FAKE_NCCL_ASYNC_US", "100000000"}};
  std::vector<Env> envs = {slow, slow};
  envs[0]["FAKE_NCCL_GPU"] = "gpu0";
  envs[1]["FAKE_NCCL_GPU"] = "gpu1";
  const auto said = run_ranks(scratch, envs,
                              [](int rank, const nccl::Library& lib, FolderRendezvous& kv) {
                                nccl::Comm comm = nccl::init_rank(lib, rank_of(rank, 2), kv, 10.0);
                                const nccl::Result end = group_allreduce(lib, comm);
                                const nccl::Result next = lib.api().all_reduce(
                                    nullptr, nullptr, 1, nccl::DataType::int32, nccl::RedOp::min, comm, nullptr);
                                const std::string refused = lib.last_error();
                                // Neither aborts before both have asked (a peer's abort is an error of its own).
                                kv.put("asked" + std::to_string(rank), "1");
                                (void)kv.get("asked" + std::to_string(1 - rank), 10.0);
                                (void)lib.api().comm_abort(comm);
                                return nccl::result_name(end) + " then " + nccl::result_name(next) + ": " + refused;
                              });
  for (const std::string& s : said)
    EXPECT_EQ(s, "ncclInProgress then ncclInvalidArgument: Attempt to use communicator before the previous operation "
                 "returned ncclSuccess");
}

TEST(NcclRanks, TwoRanksSettleEveryCallAndFinalizeBeforeDestroy) {
  const Scratch scratch;
  const auto said = run_ranks(scratch, {{{"FAKE_NCCL_GPU", "gpu0"}}, {{"FAKE_NCCL_GPU", "gpu1"}}},
                              [](int rank, const nccl::Library& lib, FolderRendezvous& kv) {
                                return fixed_path(rank, lib, kv, 2);
                              });
  EXPECT_EQ(said, (std::vector<std::string>{"ok", "ok"}));
  EXPECT_TRUE(scratch.tmp_empty()) << "every rank finalized and destroyed: the fake's folder is gone";
}

// A mixed placement (ranks 0 and 1 on one GPU, rank 2 on another): from NCCL 2.30 every rank checks every pair,
// so rank 2 needs NCCL_MULTI_RANK_GPU_ENABLE=1 too. With it on every rank the tenant runs; without it on
// rank 2, rank 2's init fails in NCCL's words and the others hear of it (an abort closes their connections:
// rank 2's, or that of a rank that heard first) instead of hanging.
TEST(NcclRanks, AMixedPlacementNeedsTheMultiRankFlagOnEveryRank) {
  const Env on = {{"FAKE_NCCL_VERSION", "23007"}, {"NCCL_MULTI_RANK_GPU_ENABLE", "1"}};
  std::vector<Env> envs = {on, on, on};
  envs[0]["FAKE_NCCL_GPU"] = envs[1]["FAKE_NCCL_GPU"] = "gpu0";
  envs[2]["FAKE_NCCL_GPU"] = "gpu1";
  const Body body = [](int rank, const nccl::Library& lib, FolderRendezvous& kv) { return fixed_path(rank, lib, kv, 3); };
  {
    const Scratch scratch;
    EXPECT_EQ(run_ranks(scratch, envs, body), (std::vector<std::string>{"ok", "ok", "ok"}));
  }
  envs[2].erase("NCCL_MULTI_RANK_GPU_ENABLE");
  const Scratch scratch;
  const auto said = run_ranks(scratch, envs, body);
  EXPECT_TRUE(has(said[2], "rank 2 of 3: ncclCommInitRankConfig failed: ncclInvalidUsage (Multiple Ranks are using the "
                           "same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1"))
      << said[2];
  for (int r : {0, 1})
    EXPECT_TRUE(has(said[r], "ncclRemoteError") && has(said[r], "Connection closed by remote peer")) << said[r];
}

// Before 2.30 nothing allows two ranks on one GPU: those two fail their init ("Duplicate GPU detected"), the
// rank alone on its GPU does not fail its own check.
TEST(NcclRanks, BeforeNccl230TwoRanksOnOneGpuFailWithDuplicateGpu) {
  std::vector<Env> envs(3, Env{{"FAKE_NCCL_VERSION", "22809"}, {"NCCL_MULTI_RANK_GPU_ENABLE", "1"}});
  envs[0]["FAKE_NCCL_GPU"] = envs[1]["FAKE_NCCL_GPU"] = "gpu0";
  envs[2]["FAKE_NCCL_GPU"] = "gpu1";
  const Scratch scratch;
  const auto said = run_ranks(scratch, envs, [](int rank, const nccl::Library& lib, FolderRendezvous& kv) {
    return fixed_path(rank, lib, kv, 3);
  });
  EXPECT_TRUE(has(said[0], "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device gpu0")) << said[0];
  EXPECT_TRUE(has(said[1], "Duplicate GPU detected : rank 1 and rank 0")) << said[1];
  EXPECT_FALSE(has(said[2], "Duplicate GPU")) << said[2];
  EXPECT_NE(said[2], "ok");
}

// A rank that never joins: init's settle gives up at its deadline, aborts, and names the rank and the wait.
TEST(NcclRanks, ARankThatNeverJoinsEndsTheInitAtItsDeadline) {
  const Scratch scratch;
  const auto t0 = Clock::now();
  const auto said = run_ranks(scratch, {{{"FAKE_NCCL_GPU", "gpu0"}}}, [](int, const nccl::Library& lib, FolderRendezvous& kv) {
    (void)nccl::init_rank(lib, rank_of(0, 2), kv, 0.3);
    return std::string("ok");
  });
  EXPECT_TRUE(has(said[0], "rank 0 of 2: the NCCL communicator was not ready within timeout_s 0.3")) << said[0];
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 10.0);
}

// A peer's abort is an asynchronous error: the surviving rank's next settle reports ncclRemoteError, and its
// teardown aborts instead of waiting in ncclCommFinalize for a rank that is gone.
TEST(NcclRanks, APeersAbortIsAnAsynchronousErrorAndTeardownAborts) {
  const Scratch scratch;
  const auto said = run_ranks(scratch, {{{"FAKE_NCCL_GPU", "gpu0"}}, {{"FAKE_NCCL_GPU", "gpu1"}}},
                              [](int rank, const nccl::Library& lib, FolderRendezvous& kv) {
                                nccl::Comm comm = nccl::init_rank(lib, rank_of(rank, 2), kv, 10.0);
                                if (rank == 1) {
                                  (void)lib.api().comm_abort(comm);
                                  kv.put("aborted", "1");
                                  return std::string("aborted");
                                }
                                (void)kv.get("aborted", 10.0);
                                const nccl::Result r = nccl::settle(lib, comm, group_allreduce(lib, comm), in_seconds(10));
                                return nccl::result_name(r) + "; " + nccl::close_rank(lib, comm, 10.0);
                              });
  EXPECT_EQ(said[1], "aborted");
  EXPECT_TRUE(has(said[0], "ncclRemoteError; the communicator was in error: ncclRemoteError")) << said[0];
  EXPECT_TRUE(has(said[0], "aborted (ncclCommAbort)")) << said[0];
  EXPECT_TRUE(scratch.tmp_empty());
}

// ncclCommFinalize waits for the node's other ranks: a peer that is alive but never finalizes makes it outlive
// close_rank's deadline, which aborts.
TEST(NcclRanks, TeardownAbortsWhenAPeerNeverFinalizes) {
  const Scratch scratch;
  const auto said = run_ranks(scratch, {{{"FAKE_NCCL_GPU", "gpu0"}}, {{"FAKE_NCCL_GPU", "gpu1"}}},
                              [](int rank, const nccl::Library& lib, FolderRendezvous& kv) {
                                nccl::Comm comm = nccl::init_rank(lib, rank_of(rank, 2), kv, 10.0);
                                if (rank == 1) {
                                  (void)kv.get("closed", 10.0);  // alive, not finalizing, until rank 0 gave up
                                  (void)lib.api().comm_abort(comm);
                                  return std::string("waited");
                                }
                                const std::string closed = nccl::close_rank(lib, comm, 0.3);
                                kv.put("closed", "1");
                                return closed;
                              });
  EXPECT_EQ(said[0], "ncclCommFinalize did not finish within 0.300000 s (a rank that never finalized?); aborted "
                     "(ncclCommAbort)");
  EXPECT_EQ(said[1], "waited");
}

}  // namespace
