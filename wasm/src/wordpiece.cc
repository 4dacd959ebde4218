#include "wordpiece.h"

namespace tiankong {
namespace text {
namespace {

constexpr int32_t kRoot = 0;

uint64_t EdgeKey(int32_t node, char32_t cp) {
  return (static_cast<uint64_t>(node) << 21) | cp;  // code points fit in 21 bits
}

}  // namespace

WordPiece::WordPiece(const Vocab& vocab, int32_t unk_id, size_t max_input_chars_per_word)
    : unk_id_(unk_id), max_input_chars_per_word_(max_input_chars_per_word) {
  Rehash(1 << 16);
  AddNode();  // root
  std::vector<AlignedChar> chars;
  size_t unused_error_offset;
  for (int32_t id = 0; id < vocab.size(); ++id) {
    chars.clear();
    DecodeUtf8(vocab.Token(id), &chars, &unused_error_offset);  // Vocab::Parse validated it
    int32_t node = kRoot;
    for (const AlignedChar& c : chars) node = AddChild(node, c.cp);
    token_of_node_[node] = id;
  }
  continuation_root_ = Child(kRoot, U'#');
  if (continuation_root_ != kNoNode) continuation_root_ = Child(continuation_root_, U'#');
}

void WordPiece::Tokenize(const AlignedChar* word, size_t length, std::vector<Piece>* out) const {
  if (length == 0) return;
  const size_t first_piece = out->size();
  if (length <= max_input_chars_per_word_) {
    for (size_t start = 0; start < length;) {
      int32_t node = start == 0 ? kRoot : continuation_root_;
      int32_t best_id = -1;
      size_t best_end = start;
      for (size_t i = start; i < length && node != kNoNode; ++i) {
        node = Child(node, word[i].cp);
        if (node != kNoNode && token_of_node_[node] >= 0) {
          best_id = token_of_node_[node];
          best_end = i + 1;
        }
      }
      if (best_id < 0) break;
      out->push_back({best_id, start, best_end});
      start = best_end;
      if (start == length) return;
    }
  }
  out->resize(first_piece);
  out->push_back({unk_id_, 0, length});
}

size_t WordPiece::Slot(uint64_t key) const {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> hash_shift_);  // Fibonacci hashing
}

int32_t WordPiece::Child(int32_t node, char32_t cp) const {
  const uint64_t key = EdgeKey(node, cp);
  const size_t mask = edge_keys_.size() - 1;
  for (size_t slot = Slot(key);; slot = (slot + 1) & mask) {
    if (edge_keys_[slot] == key) return edge_children_[slot];
    if (edge_keys_[slot] == kEmptyKey) return kNoNode;
  }
}

int32_t WordPiece::AddNode() {
  token_of_node_.push_back(-1);
  return static_cast<int32_t>(token_of_node_.size() - 1);
}

int32_t WordPiece::AddChild(int32_t node, char32_t cp) {
  const int32_t existing = Child(node, cp);
  if (existing != kNoNode) return existing;
  if (2 * (edge_count_ + 1) > edge_keys_.size()) Rehash(2 * edge_keys_.size());  // load <= 1/2
  const uint64_t key = EdgeKey(node, cp);
  const size_t mask = edge_keys_.size() - 1;
  size_t slot = Slot(key);
  while (edge_keys_[slot] != kEmptyKey) slot = (slot + 1) & mask;
  const int32_t child = AddNode();
  edge_keys_[slot] = key;
  edge_children_[slot] = child;
  ++edge_count_;
  return child;
}

void WordPiece::Rehash(size_t capacity) {
  std::vector<uint64_t> old_keys(capacity, kEmptyKey);
  std::vector<int32_t> old_children(capacity, kNoNode);
  old_keys.swap(edge_keys_);
  old_children.swap(edge_children_);
  hash_shift_ = 64;
  for (size_t c = capacity; c > 1; c >>= 1) --hash_shift_;
  const size_t mask = capacity - 1;
  for (size_t i = 0; i < old_keys.size(); ++i) {
    if (old_keys[i] == kEmptyKey) continue;
    size_t slot = Slot(old_keys[i]);
    while (edge_keys_[slot] != kEmptyKey) slot = (slot + 1) & mask;
    edge_keys_[slot] = old_keys[i];
    edge_children_[slot] = old_children[i];
  }
}

}  // namespace text
}  // namespace tiankong
