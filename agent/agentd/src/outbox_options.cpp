#include "accel/agentd/outbox_options.h"

#include "accel/events/curve_keys.h"

namespace accel::agentd {

Result<event::OutboxOptions> outboxOptionsFrom(const AccelConfig& config, const std::string& node) {
  event::OutboxOptions o;
  o.node = node;
  o.spool_dir = config.event_spool_dir.value_or(config.state_dir + "/spool");
  o.spool_max_bytes = config.event_spool_max_size;
  // A config built in code rather than read from a file may leave them 0.
  if (config.aggregator_reconnect_min_ms > 0)
    o.reconnect_min = std::chrono::milliseconds(config.aggregator_reconnect_min_ms);
  if (config.aggregator_reconnect_max_ms > 0)
    o.reconnect_max = std::chrono::milliseconds(config.aggregator_reconnect_max_ms);
  o.ping_interval = config.aggregator_ping_interval;
  o.ping_timeout = config.aggregator_ping_timeout;
  o.tcp_keepalive = config.aggregator_tcp_keepalive;
  if (!config.aggregator_address) return o;
  o.endpoint = *config.aggregator_address;
  auto server = event::loadPublicKey(config.aggregator_public_key_file);
  if (!server.ok()) return server.error().context("AggregatorPublicKeyFile");
  o.server_public_key = *server;
  auto mine = event::loadSecretKey(config.node_key_file);
  if (!mine.ok()) return mine.error().context("NodeKeyFile");
  o.client_keys = *mine;
  return o;
}

}  // namespace accel::agentd
