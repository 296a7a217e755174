// Commits each kind of error the sanitizer builds must catch, so a test can
// check that the report appears and fails the process (a UBSan report that
// only prints lets the test that caused it pass). Argument: ubsan | asan |
// tsan. Built only in sanitizer builds (tests/core/CMakeLists.txt).
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

int SignedOverflow(int argc) {
  volatile int big = INT_MAX;
  return big + argc;  // argc >= 1: overflows
}

int HeapOverflow(int argc) {
  std::vector<char> v(3);
  volatile char* p = v.data();
  return p[2 + argc];  // one past the end and beyond
}

int DataRace() {
  static int counter = 0;  // written by two threads without synchronisation
  std::thread a([] { for (int i = 0; i < 1000; ++i) ++counter; });
  std::thread b([] { for (int i = 0; i < 1000; ++i) ++counter; });
  a.join();
  b.join();
  return counter;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int r = 0;
  if (std::strcmp(mode, "ubsan") == 0) {
    r = SignedOverflow(argc);
  } else if (std::strcmp(mode, "asan") == 0) {
    r = HeapOverflow(argc);
  } else if (std::strcmp(mode, "tsan") == 0) {
    r = DataRace();
  } else {
    std::fprintf(stderr, "usage: sanitizer_selfcheck ubsan|asan|tsan\n");
    return 2;
  }
  // Reached when the sanitizer let the process carry on.
  std::printf("sanitizer_selfcheck: %s: the process carried on after the error (%d)\n", mode, r);
  return 0;
}
