// A metrics file with lines inside an epoch (DLRM's --eval-every lines,
// "epoch_end": false) resumes at the last line of the checkpoint's epoch:
// the lines of a lost epoch, whole or begun, are dropped.
#include <fstream>
#include <sstream>
#include <string>

#include "metrics_writer.h"
#include "testing/testing.h"

namespace foresight::trainer::internal {
namespace {

TEST(DlrmMetricsResumeTest, LinesWithinAnEpochGoWithTheirEpoch) {
  testing::TempDir dir;
  const std::string path = dir.File("m.jsonl");
  const std::string kept =
      "{\"epoch\":1,\"epoch_end\":false,\"step\":10}\n"
      "{\"epoch\":1,\"step\":20}\n"
      "{\"epoch\":2,\"epoch_end\":false,\"step\":30}\n"
      "{\"epoch\":2,\"step\":40}\n";
  // Killed inside epoch 3, after one of its lines; the checkpoint holds 2.
  testing::WriteFile(path, kept + "{\"epoch\":3,\"epoch_end\":false,\"step\":50}\n{\"epoch\":3,\"ep");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<MetricsWriter> w, MetricsWriter::Resume(path, 2, false));
  ASSERT_OK(w->WriteLine(nlohmann::json{{"epoch", 3}, {"epoch_end", false}, {"step", 50}}, false));
  w.reset();
  EXPECT_EQ(testing::ReadFile(path), kept + "{\"epoch\":3,\"epoch_end\":false,\"step\":50}\n");

  // A checkpoint of epoch 1 keeps only epoch 1's two lines.
  testing::WriteFile(path, kept);
  ASSERT_OK_AND_ASSIGN(w, MetricsWriter::Resume(path, 1, false));
  ASSERT_OK(w->WriteLine(nlohmann::json{{"epoch", 2}, {"step", 40}}, true));
  w.reset();
  EXPECT_EQ(testing::ReadFile(path),
            "{\"epoch\":1,\"epoch_end\":false,\"step\":10}\n{\"epoch\":1,\"step\":20}\n{\"epoch\":2,\"step\":40}\n");
}

}  // namespace
}  // namespace foresight::trainer::internal
