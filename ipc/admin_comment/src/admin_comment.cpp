#include "accel/ipc/admin_comment.h"

namespace accel::ipc {
namespace {

constexpr std::string_view kTag = "accel=";

// Length of the JSON object starting at text[0] == '{', strings and escapes
// respected; npos when it does not close.
size_t objectLength(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"')
      in_string = true;
    else if (c == '{')
      ++depth;
    else if (c == '}' && --depth == 0)
      return i + 1;
  }
  return std::string_view::npos;
}

struct Segment {
  size_t begin = std::string_view::npos;  // at the 'a' of "accel="
  size_t end = 0;                         // one past the closing '}'
};

// Our segment starts the text or follows a ';' (possibly with blanks), so an
// "accel=" inside somebody else's text is not mistaken for it.
Segment findSegment(std::string_view text) {
  for (size_t at = text.find(kTag); at != std::string_view::npos; at = text.find(kTag, at + 1)) {
    size_t before = at;
    while (before > 0 && text[before - 1] == ' ') --before;
    if (before != 0 && text[before - 1] != ';') continue;
    size_t body = at + kTag.size();
    if (body >= text.size() || text[body] != '{') continue;
    size_t len = objectLength(text.substr(body));
    return {at, len == std::string_view::npos ? text.size() : body + len};
  }
  return {};
}

std::string_view trimSeparators(std::string_view s) {
  while (!s.empty() && (s.front() == ';' || s.front() == ' ')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ';' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string mergeAdminComment(std::string_view existing, std::string_view json) {
  std::string ours = std::string(kTag) + std::string(json);
  Segment seg = findSegment(existing);
  if (seg.begin == std::string_view::npos) {
    std::string_view other = trimSeparators(existing);
    return other.empty() ? ours : std::string(other) + ";" + ours;
  }
  std::string_view before = trimSeparators(existing.substr(0, seg.begin));
  std::string_view after = trimSeparators(existing.substr(seg.end));
  std::string out(before);
  if (!out.empty()) out += ";";
  out += ours;
  if (!after.empty()) out += ";" + std::string(after);
  return out;
}

std::string extractAccelSegment(std::string_view comment) {
  Segment seg = findSegment(comment);
  if (seg.begin == std::string_view::npos) return {};
  return std::string(comment.substr(seg.begin + kTag.size(), seg.end - seg.begin - kTag.size()));
}

}  // namespace accel::ipc
