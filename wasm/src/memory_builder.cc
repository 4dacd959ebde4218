#include "memory_builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "memory_format.h"
#include "memory_query.h"
#include "ngram_table.h"
#include "text_index.h"
#include "text_readings.h"

namespace tiankong {
namespace memory {

namespace {

// Punctuation that ends a clause / a sentence in the indexed texts (full- and half-width).
constexpr std::string_view kClauseEnds[] = {"，", "。", "！", "？", "；", "：", "、", ",", ".", "!", "?", ";", ":"};
constexpr std::string_view kSentenceEnds[] = {"。", "！", "？", "；", ".", "!", "?", ";"};

template <size_t N>
bool OneOf(const std::string& token, const std::string_view (&set)[N]) {
  return std::find(std::begin(set), std::end(set), token) != std::end(set);
}

// Distinct n-grams of one order: sorted keys, how often each occurs (raw: decides eligibility;
// weighted by the line weights: gives probabilities) and one position where it occurs.
struct Counted {
  std::vector<uint64_t> keys;
  std::vector<uint32_t> counts;
  std::vector<double> weighted;
  std::vector<uint32_t> positions;

  // The weighted count of `key` (0 when unseen).
  double Count(uint64_t key) const {
    const auto it = std::lower_bound(keys.begin(), keys.end(), key);
    return it != keys.end() && *it == key ? weighted[static_cast<size_t>(it - keys.begin())] : 0;
  }
};

Counted CountOrder(const std::vector<int32_t>& stream, const std::vector<uint8_t>& weights, size_t n) {
  std::vector<std::pair<uint64_t, uint32_t>> occurrences;
  size_t run = 0;  // known units ending at i
  for (size_t i = 0; i < stream.size(); ++i) {
    run = stream[i] >= 0 ? run + 1 : 0;
    if (run >= n) {
      const size_t start = i + 1 - n;
      occurrences.emplace_back(NgramKey(&stream[start], n), static_cast<uint32_t>(start));
    }
  }
  std::sort(occurrences.begin(), occurrences.end());
  Counted out;
  for (size_t i = 0; i < occurrences.size();) {
    size_t j = i;
    while (j < occurrences.size() && occurrences[j].first == occurrences[i].first) ++j;
    double weight = 0;
    for (size_t k = i; k < j; ++k) weight += weights[occurrences[k].second];
    out.keys.push_back(occurrences[i].first);
    out.counts.push_back(static_cast<uint32_t>(j - i));
    out.weighted.push_back(weight);
    out.positions.push_back(occurrences[i].second);
    i = j;
  }
  return out;
}

// The original UTF-8 bytes of the UTF-16 span [start, end) of `text`.
std::string Utf16Slice(std::string_view text, uint32_t start, uint32_t end) {
  size_t units = 0, begin_byte = text.size(), end_byte = text.size();
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const size_t len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
    if (units == start && begin_byte == text.size()) begin_byte = i;
    if (units == end) {
      end_byte = i;
      break;
    }
    units += len == 4 ? 2 : 1;
    i += len;
  }
  return begin_byte < end_byte ? std::string(text.substr(begin_byte, end_byte - begin_byte)) : std::string();
}

std::string JsonArray(const std::vector<uint64_t>& values, size_t from) {
  std::string out = "[";
  for (size_t i = from; i < values.size(); ++i) out += (i > from ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

}  // namespace

MemoryBuilder::MemoryBuilder(const Tokenizer& tokenizer, const BuildOptions& options)
    : tokenizer_(tokenizer), options_(options), units_(tokenizer) {}

void MemoryBuilder::AddLine(std::string_view line, uint8_t weight) {
  ++lines_;
  Encoding encoding;
  if (tokenizer_.Encode(line, &encoding) != Status::kOk) {
    ++invalid_lines_;
    return;
  }
  for (const int32_t id : encoding.ids) stream_.push_back(units_.IsCorpusBoundary(id) ? kBoundary : id);
  if (stream_.empty() || stream_.back() != kBoundary) stream_.push_back(kBoundary);
  weights_.resize(stream_.size(), weight == 0 ? 1 : weight);
}

void MemoryBuilder::AddText(const SourceText& text) { texts_.push_back(text); }

std::vector<uint8_t> MemoryBuilder::Finish(BuildReport* report, std::string* error) {
  const size_t order = options_.order;
  const auto vocab = static_cast<size_t>(tokenizer_.VocabSize());
  if (order < 2 || order > kMaxOrder) {
    *error = "order must be 2.." + std::to_string(kMaxOrder);
    return {};
  }
  if (vocab >= kSeparator) {
    *error = "vocabulary of " + std::to_string(vocab) + " tokens: the memory stores ids in 16 bits (< 65535)";
    return {};
  }
  *report = BuildReport();
  report->lines = lines_;
  report->distinct.assign(order + 1, 0);
  report->eligible.assign(order + 1, 0);
  report->kept.assign(order + 1, 0);

  // Unigrams.
  std::vector<double> unigram_counts(vocab, 0.0);
  double weighted_tokens = 0;
  for (size_t i = 0; i < stream_.size(); ++i) {
    if (stream_[i] >= 0) {
      unigram_counts[stream_[i]] += weights_[i];
      weighted_tokens += weights_[i];
      ++report->tokens;
    }
  }
  const double total = weighted_tokens + 0.5 * static_cast<double>(vocab);
  std::vector<float> unigram(vocab);
  for (size_t id = 0; id < vocab; ++id) unigram[id] = static_cast<float>(std::log((unigram_counts[id] + 0.5) / total));

  // Exact counts per order.
  std::vector<Counted> counted(order + 1);
  for (size_t n = 2; n <= order; ++n) {
    counted[n] = CountOrder(stream_, weights_, n);
    report->distinct[n] = counted[n].keys.size();
  }
  report->distinct[1] = static_cast<uint64_t>(
      std::count_if(unigram_counts.begin(), unigram_counts.end(), [](double c) { return c > 0; }));
  const auto count_of = [&](const int32_t* ids, size_t n) -> double {
    return n == 1 ? unigram_counts[ids[0]] : counted[n].Count(NgramKey(ids, n));
  };
  const double log_alpha = std::log(static_cast<double>(options_.alpha));

  // Rank the eligible n-grams by how much they move the backed-off estimate.
  struct Entry {
    double score;
    uint64_t key;
    uint32_t position;  // where it occurs in stream_
    float log_p;
    uint8_t order;
  };
  std::vector<Entry> entries;
  std::unordered_map<uint64_t, uint32_t> entry_of;  // key -> index in entries
  for (size_t n = 2; n <= order; ++n) {
    const Counted& c = counted[n];
    for (size_t i = 0; i < c.keys.size(); ++i) {
      if (c.counts[i] < options_.min_count) continue;
      ++report->eligible[n];
      const int32_t* gram = &stream_[c.positions[i]];
      const double log_p = std::log(c.weighted[i] / count_of(gram, n - 1));
      const double lower = n == 2 ? std::log(unigram_counts[gram[1]] / weighted_tokens)
                                  : std::log(count_of(gram + 1, n - 1) / count_of(gram + 1, n - 2));
      entries.push_back({std::pow(c.weighted[i], options_.count_exponent) * std::fabs(log_p - (log_alpha + lower)),
                         c.keys[i], c.positions[i], static_cast<float>(log_p), static_cast<uint8_t>(n)});
    }
  }
  std::vector<uint32_t> ranked(entries.size());
  std::iota(ranked.begin(), ranked.end(), 0u);
  std::sort(ranked.begin(), ranked.end(), [&entries](uint32_t a, uint32_t b) {
    return entries[a].score > entries[b].score ||
           (entries[a].score == entries[b].score && entries[a].key < entries[b].key);
  });
  entry_of.reserve(entries.size());
  for (uint32_t i = 0; i < entries.size(); ++i) entry_of.emplace(entries[i].key, i);
  // Keep the best, each with its suffix chain (the reader verifies hashed hits against it; a
  // suffix is seen at least as often, so it is always eligible).
  std::vector<uint8_t> kept(entries.size(), 0);
  size_t kept_count = 0;
  for (const uint32_t best : ranked) {
    if (kept_count >= options_.max_ngrams) break;
    for (uint32_t i = best; !kept[i];) {
      kept[i] = 1;
      ++kept_count;
      const Entry& e = entries[i];
      if (e.order == 2) break;
      i = entry_of.at(NgramKey(&stream_[e.position + 1], e.order - 1));
    }
  }
  NgramTableBuilder table(vocab, order, static_cast<float>(log_alpha));
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!kept[i]) continue;
    const Entry& e = entries[i];
    if (e.order == 2)
      table.AddBigram(stream_[e.position], stream_[e.position + 1], e.log_p);
    else
      table.AddLonger(e.key, e.log_p);
    ++report->kept[e.order];
  }
  size_t slots = 0;
  std::vector<uint8_t> bigram_section = table.FinishBigrams();
  std::vector<uint8_t> ngram_section = table.FinishHashed(options_.load_factor, &slots);
  report->slots = slots;

