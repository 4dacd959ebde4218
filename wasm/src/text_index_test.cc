#include "text_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace tiankong {
namespace memory {
namespace {

constexpr size_t kVocab = 12;

Section SectionOf(const std::vector<uint8_t>& bytes) { return Section{kSectionTexts, bytes.data(), bytes.size()}; }

IndexedText Text(std::vector<int32_t> ids, std::vector<uint8_t> clause_end = {},
                 std::vector<uint8_t> sentence_end = {}) {
  IndexedText text;
  text.ids = std::move(ids);
  text.clause_end = std::move(clause_end);
  text.sentence_end = std::move(sentence_end);
  text.clause_end.resize(text.ids.size(), 0);
  text.sentence_end.resize(text.ids.size(), 0);
  return text;
}

// The texts laid out as the header describes them: back to back, one kSeparator between two.
struct Layout {
  std::vector<int32_t> units;        // kSeparator (as 0xFFFF) between texts
  std::vector<uint8_t> clause;       // per unit
  std::vector<uint32_t> begin, end;  // per text
};

Layout LayOut(const std::vector<IndexedText>& texts) {
  Layout layout;
  for (const IndexedText& text : texts) {
    if (!layout.begin.empty()) {
      layout.units.push_back(kSeparator);
      layout.clause.push_back(1);
    }
    layout.begin.push_back(static_cast<uint32_t>(layout.units.size()));
    layout.units.insert(layout.units.end(), text.ids.begin(), text.ids.end());
    layout.clause.insert(layout.clause.end(), text.clause_end.begin(), text.clause_end.end());
    layout.end.push_back(static_cast<uint32_t>(layout.units.size()));
  }
  return layout;
}

struct Index {
  std::vector<uint8_t> bytes;
  TextIndex index;
  explicit Index(const std::vector<IndexedText>& texts) : bytes(BuildTextIndex(texts)) {
    std::string error;
    EXPECT_TRUE(index.Parse(SectionOf(bytes), kVocab, &error)) << error;
  }
};

// ---------------------------------------------------------------------------------------------
// Range: suffix-array ranges against a brute-force substring count.

TEST(TextIndex, RangeCountsEveryOccurrence) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<IndexedText> texts;
    const size_t count = 1 + rng() % 5;
    for (size_t t = 0; t < count; ++t) {
      std::vector<int32_t> ids(rng() % 30);                              // empty texts too
      for (int32_t& id : ids) id = 5 + static_cast<int32_t>(rng() % 3);  // tiny alphabet: many repeats
      texts.push_back(Text(ids));
    }
    const Layout layout = LayOut(texts);
    Index index(texts);
    ASSERT_EQ(index.index.text_count(), texts.size());
    ASSERT_EQ(index.index.unit_count(), layout.units.size());
    for (size_t u = 0; u < layout.units.size(); ++u)
      ASSERT_EQ(index.index.Unit(static_cast<uint32_t>(u)), layout.units[u]);
    for (size_t t = 0; t < texts.size(); ++t) {
      uint32_t begin = 0, end = 0;
      index.index.Bounds(static_cast<int32_t>(t), &begin, &end);
      EXPECT_EQ(begin, layout.begin[t]);
      EXPECT_EQ(end, layout.end[t]);
    }
    // Every pattern of length 1..4 over {4..8} (4 and 8 never occur).
    uint32_t previous_hi = 0;
    for (size_t n = 1; n <= 4; ++n) {
      std::vector<int32_t> pattern(n, 4);
      previous_hi = 0;
      for (;;) {
        size_t expected = 0;
        for (size_t start = 0; start + n <= layout.units.size(); ++start) {
          expected +=
              std::equal(pattern.begin(), pattern.end(), layout.units.begin() + static_cast<std::ptrdiff_t>(start));
        }
        uint32_t lo = 0, hi = 0;
        index.index.Range(pattern.data(), n, &lo, &hi);
        ASSERT_LE(lo, hi);
        EXPECT_EQ(hi - lo, expected) << "trial " << trial << " n " << n;
        // Patterns enumerated in increasing order get ranges in increasing order.
        EXPECT_GE(lo, previous_hi);
        if (hi > lo) previous_hi = hi;
        size_t k = n;  // next pattern (odometer over 4..8)
        while (k > 0 && pattern[k - 1] == 8) pattern[--k] = 4;
        if (k == 0) break;
        ++pattern[k - 1];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Match against a brute-force reference: every text position is tried as the blank.

struct RefHit {
  int32_t token, text;
  uint32_t unit;
  int32_t strength;
  bool whole;
};

// All hits, before the per-token choice.
std::vector<RefHit> AllAlignments(const std::vector<IndexedText>& texts, const std::vector<int32_t>& window,
                                  size_t target, int32_t min_strength) {
  const Layout layout = LayOut(texts);
  std::vector<RefHit> out;
  for (size_t t = 0; t < texts.size(); ++t) {
    const int64_t begin = layout.begin[t], end = layout.end[t];
    for (int64_t blank = begin; blank < end; ++blank) {
      const int64_t base = blank - static_cast<int64_t>(target);  // unit under window[0]; may be < 0
      const auto agrees = [&](size_t i) {  // window[i] may join the stretch: in the text, no boundary
        const int64_t u = base + static_cast<int64_t>(i);
        return u >= begin && u < end && window[i] != kBoundary &&
               (window[i] == kWildcard || window[i] == layout.units[static_cast<size_t>(u)]);
      };
      int32_t strength = 0;
      size_t a = target, b = target;
      while (a > 0 && agrees(a - 1)) strength += window[--a] >= 0;
      while (b + 1 < window.size() && agrees(b + 1)) strength += window[++b] >= 0;
      const int64_t first = base + static_cast<int64_t>(a), last = base + static_cast<int64_t>(b);
      const bool starts = first == begin || layout.clause[static_cast<size_t>(first - 1)];
      const bool ends =
          last + 1 == end || layout.clause[static_cast<size_t>(last)] || layout.clause[static_cast<size_t>(last + 1)];
      const bool whole = starts && ends;
      if (strength >= 1 && (strength >= min_strength || (whole && strength >= 2))) {  // never of none
        out.push_back({layout.units[static_cast<size_t>(blank)], static_cast<int32_t>(t), static_cast<uint32_t>(blank),
                       strength, whole});
      }
    }
  }
  return out;
}

// Per token: the best by (strength, whole, lowest text); any unit that achieves it is fine.
struct Best {
  RefHit hit;
  std::vector<uint32_t> units;
};

std::map<int32_t, Best> BestPerToken(const std::vector<RefHit>& all) {
  std::map<int32_t, Best> best;
  const auto key = [](const RefHit& h) { return std::make_tuple(h.strength, h.whole, -h.text); };
  for (const RefHit& hit : all) {
    auto it = best.find(hit.token);
    if (it == best.end() || key(hit) > key(it->second.hit)) {
      best[hit.token] = {hit, {hit.unit}};
    } else if (key(hit) == key(it->second.hit)) {
      it->second.units.push_back(hit.unit);
    }
  }
  return best;
}

std::string Describe(const std::vector<int32_t>& window, size_t target) {
  std::string s;
  for (size_t i = 0; i < window.size(); ++i) {
    s += i == target ? "_" : window[i] == kWildcard ? "?" : window[i] == kBoundary ? "|" : std::to_string(window[i]);
    s += ' ';
  }
  return s;
}

void ExpectMatchesReference(const Index& index, const std::vector<IndexedText>& texts,
                            const std::vector<int32_t>& window, size_t target, int32_t min_strength) {
  SCOPED_TRACE("window " + Describe(window, target) + " min_strength " + std::to_string(min_strength));
  const std::map<int32_t, Best> expected = BestPerToken(AllAlignments(texts, window, target, min_strength));
  std::vector<IndexHit> hits = {{99, 99, 99, 99, true}};  // Match appends: earlier entries stay
  index.index.Match(window.data(), window.size(), target, min_strength, &hits);
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].token, 99);
  hits.erase(hits.begin());
  ASSERT_EQ(hits.size(), expected.size());
  for (size_t i = 0; i < hits.size(); ++i) {
    const IndexHit& hit = hits[i];
    if (i > 0) {  // sorted by strength, then whole
      EXPECT_TRUE(std::make_pair(hits[i - 1].strength, hits[i - 1].whole) >= std::make_pair(hit.strength, hit.whole));
    }
    const auto it = expected.find(hit.token);
    ASSERT_NE(it, expected.end()) << "unexpected token " << hit.token;
    EXPECT_EQ(hit.text, it->second.hit.text) << "token " << hit.token;
    EXPECT_EQ(hit.strength, it->second.hit.strength) << "token " << hit.token;
    EXPECT_EQ(hit.whole, it->second.hit.whole) << "token " << hit.token;
    EXPECT_NE(std::find(it->second.units.begin(), it->second.units.end(), hit.unit), it->second.units.end())
        << "token " << hit.token << " unit " << hit.unit;
  }
}

TEST(TextIndex, MatchAgreesWithBruteForceOnRandomTexts) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<IndexedText> texts;
    const size_t count = 1 + rng() % 4;
    for (size_t t = 0; t < count; ++t) {
      const size_t n = 1 + rng() % 20;
      std::vector<int32_t> ids(n);
      std::vector<uint8_t> clause(n);
      for (size_t i = 0; i < n; ++i) {
        ids[i] = 5 + static_cast<int32_t>(rng() % 3);
        clause[i] = rng() % 5 == 0;
      }
      texts.push_back(Text(ids, clause));
    }
    Index index(texts);
    const Layout layout = LayOut(texts);
    for (int query = 0; query < 20; ++query) {
      // A window cut from the texts (so hits exist), edited: other tokens, blanks, boundaries.
      const size_t n = 1 + rng() % 13;
      const size_t start = rng() % layout.units.size();
      std::vector<int32_t> window(n);
      for (size_t i = 0; i < n; ++i) {
        const size_t u = start + i;
        window[i] = u < layout.units.size() && layout.units[u] != kSeparator ? layout.units[u] : kBoundary;
        const unsigned r = rng() % 12;
        if (r == 0)
          window[i] = kWildcard;
        else if (r == 1)
          window[i] = kBoundary;
        else if (r == 2)
          window[i] = 5 + static_cast<int32_t>(rng() % 4);  // 8 never occurs
      }
      const size_t target = rng() % n;
      window[target] = kWildcard;
      ExpectMatchesReference(index, texts, window, target, static_cast<int32_t>(rng() % 6) - 1);
    }
  }
}

