// The yanyiwu/simhash pipeline on the real cppjieba (compiled against
// cppjieba v5.6.7's headers from ../shared/peers/yanyiwu-simhash, or the
// older ones in the npm package nodejieba 3.5.8; tests/compat/run.sh builds
// both): KeywordExtractor::Extract(text, topN = 5), then
// yanyiwu's vote over lookup3 hashlittle2 (Bob Jenkins, public domain).
//
// Input on stdin: for each document, its byte length on a line, then the
// bytes. Output: one line per document, the 16-hex-digit fingerprint, then
// tab-separated keyword and weight pairs (weights with 17 significant digits).
// With `cut`: MixSegment's words of each document instead.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cppjieba/KeywordExtractor.hpp"

#define rot(x, k) (((x) << (k)) | ((x) >> (32 - (k))))
#define mix(a, b, c)                  \
  {                                   \
    a -= c; a ^= rot(c, 4);  c += b;  \
    b -= a; b ^= rot(a, 6);  a += c;  \
    c -= b; c ^= rot(b, 8);  b += a;  \
    a -= c; a ^= rot(c, 16); c += b;  \
    b -= a; b ^= rot(a, 19); a += c;  \
    c -= b; c ^= rot(b, 4);  b += a;  \
  }
#define final(a, b, c)            \
  {                               \
    c ^= b; c -= rot(b, 14);      \
    a ^= c; a -= rot(c, 11);      \
    b ^= a; b -= rot(a, 25);      \
    c ^= b; c -= rot(b, 16);      \
    a ^= c; a -= rot(c, 4);       \
    b ^= a; b -= rot(a, 14);      \
    c ^= b; c -= rot(b, 24);      \
  }

// lookup3.c hashlittle2, byte-at-a-time path.
static void hashlittle2(const void* key, size_t length, uint32_t* pc, uint32_t* pb) {
  uint32_t a, b, c;
  a = b = c = 0xdeadbeef + ((uint32_t)length) + *pc;
  c += *pb;
  const uint8_t* k = (const uint8_t*)key;
  while (length > 12) {
    a += k[0]; a += ((uint32_t)k[1]) << 8; a += ((uint32_t)k[2]) << 16; a += ((uint32_t)k[3]) << 24;
    b += k[4]; b += ((uint32_t)k[5]) << 8; b += ((uint32_t)k[6]) << 16; b += ((uint32_t)k[7]) << 24;
    c += k[8]; c += ((uint32_t)k[9]) << 8; c += ((uint32_t)k[10]) << 16; c += ((uint32_t)k[11]) << 24;
    mix(a, b, c);
    length -= 12;
    k += 12;
  }
  switch (length) {
    case 12: c += ((uint32_t)k[11]) << 24;
    case 11: c += ((uint32_t)k[10]) << 16;
    case 10: c += ((uint32_t)k[9]) << 8;
    case 9: c += k[8];
    case 8: b += ((uint32_t)k[7]) << 24;
    case 7: b += ((uint32_t)k[6]) << 16;
    case 6: b += ((uint32_t)k[5]) << 8;
    case 5: b += k[4];
    case 4: a += ((uint32_t)k[3]) << 24;
    case 3: a += ((uint32_t)k[2]) << 16;
    case 2: a += ((uint32_t)k[1]) << 8;
    case 1: a += k[0]; break;
    case 0: *pc = c; *pb = b; return;
  }
  final(a, b, c);
  *pc = c;
  *pb = b;
}

// yanyiwu/simhash: Jenkins hasher and Simhasher::make.
static uint64_t jenkins(const std::string& s) {
  uint32_t pc = 0, pb = 0;
  hashlittle2(s.data(), s.size(), &pc, &pb);
  return ((uint64_t)pc << 32) | pb;
}

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 3 && std::string(argv[2]) == "cut")) {
    std::cerr << "usage: yanyiwu_peer CPPJIEBA_DICT_DIR [cut] < docs\n";
    return 2;
  }
  std::string d = argv[1];
  if (argc == 3) {
    // MixSegment's words, as the keyword extractor cuts them: each
    // document's words separated by U+0001 and ended by U+0002 (neither is
    // in the documents).
    cppjieba::MixSegment seg(d + "/jieba.dict.utf8", d + "/hmm_model.utf8");
    std::string line;
    while (std::getline(std::cin, line)) {
      size_t n = std::stoul(line);
      std::string text(n, '\0');
      std::cin.read(&text[0], n);
      std::vector<std::string> words;
      seg.Cut(text, words, true);
      for (size_t i = 0; i < words.size(); i++) {
        if (i) std::fputc(1, stdout);
        std::fwrite(words[i].data(), 1, words[i].size(), stdout);
      }
      std::fputc(2, stdout);
    }
    return 0;
  }
  cppjieba::KeywordExtractor ex(d + "/jieba.dict.utf8", d + "/hmm_model.utf8", d + "/idf.utf8",
                                d + "/stop_words.utf8");
  std::string line;
  while (std::getline(std::cin, line)) {
    size_t n = std::stoul(line);
    std::string text(n, '\0');
    std::cin.read(&text[0], n);
    std::vector<std::pair<std::string, double> > kw;
    ex.Extract(text, kw, 5);
    std::vector<double> weights(64, 0.0);
    for (size_t i = 0; i < kw.size(); i++) {
      uint64_t h = jenkins(kw[i].first);
      for (size_t j = 0; j < 64; j++) {
        weights[j] += (((uint64_t)1 << j) & h ? 1 : -1) * kw[i].second;
      }
    }
    uint64_t v = 0;
    for (size_t j = 0; j < 64; j++) {
      if (weights[j] > 0.0) v |= (uint64_t)1 << j;
    }
    std::printf("%016llx", (unsigned long long)v);
    for (size_t i = 0; i < kw.size(); i++) {
      std::printf("\t%s\t%.17g", kw[i].first.c_str(), kw[i].second);
    }
    std::printf("\n");
  }
  return 0;
}
