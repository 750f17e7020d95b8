#include "tests/replay/r4400_guest.h"

#include <map>

#include "cat_parser/writer.h"
#include "gtest/gtest.h"
#include "tests/simcore/mips_asm.h"

namespace citcat::replay_test {
namespace {

using namespace mips::as;  // NOLINT

constexpr int kZero = 0, kT0 = 8, kT1 = 9, kT2 = 10, kT3 = 11, kT4 = 12, kS0 = 16, kS1 = 17,
              kS2 = 18, kS3 = 19, kS4 = 20, kS5 = 21, kS6 = 22, kT9 = 25, kK0 = 26, kK1 = 27,
              kRa = 31;
constexpr int kIndex = 0, kRandom = 1, kEntryLo0 = 2, kEntryLo1 = 3, kPageMask = 5, kWired = 6,
              kCount = 9, kEntryHi = 10, kCompare = 11, kStatus = 12, kCause = 13, kEpc = 14;

constexpr uint32_t Xor(int rd, int rs, int rt) { return R(0x26, rs, rt, rd); }
constexpr uint32_t Slt(int rd, int rs, int rt) { return R(0x2A, rs, rt, rd); }
constexpr uint32_t Xori(int rt, int rs, int imm) { return I(0x0E, rs, rt, imm); }

// Instruction words with labels for branch targets.
class Asm {
 public:
  Asm& operator<<(uint32_t word) {
    words_.push_back(word);
    return *this;
  }
  void Label(const std::string& name) { labels_[name] = words_.size(); }
  // A branch word (offset field 0) to `name`, patched in Words().
  Asm& Branch(uint32_t word, const std::string& name) {
    fixups_.push_back({words_.size(), name});
    words_.push_back(word);
    return *this;
  }
  std::vector<uint8_t> Bytes() const {
    std::vector<uint32_t> w = words_;
    for (const auto& [at, name] : fixups_) {
      int64_t offset = static_cast<int64_t>(labels_.at(name)) - static_cast<int64_t>(at + 1);
      w[at] |= static_cast<uint32_t>(offset) & 0xFFFF;
    }
    std::vector<uint8_t> bytes;
    for (uint32_t x : w) {
      bytes.insert(bytes.end(), {uint8_t(x >> 24), uint8_t(x >> 16), uint8_t(x >> 8), uint8_t(x)});
    }
    return bytes;
  }

