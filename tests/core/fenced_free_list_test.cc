// The device cache's free lists (core/src/fenced_free_list.h): a block is
// handed out again only after its fence (the events recorded at its free)
// has passed; pending ones are skipped, never waited for or lost.
#include "fenced_free_list.h"

#include <gtest/gtest.h>

#include <memory>

namespace foresight::internal {
namespace {

// A fence the test opens by hand; counts its releases.
struct FakeFence {
  std::shared_ptr<bool> open;
  std::shared_ptr<int> released;
  bool Passed() const { return *open; }
  void Release() { ++*released; }
};

struct Fences {
  std::shared_ptr<int> released = std::make_shared<int>(0);
  FakeFence Make(bool open) { return FakeFence{std::make_shared<bool>(open), released}; }
};

TEST(FencedFreeList, PassedBlocksComeBackNewestFirst) {
  Fences f;
  FencedFreeList<FakeFence> list;
  int a = 0, b = 0;
  list.Push(512, &a, f.Make(true));
  list.Push(512, &b, f.Make(true));
  EXPECT_EQ(list.Take(512), &b);
  EXPECT_EQ(list.Take(512), &a);
  EXPECT_EQ(list.Take(512), nullptr);
  EXPECT_EQ(*f.released, 2);
}

TEST(FencedFreeList, APendingFenceKeepsItsBlockButNotOthers) {
  Fences f;
  FencedFreeList<FakeFence> list;
  int a = 0, b = 0;
  FakeFence pending = f.Make(false);
  list.Push(1024, &a, f.Make(true));
  list.Push(1024, &b, pending);
  // b's kernel may still run: a comes back instead, b stays.
  EXPECT_EQ(list.Take(1024), &a);
  EXPECT_EQ(list.Take(1024), nullptr);
  EXPECT_EQ(list.size(), 1u);
  *pending.open = true;
  EXPECT_EQ(list.Take(1024), &b);
  EXPECT_EQ(list.size(), 0u);
}

TEST(FencedFreeList, ClassesAreSeparate) {
  Fences f;
  FencedFreeList<FakeFence> list;
  int a = 0;
  list.Push(512, &a, f.Make(true));
  EXPECT_EQ(list.Take(1024), nullptr);
  EXPECT_EQ(list.Take(512), &a);
}

TEST(FencedFreeList, TakeAllReturnsEveryBlockAndReleasesEveryFence) {
  Fences f;
  FencedFreeList<FakeFence> list;
  int a = 0, b = 0, c = 0;
  list.Push(512, &a, f.Make(false));
  list.Push(512, &b, f.Make(true));
  list.Push(4096, &c, f.Make(false));
  const auto all = list.TakeAll();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(*f.released, 3);
  EXPECT_EQ(list.size(), 0u);
  size_t bytes = 0;
  for (const auto& [p, cls] : all) bytes += cls;
  EXPECT_EQ(bytes, 512u + 512u + 4096u);
}

}  // namespace
}  // namespace foresight::internal
