// ChampSim's binary trace: one 64-byte `input_instr` per instruction (docs/trace-formats.md,
// "champsim"). ChampSim has no delay slots and no branch-type field: it finds a branch's target
// in the next record's ip, and the branch's type in which of its special registers the record
// reads and writes. So a branch with a delay slot is written after its slot, and each kind of
// branch gets the register pattern ChampSim classifies as that kind.
#include <array>
#include <cstring>

#include "traces/champsim.h"
#include "traces/form_cache.h"
#include "traces/writers.h"

namespace citcat::traces {
namespace {

// ChampSim fetches whole lines: a second access to a line adds no traffic, so when an
// instruction has more accesses than the record's slots (x86 PUSHAD: 8 stores), keeping one per
// line keeps every line it touches.
constexpr uint64_t kLineBytes = 64;

// Adds `address` to `slots` unless its line is there already or the slots are full.
void AddAccess(uint64_t* slots, int capacity, int& used, uint64_t address) {
  for (int i = 0; i < used; ++i)
    if (slots[i] / kLineBytes == address / kLineBytes) return;
  if (used < capacity) slots[used++] = address;
}

// The record's static part: ip, is_branch and the registers, in ChampSim's bytes.
std::array<char, champsim::kRecordBytes> Template(const Record& r) {
  champsim::InputInstr in;
  const RegisterSet& regs = *r.registers;
  in.ip = r.pc;
  int nsrc = 0, ndst = 0;
  // A register the machine's table gives no ChampSim number (0) is left out.
  auto src = [&](uint8_t reg) {
    if (reg == 0) return;
    for (int i = 0; i < nsrc; ++i)
      if (in.source_registers[i] == reg) return;
    if (nsrc < champsim::kSources) in.source_registers[nsrc++] = reg;
  };
  auto dst = [&](uint8_t reg) {
    if (reg != 0 && ndst < champsim::kDestinations) in.destination_registers[ndst++] = reg;
  };
  using champsim::kFlags, champsim::kInstructionPointer, champsim::kStackPointer;
  switch (r.branch) {
    case BranchKind::kNone:
      for (uint16_t reg : r.read) src(regs.ChampSim(reg));
      for (uint16_t reg : r.written) dst(regs.ChampSim(reg));
      break;
    case BranchKind::kConditional:
      src(kInstructionPointer);
      src(kFlags);
      for (uint16_t reg : r.read) src(regs.ChampSim(reg));
      dst(kInstructionPointer);
      break;
    case BranchKind::kDirectJump:
      dst(kInstructionPointer);
      break;
    case BranchKind::kIndirectJump:
      for (uint16_t reg : r.read) src(regs.ChampSim(reg));
      dst(kInstructionPointer);
      break;
    case BranchKind::kDirectCall:
    case BranchKind::kIndirectCall:
      src(kStackPointer);
      src(kInstructionPointer);
      if (r.branch == BranchKind::kIndirectCall) {
        for (uint16_t reg : r.read) src(regs.ChampSim(reg));
      }
      dst(kStackPointer);
      dst(kInstructionPointer);
      break;
    case BranchKind::kConditionalCall:
      src(kStackPointer);
      src(kInstructionPointer);
      src(kFlags);
      for (uint16_t reg : r.read) src(regs.ChampSim(reg));
      dst(kStackPointer);
      dst(kInstructionPointer);
      break;
    case BranchKind::kReturn:
      src(kStackPointer);
      for (uint16_t reg : r.read) src(regs.ChampSim(reg));
      dst(kStackPointer);
      dst(kInstructionPointer);
      break;
    case BranchKind::kExceptionReturn:
      src(kStackPointer);
      src(kInstructionPointer);
      dst(kInstructionPointer);
      break;
    case BranchKind::kSoftwareInterrupt:
      // It pushes the flags with the return address: reading flags keeps it out of the calls
      // (ChampSim's return-address stack), as its return, IRET, is no return either.
      src(kStackPointer);
      src(kInstructionPointer);
      src(kFlags);
      dst(kStackPointer);
      dst(kInstructionPointer);
      break;
  }
  in.is_branch = r.branch != BranchKind::kNone;
  std::array<char, champsim::kRecordBytes> bytes;
  champsim::Encode(in, bytes.data());
  return bytes;
}

// The dynamic part: the outcome, and loads and stores in their slots.
void AddOutcome(const Record& r, char* out) {
  constexpr int kTaken = 9, kStores = 16, kLoads = 32;
  // is_branch as Template sets it: reading it back from `out` right after the template's copy
  // would stall on the copy's stores.
  out[kTaken] = static_cast<char>(r.branch != BranchKind::kNone && r.taken);
  if (r.accesses.empty()) return;
  uint64_t loads[champsim::kSources], stores[champsim::kDestinations];
  int nload = 0, nstore = 0;
  for (const MemoryAccess& a : r.accesses) {
    if (a.store) {
      AddAccess(stores, champsim::kDestinations, nstore, a.address);
    } else {
      AddAccess(loads, champsim::kSources, nload, a.address);
    }
  }
  for (int i = 0; i < nstore; ++i) champsim::PutLe64(stores[i], out + kStores + 8 * i);
  for (int i = 0; i < nload; ++i) champsim::PutLe64(loads[i], out + kLoads + 8 * i);
}

class ChampSimWriter final : public BufferedWriter {
 public:
  using BufferedWriter::BufferedWriter;

