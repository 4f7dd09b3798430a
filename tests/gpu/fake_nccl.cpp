// A stand-in libnccl.so.2 that answers as NCCL does on the paths this project uses (the loader's tests and
// the ranked communicator of a tenant whose ranks are processes, kernels/cuda/nccl_comm.h). Built twice:
// complete, and without ncclAllReduce (FAKE_NCCL_WITHOUT_ALLREDUCE) to see a library that lacks a function
// refused. Each behaviour below cites the NCCL source (tag v2.30.7-1 unless said) or doc page it follows;
// docs/fakes.md lists them with what the fake does not model.
//
// Ranks are processes, as with NCCL: they meet through a folder that ncclGetUniqueId makes (its path is the
// unique id, where NCCL's id holds the bootstrap root's address: src/bootstrap.cc, bootstrapGetUniqueId).
// Each rank writes a file there at init (its GPU, node, pid and whether it may share a GPU) and markers when
// it finalizes, destroys or aborts; a rank reads its peers' files to make progress. No data moves: buffers
// and streams are never touched (there is no GPU), so a collective "completes" FAKE_NCCL_ASYNC_US after it
// was enqueued.
//
// Environment (the fake's, not NCCL's):
//   FAKE_NCCL_VERSION   NCCL_VERSION_CODE to report (default 29901: "2.99.1", a version no NCCL has)
//   FAKE_NCCL_GPU       this process's GPU, as NCCL's bus id / UUID would name it (default "0000:01:00.0")
//   FAKE_NCCL_HOST      this process's node (default: the host name), NCCL's hostHash
//   FAKE_NCCL_ASYNC_US  how long a non-blocking group stays ncclInProgress (default 300)
//   FAKE_NCCL_HANG_S    how long a call NCCL would hang in waits before the fake gives up with
//                       ncclInternalError, so a test fails instead of hanging (default 30)
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

// ncclResult_t (src/nccl.h.in), declared here from NCCL's header and not taken from kernels/cuda/nccl_api.h:
// a wrong value there must not be copied into the fake that tests it.
enum Result : int {
  kSuccess = 0,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
};
constexpr int kConfigUndefined = INT_MIN;  // NCCL_CONFIG_UNDEF_INT

// ncclUniqueId, passed by value to ncclCommInitRankConfig (a 128-byte struct goes on the stack).
struct UniqueId {
  char internal[128];
};

// ncclConfig_t's prefix this project sets (2.17's layout; NCCL reads `size` bytes of it).
struct Config {
  std::size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
};

using Clock = std::chrono::steady_clock;

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

int version() { return env_int("FAKE_NCCL_VERSION", 29901); }

std::string env_text(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string host_name() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof(buf) - 1);
  return env_text("FAKE_NCCL_HOST", buf);
}

// NCCL's parameters are read from the environment once per process, at their first use, and cached
// (src/include/param.h, NCCL_PARAM: `static int64_t cache`): a setenv after NCCL's first initialisation is
// not seen. NCCL_MULTI_RANK_GPU_ENABLE is NCCL_PARAM(MultiRankGpuEnable, ...) (src/init.cc:68, from 2.30).
bool multi_rank_gpu_enable() {
  static const bool cached = env_int("NCCL_MULTI_RANK_GPU_ENABLE", 0) != 0;
  return cached;
}

// ncclGetLastError: the last WARN of this process (src/debug.cc keeps one ncclLastError buffer).
std::mutex g_error_mu;
std::string g_last_error = "";

Result fail(Result r, const std::string& why) {
  std::lock_guard<std::mutex> lock(g_error_mu);
  g_last_error = why;
  return r;
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

// Writes `text` to `path` whole (a temporary file, then rename): a peer never reads half a file.
void publish(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << text;
  }
  std::rename(tmp.c_str(), path.c_str());
}

std::string marker(const std::string& dir, const char* what, int rank) {
  return dir + "/" + what + "." + std::to_string(rank);
}