TEST(TextIndex, MatchFindsPassagesAtTheVeryStartOfTheIndex) {
  // The first text begins at unit 0; a window that starts before it (at a boundary) must still
  // align there, as it does for any later text.
  const std::vector<IndexedText> texts = {Text({5, 6, 7, 8}), Text({9, 10})};
  Index index(texts);
  const std::vector<int32_t> window = {kBoundary, 5, 6, kWildcard, 8, kBoundary};
  std::vector<IndexHit> hits;
  index.index.Match(window.data(), window.size(), 3, 3, &hits);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].token, 7);
  EXPECT_EQ(hits[0].text, 0);
  EXPECT_EQ(hits[0].unit, 2u);
  EXPECT_EQ(hits[0].strength, 3);
  EXPECT_TRUE(hits[0].whole);
  ExpectMatchesReference(index, texts, window, 3, 3);
}

TEST(TextIndex, MatchStrengthRules) {
  // Clause ends after units 2 and 5 of the first text: "5 6 7, 8 9 10, 11".
  const std::vector<IndexedText> texts = {Text({5, 6, 7, 8, 9, 10, 11}, {0, 0, 1, 0, 0, 1, 0})};
  Index index(texts);
  const auto hits_for = [&](std::vector<int32_t> window, size_t target, int32_t min_strength) {
    std::vector<IndexHit> hits;
    index.index.Match(window.data(), window.size(), target, min_strength, &hits);
    return hits;
  };
  // "8 _ 10" covers the whole middle clause: 2 known tokens are enough when it is whole...
  auto hits = hits_for({kBoundary, 8, kWildcard, 10, kBoundary}, 2, 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].token, 9);
  EXPECT_EQ(hits[0].strength, 2);
  EXPECT_TRUE(hits[0].whole);
  // ...but a partial clause needs min_strength: "6 _ 8" starts inside the first clause.
  hits = hits_for({kBoundary, 6, kWildcard, 8, kBoundary}, 2, 2);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].token, 7);
  EXPECT_FALSE(hits[0].whole);
  EXPECT_TRUE(hits_for({kBoundary, 6, kWildcard, 8, kBoundary}, 2, 3).empty());
  // A single known token never makes a whole hit: "_ 6" would be whole only with 2 tokens.
  EXPECT_EQ(hits_for({kBoundary, kWildcard, 6, 7, kBoundary}, 1, 3).size(), 1u);
  EXPECT_TRUE(hits_for({kBoundary, kWildcard, 6, kBoundary}, 1, 3).empty());
  // Wildcards agree with anything and count for nothing.
  hits = hits_for({5, kWildcard, kWildcard, kWildcard, 9}, 2, 2);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].token, 7);
  EXPECT_EQ(hits[0].strength, 2);
  // A target outside the window, or a window of nothing known, finds nothing.
  EXPECT_TRUE(hits_for({5, kWildcard}, 2, 1).empty());
  EXPECT_TRUE(hits_for({kWildcard, kWildcard, kBoundary}, 0, 1).empty());
}

