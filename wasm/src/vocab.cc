#include "vocab.h"

#include "utf8.h"

namespace tiankong {
namespace text {

bool Vocab::Parse(std::string_view bytes, std::string* error) {
  tokens_.clear();
  ids_.clear();
  if (!bytes.empty() && bytes.back() == '\n') bytes.remove_suffix(1);
  if (bytes.empty()) {
    *error = "vocab is empty";
    return false;
  }
  for (size_t start = 0; start <= bytes.size();) {
    size_t newline = bytes.find('\n', start);
    if (newline == std::string_view::npos) newline = bytes.size();
    tokens_.emplace_back(bytes.substr(start, newline - start));
    start = newline + 1;
  }
  ids_.reserve(tokens_.size());
  std::vector<AlignedChar> scratch;
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& token = tokens_[i];
    std::string problem;
    size_t bad_byte;
    scratch.clear();
    if (token.empty()) {
      problem = "is empty";
    } else if (token.back() == '\r') {
      problem = "ends with a carriage return: convert CRLF line endings to LF";
    } else if (!DecodeUtf8(token, &scratch, &bad_byte)) {
      problem = "is not valid UTF-8 (byte " + std::to_string(bad_byte + 1) + ")";
    } else if (!ids_.emplace(token, static_cast<int32_t>(i)).second) {
      problem = "repeats the token \"" + token + "\" of line " + std::to_string(ids_.at(token) + 1);
    } else {
      continue;
    }
    *error = "vocab line " + std::to_string(i + 1) + " " + problem;
    tokens_.clear();
    ids_.clear();
    return false;
  }
  return true;
}

int32_t Vocab::Find(std::string_view token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace text
}  // namespace tiankong
