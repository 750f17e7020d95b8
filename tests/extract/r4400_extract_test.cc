// Extraction from hand-written R4400 CATs: the state dump becomes the IMS, the rest the AES and
// the first-touch memory image; inconsistent traces are refused with the record named.
#include <algorithm>
#include <functional>
#include <string>

#include "cat_parser/reader.h"
#include "cat_parser/text.h"
#include "extract/extractor.h"
#include "extract/r4400_contract.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "machine/r4400/machine.h"

namespace citcat::extract {
namespace {

using ::testing::HasSubstr;

// A CAT from the text form: the R4400 machine's header, then `records`.
absl::StatusOr<Extraction> ExtractText(const std::string& records,
                                       cat::Machine machine = cat::Machine::kR4400,
                                       const std::function<void(cat::CatHeader&)>& edit = {}) {
  machine::R4400Options options;
  auto m = machine::R4400Machine::Create(options);
  cat::CatHeader header = (*m)->Header();
  header.machine = machine;
  if (edit) edit(header);
  std::string text = cat::HeaderToText(header) + records;
  auto in = io::InputFile::FromMemory("t.txt",
                                      {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  // One file per test: ctest runs the cases of this table as parallel processes.
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(test->test_suite_name()) + "." + test->name();
  std::replace(name.begin(), name.end(), '/', '_');
  const std::string path = ::testing::TempDir() + "/extract-test-" + name + ".cat";
  absl::StatusOr<uint64_t> n = cat::AssembleText(*in, path);
  if (!n.ok()) return n.status();
  auto reader = cat::CatReader::Open(path);
  if (!reader.ok()) return reader.status();
  R4400Contract contract;
  return Extract(**reader, contract);
}

constexpr char kBegin[] = "uncached-write addr=0x1fe00000 bc=0 data=4349544341540001\n";
constexpr char kDone[] = "uncached-write addr=0x1fe03000 bc=9 data=0000000000000000\n";

constexpr char kTrace[] = R"(
uncached-read  addr=0x1000 bc=0 data=3c1abfe0                  # the driver's own fetch
uncached-write addr=0x1fe01008 bc=0 data=0000000000000011      # GPR 1
uncached-write addr=0x1fe010f8 bc=0 data=ffffffff80001234      # GPR 31
uncached-write addr=0x1fe01110 bc=0 data=ffffffff80020000      # resume PC
uncached-write addr=0x1fe01260 bc=0 data=000000003400ff01      # CP0 12 Status
uncached-write addr=0x1fe01234 bc=0 data=00000008              # CP0 6 Wired, low half
uncached-write addr=0x1fe01208 bc=0 data=0000000000000020      # CP0 1 Random
uncached-write addr=0x1fe02028 bc=0 data=0000000000402000      # TLB 1 EntryHi
uncached-write addr=0x1fe03000 bc=9 data=0000000000000000      # state done
fill           addr=0x20000 bc=10 flags=code data=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
write-back     addr=0x30000 bc=12 data=1111111111111111111111111111111111111111111111111111111111111111
fill           addr=0x30000 bc=13 data=2222222222222222222222222222222222222222222222222222222222222222
uncached-read  addr=0x1f100010 bc=14 data=00000002             # disk status
uncached-write addr=0x1f100014 bc=14 data=00000000             # disk acknowledge
dma-write      addr=0x40000 bc=15 master=disk data=aabbccdd
uncached-write addr=0x1fe05000 bc=20 data=00008000             # Cause echo: IP7
uncached-write addr=0x1fe04000 bc=21 data=ffffffff80020040      # interrupt report: EPC
uncached-write addr=0x1fe04008 bc=21 data=3400ff03              # Status
uncached-write addr=0x1fe05008 bc=30 data=00012345             # Count echo
fill           addr=0x40000 bc=31 data=aabbccdd00000000000000000000000000000000000000000000000000000000
dma-read       addr=0x50000 bc=32 master=disk data=5566
)";

TEST(R4400Extract, StateDumpBecomesTheIms) {
  auto x = ExtractText(std::string(kBegin) + kTrace);
  ASSERT_TRUE(x.ok()) << x.status();
  const ims::InitialMachineState& ims = x->ims;
  ASSERT_TRUE(ims.has_mips());
  EXPECT_EQ(ims.description().machine(), ims::MACHINE_R4400);
  EXPECT_EQ(ims.description().memory_bytes(), 32u << 20);
  const ims::MipsState& s = ims.mips();
  ASSERT_EQ(s.gpr_size(), 32);
  EXPECT_EQ(s.gpr(1), 0x11u);
  EXPECT_EQ(s.gpr(31), 0xFFFFFFFF80001234ull);
  EXPECT_EQ(s.pc(), 0xFFFFFFFF80020000ull);
  EXPECT_EQ(s.cp0().status(), 0x3400FF01u);
  EXPECT_EQ(s.cp0().wired(), 8u);
  // Random 32 was read 37 instructions before the resume point; with Wired 8 it cycles over
  // 8..47, so replay starts from 32 - 37 wrapped: 35.
  EXPECT_EQ(s.cp0().random(), 35u);
  EXPECT_EQ(s.tlb_size(), 48);
  EXPECT_EQ(s.tlb(1).entry_hi(), 0x402000u);
  EXPECT_EQ(ims.start().branch_count(), 10u);  // state-done's side band + 1 for the final jr
  EXPECT_EQ(ims.start().cat_record(), 10u);
}

TEST(R4400Extract, FirstTouchMemoryImage) {
  auto x = ExtractText(std::string(kBegin) + kTrace);
  ASSERT_TRUE(x.ok()) << x.status();
  // The code fill is known; the written-back line was written first (left out); the DMA'd bytes
  // come from the AES, the rest of that line from the fill; the DMA read's bytes are known.
  ASSERT_EQ(x->ims.memory_size(), 3);
  EXPECT_EQ(x->ims.memory(0).address(), 0x20000u);
  EXPECT_EQ(x->ims.memory(0).data().size(), 32u);
  EXPECT_EQ(x->ims.memory(1).address(), 0x40004u);
  EXPECT_EQ(x->ims.memory(1).data().size(), 28u);
  EXPECT_EQ(x->ims.memory(2).address(), 0x50000u);
  EXPECT_EQ(x->ims.memory(2).data(), "\x55\x66");
}

TEST(R4400Extract, EventsBecomeTheAes) {
  auto x = ExtractText(std::string(kBegin) + kTrace);
  ASSERT_TRUE(x.ok()) << x.status();
  const aes::EventSchedule& aes = x->aes;
  ASSERT_EQ(aes.interrupts_size(), 1);
  EXPECT_EQ(aes.interrupts(0).branch_count(), 19u);  // report's side band - 2
  EXPECT_EQ(aes.interrupts(0).pc(), 0xFFFFFFFF80020040ull);
  EXPECT_EQ(aes.interrupts(0).cause_ip(), 0x80u);
  ASSERT_EQ(aes.dma_size(), 2);
  EXPECT_TRUE(aes.dma(0).to_memory());
  EXPECT_EQ(aes.dma(0).after_cpu_transactions(), 5u);
  EXPECT_EQ(aes.dma(0).device(), 2u);
  EXPECT_EQ(aes.dma(0).branch_count(), 15u);
  EXPECT_FALSE(aes.dma(1).to_memory());
  ASSERT_EQ(aes.device_io_size(), 2);
  EXPECT_FALSE(aes.device_io(0).write());
  EXPECT_EQ(aes.device_io(0).data(), std::string("\0\0\0\2", 4));
  EXPECT_TRUE(aes.device_io(1).write());
  ASSERT_EQ(aes.register_reads_size(), 2);
  EXPECT_EQ(aes.register_reads(0).register_(), aes::RegisterRead::REGISTER_MIPS_CAUSE);
  EXPECT_EQ(aes.register_reads(1).register_(), aes::RegisterRead::REGISTER_MIPS_COUNT);
  EXPECT_EQ(aes.register_reads(1).value(), 0x12345u);
  EXPECT_EQ(aes.end().cat_records(), 12u);
  EXPECT_EQ(aes.end().cpu_transactions(), 10u);
  EXPECT_EQ(aes.end().branch_count(), 32u);
}

struct Inconsistent {
  std::string name, records, error;
};
void PrintTo(const Inconsistent& c, std::ostream* os) { *os << c.name; }

class R4400ExtractErrors : public ::testing::TestWithParam<Inconsistent> {};

TEST_P(R4400ExtractErrors, NameTheRecord) {
  auto x = ExtractText(GetParam().records);
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(std::string(x.status().message()), HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Table, R4400ExtractErrors,
    ::testing::Values(
        Inconsistent{"Empty", "", "the trace holds no records"},
        Inconsistent{"NoBeginMarker", "uncached-write addr=0x1fe04000 bc=5 data=ffffffff80020040\n",
                     "record 0: the trace does not start with the begin-of-trace marker"},
        Inconsistent{"EndsInsideTheDump",
                     std::string(kBegin) + "uncached-write addr=0x1fe01008 bc=0 data=00\n",
                     "ends inside the begin-of-trace state dump"},
        Inconsistent{
            "ReportInsideTheDump",
            std::string(kBegin) + "uncached-write addr=0x1fe04000 bc=5 data=ffffffff80020040\n",
            "record 1: an interrupt report inside the state dump"},
        Inconsistent{"ReportWithoutCause",
                     std::string(kBegin) + kDone +
                         "uncached-write addr=0x1fe04000 bc=15 data=ffffffff80020040\n",
                     "record 2: an interrupt report without its Cause echo"},
        Inconsistent{
            "DmaOutsideMemory",
            std::string(kBegin) + kDone + "dma-write addr=0x7ffffff0 bc=15 master=disk data=00\n",
            "record 2: DMA outside main memory"},
        Inconsistent{"SecondBeginMarker", std::string(kBegin) + kDone + kBegin,
                     "record 2: a second state dump inside the trace"},
        Inconsistent{"PortIoOnR4400",
                     std::string(kBegin) + kDone + "port-read addr=0x3f8 bc=12 data=00\n",
                     "record 2: a port-read record on an R4400 bus"}),
    [](const auto& info) { return info.param.name; });

TEST(R4400Extract, RefusesAHeaderWhoseDumpAreaIsTooSmall) {
  auto x = ExtractText(std::string(kBegin) + kTrace, cat::Machine::kR4400,
                       [](cat::CatHeader& h) { h.magic[1].size = 0x100; });
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(std::string(x.status().message()),
              HasSubstr("the reserved area 'cpu-state' has 256 bytes, the R4400 system's 4096"));
}

TEST(R4400Extract, RefusesAHeaderWithoutAnArea) {
  auto x = ExtractText(std::string(kBegin) + kTrace, cat::Machine::kR4400,
                       [](cat::CatHeader& h) { h.magic.pop_back(); });
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(std::string(x.status().message()),
              HasSubstr("header lacks the reserved area 'console' of the R4400 system"));
}

TEST(R4400Extract, RefusesACatOfAnotherMachine) {
  auto x = ExtractText(kBegin, cat::Machine::kI486);
  ASSERT_FALSE(x.ok());
  EXPECT_THAT(std::string(x.status().message()), HasSubstr("a CAT of the i486, not the r4400"));
}

// ---- traces from reset ----

cat::CatHeader FromResetHeader(uint32_t line = 32) {
  machine::R4400Options options;
  options.from_reset = true;
  options.icache_line = options.dcache_line = line;
  auto m = machine::R4400Machine::Create(options);
  return (*m)->Header();
}

// The values docs/machines/r4400-system.md lists, "Traces from reset".
TEST(R4400ResetState, IsTheDocumentedColdReset) {
  for (uint32_t line : {16u, 32u}) {
    SCOPED_TRACE(line);
    ims::InitialMachineState ims;
    ASSERT_TRUE(R4400Contract::ResetStateFor(FromResetHeader(line), ims).ok());
    const ims::MipsState& s = ims.mips();
    EXPECT_EQ(s.pc(), 0xFFFFFFFFBFC00000u);
    ASSERT_EQ(s.gpr_size(), 32);
    ASSERT_EQ(s.fgr_size(), 32);
    ASSERT_EQ(s.tlb_size(), 48);
    for (int i = 0; i < 32; ++i) EXPECT_EQ(s.gpr(i), 0u) << i;
    for (int i = 0; i < 32; ++i) EXPECT_EQ(s.fgr(i), 0u) << i;
    EXPECT_EQ(s.hi(), 0u);
    EXPECT_EQ(s.lo(), 0u);
    EXPECT_FALSE(s.ll_bit());
    EXPECT_EQ(s.fcr31(), 0u);
    const ims::MipsCp0& c = s.cp0();
    EXPECT_EQ(c.status(), 0x00400004u);  // BEV, ERL
    EXPECT_EQ(c.random(), 47u);
    EXPECT_EQ(c.wired(), 0u);
    EXPECT_EQ(c.prid(), 0x0440u);
    // SC (no secondary cache), BE, IC = DC = 16 KB, IB/DB from the line size, K0 = 3.
    EXPECT_EQ(c.config(), line == 32 ? 0x000284B3u : 0x00028483u);
    ims::MipsCp0 zero = c;
    zero.clear_status();
    zero.clear_random();
    zero.clear_prid();
    zero.clear_config();
    EXPECT_EQ(zero.ByteSizeLong(), 0u) << zero.DebugString();  // everything else is 0
    for (const ims::MipsTlbEntry& e : s.tlb()) EXPECT_EQ(e.ByteSizeLong(), 0u);
  }
}

TEST(R4400ResetState, ExtractionOfATraceFromResetStartsThere) {
  const cat::CatHeader header = FromResetHeader();
  std::string text = cat::HeaderToText(header) +
                     "uncached-read  addr=0x1fc00000 bc=0 flags=code data=3c08bf00\n"
                     "uncached-write addr=0x1fc00010 bc=0 data=00000001\n"
                     "uncached-write addr=0x1fe04000 bc=0 data=ffffffff80020040\n"
                     "uncached-read  addr=0x1fc00010 bc=0 flags=code data=00000000\n";
  auto in = io::InputFile::FromMemory("t.txt",
                                      {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
  const std::string path = ::testing::TempDir() + "/extract-test-from-reset.cat";
  ASSERT_TRUE(cat::AssembleText(*in, path).ok());
  auto reader = cat::CatReader::Open(path);
  ASSERT_TRUE(reader.ok());
  R4400Contract contract;
  auto x = Extract(**reader, contract);
  ASSERT_TRUE(x.ok()) << x.status();
  ims::InitialMachineState reset;
  ASSERT_TRUE(R4400Contract::ResetStateFor(header, reset).ok());
  EXPECT_EQ(x->ims.mips().SerializeAsString(), reset.mips().SerializeAsString());
  EXPECT_TRUE(x->ims.start().from_reset());
  // The ROM's bytes are memory; the write to the ROM is lost, so the word read after it is one
  // the ROM held from the start. The store to `exception` is no interrupt report (no kernel, no
  // hooks).
  ASSERT_EQ(x->ims.memory_size(), 2);
  EXPECT_EQ(x->ims.memory(0).address(), 0x1FC00000u);
  EXPECT_EQ(x->ims.memory(0).data(), std::string("\x3c\x08\xbf\x00", 4));
  EXPECT_EQ(x->ims.memory(1).address(), 0x1FC00010u);
  EXPECT_EQ(x->ims.memory(1).data(), std::string(4, '\0'));
  EXPECT_EQ(x->aes.interrupts_size(), 0);
  EXPECT_EQ(x->aes.device_io_size(), 0);
  EXPECT_EQ(x->ims.description().rom_base(), 0x1FC00000u);
  EXPECT_EQ(x->ims.description().rom_bytes(), 0x200000u);
}

TEST(R4400ResetState, RefusesCachesTheCoreDoesNotModel) {
  cat::CatHeader header = FromResetHeader();
  header.caches[0].type = cat::CacheType::kUnified;
  ims::InitialMachineState ims;
  EXPECT_THAT(std::string(R4400Contract::ResetStateFor(header, ims).message()),
              HasSubstr("a cache the R4400 core does not model"));
}

}  // namespace
}  // namespace citcat::extract
