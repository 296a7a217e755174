// The README names only files a clone has: every path it quotes (in `code`
// spans and code blocks) whose first component is a folder or file of the
// repository, or "..", exists in the source tree. Paths under build/ are
// what the commands create, and placeholders (<module>, *, $VAR) are not
// paths.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/cli.h"
#include "testing/testing.h"

namespace foresight {
namespace {

// The text inside `...` spans and ``` blocks.
std::vector<std::string> CodeText(const std::string& markdown) {
  std::vector<std::string> out;
  std::istringstream in(markdown);
  std::string line;
  bool block = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      block = !block;
      continue;
    }
    if (block) {
      out.push_back(line);
      continue;
    }
    for (size_t open = line.find('`'); open != std::string::npos; open = line.find('`', open)) {
      const size_t close = line.find('`', open + 1);
      if (close == std::string::npos) break;
      out.push_back(line.substr(open + 1, close - open - 1));
      open = close + 1;
    }
  }
  return out;
}

// Words of `text` that look like repository paths.
std::vector<std::string> RepoPaths(const std::string& text, const std::string& root) {
  std::vector<std::string> paths;
  std::string word;
  std::istringstream in(text);
  while (in >> word) {
    while (!word.empty() && std::string(".,;:)'\"").find(word.back()) != std::string::npos) word.pop_back();
    while (!word.empty() && std::string("('\"").find(word.front()) != std::string::npos) word.erase(0, 1);
    const size_t slash = word.find('/');
    if (slash == std::string::npos || slash == 0) continue;  // not a path, or an absolute one
    if (word.find_first_of("<>*$|{}") != std::string::npos) continue;
    const std::string first = word.substr(0, slash);
    if (first == "build") continue;
    if (first == ".." || testing::PathExists(root + "/" + first)) paths.push_back(word);
  }
  return paths;
}

TEST(Readme, NamesOnlyFilesTheRepositoryHas) {
  const std::string root = testing::SourceDir();
  const std::string readme = testing::ReadFile(root + "/README.md");
  ASSERT_FALSE(readme.empty());
  std::set<std::string> checked;
  for (const std::string& text : CodeText(readme)) {
    for (const std::string& path : RepoPaths(text, root)) {
      if (!checked.insert(path).second) continue;
      EXPECT_FALSE(path.rfind("../", 0) == 0) << "README.md names " << path << ", outside the repository";
      EXPECT_TRUE(testing::PathExists(root + "/" + path))
          << "README.md names " << path << ", which the repository lacks";
    }
  }
  // The check saw the paths the quick start depends on.
  EXPECT_EQ(checked.count(".ci/install-deps"), 1u);
  EXPECT_EQ(checked.count("datasets/cora/cora.planetoid_split.tsv"), 1u);
}

}  // namespace
}  // namespace foresight
