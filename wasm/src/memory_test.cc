// tiankong::Memory end to end: MemoryBuilder -> bytes -> Memory::Load -> queries, checked against
// an independent reference (exact n-gram counts in std::map, stupid backoff as memory_query.h
// defines it), plus sources, proposals, load failures and determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "memory_builder.h"
#include "memory_format.h"
#include "ngram_table.h"
#include "text_index.h"
#include "tiankong/tiankong.h"

namespace tiankong {
namespace {

using memory::kBoundary;
using memory::kWildcard;
using Gram = std::vector<int32_t>;

constexpr char kPoem[] = "床前明月光，疑是地上霜。举头望明月，低头思故乡。";
constexpr char kCorpusChars[] = "天地人山水日月风云花";
constexpr char kOutOfVocab[] = "猫";  // not in the vocab: [UNK], a boundary
// One stored log-probability is off by at most half a quantisation step (about 0.04 nats); a gain
// is the difference of two such values.
constexpr double kTermTolerance = 0.08;

std::vector<std::string> Chars(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    out.emplace_back(text.substr(i, len));
    i += len;
  }
  return out;
}

std::string Utf8(char32_t cp) {  // BMP only
  std::string s;
  s += static_cast<char>(0xE0 | (cp >> 12));
  s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  s += static_cast<char>(0x80 | (cp & 0x3F));
  return s;
}

// Filler characters (U+5400 on) for tokens with many neighbours.
std::string Filler(int i) { return Utf8(static_cast<char32_t>(0x5400 + i)); }

// [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, then single characters.
std::string VocabText(bool variant = false) {
  std::vector<std::string> tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  std::set<std::string> seen(tokens.begin(), tokens.end());
  const auto add = [&](std::string_view text) {
    for (const std::string& c : Chars(text)) {
      if (seen.insert(c).second) tokens.push_back(c);
    }
  };
  add(kCorpusChars);
  add("，。");
  add(kPoem);
  add("掩耳盗铃钟");
  add("丢三落四");
  for (int i = 0; i < 80; ++i) add(Filler(i));
  if (variant) std::swap(tokens[6], tokens[7]);  // same size, another vocabulary
  std::string text;
  for (const std::string& token : tokens) text += token + "\n";
  return text;
}

std::unique_ptr<Tokenizer> MakeTokenizer(bool variant = false) {
  std::string error;
  auto tokenizer = Tokenizer::FromVocab(VocabText(variant), TokenizerOptions{}, &error);
  EXPECT_NE(tokenizer, nullptr) << error;
  return tokenizer;
}

int32_t Id(const Tokenizer& tokenizer, const std::string& token) {
  const int32_t id = tokenizer.TokenToId(token);
  EXPECT_GE(id, 0) << token;
  return id;
}

// Lines from a biased random walk over the corpus characters, with punctuation and the odd
// out-of-vocabulary character (so runs break inside lines).
std::vector<std::string> SyntheticCorpus(uint32_t seed, size_t lines) {
  std::mt19937 rng(seed);
  const std::vector<std::string> chars = Chars(kCorpusChars);
  std::vector<std::string> out;
  for (size_t l = 0; l < lines; ++l) {
    std::string line;
    size_t current = rng() % chars.size();
    const size_t length = 3 + rng() % 22;
    for (size_t i = 0; i < length; ++i) {
      const unsigned r = rng() % 100;
      if (r < 5) {
        line += "，";
      } else if (r < 7) {
        line += kOutOfVocab;
      } else {
        // Mostly the next or the second-next character: repeated n-grams of every order.
        current = (current + (r < 60 ? 1 : r < 85 ? 2 : rng() % chars.size())) % chars.size();
        line += chars[current];
      }
    }
    out.push_back(line + "。");
  }
  return out;
}

std::vector<memory::SourceText> FamousTexts() {
  memory::SourceText poem;
  poem.work = "千家诗";
  poem.title = "静夜思";
  poem.author = "李白";
  poem.text = kPoem;
  memory::SourceText bell, chime, unknown;
  bell.idiom = chime.idiom = true;
  bell.text = "掩耳盗铃";
  chime.text = "掩耳盗钟";
  unknown.work = "测试";
  unknown.title = "未知字";
  unknown.text = std::string(kOutOfVocab) + "山水花。";
  return {poem, bell, chime, unknown};
}

memory::BuildOptions ExactOptions() {
  memory::BuildOptions options;
  options.order = 4;
  options.min_count = 1;
  options.max_ngrams = size_t{1} << 40;  // nothing pruned
  return options;
}

std::vector<uint8_t> BuildBytes(const Tokenizer& tokenizer, const std::vector<std::string>& lines,
                                const std::vector<memory::SourceText>& texts, const memory::BuildOptions& options,
                                memory::BuildReport* report = nullptr) {
  memory::MemoryBuilder builder(tokenizer, options);
  for (const std::string& line : lines) builder.AddLine(line);
  for (const memory::SourceText& text : texts) builder.AddText(text);
  memory::BuildReport local;
  std::string error;
  std::vector<uint8_t> bytes = builder.Finish(report ? report : &local, &error);
  EXPECT_FALSE(bytes.empty()) << error;
  return bytes;
}

std::unique_ptr<Memory> Load(std::vector<uint8_t> bytes, const Tokenizer& tokenizer, MemoryStatus* status = nullptr) {
  MemoryStatus local = MemoryStatus::kOk;
  std::string error;
  auto memory = Memory::Load(std::move(bytes), tokenizer, status ? status : &local, &error);
  if (memory == nullptr) {
    EXPECT_FALSE(error.empty());
  } else {
    EXPECT_EQ(status ? *status : local, MemoryStatus::kOk);
  }
  return memory;
}

// ---------------------------------------------------------------------------------------------
// The reference: exact counts, written from the header comments, sharing no code with the memory.

class Reference {
 public:
  Reference(const Tokenizer& tokenizer, const std::vector<std::string>& lines, size_t order)
      : tokenizer_(tokenizer), order_(order), vocab_(static_cast<size_t>(tokenizer.VocabSize())) {
    for (const std::string& line : lines) {
      Gram run;
      for (const std::string& c : Chars(line)) {
        const int32_t id = tokenizer.TokenToId(c);
        if (id >= 0) {
          run.push_back(id);
          continue;
        }
        CountRun(run);
        run.clear();
      }
      CountRun(run);
    }
  }

