// tiankong::OutputLayer and its file, head.bin (written by model/tiankong_model/head.py):
//
//   offset 0   char[8]  "TKOUTPUT"
//          8   u32      format version (1)
//         12   u32      dtype: 1 = int8 rows with a float scale each, 2 = float32, 3 = float16
//         16   u32      vocabulary size V
//         20   u32      hidden size H
//         24   u32      row stride S in elements (int8: H rounded up to 16; f16: H rounded up to
//                       2, so the table is a whole number of 4-byte words; f32: H); the padding
//                       entries are written as zeros and never affect a result
//         28   u32      CRC-32 of every byte from offset 32 to the end
//         32   table    V x S int8, IEEE binary16 or float32, row-major: row v is token v's embedding
//              f32      scale[V]   (int8 only: row v ≈ int8 row × scale[v])
//              f32      bias[V]    the MLM head's output bias
// Little-endian; the table starts at a 16-byte aligned offset, the floats at a 4-byte one. Every
// weight, scale and bias is finite (a half with an all-ones exponent is rejected).
//
// The table types are storage forms only: int8 and f16 are widened once, at load, into an owned
// float32 V x H table (f16: exact, every half is a float; int8: q x scale[v] rounded to float32,
// the values the core has always embedded), the file's bytes are released, and every dtype then
// computes the same float32 products. So int8 costs a quarter of the f32 bytes to download and
// the f32 memory at run time, and its only error is the table's own rounding: the hidden state is
// never quantised. (Earlier builds multiplied the int8 rows by an int16-rounded hidden state,
// 95-97% top-1 agreement with f32 on the default model; the layout is unchanged, so every
// version 1 file still loads, and an int8 one now gives the float32 product of its rows.)
#include <algorithm>
#include <cmath>
#include <cstring>

#include "gemv_kernels.h"
#include "half_float.h"
#include "memory_format.h"
#include "tiankong/tiankong.h"

