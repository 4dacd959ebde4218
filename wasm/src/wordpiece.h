// WordPiece: greedy longest-match-first segmentation of one word into vocab pieces,
// continuation pieces spelled "##piece", exactly as BERT / Hugging Face WordPiece.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "utf8.h"
#include "vocab.h"

namespace tiankong {
namespace text {

// A piece of a word: its vocab id and the word's chars [begin, end) it covers.
struct Piece {
  int32_t id;
  size_t begin, end;
};

class WordPiece {
 public:
  // Indexes every token of `vocab` in a code-point trie; tokens starting with "##" are
  // reachable as continuations. `unk_id` is what a word that cannot be segmented becomes.
  WordPiece(const Vocab& vocab, int32_t unk_id, size_t max_input_chars_per_word);

  // Appends the pieces of `word` (length chars) to *out: at each position the longest
  // vocab entry that matches (with "##" after the first piece). If some position has no
  // match, or the word is longer than max_input_chars_per_word chars, the whole word is
  // one unk piece instead (HF semantics: no partial [UNK]). An empty word adds nothing.
  void Tokenize(const AlignedChar* word, size_t length, std::vector<Piece>* out) const;

 private:
  static constexpr int32_t kNoNode = -1;
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};

  int32_t AddNode();
  int32_t Child(int32_t node, char32_t cp) const;
  int32_t AddChild(int32_t node, char32_t cp);
  void Rehash(size_t capacity);
  size_t Slot(uint64_t key) const;

  // Trie nodes: node 0 is the root; token_of_node_[n] is the id of the token spelled by
  // the path to n, or -1. Edges live in one open-addressing hash table keyed by
  // (parent node, code point): one probe sequence per character, no per-node maps.
  std::vector<int32_t> token_of_node_;
  std::vector<uint64_t> edge_keys_;
  std::vector<int32_t> edge_children_;
  size_t edge_count_ = 0;
  int hash_shift_ = 64;
  int32_t continuation_root_ = kNoNode;  // the node reached by "##"
  int32_t unk_id_;
  size_t max_input_chars_per_word_;
};

}  // namespace text
}  // namespace tiankong