TEST(TextIndex, MatchPrefersStrongerThenWholeThenEarlierTexts) {
  const std::vector<IndexedText> texts = {
      Text({5, 6, 7}),         // text 0: 5 6 [7]
      Text({9, 5, 6, 7, 10}),  // text 1: 9 5 6 [7] 10 (one more agreeing token)
      Text({5, 6, 8}),         // text 2: 5 6 [8]
      Text({5, 6, 8}),         // text 3: same as text 2: text 2 wins the tie
  };
  Index index(texts);
  const std::vector<int32_t> window = {9, 5, 6, kWildcard, 11};
  std::vector<IndexHit> hits;
  index.index.Match(window.data(), window.size(), 3, 2, &hits);
  ASSERT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits[0].token, 7);
  EXPECT_EQ(hits[0].text, 1);
  EXPECT_EQ(hits[0].strength, 3);
  EXPECT_EQ(hits[1].token, 8);
  EXPECT_EQ(hits[1].text, 2);
  EXPECT_EQ(hits[1].strength, 2);
  ExpectMatchesReference(index, texts, window, 3, 2);
}

// ---------------------------------------------------------------------------------------------
// Sentences, metadata, idioms and [UNK] originals.

TEST(TextIndex, SentenceBoundsStopAtSentenceEndsAndTextEdges) {
  // "5 6 7. 8 9! 10" then "11 5 6." : sentence ends after units 2 and 4 of text 0, and 2 of text 1.
  const std::vector<IndexedText> texts = {Text({5, 6, 7, 8, 9, 10}, {}, {0, 0, 1, 0, 1, 0}),
                                          Text({11, 5, 6}, {}, {0, 0, 1})};
  Index index(texts);
  const std::vector<std::tuple<int32_t, uint32_t, uint32_t, uint32_t>> cases = {
      // text, unit, begin, end
      {0, 0, 0, 3}, {0, 1, 0, 3},  {0, 2, 0, 3},  {0, 3, 3, 5},  {0, 4, 3, 5},
      {0, 5, 5, 6}, {1, 7, 7, 10}, {1, 8, 7, 10}, {1, 9, 7, 10},
  };
  for (const auto& [text, unit, begin, end] : cases) {
    uint32_t b = 0, e = 0;
    index.index.Sentence(text, unit, &b, &e);
    EXPECT_EQ(b, begin) << "text " << text << " unit " << unit;
    EXPECT_EQ(e, end) << "text " << text << " unit " << unit;
  }
}

