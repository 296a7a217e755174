// Split construction for preprocess (private to foresight_datasets).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "preprocess_internal.h"

namespace foresight::datasets::internal {

// Reads "id<TAB>train|val|test" lines into out[0..2] (sorted ids). Ids are
// original tokens when job.string_ids, else row numbers in [0, N).
Status ReadSplitFile(const Job& job, const std::string& path, std::vector<int64_t> out[3]);
// The seeded random split of PreprocessOptions (sorted ids).
Status RandomSplit(Job* job, std::vector<int64_t> out[3]);

}  // namespace foresight::datasets::internal
