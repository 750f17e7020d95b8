// The traced Intel i486 PC's entry in the registry (docs/machines/i486-system.md).
#ifndef CITCAT_SYSTEMS_I486_H_
#define CITCAT_SYSTEMS_I486_H_

#include "systems/system.h"

namespace citcat::systems {

System I486();

}  // namespace citcat::systems

#endif  // CITCAT_SYSTEMS_I486_H_
