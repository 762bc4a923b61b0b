#include "accel/common/config_errors.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace accel {

std::string quoteForMessage(std::string_view text, std::size_t max_chars) {
  std::string out = "'";
  std::size_t shown = std::min(text.size(), max_chars);
  for (std::size_t i = 0; i < shown; ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", byte);
      out += buf;
    } else {
      out += static_cast<char>(byte);
    }
  }
  if (shown < text.size()) out += "...";
  return out + "'";
}

void ConfigErrors::add(int line, std::string_view key, std::string_view problem) {
  std::string text = file_;
  if (line > 0) text += ":" + std::to_string(line);
  text += ": ";
  if (!key.empty()) text += "key " + quoteForMessage(key) + ": ";
  text += problem;
  entries_.push_back(Entry{line, entries_.size(), std::move(text)});
}

std::vector<std::string> ConfigErrors::messages() const {
  std::vector<Entry> sorted = entries_;
  // Line-less messages (line 0) go last: they concern the file as a whole.
  auto rank = [](const Entry& e) { return e.line > 0 ? e.line : std::numeric_limits<int>::max(); };
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Entry& a, const Entry& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a.seq < b.seq;
  });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < sorted.size() && i < kMaxReported; ++i) {
    out.push_back(sorted[i].text);
  }
  if (sorted.size() > kMaxReported) {
    out.push_back(file_ + ": " + std::to_string(sorted.size() - kMaxReported) +
                  " more errors not shown");
  }
  return out;
}

Status ConfigErrors::toStatus() const {
  if (entries_.empty()) return okStatus();
  std::string joined;
  for (const std::string& message : messages()) {
    if (!joined.empty()) joined += '\n';
    joined += message;
  }
  return Error(ErrorCode::kInvalidArgument, std::move(joined));
}

Status joinStatuses(const std::vector<Status>& statuses) {
  std::string joined;
  ErrorCode code = ErrorCode::kInvalidArgument;
  bool failed = false;
  for (const Status& status : statuses) {
    if (status.ok()) continue;
    if (!failed) code = status.error().code();
    failed = true;
    if (!joined.empty()) joined += '\n';
    joined += status.error().message();
  }
  if (!failed) return okStatus();
  return Error(code, std::move(joined));
}

}  // namespace accel
