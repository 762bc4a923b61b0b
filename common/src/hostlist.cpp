#include "accel/common/hostlist.h"

#include <algorithm>
#include <charconv>

namespace accel {
namespace {

Error bad(std::string_view list, const std::string& why) {
  std::string shown(list.substr(0, 80));
  return Error(ErrorCode::kParse,
               "host list '" + shown + (list.size() > 80 ? "...'" : "'") + ": " + why);
}

// Splits `list` at commas outside brackets. Fails on unbalanced or nested brackets.
Result<std::vector<std::string_view>> splitTop(std::string_view list) {
  std::vector<std::string_view> out;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    char c = i < list.size() ? list[i] : ',';
    if (c == '[') {
      if (++depth > 1) return bad(list, "nested '['");
    } else if (c == ']') {
      if (--depth < 0) return bad(list, "']' without '['");
    } else if (c == ',' && depth == 0) {
      if (i > start) out.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return bad(list, "'[' without ']'");
  return out;
}

Result<unsigned long> parseNumber(std::string_view list, std::string_view s) {
  unsigned long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || s.size() > 9)
    return bad(list, "'" + std::string(s) + "' is not a node number");
  return v;
}

std::string padded(unsigned long v, size_t width) {
  std::string digits = std::to_string(v);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// Walks the names of one "prefix[ranges]suffix" element (or a plain name),
// stopping after `limit` names in all (`count` holds how many so far).
// Appends them to `out`, or only counts them when `out` is null.
Status walkOne(std::string_view list, std::string_view element, std::vector<std::string>* out,
               size_t& count, size_t limit) {
  size_t open = element.find('[');
  if (open == std::string_view::npos) {
    if (out) out->emplace_back(element);
    ++count;
    return okStatus();
  }
  size_t close = element.find(']', open);
  std::string_view prefix = element.substr(0, open);
  std::string_view suffix = element.substr(close + 1);
  if (suffix.find('[') != std::string_view::npos)
    return bad(list, "more than one '[...]' in one name");
  std::string_view ranges = element.substr(open + 1, close - open - 1);
  if (ranges.empty()) return bad(list, "empty '[]'");
  size_t pos = 0;
  while (pos <= ranges.size()) {
    size_t comma = ranges.find(',', pos);
    if (comma == std::string_view::npos) comma = ranges.size();
    std::string_view range = ranges.substr(pos, comma - pos);
    size_t dash = range.find('-');
    std::string_view lo_text = range.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    auto lo = parseNumber(list, lo_text);
    ACCEL_TRY(lo);
    auto hi = parseNumber(list, hi_text);
    ACCEL_TRY(hi);
    if (*hi < *lo) return bad(list, "range '" + std::string(range) + "' runs backwards");
    if (!out) {  // counting: the whole range at once
      if (*hi - *lo >= limit - std::min(count, limit))
        return bad(list, "more than " + std::to_string(kMaxHostlistNames) + " names");
      count += *hi - *lo + 1;
    } else {
      for (unsigned long v = *lo; v <= *hi; ++v) {
        if (count >= limit)
          return bad(list, "more than " + std::to_string(kMaxHostlistNames) + " names");
        out->push_back(std::string(prefix) + padded(v, lo_text.size()) + std::string(suffix));
        ++count;
      }
    }
    pos = comma + 1;
  }
  return okStatus();
}

}  // namespace

Result<std::vector<std::string>> expandHostlist(std::string_view list) {
  auto elements = splitTop(list);
  ACCEL_TRY(elements);
  std::vector<std::string> out;
  size_t count = 0;
  for (auto element : *elements) ACCEL_TRY(walkOne(list, element, &out, count, kMaxHostlistNames));
  return out;
}

Result<size_t> countHostlist(std::string_view list) {
  auto elements = splitTop(list);
  ACCEL_TRY(elements);
  size_t count = 0;
  for (auto element : *elements)
    ACCEL_TRY(walkOne(list, element, nullptr, count, kMaxHostlistNames));
  return count;
}

Result<std::string> firstHost(std::string_view list) {
  auto elements = splitTop(list);
  ACCEL_TRY(elements);
  if (elements->empty()) return bad(list, "no host");
  std::vector<std::string> one;
  size_t count = 0;
  // A limit of one: the first element's first name, whatever its ranges hold.
  auto s = walkOne(list, elements->front(), &one, count, 1);
  if (one.empty()) return s.ok() ? bad(list, "no host") : Result<std::string>(s.error());
  return one.front();
}

}  // namespace accel