  // The most frequent predecessors of each token (all eligible bigrams).
  std::vector<std::vector<std::pair<double, uint16_t>>> previous(vocab);
  for (size_t i = 0; i < counted[2].keys.size(); ++i) {
    if (counted[2].counts[i] < options_.min_count) continue;
    const int32_t* gram = &stream_[counted[2].positions[i]];
    previous[gram[1]].emplace_back(counted[2].weighted[i], static_cast<uint16_t>(gram[0]));
  }
  std::vector<uint32_t> predecessor_offsets{0};
  std::vector<uint16_t> predecessors;
  for (auto& list : previous) {
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    for (size_t k = 0; k < list.size() && k < options_.neighbours; ++k) predecessors.push_back(list[k].second);
    predecessor_offsets.push_back(static_cast<uint32_t>(predecessors.size()));
  }
  ByteWriter predecessor_section;
  predecessor_section.U32(static_cast<uint32_t>(vocab));
  predecessor_section.U32(static_cast<uint32_t>(predecessors.size()));
  predecessor_section.Array(predecessor_offsets);
  predecessor_section.Array(predecessors);

  // The text index.
  std::vector<IndexedText> indexed;
  for (const SourceText& source : texts_) {
    Encoding encoding;
    if (tokenizer_.Encode(source.text, &encoding) != Status::kOk) continue;
    IndexedText text;
    std::vector<std::string> pieces;  // each id's original text, to line up with the reading
    for (size_t i = 0; i < encoding.ids.size(); ++i) {
      const int32_t id = encoding.ids[i];
      if (id == tokenizer_.ClsId() || id == tokenizer_.SepId()) continue;
      if (!source.pinyin.empty())
        pieces.push_back(Utf16Slice(source.text, encoding.offsets[i].start, encoding.offsets[i].end));
      const std::string& token = tokenizer_.IdToToken(id);
      if (id == tokenizer_.UnkId()) {
        text.unknown.emplace_back(static_cast<uint32_t>(text.ids.size()),
                                  Utf16Slice(source.text, encoding.offsets[i].start, encoding.offsets[i].end));
      }
      text.ids.push_back(id);
      text.clause_end.push_back(OneOf(token, kClauseEnds));
      text.sentence_end.push_back(OneOf(token, kSentenceEnds));
    }
    if (text.ids.empty()) continue;
    if (!source.pinyin.empty()) {
      bool aligned = false;
      text.readings = DictionaryReadings(pieces, source.pinyin, &aligned);
      report->read_idioms += aligned;
      for (const std::string& reading : text.readings) report->readings += !reading.empty();
    }
    text.work = source.work;
    text.title = source.title;
    text.author = source.author;
    text.idiom = source.idiom;
    report->idioms += source.idiom;
    report->units += text.ids.size();
    indexed.push_back(std::move(text));
  }
  report->texts = indexed.size();

