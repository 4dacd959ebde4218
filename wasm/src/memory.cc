// tiankong::Memory: loads memory.bin (memory_format.h) and answers the decoder's questions about
// one blank: which tokens to consider (ProposeCandidates) and what the corpus says about each
// (Evidence: n-gram windows through the blank, and famous-text / idiom passages).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "memory_format.h"
#include "memory_query.h"
#include "ngram_table.h"
#include "text_index.h"
#include "tiankong/tiankong.h"

namespace tiankong {
namespace {

using memory::kBoundary;
using memory::kWildcard;

// How far around the blank the index compares the input (tokens on each side).
constexpr size_t kIndexWindow = 12;

class MemoryImpl final : public Memory {
 public:
  bool Init(std::vector<uint8_t> bytes, const Tokenizer& tokenizer, MemoryStatus* status, std::string* error);

  const MemoryInfo& Info() const override { return info_; }

  void ProposeCandidates(const int32_t* ids, size_t n_ids, const int32_t* mask_positions, size_t n_masks,
                         size_t target, std::vector<int32_t>* out) const override {
    if (target >= n_masks) return;
    const std::vector<int32_t> units = query_.Units(ids, n_ids, mask_positions, n_masks);
    const size_t p = static_cast<size_t>(mask_positions[target]);
    if (p >= n_ids) return;
    if (p > 0 && units[p - 1] >= 0) AppendList(successor_offsets_, successors_, units[p - 1], out);
    if (p + 1 < n_ids && units[p + 1] >= 0) AppendList(predecessor_offsets_, predecessors_, units[p + 1], out);
    std::vector<memory::IndexHit> hits;
    MatchIndex(units, p, /*min_strength=*/2, &hits);
    for (const memory::IndexHit& hit : hits) out->push_back(hit.token);
  }

  void Evidence(const int32_t* ids, size_t n_ids, const int32_t* mask_positions, size_t n_masks,
                size_t target, const int32_t* candidates, size_t n_candidates, int32_t min_hit_strength,
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
    source.work = index_.Work(hit.text);
    source.title = index_.Title(hit.text);
    source.author = index_.Author(hit.text);
    uint32_t begin = 0, end = 0;
    index_.Sentence(hit.text, hit.unit, &begin, &end);
    for (uint32_t u = begin; u < end; ++u) {
      if (const char* original = index_.UnknownText(u)) {
        source.text += original;
        continue;
      }
      const std::string& token = tokens_[index_.Unit(u)];
      source.text += token.compare(0, 2, "##") == 0 && token.size() > 2 ? token.substr(2) : token;
    }
    return source;
  }

 private:
  void AppendList(const uint32_t* offsets, const uint16_t* values, int32_t id, std::vector<int32_t>* out) const {
    for (uint32_t k = offsets[id]; k < offsets[id + 1]; ++k) out->push_back(values[k]);
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

  bool ParseNeighbours(const memory::Section& section, std::string* error);

  std::vector<uint8_t> bytes_;
  MemoryInfo info_;
  size_t vocab_size_ = 0;
  std::vector<std::string> tokens_;
  memory::QueryUnits query_;
  const float* unigram_ = nullptr;
  memory::NgramTable ngrams_;
  memory::TextIndex index_;
  const uint32_t* successor_offsets_ = nullptr;
  const uint16_t* successors_ = nullptr;
  const uint32_t* predecessor_offsets_ = nullptr;
  const uint16_t* predecessors_ = nullptr;
};

bool MemoryImpl::ParseNeighbours(const memory::Section& section, std::string* error) {
  memory::ByteReader reader(section.data, section.size);
  const uint32_t vocab = reader.U32();
  const uint32_t n_successors = reader.U32();
  const uint32_t n_predecessors = reader.U32();
  successor_offsets_ = static_cast<const uint32_t*>(reader.Array(size_t{vocab} + 1, 4));
  successors_ = static_cast<const uint16_t*>(reader.Array(n_successors, 2));
  predecessor_offsets_ = static_cast<const uint32_t*>(reader.Array(size_t{vocab} + 1, 4));
  predecessors_ = static_cast<const uint16_t*>(reader.Array(n_predecessors, 2));
  bool ok = !reader.failed() && vocab == vocab_size_;
  for (const auto& [offsets, values, count] :
       {std::make_tuple(successor_offsets_, successors_, n_successors),
        std::make_tuple(predecessor_offsets_, predecessors_, n_predecessors)}) {
    for (uint32_t id = 0; ok && id < vocab; ++id) ok = offsets[id] <= offsets[id + 1];
    ok = ok && offsets[0] == 0 && offsets[vocab] == count;
    for (uint32_t k = 0; ok && k < count; ++k) ok = values[k] < vocab;
  }
  if (!ok) *error = "neighbour section is malformed";
  return ok;
}

bool MemoryImpl::Init(std::vector<uint8_t> bytes, const Tokenizer& tokenizer, MemoryStatus* status,
                      std::string* error) {
  bytes_ = std::move(bytes);
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
  const memory::Section* neighbours = container.Find(memory::kSectionNeighbours);
  const memory::Section* texts = container.Find(memory::kSectionTexts);
  if (!unigram || !ngrams || !neighbours || !texts) {
    *error = "a required section is missing";
    return false;
  }
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
  if (!ngrams_.Parse(*ngrams, error) || !ParseNeighbours(*neighbours, error) ||
      !index_.Parse(*texts, vocab_size_, error)) {
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
  info_.bytes = bytes_.size();
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
  if (!memory->Init(std::move(bytes), tokenizer, status, error)) return nullptr;
  return memory;
}

}  // namespace tiankong
