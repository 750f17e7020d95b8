#include "machine/i486/machine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "machine/i486/system.h"

namespace citcat::machine {
namespace {

constexpr uint64_t kMaxSlice = 20000;  // instruction times between looks at the outside world
// A halt that lasts a minute of a 33 MHz machine without an interrupt to end it: the events go on
// but none reaches the processor (masked, or disabled at the device), so nothing ever will.
constexpr uint64_t kMaxHalt = 60 * 33'000'000ull;

}  // namespace

I486Machine::I486Machine(const I486Options& options)
    : producer_(options.producer), bus_(options.pc), cpu_(bus_) {
  bus_.Attach(&cpu_);
  cpu_.set_deliver_interrupts(true);
}

absl::StatusOr<std::unique_ptr<I486Machine>> I486Machine::Create(const I486Options& options) {
  if (absl::Status s = PcBus::Check(options.pc); !s.ok()) return s;
  return std::unique_ptr<I486Machine>(new I486Machine(options));
}

cat::CatHeader I486Machine::Header() const { return bus_.Header(producer_); }

absl::StatusOr<I486RunSummary> I486Machine::Run(BusMonitor* monitor, uint64_t max_instructions,
                                                const std::function<void(uint64_t)>& progress) {
  bus_.set_monitor(monitor);
  I486RunSummary summary;
  uint64_t halted_at = ~uint64_t{0}, halt_began = 0;  // the halt in progress: retired count, time
  while (!bus_.powered_off() && bus_.monitor_status().ok() && cpu_.retired() < max_instructions) {
    bus_.Advance();
    const uint64_t now = bus_.Now();
    const uint64_t next = bus_.NextEvent();
    uint64_t slice = std::min(kMaxSlice, max_instructions - cpu_.retired());
    if (next != PcBus::kNever) slice = std::min(slice, next > now ? next - now : 1);
    cpu_.Run(slice);
    if (monitor != nullptr && monitor->TakePause()) break;
    if (cpu_.exception().pending) {
      const x86::Exception& e = cpu_.exception();
      return absl::FailedPreconditionError(absl::StrCat(
          e.shutdown ? "the processor shut down" : "an instruction the core does not model",
          " at EIP 0x", absl::Hex(e.eip), " (vector ", e.vector, ") after ", cpu_.retired(),
          " instructions"));
    }
    if (cpu_.halted() && !bus_.InterruptReady()) {
      // Halted: time passes without instructions until the next event, if one can wake it.
      const uint64_t wake = bus_.NextEvent();
      if (cpu_.retired() != halted_at) {
        halted_at = cpu_.retired();
        halt_began = bus_.Now();
      }
      const bool interrupts_off = !(cpu_.eflags() & x86::flag::kIF);
      if (interrupts_off || wake == PcBus::kNever || wake - halt_began > kMaxHalt) {
        summary.stuck = true;
        summary.stuck_why =
            absl::StrCat("halted with ",
                         interrupts_off          ? "interrupts off"
                         : wake == PcBus::kNever ? "no device event to come"
                                                 : "no interrupt in a minute of device events",
                         " at EIP 0x", absl::Hex(cpu_.eip()));
        break;
      }
      bus_.IdleUntil(wake);
    }
    if (progress) progress(cpu_.retired());
  }
  if (!bus_.monitor_status().ok()) return bus_.monitor_status();
  summary.instructions = cpu_.retired();
  summary.idle = bus_.idle();
  summary.interrupts = bus_.interrupt_acks();
  summary.dma_transfers = bus_.ata().dma_commands();
  summary.device_reads = bus_.port_reads();
  summary.bus_records = bus_.bus_records();
  summary.powered_off = bus_.powered_off();
  return summary;
}

}  // namespace citcat::machine