struct Peer {
  bool present = false;
  std::string gpu, host;
  long pid = 0;
  bool multi = false;
};

Peer read_peer(const std::string& dir, int rank) {
  Peer p;
  std::ifstream in(marker(dir, "rank", rank));
  if (!in) return p;
  int multi = 0;
  p.present = static_cast<bool>(in >> p.gpu >> p.host >> p.pid >> multi);
  p.multi = multi != 0;
  return p;
}

enum class Job { none, init, group, finalize };

struct Comm {
  std::string dir;
  int nranks = 0, rank = 0;
  bool blocking = true;
  Result state = kSuccess;  // comm->asyncResult, read by ncclCommGetAsyncError
  Job job = Job::none;
  Clock::time_point job_done_at{};
  bool finalize_called = false;
  std::vector<Peer> peers;  // after init
};

// The group of this thread: ncclGroupDepth and the communicators with work in it are thread-local
// (src/group.cc: `__thread int ncclGroupDepth`, `__thread struct ncclComm* ncclGroupCommHead`).
thread_local int t_group_depth = 0;
thread_local std::vector<Comm*> t_group_comms;

// The duplicate-GPU check every rank runs after the init allgather of all ranks' peer info.
// From 2.30 (src/init.cc:1050-1059) every rank compares every pair (i, j) of ranks: two on one GPU of one
// node fail this rank's init with ncclInvalidUsage unless this rank's process set
// NCCL_MULTI_RANK_GPU_ENABLE=1, whichever ranks the pair are. Before 2.30 (v2.28.9-1 src/init.cc:903) a rank
// compares itself with each other rank, and nothing allows it.
Result duplicate_gpu_check(const Comm& c) {
  const std::vector<Peer>& p = c.peers;
  const auto same = [&](int i, int j) { return p[i].host == p[j].host && p[i].gpu == p[j].gpu; };
  if (version() >= 23000) {
    for (int i = 0; i < c.nranks; ++i)
      for (int j = 0; j < i; ++j)
        if (!multi_rank_gpu_enable() && same(i, j))
          return fail(kInvalidUsage, "Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 "
                                     "to enable this configuration.");
    return kSuccess;
  }
  for (int i = 0; i < c.nranks; ++i)
    if (i != c.rank && same(i, c.rank))
      return fail(kInvalidUsage, "Duplicate GPU detected : rank " + std::to_string(c.rank) + " and rank " +
                                     std::to_string(i) + " both on CUDA device " + p[c.rank].gpu);
  return kSuccess;
}

// A peer that aborted, or whose process is gone without destroying its communicator: NCCL's sockets see the
// connection closed (src/misc/socket.cc:58, "Connection closed by remote peer") and the proxy's asyncResult
// becomes ncclRemoteError, which ncclCommGetAsyncError reports (src/init.cc:3453-3456).
Result peer_failure(const Comm& c) {
  for (int r = 0; r < c.nranks; ++r) {
    if (r == c.rank) continue;
    if (exists(marker(c.dir, "abort", r)))
      return fail(kRemoteError, "socketProgress: Connection closed by remote peer (rank " + std::to_string(r) +
                                    " aborted its communicator)");
    const Peer p = r < static_cast<int>(c.peers.size()) ? c.peers[r] : read_peer(c.dir, r);
    if (p.present && p.pid > 0 && ::kill(static_cast<pid_t>(p.pid), 0) != 0 && errno == ESRCH &&
        !exists(marker(c.dir, "gone", r)))
      return fail(kRemoteError, "socketProgress: Connection closed by remote peer (rank " + std::to_string(r) +
                                    "'s process exited)");
  }
  return kSuccess;
}

