#include "topk_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tiankong {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A vocab shaped like BERT's: specials and [unusedN] first, then words, then ## pieces.
std::string TestVocab(int words) {
  std::string vocab =
      "[PAD]\n[unused1]\n[unused22]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n<S>\n[unused]\n##\n";
  for (int i = 0; i < words; ++i) vocab += "w" + std::to_string(i) + "\n";
  for (int i = 0; i < words / 4; ++i) vocab += "##p" + std::to_string(i) + "\n";
  vocab.pop_back();  // no trailing newline: a trailing '\n' would not add an entry anyway
  return vocab;
}

std::unique_ptr<Tokenizer> MakeTokenizer(int words) {
  std::string error;
  auto tokenizer = Tokenizer::FromVocab(TestVocab(words), TokenizerOptions{}, &error);
  EXPECT_NE(tokenizer, nullptr) << error;
  return tokenizer;
}

// Straightforward reference: full double softmax, filter, full sort, cut.
Decoded ReferenceDecode(const float* row, const std::vector<uint8_t>& eligible,
                        const DecodeOptions& options) {
  const size_t n = eligible.size();
  double max = -kInf;
  for (size_t i = 0; i < n; ++i) max = std::max<double>(max, row[i]);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(row[i] - max);
  std::vector<Candidate> all;
  for (size_t i = 0; i < n; ++i) {
    if (eligible[i] && row[i] != -kInf) {
      all.push_back({static_cast<int32_t>(i), static_cast<float>(std::exp(row[i] - max) / sum)});
    }
  }
  std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    return a.probability > b.probability || (a.probability == b.probability && a.id < b.id);
  });
  Decoded decoded;
  double kept = 0;
  for (const Candidate& c : all) {
    if (decoded.candidates.size() == static_cast<size_t>(options.top_k) ||
        c.probability < options.threshold) {
      break;
    }
    decoded.candidates.push_back(c);
    kept += c.probability;
  }
  decoded.other = static_cast<float>(1.0 - kept);
  return decoded;
}

void ExpectSameDecoded(const Decoded& actual, const Decoded& expected) {
  ASSERT_EQ(actual.candidates.size(), expected.candidates.size());
  for (size_t i = 0; i < actual.candidates.size(); ++i) {
    EXPECT_EQ(actual.candidates[i].id, expected.candidates[i].id) << "rank " << i;
    EXPECT_NEAR(actual.candidates[i].probability, expected.candidates[i].probability,
                1e-6 * expected.candidates[i].probability + 1e-12)
        << "rank " << i;
  }
  EXPECT_NEAR(actual.other, expected.other, 2e-6);
}

TEST(TokenClasses, UnusedSlots) {
  EXPECT_TRUE(decoder::IsUnusedSlot("[unused1]"));
  EXPECT_TRUE(decoder::IsUnusedSlot("[unused99]"));
  EXPECT_FALSE(decoder::IsUnusedSlot("[unused]"));
  EXPECT_FALSE(decoder::IsUnusedSlot("[unused1x]"));
  EXPECT_FALSE(decoder::IsUnusedSlot("[unused1"));
  EXPECT_FALSE(decoder::IsUnusedSlot("unused1]"));
  EXPECT_FALSE(decoder::IsUnusedSlot("[UNK]"));
}

TEST(TokenClasses, ContinuationPieces) {
  EXPECT_TRUE(decoder::IsContinuationPiece("##的"));
  EXPECT_TRUE(decoder::IsContinuationPiece("##a"));
  EXPECT_FALSE(decoder::IsContinuationPiece("##"));
  EXPECT_FALSE(decoder::IsContinuationPiece("#"));
  EXPECT_FALSE(decoder::IsContinuationPiece("的"));
}

