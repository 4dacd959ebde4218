// BERT vocab.txt: one token per line, the line number (from 0) is the id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tiankong {
namespace text {

class Vocab {
 public:
  Vocab() = default;
  // Movable, not copyable: the index holds views into the token strings.
  Vocab(Vocab&&) = default;
  Vocab& operator=(Vocab&&) = default;
  Vocab(const Vocab&) = delete;
  Vocab& operator=(const Vocab&) = delete;

  // Parses the bytes of a vocab.txt. Lines are split on '\n' only, and nothing is trimmed:
  // bert-base-chinese has tokens U+2028 and "##"+U+2028, which generic line splitting
  // (or trimming '\r') would break. One final '\n' is allowed. Returns false and sets
  // *error (naming the 1-based line) for an empty vocab, an empty line, a line ending in '\r' (CRLF
  // file), a token that is not valid UTF-8, or a duplicate token.
  bool Parse(std::string_view bytes, std::string* error);

  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  // -1 when absent.
  int32_t Find(std::string_view token) const;
  // The token of `id`, which must be in [0, size()).
  const std::string& Token(int32_t id) const { return tokens_[id]; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string_view, int32_t> ids_;  // views into tokens_
};

}  // namespace text
}  // namespace tiankong
