// tiankong::Memory: loads memory.bin (memory_format.h) and answers the decoder's questions about
// one blank: which tokens to consider (ProposeCandidates) and what the corpus says about each
// (Evidence: n-gram windows through the blank, and famous-text / idiom passages).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "memory_format.h"
#include "memory_query.h"
#include "ngram_table.h"
#include "pinyin.h"
#include "text_index.h"
#include "text_readings.h"
#include "tiankong/tiankong.h"
#include "utf8.h"

namespace tiankong {
namespace {

using memory::kBoundary;
using memory::kWildcard;

// How far around the blank the index compares the input (tokens on each side).
constexpr size_t kIndexWindow = 12;
// Successors of the left neighbour proposed as candidates (the most likely ones; <= kOwnBestPool).
constexpr size_t kProposedSuccessors = 48;
// The memory's own top guesses proposed besides (AppendOwnBest).
constexpr size_t kOwnBest = 10;
// How many of the left neighbour's likeliest successors AppendOwnBest scores: a common character
// has thousands, and scoring them all cost 0.78 ms per blank in Chromium (p95 3.3 ms) against
// 0.49 ms (p95 1.0) for 256 (both beside a training run; 0.34 ms on a quiet machine,
// bench/results/memory.json), which keeps almost all of the dev-split gain.
constexpr size_t kOwnBestPool = 256;

class MemoryImpl final : public Memory {
 public:
  // `ngram_bytes` empty: one file (whole, or a split memory's base alone).
  bool Init(std::vector<uint8_t> bytes, std::vector<uint8_t> ngram_bytes, const Tokenizer& tokenizer,
            MemoryStatus* status, std::string* error);

  const MemoryInfo& Info() const override { return info_; }
  const float* UnigramLogProbs() const override { return unigram_; }

  void ProposeCandidates(const int32_t* ids, size_t n_ids, const int32_t* mask_positions, size_t n_masks, size_t target,
                         std::vector<int32_t>* out) const override {
    if (target >= n_masks) return;
    const std::vector<int32_t> units = query_.Units(ids, n_ids, mask_positions, n_masks);
    const size_t p = static_cast<size_t>(mask_positions[target]);
    if (p >= n_ids) return;
    // The neighbours' lists, ranked once: the first kProposedSuccessors successors are proposed as
    // they are, and all of `pool` is what AppendOwnBest scores.
    std::vector<int32_t> pool;
    if (p > 0 && units[p - 1] >= 0) AppendSuccessors(units[p - 1], kOwnBestPool, &pool);
    out->insert(out->end(), pool.begin(),
                pool.begin() + static_cast<std::ptrdiff_t>(std::min(pool.size(), kProposedSuccessors)));
    if (p + 1 < n_ids && units[p + 1] >= 0) {
      const uint16_t* begin = predecessors_ + predecessor_offsets_[units[p + 1]];
      const uint16_t* end = predecessors_ + predecessor_offsets_[units[p + 1] + 1];
      out->insert(out->end(), begin, end);
      pool.insert(pool.end(), begin, end);
    }
    std::vector<memory::IndexHit> hits;
    MatchIndex(units, p, /*min_strength=*/2, &hits);
    for (const memory::IndexHit& hit : hits) out->push_back(hit.token);
    AppendOwnBest(units, p, pool, out);
  }

  void Evidence(const int32_t* ids, size_t n_ids, const int32_t* mask_positions, size_t n_masks, size_t target,
                const int32_t* candidates, size_t n_candidates, int32_t min_hit_strength,
                std::vector<CandidateEvidence>* out) const override {
    out->clear();
    if (target >= n_masks) return;
    const size_t p = static_cast<size_t>(mask_positions[target]);
    if (p >= n_ids) return;
    std::vector<int32_t> units = query_.Units(ids, n_ids, mask_positions, n_masks);
    std::vector<memory::IndexHit> hits;
    MatchIndex(units, p, std::max(min_hit_strength, 1), &hits);
    const memory::BlankScorer scorer(ngrams_, unigram_, units, p);
    for (size_t i = 0; i < n_candidates; ++i) {
      const int32_t id = candidates[i];
      CandidateEvidence evidence;
      evidence.id = id;
      if (id < 0 || static_cast<size_t>(id) >= vocab_size_) {
        out->push_back(evidence);
        continue;
      }
      evidence.unigram = unigram_[id];
      scorer.Gains(id, evidence.ngram_gain);
      for (const memory::IndexHit& hit : hits) {
        if (hit.token == id) {
          evidence.hit = {hit.text, hit.unit, hit.strength, hit.whole};
          break;
        }
      }
      out->push_back(evidence);
    }
  }

