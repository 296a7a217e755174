// The .npy header dictionary: parsing it (from files numpy or foresight
// wrote) and building the padded one foresight writes. Private to storage.
#pragma once

#include <string>

#include "foresight/core/status.h"
#include "foresight/storage/npy.h"

namespace foresight::storage::internal {

// Parses the header dict text ("{'descr': '<f4', 'fortran_order': False,
// 'shape': (3, 4), }") into dtype/shape/item_size/is_bytes of `info`.
// Errors name `path`.
Status ParseNpyHeaderDict(const std::string& text, const std::string& path, NpyInfo* info);

// Bytes of the smallest v1.0 header for `descr`/`shape`: magic, version,
// length, the dict text and the final '\n', without padding.
size_t NpyHeaderTextSize(const std::string& descr, const Shape& shape);

// Builds a v1.0 header for `descr`/`shape` padded with spaces and a final
// '\n' to exactly `total_bytes` (a multiple of 64 that fits the text).
StatusOr<std::string> BuildNpyHeaderOfSize(const std::string& descr, const Shape& shape,
                                           size_t total_bytes);

// Overflow-checked numel * item_size; false when it does not fit in size_t.
bool CheckedDataBytes(const Shape& shape, size_t item_size, size_t* out);

}  // namespace foresight::storage::internal
