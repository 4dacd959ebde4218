// OutputLayer: head.bin parsing (every corruption rejected with a message) and the numbers: the
// embeddings are the dequantised rows, the logits match a double-precision reference computed
// here from the same table (int8: with the hidden row quantised as documented; f32: plain).
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

struct Head {
  uint32_t vocab, hidden, stride;
  bool int8;
  std::vector<int8_t> q;  // int8 table (vocab x stride)
  std::vector<float> f;   // f32 table (vocab x hidden)
  std::vector<float> scale, bias;
};

Head RandomHead(uint32_t vocab, uint32_t hidden, bool int8, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Head h{vocab, hidden, int8 ? (hidden + 15) / 16 * 16 : hidden, int8, {}, {}, {}, {}};
  if (int8) {
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
  const uint32_t fields[] = {1, h.int8 ? 1u : 2u, h.vocab, h.hidden, h.stride};
  std::memcpy(out.data() + 8, fields, sizeof fields);
  const auto append = [&out](const void* p, size_t n) {
    out.insert(out.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  };
  if (h.int8) {
    append(h.q.data(), h.q.size());
    append(h.scale.data(), 4 * h.scale.size());
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

TEST(OutputLayer, Int8LogitsMatchTheDocumentedComputation) {
  const Head h = RandomHead(301, 40, true, 1);
  std::string error;
  auto layer = Load(Serialize(h), 301, &error);
  ASSERT_NE(layer, nullptr) << error;
  EXPECT_EQ(layer->HiddenSize(), 40);
  EXPECT_STREQ(layer->DType(), "int8");
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> hidden(2 * 40);
  for (auto& x : hidden) x = normal(rng);
  std::vector<float> logits(2 * 301);
  layer->Logits(hidden.data(), 2, logits.data());
  for (size_t r = 0; r < 2; ++r) {
    // Reference: quantise the row as documented (int16, 32 767 levels for 48-wide rows), exact
    // integer dot, scale, bias.
    float max = 0;
    for (size_t k = 0; k < 40; ++k) max = std::max(max, std::fabs(hidden[r * 40 + k]));
    const double scale = max / 32767.0;
    for (uint32_t v = 0; v < 301; ++v) {
      double dot = 0, exact = 0;
      for (size_t k = 0; k < 40; ++k) {
        dot += std::nearbyint(hidden[r * 40 + k] / scale) * h.q[v * h.stride + k];
        exact += hidden[r * 40 + k] * h.q[v * h.stride + k] * double{h.scale[v]};
      }
      EXPECT_NEAR(logits[r * 301 + v], dot * scale * h.scale[v] + h.bias[v], 1e-3) << v;
      EXPECT_NEAR(logits[r * 301 + v], exact + h.bias[v], 2e-3) << v;  // quantising the hidden row costs little
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
  const Head h = RandomHead(50, 33, false, 3);
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

TEST(OutputLayer, RejectsEveryCorruptionWithAMessage) {
  const std::vector<uint8_t> good = Serialize(RandomHead(20, 16, true, 5));
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

}  // namespace
}  // namespace tiankong
