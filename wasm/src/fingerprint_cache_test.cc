#include "fingerprint_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace tiankong {
namespace {

using cache::kEntryOverheadBytes;
using cache::LruStore;

uint64_t ConstantHash(std::string_view) { return 42; }

std::string GetOr(LruStore& store, const std::string& key, const std::string& fallback = "<miss>") {
  std::string value;
  return store.Get(key, &value) ? value : fallback;
}

TEST(MakeKey, SplitPointIsPartOfTheKey) {
  const std::string a = FingerprintCache::MakeKey({101, 7, 8}, {2}, "k5");
  EXPECT_NE(a, FingerprintCache::MakeKey({101, 7}, {8, 2}, "k5"));
  EXPECT_NE(a, FingerprintCache::MakeKey({101, 7, 8}, {}, "\2\0\0\0k5"));
  EXPECT_NE(a, FingerprintCache::MakeKey({101, 7, 8}, {2}, "k6"));
  EXPECT_EQ(a, FingerprintCache::MakeKey({101, 7, 8}, {2}, "k5"));
}

TEST(HashBytes, SpreadsSmallDifferences) {
  EXPECT_NE(cache::HashBytes(""), cache::HashBytes(std::string(1, '\0')));
  EXPECT_NE(cache::HashBytes("abcdefgh1"), cache::HashBytes("abcdefgh2"));
  EXPECT_NE(cache::HashBytes("abcdefgh"), cache::HashBytes("abcdefgi"));
}

TEST(LruStore, HitsMissesAndReplace) {
  LruStore store(10, 1 << 20);
  EXPECT_EQ(GetOr(store, "a"), "<miss>");
  store.Put("a", "1");
  EXPECT_EQ(GetOr(store, "a"), "1");
  store.Put("a", "22");
  EXPECT_EQ(GetOr(store, "a"), "22");
  const CacheStats stats = store.Stats();
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, 1 + 2 + kEntryOverheadBytes);
  EXPECT_EQ(stats.evictions, 0u);
}

TEST(LruStore, EvictsLeastRecentlyUsedByCount) {
  LruStore store(2, 1 << 20);
  store.Put("a", "1");
  store.Put("b", "2");
  store.Put("c", "3");  // evicts a
  EXPECT_EQ(GetOr(store, "a"), "<miss>");
  EXPECT_EQ(GetOr(store, "b"), "2");  // b becomes most recent
  store.Put("d", "4");                // evicts c, not b
  EXPECT_EQ(GetOr(store, "c"), "<miss>");
  EXPECT_EQ(GetOr(store, "b"), "2");
  EXPECT_EQ(GetOr(store, "d"), "4");
  EXPECT_EQ(store.Stats().evictions, 2u);
  EXPECT_EQ(store.Stats().entries, 2u);
}

TEST(LruStore, EvictsByBytes) {
  const size_t entry = 1 + 10 + kEntryOverheadBytes;
  LruStore store(100, 3 * entry + 5);
  for (const char* key : {"a", "b", "c"}) store.Put(key, std::string(10, 'x'));
  EXPECT_EQ(store.Stats().bytes, 3 * entry);
  EXPECT_EQ(store.Stats().evictions, 0u);
  store.Put("d", std::string(15, 'y'));  // needs 107 bytes back: evicts a only
  EXPECT_EQ(store.Stats().evictions, 1u);
  EXPECT_EQ(GetOr(store, "a"), "<miss>");
  EXPECT_EQ(GetOr(store, "b"), std::string(10, 'x'));
  store.Put("e", std::string(10 + 2 * entry, 'z'));  // needs everything else gone
  EXPECT_EQ(store.Stats().entries, 1u);
  EXPECT_EQ(GetOr(store, "e").size(), 10 + 2 * entry);
  EXPECT_LE(store.Stats().bytes, store.Stats().max_bytes);
}

TEST(LruStore, GrowingAValueInPlaceEvictsOthers) {
  const size_t entry = 1 + 10 + kEntryOverheadBytes;
  LruStore store(100, 2 * entry);
  store.Put("a", std::string(10, 'x'));
  store.Put("b", std::string(10, 'x'));
  store.Put("b", std::string(20, 'x'));
  EXPECT_EQ(GetOr(store, "a"), "<miss>");
  EXPECT_EQ(GetOr(store, "b").size(), 20u);
}