TEST(Eligibility, ExcludesSpecialsUnusedAndPieces) {
  auto tokenizer = MakeTokenizer(8);
  const std::vector<uint8_t> eligible = decoder::BuildEligibility(*tokenizer, DecodeOptions{});
  ASSERT_EQ(eligible.size(), static_cast<size_t>(tokenizer->VocabSize()));
  for (int32_t id = 0; id < tokenizer->VocabSize(); ++id) {
    const std::string& token = tokenizer->IdToToken(id);
    const bool special = token == "[PAD]" || token == "[UNK]" || token == "[CLS]" ||
                         token == "[SEP]" || token == "[MASK]" || token == "[unused1]" ||
                         token == "[unused22]";
    const bool piece = token.rfind("##p", 0) == 0;
    EXPECT_EQ(eligible[id], special || piece ? 0 : 1) << token;
  }
}

TEST(Eligibility, FlagsOffAllowAndDeny) {
  auto tokenizer = MakeTokenizer(8);
  DecodeOptions options;
  options.exclude_special = false;
  options.exclude_subwords = false;
  EXPECT_EQ(decoder::BuildEligibility(*tokenizer, options),
            std::vector<uint8_t>(tokenizer->VocabSize(), 1));

  const int32_t w1 = tokenizer->TokenToId("w1"), w2 = tokenizer->TokenToId("w2");
  const int32_t mask = tokenizer->MaskId();
  options = DecodeOptions{};
  options.allow_ids = {w1, w2, mask, -5, 1 << 30};  // out-of-range ids are ignored
  options.deny_ids = {w2};
  const std::vector<uint8_t> eligible = decoder::BuildEligibility(*tokenizer, options);
  std::vector<uint8_t> expected(tokenizer->VocabSize(), 0);
  expected[w1] = 1;  // w2 denied, [MASK] still special
  EXPECT_EQ(eligible, expected);
}

TEST(SelectTopK, MatchesFullSortWithTiesAndNegativeInfinity) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(-20, 20);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + rng() % 300;
    std::vector<float> row(n);
    std::vector<uint8_t> eligible(n);
    for (size_t i = 0; i < n; ++i) {
      row[i] = rng() % 7 == 0 ? -kInf : 0.5f * level(rng);  // coarse levels: many ties
      eligible[i] = rng() % 5 != 0;
    }
    const size_t k = rng() % 12;
    std::vector<decoder::ScoredId> expected;
    for (size_t i = 0; i < n; ++i) {
      if (eligible[i] && row[i] != -kInf) expected.push_back({row[i], static_cast<int32_t>(i)});
    }
    std::sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) {
      return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    });
    expected.resize(std::min(expected.size(), k));
    std::vector<decoder::ScoredId> actual;
    decoder::SelectTopK(row.data(), eligible.data(), n, k, &actual);
    ASSERT_EQ(actual.size(), expected.size()) << "trial " << trial;
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_EQ(actual[i].id, expected[i].id) << "trial " << trial << " rank " << i;
      EXPECT_EQ(actual[i].logit, expected[i].logit);
    }
  }
}

TEST(Decoder, MatchesReferenceOnRandomRows) {
  auto tokenizer = MakeTokenizer(4000);
  const size_t vocab = tokenizer->VocabSize();
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 4.0f);
  for (int32_t top_k : {1, 3, 5, 40}) {
    for (float threshold : {0.0f, 0.01f}) {
      DecodeOptions options;
      options.top_k = top_k;
      options.threshold = threshold;
      Decoder decoder(*tokenizer, options);
      const std::vector<uint8_t> eligible = decoder::BuildEligibility(*tokenizer, options);
      const size_t rows = 3;
      std::vector<float> logits(rows * vocab);
      for (float& v : logits) v = dist(rng);
      logits[vocab + 123] = 25.0f;  // a confident row: threshold cuts most candidates
      for (size_t i = 2 * vocab; i < 3 * vocab; i += 2) logits[i] = -kInf;
      std::vector<Decoded> out;
      ASSERT_EQ(decoder.Decode(logits.data(), rows, vocab, &out), DecodeStatus::kOk);
      ASSERT_EQ(out.size(), rows);
      for (size_t r = 0; r < rows; ++r) {
        SCOPED_TRACE("top_k=" + std::to_string(top_k) + " threshold=" + std::to_string(threshold) +
                     " row=" + std::to_string(r));
        ExpectSameDecoded(out[r], ReferenceDecode(&logits[r * vocab], eligible, options));
      }
    }
  }
}

