#include "ngram_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace tiankong {
namespace memory {
namespace {

// One quantisation step of the stored log-probabilities; DequantizeLogProb returns a step's centre.
constexpr float kStep = -kMinLogProb / 254.0f;

using Gram = std::vector<int32_t>;

Section SectionOf(const std::vector<uint8_t>& bytes) { return Section{0, bytes.data(), bytes.size()}; }

// The bigram section as its documented fields (ngram_table.h), serialised independently of
// NgramTableBuilder so tests can write malformed ones.
struct BigramParts {
  uint32_t vocab = 0, entries = 0;
  std::vector<uint32_t> offsets;
  std::vector<uint16_t> next;
  std::vector<uint8_t> values;
  std::vector<uint8_t> Bytes() const {
    ByteWriter out;
    out.U32(vocab);
    out.U32(entries);
    out.Array(offsets);
    out.Array(next);
    out.Array(values);
    return out.Take();
  }
};

// The hashed section's fields; Read splits a section the builder wrote.
struct HashedParts {
  uint32_t max_order = 0, slots = 0, entries = 0, max_probe = 0;
  float backoff = 0.0f;
  std::vector<uint32_t> slot;
  std::vector<uint8_t> Bytes() const {
    ByteWriter out;
    out.U32(max_order);
    out.U32(slots);
    out.U32(entries);
    out.U32(max_probe);
    out.F32(backoff);
    out.Array(slot);
    return out.Take();
  }
  static HashedParts Read(const std::vector<uint8_t>& bytes) {
    HashedParts parts;
    EXPECT_GE(bytes.size(), 20u);
    std::memcpy(&parts.max_order, bytes.data(), 4);
    std::memcpy(&parts.slots, bytes.data() + 4, 4);
    std::memcpy(&parts.entries, bytes.data() + 8, 4);
    std::memcpy(&parts.max_probe, bytes.data() + 12, 4);
    std::memcpy(&parts.backoff, bytes.data() + 16, 4);
    EXPECT_EQ(bytes.size(), 20u + 4u * parts.slots) << "header, then the slots at offset 20";
    parts.slot.resize(parts.slots);
    std::memcpy(parts.slot.data(), bytes.data() + 20, 4 * parts.slot.size());
    return parts;
  }
};

// A set of n-grams closed under suffixes (as the builder keeps them), with log-probabilities.
std::map<Gram, float> RandomClosedSet(std::mt19937* rng, int32_t vocab, size_t max_order, size_t count) {
  std::map<Gram, float> grams;
  std::uniform_int_distribution<int32_t> id(0, vocab - 1);
  std::uniform_real_distribution<float> log_p(kMinLogProb, 0.0f);
  while (grams.size() < count) {
    Gram gram(2 + (*rng)() % (max_order - 1));
    for (int32_t& x : gram) x = id(*rng);
    for (size_t start = 0; start + 2 <= gram.size(); ++start) {
      grams.emplace(Gram(gram.begin() + static_cast<std::ptrdiff_t>(start), gram.end()), log_p(*rng));
    }
  }
  return grams;
}

struct Built {
  std::vector<uint8_t> bigrams, hashed;
  size_t slots = 0;
};

Built Build(const std::vector<std::pair<Gram, float>>& grams, size_t vocab, size_t max_order, float backoff,
            double load_factor = 0.8) {
  NgramTableBuilder builder(vocab, max_order, backoff);
  for (const auto& [gram, log_p] : grams) {
    if (gram.size() == 2)
      builder.AddBigram(gram[0], gram[1], log_p);
    else
      builder.AddLonger(NgramKey(gram.data(), gram.size()), log_p);
  }
  Built built;
  built.bigrams = builder.FinishBigrams();
  built.hashed = builder.FinishHashed(load_factor, &built.slots);
  return built;
}

bool Parses(const std::vector<uint8_t>& bigrams, const std::vector<uint8_t>& hashed, size_t vocab) {
  // Exact-size copies: under ASan (the fuzz preset) any read past a section is reported.
  const std::vector<uint8_t> exact_bigrams(bigrams), exact_hashed(hashed);
  NgramTable table;
  std::string error;
  const bool ok = table.Parse(SectionOf(exact_bigrams), SectionOf(exact_hashed), vocab, &error);
  if (!ok) {
    EXPECT_FALSE(error.empty());
  }
  return ok;
}

TEST(Quantize, ErrorIsAtMostHalfAStep) {
  EXPECT_EQ(QuantizeLogProb(0.0f), 1);
  EXPECT_EQ(DequantizeLogProb(1), 0.0f);
  EXPECT_EQ(QuantizeLogProb(kMinLogProb), 255);
  EXPECT_NEAR(DequantizeLogProb(255), kMinLogProb, 1e-5f);
  uint8_t previous = 1;
  for (float x = 0.0f; x >= kMinLogProb; x -= 0.0007f) {
    const uint8_t code = QuantizeLogProb(x);
    ASSERT_GE(code, 1);
    ASSERT_GE(code, previous) << "monotone: smaller log p, larger code";
    ASSERT_LE(std::fabs(DequantizeLogProb(code) - x), kStep / 2 + 1e-5f) << x;
    previous = code;
  }
  // Every code is the centre of its own step.
  for (int code = 1; code <= 255; ++code) {
    EXPECT_EQ(QuantizeLogProb(DequantizeLogProb(static_cast<uint8_t>(code))), code);
  }
}

TEST(Quantize, ClampsOutOfRangeValues) {
  EXPECT_EQ(QuantizeLogProb(3.0f), 1);
  EXPECT_EQ(QuantizeLogProb(std::numeric_limits<float>::infinity()), 1);
  EXPECT_EQ(QuantizeLogProb(-1000.0f), 255);
  EXPECT_EQ(QuantizeLogProb(-std::numeric_limits<float>::infinity()), 255);
  const uint8_t nan_code = QuantizeLogProb(std::numeric_limits<float>::quiet_NaN());
  EXPECT_GE(nan_code, 1) << "a NaN still gets a valid code (no UB in lround)";
}

TEST(NgramKey, DependsOnEveryIdAndTheLength) {
  const Gram base = {5, 6, 7, 8};
  const uint64_t key = NgramKey(base.data(), base.size());
  EXPECT_EQ(NgramKey(base.data(), base.size()), key) << "a pure function";
  std::vector<uint64_t> keys = {key, NgramKey(base.data(), 3), NgramKey(base.data() + 1, 3)};
  for (size_t i = 0; i < base.size(); ++i) {
    Gram changed = base;
    changed[i] ^= 1;
    keys.push_back(NgramKey(changed.data(), changed.size()));
  }
  const Gram reversed = {8, 7, 6, 5}, zeros = {0, 0}, zero = {0};
  keys.push_back(NgramKey(reversed.data(), reversed.size()));
  keys.push_back(NgramKey(zeros.data(), zeros.size()));
  keys.push_back(NgramKey(zero.data(), zero.size()));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end());
}

TEST(NgramTable, RoundTripsBigramsAndLongerNgrams) {
  std::mt19937 rng(3);
  const int32_t vocab = 40;
  const size_t max_order = 5;
  const float backoff = std::log(0.4f);
  const std::map<Gram, float> grams = RandomClosedSet(&rng, vocab, max_order, 600);
  std::vector<std::pair<Gram, float>> list(grams.begin(), grams.end());
  const Built built = Build(list, vocab, max_order, backoff);
  NgramTable table;
  std::string error;
  ASSERT_TRUE(table.Parse(SectionOf(built.bigrams), SectionOf(built.hashed), vocab, &error)) << error;
  EXPECT_EQ(table.max_order(), max_order);
  EXPECT_EQ(table.backoff(), backoff);
  EXPECT_EQ(table.entries(), grams.size());
  EXPECT_EQ(table.slots(), built.slots);
  size_t hashed = 0;
  for (const auto& [gram, log_p] : grams) hashed += gram.size() > 2;
  EXPECT_GE(table.slots(), static_cast<size_t>(std::ceil(hashed / 0.8)));
  EXPECT_GT(table.slots(), hashed) << "at least one empty slot";

  for (const auto& [gram, log_p] : grams) {
    float found = 1.0f;
    ASSERT_TRUE(table.Find(gram.data(), gram.size(), &found)) << "n=" << gram.size();
    EXPECT_NEAR(found, log_p, kStep / 2 + 1e-5f);
  }
  // Successor lists: every bigram of each first id, in id order, with its code.
  for (int32_t first = 0; first < vocab; ++first) {
    std::vector<std::pair<int32_t, float>> expected;
    for (const auto& [gram, log_p] : grams) {
      if (gram.size() == 2 && gram[0] == first) expected.emplace_back(gram[1], log_p);
    }
    const uint16_t* next = nullptr;
    const uint8_t* values = nullptr;
    ASSERT_EQ(table.Successors(first, &next, &values), expected.size()) << first;
    for (size_t k = 0; k < expected.size(); ++k) {
      EXPECT_EQ(next[k], expected[k].first);
      EXPECT_EQ(values[k], QuantizeLogProb(expected[k].second));
    }
  }
  // Absent n-grams (including ones whose suffixes are all present) are not found.
  std::uniform_int_distribution<int32_t> id(0, vocab - 1);
  size_t absent = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    Gram gram(2 + rng() % (max_order - 1));
    for (int32_t& x : gram) x = id(rng);
    if (trial % 2 == 0 && !list.empty()) {  // extend a present n-gram to the left
      const Gram& present = list[rng() % list.size()].first;
      if (present.size() < max_order) {
        gram = present;
        gram.insert(gram.begin(), id(rng));
      }
    }
    if (grams.count(gram)) continue;
    ++absent;
    float found = 0.0f;
    EXPECT_FALSE(table.Find(gram.data(), gram.size(), &found)) << "n=" << gram.size();
  }
  EXPECT_GT(absent, 10000u);
}

