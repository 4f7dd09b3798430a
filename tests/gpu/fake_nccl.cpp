// A stand-in libnccl.so.2 for the loader's tests (kernels/cuda/nccl_api.h), built twice: complete,
// and without ncclAllReduce (FAKE_NCCL_WITHOUT_ALLREDUCE) to see a library that lacks a function
// refused. Its functions only answer: no test calls a collective through it.
#include <cstddef>
#include <cstdlib>

extern "C" {

int ncclGetVersion(int* version) {
  // "2.99.1": a version no real NCCL has, so a test can tell it loaded this one; FAKE_NCCL_VERSION another
  const char* given = std::getenv("FAKE_NCCL_VERSION");
  *version = given ? std::atoi(given) : 29901;
  return 0;
}
const char* ncclGetErrorString(int) { return "fake NCCL"; }
const char* ncclGetLastError(void*) { return "fake NCCL: no communicators"; }
int ncclCommInitAll(void**, int, const int*) { return 5; }  // ncclInvalidUsage
int ncclCommDestroy(void*) { return 0; }
int ncclCommAbort(void*) { return 0; }
int ncclGroupStart() { return 0; }
int ncclGroupEnd() { return 0; }
#ifndef FAKE_NCCL_WITHOUT_ALLREDUCE
int ncclAllReduce(const void*, void*, std::size_t, int, int, void*, void*) { return 5; }
#endif
}
