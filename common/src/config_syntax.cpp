#include "accel/common/config_syntax.h"

#include <cstdio>

namespace accel {
namespace {

// One line as the tokenizer sees it: comments stripped, continuations joined,
// escapes not yet resolved.
struct LogicalLine {
  std::string text;
  int line;
};

bool isBlank(char c) { return c == ' ' || c == '\t'; }

// Index of the first byte that has no place in a text line, or npos.
std::size_t findControlByte(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    auto byte = static_cast<unsigned char>(line[i]);
    if ((byte < 0x20 && byte != '\t') || byte == 0x7f) return i;
  }
  return std::string_view::npos;
}

// Cuts at the first '#' not escaped by an odd run of backslashes.
std::string_view stripComment(std::string_view line) {
  std::size_t backslashes = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && backslashes % 2 == 0) return line.substr(0, i);
    backslashes = line[i] == '\\' ? backslashes + 1 : 0;
  }
  return line;
}

// When the line ends (blanks aside) in an odd run of backslashes, removes the
// last backslash and what follows it and returns true: the line continues.
bool stripContinuation(std::string_view* line) {
  std::size_t end = line->size();
  while (end > 0 && isBlank((*line)[end - 1])) --end;
  std::size_t run = 0;
  while (run < end && (*line)[end - 1 - run] == '\\') ++run;
  if (run % 2 == 0) return false;
  *line = line->substr(0, end - 1);
  return true;
}

std::string resolveEscapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      if (++i == text.size()) break;
    }
    out += text[i];
  }
  return out;
}

std::string controlByteProblem(std::string_view line, std::size_t at) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "control byte \\x%02x at column %zu; is this a text file?",
                static_cast<unsigned char>(line[at]), at + 1);
  return buf;
}

std::vector<LogicalLine> joinLines(std::string_view text, ConfigErrors& errors) {
  std::vector<LogicalLine> out;
  bool continuing = false;
  int number = 0;
  while (true) {
    std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (std::size_t at = findControlByte(line); at != std::string_view::npos) {
      errors.add(number, {}, controlByteProblem(line, at));
      if (continuing) out.pop_back();  // the line it continued is broken too
      continuing = false;
    } else {
      std::string_view content = stripComment(line);
      bool continues = stripContinuation(&content);
      if (!continuing) out.push_back(LogicalLine{{}, number});
      out.back().text += content;
      continuing = continues;
    }
    if (newline == std::string_view::npos) break;
    text.remove_prefix(newline + 1);
  }
  return out;
}

// Reads entries from one logical line (escapes resolved). On a syntax error
// the rest of the line is skipped: its tokens can no longer be trusted.
void tokenize(const std::string& text, int line, ConfigErrors& errors,
              std::vector<ConfigEntry>& out) {
  std::size_t pos = 0, n = text.size();
  auto skipBlanks = [&] {
    while (pos < n && isBlank(text[pos])) ++pos;
  };
  while (true) {
    skipBlanks();
    if (pos == n) return;
    std::size_t start = pos;
    while (pos < n && !isBlank(text[pos]) && text[pos] != '=') ++pos;
    std::string key = text.substr(start, pos - start);
    skipBlanks();
    if (key.empty() || pos == n || text[pos] != '=') {
      errors.add(line, {}, "expected Key=Value, found " + quoteForMessage(text.substr(start)));
      return;
    }
    ++pos;  // '='
    skipBlanks();
    if (pos == n) {
      errors.add(line, key, "no value after '='");
      return;
    }
    std::string value;
    if (text[pos] == '"') {
      std::size_t close = text.find('"', pos + 1);
      if (close == std::string::npos) {
        errors.add(line, key, "value has no closing double quote");
        return;
      }
      value = text.substr(pos + 1, close - pos - 1);
      pos = close + 1;
      if (pos < n && !isBlank(text[pos])) {
        errors.add(
            line, key,
            "unexpected text after the closing double quote: " + quoteForMessage(text.substr(pos)));
        return;
      }
    } else {
      std::size_t begin = pos;
      while (pos < n && !isBlank(text[pos])) ++pos;
      value = text.substr(begin, pos - begin);
    }
    out.push_back(ConfigEntry{std::move(key), std::move(value), line});
  }
}

}  // namespace

std::vector<ConfigEntry> scanConfigText(std::string_view text, ConfigErrors& errors) {
  std::vector<ConfigEntry> entries;
  for (const LogicalLine& logical : joinLines(text, errors)) {
    tokenize(resolveEscapes(logical.text), logical.line, errors, entries);
  }
  return entries;
}

Result<std::vector<ConfigEntry>> parseConfigEntries(std::string_view text, std::string_view file) {
  ConfigErrors errors{std::string(file)};
  std::vector<ConfigEntry> entries = scanConfigText(text, errors);
  if (!errors.empty()) return errors.toStatus().error();
  return entries;
}

}  // namespace accel