// Whether every rank of this rank's node has called ncclCommFinalize (or destroy, or abort): finalize's state
// turns ncclSuccess "when the communicator is globally quiescent" (src/nccl.h.in:198-202); the docs call it
// an intra-node collective (api/comms.html, ncclCommFinalize).
bool node_quiescent(const Comm& c) {
  for (int r = 0; r < c.nranks; ++r) {
    if (c.peers[r].host != c.peers[c.rank].host) continue;
    if (!exists(marker(c.dir, "final", r)) && !exists(marker(c.dir, "destroy", r)) && !exists(marker(c.dir, "abort", r)))
      return false;
  }
  return true;
}

// Moves the communicator's asynchronous job on, as NCCL's async thread does (src/group.cc, ncclAsyncJobMain),
// and reports a peer's failure whenever it is seen: an error state stays.
void progress(Comm& c) {
  if (c.state != kInProgress && c.state != kSuccess) return;
  if (c.job == Job::init && c.state == kInProgress) {
    std::vector<Peer> peers(static_cast<std::size_t>(c.nranks));
    for (int r = 0; r < c.nranks; ++r) {
      peers[r] = read_peer(c.dir, r);
      if (!peers[r].present) {
        // The bootstrap allgather waits for every rank (src/bootstrap.cc); a rank that aborted meanwhile is
        // a closed connection.
        if (const Result f = peer_failure(c); f != kSuccess) c.state = f;
        return;
      }
    }
    c.peers = peers;
    c.state = duplicate_gpu_check(c);
    return;
  }
  if (c.job == Job::finalize && c.state == kSuccess) return;  // quiescent: the peers may leave now
  if (const Result f = peer_failure(c); f != kSuccess) {
    c.state = f;
    return;
  }
  if (c.state != kInProgress) return;
  if (c.job == Job::group && Clock::now() >= c.job_done_at) c.state = kSuccess;
  if (c.job == Job::finalize && node_quiescent(c)) c.state = kSuccess;
}

// ncclCommEnsureReady (src/init.cc:422-438): a call on a communicator whose previous operation has not
// returned ncclSuccess yet is ncclInvalidArgument; an error state is returned as it is.
Result ensure_ready(Comm* c) {
  if (!c) return fail(kInvalidArgument, "comm argument is NULL");
  progress(*c);
  if (c->state == kInProgress)
    return fail(kInvalidArgument, "Attempt to use communicator before the previous operation returned ncclSuccess");
  return c->state;
}

// The end of the outermost group (src/group.cc:822-857): for non-blocking communicators NCCL marks each
// communicator of the group ncclInProgress, starts a thread that launches the work and returns ncclInProgress;
// for blocking ones it launches in the caller's thread and returns its result. The two may not be mixed
// (src/group.cc:54-63).
Result launch_group() {
  std::vector<Comm*> comms;
  comms.swap(t_group_comms);
  if (comms.empty()) return kSuccess;
  const bool blocking = comms[0]->blocking;
  for (Comm* c : comms)
    if (c->blocking != blocking)
      return fail(kInvalidUsage, "Blocking and nonblocking communicators are not allowed in the same group.");
  if (blocking) return kSuccess;  // launched: no data moves in the fake
  const auto done_at = Clock::now() + std::chrono::microseconds(env_int("FAKE_NCCL_ASYNC_US", 300));
  for (Comm* c : comms) {
    c->state = kInProgress;
    c->job = Job::group;
    c->job_done_at = done_at;
  }
  return kInProgress;
}

// Blocking calls wait in NCCL; the fake gives up after FAKE_NCCL_HANG_S so that a test fails instead.
Result wait_blocking(Comm& c, const char* what) {
  const auto give_up = Clock::now() + std::chrono::seconds(env_int("FAKE_NCCL_HANG_S", 30));
  while (c.state == kInProgress) {
    progress(c);
    if (c.state != kInProgress) break;
    if (Clock::now() > give_up)
      return fail(kInternalError, std::string("fake NCCL: ") + what + " would hang here (its peers never came)");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return c.state;
}

void leave(Comm* c) {
  publish(marker(c->dir, "gone", c->rank), "");
  // The last rank to leave removes the folder (the fake's own; NCCL has no such folder).
  for (int r = 0; r < c->nranks; ++r)
    if (!exists(marker(c->dir, "gone", r))) {
      delete c;
      return;
    }
  if (DIR* d = ::opendir(c->dir.c_str())) {
    while (const dirent* e = ::readdir(d))
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        ::unlink((c->dir + "/" + e->d_name).c_str());
    ::closedir(d);
  }
  ::rmdir(c->dir.c_str());
  delete c;
}

}  // namespace

