#pragma once
// One simulated node's event path for the fleet benchmarks: the agent's real
// Outbox with accel.conf's defaults, its CURVE key read from KEY_DIR/NODE.key
// (written there with the aggregator's AGGREGATOR.pub beside it).
#include <memory>
#include <string>

#include "accel/common/result.h"
#include "accel/events/curve_keys.h"
#include "accel/events/outbox.h"

namespace accel::bench {

inline Result<std::unique_ptr<event::Outbox>> startSimulatedNode(
    const std::string& node, const std::string& key_dir, const std::string& spool_dir,
    const std::string& endpoint, const std::string& server_public_key) {
  event::OutboxOptions o;  // the agent's defaults, as accel.conf has them
  o.node = node;
  o.spool_dir = spool_dir;
  o.endpoint = endpoint;
  o.server_public_key = server_public_key;
  auto keys = event::loadSecretKey(key_dir + "/" + node + ".key");
  if (!keys.ok()) return keys.error();
  o.client_keys = *keys;
  auto box = event::Outbox::start(o);
  if (!box.ok()) return box.error().context(node);
  return std::move(*box);
}

}  // namespace accel::bench
