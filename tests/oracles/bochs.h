// Bochs as a third, independent model of the i486 (../shared/ORACLES.md): Debian's `bochs` 2.7
// runs a bare-metal ROM image from the reset vector, headless, with its internal debugger driven
// through standard input. It is written independently of QEMU and Unicorn, so a bug those two
// share with our core shows here.
//
// How a run goes: Bochs starts at its debugger prompt; the runner turns on the instruction and
// register trace (optional), continues, and waits for the ROM to hand control back to the
// debugger with XCHG BX,BX (Bochs's magic breakpoint; on an i486 it changes nothing). The runner
// then asks for the segment and control registers and writes the
// requested memory ranges to files. The display is Bochs's RFB (VNC) server with a zero wait, so
// no window or terminal is needed; the ROM's serial port COM1 (3F8h) goes to a file.
//
// Bochs models a Pentium at the oldest (`cpu: model=pentium`): where the i486 differs by design
// (CPUID, CR4, the ID flag, flags an instruction leaves undefined), the caller says so.
#ifndef CITCAT_TESTS_ORACLES_BOCHS_H_
#define CITCAT_TESTS_ORACLES_BOCHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace citcat::oracle {

struct BochsOptions {
  std::string rom;       // a 64 KiB ROM image, mapped at FFFF0000h (and below 1 MiB)
  std::string work_dir;  // holds the configuration, the log, the console and the dumps
  uint32_t memory_mb = 16;
  bool trace = false;  // log the registers before every instruction
  struct Range {
    uint32_t address = 0, bytes = 0;
  };
  std::vector<Range> dumps;  // physical memory to read once the ROM has stopped
  int timeout_seconds = 60;  // a ROM that never stops is killed after this
};

// The state before one instruction, as the trace shows it.
struct BochsState {
  uint64_t icount = 0;   // Bochs's instruction counter
  uint32_t gpr[8] = {};  // EAX ECX EDX EBX ESP EBP ESI EDI (the core's order)
  uint32_t eip = 0, eflags = 0;
  uint16_t cs = 0;
  uint32_t linear = 0;  // of the instruction
};

// A segment register (or LDTR, TR) once the ROM stopped: its selector and the base of its cached
// descriptor.
struct BochsSegment {
  uint16_t selector = 0;
  uint32_t base = 0;
};

struct BochsRun {
  bool stopped = false;  // the ROM reached XCHG BX,BX (else Bochs ended or was killed)
  std::vector<BochsState> states;
  // At the stop: ES CS SS DS FS GS LDTR TR, the descriptor tables' bases, CR0, CR2, CR3.
  BochsSegment segment[8];
  uint32_t gdtr_base = 0, idtr_base = 0;
  uint32_t cr0 = 0, cr2 = 0, cr3 = 0;
  std::vector<std::vector<uint8_t>> dumps;  // one per BochsOptions::dumps
  std::string console;                      // what the ROM wrote to COM1
  std::string output;                       // the debugger's session (for messages)
};

// The full path of bochs if it is on PATH and its VGA BIOS is installed, else empty.
std::string FindBochs();

// Runs the ROM under Bochs. Fails if Bochs cannot be started or its output cannot be read; a ROM
// that never stops is a run with `stopped` false.
absl::StatusOr<BochsRun> RunBochs(const BochsOptions& options);

}  // namespace citcat::oracle

#endif  // CITCAT_TESTS_ORACLES_BOCHS_H_
