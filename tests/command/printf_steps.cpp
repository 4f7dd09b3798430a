// A program that writes one line per step with printf and never flushes (issue 48): its stdout buffering is
// the C library's, full when it writes to a pipe, a line at a time when it writes to a terminal. Used by
// tests/unit/command_test.cpp to check that a command's lines arrive when they are written.
//   ib_printf_steps STEPS WORK [GATE]
// Each step: WORK iterations of integer arithmetic, then "step I took 1 ms". With GATE (a named pipe), each
// step first reads one byte from it, so that the test decides when the next line is written (end of file on
// the gate: no more waiting).
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const long steps = argc > 1 ? std::atol(argv[1]) : 100, work = argc > 2 ? std::atol(argv[2]) : 1000000;
  std::FILE* gate = argc > 3 ? std::fopen(argv[3], "rb") : nullptr;
  volatile unsigned long long x = 0;
  for (long s = 0; s < steps; ++s) {
    if (gate && std::fgetc(gate) == EOF) {
      std::fclose(gate);
      gate = nullptr;
    }
    for (long i = 0; i < work; ++i) x = x + static_cast<unsigned long long>(i) * static_cast<unsigned long long>(i);
    std::printf("step %ld took 1 ms\n", s);
  }
  if (gate) std::fclose(gate);
  return 0;
}