TEST(LruStore, OversizedEntryIsNotStoredAndDropsTheOldValue) {
  LruStore store(10, 200);
  store.Put("k", "old");
  store.Put("k", std::string(500, 'x'));
  EXPECT_EQ(GetOr(store, "k"), "<miss>");
  EXPECT_EQ(store.Stats().entries, 0u);
  EXPECT_EQ(store.Stats().bytes, 0u);
  LruStore disabled(0, 1 << 20);
  disabled.Put("k", "v");
  EXPECT_EQ(GetOr(disabled, "k"), "<miss>");
}

TEST(LruStore, ForcedHashCollisionsNeverGiveFalseHits) {
  LruStore store(50, 1 << 20, ConstantHash);
  for (int i = 0; i < 80; ++i) store.Put("key" + std::to_string(i), "value" + std::to_string(i));
  EXPECT_EQ(store.Stats().entries, 50u);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(GetOr(store, "key" + std::to_string(i)), "<miss>") << i;
  for (int i = 30; i < 80; ++i) {
    EXPECT_EQ(GetOr(store, "key" + std::to_string(i)), "value" + std::to_string(i)) << i;
  }
  // Replacing and evicting entries in the middle of the collision chain keeps it intact.
  store.Put("key55", "new55");
  EXPECT_EQ(GetOr(store, "key55"), "new55");
  for (int i = 80; i < 120; ++i) store.Put("key" + std::to_string(i), "v");
  EXPECT_EQ(GetOr(store, "key70"), "<miss>");
  EXPECT_EQ(GetOr(store, "key71"), "value71");
  EXPECT_EQ(GetOr(store, "key55"), "new55");
  for (int i = 120; i < 170; ++i) store.Put("key" + std::to_string(i), "w");
  EXPECT_EQ(GetOr(store, "key55"), "<miss>");
  EXPECT_EQ(GetOr(store, "key169"), "w");
  EXPECT_EQ(store.Stats().entries, 50u);
  EXPECT_EQ(GetOr(store, "other"), "<miss>");
}

TEST(FingerprintCache, NoFalseHitOnLossyFingerprintCollision) {
  // These share length, mask position and 3 tokens on each side of the mask: a
  // fingerprint of (mask position, ±3 tokens, length) would call them equal.
  const std::vector<int32_t> a = {101, 500, 600, 700, 11, 12, 13, 103, 21, 22, 23, 800, 102};
  std::vector<int32_t> b = a;
  b[1] = 501;
  b[11] = 801;
  const std::vector<int32_t> masks = {7};
  FingerprintCache cache(16, 1 << 20);
  cache.Put(FingerprintCache::MakeKey(a, masks, "opts"), "result-a");
  std::string value;
  EXPECT_FALSE(cache.Get(FingerprintCache::MakeKey(b, masks, "opts"), &value));
  EXPECT_FALSE(cache.Get(FingerprintCache::MakeKey(a, masks, "opts2"), &value));
  ASSERT_TRUE(cache.Get(FingerprintCache::MakeKey(a, masks, "opts"), &value));
  EXPECT_EQ(value, "result-a");
  const CacheStats stats = cache.Stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 2u);
}

TEST(FingerprintCache, ClearKeepsCounters) {
  FingerprintCache cache(4, 1 << 20);
  cache.Put("k", "v");
  std::string value;
  ASSERT_TRUE(cache.Get("k", &value));
  cache.Clear();
  EXPECT_FALSE(cache.Get("k", &value));
  const CacheStats stats = cache.Stats();
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.bytes, 0u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.max_entries, 4u);
}

TEST(FingerprintCache, ConcurrentUseStaysConsistent) {
  FingerprintCache cache(64, 1 << 16);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  constexpr int kThreads = 4, kOps = 5000;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&cache, &wrong, t] {
      std::string value;
      for (int i = 0; i < kOps; ++i) {
        const std::string key = "k" + std::to_string((i * 7 + t) % 100);
        if (cache.Get(key, &value) && value != "v" + key) ++wrong;
        cache.Put(key, "v" + key);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  const CacheStats stats = cache.Stats();
  EXPECT_EQ(stats.hits + stats.misses, uint64_t{kThreads} * kOps);
  EXPECT_LE(stats.entries, 64u);
  EXPECT_LE(stats.bytes, size_t{1} << 16);
}

}  // namespace
}  // namespace tiankong