TEST(NgramTable, FindRejectsOutOfRangeQueries) {
  const std::vector<std::pair<Gram, float>> grams = {{{1, 2}, -1.0f}, {{0, 1, 2}, -2.0f}};
  const Built built = Build(grams, 4, 3, -0.9f);
  NgramTable table;
  std::string error;
  ASSERT_TRUE(table.Parse(SectionOf(built.bigrams), SectionOf(built.hashed), 4, &error)) << error;
  float log_p = 0.0f;
  const Gram gram = {0, 1, 2};
  EXPECT_TRUE(table.Find(gram.data(), 3, &log_p));
  EXPECT_FALSE(table.Find(gram.data(), 1, &log_p)) << "unigrams are not in the table";
  EXPECT_FALSE(table.Find(gram.data(), 0, &log_p));
  const Gram longer = {3, 0, 1, 2};
  EXPECT_FALSE(table.Find(longer.data(), 4, &log_p)) << "longer than max_order";
  for (const Gram& odd : std::vector<Gram>{{-1, 2}, {1, -1}, {4, 2}, {1, 4}, {1, 2 + 65536}, {1 << 30, 2}}) {
    EXPECT_FALSE(table.Find(odd.data(), 2, &log_p)) << odd[0] << " " << odd[1];
  }
  const uint16_t* next = nullptr;
  const uint8_t* values = nullptr;
  EXPECT_EQ(table.Successors(-1, &next, &values), 0u);
  EXPECT_EQ(table.Successors(4, &next, &values), 0u);
}

