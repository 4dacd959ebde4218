#include "tokenizer.h"

#include <utility>
#include <vector>

#include "pre_tokenizer.h"
#include "utf8.h"

namespace tiankong {
namespace text {
namespace {

const std::string kNoToken;

// Span covering chars [begin, end) (non-empty) of an aligned text.
Span Cover(const AlignedChar* chars, size_t begin, size_t end) {
  return {chars[begin].source.start, chars[end - 1].source.end};
}

}  // namespace

BertTokenizer::BertTokenizer(Vocab vocab, const SpecialTokenIds& special, const TokenizerOptions& options)
    : vocab_(std::move(vocab)),
      special_(special),
      normalizer_options_{options.clean_text, options.handle_chinese_chars, options.strip_accents, options.lowercase},
      wordpiece_(vocab_, special.unk, static_cast<size_t>(options.max_input_chars_per_word)),
      max_content_tokens_(static_cast<size_t>(options.max_length) - 2) {}

const std::string& BertTokenizer::IdToToken(int32_t id) const {
  return id >= 0 && id < vocab_.size() ? vocab_.Token(id) : kNoToken;
}

Status BertTokenizer::Encode(std::string_view text, Encoding* out) const {
  // Clear rather than reassign: a caller reusing one Encoding keeps its capacity.
  out->ids.clear();
  out->tokens.clear();
  out->offsets.clear();
  out->mask_positions.clear();
  out->mask_constraints.clear();
  out->truncated_tokens = 0;
  std::vector<AlignedChar> chars;
  size_t error_offset;
  if (!DecodeUtf8(text, &chars, &error_offset)) return Status::kInvalidUtf8;

  std::vector<SpecialMatch> specials;
  FindSpecialTokens(chars, special_, &specials);

  out->ids.reserve(chars.size() + 2);
  out->offsets.reserve(chars.size() + 2);
  out->ids.push_back(special_.cls);
  out->offsets.push_back({0, 0});

  // Scratch buffers shared by every text run of this call.
  std::vector<AlignedChar> normalized;
  std::vector<WordRange> words;
  std::vector<Piece> pieces;
  auto encode_run = [&](size_t begin, size_t end) {
    normalized.clear();
    Normalize(chars.data() + begin, chars.data() + end, normalizer_options_, &normalized);
    words.clear();
    PreTokenize(normalized, 0, normalized.size(), &words);
    for (const WordRange& word : words) {
      const AlignedChar* word_chars = normalized.data() + word.begin;
      pieces.clear();
      wordpiece_.Tokenize(word_chars, word.end - word.begin, &pieces);
      for (const Piece& piece : pieces) {
        out->ids.push_back(piece.id);
        out->offsets.push_back(Cover(word_chars, piece.begin, piece.end));
      }
    }
  };
  size_t run_start = 0;
  std::vector<MaskConstraintText> constraints;  // of every mask typed, in order
  for (const SpecialMatch& special : specials) {
    encode_run(run_start, special.begin);
    out->ids.push_back(special.id);
    out->offsets.push_back(Cover(chars.data(), special.begin, special.end));
    run_start = special.end;
    if (special.id != special_.mask) continue;
    MaskConstraintText& constraint = constraints.emplace_back();
    if (special.constrained) {
      constraint.present = true;
      for (size_t c = special.constraint_begin; c < special.constraint_end; ++c)
        AppendUtf8(chars[c].cp, &constraint.text);
      // An empty constraint ("[MASK:]") has no chars: its span is the empty one after the colon.
      const uint32_t at = chars[special.constraint_begin - 1].source.end;
      constraint.span = special.constraint_begin < special.constraint_end
                            ? Cover(chars.data(), special.constraint_begin, special.constraint_end)
                            : Span{at, at};
    }
  }
  encode_run(run_start, chars.size());

  const size_t content = out->ids.size() - 1;
  if (content > max_content_tokens_) {
    out->truncated_tokens = static_cast<int32_t>(content - max_content_tokens_);
    out->ids.resize(1 + max_content_tokens_);
    out->offsets.resize(1 + max_content_tokens_);
  }
  out->ids.push_back(special_.sep);
  out->offsets.push_back({0, 0});

  out->tokens.reserve(out->ids.size());
  for (size_t i = 0; i < out->ids.size(); ++i) {
    out->tokens.push_back(vocab_.Token(out->ids[i]));
    if (out->ids[i] == special_.mask) out->mask_positions.push_back(static_cast<int32_t>(i));
  }
  // Masks only come from typed specials, in order; truncation drops the last ones.
  constraints.resize(out->mask_positions.size());
  out->mask_constraints = std::move(constraints);
  return Status::kOk;
}

}  // namespace text

std::unique_ptr<Tokenizer> Tokenizer::FromVocab(std::string_view vocab_bytes, const TokenizerOptions& options,
                                                std::string* error) {
  if (options.max_length < 2) {
    *error = "max_length must be at least 2 ([CLS] and [SEP]), got " + std::to_string(options.max_length);
    return nullptr;
  }
  if (options.max_input_chars_per_word < 1) {
    *error = "max_input_chars_per_word must be at least 1, got " + std::to_string(options.max_input_chars_per_word);
    return nullptr;
  }
  text::Vocab vocab;
  if (!vocab.Parse(vocab_bytes, error)) return nullptr;
  text::SpecialTokenIds ids{};
  struct Required {
    const char* token;
    int32_t* id;
  };
  for (const Required& required :
       {Required{"[PAD]", &ids.pad}, Required{"[UNK]", &ids.unk}, Required{"[CLS]", &ids.cls},
        Required{"[SEP]", &ids.sep}, Required{"[MASK]", &ids.mask}}) {
    *required.id = vocab.Find(required.token);
    if (*required.id < 0) {
      *error = std::string("vocab has no ") + required.token +
               " token (a BERT vocab.txt needs "
               "[PAD], [UNK], [CLS], [SEP] and [MASK])";
      return nullptr;
    }
  }
  return std::make_unique<text::BertTokenizer>(std::move(vocab), ids, options);
}

}  // namespace tiankong
