// Test helpers: gzip / xz encoders (zlib, liblzma) for compressed inputs.
#pragma once

#include <string>

namespace foresight::datasets::testutil {

std::string Gzip(const std::string& data);
std::string Xz(const std::string& data);

}  // namespace foresight::datasets::testutil