TEST(TextIndex, MetadataIdiomsAndUnknownOriginals) {
  IndexedText poem = Text({5, 6, 1, 7});  // id 1 stands for [UNK] here
  poem.work = "唐诗三百首";
  poem.title = "静夜思";
  poem.author = "李白";
  poem.unknown = {{2, "𠀀"}};
  IndexedText idiom = Text({8, 9, 10, 11});
  idiom.idiom = true;
  idiom.work = "ignored";  // idioms carry no metadata row
  IndexedText anonymous = Text({5, 1, 1});
  anonymous.work = "诗经";
  anonymous.unknown = {{1, "a"}, {2, "bc"}};
  Index index({poem, idiom, anonymous});
  const TextIndex& ix = index.index;
  ASSERT_EQ(ix.text_count(), 3u);
  EXPECT_FALSE(ix.IsIdiom(0));
  EXPECT_TRUE(ix.IsIdiom(1));
  EXPECT_FALSE(ix.IsIdiom(2));
  EXPECT_STREQ(ix.Work(0), "唐诗三百首");
  EXPECT_STREQ(ix.Title(0), "静夜思");
  EXPECT_STREQ(ix.Author(0), "李白");
  EXPECT_STREQ(ix.Work(1), "");
  EXPECT_STREQ(ix.Title(1), "");
  EXPECT_STREQ(ix.Author(1), "");
  EXPECT_STREQ(ix.Work(2), "诗经");
  EXPECT_STREQ(ix.Title(2), "");
  EXPECT_STREQ(ix.Author(2), "");
  EXPECT_STREQ(ix.UnknownText(2), "𠀀");
  EXPECT_EQ(ix.UnknownText(0), nullptr);
  EXPECT_EQ(ix.UnknownText(3), nullptr);
  // Text 2 starts at 4 + 1 + 4 + 1 = 10.
  EXPECT_STREQ(ix.UnknownText(11), "a");
  EXPECT_STREQ(ix.UnknownText(12), "bc");
  EXPECT_EQ(ix.UnknownText(10), nullptr);
  EXPECT_EQ(ix.UnknownText(1000), nullptr);
}

