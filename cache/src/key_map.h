// Per-key planner state, found by key: DenseKeyMap (a flat array over
// [0, key_space), for node ids) and SparseKeyMap (open addressing, for any
// 64-bit key but INT64_MIN). Both hand out State& that stays valid only until
// the next Insert or Erase of a sparse map. A State whose bytes are all zero
// is "no state", so the dense array is calloc'd and only the pages of keys
// that are used become resident.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace foresight::cache::internal {

template <typename State>
class DenseKeyMap {
  static_assert(std::is_trivially_copyable_v<State>, "State must be plain bytes (all zero = empty)");

 public:
  using StateType = State;
  static constexpr bool kSparse = false;

  // Allocates key_space zero States (lazily backed by the OS); throws
  // std::bad_alloc like any container when the address space is short.
  explicit DenseKeyMap(int64_t key_space)
      : data_(static_cast<State*>(std::calloc(static_cast<size_t>(key_space) + 1, sizeof(State)))) {
    if (data_ == nullptr) throw std::bad_alloc();
  }

  State* Find(int64_t key) { return &data_.get()[key]; }
  State& FindOrInsert(int64_t key) { return data_.get()[key]; }
  // Dense states are never removed; a zeroed State is the same as none.
  void Erase(int64_t key) { std::memset(&data_.get()[key], 0, sizeof(State)); }
  // Hint for the cache line of `key` (dense: the array element).
  void Prefetch(int64_t key) const { __builtin_prefetch(&data_.get()[key]); }

 private:
  struct Free {
    void operator()(State* p) const { std::free(p); }
  };
  std::unique_ptr<State, Free> data_;
};

// Linear probing over a table at most half full; Erase shifts the following
// cluster back, so there are no tombstones and lookups of absent keys stop
// at the first empty entry. The table's size is any multiple of 64 entries
// (a key's home is its hash scaled to the size), so a map made for n keys
// holds 2n entries, not up to 4n: EntryBytes() * CapacityFor(n) bytes.
template <typename State>
class SparseKeyMap {
  static_assert(std::is_trivially_copyable_v<State>, "State must be plain bytes");

 public:
  using StateType = State;
  static constexpr bool kSparse = true;
  static constexpr int64_t kEmpty = std::numeric_limits<int64_t>::min();

  explicit SparseKeyMap(int64_t expected = 1024) { Rehash(CapacityFor(expected)); }

  // The entries a map made for n keys holds (it doubles past n).
  static size_t CapacityFor(int64_t n) {
    const size_t want = 2 * static_cast<size_t>(n < 16 ? 16 : n);
    return (want + 63) / 64 * 64;
  }
  static constexpr size_t EntryBytes() { return sizeof(Entry); }

  State* Find(int64_t key) {
    for (size_t i = Home(key);; i = Next(i)) {
      if (entries_[i].key == key) return &entries_[i].state;
      if (entries_[i].key == kEmpty) return nullptr;
    }
  }

  State& FindOrInsert(int64_t key) {
    for (size_t i = Home(key);; i = Next(i)) {
      if (entries_[i].key == key) return entries_[i].state;
      if (entries_[i].key == kEmpty) {
        if (2 * (size_ + 1) > entries_.size()) {
          Rehash(entries_.size() * 2);
          return FindOrInsert(key);
        }
        entries_[i].key = key;
        std::memset(&entries_[i].state, 0, sizeof(State));
        ++size_;
        return entries_[i].state;
      }
    }
  }

  void Erase(int64_t key) {
    size_t i = Home(key);
    while (entries_[i].key != key) {
      if (entries_[i].key == kEmpty) return;
      i = Next(i);
    }
    // Backward shift: move later members of the cluster into the hole when
    // their home position does not lie cyclically in (hole, their index].
    size_t hole = i;
    for (size_t j = Next(i); entries_[j].key != kEmpty; j = Next(j)) {
      const size_t home = Home(entries_[j].key);
      const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (!stays) {
        entries_[hole] = entries_[j];
        hole = j;
      }
    }
    entries_[hole].key = kEmpty;
    --size_;
  }

  void Prefetch(int64_t key) const { __builtin_prefetch(&entries_[Home(key)]); }
  int64_t size() const { return static_cast<int64_t>(size_); }

 private:
  struct Entry {
    int64_t key;
    State state;
  };

  size_t Home(int64_t key) const {
    // Fibonacci hashing (key * 2^64/phi), scaled to [0, size) by its high bits.
    const uint64_t h = static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>((static_cast<unsigned __int128>(h) * entries_.size()) >> 64);
  }
  size_t Next(size_t i) const { return i + 1 == entries_.size() ? 0 : i + 1; }
  void Rehash(size_t capacity) {
    std::vector<Entry> old = std::move(entries_);
    entries_.assign(capacity, Entry{kEmpty, State{}});
    size_ = 0;
    for (const Entry& e : old) {
      if (e.key == kEmpty) continue;
      size_t i = Home(e.key);
      while (entries_[i].key != kEmpty) i = Next(i);
      entries_[i] = e;
      ++size_;
    }
  }

  std::vector<Entry> entries_;
  size_t size_ = 0;
};

}  // namespace foresight::cache::internal
