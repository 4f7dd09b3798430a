// A toy loop with the shipped C++ heartbeat client (tests/e2e/test_command.py): each step does
// `--work N` iterations of integer arithmetic (0: none, to measure the heartbeat's own cost), then
// reports it; runs until the harness ends it. With `--steps K` it runs K steps without a heartbeat and
// exits (a wall-metric run: a start-up of about a millisecond, where Python's is 100 ms or more).
#include "clients/cpp/interference_bench_heartbeat.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  long work = 300000, steps = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--work") == 0) work = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "--steps") == 0) steps = std::atol(argv[i + 1]);
  }
  volatile unsigned long long x = 0;
  if (steps > 0) {
    for (long s = 0; s < steps; ++s)
      for (long i = 0; i < work; ++i) x = x + static_cast<unsigned long long>(i) * static_cast<unsigned long long>(i);
    return 0;
  }
  interference_bench::Heartbeat hb;
  if (!hb.active()) {
    std::fprintf(stderr, "toy_step: not run by interference-bench (no INTERFERENCE_BENCH_HEARTBEAT)\n");
    return 2;
  }
  for (;;) {
    for (long i = 0; i < work; ++i) x = x + static_cast<unsigned long long>(i) * static_cast<unsigned long long>(i);
    hb.step();
  }
}
