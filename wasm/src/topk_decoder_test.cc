#include "topk_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "memory_builder.h"

namespace tiankong {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A vocab shaped like BERT's: specials and [unusedN] first, then words, then ## pieces.
std::string TestVocab(int words) {
  std::string vocab = "[PAD]\n[unused1]\n[unused22]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n<S>\n[unused]\n##\n";
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
Decoded ReferenceDecode(const float* row, const std::vector<uint8_t>& eligible, const DecodeOptions& options) {
  const size_t n = eligible.size();
  double max = -kInf;
  for (size_t i = 0; i < n; ++i) max = std::max<double>(max, row[i]);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(row[i] - max);
  std::vector<Candidate> all;
  for (size_t i = 0; i < n; ++i) {
    if (eligible[i] && row[i] != -kInf) {
      all.push_back({static_cast<int32_t>(i), static_cast<float>(std::exp(row[i] - max) / sum), {}});
    }
  }
  std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    return a.probability > b.probability || (a.probability == b.probability && a.id < b.id);
  });
  Decoded decoded;
  double kept = 0;
  for (const Candidate& c : all) {
    if (decoded.candidates.size() == static_cast<size_t>(options.top_k) || c.probability < options.threshold) {
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
    const bool special = token == "[PAD]" || token == "[UNK]" || token == "[CLS]" || token == "[SEP]" ||
                         token == "[MASK]" || token == "[unused1]" || token == "[unused22]";
    const bool piece = token.rfind("##p", 0) == 0;
    EXPECT_EQ(eligible[id], special || piece ? 0 : 1) << token;
  }
}

TEST(Eligibility, FlagsOffAllowAndDeny) {
  auto tokenizer = MakeTokenizer(8);
  DecodeOptions options;
  options.exclude_special = false;
  options.exclude_subwords = false;
  EXPECT_EQ(decoder::BuildEligibility(*tokenizer, options), std::vector<uint8_t>(tokenizer->VocabSize(), 1));

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

TEST(Eligibility, DecoderReportsWhatItMayPropose) {
  auto tokenizer = MakeTokenizer(8);
  const Decoder all(*tokenizer, DecodeOptions{});
  EXPECT_EQ(all.EligibleCount(), 11u);  // w0..w7, <S>, [unused] and ##: no specials, [unusedN] or ## pieces
  EXPECT_TRUE(all.Eligible(tokenizer->TokenToId("w3")));
  EXPECT_FALSE(all.Eligible(tokenizer->ClsId()));
  EXPECT_FALSE(all.Eligible(-1));
  EXPECT_FALSE(all.Eligible(tokenizer->VocabSize()));
  DecodeOptions only_specials;
  only_specials.allow_ids = {tokenizer->ClsId(), tokenizer->TokenToId("##p0")};
  EXPECT_EQ(Decoder(*tokenizer, only_specials).EligibleCount(), 0u);
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
    std::sort(expected.begin(), expected.end(),
              [](const auto& a, const auto& b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); });
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
  const int32_t a = tokenizer->TokenToId("w30"), b = tokenizer->TokenToId("w7"), c = tokenizer->TokenToId("w12");
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

// ---------------------------------------------------------------------------------------------
// Fusion with a corpus memory.

// Single characters (so MemoryBuilder sees one token per character): [PAD]=0 [UNK]=1 [CLS]=2
// [SEP]=3 [MASK]=4, a "##" piece, then the characters.
constexpr char kFusionVocab[] =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n##天\n天\n地\n人\n山\n水\n日\n月\n风\n云\n花\n掩\n耳\n盗\n铃\n，\n。\n";

struct FusionFixture {
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Memory> memory;
  FusionFixture() {
    std::string error;
    tokenizer = Tokenizer::FromVocab(kFusionVocab, TokenizerOptions{}, &error);
    EXPECT_NE(tokenizer, nullptr) << error;
    memory::BuildOptions options;
    options.order = 3;
    options.min_count = 1;
    memory::MemoryBuilder builder(*tokenizer, options);
    const std::string chars[] = {"天", "地", "人", "山", "水", "日", "月", "风", "云", "花"};
    std::mt19937 rng(4);
    for (int line = 0; line < 80; ++line) {
      std::string text;
      const size_t length = 3 + rng() % 12;
      for (size_t i = 0, at = rng() % 10; i < length; ++i, at = (at + 1 + rng() % 2) % 10) text += chars[at];
      builder.AddLine(text + "。");
    }
    memory::SourceText idiom;
    idiom.idiom = true;
    idiom.text = "掩耳盗铃";
    builder.AddText(idiom);
    memory::BuildReport report;
    std::vector<uint8_t> bytes = builder.Finish(&report, &error);
    EXPECT_FALSE(bytes.empty()) << error;
    MemoryStatus status;
    memory = Memory::Load(std::move(bytes), *tokenizer, &status, &error);
    EXPECT_NE(memory, nullptr) << error;
  }
  Encoding Encode(const std::string& text) const {
    Encoding encoding;
    EXPECT_EQ(tokenizer->Encode(text, &encoding), Status::kOk);
    return encoding;
  }
  static MaskContext Context(const Encoding& e) {
    return {e.ids.data(), e.ids.size(), e.mask_positions.data(), e.mask_positions.size()};
  }
  std::vector<float> RandomLogits(size_t rows, uint32_t seed) const {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> logits(rows * tokenizer->VocabSize());
    for (float& v : logits) v = dist(rng);
    logits[3] = -kInf;  // -inf stays -inf (probability 0) through the fusion
    return logits;
  }
};

FusionWeights ModelOnly() {
  FusionWeights weights;
  weights.model = 1.0f;
  weights.unigram = 0.0f;
  std::fill(std::begin(weights.ngram), std::end(weights.ngram), 0.0f);
  weights.hit_base = weights.hit_per_token = weights.hit_whole = 0.0f;
  return weights;
}

// The documented fusion, recomputed from the memory's own answers: the model's best
// `model_candidates` eligible tokens plus the memory's proposals get their evidence added.
Decoded ReferenceFusedDecode(const Tokenizer& tokenizer, const Memory& memory, const DecodeOptions& options,
                             const float* row, const MaskContext& context, size_t r) {
  const size_t vocab = tokenizer.VocabSize();
  const std::vector<uint8_t> eligible = decoder::BuildEligibility(tokenizer, options);
  const FusionWeights& w = options.fusion;
  std::vector<int32_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [row](int32_t a, int32_t b) { return row[a] > row[b]; });
  std::vector<int32_t> candidates;
  for (const int32_t id : order) {
    if (candidates.size() == static_cast<size_t>(w.model_candidates)) break;
    if (eligible[id] && row[id] != -kInf) candidates.push_back(id);
  }
  memory.ProposeCandidates(context.ids, context.n_ids, context.mask_positions, context.n_masks, r, &candidates);
  std::sort(candidates.begin(), candidates.end());
  candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
  candidates.erase(std::remove_if(candidates.begin(), candidates.end(), [&](int32_t id) { return !eligible[id]; }),
                   candidates.end());
  std::vector<CandidateEvidence> evidence;
  memory.Evidence(context.ids, context.n_ids, context.mask_positions, context.n_masks, r, candidates.data(),
                  candidates.size(), w.min_hit_strength, &evidence);
  std::vector<float> fused(vocab);
  for (size_t id = 0; id < vocab; ++id) {
    fused[id] = row[id] == -kInf ? -kInf : w.model * row[id] + w.unigram * memory.UnigramLogProbs()[id];
  }
  const std::vector<float> model_alone(row, row + vocab);
  for (const CandidateEvidence& e : evidence) {
    float gain = 0.0f;
    for (size_t n = 2; n <= 8; ++n) gain += w.ngram[n] * e.ngram_gain[n];
    if (e.hit.text >= 0) gain += w.hit_base + w.hit_per_token * e.hit.strength + (e.hit.whole ? w.hit_whole : 0.0f);
    fused[e.id] += gain;
  }
  if (w.floor > 0.0f) {
    // The documented mixture, as probabilities in double; its logs decode to the mixture itself.
    const auto softmax = [vocab](const std::vector<float>& logits) {
      const double top = *std::max_element(logits.begin(), logits.end());
      std::vector<double> p(vocab);
      double sum = 0.0;
      for (size_t id = 0; id < vocab; ++id) sum += p[id] = std::exp(static_cast<double>(logits[id]) - top);
      for (double& x : p) x /= sum;
      return p;
    };
    const std::vector<double> with_memory = softmax(fused), without = softmax(model_alone);
    for (size_t id = 0; id < vocab; ++id) {
      const double mixed = (1.0 - w.floor) * with_memory[id] + w.floor * without[id];
      fused[id] = mixed > 0.0 ? static_cast<float>(std::log(mixed)) : -kInf;
    }
  }
  return ReferenceDecode(fused.data(), eligible, options);
}

TEST(DecoderFusion, ModelWeightAloneIsThePlainDecode) {
  const FusionFixture f;
  ASSERT_NE(f.memory, nullptr);
  const size_t vocab = f.tokenizer->VocabSize();
  const Encoding input = f.Encode("天地[MASK]山水[MASK]风");
  const std::vector<float> logits = f.RandomLogits(2, 1);
  DecodeOptions plain_options;
  plain_options.top_k = 8;
  DecodeOptions fused_options = plain_options;
  fused_options.memory = f.memory.get();
  fused_options.fusion = ModelOnly();
  const Decoder plain(*f.tokenizer, plain_options), fused(*f.tokenizer, fused_options);
  std::vector<Decoded> expected, actual;
  ASSERT_EQ(plain.Decode(logits.data(), 2, vocab, &expected), DecodeStatus::kOk);
  ASSERT_EQ(fused.Decode(logits.data(), 2, vocab, FusionFixture::Context(input), &actual), DecodeStatus::kOk);
  ASSERT_EQ(actual.size(), 2u);
  for (size_t r = 0; r < 2; ++r) ExpectSameDecoded(actual[r], expected[r]);
}

TEST(DecoderFusion, FusedLogitsFollowTheDocumentedFormula) {
  const FusionFixture f;
  ASSERT_NE(f.memory, nullptr);
  const size_t vocab = f.tokenizer->VocabSize();
  const Encoding input = f.Encode("天地[MASK]山水[MASK]风。掩耳盗[MASK]");
  ASSERT_EQ(input.mask_positions.size(), 3u);
  const std::vector<float> logits = f.RandomLogits(3, 2);
  DecodeOptions options;
  options.top_k = 6;
  options.memory = f.memory.get();
  options.fusion.unigram = 0.3f;
  options.fusion.model = 0.9f;
  options.fusion.model_candidates = 4;  // fewer than the eligible tokens: proposals matter
  const Decoder decoder(*f.tokenizer, options);
  std::vector<Decoded> out;
  ASSERT_EQ(decoder.Decode(logits.data(), 3, vocab, FusionFixture::Context(input), &out), DecodeStatus::kOk);
  ASSERT_EQ(out.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    const Decoded expected =
        ReferenceFusedDecode(*f.tokenizer, *f.memory, options, &logits[r * vocab], FusionFixture::Context(input), r);
    ExpectSameDecoded(out[r], expected);
  }
  // And the memory did change something (else the comparison above proves little).
  DecodeOptions plain_options = options;
  plain_options.memory = nullptr;
  std::vector<Decoded> plain;
  ASSERT_EQ(Decoder(*f.tokenizer, plain_options).Decode(logits.data(), 3, vocab, &plain), DecodeStatus::kOk);
  float largest_change = 0.0f;
  for (size_t r = 0; r < 3; ++r) largest_change = std::max(largest_change, std::fabs(out[r].other - plain[r].other));
  EXPECT_GT(largest_change, 0.01f);
}

// A floor mixes the model's own distribution into the shown one: the documented mixture, the
// first candidate of a memorised idiom no longer at ~100%, and floor 0 is the plain fusion.
TEST(DecoderFusion, FloorMixesInTheModelsOwnDistribution) {
  const FusionFixture f;
  ASSERT_NE(f.memory, nullptr);
  const size_t vocab = f.tokenizer->VocabSize();
  const Encoding input = f.Encode("天地[MASK]山水[MASK]风。掩耳盗[MASK]");
  const std::vector<float> logits = f.RandomLogits(3, 3);
  DecodeOptions options;
  options.top_k = 6;
  options.memory = f.memory.get();
  options.fusion.unigram = 0.3f;
  options.fusion.hit_base = 12.0f;  // sure of the idiom
  options.fusion.model_candidates = 4;
  DecodeOptions floored = options;
  floored.fusion.floor = 0.1f;
  std::vector<Decoded> plain, out;
  ASSERT_EQ(Decoder(*f.tokenizer, options).Decode(logits.data(), 3, vocab, FusionFixture::Context(input), &plain),
            DecodeStatus::kOk);
  ASSERT_EQ(Decoder(*f.tokenizer, floored).Decode(logits.data(), 3, vocab, FusionFixture::Context(input), &out),
            DecodeStatus::kOk);
  for (size_t r = 0; r < 3; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    ExpectSameDecoded(out[r], ReferenceFusedDecode(*f.tokenizer, *f.memory, floored, &logits[r * vocab],
                                                   FusionFixture::Context(input), r));
  }
  ASSERT_FALSE(plain[2].candidates.empty());
  EXPECT_GT(plain[2].candidates[0].probability, 0.99f);
  EXPECT_LT(out[2].candidates[0].probability, 0.91f);
  EXPECT_GT(out[2].candidates[0].probability, 0.89f);
}

// A row's own constraint (MaskContext::allowed) decodes like the row with every token it does not
// admit at -inf: renormalised over the admitted tokens, plainly and with the memory's proposals.
TEST(DecoderFusion, AllowedRowsDecodeAsTheMaskedRow) {
  const FusionFixture f;
  ASSERT_NE(f.memory, nullptr);
  const size_t vocab = f.tokenizer->VocabSize();
  const Encoding input = f.Encode("天地[MASK]山水[MASK]风。掩耳盗[MASK]");
  const std::vector<float> logits = f.RandomLogits(3, 5);
  std::vector<uint8_t> odd(vocab, 0), none_but_ling(vocab, 0);
  for (size_t id = 1; id < vocab; id += 2) odd[id] = 1;
  none_but_ling[f.tokenizer->TokenToId("铃")] = 1;
  const uint8_t* allowed[] = {odd.data(), nullptr, none_but_ling.data()};
  std::vector<float> masked = logits;
  for (size_t id = 0; id < vocab; ++id) {
    if (!odd[id]) masked[id] = -kInf;
    if (!none_but_ling[id]) masked[2 * vocab + id] = -kInf;
  }
  for (const bool fused : {false, true}) {
    SCOPED_TRACE(fused ? "fused" : "plain");
    DecodeOptions options;
    options.top_k = 5;
    if (fused) options.memory = f.memory.get();
    options.fusion.model_candidates = 4;
    const Decoder decoder(*f.tokenizer, options);
    MaskContext context = FusionFixture::Context(input);
    context.allowed = allowed;
    std::vector<Decoded> actual, expected;
    ASSERT_EQ(decoder.Decode(logits.data(), 3, vocab, context, &actual), DecodeStatus::kOk);
    ASSERT_EQ(decoder.Decode(masked.data(), 3, vocab, FusionFixture::Context(input), &expected), DecodeStatus::kOk);
    for (size_t r = 0; r < 3; ++r) ExpectSameDecoded(actual[r], expected[r]);
    for (const Candidate& c : actual[0].candidates) EXPECT_EQ(c.id % 2, 1);
    ASSERT_EQ(actual[2].candidates.size(), 1u);
    EXPECT_FLOAT_EQ(actual[2].candidates[0].probability, 1.0f);  // the only admitted token
  }
  // Nothing admitted has a probability: no candidates, not an error.
  std::vector<uint8_t> only_sep(vocab, 0);
  only_sep[3] = 1;  // RandomLogits puts [SEP] at -inf
  const uint8_t* nothing[] = {only_sep.data(), nullptr, nullptr};
  MaskContext context = FusionFixture::Context(input);
  context.allowed = nothing;
  std::vector<Decoded> out;
  ASSERT_EQ(Decoder(*f.tokenizer, DecodeOptions{}).Decode(logits.data(), 3, vocab, context, &out), DecodeStatus::kOk);
  EXPECT_TRUE(out[0].candidates.empty());
  EXPECT_FALSE(out[1].candidates.empty());
}

TEST(DecoderFusion, ProbabilitiesStillSumToOne) {
  const FusionFixture f;
  ASSERT_NE(f.memory, nullptr);
  const size_t vocab = f.tokenizer->VocabSize();
  const Encoding input = f.Encode("[MASK]地人山[MASK]日月。掩耳[MASK]铃");
  const size_t rows = input.mask_positions.size();
  const std::vector<float> logits = f.RandomLogits(rows, 3);
  for (const int32_t top_k : {1, 5, 1000}) {
    DecodeOptions options;
    options.top_k = top_k;
    options.memory = f.memory.get();
    options.fusion.unigram = 0.5f;
    const Decoder decoder(*f.tokenizer, options);
    std::vector<Decoded> out;
    ASSERT_EQ(decoder.Decode(logits.data(), rows, vocab, FusionFixture::Context(input), &out), DecodeStatus::kOk);
    for (const Decoded& d : out) {
      double sum = d.other;
      for (const Candidate& c : d.candidates) sum += c.probability;
      EXPECT_NEAR(sum, 1.0, 1e-5) << "top_k " << top_k;
      EXPECT_GE(d.other, 0.0f);
      for (size_t i = 1; i < d.candidates.size(); ++i) {
        EXPECT_GE(d.candidates[i - 1].probability, d.candidates[i].probability);
      }
    }
  }
}

TEST(DecoderFusion, StrongHitLiftsItsCandidateToFirstPlace) {
  const FusionFixture f;
  ASSERT_NE(f.memory, nullptr);
  const size_t vocab = f.tokenizer->VocabSize();
  const Encoding input = f.Encode("掩耳盗[MASK]");
  const int32_t bell = f.tokenizer->TokenToId("铃"), sky = f.tokenizer->TokenToId("天");
  std::vector<float> logits(vocab, 0.0f);
  logits[sky] = 5.0f;  // the model prefers 天 by 5 nats
  DecodeOptions options;
  options.top_k = 3;
  options.memory = f.memory.get();
  options.fusion = ModelOnly();
  options.fusion.model_candidates = 1;  // 铃 comes from the memory's proposals alone
  {
    const Decoder decoder(*f.tokenizer, options);
    std::vector<Decoded> out;
    ASSERT_EQ(decoder.Decode(logits.data(), 1, vocab, FusionFixture::Context(input), &out), DecodeStatus::kOk);
    EXPECT_EQ(out[0].candidates[0].id, sky) << "no hit weight: the model decides";
    EXPECT_EQ(out[0].candidates[0].hit.text, -1);
  }
  options.fusion.hit_base = 2.0f;
  options.fusion.hit_per_token = 1.0f;
  options.fusion.hit_whole = 2.0f;  // 2 + 3 * 1 + 2 = 7 > 5
  const Decoder decoder(*f.tokenizer, options);
  std::vector<Decoded> out;
  ASSERT_EQ(decoder.Decode(logits.data(), 1, vocab, FusionFixture::Context(input), &out), DecodeStatus::kOk);
  ASSERT_GE(out[0].candidates.size(), 2u);
  const Candidate& first = out[0].candidates[0];
  EXPECT_EQ(first.id, bell);
  EXPECT_EQ(first.hit.text, 0);
  EXPECT_EQ(first.hit.strength, 3);
  EXPECT_TRUE(first.hit.whole);
  EXPECT_NEAR(first.probability / out[0].candidates[1].probability, std::exp(2.0f), 1e-3) << "铃 at 7 against 天 at 5";
  EXPECT_EQ(f.memory->SourceOf(first.hit).title, "掩耳盗铃");
  EXPECT_EQ(out[0].candidates[1].hit.text, -1);
}

TEST(DecoderFusion, MemoryNeedsAMatchingContext) {
  const FusionFixture f;
  ASSERT_NE(f.memory, nullptr);
  const size_t vocab = f.tokenizer->VocabSize();
  const Encoding input = f.Encode("天[MASK]人[MASK]");
  const std::vector<float> logits = f.RandomLogits(2, 5);
  DecodeOptions options;
  options.memory = f.memory.get();
  const Decoder decoder(*f.tokenizer, options);
  std::vector<Decoded> out;
  EXPECT_EQ(decoder.Decode(logits.data(), 2, vocab, &out), DecodeStatus::kBadShape) << "no context at all";
  EXPECT_EQ(decoder.Decode(logits.data(), 1, vocab, FusionFixture::Context(input), &out), DecodeStatus::kBadShape)
      << "2 masks, 1 row";
  MaskContext no_ids = FusionFixture::Context(input);
  no_ids.ids = nullptr;
  EXPECT_EQ(decoder.Decode(logits.data(), 2, vocab, no_ids, &out), DecodeStatus::kBadShape);
  MaskContext no_masks = FusionFixture::Context(input);
  no_masks.mask_positions = nullptr;
  EXPECT_EQ(decoder.Decode(logits.data(), 2, vocab, no_masks, &out), DecodeStatus::kBadShape);
  EXPECT_TRUE(out.empty());
  ASSERT_EQ(decoder.Decode(logits.data(), 2, vocab, FusionFixture::Context(input), &out), DecodeStatus::kOk);
  EXPECT_EQ(out.size(), 2u);
  // Without a memory the context is optional and ignored.
  const Decoder plain(*f.tokenizer, DecodeOptions{});
  std::vector<Decoded> with, without;
  ASSERT_EQ(plain.Decode(logits.data(), 2, vocab, FusionFixture::Context(input), &with), DecodeStatus::kOk);
  ASSERT_EQ(plain.Decode(logits.data(), 2, vocab, &without), DecodeStatus::kOk);
  for (size_t r = 0; r < 2; ++r) ExpectSameDecoded(with[r], without[r]);
}

}  // namespace
}  // namespace tiankong