  absl::Status Consume(const Record& r) override {
    if (has_branch_) {
      has_branch_ = false;
      const uint64_t slot = branch_next_pc_;
      if (r.pc == slot && !r.taken_before.present) {
        // A slot that raised an exception did not retire, and neither did its branch: both
        // run again after the handler.
        if (!r.raised.present) {
          AppendRecord(r);
          AppendBranch();
        }
        return status();
      }
      // An interrupt taken at the slot: the branch, too, runs again after the handler (and if a
      // mode filter dropped the handler, the next record is that branch again). Otherwise the
      // slot was nullified (a branch-likely not taken) and the branch retired.
      const bool interrupted = (r.taken_before.present && r.taken_before.pc == slot) ||
                               (r.pc == branch_pc_ && r.branch != BranchKind::kNone);
      if (!interrupted) AppendBranch();
    }
    if (r.raised.present) return status();  // did not retire
    if (r.branch != BranchKind::kNone && r.delay_slot) {
      Encode(r, branch_);
      branch_pc_ = r.pc;
      branch_next_pc_ = r.next_pc;
      has_branch_ = true;
      return status();
    }
    AppendRecord(r);
    return status();
  }

  absl::Status Finish() override {
    if (has_branch_) AppendBranch();  // the trace ended inside its delay slot
    has_branch_ = false;
    return BufferedWriter::Finish();
  }

 private:
  void Encode(const Record& r, char* out) {
    std::memcpy(out, templates_.Get(r, Template).data(), champsim::kRecordBytes);
    AddOutcome(r, out);
  }
  void AppendRecord(const Record& r) {
    char* p = Claim(champsim::kRecordBytes);
    Encode(r, p);
    Commit(p + champsim::kRecordBytes);
  }
  void AppendBranch() { Append(absl::string_view(branch_, champsim::kRecordBytes)); }

  FormCache<std::array<char, champsim::kRecordBytes>> templates_;
  char branch_[champsim::kRecordBytes];  // held until its delay slot is written
  uint64_t branch_pc_ = 0;               // where it is
  uint64_t branch_next_pc_ = 0;          // where its delay slot is
  bool has_branch_ = false;
};

}  // namespace

std::unique_ptr<TraceSink> NewChampSimWriter(std::unique_ptr<ByteOutput> out) {
  return std::make_unique<ChampSimWriter>(std::move(out));
}

}  // namespace citcat::traces
