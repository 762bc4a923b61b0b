#pragma once
// Collecting the errors found in one configuration file, so that a check
// reports all of them at once instead of one per edit-and-retry cycle.
//
// Every message has one of three shapes, which operators and tests rely on:
//   FILE:LINE: key 'Key': problem     (something on a line)
//   FILE:LINE: problem                (a line that is not Key=Value)
//   FILE: key 'Key': problem          (a key that is missing altogether)
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "accel/common/result.h"

namespace accel {

// Quotes user-supplied text for a message: '...' around it, control and
// non-ASCII bytes written as \xNN, text beyond `max_chars` cut with "...".
// A binary or megabyte-long value then cannot garble a terminal or a log.
std::string quoteForMessage(std::string_view text, std::size_t max_chars = 60);

class ConfigErrors {
 public:
  // At most this many messages are kept; the rest are counted in one last line.
  static constexpr std::size_t kMaxReported = 50;

  explicit ConfigErrors(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }

  // line 0 means "not on a line" (a missing key); empty key means "no key".
  void add(int line, std::string_view key, std::string_view problem);

  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

  // Messages in line order (line-less ones last), one per line of text.
  std::vector<std::string> messages() const;

  // Success when empty, else one kInvalidArgument Error whose message is the
  // messages joined by '\n'.
  Status toStatus() const;

 private:
  struct Entry {
    int line;
    std::size_t seq;  // keeps messages of one line in the order found
    std::string text;
  };
  std::string file_;
  std::vector<Entry> entries_;
};

// Joins several failed Statuses (e.g. one per file) into one; ok if all are ok.
Status joinStatuses(const std::vector<Status>& statuses);

}  // namespace accel
