// The suite's main: GoogleTest, or a worker process when the first argument
// is --compile-worker (the GPU cache test starts several at once) or
// --saxpy-until (the fault tests' neighbour process). Workers must be fresh
// processes, since a child forked after CUDA initialised cannot use it.
// --list-corpus [cpu|gpu] lists the bad-input corpus and its counts.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "corpus.h"

namespace hardening {
int CompileWorkerMain(int argc, char** argv);  // workers.cc
int SaxpyUntilMain(int argc, char** argv);     // workers.cc
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--compile-worker") == 0)
    return hardening::CompileWorkerMain(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "--saxpy-until") == 0)
    return hardening::SaxpyUntilMain(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "--list-corpus") == 0)
    return hardening::ListCorpus(stdout, argc > 2 ? argv[2] : "");
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
