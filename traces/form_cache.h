// What a writer derives from a record's static part (its template: the fixed bytes or text of the
// format), worked out once per form (Record::form) instead of once per record. Traces repeat
// the same few thousand instructions millions of times.
#ifndef CITCAT_TRACES_FORM_CACHE_H_
#define CITCAT_TRACES_FORM_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "traces/record.h"

namespace citcat::traces {

template <typename Template>
class FormCache {
 public:
  // The template of `r`'s static part: build(r) the first time its form is seen (and whenever
  // another form took its slot since), every time for a record without a form.
  template <typename Build>
  const Template& Get(const Record& r, Build build) {
    if (r.form == 0) {
      scratch_ = build(r);
      return scratch_;
    }
    Slot& slot = slots_[r.form & (kSlots - 1)];
    if (slot.form != r.form) {
      slot.value = build(r);
      slot.form = r.form;
    }
    return slot.value;
  }

 private:
  // Direct-mapped by form number: a recorder numbers the forms it holds densely, so the live
  // ones rarely share a slot, and memory stays bounded however many forms a trace has.
  static constexpr size_t kSlots = 8192;
  struct Slot {
    uint64_t form = 0;
    Template value{};
  };
  std::vector<Slot> slots_ = std::vector<Slot>(kSlots);
  Template scratch_{};
};

}  // namespace citcat::traces

#endif  // CITCAT_TRACES_FORM_CACHE_H_