TEST(Decoder, TiedLogitsOrderById) {
  auto tokenizer = MakeTokenizer(50);
  const size_t vocab = tokenizer->VocabSize();
  std::vector<float> logits(vocab, 0.0f);
  const int32_t a = tokenizer->TokenToId("w30"), b = tokenizer->TokenToId("w7"),
                c = tokenizer->TokenToId("w12");
  logits[a] = logits[b] = logits[c] = 3.0f;
  DecodeOptions options;
  options.top_k = 2;
  Decoder decoder(*tokenizer, options);
  std::vector<Decoded> out;
  ASSERT_EQ(decoder.Decode(logits.data(), 1, vocab, &out), DecodeStatus::kOk);
  ASSERT_EQ(out[0].candidates.size(), 2u);
  EXPECT_EQ(out[0].candidates[0].id, b);
  EXPECT_EQ(out[0].candidates[1].id, c);
}

TEST(Decoder, ProbabilitiesAreOverTheFullRow) {
  // Excluded tokens still take softmax mass: it lands in `other`.
  auto tokenizer = MakeTokenizer(10);
  const size_t vocab = tokenizer->VocabSize();
  std::vector<float> logits(vocab, -kInf);
  logits[tokenizer->MaskId()] = 0.0f;
  logits[tokenizer->TokenToId("w3")] = 0.0f;
  Decoder decoder(*tokenizer, DecodeOptions{});
  std::vector<Decoded> out;
  ASSERT_EQ(decoder.Decode(logits.data(), 1, vocab, &out), DecodeStatus::kOk);
  ASSERT_EQ(out[0].candidates.size(), 1u);  // -inf entries are never proposed
  EXPECT_EQ(out[0].candidates[0].id, tokenizer->TokenToId("w3"));
  EXPECT_FLOAT_EQ(out[0].candidates[0].probability, 0.5f);
  EXPECT_FLOAT_EQ(out[0].other, 0.5f);
}

TEST(Decoder, RejectsNonFiniteRowsAndBadShapes) {
  auto tokenizer = MakeTokenizer(10);
  const size_t vocab = tokenizer->VocabSize();
  Decoder decoder(*tokenizer, DecodeOptions{});
  std::vector<float> logits(2 * vocab, 1.0f);
  std::vector<Decoded> out;
  EXPECT_EQ(decoder.Decode(logits.data(), 2, vocab + 1, &out), DecodeStatus::kBadShape);
  EXPECT_EQ(decoder.Decode(nullptr, 1, vocab, &out), DecodeStatus::kBadShape);
  EXPECT_EQ(decoder.Decode(nullptr, 0, vocab, &out), DecodeStatus::kOk);
  EXPECT_TRUE(out.empty());

  logits[vocab + 3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(decoder.Decode(logits.data(), 2, vocab, &out), DecodeStatus::kNonFinite);
  EXPECT_TRUE(out.empty());
  logits[vocab + 3] = kInf;
  EXPECT_EQ(decoder.Decode(logits.data(), 2, vocab, &out), DecodeStatus::kNonFinite);
  std::fill(logits.begin() + vocab, logits.end(), -kInf);
  EXPECT_EQ(decoder.Decode(logits.data(), 2, vocab, &out), DecodeStatus::kNonFinite)
      << "a row with no finite logit has no distribution";
  EXPECT_EQ(decoder.Decode(logits.data(), 1, vocab, &out), DecodeStatus::kOk);
}

TEST(Decoder, ZeroTopKReturnsNoCandidates) {
  auto tokenizer = MakeTokenizer(10);
  DecodeOptions options;
  options.top_k = 0;
  Decoder decoder(*tokenizer, options);
  std::vector<float> logits(tokenizer->VocabSize(), 0.0f);
  std::vector<Decoded> out;
  ASSERT_EQ(decoder.Decode(logits.data(), 1, logits.size(), &out), DecodeStatus::kOk);
  EXPECT_TRUE(out[0].candidates.empty());
  EXPECT_FLOAT_EQ(out[0].other, 1.0f);
}

}  // namespace
}  // namespace tiankong
