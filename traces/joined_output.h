// One output written as consecutive pieces by several threads at once (the segments of `citcat
// replay --jobs`), joined in order while they are written. The first piece not yet complete
// writes straight to the file; the pieces after it hold their bytes in memory, up to a budget
// they share, and past it in a scratch file of their own (unlinked as soon as it is made), until
// every piece before them is complete. So the bytes of the head piece are written once, and
// memory stays within the budget however long the pieces are.
#ifndef CITCAT_TRACES_JOINED_OUTPUT_H_
#define CITCAT_TRACES_JOINED_OUTPUT_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "io/file.h"
#include "traces/output.h"

namespace citcat::traces {

class JoinedOutput {
 public:
  // The file at `path` (io::OutputFile::Create: it appears at Commit), its pieces holding at
  // most `memory_budget` bytes in memory all together.
  static absl::StatusOr<std::unique_ptr<JoinedOutput>> Create(const std::string& path,
                                                              uint64_t memory_budget);
  ~JoinedOutput();
  JoinedOutput(const JoinedOutput&) = delete;
  JoinedOutput& operator=(const JoinedOutput&) = delete;

  // The next piece: its bytes follow those of every piece added before it. It is done with the
  // bytes given to Write when Write returns (EncodeInto may put a compressor or a writing thread in
  // front), and Close ends the piece. Each piece is written by one thread at a time.
  std::unique_ptr<ByteOutput> AddPiece();

  // Once every piece is closed: completes the file.
  absl::Status Commit();
  // The file's bytes, after Commit.
  uint64_t bytes_written() const;

 private:
  class PieceOutput;
  // Bytes a piece holds until it is the head: its own copy, or a range of its scratch file.
  struct Held {
    std::string bytes;
    uint64_t spill_begin = 0, spill_end = 0;
  };
  struct Piece {
    std::deque<Held> held;
    int spill_fd = -1;  // the scratch file, once the budget ran out
    uint64_t spill_size = 0;
    bool closed = false;
  };

  JoinedOutput(std::unique_ptr<io::OutputFile> file, std::string spill_dir, uint64_t budget)
      : file_(std::move(file)), spill_dir_(std::move(spill_dir)), budget_(budget) {}
  absl::Status Write(size_t k, absl::string_view bytes);
  absl::Status Close(size_t k);
  absl::Status Spill(Piece& p, absl::string_view bytes, Held& range);
  absl::Status CopySpill(const Piece& p, const Held& range);
  void Drain(std::unique_lock<std::mutex>& lock);
  void Fail(absl::Status s);

  mutable std::mutex mutex_;
  std::unique_ptr<io::OutputFile> file_;
  const std::string spill_dir_;
  const uint64_t budget_;
  uint64_t held_bytes_ = 0;  // in memory, over all pieces
  // Buffers written out, kept for the next bytes held: together with the held ones, never more
  // than the budget.
  std::vector<std::string> spare_;
  std::deque<Piece> pieces_;  // in order; a piece stays where it is as more are added
  size_t head_ = 0;           // the first piece not yet complete in the file
  bool draining_ = false;     // a thread is writing held bytes: the head holds its own too
  absl::Status status_;       // the first error
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_JOINED_OUTPUT_H_