  double Count(const int32_t* gram, size_t n) const {
    const auto it = counts_.find(Gram(gram, gram + n));
    return it == counts_.end() ? 0.0 : it->second;
  }
  const std::map<Gram, uint32_t>& counts() const { return counts_; }

  // log P(token): counts with half a count added to every vocabulary entry.
  double Unigram(int32_t id) const { return std::log((Count(&id, 1) + 0.5) / (tokens_ + 0.5 * vocab_)); }

  // log count(g) / count(g without its last token), when g was seen.
  bool LogP(const int32_t* gram, size_t n, double* log_p) const {
    const double joint = Count(gram, n);
    if (joint == 0) return false;
    *log_p = std::log(joint / Count(gram, n - 1));
    return true;
  }

  // Stupid backoff for w[j] with `history` known tokens before it, trying histories of at most
  // `max_k` tokens (longest first); *matched = length of the n-gram used, 0 for the unigram.
  double Score(const Gram& w, size_t j, size_t history, size_t max_k, size_t* matched) const {
    for (size_t k = max_k; k >= 1; --k) {
      double log_p;
      if (LogP(&w[j - k], k + 1, &log_p)) {
        *matched = k + 1;
        return log_p + static_cast<double>(history - k) * kLogAlpha;
      }
    }
    *matched = 0;
    return static_cast<double>(history) * kLogAlpha + Unigram(w[j]);
  }

  // memory_query.h: the terms for j = p .. p+n-1 that involve c; each minus its value without c,
  // attributed to the length of the matching n-gram.
  void Gains(const Gram& units, size_t p, int32_t c, double gains[9], int terms[9]) const {
    size_t left = 0, right = 0;
    while (left + 1 < order_ && left < p && units[p - left - 1] >= 0) ++left;
    while (right + 1 < order_ && p + right + 1 < units.size() && units[p + right + 1] >= 0) ++right;
    Gram w = units;
    w[p] = c;
    size_t matched = 0;
    const double own = Score(w, p, left, left, &matched);
    if (matched >= 2) {
      gains[matched] += own - (static_cast<double>(left) * kLogAlpha + Unigram(c));
      ++terms[matched];
    }
    for (size_t d = 1; d <= right; ++d) {
      const size_t history = std::min(order_ - 1, left + d);
      const double full = Score(w, p + d, history, history, &matched);
      if (matched < d + 1) continue;  // the match does not reach back to c: same for every c
      size_t unused = 0;
      const double without_c = Score(w, p + d, history, d - 1, &unused);
      gains[matched] += full - without_c;
      ++terms[matched];
    }
  }

  // The units of an input: specials are boundaries; [MASK] and the listed positions wildcards.
  Gram Units(const Gram& ids, const std::vector<int32_t>& masks) const {
    Gram units = ids;
    for (int32_t& u : units) {
      if (u == tokenizer_.MaskId())
        u = kWildcard;
      else if (u == tokenizer_.PadId() || u == tokenizer_.UnkId() || u == tokenizer_.ClsId() || u == tokenizer_.SepId())
        u = kBoundary;
    }
    for (const int32_t m : masks) units[m] = kWildcard;
    return units;
  }

  static constexpr double kLogAlpha = -0.916290731874155;  // log 0.4

 private:
  void CountRun(const Gram& run) {
    tokens_ += static_cast<double>(run.size());
    for (size_t n = 1; n <= order_; ++n) {
      for (size_t start = 0; start + n <= run.size(); ++start)
        ++counts_[Gram(run.begin() + start, run.begin() + start + n)];
    }
  }