  MemorySource SourceOf(const MemoryHit& hit) const override {
    MemorySource source;
    if (hit.text < 0 || static_cast<size_t>(hit.text) >= index_.text_count()) return source;
    uint32_t begin = 0, end = 0;
    if (index_.IsIdiom(hit.text)) {
      index_.Bounds(hit.text, &begin, &end);
      source.work = "成语";
      source.title = source.text = Text(begin, end);
      if (!readings_.empty()) {
        for (uint32_t u = begin; u < end; ++u) {
          const std::string reading = ReadingOf(u);
          if (reading.empty()) continue;
          if (!source.pinyin.empty()) source.pinyin += ' ';
          source.pinyin += reading;
          if (u == hit.unit) source.reading = reading;
        }
      }
      return source;
    }
    source.work = index_.Work(hit.text);
    source.title = index_.Title(hit.text);
    source.author = index_.Author(hit.text);
    index_.Bounds(hit.text, &begin, &end);
    if (hit.unit < begin || hit.unit >= end) return source;  // not a unit of this text: no sentence
    index_.Sentence(hit.text, hit.unit, &begin, &end);
    source.text = Text(begin, end);
    return source;
  }

 private:
  // The reading of index unit `u` with tone marks: the dictionary's where the memory stores one,
  // else its character's first; "" for a unit that is not one character with a reading.
  std::string ReadingOf(uint32_t u) const {
    pinyin::Reading reading;
    if (const char* stored = readings_.At(u); stored != nullptr && pinyin::Parse(stored, &reading))
      return pinyin::Format(reading);
    std::vector<text::AlignedChar> chars;
    size_t error_offset = 0;
    const std::string& token = tokens_[index_.Unit(u)];
    if (!text::DecodeUtf8(token, &chars, &error_offset) || chars.size() != 1) return "";
    const std::vector<pinyin::Reading> known = pinyin::ReadingsOf(chars[0].cp);
    return known.empty() ? "" : pinyin::Format(known[0]);
  }

  // The text of index units [begin, end).
  std::string Text(uint32_t begin, uint32_t end) const {
    std::string text;
    for (uint32_t u = begin; u < end; ++u) {
      if (const char* original = index_.UnknownText(u)) {
        text += original;
        continue;
      }
      const std::string& token = tokens_[index_.Unit(u)];
      text += token.compare(0, 2, "##") == 0 && token.size() > 2 ? token.substr(2) : token;
    }
    return text;
  }

  // The memory's own best guesses for the blank: the kOwnBest tokens of `pool` (the kOwnBestPool
  // likeliest successors of the left neighbour and the stored predecessors of the right one) with
  // the highest n-gram score (unigram + every window's gain, as the memory alone ranks them). Any token with
  // n-gram evidence through the blank follows its left neighbour or precedes its right one (counts
  // shrink with length), so this finds tokens whose longer matched context makes up for a weak
  // bigram, which the model's top candidates and the top successors alone miss.
  void AppendOwnBest(const std::vector<int32_t>& units, size_t p, const std::vector<int32_t>& pool,
                     std::vector<int32_t>* out) const {
    if (pool.empty()) return;
    const memory::BlankScorer scorer(ngrams_, unigram_, units, p);
    std::vector<std::pair<float, int32_t>> scored;
    scored.reserve(pool.size());
    for (const int32_t id : pool) {
      CandidateEvidence evidence;  // only its gain slots: the same layout Evidence fills
      scorer.Gains(id, evidence.ngram_gain);
      float score = unigram_[id];
      for (const float gain : evidence.ngram_gain) score += gain;
      scored.emplace_back(-score, id);  // ascending: best first, ties by id
    }
    const size_t keep = std::min(scored.size(), kOwnBest);
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end());
    for (size_t k = 0; k < keep; ++k) out->push_back(scored[k].second);
  }

  // The `limit` most likely successors of `id` (largest log P(next | id) first, ties by id).
  void AppendSuccessors(int32_t id, size_t limit, std::vector<int32_t>* out) const {
    const uint16_t* next = nullptr;
    const uint8_t* values = nullptr;
    const size_t count = ngrams_.Successors(id, &next, &values);
    std::vector<std::pair<uint8_t, uint16_t>> ranked(count);
    for (size_t k = 0; k < count; ++k) ranked[k] = {values[k], next[k]};  // smaller code = likelier
    const size_t keep = std::min(count, limit);
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end());
    for (size_t k = 0; k < keep; ++k) out->push_back(ranked[k].second);
  }

