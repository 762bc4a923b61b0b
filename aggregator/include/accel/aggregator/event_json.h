#pragma once
// Events as JSON objects and one-line text, for `accel-aggregatord events`.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "accel/aggregator/store.h"

namespace accel::aggregator {

// {"row":..,"node":..,"epoch":..,"seq":..,"time_ns":..,"kind":..,"job_id":..,"event":{...}}
nlohmann::ordered_json eventJson(const StoredEvent& stored);
// "2024-05-01T10:00:00.123Z node1 7:42 prolog_finished job=42 {...}"
std::string eventLine(const StoredEvent& stored);
// "2024-05-01T10:00:00.123Z" from nanoseconds since the epoch (UTC).
std::string isoTime(int64_t ns);

}  // namespace accel::aggregator