TEST(NgramTable, HashedHitNeedsItsSuffixChain) {
  const float backoff = -0.9f;
  const Gram abc = {1, 2, 3}, abcd = {1, 2, 3, 4};
  float log_p = 0.0f;
  {
    // [1 2 3] is in the hash table, but its suffix [2 3] is not a bigram: rejected.
    const Built built = Build({{abc, -1.0f}}, 8, 4, backoff);
    NgramTable table;
    std::string error;
    ASSERT_TRUE(table.Parse(SectionOf(built.bigrams), SectionOf(built.hashed), 8, &error)) << error;
    EXPECT_FALSE(table.Find(abc.data(), 3, &log_p));
  }
  {
    const Built built = Build({{abc, -1.0f}, {{2, 3}, -0.5f}}, 8, 4, backoff);
    NgramTable table;
    std::string error;
    ASSERT_TRUE(table.Parse(SectionOf(built.bigrams), SectionOf(built.hashed), 8, &error)) << error;
    EXPECT_TRUE(table.Find(abc.data(), 3, &log_p));
    EXPECT_NEAR(log_p, -1.0f, kStep / 2);
  }
  {
    // [1 2 3 4] with the bigram [3 4] but not the trigram [2 3 4]: the chain breaks in the middle.
    const Built built = Build({{abcd, -1.0f}, {{3, 4}, -0.5f}}, 8, 4, backoff);
    NgramTable table;
    std::string error;
    ASSERT_TRUE(table.Parse(SectionOf(built.bigrams), SectionOf(built.hashed), 8, &error)) << error;
    EXPECT_FALSE(table.Find(abcd.data(), 4, &log_p));
  }
  {
    const Built built = Build({{abcd, -1.0f}, {{2, 3, 4}, -0.7f}, {{3, 4}, -0.5f}}, 8, 4, backoff);
    NgramTable table;
    std::string error;
    ASSERT_TRUE(table.Parse(SectionOf(built.bigrams), SectionOf(built.hashed), 8, &error)) << error;
    EXPECT_TRUE(table.Find(abcd.data(), 4, &log_p));
    EXPECT_NEAR(log_p, -1.0f, kStep / 2);
  }
}