  void MatchIndex(const std::vector<int32_t>& units, size_t p, int32_t min_strength,
                  std::vector<memory::IndexHit>* hits) const {
    const size_t begin = p > kIndexWindow ? p - kIndexWindow : 0;
    const size_t end = std::min(units.size(), p + kIndexWindow + 1);
    std::vector<int32_t> window(units.begin() + static_cast<std::ptrdiff_t>(begin),
                                units.begin() + static_cast<std::ptrdiff_t>(end));
    window[p - begin] = kWildcard;
    index_.Match(window.data(), window.size(), p - begin, min_strength, hits);
  }

  bool ParsePredecessors(const memory::Section& section, std::string* error);

  // Reads the n-gram part of a split memory into *ngrams: same vocabulary and build as `base`.
  bool ParseNgramPart(const memory::Container& base, memory::Section* ngrams, MemoryStatus* status, std::string* error);

  std::vector<uint8_t> bytes_;
  std::vector<uint8_t> ngram_bytes_;
  MemoryInfo info_;
  size_t vocab_size_ = 0;
  std::vector<std::string> tokens_;
  memory::QueryUnits query_;
  const float* unigram_ = nullptr;
  memory::NgramTable ngrams_;
  memory::TextIndex index_;
  memory::TextReadings readings_;  // empty for a memory built without the dictionary's readings
  const uint32_t* predecessor_offsets_ = nullptr;
  const uint16_t* predecessors_ = nullptr;
};

bool MemoryImpl::ParsePredecessors(const memory::Section& section, std::string* error) {
  memory::ByteReader reader(section.data, section.size);
  const uint32_t vocab = reader.U32();
  const uint32_t count = reader.U32();
  predecessor_offsets_ = static_cast<const uint32_t*>(reader.Array(size_t{vocab} + 1, 4));
  predecessors_ = static_cast<const uint16_t*>(reader.Array(count, 2));
  bool ok =
      !reader.failed() && vocab == vocab_size_ && predecessor_offsets_[0] == 0 && predecessor_offsets_[vocab] == count;
  for (uint32_t id = 0; ok && id < vocab; ++id) ok = predecessor_offsets_[id] <= predecessor_offsets_[id + 1];
  for (uint32_t k = 0; ok && k < count; ++k) ok = predecessors_[k] < vocab;
  if (!ok) *error = "predecessor section is malformed";
  return ok;
}

bool MemoryImpl::ParseNgramPart(const memory::Container& base, memory::Section* ngrams, MemoryStatus* status,
                                std::string* error) {
  memory::Container part;
  *status = memory::ParseContainer(ngram_bytes_.data(), ngram_bytes_.size(), &part, error);
  if (*status != MemoryStatus::kOk) {
    *error = "n-gram file: " + *error;
    return false;
  }
  *status = MemoryStatus::kMismatch;
  const memory::Section* info = base.Find(memory::kSectionBuildInfo);
  const memory::Section* part_info = part.Find(memory::kSectionBuildInfo);
  const memory::Section* found = part.Find(memory::kSectionNgrams);
  if (found == nullptr || part.Find(memory::kSectionUnigram) != nullptr) {
    *error = "the n-gram file is not the n-gram part of a split memory (scripts/build-memory writes both parts)";
    return false;
  }
  if (part.vocab_size != base.vocab_size || part.vocab_fingerprint != base.vocab_fingerprint || info == nullptr ||
      part_info == nullptr || info->size != part_info->size ||
      std::memcmp(info->data, part_info->data, info->size) != 0) {
    *error = "the n-gram file and memory.bin come from different builds; build them together with scripts/build-memory";
    return false;
  }
  *ngrams = *found;  // points into ngram_bytes_, which lives as long as this memory
  return true;
}