TEST(TextIndex, EmptyIndex) {
  Index index({});
  EXPECT_EQ(index.index.text_count(), 0u);
  EXPECT_EQ(index.index.unit_count(), 0u);
  const std::vector<int32_t> window = {5, kWildcard, 6};
  std::vector<IndexHit> hits;
  index.index.Match(window.data(), window.size(), 1, 1, &hits);
  EXPECT_TRUE(hits.empty());
  uint32_t lo = 1, hi = 1;
  index.index.Range(window.data(), 1, &lo, &hi);
  EXPECT_EQ(lo, 0u);
  EXPECT_EQ(hi, 0u);
}

// ---------------------------------------------------------------------------------------------
// Parse: the section's documented fields, serialised independently, then corrupted one at a time.

struct TextParts {
  uint32_t text_count = 0, unit_count = 0, string_bytes = 0, unknown_count = 0;
  std::vector<uint16_t> units;
  uint32_t suffix_count = 0;
  std::vector<uint8_t> suffix;  // 3 bytes per entry
  std::vector<uint8_t> clause_bits, sentence_bits;
  std::vector<uint32_t> texts;  // begin, metadata row
  uint32_t meta_count = 0;
  std::vector<uint32_t> meta;     // work, title, author
  std::vector<uint32_t> unknown;  // position, string offset
  std::string strings;

  std::vector<uint8_t> Bytes() const {
    ByteWriter out;
    out.U32(text_count);
    out.U32(unit_count);
    out.U32(string_bytes);
    out.U32(unknown_count);
    out.Array(units);
    out.U32(suffix_count);
    out.Array(suffix);
    out.Array(clause_bits);
    out.Array(sentence_bits);
    out.Array(texts);
    out.U32(meta_count);
    out.Array(meta);
    out.Array(unknown);
    out.Array(strings.data(), strings.size());
    return out.Take();
  }
};

// Two texts: "5 6 7" (with an [UNK] original at unit 1, metadata "w"/"t"/"a") and the idiom "8 9".
std::vector<IndexedText> PartsTexts() {
  IndexedText poem = Text({5, 6, 7}, {0, 1, 0}, {0, 0, 1});
  poem.work = "w";
  poem.title = "t";
  poem.author = "a";
  poem.unknown = {{1, "u"}};
  IndexedText idiom = Text({8, 9});
  idiom.idiom = true;
  return {poem, idiom};
}

