// The DLRM step shape the DLRM benchmarks share (issue 12's speed shape by
// default) and their common flags:
//   --batch 2048 --dense 13 --tables 26 --dim 64 --bottom 512,256,64
//   --top 512,256,1 --threads 2 --reps 20
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace foresight::bench {

struct DlrmShape {
  int64_t batch = 2048, dense = 13, tables = 26, dim = 64;
  std::vector<int64_t> bottom{512, 256, 64}, top{512, 256, 1};
  int threads = 2, reps = 20;
};

// "512,256,64" -> {512, 256, 64}.
inline std::vector<int64_t> ParseDlrmLayers(const std::string& s) {
  std::vector<int64_t> v;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = s.find(',', at);
    const std::string part = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (!part.empty()) v.push_back(std::atoll(part.c_str()));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return v;
}

// Reads the flags above into *shape; an unknown flag, or a bottom MLP that
// does not end at --dim, prints why (as `tool`) and returns false.
inline bool ParseDlrmShape(int argc, char** argv, const char* tool, DlrmShape* shape) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const char* value = argv[i + 1];
    if (key == "--batch") shape->batch = std::atoll(value);
    else if (key == "--dense") shape->dense = std::atoll(value);
    else if (key == "--tables") shape->tables = std::atoll(value);
    else if (key == "--dim") shape->dim = std::atoll(value);
    else if (key == "--bottom") shape->bottom = ParseDlrmLayers(value);
    else if (key == "--top") shape->top = ParseDlrmLayers(value);
    else if (key == "--threads") shape->threads = std::atoi(value);
    else if (key == "--reps") shape->reps = std::atoi(value);
    else {
      std::fprintf(stderr, "%s: unknown flag %s\n", tool, argv[i]);
      return false;
    }
  }
  if (shape->bottom.empty() || shape->top.empty() || shape->bottom.back() != shape->dim) {
    std::fprintf(stderr, "%s: --bottom must end with --dim (%lld), --top must not be empty\n", tool,
                 static_cast<long long>(shape->dim));
    return false;
  }
  return true;
}

}  // namespace foresight::bench