TEST(NgramTable, DenseTableFindsEverythingAndStopsOnAbsentKeys) {
  // A load factor near 1 makes long probe runs: every entry is still found, absent keys stop.
  std::mt19937 rng(5);
  const int32_t vocab = 30;
  const std::map<Gram, float> grams = RandomClosedSet(&rng, vocab, 4, 3000);
  const Built built = Build(std::vector<std::pair<Gram, float>>(grams.begin(), grams.end()), vocab, 4, -0.9f, 0.999);
  NgramTable table;
  std::string error;
  ASSERT_TRUE(table.Parse(SectionOf(built.bigrams), SectionOf(built.hashed), vocab, &error)) << error;
  const HashedParts parts = HashedParts::Read(built.hashed);
  EXPECT_GT(parts.max_probe, 1u);
  EXPECT_LE(parts.max_probe, parts.slots);
  for (const auto& [gram, log_p] : grams) {
    float found = 0.0f;
    ASSERT_TRUE(table.Find(gram.data(), gram.size(), &found));
    EXPECT_NEAR(found, log_p, kStep / 2 + 1e-5f);
  }
  for (int trial = 0; trial < 3000; ++trial) {
    Gram gram(3 + rng() % 2);
    for (int32_t& x : gram) x = static_cast<int32_t>(rng() % vocab);
    float found = 0.0f;
    if (!grams.count(gram)) {
      EXPECT_FALSE(table.Find(gram.data(), gram.size(), &found));
    }
  }
}

TEST(NgramTable, SameEntriesInAnyOrderGiveTheSameBytes) {
  std::mt19937 rng(9);
  const std::map<Gram, float> grams = RandomClosedSet(&rng, 25, 6, 400);
  std::vector<std::pair<Gram, float>> list(grams.begin(), grams.end());
  const Built first = Build(list, 25, 6, -0.9f);
  for (int shuffle = 0; shuffle < 3; ++shuffle) {
    std::shuffle(list.begin(), list.end(), rng);
    const Built again = Build(list, 25, 6, -0.9f);
    EXPECT_EQ(again.bigrams, first.bigrams);
    EXPECT_EQ(again.hashed, first.hashed);
  }
}

