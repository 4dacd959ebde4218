#include "text_index.h"

#include <algorithm>
#include <cstring>

namespace tiankong {
namespace memory {

namespace {

// Suffix-array entries one Match looks at per side of the blank: enough for any run of two or more
// tokens in ~460 k units, and a bound on the work for a single common character.
constexpr uint32_t kMaxOccurrences = 4096;
// Suffixes are ordered by at most this many units (then by position): windows are shorter.
constexpr size_t kSortDepth = 64;
constexpr size_t kTextFields = 2;
constexpr int32_t kMinWholeStrength = 2;

void SetBit(std::vector<uint8_t>* bits, size_t i) { (*bits)[i >> 3] |= uint8_t(1u << (i & 7)); }

}  // namespace

std::vector<uint32_t> TextBegins(const std::vector<IndexedText>& texts) {
  std::vector<uint32_t> begins;
  uint32_t next = 0;
  for (const IndexedText& text : texts) {
    begins.push_back(next);
    next += static_cast<uint32_t>(text.ids.size()) + 1;
  }
  return begins;
}

std::vector<uint8_t> BuildTextIndex(const std::vector<IndexedText>& texts) {
  size_t total = 0;
  for (const IndexedText& text : texts) total += text.ids.size() + 1;
  if (total >= (1u << 24)) return {};  // positions are stored in 3 bytes
  std::vector<uint16_t> units;
  std::vector<uint32_t> table, meta;
  std::vector<std::pair<uint32_t, uint32_t>> unknown;
  std::string strings(1, '\0');  // offset 0 = ""
  const auto intern = [&strings](const std::string& s) {
    if (s.empty()) return uint32_t{0};
    const auto offset = static_cast<uint32_t>(strings.size());
    strings += s;
    strings.push_back('\0');
    return offset;
  };
  std::vector<uint8_t> clause_flags, sentence_flags;
  for (const IndexedText& text : texts) {
    if (&text != &texts.front()) {  // between every two texts, even empty ones
      units.push_back(kSeparator);
      clause_flags.push_back(1);
      sentence_flags.push_back(1);
    }
    const auto begin = static_cast<uint32_t>(units.size());
    for (size_t i = 0; i < text.ids.size(); ++i) {
      units.push_back(static_cast<uint16_t>(text.ids[i]));
      clause_flags.push_back(i < text.clause_end.size() ? text.clause_end[i] : 0);
      sentence_flags.push_back(i < text.sentence_end.size() ? text.sentence_end[i] : 0);
    }
    for (const auto& [at, original] : text.unknown) unknown.emplace_back(begin + at, intern(original));
    if (text.idiom) {
      table.insert(table.end(), {begin, kIdiom});
    } else {
      table.insert(table.end(), {begin, static_cast<uint32_t>(meta.size() / 3)});
      meta.insert(meta.end(), {intern(text.work), intern(text.title), intern(text.author)});
    }
  }
  std::vector<uint32_t> suffix;
  for (uint32_t i = 0; i < units.size(); ++i) {
    if (units[i] != kSeparator) suffix.push_back(i);
  }
  std::sort(suffix.begin(), suffix.end(), [&units](uint32_t a, uint32_t b) {
    for (size_t k = 0; k < kSortDepth; ++k) {
      const bool a_end = a + k >= units.size(), b_end = b + k >= units.size();
      if (a_end || b_end) {
        if (a_end != b_end) return a_end;
        break;
      }
      if (units[a + k] != units[b + k]) return units[a + k] < units[b + k];
    }
    return a < b;
  });
  std::vector<uint8_t> clause_bits((units.size() + 7) / 8), sentence_bits((units.size() + 7) / 8);
  for (size_t i = 0; i < units.size(); ++i) {
    if (clause_flags[i]) SetBit(&clause_bits, i);
    if (sentence_flags[i]) SetBit(&sentence_bits, i);
  }
  std::vector<uint32_t> unknown_flat;
  for (const auto& [at, offset] : unknown) unknown_flat.insert(unknown_flat.end(), {at, offset});

  ByteWriter out;
  out.U32(static_cast<uint32_t>(texts.size()));
  out.U32(static_cast<uint32_t>(units.size()));
  out.U32(static_cast<uint32_t>(strings.size()));
  out.U32(static_cast<uint32_t>(unknown.size()));
  out.Array(units);
  out.U32(static_cast<uint32_t>(suffix.size()));
  std::vector<uint8_t> packed;  // 3 bytes per position, little-endian (positions < 2^24)
  for (const uint32_t position : suffix)
    packed.insert(packed.end(), {uint8_t(position), uint8_t(position >> 8), uint8_t(position >> 16)});
  out.Array(packed);
  out.Array(clause_bits);
  out.Array(sentence_bits);
  out.Array(table);
  out.U32(static_cast<uint32_t>(meta.size() / 3));
  out.Array(meta);
  out.Array(unknown_flat);
  out.Array(strings.data(), strings.size());
  return out.Take();
}

bool TextIndex::Parse(const Section& section, size_t vocab_size, std::string* error) {
  ByteReader reader(section.data, section.size);
  text_count_ = reader.U32();
  unit_count_ = reader.U32();
  string_bytes_ = reader.U32();
  unknown_count_ = reader.U32();
  units_ = static_cast<const uint16_t*>(reader.Array(unit_count_, 2));
  suffix_count_ = reader.U32();
  suffix_ = static_cast<const uint8_t*>(reader.Array(suffix_count_ * 3, 1));
  clause_end_ = static_cast<const uint8_t*>(reader.Array((unit_count_ + 7) / 8, 1));
  sentence_end_ = static_cast<const uint8_t*>(reader.Array((unit_count_ + 7) / 8, 1));
  texts_ = static_cast<const uint32_t*>(reader.Array(text_count_ * kTextFields, 4));
  meta_count_ = reader.U32();
  meta_ = static_cast<const uint32_t*>(reader.Array(meta_count_ * 3, 4));
  unknown_ = static_cast<const uint32_t*>(reader.Array(unknown_count_ * 2, 4));
  strings_ = static_cast<const char*>(reader.Array(string_bytes_, 1));
  const auto fail = [error](const char* what) {
    *error = std::string("text index section is malformed: ") + what;
    return false;
  };
  if (reader.failed()) return fail("sizes exceed the section");
  if (suffix_count_ > unit_count_) return fail("suffix array longer than the units");
  for (size_t i = 0; i < unit_count_; ++i) {
    if (units_[i] != kSeparator && units_[i] >= vocab_size) return fail("unit outside the vocabulary");
  }
  if (string_bytes_ == 0 || strings_[string_bytes_ - 1] != '\0') return fail("strings not terminated");
  for (size_t t = 0; t < text_count_; ++t) {
    const uint32_t* row = texts_ + t * kTextFields;
    uint32_t begin, end;
    Bounds(static_cast<int32_t>(t), &begin, &end);
    if (begin > end || end > unit_count_ || (t > 0 && begin <= texts_[(t - 1) * kTextFields]))
      return fail("text bounds");
    // Callers index the vocabulary with a text's units (SourceOf, hits): no separator inside.
    if (std::find(units_ + begin, units_ + end, kSeparator) != units_ + end) return fail("separator inside a text");
    if (row[1] != kIdiom && row[1] >= meta_count_) return fail("metadata row");
  }
  for (size_t i = 0; i < meta_count_ * 3; ++i) {
    if (meta_[i] >= string_bytes_) return fail("string offset");
  }
  for (size_t i = 0; i < suffix_count_; ++i) {
    if (SuffixAt(i) >= unit_count_) return fail("suffix position");
  }
  for (size_t i = 0; i < unknown_count_; ++i) {
    if (unknown_[2 * i] >= unit_count_ || unknown_[2 * i + 1] >= string_bytes_ ||
        (i > 0 && unknown_[2 * i] <= unknown_[2 * i - 2])) {
      return fail("unknown-unit table");
    }
  }
  return true;
}

const char* TextIndex::String(uint32_t offset) const { return offset < string_bytes_ ? strings_ + offset : ""; }

const char* TextIndex::MetaString(int32_t text, size_t field) const {
  const uint32_t row = texts_[text * kTextFields + 1];
  return row == kIdiom ? "" : String(meta_[3 * row + field]);
}

const char* TextIndex::Work(int32_t text) const { return MetaString(text, 0); }
const char* TextIndex::Title(int32_t text) const { return MetaString(text, 1); }
const char* TextIndex::Author(int32_t text) const { return MetaString(text, 2); }
bool TextIndex::IsIdiom(int32_t text) const { return texts_[text * kTextFields + 1] == kIdiom; }

void TextIndex::Bounds(int32_t text, uint32_t* begin, uint32_t* end) const {
  *begin = texts_[text * kTextFields];
  // The next text starts after a separator.
  const size_t next = static_cast<size_t>(text) + 1;
  *end = next < text_count_ ? texts_[next * kTextFields] - 1 : static_cast<uint32_t>(unit_count_);
}

const char* TextIndex::UnknownText(uint32_t position) const {
  size_t lo = 0, hi = unknown_count_;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (unknown_[2 * mid] < position)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < unknown_count_ && unknown_[2 * lo] == position ? String(unknown_[2 * lo + 1]) : nullptr;
}

int32_t TextIndex::TextAt(uint32_t position) const {
  size_t lo = 0, hi = text_count_;  // first text with begin > position
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (texts_[mid * kTextFields] <= position)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return -1;
  uint32_t begin, end;
  Bounds(static_cast<int32_t>(lo - 1), &begin, &end);
  return position < end ? static_cast<int32_t>(lo - 1) : -1;
}

void TextIndex::Sentence(int32_t text, uint32_t unit, uint32_t* begin, uint32_t* end) const {
  uint32_t text_begin, text_end;
  Bounds(text, &text_begin, &text_end);
  uint32_t b = unit, e = unit;
  while (b > text_begin && !Bit(sentence_end_, b - 1)) --b;
  while (e < text_end && !Bit(sentence_end_, e)) ++e;
  *begin = b;
  *end = e < text_end ? e + 1 : text_end;
}

void TextIndex::Range(const int32_t* pattern, size_t n, uint32_t* lo_out, uint32_t* hi_out) const {
  // -1: the suffix at `position` sorts before every string starting with the pattern; 0: it
  // starts with the pattern; 1: after.
  const auto compare = [&](uint32_t position) {
    for (size_t k = 0; k < n; ++k) {
      if (position + k >= unit_count_) return -1;
      const int32_t unit = units_[position + k];
      if (unit != pattern[k]) return unit < pattern[k] ? -1 : 1;
    }
    return 0;
  };
  size_t lo = 0, hi = suffix_count_;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (compare(SuffixAt(mid)) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  size_t upper = lo, top = suffix_count_;
  while (upper < top) {
    const size_t mid = (upper + top) / 2;
    if (compare(SuffixAt(mid)) <= 0)
      upper = mid + 1;
    else
      top = mid;
  }
  *lo_out = static_cast<uint32_t>(lo);
  *hi_out = static_cast<uint32_t>(upper);
}

void TextIndex::Match(const int32_t* window, size_t n, size_t target, int32_t min_strength,
                      std::vector<IndexHit>* hits) const {
  if (target >= n || suffix_count_ == 0) return;
  const size_t first_new = hits->size();
  // One alignment: window[0] over unit `base` (may lie before unit 0). `anchor` is the window
  // position whose occurrence produced it; the stretch must reach it.
  const auto visit = [&](int64_t base, size_t anchor) {
    const int64_t blank = base + static_cast<int64_t>(target);
    if (blank < 0 || blank >= static_cast<int64_t>(unit_count_)) return;
    const int32_t text = TextAt(static_cast<uint32_t>(blank));
    if (text < 0) return;
    uint32_t begin, end;
    Bounds(text, &begin, &end);
    // Grow the stretch from the blank while the text agrees (a wildcard agrees with anything).
    int32_t strength = 0;
    size_t a = target, b = target;
    for (size_t i = target; i-- > 0;) {
      const int64_t u = base + static_cast<int64_t>(i);
      if (u < begin || window[i] == kBoundary) break;
      if (window[i] != kWildcard && units_[u] != window[i]) break;
      if (window[i] != kWildcard) ++strength;
      a = i;
    }
    for (size_t i = target + 1; i < n; ++i) {
      const int64_t u = base + static_cast<int64_t>(i);
      if (u >= end || window[i] == kBoundary) break;
      if (window[i] != kWildcard && units_[u] != window[i]) break;
      if (window[i] != kWildcard) ++strength;
      b = i;
    }
    if (anchor < a || anchor > b) return;  // found from the other side (or not a hit)
    const auto first = static_cast<uint32_t>(base + static_cast<int64_t>(a));
    const auto after = static_cast<uint32_t>(base + static_cast<int64_t>(b) + 1);
    const bool starts = first == begin || Bit(clause_end_, first - 1);
    const bool ends = after == end || Bit(clause_end_, after - 1) || Bit(clause_end_, after);
    const bool whole = starts && ends;
    // A whole idiom or clause needs two known tokens (画[MASK][MASK]睛), a partial one min_strength.
    if (strength < min_strength && !(whole && strength >= kMinWholeStrength)) return;
    IndexHit hit{units_[blank], text, static_cast<uint32_t>(blank), strength, whole};
    auto same = std::find_if(hits->begin() + static_cast<std::ptrdiff_t>(first_new), hits->end(),
                             [&hit](const IndexHit& h) { return h.token == hit.token; });
    if (same == hits->end()) {
      hits->push_back(hit);
    } else if (hit.strength > same->strength ||
               (hit.strength == same->strength &&
                (hit.whole > same->whole || (hit.whole == same->whole && hit.text < same->text)))) {
      *same = hit;
    }
  };
  // A hit has at least one known token in its stretch, so the stretch holds the known token
  // nearest the blank on the left or on the right (only wildcards between). Its passages are the
  // occurrences of that token's run of known tokens, or of a part of the run next to the blank when
  // the input differs further out. Each side visits the occurrences of its whole run first, then of
  // ever shorter parts (skipping those a longer part already visited): strongest agreement first,
  // at most kMaxOccurrences suffix-array entries per side. A part that agrees with exactly j < the
  // weakest reportable strength tokens needs the other side too: the right side finds those, so
  // the left one skips them (and so does the right one when there is no left side).
  const int32_t weakest = std::max(1, std::min(min_strength, kMinWholeStrength));
  // Whether a known token follows window[i] (not a known one) over wildcards only, going left or right.
  const auto known_beyond = [&](size_t i, bool leftwards) {
    while (window[i] == kWildcard) {
      if (leftwards ? i == 0 : i + 1 == n) return false;
      i = leftwards ? i - 1 : i + 1;
    }
    return window[i] >= 0;
  };
  size_t left = target;  // left - 1: the nearest non-wildcard on the left
  while (left > 0 && window[left - 1] == kWildcard) --left;
  const bool has_left = left > 0 && window[left - 1] >= 0;
  size_t right = target + 1;  // the nearest non-wildcard on the right
  while (right < n && window[right] == kWildcard) ++right;
  const bool has_right = right < n && window[right] >= 0;
  if (has_left) {
    const size_t last = left - 1;
    size_t first = last;
    while (first > 0 && window[first - 1] >= 0) --first;
    const bool open = first > 0 && known_beyond(first - 1, true);  // the stretch may go on past the run
    uint32_t budget = kMaxOccurrences;
    for (size_t start = first; start <= last && budget > 0; ++start) {  // pattern window[start..last]
      const size_t length = last + 1 - start;
      if ((start > first || !open) && length < static_cast<size_t>(weakest)) break;
      uint32_t lo, hi;
      Range(window + start, length, &lo, &hi);
      for (uint32_t k = lo; k < hi && budget > 0; ++k, --budget) {
        const uint32_t at = SuffixAt(k);
        if (start > first && at > 0 && units_[at - 1] == window[start - 1]) continue;  // seen already
        visit(static_cast<int64_t>(at) - static_cast<int64_t>(start), last);
      }
    }
  }
  if (has_right) {
    size_t stop = right + 1;
    while (stop < n && window[stop] >= 0) ++stop;
    const size_t run_end = stop;
    const bool open = run_end < n && known_beyond(run_end, false);
    uint32_t budget = kMaxOccurrences;
    for (; stop > right && budget > 0; --stop) {  // pattern window[right..stop)
      const size_t length = stop - right;
      if (!has_left && (stop < run_end || !open) && length < static_cast<size_t>(weakest)) break;
      uint32_t lo, hi;
      Range(window + right, length, &lo, &hi);
      for (uint32_t k = lo; k < hi && budget > 0; ++k, --budget) {
        const uint32_t at = SuffixAt(k);
        if (stop < run_end && at + length < unit_count_ && units_[at + length] == window[stop]) continue;
        visit(static_cast<int64_t>(at) - static_cast<int64_t>(right), right);
      }
    }
  }
  std::stable_sort(hits->begin() + static_cast<std::ptrdiff_t>(first_new), hits->end(),
                   [](const IndexHit& x, const IndexHit& y) {
                     return x.strength > y.strength || (x.strength == y.strength && x.whole > y.whole);
                   });
}

}  // namespace memory
}  // namespace tiankong
