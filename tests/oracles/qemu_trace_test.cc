// The QEMU log parser on hand-written logs in the exact format of qemu-user 7.2 (`-d cpu,fpu`),
// for 64-bit (FR=1) and 32-bit (FR=0) targets, and its errors on damaged logs; the exception and
// icount records of full-system logs; the streaming interface.
#include "tests/oracles/qemu_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "tests/oracles/lockstep.h"

namespace citcat::oracle {
namespace {

std::string Gprs64(uint64_t base) {
  std::string out;
  char buf[128];
  for (int row = 0; row < 8; ++row) {
    snprintf(buf, sizeof buf, "GPR%02d:", row * 4);
    out += buf;
    for (int k = 0; k < 4; ++k) {
      const int r = row * 4 + k;
      snprintf(buf, sizeof buf, " r%d %016llx", r,
               static_cast<unsigned long long>(r == 0 ? 0 : base + r));
      out += buf;
    }
    out += "\n";
  }
  return out;
}

// "f7": not "f" + std::to_string(i), in which GCC 12 at -O3 sees a false -Wrestrict.
std::string FprName(int i) {
  char name[16];
  snprintf(name, sizeof name, "f%d", i);
  return name;
}

std::string Block64(uint64_t pc, bool with_fpu) {
  char buf[256];
  snprintf(buf, sizeof buf,
           "pc=0x%016llx HI=0x0000000000000011 LO=0xffffffff80000000 ds 026a 0000000000000000 0\n",
           static_cast<unsigned long long>(pc));
  std::string out = buf;
  out += Gprs64(0x100000000ull);
  out +=
      "CP0 Status  0x24800010 Cause   0x00000000 EPC    0x0000000000000000\n"
      "    Config0 0x00028242 Config1 0x5e000001 LLAddr 0x0000000000000000\n"
      "    Config2 0x00000000 Config3 0x00000000\n"
      "    Config4 0x00000000 Config5 0x00000000\n";
  if (with_fpu) {
    out += "CP1 FCR0 0x00000500  FCR31 0x01800003  SR.FR 1  fp_status 0x00\n";
    for (int i = 0; i < 32; ++i) {
      snprintf(buf, sizeof buf,
               "%3s: w:%08x d:%016llx fd:            0 fs:            0 psu:   0\n",
               FprName(i).c_str(), 0x100 + i,
               static_cast<unsigned long long>(0x4000000000000000ull + i));
      out += buf;
    }
  }
  return out;
}

TEST(QemuTraceParse, SixtyFourBitWithFpu) {
  const std::string log = "QEMU chatter before the first block\n" + Block64(0x10000110, true) +
                          Block64(0x10000114, true);
  auto trace = QemuTrace::Parse(log);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->size(), 2u);
  const QemuState& s = (*trace)[0];
  EXPECT_EQ(s.pc, 0x10000110u);
  EXPECT_EQ((*trace)[1].pc, 0x10000114u);
  EXPECT_EQ(s.hi, 0x11u);
  EXPECT_EQ(s.lo, 0xffffffff80000000ull);
  EXPECT_EQ(s.hflags, 0x26au);
  EXPECT_TRUE(s.gpr64);
  EXPECT_EQ(s.gpr[0], 0u);
  EXPECT_EQ(s.gpr[31], 0x100000000ull + 31);
  EXPECT_EQ(s.cp0_status, 0x24800010u);
  EXPECT_TRUE(s.has_fpu);
  EXPECT_TRUE(s.fr);
  EXPECT_EQ(s.fcr0, 0x500u);
  EXPECT_EQ(s.fcr31, 0x01800003u);
  EXPECT_EQ(s.fgr[7], 0x4000000000000007ull);
  EXPECT_EQ(s.FprWord(7), 7u);
  EXPECT_EQ(s.FprDouble(7), 0x4000000000000007ull);
}

TEST(QemuTraceParse, ThirtyTwoBitFr0) {
  // qemu-mips prints 32-bit GPRs and, with FR=0, only the even FPU registers holding the pair.
  std::string log =
      "pc=0x00400110 HI=0x00000000 LO=0x00000000 ds 00a2 00000000 0\n"
      "GPR00: r0 00000000 at 00000001 v0 00000002 v1 00000003\n"
      "GPR04: a0 00000000 a1 00000000 a2 00000000 a3 00000000\n"
      "GPR08: t0 00000000 t1 00000000 t2 00000000 t3 00000000\n"
      "GPR12: t4 00000000 t5 00000000 t6 00000000 t7 00000000\n"
      "GPR16: s0 00000000 s1 00000000 s2 00000000 s3 00000000\n"
      "GPR20: s4 00000000 s5 00000000 s6 00000000 s7 00000000\n"
      "GPR24: t8 00000000 t9 00000000 k0 00000000 k1 00000000\n"
      "GPR28: gp 00000000 sp 40800930 s8 00000000 ra 00000000\n"
      "CP0 Status  0x20000010 Cause   0x00000000 EPC    0x00000000\n"
      "CP1 FCR0 0x00739300  FCR31 0x00000000  SR.FR 0  fp_status 0x00\n";
  for (int i = 0; i < 32; i += 2) {
    char buf[160];
    snprintf(buf, sizeof buf, "%3s: w:%08x d:%08x%08x fd: 1 fs: 2 psu: 3\n", FprName(i).c_str(),
             0x1000 + i, 0x2000 + i, 0x1000 + i);
    log += buf;
  }
  auto trace = QemuTrace::Parse(log);
  ASSERT_TRUE(trace.ok()) << trace.status();
  const QemuState& s = (*trace)[0];
  EXPECT_FALSE(s.gpr64);
  EXPECT_FALSE(s.fr);
  EXPECT_EQ(s.gpr[29], 0x40800930u);
  EXPECT_EQ(s.FprWord(4), 0x1004u);
  EXPECT_EQ(s.FprWord(5), 0x2004u);
  EXPECT_EQ(s.FprDouble(4), 0x0000200400001004ull);
  EXPECT_EQ(s.FprDouble(5), 0x0000200400001004ull);
  // Lock-step view: a snapshot of the same state has no differences; a changed one does.
  ArchSnapshot snap = SnapshotFromQemu(s);
  EXPECT_EQ(DiffStates(s, snap), "");
  snap.gpr[2] = 0xFFFFFFFF00000002ull;  // 32-bit target: high half not compared
  EXPECT_EQ(DiffStates(s, snap), "");
  snap.fgr[5] = 0x2005;
  EXPECT_EQ(DiffStates(s, snap), "f5: qemu 0000000000002004, model 0000000000002005\n");
}

TEST(QemuTraceParse, WithoutFpuBlock) {
  auto trace = QemuTrace::Parse(Block64(0x1000, false));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_FALSE((*trace)[0].has_fpu);
}

TEST(QemuTraceParse, Errors) {
  const std::string good = Block64(0x1000, true);
  // An incomplete last block (log cut short).
  auto cut = QemuTrace::Parse(good.substr(0, good.size() / 2));
  EXPECT_FALSE(cut.ok());
  // A damaged value.
  std::string bad = good;
  bad.replace(bad.find("GPR08: r8 "), 14, "GPR08: r8 zz00");
  auto damaged = QemuTrace::Parse(bad);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("line"), std::string::npos);
  // A malformed pc line.
  EXPECT_FALSE(QemuTrace::Parse("pc=0xQQ HI=0x0 LO=0x0 ds 0 0 0\n").ok());
  // Missing registers.
  std::string missing = good;
  missing.erase(missing.find("GPR12"), missing.find("GPR16") - missing.find("GPR12"));
  EXPECT_FALSE(QemuTrace::Parse(missing).ok());
  // Nothing at all is an empty trace, not an error.
  auto empty = QemuTrace::Parse("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(QemuTrace::ParseFile("/nonexistent/log").ok());
}

// Full-system logs (`-d cpu,exec,int,nochain`): an exception entry belongs to the state after it,
// and a state followed by "Stopped execution of TB chain" never ran.
TEST(QemuTraceParse, FullSystemExceptionsAndStoppedStates) {
  const std::string trace_line =
      "Trace 0: 0x7f632c000100 [0/ffffffffbfc00000/10000018/ff020201] \n";
  const std::string log =
      trace_line + Block64(0xbfc0001c, false) +
      "do_raise_exception_err: 17 (syscall) 0\n"
      "mips_cpu_do_interrupt enter: PC ffffffffbfc0001c EPC 0000000000000000 syscall exception\n"
      "mips_cpu_do_interrupt: PC ffffffffbfc00380 EPC ffffffffbfc0001c cause 8\n"
      "    S 00400006 C 00000020 A 00000000000000f0 D 0000000000000000\n" +
      trace_line + Block64(0xbfc00380, false) +
      "Stopped execution of TB chain before 0x7f632c000240 [ffffffffbfc00380] \n" + trace_line +
      Block64(0xbfc00380, false) + trace_line + Block64(0xbfc00384, false);
  auto trace = QemuTrace::Parse(log);
  ASSERT_TRUE(trace.ok()) << trace.status();
  ASSERT_EQ(trace->size(), 3u);
  EXPECT_FALSE((*trace)[0].exception_before);
  const QemuState& vector = (*trace)[1];
  EXPECT_EQ(vector.pc, 0xbfc00380u);
  ASSERT_TRUE(vector.exception_before);  // kept for the state that ran
  EXPECT_EQ(vector.exception.qemu_code, 8);
  EXPECT_EQ(vector.exception.vector, 0xffffffffbfc00380u);
  EXPECT_EQ(vector.exception.epc, 0xffffffffbfc0001cu);
  EXPECT_EQ(vector.exception.status, 0x00400006u);
  EXPECT_EQ(vector.exception.cause, 0x20u);
  EXPECT_EQ(vector.exception.bad_vaddr, 0xf0u);
  EXPECT_FALSE((*trace)[2].exception_before);

  EXPECT_FALSE(
      QemuTrace::Parse(Block64(0x1000, false) + "mips_cpu_do_interrupt: PC zz EPC 0 cause 8\n")
          .ok());
}

// The streaming parser hands states over as they complete and stops when told to.
TEST(QemuLogParser, StreamsAndStops) {
  const std::string log = Block64(0x1000, false) + Block64(0x1004, false) + Block64(0x1008, false);
  std::vector<uint64_t> pcs;
  QemuLogParser parser([&](const QemuState& s) {
    pcs.push_back(s.pc);
    return pcs.size() < 2;
  });
  absl::Status status;
  size_t pos = 0;
  while (status.ok() && pos < log.size()) {
    const size_t end = log.find('\n', pos);
    status = parser.Line(std::string_view(log).substr(pos, end - pos));
    pos = end + 1;
  }
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(pcs, (std::vector<uint64_t>{0x1000, 0x1004}));
}

TEST(QemuTraceParse, EveryTruncationIsHandled) {
  const std::string log = Block64(0x1000, true) + Block64(0x1004, true);
  for (size_t n = 0; n < log.size(); n += 7) {
    auto t = QemuTrace::Parse(log.substr(0, n));
    if (t.ok()) {
      EXPECT_LE(t->size(), 2u);
    }
  }
}

}  // namespace
}  // namespace citcat::oracle
