#include "fuzz_util.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace foresight::fuzz {

namespace fs = std::filesystem;

namespace {

std::string MakeScratchDir() {
  std::error_code ec;
  const char* env = std::getenv("TMPDIR");
  std::string base = fs::is_directory("/dev/shm", ec) ? "/dev/shm" : (env && *env ? env : "/tmp");
  std::string tmpl = base + "/foresight-fuzz-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::fprintf(stderr, "fuzz harness: mkdtemp %s failed\n", tmpl.c_str());
    std::abort();
  }
  return tmpl;
}

void RemoveScratchAtExit() { RemoveTree(ScratchDir()); }

}  // namespace

const std::string& ScratchDir() {
  // Never destroyed: the atexit handler that removes it runs after static
  // destructors registered later.
  static const std::string* dir = [] {
    auto* d = new std::string(MakeScratchDir());
    std::atexit(RemoveScratchAtExit);
    return d;
  }();
  return *dir;
}

std::string ScratchFile(const std::string& name) { return ScratchDir() + "/" + name; }

void WriteScratch(const std::string& path, std::string_view bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) {
    std::fprintf(stderr, "fuzz harness: cannot write %s\n", path.c_str());
    std::abort();
  }
}

void RemoveTree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

std::vector<std::string_view> SplitSections(std::string_view input, size_t n) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < n) {
    const size_t at = input.find(kSectionSeparator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + 1);
  }
  parts.push_back(input);
  parts.resize(n);
  return parts;
}

bool HasHugeTextId(std::string_view text) {
  int run = 0;
  for (char c : text) {
    run = (c >= '0' && c <= '9') ? run + 1 : 0;
    if (run >= 5) return true;  // >= 10000 = kMaxFuzzNodes
  }
  return false;
}

bool HasHugeBinaryId(std::string_view bytes, int width) {
  for (size_t i = 0; i + static_cast<size_t>(width) <= bytes.size(); i += static_cast<size_t>(width)) {
    int64_t v = 0;
    if (width == 4) {
      int32_t v32;
      std::memcpy(&v32, bytes.data() + i, 4);
      v = v32;
    } else {
      std::memcpy(&v, bytes.data() + i, 8);
    }
    if (v >= kMaxFuzzNodes) return true;
  }
  return false;
}

bool Verbose() {
  static const bool verbose = std::getenv("FORESIGHT_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

void Report(const char* where, const Status& s) {
  if (Verbose()) std::fprintf(stderr, "  %s: %s\n", where, s.ToString().c_str());
}

void Check(bool cond, const std::string& what) {
  if (cond) return;
  std::fprintf(stderr, "fuzz invariant failed: %s\n", what.c_str());
  std::abort();
}

void CheckNotInternal(const Status& s, const char* where) {
  Check(s.code() != StatusCode::kInternal, std::string(where) + " returned Internal: " + s.ToString());
}

}  // namespace foresight::fuzz