  const Tokenizer& tokenizer_;
  size_t order_, vocab_;
  double tokens_ = 0;
  std::map<Gram, uint32_t> counts_;
};

struct Query {
  Gram ids;
  std::vector<int32_t> masks;
};

// Inputs built from corpus-like text: blanks, specials and the odd extra [MASK] (not listed).
std::vector<Query> RandomQueries(const Tokenizer& tokenizer, uint32_t seed, size_t count) {
  std::mt19937 rng(seed);
  const std::vector<std::string> lines = SyntheticCorpus(seed + 1, count);
  std::vector<Query> out;
  for (const std::string& line : lines) {
    Query q;
    q.ids.push_back(tokenizer.ClsId());
    for (const std::string& c : Chars(line)) {
      const int32_t id = tokenizer.TokenToId(c);
      q.ids.push_back(id >= 0 ? id : tokenizer.UnkId());
    }
    q.ids.push_back(tokenizer.SepId());
    for (size_t i = 1; i + 1 < q.ids.size(); ++i) {
      const unsigned r = rng() % 100;
      if (r < 18) {
        q.ids[i] = tokenizer.MaskId();
        q.masks.push_back(static_cast<int32_t>(i));
      } else if (r < 20) {
        q.ids[i] = tokenizer.MaskId();  // a [MASK] the caller did not list: still a wildcard
      } else if (r < 23) {
        q.masks.push_back(static_cast<int32_t>(i));  // a listed position that holds another id
      } else if (r < 25) {
        q.ids[i] = rng() % 2 ? tokenizer.PadId() : tokenizer.SepId();
      }
    }
    if (q.masks.empty()) {
      q.masks.push_back(static_cast<int32_t>(1 + rng() % (q.ids.size() - 2)));
      q.ids[q.masks[0]] = tokenizer.MaskId();
    }
    out.push_back(q);
  }
  return out;
}

struct Fixture {
  std::unique_ptr<Tokenizer> tokenizer = MakeTokenizer();
  std::vector<std::string> lines = SyntheticCorpus(7, 160);
  memory::BuildReport report;
  std::vector<uint8_t> bytes = BuildBytes(*tokenizer, lines, FamousTexts(), ExactOptions(), &report);
  std::unique_ptr<Memory> memory = Load(bytes, *tokenizer);
  Reference reference{*tokenizer, lines, ExactOptions().order};
};

// ---------------------------------------------------------------------------------------------

TEST(MemoryEvidence, UnigramsAreSmoothedCorpusFrequencies) {
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  const float* unigram = f.memory->UnigramLogProbs();
  for (int32_t id = 0; id < f.tokenizer->VocabSize(); ++id) {
    EXPECT_NEAR(unigram[id], f.reference.Unigram(id), 1e-5) << id;
  }
}

TEST(MemoryEvidence, NgramGainsMatchAnExactStupidBackoffReference) {
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  const int32_t vocab = f.tokenizer->VocabSize();
  Gram candidates(static_cast<size_t>(vocab));
  for (int32_t id = 0; id < vocab; ++id) candidates[id] = id;
  candidates.push_back(-1);  // out of range: an empty evidence row
  candidates.push_back(vocab);
  size_t nonzero = 0, compared = 0;
  for (const Query& q : RandomQueries(*f.tokenizer, 11, 60)) {
    const Gram units = f.reference.Units(q.ids, q.masks);
    for (size_t target = 0; target < q.masks.size(); ++target) {
      std::vector<CandidateEvidence> out = {CandidateEvidence{}};  // Evidence replaces the contents
      f.memory->Evidence(q.ids.data(), q.ids.size(), q.masks.data(), q.masks.size(), target, candidates.data(),
                         candidates.size(), 3, &out);
      ASSERT_EQ(out.size(), candidates.size());
      const size_t p = static_cast<size_t>(q.masks[target]);
      for (size_t i = 0; i < candidates.size(); ++i) {
        const CandidateEvidence& e = out[i];
        const int32_t c = candidates[i];
        ASSERT_EQ(e.id, c);
        if (c < 0 || c >= vocab) {
          for (const float g : e.ngram_gain) EXPECT_EQ(g, 0.0f);
          EXPECT_EQ(e.unigram, 0.0f);
          EXPECT_EQ(e.hit.text, -1);
          continue;
        }
        EXPECT_NEAR(e.unigram, f.reference.Unigram(c), 1e-5);
        double gains[9] = {};
        int terms[9] = {};
        f.reference.Gains(units, p, c, gains, terms);
        EXPECT_EQ(e.ngram_gain[0], 0.0f);
        EXPECT_EQ(e.ngram_gain[1], 0.0f);
        for (size_t n = 2; n <= 8; ++n) {
          ++compared;
          nonzero += terms[n] > 0;
          EXPECT_NEAR(e.ngram_gain[n], gains[n], kTermTolerance * terms[n] + 1e-3)
              << "candidate " << f.tokenizer->IdToToken(c) << " n=" << n << " blank " << p << " terms " << terms[n];
        }
      }
    }
  }
  EXPECT_GT(nonzero, 1000u) << "of " << compared << ": the comparison must involve real n-gram matches";
}

TEST(MemoryEvidence, OutOfRangeTargetsAndPositionsGiveNothing) {
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  const Gram ids = {f.tokenizer->ClsId(), 5, f.tokenizer->MaskId(), 6, f.tokenizer->SepId()};
  const std::vector<int32_t> masks = {2}, bad_masks = {-1, 5, 1 << 30};
  const int32_t candidate = 7;
  std::vector<CandidateEvidence> out;
  f.memory->Evidence(ids.data(), ids.size(), masks.data(), masks.size(), 1, &candidate, 1, 3, &out);
  EXPECT_TRUE(out.empty()) << "target >= n_masks";
  for (size_t t = 0; t < bad_masks.size(); ++t) {
    f.memory->Evidence(ids.data(), ids.size(), bad_masks.data(), bad_masks.size(), t, &candidate, 1, 3, &out);
    EXPECT_TRUE(out.empty()) << "mask position " << bad_masks[t];
    std::vector<int32_t> proposed;
    f.memory->ProposeCandidates(ids.data(), ids.size(), bad_masks.data(), bad_masks.size(), t, &proposed);
    EXPECT_TRUE(proposed.empty());
  }
  // A blank at either edge of the input.
  const Gram edge = {f.tokenizer->MaskId(), 5, f.tokenizer->MaskId()};
  for (const int32_t p : {0, 2}) {
    f.memory->Evidence(edge.data(), edge.size(), &p, 1, 0, &candidate, 1, 3, &out);
    ASSERT_EQ(out.size(), 1u);
  }
}

TEST(MemoryBuilder, PruningKeepsEverySuffixChain) {
  const auto tokenizer = MakeTokenizer();
  const std::vector<std::string> lines = SyntheticCorpus(3, 200);
  memory::BuildOptions options = ExactOptions();
  options.order = 5;
  const Reference reference(*tokenizer, lines, options.order);
  for (const size_t max_ngrams : {1, 7, 40, 150}) {
    options.max_ngrams = max_ngrams;
    memory::BuildReport report;
    const std::vector<uint8_t> bytes = BuildBytes(*tokenizer, lines, {}, options, &report);
    memory::Container container;
    std::string error;
    ASSERT_EQ(memory::ParseContainer(bytes.data(), bytes.size(), &container, &error), MemoryStatus::kOk) << error;
    memory::NgramTable table;
    ASSERT_TRUE(table.Parse(*container.Find(memory::kSectionBigrams), *container.Find(memory::kSectionNgrams),
                            static_cast<size_t>(tokenizer->VocabSize()), &error))
        << error;
    // Every kept entry is findable, which for a hashed one means its whole suffix chain was kept:
    // the findable corpus n-grams are exactly as many as the table's entries.
    size_t findable = 0;
    for (const auto& [gram, count] : reference.counts()) {
      float log_p = 0.0f;
      if (gram.size() < 2 || !table.Find(gram.data(), gram.size(), &log_p)) continue;
      ++findable;
      for (size_t start = 1; start + 2 <= gram.size(); ++start) {
        EXPECT_TRUE(table.Find(gram.data() + start, gram.size() - start, &log_p));
      }
    }
    EXPECT_EQ(findable, table.entries()) << "max_ngrams " << max_ngrams;
    uint64_t kept = 0;
    for (const uint64_t k : report.kept) kept += k;
    EXPECT_EQ(kept, table.entries());
    // The budget is met, overshooting by at most one chain (order - 2 suffixes).
    EXPECT_GE(kept, max_ngrams);
    EXPECT_LE(kept, max_ngrams + options.order - 2);
  }
}

TEST(MemoryProposals, TopSuccessorsThenTopPredecessorsThenIndexHitsThenOwnBest) {
  const auto tokenizer = MakeTokenizer();
  // 风 is followed by 60 fillers, filler i (i % 7 + 1) times; 9 fillers precede 云.
  std::vector<std::string> lines;
  for (int i = 0; i < 60; ++i) {
    for (int r = 0; r <= i % 7; ++r) lines.push_back("风" + Filler(i));
  }
  for (int j = 0; j < 9; ++j) {
    for (int r = 0; r <= j % 4; ++r) lines.push_back(Filler(60 + j) + "云");
  }
  memory::BuildOptions options = ExactOptions();
  options.order = 3;
  options.neighbours = 3;
  auto memory = Load(BuildBytes(*tokenizer, lines, FamousTexts(), options), *tokenizer);
  ASSERT_NE(memory, nullptr);
  const Reference reference(*tokenizer, lines, 3);

  const int32_t wind = Id(*tokenizer, "风"), cloud = Id(*tokenizer, "云");
  // Successors of 风 by log P(next | 风) as stored (quantised), ties by id: the first 48.
  std::vector<std::pair<uint8_t, int32_t>> successors;
  for (int i = 0; i < 60; ++i) {
    const Gram gram = {wind, Id(*tokenizer, Filler(i))};
    double log_p = 0;
    ASSERT_TRUE(reference.LogP(gram.data(), 2, &log_p));
    successors.emplace_back(memory::QuantizeLogProb(static_cast<float>(log_p)), gram[1]);
  }
  std::sort(successors.begin(), successors.end());
  Gram expected = {-7};  // ProposeCandidates appends
  for (size_t k = 0; k < 48; ++k) expected.push_back(successors[k].second);
  // Predecessors of 云 by count, ties by id: the first `neighbours`.
  std::vector<std::pair<int, int32_t>> predecessors;
  for (int j = 0; j < 9; ++j) predecessors.emplace_back(-(j % 4 + 1), Id(*tokenizer, Filler(60 + j)));
  std::sort(predecessors.begin(), predecessors.end());
  for (size_t k = 0; k < 3; ++k) expected.push_back(predecessors[k].second);

  const Gram ids = {tokenizer->ClsId(), wind, tokenizer->MaskId(), cloud, tokenizer->SepId()};
  const int32_t mask = 2;
  // Then the memory's own best 10 by the reference's unigram + gains, over every successor of 风
  // and the stored predecessors of 云 (best first, ties by id).
  const Gram units = reference.Units(ids, {mask});
  std::vector<std::pair<double, int32_t>> own;
  for (size_t k = 0; k < successors.size(); ++k) own.emplace_back(0.0, successors[k].second);
  for (size_t k = 0; k < 3; ++k) own.emplace_back(0.0, predecessors[k].second);
  for (auto& [score, c] : own) {
    double gains[9] = {};
    int terms[9] = {};
    reference.Gains(units, mask, c, gains, terms);
    score = -reference.Unigram(c);
    for (const double g : gains) score -= g;
  }
  std::sort(own.begin(), own.end());
  for (size_t k = 0; k < 10; ++k) expected.push_back(own[k].second);
  Gram out = {-7};
  memory->ProposeCandidates(ids.data(), ids.size(), &mask, 1, 0, &out);
  EXPECT_EQ(out, expected);

  // A blank between a boundary and another blank has no neighbours to ask.
  const Gram lonely = {tokenizer->ClsId(), tokenizer->MaskId(), tokenizer->MaskId(), tokenizer->SepId()};
  const std::vector<int32_t> masks = {1, 2};
  out.clear();
  memory->ProposeCandidates(lonely.data(), lonely.size(), masks.data(), masks.size(), 0, &out);
  EXPECT_TRUE(out.empty());

  // Famous texts and idioms propose the token that completes them.
  Encoding encoding;
  ASSERT_EQ(tokenizer->Encode("掩耳盗[MASK]", &encoding), Status::kOk);
  out.clear();
  memory->ProposeCandidates(encoding.ids.data(), encoding.ids.size(), encoding.mask_positions.data(),
                            encoding.mask_positions.size(), 0, &out);
  EXPECT_NE(std::find(out.begin(), out.end(), Id(*tokenizer, "铃")), out.end());
  EXPECT_NE(std::find(out.begin(), out.end(), Id(*tokenizer, "钟")), out.end());
}

// ---------------------------------------------------------------------------------------------
// Famous texts and idioms: hits and their sources.

struct HitResult {
  MemoryHit hit;
  MemorySource source;
};

// The hit for `token` at the first blank of `text`, and its source.
HitResult HitFor(const Memory& memory, const Tokenizer& tokenizer, const std::string& text, const std::string& token,
                 int32_t min_hit_strength = 3) {
  Encoding encoding;
  EXPECT_EQ(tokenizer.Encode(text, &encoding), Status::kOk);
  EXPECT_FALSE(encoding.mask_positions.empty()) << text;
  const int32_t id = Id(tokenizer, token), other = Id(tokenizer, "天");
  const int32_t candidates[] = {other, id};
  std::vector<CandidateEvidence> out;
  memory.Evidence(encoding.ids.data(), encoding.ids.size(), encoding.mask_positions.data(),
                  encoding.mask_positions.size(), 0, candidates, 2, min_hit_strength, &out);
  EXPECT_EQ(out.size(), 2u);
  if (out.size() != 2) return {};
  EXPECT_EQ(out[0].hit.text, -1) << "天 completes nothing in " << text;
  return {out[1].hit, out[1].hit.text >= 0 ? memory.SourceOf(out[1].hit) : MemorySource{}};
}

TEST(MemorySources, FamousLineGivesItsSentence) {
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  const HitResult r = HitFor(*f.memory, *f.tokenizer, "疑是地[MASK]霜", "上");
  EXPECT_EQ(r.hit.text, 0);
  EXPECT_EQ(r.hit.strength, 4);
  EXPECT_TRUE(r.hit.whole) << "疑是地上霜 is a whole clause";
  EXPECT_EQ(r.source.work, "千家诗");
  EXPECT_EQ(r.source.title, "静夜思");
  EXPECT_EQ(r.source.author, "李白");
  EXPECT_EQ(r.source.text, "床前明月光，疑是地上霜。");

  const HitResult second = HitFor(*f.memory, *f.tokenizer, "低头思故[MASK]。", "乡");
  EXPECT_EQ(second.hit.strength, 5);
  EXPECT_EQ(second.source.text, "举头望明月，低头思故乡。");
}

TEST(MemorySources, IdiomHitIsAnIdiom) {
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  const HitResult r = HitFor(*f.memory, *f.tokenizer, "掩耳盗[MASK]", "铃");
  EXPECT_EQ(r.hit.text, 1);
  EXPECT_EQ(r.hit.strength, 3);
  EXPECT_TRUE(r.hit.whole);
  EXPECT_EQ(r.source.work, "成语");
  EXPECT_EQ(r.source.title, "掩耳盗铃");
  EXPECT_EQ(r.source.author, "");
  EXPECT_EQ(r.source.text, "掩耳盗铃");
  const HitResult chime = HitFor(*f.memory, *f.tokenizer, "掩耳盗[MASK]", "钟");
  EXPECT_EQ(chime.hit.text, 2);
  EXPECT_EQ(chime.source.title, "掩耳盗钟");
}

// An idiom built with the dictionary's reading: the source carries it, and the candidate's own.
TEST(MemorySources, IdiomsCarryTheDictionarysReading) {
  auto tokenizer = MakeTokenizer();
  memory::SourceText idiom;
  idiom.idiom = true;
  idiom.text = "丢三落四";
  idiom.pinyin = "diū sān là sì";  // 落 là: not the table's first reading (luò)
  memory::BuildReport report;
  auto memory = Load(BuildBytes(*tokenizer, SyntheticCorpus(3, 50), {idiom}, ExactOptions(), &report), *tokenizer);
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(report.read_idioms, 1u);
  EXPECT_EQ(report.readings, 1u) << "only 落 differs from its first reading";
  const HitResult r = HitFor(*memory, *tokenizer, "丢三[MASK]四", "落");
  EXPECT_EQ(r.source.title, "丢三落四");
  EXPECT_EQ(r.source.pinyin, "diū sān là sì");
  EXPECT_EQ(r.source.reading, "là");
  EXPECT_EQ(HitFor(*memory, *tokenizer, "[MASK]三落四", "丢").source.reading, "diū");

  // A syllable the table does not know for the character is a slip of the dictionary: the
  // character reads as its first reading; so does an idiom whose syllables do not line up.
  idiom.pinyin = "diū sān kǒu sì";
  memory = Load(BuildBytes(*tokenizer, SyntheticCorpus(3, 50), {idiom}, ExactOptions(), &report), *tokenizer);
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(report.readings, 0u);
  EXPECT_EQ(HitFor(*memory, *tokenizer, "丢三[MASK]四", "落").source.pinyin, "")
      << "no stored reading: the memory has no readings section, so it claims none";
  idiom.pinyin = "diū sān là";
  memory = Load(BuildBytes(*tokenizer, SyntheticCorpus(3, 50), {idiom}, ExactOptions(), &report), *tokenizer);
  EXPECT_EQ(report.read_idioms, 0u);

  // Without the dictionary's reading (an older memory): no pinyin at all.
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  EXPECT_EQ(HitFor(*f.memory, *f.tokenizer, "掩耳盗[MASK]", "铃").source.pinyin, "");
}

TEST(MemorySources, PassagesInsideLongerInputs) {
  // The input goes on with other known characters on both sides: only the stretch through the
  // blank has to agree.
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  const HitResult idiom = HitFor(*f.memory, *f.tokenizer, "天地掩耳盗[MASK]山水", "铃");
  EXPECT_EQ(idiom.hit.text, 1);
  EXPECT_EQ(idiom.hit.strength, 3);
  EXPECT_TRUE(idiom.hit.whole);
  // The poem is the first text: its first unit is unit 0 of the index.
  const HitResult line = HitFor(*f.memory, *f.tokenizer, "山水床前明[MASK]光，天地", "月");
  EXPECT_EQ(line.hit.text, 0);
  EXPECT_EQ(line.hit.strength, 5);
  EXPECT_EQ(line.source.text, "床前明月光，疑是地上霜。");
}

TEST(MemorySources, StrengthThresholdAndWholeClauses) {
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  // "明[MASK]光" is 2 known tokens inside a clause: a hit only when 2 are enough.
  EXPECT_EQ(HitFor(*f.memory, *f.tokenizer, "天明[MASK]光天", "月", 3).hit.text, -1);
  EXPECT_EQ(HitFor(*f.memory, *f.tokenizer, "天明[MASK]光天", "月", 2).hit.strength, 2);
  // "[MASK]耳盗" has two known tokens but is not a whole idiom.
  EXPECT_EQ(HitFor(*f.memory, *f.tokenizer, "[MASK]耳盗", "掩", 3).hit.text, -1);
  // A whole idiom needs only two known tokens, whatever min_hit_strength says.
  const HitResult two = HitFor(*f.memory, *f.tokenizer, "掩耳[MASK][MASK]", "盗", 5);
  EXPECT_EQ(two.hit.text, 1) << "both idioms agree: the lower text number";
  EXPECT_EQ(two.hit.strength, 2);
  EXPECT_TRUE(two.hit.whole);
}

TEST(MemorySources, UnknownCharactersKeepTheirOriginalText) {
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  const HitResult r = HitFor(*f.memory, *f.tokenizer, "山[MASK]花。", "水");
  EXPECT_EQ(r.hit.text, 3);
  EXPECT_EQ(r.source.work, "测试");
  EXPECT_EQ(r.source.title, "未知字");
  EXPECT_EQ(r.source.text, std::string(kOutOfVocab) + "山水花。");
}

TEST(MemorySources, InvalidHitsGiveEmptyOrPartialSources) {
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  for (const int32_t text : {-1, 4, 1 << 30}) {
    const MemorySource s = f.memory->SourceOf({text, 0, 3, true});
    EXPECT_EQ(s.work + s.title + s.author + s.text, "") << text;
  }
  // A unit outside its text (the bindings pass any u32 through): metadata, but no sentence.
  for (const uint32_t unit : {30u, 1000u, 0xFFFFFFF0u}) {
    const MemorySource s = f.memory->SourceOf({0, unit, 3, true});
    EXPECT_EQ(s.title, "静夜思");
    EXPECT_EQ(s.text, "") << unit;
  }
  EXPECT_EQ(f.memory->SourceOf({1, 0xFFFFFFF0u, 3, true}).text, "掩耳盗铃") << "an idiom is its own text";
}

// ---------------------------------------------------------------------------------------------
// Load: info, failures, determinism.

TEST(MemoryLoad, InfoDescribesTheFile) {
  Fixture f;
  ASSERT_NE(f.memory, nullptr);
  const MemoryInfo& info = f.memory->Info();
  EXPECT_EQ(info.version, memory::kVersion);
  EXPECT_EQ(info.max_order, 4u);
  uint64_t kept = 0;
  for (const uint64_t k : f.report.kept) kept += k;
  EXPECT_EQ(info.ngrams, kept);
  EXPECT_EQ(info.ngram_slots, f.report.slots);
  EXPECT_EQ(info.texts, 4u);
  EXPECT_EQ(info.idioms, 2u);
  EXPECT_EQ(info.units, 24u + 1 + 4 + 1 + 4 + 1 + 5) << "texts and separators";
  EXPECT_EQ(info.bytes, f.bytes.size());
  EXPECT_EQ(info.build.front(), '{');
  EXPECT_NE(info.build.find("\"order\":4"), std::string::npos) << info.build;
  // Nothing was pruned: every distinct corpus n-gram of 2..4 tokens is in the table.
  size_t distinct = 0;
  for (const auto& [gram, count] : f.reference.counts()) distinct += gram.size() >= 2;
  EXPECT_EQ(info.ngrams, distinct);
}

TEST(MemoryLoad, RejectsAnotherVocabulary) {
  Fixture f;
  MemoryStatus status = MemoryStatus::kOk;
  const auto variant = MakeTokenizer(/*variant=*/true);
  ASSERT_EQ(variant->VocabSize(), f.tokenizer->VocabSize());
  EXPECT_EQ(Load(f.bytes, *variant, &status), nullptr);
  EXPECT_EQ(status, MemoryStatus::kWrongVocab) << "same size, other tokens";
  std::string error;
  const auto smaller = Tokenizer::FromVocab("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n天\n", {}, &error);
  ASSERT_NE(smaller, nullptr) << error;
  EXPECT_EQ(Load(f.bytes, *smaller, &status), nullptr);
  EXPECT_EQ(status, MemoryStatus::kWrongVocab);
}

TEST(MemoryLoad, RejectsDamagedFiles) {
  Fixture f;
  MemoryStatus status = MemoryStatus::kOk;
  for (const size_t n : {size_t{0}, size_t{20}, f.bytes.size() / 2, f.bytes.size() - 1}) {
    EXPECT_EQ(Load(std::vector<uint8_t>(f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(n)),
                   *f.tokenizer, &status),
              nullptr);
    EXPECT_EQ(status, MemoryStatus::kTruncated) << n;
  }
  std::vector<uint8_t> flipped = f.bytes;
  flipped[flipped.size() / 2] ^= 0x04;  // inside a section
  EXPECT_EQ(Load(flipped, *f.tokenizer, &status), nullptr);
  EXPECT_EQ(status, MemoryStatus::kCorrupt);
  std::vector<uint8_t> magic = f.bytes;
  magic[0] = 'X';
  EXPECT_EQ(Load(magic, *f.tokenizer, &status), nullptr);
  EXPECT_EQ(status, MemoryStatus::kBadMagic);
  std::vector<uint8_t> version = f.bytes;
  version[8] = 9;
  EXPECT_EQ(Load(version, *f.tokenizer, &status), nullptr);
  EXPECT_EQ(status, MemoryStatus::kBadVersion);
}

// Rebuilds the file with one section replaced (or dropped), checksums valid: Load must look
// inside the sections, not only at the CRCs.
std::vector<uint8_t> Replace(const std::vector<uint8_t>& bytes, uint32_t id, const std::vector<uint8_t>* data) {
  memory::Container container;
  std::string error;
  EXPECT_EQ(memory::ParseContainer(bytes.data(), bytes.size(), &container, &error), MemoryStatus::kOk);
  memory::ContainerWriter writer(container.vocab_fingerprint, container.vocab_size);
  for (const memory::Section& section : container.sections) {
    if (section.id != id)
      writer.Add(section.id, std::vector<uint8_t>(section.data, section.data + section.size));
    else if (data != nullptr)
      writer.Add(id, *data);
  }
  return writer.Finish();
}

std::vector<uint8_t> SectionBytes(const std::vector<uint8_t>& bytes, uint32_t id) {
  memory::Container container;
  std::string error;
  EXPECT_EQ(memory::ParseContainer(bytes.data(), bytes.size(), &container, &error), MemoryStatus::kOk);
  const memory::Section* section = container.Find(id);
  return section ? std::vector<uint8_t>(section->data, section->data + section->size) : std::vector<uint8_t>();
}

TEST(MemoryLoad, ChecksSectionContentsBehindValidChecksums) {
  Fixture f;
  MemoryStatus status = MemoryStatus::kOk;
  // Resealed but unchanged: loads (so the cases below fail for their change alone).
  const std::vector<uint8_t> same = SectionBytes(f.bytes, memory::kSectionTexts);
  EXPECT_NE(Load(Replace(f.bytes, memory::kSectionTexts, &same), *f.tokenizer), nullptr);
  // The build info is optional; every other section is required.
  EXPECT_NE(Load(Replace(f.bytes, memory::kSectionBuildInfo, nullptr), *f.tokenizer), nullptr);
  for (const uint32_t id : {memory::kSectionUnigram, memory::kSectionNgrams, memory::kSectionBigrams,
                            memory::kSectionPredecessors, memory::kSectionTexts}) {
    EXPECT_EQ(Load(Replace(f.bytes, id, nullptr), *f.tokenizer, &status), nullptr) << id;
    EXPECT_EQ(status, MemoryStatus::kCorrupt) << id;
  }
  const auto corrupt = [&](uint32_t id, void (*change)(std::vector<uint8_t>*), const char* what) {
    std::vector<uint8_t> section = SectionBytes(f.bytes, id);
    change(&section);
    EXPECT_EQ(Load(Replace(f.bytes, id, &section), *f.tokenizer, &status), nullptr) << what;
    EXPECT_EQ(status, MemoryStatus::kCorrupt) << what;
  };
  corrupt(
      memory::kSectionUnigram, [](std::vector<uint8_t>* s) { s->resize(s->size() - 4); }, "unigram size");
  corrupt(
      memory::kSectionUnigram,
      [](std::vector<uint8_t>* s) {
        const float positive = 0.5f;
        std::memcpy(s->data() + 8, &positive, 4);
      },
      "unigram log p > 0");
  corrupt(
      memory::kSectionUnigram,
      [](std::vector<uint8_t>* s) {
        const float nan = std::nanf("");
        std::memcpy(s->data(), &nan, 4);
      },
      "unigram NaN");
  corrupt(
      memory::kSectionPredecessors,
      [](std::vector<uint8_t>* s) {
        // The last predecessor id (u16, the section's last two bytes before padding) out of range.
        uint32_t vocab = 0, count = 0;
        std::memcpy(&vocab, s->data(), 4);
        std::memcpy(&count, s->data() + 4, 4);
        const size_t at = 8 + 4 * (size_t{vocab} + 1) + 2 * (count - 1);
        const uint16_t bad = 0xFFFF;
        std::memcpy(s->data() + at, &bad, 2);
      },
      "predecessor id");
  corrupt(
      memory::kSectionPredecessors, [](std::vector<uint8_t>* s) { s->resize(8); }, "predecessors truncated");
  corrupt(
      memory::kSectionBigrams, [](std::vector<uint8_t>* s) { s->resize(s->size() / 2); }, "bigrams truncated");
  corrupt(
      memory::kSectionNgrams, [](std::vector<uint8_t>* s) { s->resize(12); }, "n-grams truncated");
  corrupt(
      memory::kSectionTexts, [](std::vector<uint8_t>* s) { s->resize(s->size() - 1); }, "texts truncated");
}

// A split memory (SplitNgrams): the pair answers exactly as the whole file (checked against the
// reference above), the base alone as an order-2 memory of the same corpus (checked against an
// order-2 reference), and parts of different builds or in the wrong place are refused.
struct SplitFixture : Fixture {
  std::vector<uint8_t> base, ngrams;
  SplitFixture() {
    std::string error;
    EXPECT_TRUE(memory::SplitNgrams(bytes.data(), bytes.size(), &base, &ngrams, &error)) << error;
  }
  std::unique_ptr<Memory> LoadPair(std::vector<uint8_t> b, std::vector<uint8_t> n, MemoryStatus* status,
                                   std::string* error) const {
    return Memory::Load(std::move(b), std::move(n), *tokenizer, status, error);
  }
};

TEST(MemorySplit, ThePairAnswersAsTheWholeFile) {
  SplitFixture f;
  MemoryStatus status = MemoryStatus::kOk;
  std::string error;
  const auto pair = f.LoadPair(f.base, f.ngrams, &status, &error);
  ASSERT_NE(pair, nullptr) << error;
  ASSERT_NE(f.memory, nullptr);
  EXPECT_LT(f.base.size() + 0, f.bytes.size());
  EXPECT_EQ(pair->Info().max_order, f.memory->Info().max_order);
  EXPECT_EQ(pair->Info().ngrams, f.memory->Info().ngrams);
  EXPECT_EQ(pair->Info().build, f.memory->Info().build);
  const int32_t vocab = f.tokenizer->VocabSize();
  Gram candidates(static_cast<size_t>(vocab));
  for (int32_t id = 0; id < vocab; ++id) candidates[id] = id;
  size_t compared = 0;
  for (const Query& q : RandomQueries(*f.tokenizer, 23, 40)) {
    for (size_t target = 0; target < q.masks.size(); ++target) {
      std::vector<CandidateEvidence> whole, split;
      f.memory->Evidence(q.ids.data(), q.ids.size(), q.masks.data(), q.masks.size(), target, candidates.data(),
                         candidates.size(), 2, &whole);
      pair->Evidence(q.ids.data(), q.ids.size(), q.masks.data(), q.masks.size(), target, candidates.data(),
                     candidates.size(), 2, &split);
      ASSERT_EQ(whole.size(), split.size());
      for (size_t i = 0; i < whole.size(); ++i) {
        EXPECT_EQ(std::memcmp(whole[i].ngram_gain, split[i].ngram_gain, sizeof whole[i].ngram_gain), 0) << i;
        EXPECT_EQ(whole[i].hit.text, split[i].hit.text);
        ++compared;
      }
      Gram proposed_whole, proposed_split;
      f.memory->ProposeCandidates(q.ids.data(), q.ids.size(), q.masks.data(), q.masks.size(), target, &proposed_whole);
      pair->ProposeCandidates(q.ids.data(), q.ids.size(), q.masks.data(), q.masks.size(), target, &proposed_split);
      EXPECT_EQ(proposed_whole, proposed_split);
    }
  }
  EXPECT_GT(compared, 1000u);
}

TEST(MemorySplit, TheBaseAloneIsABigramMemoryOfTheSameCorpus) {
  SplitFixture f;
  const auto base = Load(f.base, *f.tokenizer);
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(base->Info().max_order, 2u);
  EXPECT_EQ(base->Info().texts, f.memory->Info().texts) << "the famous-text and idiom index is in the base";
  const Reference bigrams{*f.tokenizer, f.lines, 2};
  const int32_t vocab = f.tokenizer->VocabSize();
  Gram candidates(static_cast<size_t>(vocab));
  for (int32_t id = 0; id < vocab; ++id) candidates[id] = id;
  size_t nonzero = 0;
  for (const Query& q : RandomQueries(*f.tokenizer, 5, 30)) {
    const Gram units = bigrams.Units(q.ids, q.masks);
    for (size_t target = 0; target < q.masks.size(); ++target) {
      std::vector<CandidateEvidence> out;
      base->Evidence(q.ids.data(), q.ids.size(), q.masks.data(), q.masks.size(), target, candidates.data(),
                     candidates.size(), 3, &out);
      for (size_t i = 0; i < out.size(); ++i) {
        double gains[9] = {};
        int terms[9] = {};
        bigrams.Gains(units, static_cast<size_t>(q.masks[target]), candidates[i], gains, terms);
        for (size_t n = 3; n <= 8; ++n) EXPECT_EQ(out[i].ngram_gain[n], 0.0f);
        EXPECT_NEAR(out[i].ngram_gain[2], gains[2], kTermTolerance * terms[2] + 1e-3);
        nonzero += terms[2] > 0;
      }
    }
  }
  EXPECT_GT(nonzero, 100u);
}

TEST(MemorySplit, RefusesPartsThatDoNotBelongTogether) {
  SplitFixture f;
  MemoryStatus status = MemoryStatus::kOk;
  std::string error;
  // The n-gram part where the base belongs.
  EXPECT_EQ(Memory::Load(f.ngrams, *f.tokenizer, &status, &error), nullptr);
  EXPECT_EQ(status, MemoryStatus::kCorrupt);
  EXPECT_NE(error.find("second part of a split memory"), std::string::npos) << error;
  // The base twice.
  EXPECT_EQ(f.LoadPair(f.base, f.base, &status, &error), nullptr);
  EXPECT_EQ(status, MemoryStatus::kMismatch);
  EXPECT_NE(error.find("not the n-gram part"), std::string::npos) << error;
  // A part of another build (another corpus).
  const std::vector<uint8_t> other = BuildBytes(*f.tokenizer, SyntheticCorpus(8, 160), FamousTexts(), ExactOptions());
  std::vector<uint8_t> other_base, other_ngrams;
  ASSERT_TRUE(memory::SplitNgrams(other.data(), other.size(), &other_base, &other_ngrams, &error)) << error;
  EXPECT_EQ(f.LoadPair(f.base, other_ngrams, &status, &error), nullptr);
  EXPECT_EQ(status, MemoryStatus::kMismatch);
  EXPECT_NE(error.find("different builds"), std::string::npos) << error;
  // A damaged part: its own checksum says so, named as the n-gram file.
  std::vector<uint8_t> damaged = f.ngrams;
  damaged[damaged.size() / 2] ^= 0x40;  // inside the n-gram section (the build info is small)
  EXPECT_EQ(f.LoadPair(f.base, damaged, &status, &error), nullptr);
  EXPECT_EQ(status, MemoryStatus::kCorrupt);
  EXPECT_EQ(error.rfind("n-gram file: ", 0), 0u) << error;
  EXPECT_EQ(f.LoadPair(f.base, {}, &status, &error), nullptr);
  EXPECT_EQ(status, MemoryStatus::kTruncated);
  // Splitting a base again has nothing to split off.
  std::vector<uint8_t> again_base, again_ngrams;
  EXPECT_FALSE(memory::SplitNgrams(f.base.data(), f.base.size(), &again_base, &again_ngrams, &error));
  EXPECT_NE(error.find("nothing to split off"), std::string::npos) << error;
}

TEST(MemoryBuilder, SameInputsGiveTheSameBytes) {
  const auto tokenizer = MakeTokenizer();
  std::vector<std::string> lines = SyntheticCorpus(5, 120);
  memory::BuildOptions options = ExactOptions();
  options.max_ngrams = 60;  // pruning ties must be broken the same way too
  const std::vector<uint8_t> first = BuildBytes(*tokenizer, lines, FamousTexts(), options);
  EXPECT_EQ(BuildBytes(*tokenizer, lines, FamousTexts(), options), first);
  // The counts do not depend on the order of the corpus lines.
  std::mt19937 rng(1);
  std::shuffle(lines.begin(), lines.end(), rng);
  EXPECT_EQ(BuildBytes(*tokenizer, lines, FamousTexts(), options), first);
}

TEST(MemoryBuilder, RefusesImpossibleOptions) {
  const auto tokenizer = MakeTokenizer();
  for (const size_t order : {size_t{1}, size_t{9}}) {
    memory::BuildOptions options;
    options.order = order;
    memory::MemoryBuilder builder(*tokenizer, options);
    builder.AddLine("天地");
    memory::BuildReport report;
    std::string error;
    EXPECT_TRUE(builder.Finish(&report, &error).empty()) << order;
    EXPECT_FALSE(error.empty());
  }
}

}  // namespace
}  // namespace tiankong