  std::string info =
      "{\"format\":" + std::to_string(kVersion) + ",\"order\":" + std::to_string(order) +
      ",\"min_count\":" + std::to_string(options_.min_count) + ",\"alpha\":" + std::to_string(options_.alpha) +
      ",\"max_ngrams\":" + std::to_string(options_.max_ngrams) + ",\"corpus\":{\"lines\":" + std::to_string(lines_) +
      ",\"invalid_lines\":" + std::to_string(invalid_lines_) + ",\"tokens\":" + std::to_string(report->tokens) + "}" +
      ",\"ngrams\":{\"distinct\":" + JsonArray(report->distinct, 1) +
      ",\"eligible\":" + JsonArray(report->eligible, 2) + ",\"kept\":" + JsonArray(report->kept, 2) +
      ",\"slots\":" + std::to_string(slots) + "}" + ",\"texts\":{\"total\":" + std::to_string(report->texts) +
      ",\"idioms\":" + std::to_string(report->idioms) + ",\"units\":" + std::to_string(report->units) +
      (report->read_idioms > 0 ? ",\"with_reading\":" + std::to_string(report->read_idioms) +
                                     ",\"readings\":" + std::to_string(report->readings)
                               : std::string()) +
      "}";
  if (!options_.description.empty()) {
    info += ",\"description\":";
    info += options_.description;
  }
  info += "}";