bool MemoryImpl::Init(std::vector<uint8_t> bytes, std::vector<uint8_t> ngram_bytes, const Tokenizer& tokenizer,
                      MemoryStatus* status, std::string* error) {
  bytes_ = std::move(bytes);
  ngram_bytes_ = std::move(ngram_bytes);
  memory::Container container;
  *status = memory::ParseContainer(bytes_.data(), bytes_.size(), &container, error);
  if (*status != MemoryStatus::kOk) return false;
  vocab_size_ = static_cast<size_t>(tokenizer.VocabSize());
  if (container.vocab_size != vocab_size_ || container.vocab_fingerprint != memory::VocabFingerprint(tokenizer)) {
    *status = MemoryStatus::kWrongVocab;
    *error = "built for another vocabulary (" + std::to_string(container.vocab_size) + " tokens) than the model's (" +
             std::to_string(vocab_size_) + " tokens); rebuild it for this model with scripts/build-memory";
    return false;
  }
  *status = MemoryStatus::kCorrupt;
  const memory::Section* unigram = container.Find(memory::kSectionUnigram);
  const memory::Section* ngrams = container.Find(memory::kSectionNgrams);
  const memory::Section* bigrams = container.Find(memory::kSectionBigrams);
  const memory::Section* predecessors = container.Find(memory::kSectionPredecessors);
  const memory::Section* texts = container.Find(memory::kSectionTexts);
  if (ngrams && !unigram && !bigrams && !predecessors && !texts) {
    *error =
        "it holds only the longer n-grams: it is the second part of a split memory (memory-ngrams.bin); load "
        "it beside its memory.bin";
    return false;
  }
  if (!unigram || !ngrams || !bigrams || !predecessors || !texts) {
    *error = "a required section is missing";
    return false;
  }
  memory::Section split_ngrams;
  if (!ngram_bytes_.empty()) {
    if (!ParseNgramPart(container, &split_ngrams, status, error)) return false;
    ngrams = &split_ngrams;
  }
  *status = MemoryStatus::kCorrupt;
  if (unigram->size != vocab_size_ * sizeof(float)) {
    *error = "unigram section has the wrong size";
    return false;
  }
  unigram_ = reinterpret_cast<const float*>(unigram->data);
  for (size_t id = 0; id < vocab_size_; ++id) {
    if (!(unigram_[id] <= 0.0f && unigram_[id] >= -100.0f)) {
      *error = "unigram section holds an impossible log-probability";
      return false;
    }
  }
  if (!ngrams_.Parse(*bigrams, *ngrams, vocab_size_, error) || !ParsePredecessors(*predecessors, error) ||
      !index_.Parse(*texts, vocab_size_, error)) {
    return false;
  }
  if (const memory::Section* readings = container.Find(memory::kSectionTextReadings);
      readings != nullptr && !readings_.Parse(*readings, index_.unit_count(), error)) {
    return false;
  }
  tokens_.reserve(vocab_size_);
  for (size_t id = 0; id < vocab_size_; ++id) tokens_.push_back(tokenizer.IdToToken(static_cast<int32_t>(id)));
  query_ = memory::QueryUnits(tokenizer);
  info_.version = container.version;
  info_.max_order = static_cast<uint32_t>(ngrams_.max_order());
  info_.ngrams = ngrams_.entries();
  info_.ngram_slots = ngrams_.slots();
  info_.texts = index_.text_count();
  for (size_t t = 0; t < index_.text_count(); ++t) info_.idioms += index_.IsIdiom(static_cast<int32_t>(t));
  info_.units = index_.unit_count();
  info_.bytes = bytes_.size() + ngram_bytes_.size();
  if (const memory::Section* build = container.Find(memory::kSectionBuildInfo)) {
    info_.build.assign(reinterpret_cast<const char*>(build->data), build->size);
  }
  *status = MemoryStatus::kOk;
  return true;
}

}  // namespace

std::unique_ptr<Memory> Memory::Load(std::vector<uint8_t> bytes, const Tokenizer& tokenizer, MemoryStatus* status,
                                     std::string* error) {
  auto memory = std::make_unique<MemoryImpl>();
  if (!memory->Init(std::move(bytes), {}, tokenizer, status, error)) return nullptr;
  return memory;
}

std::unique_ptr<Memory> Memory::Load(std::vector<uint8_t> base, std::vector<uint8_t> ngrams, const Tokenizer& tokenizer,
                                     MemoryStatus* status, std::string* error) {
  if (ngrams.empty()) {
    *status = MemoryStatus::kTruncated;
    *error = "the n-gram file is empty";
    return nullptr;
  }
  auto memory = std::make_unique<MemoryImpl>();
  if (!memory->Init(std::move(base), std::move(ngrams), tokenizer, status, error)) return nullptr;
  return memory;
}

}  // namespace tiankong
