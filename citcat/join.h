// Joining the pieces of a trace replayed segment by segment (docs/archive-format.md, "Joining
// pieces"): what `citcat join` and `citcat replay --jobs` share.
#ifndef CITCAT_CITCAT_JOIN_H_
#define CITCAT_CITCAT_JOIN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "archive/archive.h"
#include "cat_parser/record.h"

namespace citcat::cli {

// Where citcat split puts segment k's archive (from 1) in `dir`: DIR/segment-000k.citcat.
std::string SegmentArchivePath(const std::string& dir, size_t k);
// The segment archives citcat split wrote into `dir`, in order, numbered from 1 with no gap (none
// when it holds none).
absl::StatusOr<std::vector<std::string>> SegmentArchives(const std::string& dir);

// A segment archive of an older split (`segment K` without `of N`) is refused by name: nothing in
// its directory tells whether the last segment is missing.
absl::Status CheckSegmentCount(const std::string& path, const archive::Manifest& manifest);

// What a segment archive says its CAT piece holds.
struct SegmentPiece {
  archive::Manifest manifest;
  cat::CatHeader header;               // as its replay writes it
  std::vector<cat::OwnedRecord> dump;  // the state dump ahead of the records (first segment)
  ims::ByteOrder byte_order = ims::BYTE_ORDER_LITTLE;  // for a version 1 instruction stream
};

// The CAT pieces' records in order under the first piece's header. Each piece is read whole
// (framing and checksums); with its segment (`segments` empty: none), its header must be the one
// the segment's replay writes, its state dump (if any) the one the segment's IMS implies, and the
// count and CRC-64 of the records after it the segment's manifest's.
absl::Status JoinCats(const std::vector<std::string>& pieces, const std::string& out_path,
                      const std::vector<SegmentPiece>& segments, uint64_t& records);

}  // namespace citcat::cli

#endif  // CITCAT_CITCAT_JOIN_H_
