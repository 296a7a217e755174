// A CPU-only run loads no CUDA library (e2e). Every foresight process used
// to map the shared CUDA runtime and cuBLAS (with libcublasLt, about 200 MB
// of RSS) at start, whatever the device: that was the floor of every
// --memory-budget. Now the runtime is linked statically and opens the
// driver on its first call, cuBLAS is opened on the first GEMM on a GPU,
// and NCCL on the first NCCL communicator. The dynamic loader's own log (LD_DEBUG=files) lists every library a
// process loads or tries to load, linked or dlopen'ed, so a run that needed
// or opened any CUDA library, even one missing on this machine, fails here.
#include <gtest/gtest.h>

#include <string>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

using testing::Quote;

// The libraries a process's loader log names ("file=NAME [ns];").
std::vector<std::string> LoadedLibraries(const std::string& log) {
  std::vector<std::string> names;
  for (size_t at = log.find("file="); at != std::string::npos; at = log.find("file=", at + 1)) {
    const size_t end = log.find_first_of(" \t\n", at);
    names.push_back(log.substr(at + 5, end - at - 5));
  }
  return names;
}

void ExpectNoCudaLibrary(const testing::CliResult& r, const std::string& what) {
  ASSERT_EQ(r.code, 0) << what << ": " << r.err.substr(r.err.size() > 4000 ? r.err.size() - 4000 : 0);
  const std::vector<std::string> libs = LoadedLibraries(r.err);
  // The log works here: the CPU kernels' BLAS is always loaded.
  bool blas = false;
  for (const std::string& l : libs) {
    blas = blas || l.find("libdnnl") != std::string::npos;
    EXPECT_EQ(l.find("libcuda"), std::string::npos) << what << " loaded " << l;
    EXPECT_EQ(l.find("libcublas"), std::string::npos) << what << " loaded " << l;
    EXPECT_EQ(l.find("libnvidia"), std::string::npos) << what << " loaded " << l;
    EXPECT_EQ(l.find("libnccl"), std::string::npos) << what << " loaded " << l;
  }
  EXPECT_TRUE(blas) << what << ": no loader log (LD_DEBUG ignored?); libraries seen: " << libs.size();
}

TEST(CpuRunMaps, GenerateAndTrainLoadNoCudaLibrary) {
  testing::TempDir dir;
  const std::string data = dir.File("g");
  const std::string log = "LD_DEBUG=files ";
  ExpectNoCudaLibrary(testing::RunForesight("generate graph --output " + Quote(data) +
                                                " --nodes 2000 --edges 20000 --features 16 --train-frac 0.3"
                                                " --val-frac 0.1 --test-frac 0.1 --threads 2 --quiet",
                                            log),
                      "generate graph");
  const std::string train = "train " + Quote(data) + " --epochs 1 --threads 2 --batch-size 256 --fanouts 5,5 --quiet";
  ExpectNoCudaLibrary(testing::RunForesight(train + " --feature-store disk --memory-budget 256M --plan-only", log),
                      "train --plan-only");
  ExpectNoCudaLibrary(testing::RunForesight(train + " --device cpu", log), "train --device cpu");
}

}  // namespace
}  // namespace foresight
