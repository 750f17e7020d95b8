#include "extract/first_touch.h"

#include <algorithm>

namespace citcat::extract {

FirstTouchImage::Page& FirstTouchImage::PageAt(uint64_t page) {
  std::unique_ptr<Page>& p = pages_[page];
  if (!p) p = std::make_unique<Page>();
  return *p;
}

void FirstTouchImage::Read(uint64_t address, std::span<const uint8_t> data) {
  for (size_t i = 0; i < data.size();) {
    uint64_t a = address + i;
    Page& page = PageAt(a / kPageBytes);
    size_t at = a % kPageBytes;
    size_t n = std::min<size_t>(data.size() - i, kPageBytes - at);
    for (size_t j = 0; j < n; ++j) {
      if (page.state[at + j] != kUnseen) continue;
      page.state[at + j] = kKnown;
      page.value[at + j] = data[i + j];
      ++known_bytes_;
    }
    i += n;
  }
}

void FirstTouchImage::Write(uint64_t address, uint64_t size) {
  for (uint64_t i = 0; i < size;) {
    uint64_t a = address + i;
    Page& page = PageAt(a / kPageBytes);
    size_t at = a % kPageBytes;
    size_t n = std::min<uint64_t>(size - i, kPageBytes - at);
    for (size_t j = 0; j < n; ++j) {
      if (page.state[at + j] == kUnseen) page.state[at + j] = kWrittenFirst;
    }
    i += n;
  }
}

std::vector<FirstTouchImage::Extent> FirstTouchImage::Extents() const {
  std::vector<uint64_t> numbers;
  numbers.reserve(pages_.size());
  for (const auto& [number, page] : pages_) numbers.push_back(number);
  std::sort(numbers.begin(), numbers.end());
  std::vector<Extent> extents;
  for (uint64_t number : numbers) {
    const Page& page = *pages_.at(number);
    for (size_t i = 0; i < kPageBytes; ++i) {
      if (page.state[i] != kKnown) continue;
      uint64_t address = number * kPageBytes + i;
      if (extents.empty() || extents.back().address + extents.back().data.size() != address) {
        extents.push_back({address, {}});
      }
      extents.back().data.push_back(page.value[i]);
    }
  }
  return extents;
}

}  // namespace citcat::extract
