// OutputLayer: head.bin parsing (every corruption rejected with a message) and the numbers: the
// embeddings are the dequantised rows, the logits match a double-precision reference computed
// here from the same table (int8: over the rows widened to float32, q x scale, with the hidden
// state as it is — bit-identical to an f32 head.bin holding those floats; f32: plain; f16: plain
// over the halves' exact values, decoded here with ldexp, independently of the core).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "memory_format.h"
#include "tiankong/tiankong.h"

namespace tiankong {
namespace {

enum DType : uint32_t { kInt8 = 1, kF32 = 2, kF16 = 3 };

struct Head {
  uint32_t vocab, hidden, stride;
  DType dtype;
  std::vector<int8_t> q;       // int8 table (vocab x stride)
  std::vector<uint16_t> half;  // f16 table (vocab x stride, zero-padded)
  std::vector<float> f;        // f32 table, or the f16 table's exact values (vocab x hidden)
  std::vector<float> scale, bias;
};

// The value of a finite half, from its fields (the reference for the core's conversion).
float HalfValue(uint16_t bits) {
  const int exponent = (bits >> 10) & 31, fraction = bits & 1023;
  const double magnitude =
      exponent == 0 ? std::ldexp(double(fraction), -24) : std::ldexp(double(1024 + fraction), exponent - 25);
  return static_cast<float>((bits >> 15) ? -magnitude : magnitude);
}

Head RandomHead(uint32_t vocab, uint32_t hidden, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const uint32_t stride = dtype == kInt8 ? (hidden + 15) / 16 * 16 : dtype == kF16 ? (hidden + 1) / 2 * 2 : hidden;
  Head h{vocab, hidden, stride, dtype, {}, {}, {}, {}, {}};
  const bool int8 = dtype == kInt8;
  if (dtype == kF16) {
    // Random halves of magnitude up to ~0.25, with subnormals and signed zeros among them.
    h.half.assign(size_t{vocab} * stride, 0);
    for (uint32_t v = 0; v < vocab; ++v) {
      for (uint32_t k = 0; k < hidden; ++k) {
        const uint32_t r = rng();
        const uint32_t exponent = (r >> 16) % 14;  // 0 (subnormal / zero) .. 13 (2^-2)
        uint16_t bits = static_cast<uint16_t>(((r >> 31) << 15) | (exponent << 10) | (r & 1023));
        if (r % 97 == 0) bits &= 0x8000;  // ±0
        h.half[v * stride + k] = bits;
        h.f.push_back(HalfValue(bits));
      }
    }
  } else if (int8) {
    h.q.assign(size_t{vocab} * h.stride, 0);
    for (uint32_t v = 0; v < vocab; ++v) {
      for (uint32_t k = 0; k < hidden; ++k)
        h.q[v * h.stride + k] = static_cast<int8_t>(std::lround(std::max(-127.f, std::min(127.f, normal(rng) * 40))));
      h.scale.push_back(0.01f + 0.001f * static_cast<float>(v % 7));
    }
  } else {
    for (size_t i = 0; i < size_t{vocab} * hidden; ++i) h.f.push_back(normal(rng) * 0.05f);
  }
  for (uint32_t v = 0; v < vocab; ++v) h.bias.push_back(normal(rng) * 0.1f);
  return h;
}

std::vector<uint8_t> Serialize(const Head& h) {
  std::vector<uint8_t> out(32, 0);
  std::memcpy(out.data(), "TKOUTPUT", 8);
  const uint32_t fields[] = {1, h.dtype, h.vocab, h.hidden, h.stride};
  std::memcpy(out.data() + 8, fields, sizeof fields);
  const auto append = [&out](const void* p, size_t n) {
    out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  };
  if (h.dtype == kInt8) {
    append(h.q.data(), h.q.size());
    append(h.scale.data(), 4 * h.scale.size());
  } else if (h.dtype == kF16) {
    for (uint16_t bits : h.half) {
      const uint8_t le[2] = {static_cast<uint8_t>(bits & 0xff), static_cast<uint8_t>(bits >> 8)};
      append(le, 2);
    }
  } else {
    append(h.f.data(), 4 * h.f.size());
  }
  append(h.bias.data(), 4 * h.bias.size());
  const uint32_t crc = memory::Crc32(out.data() + 32, out.size() - 32);
  std::memcpy(out.data() + 28, &crc, 4);
  return out;
}

std::unique_ptr<OutputLayer> Load(const std::vector<uint8_t>& bytes, int32_t vocab, std::string* error) {
  return OutputLayer::Load(bytes, vocab, error);
}

TEST(OutputLayer, Int8TableIsWidenedAtLoadAndComputedInFloat32) {
  const Head h = RandomHead(301, 40, kInt8, 1);
  std::string error;
  auto layer = Load(Serialize(h), 301, &error);
  ASSERT_NE(layer, nullptr) << error;
  EXPECT_EQ(layer->HiddenSize(), 40);
  EXPECT_STREQ(layer->DType(), "int8");
  // The same model as an f32 head.bin holding the widened rows (float32 q x scale): the int8 layer
  // must compute exactly what it computes, embeddings and logits, bit for bit.
  Head widened = RandomHead(301, 40, kF32, 1);
  widened.bias = h.bias;
  for (uint32_t v = 0; v < 301; ++v) {
    for (size_t k = 0; k < 40; ++k) widened.f[v * 40 + k] = static_cast<float>(h.q[v * h.stride + k]) * h.scale[v];
  }
  auto f32 = Load(Serialize(widened), 301, &error);
  ASSERT_NE(f32, nullptr) << error;
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> hidden(2 * 40);
  for (auto& x : hidden) x = normal(rng);
  hidden[3] = 1e-30f;  // a value int16 rounding of the row (the old int8 path) would have zeroed
  std::vector<float> logits(2 * 301), expected(2 * 301);
  layer->Logits(hidden.data(), 2, logits.data());
  f32->Logits(hidden.data(), 2, expected.data());
  EXPECT_EQ(std::memcmp(logits.data(), expected.data(), 4 * logits.size()), 0);
  for (size_t r = 0; r < 2; ++r) {
    for (uint32_t v = 0; v < 301; ++v) {
      double exact = h.bias[v];
      for (size_t k = 0; k < 40; ++k) exact += double{hidden[r * 40 + k]} * widened.f[v * 40 + k];
      EXPECT_NEAR(logits[r * 301 + v], exact, 1e-5 * (1 + std::fabs(exact))) << v;
    }
  }
  std::vector<float> embedded(2 * 40);
  const int32_t ids[] = {0, 300};
  ASSERT_TRUE(layer->Embed(ids, 2, embedded.data()));
  for (size_t k = 0; k < 40; ++k) EXPECT_FLOAT_EQ(embedded[40 + k], h.q[300 * h.stride + k] * h.scale[300]);
  const int32_t bad[] = {301};
  EXPECT_FALSE(layer->Embed(bad, 1, embedded.data()));
}

TEST(OutputLayer, Float32LogitsAreThePlainProduct) {
  const Head h = RandomHead(50, 33, kF32, 3);
  std::string error;
  auto layer = Load(Serialize(h), 50, &error);
  ASSERT_NE(layer, nullptr) << error;
  std::vector<float> hidden(33, 0.5f), logits(50);
  layer->Logits(hidden.data(), 1, logits.data());
  for (uint32_t v = 0; v < 50; ++v) {
    double sum = h.bias[v];
    for (size_t k = 0; k < 33; ++k) sum += 0.5 * h.f[v * 33 + k];
    EXPECT_NEAR(logits[v], sum, 1e-4);
  }
}

TEST(OutputLayer, Float16TableIsComputedAsItsExactFloat32Values) {
  // Odd hidden size: rows are padded to an even stride (34), the bias stays 4-byte aligned.
  const Head h = RandomHead(50, 33, kF16, 7);
  ASSERT_EQ(h.stride, 34u);
  const std::vector<uint8_t> bytes = Serialize(h);
  ASSERT_EQ(bytes.size(), 32 + 50 * 34 * 2 + 4 * 50u);
  std::string error;
  auto layer = Load(bytes, 50, &error);
  ASSERT_NE(layer, nullptr) << error;
  EXPECT_STREQ(layer->DType(), "f16");
  EXPECT_EQ(layer->HiddenSize(), 33);
  EXPECT_EQ(layer->VocabSize(), 50);
  int subnormal = 0, negative_zero = 0;
  for (float x : h.f) {
    subnormal += x != 0 && std::fabs(x) < 6.103515625e-05f;
    negative_zero += x == 0 && std::signbit(x);
  }
  EXPECT_GT(subnormal, 0);  // the table exercises them
  EXPECT_GT(negative_zero, 0);
  std::vector<float> embedded(50 * 33);
  std::vector<int32_t> ids(50);
  for (int32_t v = 0; v < 50; ++v) ids[v] = 49 - v;
  ASSERT_TRUE(layer->Embed(ids.data(), 50, embedded.data()));
  for (size_t i = 0; i < 50; ++i) {
    for (size_t k = 0; k < 33; ++k) {
      const float expected = h.f[(49 - i) * 33 + k];
      ASSERT_EQ(std::memcmp(&embedded[i * 33 + k], &expected, 4), 0) << i << "," << k;  // bit-exact, -0 too
    }
  }
  std::mt19937 rng(8);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> hidden(3 * 33), logits(3 * 50);
  for (auto& x : hidden) x = normal(rng);
  layer->Logits(hidden.data(), 3, logits.data());
  for (size_t r = 0; r < 3; ++r) {
    for (uint32_t v = 0; v < 50; ++v) {
      double sum = h.bias[v];
      for (size_t k = 0; k < 33; ++k) sum += double{hidden[r * 33 + k]} * h.f[v * 33 + k];
      EXPECT_NEAR(logits[r * 50 + v], sum, 1e-4) << r << "," << v;
    }
  }
  const int32_t bad[] = {-1};
  EXPECT_FALSE(layer->Embed(bad, 1, embedded.data()));
}

TEST(OutputLayer, Float16FormatChecks) {
  const Head good = RandomHead(20, 17, kF16, 9);
  const std::vector<uint8_t> bytes = Serialize(good);
  std::string error;
  ASSERT_NE(Load(bytes, 20, &error), nullptr) << error;
  // Truncated: anywhere in the table or the bias, and one byte short.
  for (size_t cut : {size_t{40}, size_t{32 + 20 * 18 * 2 - 1}, bytes.size() - 1}) {
    EXPECT_EQ(Load(std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut)), 20, &error),
              nullptr)
        << cut;
    EXPECT_NE(error.find("(truncated)"), std::string::npos) << error;
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(Load(longer, 20, &error), nullptr);
  EXPECT_NE(error.find("header implies"), std::string::npos) << error;
  // The stride must be H rounded up to even (17 -> 18), not H or the int8 stride.
  for (uint32_t stride : {17u, 32u}) {
    Head h = good;
    h.stride = stride;
    h.half.assign(size_t{h.vocab} * stride, 0);
    EXPECT_EQ(Load(Serialize(h), 20, &error), nullptr) << stride;
    EXPECT_NE(error.find("inconsistent"), std::string::npos) << error;
  }
  // A NaN or an infinity among the halves (with a valid checksum) is rejected.
  for (uint16_t bad : {uint16_t{0x7e00}, uint16_t{0xfc01}, uint16_t{0x7c00}, uint16_t{0xfc00}}) {
    Head h = good;
    h.half[7 * h.stride + 16] = bad;
    EXPECT_EQ(Load(Serialize(h), 20, &error), nullptr) << std::hex << bad;
    EXPECT_NE(error.find("non-finite weight"), std::string::npos) << error;
  }
  Head nan_bias = good;
  nan_bias.bias[19] = std::nanf("");
  EXPECT_EQ(Load(Serialize(nan_bias), 20, &error), nullptr);
  EXPECT_NE(error.find("non-finite"), std::string::npos) << error;
  // The padding is not a weight: whatever it holds is ignored.
  Head padded = good;
  for (uint32_t v = 0; v < padded.vocab; ++v) padded.half[v * padded.stride + 17] = 0x7e00;
  EXPECT_NE(Load(Serialize(padded), 20, &error), nullptr) << error;
}

TEST(OutputLayer, RejectsEveryCorruptionWithAMessage) {
  for (const DType dtype : {kInt8, kF32, kF16}) {
    const std::vector<uint8_t> good = Serialize(RandomHead(20, 16, dtype, 5));
    std::string error;
    ASSERT_NE(Load(good, 20, &error), nullptr) << error;
    EXPECT_EQ(Load(good, 21, &error), nullptr);
    EXPECT_NE(error.find("another model"), std::string::npos) << error;
    for (size_t cut : {0ul, 10ul, 31ul, good.size() - 1}) {
      EXPECT_EQ(Load(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut)), 20, &error),
                nullptr)
          << cut;
    }
    for (size_t at = 0; at < good.size(); at += 7) {
      std::vector<uint8_t> flipped = good;
      flipped[at] ^= 0x40;
      EXPECT_EQ(Load(flipped, 20, &error), nullptr) << "byte " << at;
      EXPECT_FALSE(error.empty());
    }
    std::vector<uint8_t> version = good;
    version[8] = 2;
    EXPECT_EQ(Load(version, 20, &error), nullptr);
    EXPECT_NE(error.find("version 2"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace tiankong