extern "C" {

int ncclGetVersion(int* v) {
  if (!v) return kInvalidArgument;
  *v = version();
  return kSuccess;
}

// NCCL's strings (src/init.cc:3415-3437).
const char* ncclGetErrorString(int code) {
  switch (code) {
    case 0: return "no error";
    case 1: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case 2: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case 3: return "internal error - please report this issue to the NCCL developers";
    case 4: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case 5: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case 6: return "remote process exited or there was a network error";
    case 7: return "NCCL operation in progress";
    case 8: return "timeout";
    default: return "unknown result code";
  }
}

// One buffer per process, returned as it is (the comm argument is unused: api/comms.html, ncclGetLastError).
const char* ncclGetLastError(void*) {
  static thread_local std::string copy;
  std::lock_guard<std::mutex> lock(g_error_mu);
  copy = g_last_error;
  return copy.c_str();
}

// ncclCommInitAll makes one communicator per CUDA device of this process: the fake has no devices.
int ncclCommInitAll(void**, int, const int*) {
  return fail(kInvalidUsage, "fake NCCL: ncclCommInitAll needs CUDA devices, which the fake does not model");
}

int ncclGetUniqueId(UniqueId* id) {
  if (!id) return kInvalidArgument;
  const std::string tmp = env_text("TMPDIR", "/tmp");
  std::string pattern = tmp + "/fake-nccl-XXXXXX";
  if (!::mkdtemp(pattern.data())) return fail(kSystemError, "fake NCCL: cannot make the rendezvous folder in " + tmp);
  std::memset(id->internal, 0, sizeof(id->internal));
  std::strncpy(id->internal, pattern.c_str(), sizeof(id->internal) - 1);
  return kSuccess;
}

// ncclCommInitRankConfig (src/init.cc:2490-2560): checks the arguments, sets *comm at once with its state
// ncclInProgress (init.cc:2513-2515) and runs the init in a job: non-blocking (config->blocking = 0) returns
// ncclInProgress and ncclCommGetAsyncError says when it is done; blocking waits for it. The default is
// blocking (NCCL_CONFIG_UNDEF_INT -> 1).
int ncclCommInitRankConfig(void** out, int nranks, UniqueId id, int rank, Config* config) {
  if (!out) return fail(kInvalidArgument, "ncclCommInitRankConfig: comm argument is NULL");
  *out = nullptr;
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return fail(kInvalidArgument, "Invalid rank requested : " + std::to_string(rank) + "/" + std::to_string(nranks));
  const std::string dir(id.internal, strnlen(id.internal, sizeof(id.internal)));
  if (dir.empty() || !exists(dir)) return fail(kSystemError, "fake NCCL: no rendezvous folder " + dir);
  auto* c = new Comm;
  c->dir = dir;
  c->nranks = nranks;
  c->rank = rank;
  c->blocking = !(config && config->blocking != kConfigUndefined && config->blocking == 0);
  c->state = kInProgress;
  c->job = Job::init;
  std::ostringstream me;
  me << env_text("FAKE_NCCL_GPU", "0000:01:00.0") << ' ' << host_name() << ' ' << ::getpid() << ' '
     << (multi_rank_gpu_enable() ? 1 : 0) << '\n';
  publish(marker(dir, "rank", rank), me.str());
  *out = c;
  if (!c->blocking) return kInProgress;
  return wait_blocking(*c, "ncclCommInitRankConfig");
}

int ncclCommGetAsyncError(void* comm, int* error) {
  if (!comm || !error) return fail(kInvalidArgument, "ncclGetAsyncError: argument is NULL");
  auto* c = static_cast<Comm*>(comm);
  progress(*c);
  *error = c->state;
  return kSuccess;
}

int ncclGroupStart() {
  ++t_group_depth;
  return kSuccess;
}

int ncclGroupEnd() {
  if (t_group_depth == 0) return fail(kInvalidUsage, "ncclGroupEnd: not in a group call.");  // group.cc:776
  if (--t_group_depth > 0) return kSuccess;
  return launch_group();
}

#ifndef FAKE_NCCL_WITHOUT_ALLREDUCE
// ncclEnqueueCheck (src/enqueue.cc:3125-3172): an implicit group around the call, the communicator checked
// ready first (a call while it is ncclInProgress is ncclInvalidArgument), and on a non-blocking communicator
// the call returns the communicator's state after the group ends: ncclInProgress for a lone collective,
// ncclSuccess inside an outer group (the launch waits for its ncclGroupEnd).
int ncclAllReduce(const void*, void*, std::size_t, int, int, void* comm, void*) {
  auto* c = static_cast<Comm*>(comm);
  if (const Result r = ensure_ready(c); r != kSuccess) return r;
  ncclGroupStart();
  t_group_comms.push_back(c);
  const Result r = static_cast<Result>(ncclGroupEnd());
  if (r != kSuccess && r != kInProgress) return r;
  return c->blocking ? r : c->state;
}
#endif

// ncclCommFinalize (src/init.cc:2782-2822): the communicator must be ready; a second finalize is
// ncclInvalidArgument; its state turns ncclInProgress until every rank of the node has finalized
// (node_quiescent); non-blocking returns that state, blocking waits.
int ncclCommFinalize(void* comm) {
  auto* c = static_cast<Comm*>(comm);
  if (const Result r = ensure_ready(c); r != kSuccess) return r;
  if (c->finalize_called) return fail(kInvalidArgument, "ncclCommFinalize: called twice");
  c->finalize_called = true;
  publish(marker(c->dir, "final", c->rank), "");
  c->state = kInProgress;
  c->job = Job::finalize;
  progress(*c);
  if (!c->blocking) return c->state;
  return wait_blocking(*c, "ncclCommFinalize");
}

// ncclCommDestroy (src/init.cc:2878-2912; api/comms.html): the communicator must be ready (ncclCommEnsureReady,
// so a destroy while ncclInProgress is ncclInvalidArgument). After a finalize it is purely local; without one it
// finalizes first, "an intra-node collective call, which all ranks on the same node should call to avoid a
// hang": it waits for the node's other ranks.
int ncclCommDestroy(void* comm) {
  if (!comm) return kSuccess;
  auto* c = static_cast<Comm*>(comm);
  if (const Result r = ensure_ready(c); r != kSuccess && r != kRemoteError) return r;
  if (!c->finalize_called && c->state == kSuccess) {
    publish(marker(c->dir, "destroy", c->rank), "");
    c->state = kInProgress;
    c->job = Job::finalize;
    if (const Result r = wait_blocking(*c, "ncclCommDestroy"); r != kSuccess) {
      leave(c);
      return r;
    }
  }
  leave(c);
  return kSuccess;
}

// ncclCommAbort (src/init.cc:3024-3060): frees the communicator and aborts what is in flight, whatever its
// state. Its peers see the connection closed (peer_failure). Not modelled: the docs' "all active ranks are
// required to call this function" (the fake's abort never waits for them).
int ncclCommAbort(void* comm) {
  if (!comm) return kSuccess;
  auto* c = static_cast<Comm*>(comm);
  publish(marker(c->dir, "abort", c->rank), "");
  t_group_comms.erase(std::remove(t_group_comms.begin(), t_group_comms.end(), c), t_group_comms.end());
  leave(c);
  return kSuccess;
}

}  // extern "C"