  ContainerWriter writer(VocabFingerprint(tokenizer_), static_cast<uint32_t>(vocab));
  writer.Add(kSectionBuildInfo, std::vector<uint8_t>(info.begin(), info.end()));
  ByteWriter unigram_bytes;
  unigram_bytes.Array(unigram);
  writer.Add(kSectionUnigram, unigram_bytes.Take());
  writer.Add(kSectionBigrams, std::move(bigram_section));
  writer.Add(kSectionNgrams, std::move(ngram_section));
  writer.Add(kSectionPredecessors, predecessor_section.Take());
  std::vector<uint8_t> text_section = BuildTextIndex(indexed);
  if (text_section.empty()) {
    *error = "the famous texts and idioms hold " + std::to_string(report->units) +
             " tokens; the index takes fewer than 2^24";
    return {};
  }
  writer.Add(kSectionTexts, std::move(text_section));
  if (report->readings > 0) writer.Add(kSectionTextReadings, BuildTextReadings(indexed));
  return writer.Finish();
}

bool SplitNgrams(const uint8_t* bytes, size_t n, std::vector<uint8_t>* base, std::vector<uint8_t>* ngrams,
                 std::string* error) {
  Container container;
  if (ParseContainer(bytes, n, &container, error) != MemoryStatus::kOk) return false;
  const Section* hashed = container.Find(kSectionNgrams);
  const Section* info = container.Find(kSectionBuildInfo);
  if (hashed == nullptr || info == nullptr || container.Find(kSectionUnigram) == nullptr) {
    *error = "not a whole memory (it needs its build info, unigram and n-gram sections)";
    return false;
  }
  ByteReader header(hashed->data, hashed->size);
  const uint32_t order = header.U32();
  header.U32();  // slots
  const uint32_t entries = header.U32();
  header.U32();  // max_probe
  const float backoff = header.F32();
  if (header.failed() || order <= 2 || entries == 0) {
    *error = "its n-gram section holds no n-grams longer than bigrams: nothing to split off";
    return false;
  }
  ContainerWriter base_writer(container.vocab_fingerprint, container.vocab_size);
  ContainerWriter ngram_writer(container.vocab_fingerprint, container.vocab_size);
  ngram_writer.Add(kSectionBuildInfo, std::vector<uint8_t>(info->data, info->data + info->size));
  ngram_writer.Add(kSectionNgrams, std::vector<uint8_t>(hashed->data, hashed->data + hashed->size));
  for (const Section& section : container.sections) {
    base_writer.Add(section.id, section.id == kSectionNgrams
                                    ? BigramOnlyNgramSection(backoff)
                                    : std::vector<uint8_t>(section.data, section.data + section.size));
  }
  *base = base_writer.Finish();
  *ngrams = ngram_writer.Finish();
  return true;
}

}  // namespace memory
}  // namespace tiankong
