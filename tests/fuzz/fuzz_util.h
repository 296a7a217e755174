// Shared pieces of the libFuzzer targets: a scratch directory for inputs the
// parsers must read from files, splitting one fuzz input into several
// files, and invariant checks that turn a broken promise into a crash the
// fuzzer reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "foresight/core/status.h"

// The libFuzzer entry point each target defines.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace foresight::fuzz {

// A directory private to this process (under /dev/shm when it exists, so
// the file round trips stay in memory), created on first use and removed
// at exit.
const std::string& ScratchDir();
// ScratchDir()/name.
std::string ScratchFile(const std::string& name);
// Writes `bytes` to `path`, replacing it; aborts if it cannot (the harness,
// not the parser, is broken then).
void WriteScratch(const std::string& path, std::string_view bytes);
// Removes `path` and everything under it.
void RemoveTree(const std::string& path);

// Splits `input` at kSectionSeparator into at most `n` parts (the last
// part keeps any further separators); missing parts are empty. 0x1e (ASCII
// record separator) is rare in text and in small .npy files, unlike NUL.
// Seeds in tests/fuzz/corpus separate their files with it.
inline constexpr char kSectionSeparator = '\x1e';
std::vector<std::string_view> SplitSections(std::string_view input, size_t n);

// Node ids set the node count (N = max id + 1), so a 10-byte input can ask
// for a dataset of 10^9 nodes: valid, but minutes and gigabytes per run.
// Work per input grows with N (the random split sorts N keys), and at
// 10^6 nodes an input took tens of milliseconds, so targets keep N below
// kMaxFuzzNodes: they skip inputs holding a run of 5+ digits (text) or, for
// binary pairs of `width` bytes (4 or 8), a value of kMaxFuzzNodes or more.
// Bounds bugs at 2^31 and beyond are the tests' business (and overflow
// checks see the same code paths at any size).
inline constexpr int64_t kMaxFuzzNodes = 10000;
bool HasHugeTextId(std::string_view text);
bool HasHugeBinaryId(std::string_view bytes, int width);

// True when FORESIGHT_FUZZ_VERBOSE is set: targets then print each input's
// outcome (for checking that seeds reach the paths they are meant to).
bool Verbose();
// Prints "<where>: <status>" when Verbose().
void Report(const char* where, const Status& s);

// Aborts with `what` when `cond` is false: an invariant of the code under
// test (e.g. "a successful preprocess opens as a valid dataset") failed.
void Check(bool cond, const std::string& what);
// Aborts when a Status carries a code a parser must never return for bad
// input (kInternal), so logic errors surface as crashes.
void CheckNotInternal(const Status& s, const char* where);

}  // namespace foresight::fuzz
