#include "normalizer.h"

#include <algorithm>

#include "unicode_tables.h"

namespace tiankong {
namespace text {
namespace {

using unicode::Flags;

// Canonical ordering (UAX #15): stable sort of each run of non-starters by combining
// class. Only the code points move; spans stay where they are, as in HF, whose
// alignments follow positions rather than characters.
void ReorderCombiningMarks(AlignedChar* begin, AlignedChar* end) {
  for (AlignedChar* run = begin; run < end;) {
    if (!(Flags(run->cp) & unicode::kReorderable)) {
      ++run;
      continue;
    }
    AlignedChar* run_end = run;
    while (run_end < end && (Flags(run_end->cp) & unicode::kReorderable)) ++run_end;
    if (run_end - run > 1) {
      std::vector<char32_t> cps;
      for (AlignedChar* c = run; c < run_end; ++c) cps.push_back(c->cp);
      std::stable_sort(cps.begin(), cps.end(),
                       [](char32_t a, char32_t b) { return unicode::CombiningClass(a) < unicode::CombiningClass(b); });
      for (size_t k = 0; k < cps.size(); ++k) run[k].cp = cps[k];
    }
    run = run_end;
  }
}

// NFD + removal of non-spacing marks over out[from, end).
void StripAccents(std::vector<AlignedChar>* out, size_t from) {
  std::vector<AlignedChar> decomposed;
  decomposed.reserve(out->size() - from);
  char32_t parts[unicode::kMaxDecomposition];
  for (size_t i = from; i < out->size(); ++i) {
    const int n = unicode::Decompose((*out)[i].cp, parts);
    for (int k = 0; k < n; ++k) decomposed.push_back({parts[k], (*out)[i].source});
  }
  ReorderCombiningMarks(decomposed.data(), decomposed.data() + decomposed.size());
  out->resize(from);
  for (const AlignedChar& c : decomposed) {
    if (!(Flags(c.cp) & unicode::kNonspacingMark)) out->push_back(c);
  }
}

// Lowercases out[from, end) in place (expanding where the mapping is longer).
void Lowercase(std::vector<AlignedChar>* out, size_t from) {
  for (size_t i = from; i < out->size(); ++i) {
    if (!(Flags((*out)[i].cp) & unicode::kHasLowercase)) continue;
    char32_t lower[unicode::kMaxLowercase];
    const int n = unicode::Lowercase((*out)[i].cp, lower);
    const Span source = (*out)[i].source;
    (*out)[i].cp = lower[0];
    for (int k = 1; k < n; ++k) out->insert(out->begin() + i + k, AlignedChar{lower[k], source});
    i += n - 1;
  }
}

}  // namespace

void Normalize(const AlignedChar* begin, const AlignedChar* end, const NormalizerOptions& options,
               std::vector<AlignedChar>* out) {
  const size_t from = out->size();
  for (const AlignedChar* c = begin; c < end; ++c) {
    const uint8_t flags = Flags(c->cp);
    if (options.clean_text) {
      if (c->cp == 0 || c->cp == 0xFFFD || (flags & unicode::kControl)) continue;
      if (flags & unicode::kWhitespace) {
        out->push_back({U' ', c->source});
        continue;
      }
    }
    if (options.handle_chinese_chars && (flags & unicode::kChinese)) {
      out->push_back({U' ', c->source});
      out->push_back(*c);
      out->push_back({U' ', c->source});
      continue;
    }
    out->push_back(*c);
  }
  if (options.strip_accents) StripAccents(out, from);
  if (options.lowercase) Lowercase(out, from);
}

}  // namespace text
}  // namespace tiankong
