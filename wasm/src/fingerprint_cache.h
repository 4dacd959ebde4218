// The store behind tiankong::FingerprintCache (declared in tiankong/tiankong.h): a
// byte-keyed LRU map bounded by entry count and by bytes.
//
// Layout: a hash map from the key's 64-bit hash to a chain of entries sharing that
// hash, plus an intrusive doubly-linked recency list through the same entries.
// Get/Put are O(1) expected; a hit always compares the full key, so a hash collision
// can cost time but never returns another key's value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "tiankong/tiankong.h"

namespace tiankong {
namespace cache {

using KeyHash = uint64_t (*)(std::string_view bytes);

// 64-bit hash of a byte string (word-at-a-time multiply-xorshift, splitmix64 finish).
uint64_t HashBytes(std::string_view bytes);

// Every entry is charged key.size() + value.size() + this, approximating the heap the
// entry costs (node, two string headers, hash-map slot), so max_bytes bounds memory.
constexpr size_t kEntryOverheadBytes = 96;

class LruStore {
 public:
  // `hash` is injectable so tests can force collisions.
  LruStore(size_t max_entries, size_t max_bytes, KeyHash hash = HashBytes);
  ~LruStore();
  LruStore(const LruStore&) = delete;
  LruStore& operator=(const LruStore&) = delete;

  // On hit: copies the value, marks the entry most recently used, returns true.
  bool Get(std::string_view key, std::string* value);
  // Inserts or replaces, then evicts least recently used entries until both bounds
  // hold. An entry that alone exceeds max_bytes (or max_entries == 0) is not stored,
  // and any older value under the same key is dropped so it cannot be served.
  void Put(std::string_view key, std::string value);
  // Drops every entry; the hit/miss/eviction counters keep counting.
  void Clear();
  CacheStats Stats() const;

 private:
  struct Entry;
  Entry* Find(uint64_t hash, std::string_view key) const;
  void Remove(Entry* entry);  // unlinks from chain and recency list, frees
  void MoveToFront(Entry* entry);
  static size_t Charge(const Entry& entry);

  const size_t max_entries_;
  const size_t max_bytes_;
  const KeyHash hash_;
  mutable std::mutex mutex_;
  std::unordered_map<uint64_t, Entry*> chains_;  // hash -> first entry with that hash
  Entry* head_ = nullptr;                        // most recently used
  Entry* tail_ = nullptr;                        // least recently used
  size_t entries_ = 0, bytes_ = 0;
  uint64_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

}  // namespace cache
}  // namespace tiankong
