// Parsers for flag values that CLI11 does not know: byte sizes ("4G",
// "512MiB", "1000000") and fixed-length number lists ("0.57,0.19,0.19").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "foresight/core/status.h"

namespace foresight::apps {

// A byte count: digits (a decimal fraction is allowed with a suffix) and an
// optional suffix K, M, G, T (powers of 1024; "KiB"/"KB"/"k" spellings too,
// all binary) or B. `flag` names the flag in the error.
StatusOr<size_t> ParseByteSize(const std::string& text, const std::string& flag);

// Exactly `count` comma-separated numbers.
StatusOr<std::vector<double>> ParseNumberList(const std::string& text, size_t count,
                                              const std::string& flag);

}  // namespace foresight::apps
