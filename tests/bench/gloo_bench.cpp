// The same gloo allreduce as the host-collective workload, outside the harness (issue 35): N processes
// pinned to CPUs 0..N-1 meet through a gloo FileStore in a temporary folder and time ITERATIONS allreduces
// of KIB KiB each, every one after an untimed one-int allgather (the vote host-collective's ranks take
// between samples, which lines them up as it does here) and the untimed writing of the rank's input (as
// host-collective writes it before each sample). Prints one JSON line: the per-iteration maximum
// over ranks (what the harness's sample is) and its median. scripts/gloo-through-harness.sh sets it beside
// the tool's own measurement of the same collective. Not a test.
//
// usage: ib-gloo-bench [--kib N] [--iterations N] [--warmup N] [--ranks N]
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

struct Options {
  long kib = 65536;
  int iterations = 30;
  int warmup = 3;
  int ranks = 2;
};

void allreduce(const std::shared_ptr<gloo::Context>& context, float* data, std::size_t count, std::uint32_t tag) {
  gloo::AllreduceOptions opts(context);
  opts.setOutput(data, count);
  opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
  opts.setTag(tag);
  opts.setTimeout(std::chrono::seconds(60));
  gloo::allreduce(opts);
}

// One rank: its durations (seconds) written to `fd` as doubles. Exits the process.
[[noreturn]] void run_rank(const Options& o, int rank, const std::string& store_dir, int fd) {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(rank % static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))), &cpus);
  sched_setaffinity(0, sizeof cpus, &cpus);
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, o.ranks);
  gloo::rendezvous::FileStore store(store_dir);
  context->connectFullMesh(store, device);
  std::vector<float> data(static_cast<std::size_t>(o.kib) * 1024 / 4, 1.0f);
  std::vector<double> took;
  for (int i = 0; i < o.warmup + o.iterations; ++i) {
    int vote = 1;
    std::vector<int> votes(static_cast<std::size_t>(o.ranks));
    gloo::AllgatherOptions v(context);  // untimed, as the harness's ranks vote between samples
    v.setInput(&vote, 1);
    v.setOutput(votes.data(), votes.size());
    v.setTag(2);
    v.setTimeout(std::chrono::seconds(60));
    gloo::allgather(v);
    std::fill(data.begin(), data.end(), 1.0f);  // untimed: the rank's input written, then it arrives
    const auto t0 = std::chrono::steady_clock::now();
    allreduce(context, data.data(), data.size(), 1);
    const std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
    if (i >= o.warmup) took.push_back(d.count());
  }
  const auto bytes = static_cast<ssize_t>(took.size() * sizeof(double));
  const bool ok = ::write(fd, took.data(), static_cast<std::size_t>(bytes)) == bytes;
  _exit(ok ? 0 : 1);
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const long v = std::strtol(argv[i + 1], nullptr, 10);
    if (k == "--kib" && v > 0) o.kib = v;
    else if (k == "--iterations" && v > 0) o.iterations = static_cast<int>(v);
    else if (k == "--warmup" && v >= 0) o.warmup = static_cast<int>(v);
    else if (k == "--ranks" && v > 1 && v <= 64) o.ranks = static_cast<int>(v);
    else return false;
  }
  return argc % 2 == 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o) || (o.kib * 1024) % (4L * o.ranks) != 0) {
    std::fprintf(stderr, "usage: ib-gloo-bench [--kib N] [--iterations N] [--warmup N] [--ranks N]\n");
    return 2;
  }
  char dir_template[] = "/tmp/ib-gloo-bench-XXXXXX";
  if (!mkdtemp(dir_template)) {
    std::perror("ib-gloo-bench: mkdtemp");
    return 3;
  }
  std::vector<int> read_ends;
  std::vector<pid_t> pids;
  for (int r = 0; r < o.ranks; ++r) {
    int p[2];
    if (pipe(p) != 0) return 3;
    const pid_t pid = fork();
    if (pid == 0) {
      ::close(p[0]);
      run_rank(o, r, dir_template, p[1]);
    }
    ::close(p[1]);
    read_ends.push_back(p[0]);
    pids.push_back(pid);
  }
  std::vector<std::vector<double>> per_rank(static_cast<std::size_t>(o.ranks));
  for (int r = 0; r < o.ranks; ++r) {
    std::vector<double> d(static_cast<std::size_t>(o.iterations));
    std::size_t got = 0;
    const std::size_t want = d.size() * sizeof(double);
    while (got < want) {
      const ssize_t n = ::read(read_ends[static_cast<std::size_t>(r)], reinterpret_cast<char*>(d.data()) + got, want - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got == want) per_rank[static_cast<std::size_t>(r)] = d;
  }
  int failed = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::filesystem::remove_all(dir_template);
  if (failed) {
    std::fprintf(stderr, "ib-gloo-bench: %d rank(s) failed\n", failed);
    return 1;
  }
  std::vector<double> worst(static_cast<std::size_t>(o.iterations), 0.0);
  for (const auto& d : per_rank)
    for (std::size_t i = 0; i < d.size(); ++i) worst[i] = std::max(worst[i], d[i]);
  std::vector<double> sorted = worst;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  std::printf("{\"kib\": %ld, \"ranks\": %d, \"iterations\": %d, \"median_s\": %.9g, \"max_over_ranks_s\": [", o.kib,
              o.ranks, o.iterations, median);
  for (std::size_t i = 0; i < n; ++i) std::printf("%s%.9g", i ? ", " : "", worst[i]);
  std::printf("]}\n");
  return 0;
}
