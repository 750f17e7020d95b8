#include "bench/unicorn_tracer.h"

#include <fcntl.h>
#include <unicorn/unicorn.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "machine/elf_loader.h"
#include "simcore/mips/decoder.h"
#include "traces/champsim.h"

namespace citcat::bench {
namespace {

// The user address space of the guest kernel: programs from 0x00400000, the stack below 8 MB
// (guest/r4400/sdk/user.ld), sp 32 bytes below its top, a0 the task number.
constexpr uint64_t kUserBase = 0x00400000, kUserTop = 0x00800000;
constexpr int kSyscall = 17;  // QEMU's EXCP_SYSCALL, as UC_HOOK_INTR reports it
constexpr uint32_t kSysExit = 1, kSysWrite = 2;

using Bytes = std::array<char, traces::champsim::kRecordBytes>;

// What an instruction word gives every record of it: ip, is_branch and the registers (MIPS
// register n is ChampSim's n + 32, as CITCAT numbers them), worked out once per PC.
struct Template {
  uint64_t pc = ~uint64_t{0};
  Bytes bytes{};
  bool delay_branch = false;  // its record waits for its delay slot's (ChampSim has no slots)
  bool likely = false;        // a branch-likely: not taken, its slot does not run
};

Template MakeTemplate(uint64_t pc, uint32_t word) {
  const mips::InstructionInfo info = mips::Describe(word);
  traces::champsim::InputInstr in;
  in.ip = pc;
  in.is_branch = info.flow == mips::Flow::kBranch || info.flow == mips::Flow::kJump ||
                 info.flow == mips::Flow::kJumpRegister;
  int nsrc = 0, ndst = 0;
  if (in.is_branch) {
    in.source_registers[nsrc++] = traces::champsim::kInstructionPointer;
    in.destination_registers[ndst++] = traces::champsim::kInstructionPointer;
  }
  for (uint32_t m = info.gpr_read & ~1u; m != 0 && nsrc < 4; m &= m - 1) {
    in.source_registers[nsrc++] = static_cast<uint8_t>(32 + std::countr_zero(m));
  }
  for (uint32_t m = info.gpr_written & ~1u; m != 0 && ndst < 2; m &= m - 1) {
    in.destination_registers[ndst++] = static_cast<uint8_t>(32 + std::countr_zero(m));
  }
  Template t;
  t.pc = pc;
  traces::champsim::Encode(in, t.bytes.data());
  t.delay_branch = in.is_branch && info.delay_slot;
  t.likely = info.likely;
  return t;
}

class Tracer {
 public:
  Tracer(uc_engine* uc, int fd) : uc_(uc), fd_(fd), buffer_(kBufferBytes), memo_(kMemo) {}

  static void OnCode(uc_engine*, uint64_t address, uint32_t, void* self) {
    static_cast<Tracer*>(self)->Code(address);
  }
  static void OnMemory(uc_engine*, uc_mem_type type, uint64_t address, int, int64_t, void* self) {
    static_cast<Tracer*>(self)->Memory(type == UC_MEM_WRITE, address);
  }
  static void OnInterrupt(uc_engine*, uint32_t number, void* self) {
    static_cast<Tracer*>(self)->Interrupt(number);
  }

  // Writes what is left; false on a write error.
  bool Finish() {
    if (has_current_) Retire(~uint64_t{0});
    if (has_branch_) Write(branch_);
    has_branch_ = false;
    return Flush();
  }

  UnicornTrace result;

 private:
  static constexpr size_t kBufferBytes = size_t{1} << 20;
  static constexpr size_t kMemo = 4096;

  void Code(uint64_t pc) {
    ++result.instructions;
    if (has_current_) Retire(pc);
    Start(pc);
  }

  // A new record for the instruction at pc; a held branch whose slot did not run (a
  // branch-likely not taken) goes first.
  void Start(uint64_t pc) {
    if (has_branch_ && pc != branch_pc_ + 4) {
      branch_[9] = pc != branch_pc_ + 8;
      Write(branch_);
      has_branch_ = false;
    }
    Template& t = memo_[(pc >> 2) & (kMemo - 1)];
    if (t.pc != pc) t = MakeTemplate(pc, Word(pc));
    current_ = t.bytes;
    current_pc_ = pc;
    current_branch_ = t.delay_branch;
    current_likely_ = t.likely;
    loads_ = stores_ = 0;
    has_current_ = true;
  }

  // The current instruction is done and execution went on at `next`.
  void Retire(uint64_t next) {
    has_current_ = false;
    if (current_branch_) {
      branch_ = current_;
      branch_pc_ = current_pc_;
      branch_likely_ = current_likely_;
      has_branch_ = true;
      return;
    }
    if (!has_branch_ || current_pc_ != branch_pc_ + 4) {
      Write(current_);
      return;
    }
    // The delay slot. Unicorn calls the code hook for the slot of a branch-likely not taken
    // too, though it does not run it.
    const bool taken = next != branch_pc_ + 8;
    if (taken || !branch_likely_) Write(current_);
    branch_[9] = taken;
    Write(branch_);
    has_branch_ = false;
  }

