// UTF-8 validation for text read from outside (config files, manifests)
// before it reaches a parser library: some libraries decode a multi-byte
// sequence by its lead byte alone and read past the end of their buffer
// when the sequence is cut short, so the bytes are checked here first and a
// bad sequence becomes a clear error naming where it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "foresight/core/status.h"

namespace foresight {

// Where the first invalid sequence starts.
struct Utf8Error {
  size_t offset = 0;  // byte offset from the start of the text
  int64_t line = 1;   // 1-based; lines end at '\n'
  int64_t column = 1; // 1-based, in bytes from the start of the line
  uint8_t byte = 0;   // the byte at `offset`
};

// Returns the first invalid sequence in `text`, or nothing when it is all
// well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF, no sequence cut short by the end of the text).
std::optional<Utf8Error> FindInvalidUtf8(std::string_view text);

// OK, or InvalidArgument("<origin>:<line>:<column>: invalid UTF-8 (byte 0xE5
// at byte offset 2)").
Status CheckUtf8(std::string_view text, const std::string& origin);

}  // namespace foresight
