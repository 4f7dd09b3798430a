// A toy loop with the shipped C++ heartbeat client (tests/e2e/test_command.py): each step does
// `--work N` iterations of integer arithmetic (0: none, to measure the heartbeat's own cost), then
// reports it. Runs until the harness ends it.
#include "clients/cpp/interference_bench_heartbeat.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  long work = 300000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--work") == 0) work = std::atol(argv[i + 1]);
  interference_bench::Heartbeat hb;
  if (!hb.active()) {
    std::fprintf(stderr, "toy_step: not run by interference-bench (no INTERFERENCE_BENCH_HEARTBEAT)\n");
    return 2;
  }
  volatile unsigned long long x = 0;
  for (;;) {
    for (long i = 0; i < work; ++i) x = x + static_cast<unsigned long long>(i) * static_cast<unsigned long long>(i);
    hb.step();
  }
}