  void Memory(bool store, uint64_t address) {
    if (store && stores_ < 2) {
      traces::champsim::PutLe64(address, current_.data() + 16 + 8 * stores_++);
    } else if (!store && loads_ < 4) {
      traces::champsim::PutLe64(address, current_.data() + 32 + 8 * loads_++);
    }
  }

  // The guest kernel's system calls the program makes: v0 the number, a0.. the arguments.
  void Interrupt(uint32_t number) {
    if (number != kSyscall) {
      uc_emu_stop(uc_);
      return;
    }
    ++result.syscalls;
    uint32_t v0 = 0, a0 = 0, a1 = 0;
    uc_reg_read(uc_, UC_MIPS_REG_V0, &v0);
    uc_reg_read(uc_, UC_MIPS_REG_A0, &a0);
    uc_reg_read(uc_, UC_MIPS_REG_A1, &a1);
    if (v0 == kSysExit) {
      result.exit_code = static_cast<int>(a0);
      uc_emu_stop(uc_);
      return;
    }
    const uint32_t value = v0 == kSysWrite ? a1 : 0;
    uc_reg_write(uc_, UC_MIPS_REG_V0, &value);
  }

  uint32_t Word(uint64_t pc) {
    uint8_t b[4] = {};
    uc_mem_read(uc_, pc, b, 4);
    return mips::BytesWord(b, /*big_endian=*/true);
  }

  void Write(const Bytes& record) {
    if (used_ + record.size() > buffer_.size()) Flush();
    std::memcpy(buffer_.data() + used_, record.data(), record.size());
    used_ += record.size();
    ++result.records;
  }

  bool Flush() {
    const bool ok = ::write(fd_, buffer_.data(), used_) == static_cast<ssize_t>(used_);
    used_ = 0;
    return ok;
  }

  uc_engine* uc_;
  int fd_;
  std::vector<char> buffer_;
  size_t used_ = 0;
  std::vector<Template> memo_;
  Bytes current_{}, branch_{};
  uint64_t current_pc_ = 0, branch_pc_ = 0;
  bool current_branch_ = false, current_likely_ = false, branch_likely_ = false;
  bool has_current_ = false, has_branch_ = false;
  int loads_ = 0, stores_ = 0;
};

absl::Status Load(uc_engine* uc, const machine::ElfImage& elf) {
  if (uc_mem_map(uc, kUserBase, kUserTop - kUserBase, UC_PROT_ALL) != UC_ERR_OK) {
    return absl::InternalError("uc_mem_map failed");
  }
  for (const machine::ElfSegment& s : elf.segments) {
    if (s.vaddr < kUserBase || s.vaddr + s.memsz > kUserTop) {
      return absl::InvalidArgumentError("a segment outside the user space");
    }
    uc_mem_write(uc, s.vaddr, s.data.data(), s.data.size());
  }
  const uint32_t sp = kUserTop - 32, a0 = 0;
  uc_reg_write(uc, UC_MIPS_REG_SP, &sp);
  uc_reg_write(uc, UC_MIPS_REG_A0, &a0);
  return absl::OkStatus();
}

absl::StatusOr<UnicornTrace> Run(uc_engine* uc, const machine::ElfImage& elf, int fd) {
  if (absl::Status s = Load(uc, elf); !s.ok()) return s;
  Tracer tracer(uc, fd);
  uc_hook code, memory, interrupt;
  uc_hook_add(uc, &code, UC_HOOK_CODE, reinterpret_cast<void*>(&Tracer::OnCode), &tracer, 1, 0);
  uc_hook_add(uc, &memory, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
              reinterpret_cast<void*>(&Tracer::OnMemory), &tracer, 1, 0);
  uc_hook_add(uc, &interrupt, UC_HOOK_INTR, reinterpret_cast<void*>(&Tracer::OnInterrupt), &tracer,
              1, 0);
  const uc_err err = uc_emu_start(uc, elf.entry, 0, 0, 0);
  if (err != UC_ERR_OK) return absl::InternalError(uc_strerror(err));
  if (!tracer.Finish()) return absl::InternalError("cannot write the trace");
  return tracer.result;
}

}  // namespace

absl::StatusOr<UnicornTrace> TraceWithUnicorn(const std::string& elf_path,
                                              const std::string& out_path) {
  absl::StatusOr<machine::ElfImage> elf = machine::LoadElfFile(elf_path);
  if (!elf.ok()) return elf.status();
  const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot create ", out_path));
  uc_engine* uc = nullptr;
  absl::StatusOr<UnicornTrace> result = absl::InternalError("uc_open failed");
  if (uc_open(UC_ARCH_MIPS, static_cast<uc_mode>(UC_MODE_MIPS32 | UC_MODE_BIG_ENDIAN), &uc) ==
      UC_ERR_OK) {
    result = Run(uc, *elf, fd);
    uc_close(uc);
  }
  ::close(fd);
  return result;
}

}  // namespace citcat::bench
