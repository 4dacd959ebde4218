// The BERT tokenizer pipeline behind tiankong::Tokenizer:
//   UTF-8 -> special tokens -> BertNormalizer -> BertPreTokenizer -> WordPiece
//   -> [CLS] ... [SEP] with explicit truncation.
#pragma once

#include <string>
#include <string_view>

#include "normalizer.h"
#include "special_tokens.h"
#include "tiankong/tiankong.h"
#include "vocab.h"
#include "wordpiece.h"

namespace tiankong {
namespace text {

class BertTokenizer final : public Tokenizer {
 public:
  // Takes a parsed vocab that contains the five special tokens and validated options
  // (Tokenizer::FromVocab checks both and is the way to build one).
  BertTokenizer(Vocab vocab, const SpecialTokenIds& special, const TokenizerOptions& options);

  Status Encode(std::string_view text, Encoding* out) const override;

  int32_t VocabSize() const override { return vocab_.size(); }
  int32_t TokenToId(std::string_view token) const override { return vocab_.Find(token); }
  const std::string& IdToToken(int32_t id) const override;
  int32_t PadId() const override { return special_.pad; }
  int32_t UnkId() const override { return special_.unk; }
  int32_t ClsId() const override { return special_.cls; }
  int32_t SepId() const override { return special_.sep; }
  int32_t MaskId() const override { return special_.mask; }

 private:
  Vocab vocab_;
  SpecialTokenIds special_;
  NormalizerOptions normalizer_options_;
  WordPiece wordpiece_;
  size_t max_content_tokens_;  // max_length minus [CLS] and [SEP]
};

}  // namespace text
}  // namespace tiankong
