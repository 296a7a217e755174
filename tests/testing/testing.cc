#include "testing/testing.h"

#include <fstream>
#include <sstream>
#include <filesystem>
#include <cstdlib>

namespace foresight::testing {

void ExpectErrorContains(const Status& s, const char* expr, std::initializer_list<std::string> parts) {
  EXPECT_FALSE(s.ok()) << expr << " succeeded but was expected to fail";
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos)
        << expr << ": message \"" << s.ToString() << "\" does not contain \"" << p << "\"";
  }
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/foresight-test-XXXXXX";
  char* p = mkdtemp(tmpl.data());
  if (p == nullptr) {
    ADD_FAILURE() << "mkdtemp failed for " << tmpl;
  }
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream f(path, std::ios::binary);
  f << contents;
  ASSERT_TRUE(f.good()) << "cannot write " << path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string SourceDir() { return FORESIGHT_SOURCE_DIR; }
std::string BinaryDir() { return FORESIGHT_BINARY_DIR; }

std::string SharedDataset(const std::string& name) {
  const std::string p = SourceDir() + "/../shared/datasets/" + name;
  return std::filesystem::exists(p) ? p : std::string();
}

}  // namespace foresight::testing
