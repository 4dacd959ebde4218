#include "fingerprint_cache.h"

#include <cstring>

namespace tiankong {
namespace cache {

struct LruStore::Entry {
  std::string key;
  std::string value;
  uint64_t hash = 0;
  Entry* next_same_hash = nullptr;
  Entry* newer = nullptr;
  Entry* older = nullptr;
};

uint64_t HashBytes(std::string_view bytes) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = bytes.size() * kMul;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    h = (h ^ word) * kMul;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  if (i < bytes.size()) std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
  h = (h ^ tail) * kMul;
  // splitmix64 finalizer: spreads every input bit over the whole word.
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

LruStore::LruStore(size_t max_entries, size_t max_bytes, KeyHash hash)
    : max_entries_(max_entries), max_bytes_(max_bytes), hash_(hash) {}

LruStore::~LruStore() { Clear(); }

size_t LruStore::Charge(const Entry& entry) { return entry.key.size() + entry.value.size() + kEntryOverheadBytes; }

LruStore::Entry* LruStore::Find(uint64_t hash, std::string_view key) const {
  const auto chain = chains_.find(hash);
  if (chain == chains_.end()) return nullptr;
  for (Entry* e = chain->second; e != nullptr; e = e->next_same_hash) {
    if (e->key == key) return e;
  }
  return nullptr;
}

void LruStore::MoveToFront(Entry* entry) {
  if (entry == head_) return;
  // Unlink (entry is not head_, so entry->newer exists).
  entry->newer->older = entry->older;
  if (entry->older != nullptr) {
    entry->older->newer = entry->newer;
  } else {
    tail_ = entry->newer;
  }
  entry->newer = nullptr;
  entry->older = head_;
  head_->newer = entry;
  head_ = entry;
}

void LruStore::Remove(Entry* entry) {
  const auto chain = chains_.find(entry->hash);
  if (chain->second == entry) {
    if (entry->next_same_hash != nullptr) {
      chain->second = entry->next_same_hash;
    } else {
      chains_.erase(chain);
    }
  } else {
    Entry* before = chain->second;
    while (before->next_same_hash != entry) before = before->next_same_hash;
    before->next_same_hash = entry->next_same_hash;
  }
  (entry->newer != nullptr ? entry->newer->older : head_) = entry->older;
  (entry->older != nullptr ? entry->older->newer : tail_) = entry->newer;
  --entries_;
  bytes_ -= Charge(*entry);
  delete entry;
}

bool LruStore::Get(std::string_view key, std::string* value) {
  const uint64_t hash = hash_(key);
  std::lock_guard<std::mutex> lock(mutex_);
  Entry* entry = Find(hash, key);
  if (entry == nullptr) {
    ++misses_;
    return false;
  }
  ++hits_;
  MoveToFront(entry);
  *value = entry->value;
  return true;
}

void LruStore::Put(std::string_view key, std::string value) {
  const uint64_t hash = hash_(key);
  const size_t charge = key.size() + value.size() + kEntryOverheadBytes;
  std::lock_guard<std::mutex> lock(mutex_);
  Entry* entry = Find(hash, key);
  if (max_entries_ == 0 || charge > max_bytes_) {
    if (entry != nullptr) Remove(entry);
    return;
  }
  if (entry != nullptr) {
    bytes_ = bytes_ - Charge(*entry) + charge;
    entry->value = std::move(value);
    MoveToFront(entry);
  } else {
    entry = new Entry{std::string(key), std::move(value), hash, nullptr, nullptr, head_};
    Entry*& chain = chains_[hash];
    entry->next_same_hash = chain;
    chain = entry;
    (head_ != nullptr ? head_->newer : tail_) = entry;
    head_ = entry;
    ++entries_;
    bytes_ += charge;
  }
  // The new entry fits on its own, so eviction stops before reaching it.
  while (entries_ > max_entries_ || bytes_ > max_bytes_) {
    Remove(tail_);
    ++evictions_;
  }
}

void LruStore::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Entry* e = head_; e != nullptr;) {
    Entry* older = e->older;
    delete e;
    e = older;
  }
  chains_.clear();
  head_ = tail_ = nullptr;
  entries_ = bytes_ = 0;
}

CacheStats LruStore::Stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  CacheStats stats;
  stats.hits = hits_;
  stats.misses = misses_;
  stats.evictions = evictions_;
  stats.entries = entries_;
  stats.bytes = bytes_;
  stats.max_entries = max_entries_;
  stats.max_bytes = max_bytes_;
  return stats;
}

}  // namespace cache

struct FingerprintCache::Impl {
  Impl(size_t max_entries, size_t max_bytes) : store(max_entries, max_bytes) {}
  cache::LruStore store;
};

FingerprintCache::FingerprintCache(size_t max_entries, size_t max_bytes) : impl_(new Impl(max_entries, max_bytes)) {}

FingerprintCache::~FingerprintCache() = default;

std::string FingerprintCache::MakeKey(const std::vector<int32_t>& ids, const std::vector<int32_t>& mask_positions,
                                      std::string_view options_fingerprint) {
  // [n_ids][ids...][n_masks][masks...][fingerprint]: the counts make the split point
  // explicit, so two different triples can never produce the same bytes.
  std::string key;
  key.reserve(8 + 4 * (ids.size() + mask_positions.size()) + options_fingerprint.size());
  const auto append_array = [&key](const std::vector<int32_t>& values) {
    const uint32_t count = static_cast<uint32_t>(values.size());
    key.append(reinterpret_cast<const char*>(&count), sizeof count);
    key.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int32_t));
  };
  append_array(ids);
  append_array(mask_positions);
  key.append(options_fingerprint);
  return key;
}

bool FingerprintCache::Get(const std::string& key, std::string* value) { return impl_->store.Get(key, value); }

void FingerprintCache::Put(const std::string& key, std::string value) { impl_->store.Put(key, std::move(value)); }

void FingerprintCache::Clear() { impl_->store.Clear(); }

CacheStats FingerprintCache::Stats() const { return impl_->store.Stats(); }

}  // namespace tiankong