namespace tiankong {
namespace {

constexpr char kMagic[8] = {'T', 'K', 'O', 'U', 'T', 'P', 'U', 'T'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = 32;
constexpr uint32_t kInt8 = 1, kFloat32 = 2, kFloat16 = 3;

uint32_t ReadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

class OutputLayerImpl final : public OutputLayer {
 public:
  bool Init(std::vector<uint8_t> bytes, int32_t vocab_size, std::string* error) {
    bytes_ = std::move(bytes);
    const size_t n = bytes_.size();
    if (n < kHeaderBytes || std::memcmp(bytes_.data(), kMagic, sizeof kMagic) != 0) {
      *error = n < kHeaderBytes ? "file is shorter than its 32-byte header"
                                : "not a tiankong output layer (no TKOUTPUT magic)";
      return false;
    }
    const uint8_t* h = bytes_.data();
    if (ReadU32(h + 8) != kVersion) {
      *error =
          "format version " + std::to_string(ReadU32(h + 8)) + ", this build reads version 1 (re-export the model)";
      return false;
    }
    dtype_ = ReadU32(h + 12);
    vocab_ = ReadU32(h + 16);
    hidden_ = ReadU32(h + 20);
    stride_ = ReadU32(h + 24);
    if (dtype_ != kInt8 && dtype_ != kFloat32 && dtype_ != kFloat16) {
      *error = "unknown table type " + std::to_string(dtype_);
      return false;
    }
    const bool int8 = dtype_ == kInt8, f16 = dtype_ == kFloat16;
    const uint32_t expected_stride = int8  ? (hidden_ + simd::kRowAlign - 1) / simd::kRowAlign * simd::kRowAlign
                                     : f16 ? (hidden_ + 1) / 2 * 2
                                           : hidden_;
    if (hidden_ == 0 || hidden_ > 16384 || vocab_ == 0 || vocab_ > (1u << 24) || stride_ != expected_stride) {
      *error = "header sizes are inconsistent (vocab " + std::to_string(vocab_) + ", hidden " +
               std::to_string(hidden_) + ", stride " + std::to_string(stride_) + ")";
      return false;
    }
    if (static_cast<int64_t>(vocab_) != vocab_size) {
      *error = "holds " + std::to_string(vocab_) + " vocabulary rows but the model's vocab has " +
               std::to_string(vocab_size) + " tokens (it belongs to another model)";
      return false;
    }
    const size_t table_bytes = size_t{vocab_} * stride_ * (int8 ? 1 : f16 ? 2 : 4);
    const size_t expected = kHeaderBytes + table_bytes + (int8 ? 4 * size_t{vocab_} : 0) + 4 * size_t{vocab_};
    if (n != expected) {
      *error = "file has " + std::to_string(n) + " bytes, its header implies " + std::to_string(expected) +
               (n < expected ? " (truncated)" : "");
      return false;
    }
    if (memory::Crc32(h + kHeaderBytes, n - kHeaderBytes) != ReadU32(h + 28)) {
      *error = "checksum mismatch (the file is corrupt)";
      return false;
    }
    const uint8_t* table = h + kHeaderBytes;
    table_f32_ = int8 || f16 ? nullptr : reinterpret_cast<const float*>(table);
    const float* scale = int8 ? reinterpret_cast<const float*>(table + table_bytes) : nullptr;
    bias_ = reinterpret_cast<const float*>(table + table_bytes + (int8 ? 4 * size_t{vocab_} : 0));
    for (size_t v = 0; v < vocab_; ++v) {
      if (!std::isfinite(bias_[v]) || (scale && !(std::isfinite(scale[v]) && scale[v] >= 0))) {
        *error = "holds a non-finite scale or bias";
        return false;
      }
    }
    if (int8 || f16) {
      // Once, here: the owned float32 table (padding dropped) and a copy of the bias, then the
      // file's bytes go (nothing points into them any more).
      owned_table_.resize(size_t{vocab_} * hidden_);
      for (size_t v = 0; v < vocab_; ++v) {
        float* row = owned_table_.data() + v * hidden_;
        if (int8) {
          WidenInt8Row(reinterpret_cast<const int8_t*>(table) + v * stride_, hidden_, scale[v], row);
        } else if (!fp16::HalvesToFloats(table + 2 * v * stride_, hidden_, row)) {
          *error = "holds a non-finite weight (a float16 infinity or NaN)";
          return false;
        }
      }
      owned_bias_.assign(bias_, bias_ + vocab_);
      table_f32_ = owned_table_.data();
      bias_ = owned_bias_.data();
      std::vector<uint8_t>().swap(bytes_);
    } else {
      for (size_t i = 0; i < size_t{vocab_} * hidden_; ++i) {
        if (!std::isfinite(table_f32_[i])) {
          *error = "holds a non-finite weight";
          return false;
        }
      }
    }
    return true;
  }

  int32_t HiddenSize() const override { return static_cast<int32_t>(hidden_); }
  int32_t VocabSize() const override { return static_cast<int32_t>(vocab_); }
  const char* DType() const override { return dtype_ == kInt8 ? "int8" : dtype_ == kFloat16 ? "f16" : "f32"; }

  bool Embed(const int32_t* ids, size_t n, float* out) const override {
    for (size_t i = 0; i < n; ++i) {
      if (ids[i] < 0 || static_cast<uint32_t>(ids[i]) >= vocab_) return false;
    }
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(out + i * hidden_, table_f32_ + static_cast<size_t>(ids[i]) * hidden_, hidden_ * sizeof(float));
    }
    return true;
  }

  void Logits(const float* hidden, size_t m, float* logits) const override {
    for (size_t r = 0; r < m; ++r) {
      float* out = logits + r * vocab_;
      simd::GemvF32(table_f32_, vocab_, hidden_, hidden + r * hidden_, out);
      for (size_t v = 0; v < vocab_; ++v) out[v] += bias_[v];
    }
  }

 private:
  // row[k] = q[k] x scale for k < n: the float32 product, as the int8 table was always embedded
  // (so the input embeddings of an int8 head.bin are bit-identical to those of earlier builds).
  static void WidenInt8Row(const int8_t* q, size_t n, float scale, float* row) {
    for (size_t k = 0; k < n; ++k) row[k] = static_cast<float>(q[k]) * scale;
  }

  std::vector<uint8_t> bytes_;      // the file (f32: the table points into it; int8, f16: released)
  std::vector<float> owned_table_;  // int8, f16: the table widened to float32, V x H
  std::vector<float> owned_bias_;   // int8, f16: the bias copied out of the released file
  uint32_t dtype_ = 0, vocab_ = 0, hidden_ = 0, stride_ = 0;
  const float* table_f32_ = nullptr;  // V x H float32, whatever the file's dtype
  const float* bias_ = nullptr;
};

}  // namespace

std::unique_ptr<OutputLayer> OutputLayer::Load(std::vector<uint8_t> bytes, int32_t vocab_size, std::string* error) {
  auto layer = std::make_unique<OutputLayerImpl>();
  if (!layer->Init(std::move(bytes), vocab_size, error)) return nullptr;
  return layer;
}

}  // namespace tiankong