TextParts ValidParts() {
  TextParts p;
  p.text_count = 2;
  p.unit_count = 6;  // 5 6 7 | 8 9
  p.units = {5, 6, 7, kSeparator, 8, 9};
  // Suffixes in unit order (ties by position): 5(0) 6(1) 7(2) 8(4) 9(5).
  p.suffix_count = 5;
  p.suffix = {0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 5, 0, 0};
  p.clause_bits = {0b00001010};    // unit 1 and the separator
  p.sentence_bits = {0b00001100};  // unit 2 and the separator
  p.texts = {0, 0, 4, kIdiom};
  p.strings = std::string("\0u\0w\0t\0a\0", 9);
  p.string_bytes = 9;
  p.meta_count = 1;
  p.meta = {3, 5, 7};
  p.unknown_count = 1;
  p.unknown = {1, 1};
  return p;
}

bool Parses(const TextParts& parts) {
  const std::vector<uint8_t> built = parts.Bytes();
  const std::vector<uint8_t> bytes(built);  // exact size: under ASan a read past the section is reported
  TextIndex index;
  std::string error;
  const bool ok = index.Parse(SectionOf(bytes), kVocab, &error);
  if (!ok) {
    EXPECT_FALSE(error.empty());
  }
  return ok;
}

TEST(TextIndex, SectionLayoutIsTheDocumentedOne) {
  EXPECT_EQ(ValidParts().Bytes(), BuildTextIndex(PartsTexts()));
  EXPECT_TRUE(Parses(ValidParts()));
}

TEST(TextIndex, ParseRejectsCorruptedSections) {
  struct Case {
    const char* what;
    void (*corrupt)(TextParts*);
  };
  const Case cases[] = {
      {"unit outside the vocabulary", [](TextParts* p) { p->units[1] = kVocab; }},
      {"separator inside a text", [](TextParts* p) { p->units[1] = kSeparator; }},
      {"texts out of order", [](TextParts* p) { p->texts[2] = 0; }},
      {"text beyond the units", [](TextParts* p) { p->texts[2] = 8; }},
      {"first text beyond the units", [](TextParts* p) { p->texts[0] = 7, p->texts[2] = 9; }},
      {"metadata row out of range", [](TextParts* p) { p->texts[1] = 1; }},
      {"work offset out of range", [](TextParts* p) { p->meta[0] = 9; }},
      {"author offset out of range", [](TextParts* p) { p->meta[2] = 0xFFFFFFFFu; }},
      {"strings unterminated", [](TextParts* p) { p->strings.back() = 'x'; }},
      {"no strings at all", [](TextParts* p) { p->strings.clear(), p->string_bytes = 0; }},
      {"suffix position past the units", [](TextParts* p) { p->suffix[12] = 6; }},
      {"suffix position with a high byte", [](TextParts* p) { p->suffix[14] = 1; }},
      {"more suffixes than units",
       [](TextParts* p) {
         p->suffix_count = 7;
         p->suffix.insert(p->suffix.end(), {0, 0, 0, 1, 0, 0});
       }},
      {"unknown position past the units", [](TextParts* p) { p->unknown[0] = 6; }},
      {"unknown string out of range", [](TextParts* p) { p->unknown[1] = 9; }},
      {"unknown positions not increasing",
       [](TextParts* p) {
         p->unknown_count = 2;
         p->unknown = {1, 1, 1, 1};
       }},
      {"unit count larger than the section", [](TextParts* p) { p->unit_count = 0xFFFFFFFFu; }},
      {"text count larger than the section", [](TextParts* p) { p->text_count = 0x7FFFFFFFu; }},
      {"meta count larger than the section", [](TextParts* p) { p->meta_count = 0x40000000u; }},
      {"string bytes larger than the section", [](TextParts* p) { p->string_bytes = 100; }},
  };
  for (const Case& c : cases) {
    TextParts parts = ValidParts();
    c.corrupt(&parts);
    EXPECT_FALSE(Parses(parts)) << c.what;
  }
  const std::vector<uint8_t> bytes = ValidParts().Bytes();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    TextIndex index;
    std::string error;
    EXPECT_FALSE(index.Parse(SectionOf(cut), kVocab, &error)) << "truncated to " << n;
  }
}

}  // namespace
}  // namespace memory
}  // namespace tiankong