TEST(NgramTable, BigramSectionLayout) {
  // The builder's bytes are exactly the documented layout (so the parts below describe real files).
  const std::vector<std::pair<Gram, float>> grams = {{{2, 5}, -3.0f}, {{0, 3}, -1.0f}, {{0, 1}, -2.0f}};
  const Built built = Build(grams, 6, 3, -0.9f);
  BigramParts parts;
  parts.vocab = 6;
  parts.entries = 3;
  parts.offsets = {0, 2, 2, 3, 3, 3, 3};
  parts.next = {1, 3, 5};
  parts.values = {QuantizeLogProb(-2.0f), QuantizeLogProb(-1.0f), QuantizeLogProb(-3.0f)};
  EXPECT_EQ(parts.Bytes(), built.bigrams);
  const HashedParts hashed = HashedParts::Read(built.hashed);
  EXPECT_EQ(hashed.max_order, 3u);
  EXPECT_EQ(hashed.entries, 0u);
  EXPECT_EQ(hashed.slots, 1u) << "no longer n-grams: one empty slot";
  EXPECT_EQ(hashed.backoff, -0.9f);
  EXPECT_EQ(hashed.Bytes(), built.hashed);
}

// A valid pair of sections with a few entries of each kind, as parts to corrupt.
struct ValidParts {
  BigramParts bigrams;
  HashedParts hashed;
  static constexpr size_t kVocab = 6;
  ValidParts() {
    bigrams.vocab = kVocab;
    bigrams.entries = 3;
    bigrams.offsets = {0, 2, 2, 3, 3, 3, 3};
    bigrams.next = {1, 3, 5};
    bigrams.values = {10, 20, 30};
    const std::vector<std::pair<Gram, float>> grams = {{{0, 1}, -1.0f},    {{0, 3}, -1.0f},    {{2, 5}, -1.0f},
                                                       {{4, 0, 1}, -2.0f}, {{4, 0, 3}, -2.0f}, {{1, 2, 5}, -3.0f}};
    hashed = HashedParts::Read(Build(grams, kVocab, 4, -0.9f).hashed);
  }
};

TEST(NgramTable, ParseAcceptsTheValidParts) {
  const ValidParts valid;
  EXPECT_EQ(valid.hashed.entries, 3u);
  EXPECT_TRUE(Parses(valid.bigrams.Bytes(), valid.hashed.Bytes(), ValidParts::kVocab));
  EXPECT_FALSE(Parses(valid.bigrams.Bytes(), valid.hashed.Bytes(), ValidParts::kVocab + 1)) << "another vocabulary";
}

TEST(NgramTable, ParseRejectsMalformedBigramSections) {
  struct Case {
    const char* what;
    void (*corrupt)(BigramParts*);
  };
  const Case cases[] = {
      {"vocab differs", [](BigramParts* p) { p->vocab = 5, p->offsets.pop_back(); }},
      {"first offset not 0", [](BigramParts* p) { p->offsets[0] = 1; }},
      {"last offset != entries", [](BigramParts* p) { p->offsets.back() = 2; }},
      {"offsets decrease", [](BigramParts* p) { p->offsets = {0, 2, 1, 3, 3, 3, 3}; }},
      {"offset past the entries", [](BigramParts* p) { p->offsets = {0, 2, 4, 3, 3, 3, 3}; }},
      {"successor outside the vocab", [](BigramParts* p) { p->next[2] = 6; }},
      {"successors unsorted",
       [](BigramParts* p) {
         p->next = {3, 1, 5};
       }},
      {"successor repeated",
       [](BigramParts* p) {
         p->next = {1, 1, 5};
       }},
      {"value 0 (no such code)", [](BigramParts* p) { p->values[1] = 0; }},
      {"entries larger than the section",
       [](BigramParts* p) { p->entries = 0xFFFFFFFFu, p->offsets.back() = p->entries; }},
      {"vocab larger than the section", [](BigramParts* p) { p->vocab = 0xFFFFFFFFu; }},
  };
  for (const Case& c : cases) {
    ValidParts parts;
    c.corrupt(&parts.bigrams);
    EXPECT_FALSE(Parses(parts.bigrams.Bytes(), parts.hashed.Bytes(), ValidParts::kVocab)) << c.what;
  }
  const ValidParts valid;
  const std::vector<uint8_t> bytes = valid.bigrams.Bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_FALSE(Parses(cut, valid.hashed.Bytes(), ValidParts::kVocab)) << "truncated to " << n;
  }
}