 private:
  std::vector<uint32_t> words_;
  std::map<std::string, size_t> labels_;
  std::vector<std::pair<size_t, std::string>> fixups_;
};

// Physical layout.
constexpr uint64_t kRefillPhys = 0x0, kGeneralPhys = 0x180, kMainPhys = 0x10000,
                   kDriverPhys = 0x11000;

// TLB refill: maps the faulting page pair to frames 0x310/0x311 (TLBWI at index 6, or TLBWR).
std::vector<uint8_t> Refill(const GuestOptions& o) {
  Asm a;
  a << Ori(kK0, kZero, 0xC41F) << Dmtc0(kK0, kEntryLo0) << Ori(kK0, kZero, 0xC45F)
    << Dmtc0(kK0, kEntryLo1);
  if (o.read_random) {
    a << Tlbwr();
  } else {
    a << Addiu(kK0, kZero, 6) << Mtc0(kK0, kIndex) << Tlbwi();
  }
  a << Eret();
  return a.Bytes();
}

// The general exception vector: the interrupt report first, then timer and disk service.
std::vector<uint8_t> General(const GuestOptions& o) {
  Asm a;
  a << Mfc0(kK0, kCause) << Sw(kK0, 0x5000, kK1) << Andi(kK0, kK0, 0x7C);
  a.Branch(Bne(kK0, kZero, 0), "other") << Nop();
  a << Dmfc0(kK0, kEpc) << Sd(kK0, 0x4000, kK1) << Mfc0(kK0, kStatus) << Sw(kK0, 0x4008, kK1);
  a << Lui(kK0, 0x8000) << Sd(kT0, 0x1000, kK0) << Sd(kT1, 0x1008, kK0);
  a << Mfc0(kT0, kCause) << Sw(kT0, 0x5000, kK1);  // read again: echoed again
  a << Andi(kT1, kT0, 0x8000);
  a.Branch(Beq(kT1, kZero, 0), "notimer") << Nop();
  a << Mfc0(kT1, kCount) << Sw(kT1, 0x5008, kK1) << Addiu(kT1, kT1, o.timer_period)
    << Mtc0(kT1, kCompare);
  a.Label("notimer");
  a << Andi(kT1, kT0, 0x0800);
  a.Branch(Beq(kT1, kZero, 0), "nodisk") << Nop();
  a << Lui(kT1, 0xBF10) << Sw(kZero, 0x14, kT1) << Addiu(kT1, kZero, 1) << Sw(kT1, 0x1100, kK0);
  a.Label("nodisk");
  a << Ld(kT0, 0x1000, kK0) << Ld(kT1, 0x1008, kK0) << Eret();
  a.Label("other");  // any other exception ends the run
  a << Lui(kK0, 0xBF20) << Sw(kZero, 8, kK0) << Nop() << Nop();
  return a.Bytes();
}

// The begin-of-trace driver, run uncached through kseg1.
std::vector<uint8_t> Driver() {
  Asm a;
  a << Addu(kK0, kRa, kZero);
  a << Lui(kT0, 0x8000) << Ori(kT1, kT0, 0x4000);
  a.Label("flush");
  a << Cache(0x01, 0, kT0) << Cache(0x00, 0, kT0) << Addiu(kT0, kT0, 16);
  a.Branch(Bne(kT0, kT1, 0), "flush") << Nop();
  a << Lui(kK1, 0xBFE0) << Lui(kT0, 0x4349) << Ori(kT0, kT0, 0x5443) << Dsll32(kT0, kT0, 0)
    << Lui(kT1, 0x4154) << Ori(kT1, kT1, 0x0001) << Or(kT0, kT0, kT1) << Sd(kT0, 0, kK1);
  for (int r :
       {0, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 26, 27, 28, 29, 30}) {
    a << Dmfc0(kT0, r) << Sd(kT0, 0x1200 + 8 * r, kK1);
  }
  for (int i = 0; i < 48; ++i) {
    a << Addiu(kT1, kZero, i) << Mtc0(kT1, kIndex) << Tlbr();
    int reg[] = {kPageMask, kEntryHi, kEntryLo0, kEntryLo1};
    for (int j = 0; j < 4; ++j) a << Dmfc0(kT0, reg[j]) << Sd(kT0, 0x2000 + 32 * i + 8 * j, kK1);
  }
  a << Ld(kT0, 0x1200, kK1) << Mtc0(kT0, kIndex) << Ld(kT0, 0x1250, kK1) << Dmtc0(kT0, kEntryHi)
    << Ld(kT0, 0x1210, kK1) << Dmtc0(kT0, kEntryLo0) << Ld(kT0, 0x1218, kK1)
    << Dmtc0(kT0, kEntryLo1) << Ld(kT0, 0x1228, kK1) << Mtc0(kT0, kPageMask);
  a << Mfhi(kT0) << Sd(kT0, 0x1100, kK1) << Mflo(kT0) << Sd(kT0, 0x1108, kK1);
  a << Dmfc0(kT0, kRandom) << Sd(kT0, 0x1208, kK1);  // 37 and 36 before the resume point
  for (int i = 0; i < 32; ++i) a << Sd(i, 0x1000 + 8 * i, kK1);
  a << Sd(kK0, 0x1110, kK1) << Jr(kK0) << Sd(kZero, 0x3000, kK1);
  return a.Bytes();
}

std::vector<uint8_t> Main(const GuestOptions& o) {
  Asm a;
  // TLB entry 5: virtual 0x00400000 -> frames 0x300/0x301, global; Wired = 8.
  a << Addiu(kT0, kZero, 5) << Mtc0(kT0, kIndex) << Lui(kT0, 0x0040) << Dmtc0(kT0, kEntryHi)
    << Ori(kT0, kZero, 0xC01F) << Dmtc0(kT0, kEntryLo0) << Ori(kT0, kZero, 0xC05F)
    << Dmtc0(kT0, kEntryLo1) << Mtc0(kZero, kPageMask) << Tlbwi() << Addiu(kT0, kZero, 8)
    << Mtc0(kT0, kWired);
  a << Lui(kT0, 0x1234) << Mult(kT0, kT0);  // HI/LO worth dumping
  // Call the driver through kseg1.
  a << Lui(kT9, 0xA001) << Ori(kT9, kT9, 0x1000) << Jalr(kRa, kT9) << Nop();
  // ---- the resume point ----
  a << Lui(kS0, 0xBF00) << Lui(kS1, 0xBF10) << Lui(kS2, 0xBF20) << Lui(kS3, 0x8000)
    << Lui(kS6, 0x8004) << Addu(kS4, kZero, kZero) << Addu(kS5, kZero, kZero);
  a << Mfc0(kT0, kCount) << Sw(kT0, 0x5008, kK1) << Addiu(kT0, kT0, o.timer_period)
    << Mtc0(kT0, kCompare);
  a << Addiu(kT0, kZero, 3) << Sw(kT0, 0, kS1) << Lui(kT0, 0x2) << Sw(kT0, 4, kS1)
    << Addiu(kT0, kZero, 2) << Sw(kT0, 8, kS1) << Addiu(kT0, kZero, 1) << Sw(kT0, 12, kS1);
  a << Sw(kZero, 0x1100, kS3);
  a << Lui(kT0, 0x1000) << Ori(kT0, kT0, 0x8801) << Mtc0(kT0, kStatus);    // CU0, IM7, IM3, IE
  a << Lui(kT1, 0x0040) << Addiu(kT2, kZero, 0x55) << Sw(kT2, 0x10, kT1);  // mapped store
  a << Lui(kT1, 0x0050) << Lw(kT2, 0, kT1) << Addu(kS5, kS5, kT2);         // TLB refill first
  if (o.read_random) a << Mfc0(kT2, kRandom) << Sw(kT2, 0x20, kS6);
  a.Label("loop");
  a << Sll(kT0, kS4, 6) << Andi(kT0, kT0, 0x7FFC) << Addu(kT0, kT0, kS6) << Lw(kT1, 0, kT0)
    << Addu(kT1, kT1, kS4) << Sw(kT1, 0, kT0) << Addu(kS5, kS5, kT1) << Andi(kT2, kS4, 63);
  a.Branch(Bne(kT2, kZero, 0), "skip") << Nop();
  // Count read and echoed with interrupts masked, so that no interrupt comes between the two.
  if (o.mask_count_reads) {
    a << Mfc0(kT4, kStatus) << Ori(kT0, kT4, 1) << Xori(kT0, kT0, 1) << Mtc0(kT0, kStatus)
      << Mfc0(kT3, kCount) << Sw(kT3, 0x5008, kK1) << Mtc0(kT4, kStatus);
  } else {
    a << Mfc0(kT3, kCount) << Sw(kT3, 0x5008, kK1);
  }
  a << Addu(kS5, kS5, kT3) << Lw(kT3, 0, kS2) << Lw(kT4, 4, kS2) << Xor(kT3, kT3, kT4)
    << Addu(kS5, kS5, kT3) << Sw(kS5, 0x40, kS6);
  a.Label("skip");
  a << Addiu(kS4, kS4, 1) << Lui(kT2, o.iterations >> 16) << Ori(kT2, kT2, o.iterations & 0xFFFF)
    << Slt(kT2, kS4, kT2);
  a.Branch(Bne(kT2, kZero, 0), "loop") << Nop();
  a << Lw(kT2, 0x1100, kS3);  // the disk is done
  a.Branch(Beq(kT2, kZero, 0), "loop") << Nop();
  // Interrupts off; drop the DMA buffer's stale lines, then sum it.
  a << Lui(kT0, 0x1000) << Mtc0(kT0, kStatus) << Lui(kT0, 0x8002) << Addiu(kT1, kT0, 1024);
  a.Label("inval");
  a << Cache(0x11, 0, kT0) << Addiu(kT0, kT0, 16);
  a.Branch(Bne(kT0, kT1, 0), "inval") << Nop();
  a << Lui(kT0, 0x8002);
  a.Label("sum");
  a << Lw(kT2, 0, kT0) << Addu(kS5, kS5, kT2) << Addiu(kT0, kT0, 4);
  a.Branch(Bne(kT0, kT1, 0), "sum") << Nop();
  a << Sw(kS5, 0, kS0) << Srl(kT0, kS5, 8) << Sw(kT0, 0, kS0) << Sd(kS5, 0x6000, kK1)
    << Sw(kZero, 8, kS2) << Nop() << Nop();
  return a.Bytes();
}

}  // namespace

GuestCapture CaptureGuest(uint64_t seed, const GuestOptions& options, const std::string& cat_path) {
  machine::R4400Options mo;
  mo.seed = seed;
  mo.disk.resize(8 * 512);
  for (size_t i = 0; i < mo.disk.size(); ++i) mo.disk[i] = static_cast<uint8_t>(i * 7 + seed);
  mo.producer = "replay test guest";
  auto machine = machine::R4400Machine::Create(mo);
  EXPECT_TRUE(machine.ok()) << machine.status();
  std::vector<machine::LoadSegment> segments;
  auto add = [&](uint64_t paddr, std::vector<uint8_t> bytes) {
    machine::LoadSegment s{paddr, bytes.size(), std::move(bytes)};
    segments.push_back(std::move(s));
  };
  add(kRefillPhys, Refill(options));
  add(kGeneralPhys, General(options));
  add(kMainPhys, Main(options));
  add(kDriverPhys, Driver());
  EXPECT_LE(segments[2].size, kDriverPhys - kMainPhys);
  EXPECT_TRUE((*machine)->Load(segments, 0xFFFFFFFF80000000ull + kMainPhys).ok());
  auto writer = cat::CatWriter::Create(cat_path, (*machine)->Header());
  EXPECT_TRUE(writer.ok()) << writer.status();
  auto summary = (*machine)->Run(writer->get(), 1'000'000'000, 2'000'000'000);
  EXPECT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE((*writer)->Finish().ok());
  return {*summary, (*machine)->console(), (*machine)->Header()};
}

}  // namespace citcat::replay_test