TEST(NgramTable, ParseNeverReadsSuccessorsPastTheSection) {
  // Token 0 claims two successors where the section holds one: the loop over them must not run
  // before the offsets are known to lie within the entries (the 2nd would be read past the end).
  BigramParts bigrams;
  bigrams.vocab = 300;
  bigrams.entries = 1;
  bigrams.offsets.assign(301, 1);
  bigrams.offsets[0] = 0;
  bigrams.offsets[1] = 2;
  bigrams.next = {5};
  bigrams.values = {10};
  EXPECT_FALSE(Parses(bigrams.Bytes(), Build({}, 300, 3, -0.9f).hashed, 300));
}

TEST(NgramTable, ParseRejectsMalformedHashedSections) {
  struct Case {
    const char* what;
    void (*corrupt)(HashedParts*);
  };
  const Case cases[] = {
      {"max_order 1", [](HashedParts* p) { p->max_order = 1; }},
      {"max_order 9", [](HashedParts* p) { p->max_order = 9; }},
      {"no slots", [](HashedParts* p) { p->slots = 0, p->entries = 0, p->max_probe = 0, p->slot.clear(); }},
      {"entries == slots", [](HashedParts* p) { p->entries = p->slots; }},
      {"max_probe > slots", [](HashedParts* p) { p->max_probe = p->slots + 1; }},
      {"positive backoff", [](HashedParts* p) { p->backoff = 0.5f; }},
      {"NaN backoff", [](HashedParts* p) { p->backoff = std::numeric_limits<float>::quiet_NaN(); }},
      {"-inf backoff", [](HashedParts* p) { p->backoff = -std::numeric_limits<float>::infinity(); }},
      {"absurd backoff (alpha = e^-15000: gains overflow)", [](HashedParts* p) { p->backoff = -15012.5f; }},
      {"entries > used slots", [](HashedParts* p) { p->entries += 1; }},
      {"entries < used slots", [](HashedParts* p) { p->entries -= 1; }},
      {"a used slot with value 0",
       [](HashedParts* p) {
         for (uint32_t& s : p->slot) {
           if (s != 0) {
             s &= ~0xFFu;
             break;
           }
         }
       }},
      {"an extra used slot",
       [](HashedParts* p) {
         for (uint32_t& s : p->slot) {
           if (s == 0) {
             s = 0x12345601u;
             break;
           }
         }
       }},
      {"slots larger than the section", [](HashedParts* p) { p->slots = 0xFFFFFFFFu; }},
  };
  for (const Case& c : cases) {
    ValidParts parts;
    c.corrupt(&parts.hashed);
    EXPECT_FALSE(Parses(parts.bigrams.Bytes(), parts.hashed.Bytes(), ValidParts::kVocab)) << c.what;
  }
  const ValidParts valid;
  const std::vector<uint8_t> bytes = valid.hashed.Bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_FALSE(Parses(valid.bigrams.Bytes(), cut, ValidParts::kVocab)) << "truncated to " << n;
  }
}

TEST(NgramTable, ShortMaxProbeOnlyMissesEntries) {
  // A hostile header may understate max_probe: lookups stop early (misses), never scan further.
  ValidParts parts;
  parts.hashed.max_probe = 0;
  NgramTable table;
  std::string error;
  const std::vector<uint8_t> bigrams = parts.bigrams.Bytes(), hashed = parts.hashed.Bytes();
  ASSERT_TRUE(table.Parse(SectionOf(bigrams), SectionOf(hashed), ValidParts::kVocab, &error)) << error;
  float log_p = 0.0f;
  const Gram bigram = {0, 1}, trigram = {4, 0, 1};
  EXPECT_TRUE(table.Find(bigram.data(), 2, &log_p));
  EXPECT_FALSE(table.Find(trigram.data(), 3, &log_p));
}

}  // namespace
}  // namespace memory
}  // namespace tiankong
